"""A rig's joint limits where its rest differs from the preset's (issue 30's pose transfer to rigs as
Blender builds them): a hinge's range counts from the bone straight (an elbow bent at rest can still
straighten, and bends no further than the preset's), an elliptical cone keeps its reach about the
body (an A-pose's arm rises as high as the preset's), and a spine bone the rig lacks lends its bend
to the one above it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.model.constraints import Cone, EllipticalCone, Hinge, Twist, hinge_from_straight, rest_bend
from fabrik3d.model.fingers import is_finger_role, rig_finger_limits
from fabrik3d.model.rig_map import humanoid_setup
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import limited_turn, turn_joint

PRESET = presets.humanoid()
NAMES = list(PRESET.names)
PARENTS = [int(p) for p in PRESET.parents]


@pytest.mark.parametrize("degrees", [-60.0, -21.5, 0.0, 30.0, 170.0])
def test_rest_bend_reads_the_signed_angle_about_the_axis(degrees: float) -> None:
    bone = rot.rotate(rot.axis_angle((0.0, 0.0, 1.0), math.radians(degrees)), (0.0, 1.0, 0.0))
    tilted = np.array(bone) + 0.3 * np.array([0.0, 0.0, 1.0])  # (off the plane: only the part in it counts)
    assert rest_bend((0.0, 2.0, 0.0), tilted, (0.0, 0.0, 1.0)) == pytest.approx(degrees, abs=1e-9)
    assert rest_bend((0.0, 0.0, 2.0), bone, (0.0, 0.0, 1.0)) == 0.0  # (the bone above along the axis)


def test_a_hinge_range_from_straight_shifts_and_keeps_the_rest_inside() -> None:
    h = hinge_from_straight((0, 1, 0), -150.0, 0.0, -21.5)
    assert (h.min_deg, h.max_deg) == pytest.approx((-128.5, 21.5))
    flexed = hinge_from_straight((0, 1, 0), 0.0, 150.0, 30.0)  # (flexed 30 at rest: 30 back to straight)
    assert (flexed.min_deg, flexed.max_deg) == (-30.0, 120.0)
    past = hinge_from_straight((0, 1, 0), 0.0, 150.0, -10.0)  # (a rest past the preset's stop: kept inside)
    assert (past.min_deg, past.max_deg) == (0.0, 160.0)
    assert hinge_from_straight((0, 1, 0), -170.0, 170.0, 40.0).min_deg == -180.0


def a_posed_bent_rig() -> np.ndarray:
    """The preset's rest with the arms 45 deg down (an A-pose) and the elbows bent 20 deg forward."""
    p, q = PRESET.rest_positions.copy(), PRESET.rest_frames.copy()
    for side, sx in (("l", 1.0), ("r", -1.0)):
        shoulder = rot.rotate_inv(tuple(q[PRESET.index(f"shoulder_{side}")].tolist()), (0.0, 0.0, -sx))
        p, q = turn_joint(PRESET, p, q, f"shoulder_{side}", rot.axis_angle(shoulder, math.radians(45.0)))
        elbow = next(h for h in PRESET.constraints[f"elbow_{side}"] if isinstance(h, Hinge))
        flex = -20.0 if elbow.min_deg < 0 else 20.0
        local = rot.rotate_inv(tuple(PRESET.rest_frames[PRESET.index(f"elbow_{side}")].tolist()), elbow.axis)
        p, q = turn_joint(PRESET, p, q, f"elbow_{side}", rot.axis_angle(local, math.radians(flex)))
    return p


def test_a_rig_bent_at_rest_straightens_and_bends_as_far_as_the_preset() -> None:
    rest = a_posed_bent_rig()
    limits, _ = humanoid_setup(NAMES, PARENTS, rest, {n: n for n in NAMES if n in presets.HUMANOID_LIMITS})
    fingers = rig_finger_limits(NAMES, PARENTS, rest, {n: n for n in NAMES if is_finger_role(n)})
    rig = Skeleton(NAMES, PARENTS, rest, {**limits, **fingers}, riders=PRESET.riders)
    for side in "lr":
        hinge = next(h for h in limits[f"elbow_{side}"] if isinstance(h, Hinge))
        assert hinge.max_deg - hinge.min_deg == pytest.approx(150.0, abs=1e-6)
        e, w, h = (rest[rig.index(f"{j}_{side}")] for j in ("shoulder", "elbow", "wrist"))
        bend = rest_bend(w - e, h - w, hinge.axis)
        cos = float(np.dot(w - e, h - w)) / float(np.linalg.norm(w - e) * np.linalg.norm(h - w))
        assert abs(bend) == pytest.approx(
            math.degrees(math.acos(cos)), abs=1e-6
        )  # (the hinge in the rest bend's plane)
        assert abs(bend) > 15.0
        local = rot.rotate_inv(tuple(rig.rest_frames[rig.index(f"elbow_{side}")].tolist()), hinge.axis)
        turn = np.array(rot.axis_angle(local, math.radians(-bend)))  # (back to straight: allowed)
        kept = limited_turn(rig, f"elbow_{side}", turn)
        assert abs(abs(float(np.dot(kept, turn))) - 1.0) < 1e-9
        p, _q = turn_joint(rig, rest, rig.rest_frames, f"elbow_{side}", turn)
        u, v = p[rig.index(f"elbow_{side}")] - e, p[rig.index(f"wrist_{side}")] - p[rig.index(f"elbow_{side}")]
        assert float(np.dot(u, v)) / float(np.linalg.norm(u) * np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-12)
        cone = next(c for c in limits[f"shoulder_{side}"] if isinstance(c, EllipticalCone))
        preset = next(c for c in PRESET.constraints[f"shoulder_{side}"] if isinstance(c, EllipticalCone))
        # the rest 45 deg down: the arm rises 45 deg more above it, and drops 45 deg less below it
        assert cone.up_deg == pytest.approx(preset.up_deg + 45.0, abs=0.5)
        assert cone.down_deg == pytest.approx(preset.down_deg - 45.0, abs=0.5)


def test_a_rig_without_a_third_spine_bone_bends_its_spine_as_far() -> None:
    names = [n for n in NAMES if n != "spine_03"]
    keep = [NAMES.index(n) for n in names]
    parents = [NAMES.index("spine_02") if n == "chest" else PARENTS[NAMES.index(n)] for n in names]
    parents = [keep.index(p) if p >= 0 else -1 for p in parents]
    rest = PRESET.rest_positions[keep]
    limits, _ = humanoid_setup(names, parents, rest, {n: n for n in names if n in presets.HUMANOID_LIMITS})
    mine = {type(c): c for c in limits["spine_02"]}
    theirs = {type(c): c for c in PRESET.constraints["spine_02"]}
    spine_03 = {type(c): c for c in PRESET.constraints["spine_03"]}
    assert mine[Cone].max_deg == pytest.approx(theirs[Cone].max_deg + spine_03[Cone].max_deg)
    assert mine[Twist].max_deg == pytest.approx(theirs[Twist].max_deg + spine_03[Twist].max_deg)
    assert {type(c): c for c in limits["spine_01"]} == {type(c): c for c in PRESET.constraints["spine_01"]}
