"""The floor keeps the mannequin above it, not only the joints (issue 31 item 4): each joint keeps the
body's reach below it (``fabrik3d.model.mannequin.body_clearances``: a knee its ball, the pelvis its
width), and a toe on the floor lies flat on it, bent at the ball (``fabrik3d.solver.toes``), so a foot on
tiptoe does not sink its forefoot; lifted, the toe follows its foot again; a toe given an orientation
keeps it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.model import mass
from fabrik3d.model.mannequin import Mannequin, body_clearances, mannequin_mesh
from fabrik3d.solver.fk import joint_turn
from fabrik3d.solver.toes import level_frame

BODY = fabrik3d.presets.get("humanoid")
BODYMESH = Mannequin.of(BODY)
JOINTS = mannequin_mesh(BODY)[2]
AT = mass.humanoid_roles(BODY)
FEET = np.isin(JOINTS, [AT[r] for r in ("ankle_l", "ankle_r", "toe_l", "toe_r")])
TOES = {t: BODY.rest_positions[BODY.index(t)] for t in ("toe_l", "toe_r")}


def lowest(result: fabrik3d.SolveResult) -> tuple[float, float]:
    """The mannequin's lowest point, ``(body but the feet, feet)``, scene units."""
    v, _ = BODYMESH.skinned(result.positions, result.rotations)
    return float(v[~FEET, 1].min()), float(v[FEET, 1].min())


def test_the_rest_mannequin_stands_on_the_floor() -> None:
    v, _ = BODYMESH.skinned(*(lambda r: (r.positions, r.rotations))(fabrik3d.solve(BODY, {})))
    assert v[:, 1].min() == pytest.approx(mass.rest_ground(BODY), abs=1e-4)
    c = body_clearances(BODY)
    assert c[BODY.index("knee_l")] >= 0.04 and c[BODY.index("pelvis")] >= 0.1 and c[BODY.index("toe_l")] == 0.0


def test_a_deep_crouch_on_tiptoe_keeps_the_feet_on_the_floor_not_in_it() -> None:
    r = None
    for cm in range(10, 61, 5):  # the pelvis lowered, both toes pinned, warm
        root = BODY.rest_positions[BODY.root] - [0.0, cm / 100, 0.0]
        start = {} if r is None else {"positions": r.positions, "rotations": r.rotations}
        r = fabrik3d.solve(BODY, TOES, root_target=root, floor=0.0, balance=True, **start)
        body, feet = lowest(r)
        assert body >= -1e-6 and feet >= -1e-3, cm
    assert r.positions[BODY.index("ankle_l"), 1] > 0.14  # (on tiptoe at the end)
    for s in "lr":  # the toes flat on the floor, bent at the ball
        toe, ankle = BODY.index(f"toe_{s}"), BODY.index(f"ankle_{s}")
        level = level_frame(BODY, r.positions, toe, ankle)
        assert math.degrees(rot.angle_between(tuple(r.rotations[toe]), level)) < 1e-4
        assert math.degrees(rot.angle_between(tuple(joint_turn(BODY, r.rotations, f"toe_{s}")), rot.IDENTITY)) > 20.0


def test_without_the_toes_rule_the_forefoot_sinks() -> None:
    """The measure can fail: the same tiptoe with the toe following its foot sinks the forefoot."""
    root = BODY.rest_positions[BODY.root] - [0.0, 0.55, 0.0]
    r = fabrik3d.solve(BODY, TOES, root_target=root, floor=0.0, balance=True)
    q = np.array(r.rotations)
    for s in "lr":
        toe, ankle = BODY.index(f"toe_{s}"), BODY.index(f"ankle_{s}")
        local = rot.mul(rot.conj(tuple(BODY.rest_frames[ankle])), tuple(BODY.rest_frames[toe]))
        q[toe] = rot.mul(tuple(q[ankle]), local)
    assert lowest(fabrik3d.SolveResult(r.positions, q, 0, {}, True))[1] < -0.01


def test_random_deep_poses_keep_the_body_above_the_floor() -> None:
    rng = np.random.default_rng(11)
    feet = []
    for k in range(30):
        side = "lr"[k % 2]
        targets = {f"hand_{side}": rng.uniform([-0.7, -0.3, -0.7], [0.7, 0.6, 0.7]), **TOES}
        root = BODY.rest_positions[BODY.root] + [rng.uniform(-0.2, 0.2), -rng.uniform(0.2, 0.6), rng.uniform(-0.3, 0.3)]
        r = fabrik3d.solve(BODY, targets, root_target=root, floor=0.0)
        body, low = lowest(r)
        assert body >= -1e-6, k  # (knees, hands, the pelvis rest on their surfaces)
        feet.append(low)
    assert min(feet) >= -0.01 and np.median(feet) >= -1e-3  # (a heel rocked back dips a few mm at worst)


def test_a_toe_bent_on_the_floor_follows_its_foot_once_lifted() -> None:
    root = BODY.rest_positions[BODY.root] - [0.0, 0.55, 0.0]
    r = fabrik3d.solve(BODY, TOES, root_target=root, floor=0.0, balance=True)
    assert math.degrees(rot.angle_between(tuple(joint_turn(BODY, r.rotations, "toe_l")), rot.IDENTITY)) > 20.0
    # the left foot let go and the body lifted: that toe leaves the floor, warm from the crouch
    high = BODY.rest_positions[BODY.root] + [0.0, 0.3, 0.0]
    lifted = fabrik3d.solve(BODY, {"toe_r": TOES["toe_r"] + [0.0, 0.3, 0.0]}, root_target=high, floor=0.0,
                            positions=r.positions, rotations=r.rotations)  # fmt: skip
    assert lifted.positions[BODY.index("toe_l"), 1] > 0.3
    turn = joint_turn(BODY, lifted.rotations, "toe_l")
    assert math.degrees(rot.angle_between(tuple(turn), rot.IDENTITY)) < 1e-4  # (following the foot)


def test_a_toe_with_an_orientation_keeps_it_on_the_floor() -> None:
    root = BODY.rest_positions[BODY.root] - [0.0, 0.5, 0.0]
    down = rot.from_euler_xyz((50.0, 0.0, 0.0))
    goal = fabrik3d.Target(TOES["toe_l"], rot.mul(down, tuple(BODY.rest_frames[BODY.index("toe_l")])))
    r = fabrik3d.solve(BODY, {**TOES, "toe_l": goal}, root_target=root, floor=0.0)
    toe, ankle = BODY.index("toe_l"), BODY.index("ankle_l")
    assert math.degrees(rot.angle_between(tuple(r.rotations[toe]), level_frame(BODY, r.positions, toe, ankle))) > 5.0
