"""What every view draws (fabrik3d.display): limit rims, pole chains and homes, the skeleton's size."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.limits import qmat

import fabrik3d
from fabrik3d import Cone, EllipticalCone, Hinge, Posing, Skeleton, Twist, display
from fabrik3d.model import presets

CHAIN = (["a", "b", "c", "d"], [-1, 0, 1, 2], [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]])


def _rims(limit, target):
    """The rims of one limit on joint b of a chain, in the pose that reaches ``target``, with the
    parent's carry (its frame times its rest frame's inverse) and the posed rest bone."""
    s = Skeleton(*CHAIN, constraints={"b": limit})
    result = fabrik3d.solve(s, {"d": target})
    rims = display.limit_rims(s, result.rotations, segments=24)
    carry = qmat(result.rotations[0]) @ qmat(s.rest_frames[0]).T
    return rims, carry


@pytest.mark.parametrize("target", [[0.0, 3.0, 0.0], [1.0, 2.2, 0.8]])
def test_cone_rims_lie_at_the_limit_angle_from_the_carried_rest_bone(target) -> None:
    rims, carry = _rims(Cone(35.0), target)
    (rim,) = rims
    assert rim.kind == "cone" and rim.joint == 1 and rim.bone_length == pytest.approx(1.0)
    assert rim.directions.shape == (25, 3)
    bone = carry @ [0.0, 1.0, 0.0]
    angles = np.degrees(np.arccos(np.clip(rim.directions @ bone, -1, 1)))
    np.testing.assert_allclose(angles, 35.0, atol=1e-9)
    np.testing.assert_allclose(rim.directions[0], rim.directions[-1], atol=1e-12)  # closed
    if target != [0.0, 3.0, 0.0]:
        assert not np.allclose(carry, np.eye(3))  # the parent turned, and the rim with it


def test_elliptical_rims_follow_the_definition() -> None:
    limit = EllipticalCone(left_deg=20.0, right_deg=40.0, up_deg=30.0, down_deg=10.0)
    (rim,), carry = _rims(limit, [0.0, 3.0, 0.0])
    right, bone = carry @ [1.0, 0.0, 0.0], carry @ [0.0, 1.0, 0.0]
    up = np.cross(right, bone)
    theta = np.degrees(np.arccos(np.clip(rim.directions @ bone, -1, 1)))
    x, z = rim.directions @ right, rim.directions @ up
    u, v = theta * x / np.hypot(x, z), theta * z / np.hypot(x, z)
    a, b = np.where(u >= 0, 40.0, 20.0), np.where(v >= 0, 30.0, 10.0)
    np.testing.assert_allclose((u / a) ** 2 + (v / b) ** 2, 1.0, atol=1e-9)
    assert u.max() == pytest.approx(40.0) and u.min() == pytest.approx(-20.0)
    assert v.max() == pytest.approx(30.0) and v.min() == pytest.approx(-10.0)


def test_hinge_arcs_span_the_range_in_the_hinge_plane() -> None:
    (rim,), carry = _rims(Hinge((1.0, 0.0, 0.0), -60.0, 20.0), [0.0, 2.5, 1.0])
    assert rim.kind == "hinge"
    axis, bone = carry @ [1.0, 0.0, 0.0], carry @ [0.0, 1.0, 0.0]
    np.testing.assert_allclose(rim.directions @ axis, 0.0, atol=1e-12)
    angles = np.degrees(np.arctan2(rim.directions @ np.cross(axis, bone), rim.directions @ bone))
    assert angles[0] == pytest.approx(-60.0) and angles[-1] == pytest.approx(20.0)
    assert np.all(np.diff(angles) > 0)


def test_only_swing_limits_on_the_chosen_joints_are_drawn() -> None:
    s = Skeleton(*CHAIN, constraints={"a": Cone(50.0), "b": [Hinge((1, 0, 0), -90, 0), Twist(-30, 30)]})
    assert [(r.joint, r.kind) for r in display.limit_rims(s, s.rest_frames)] == [(0, "cone"), (1, "hinge")]
    assert [r.joint for r in display.limit_rims(s, s.rest_frames, joints=["b"])] == [1]
    assert display.limit_rims(Skeleton(*CHAIN), np.tile([0.0, 0, 0, 1], (4, 1))) == []


def test_the_pole_chain_is_the_one_the_solver_turns() -> None:
    sk = presets.get("humanoid")
    names = [sk.names[j] for j in display.effector_chain(sk, "hand_l")]
    assert names == ["chest", "clavicle_l", "shoulder_l", "elbow_l", "wrist_l", "hand_l"]
    names = [sk.names[j] for j in display.effector_chain(sk, "toe_r")]
    assert names == ["pelvis", "hip_r", "knee_r", "ankle_r", "toe_r"]
    chain = Skeleton(*CHAIN)
    assert display.effector_chain(chain, "d") == [0, 1, 2, 3]


def test_natural_pole_homes_sit_out_from_the_hinge_along_its_bend() -> None:
    sk = presets.get("humanoid")
    size = display.skeleton_size(sk)
    pose = fabrik3d.solve(sk, {"hand_l": [0.45, 1.2, 0.35]}).positions
    home = display.pole_home(sk, pose, "hand_l", size)
    shoulder, elbow, wrist = (pose[sk.index(n)] for n in ("shoulder_l", "elbow_l", "wrist_l"))
    line = (wrist - shoulder) / np.linalg.norm(wrist - shoulder)
    bend = elbow - shoulder - ((elbow - shoulder) @ line) * line
    assert np.linalg.norm(bend) > 0.02  # (the elbow is bent)
    out = home - elbow
    assert np.linalg.norm(out) == pytest.approx(display.POLE_HOME_OUT * size)
    np.testing.assert_allclose(out / np.linalg.norm(out), bend / np.linalg.norm(bend), atol=1e-12)
    # a straight leg at rest: the home lies along the swivel's bend, in front (+Z), over the toes
    rest = sk.rest_positions
    knee = rest[sk.index("knee_l")]
    out = display.pole_home(sk, rest, "toe_l", size) - knee
    assert np.linalg.norm(out) == pytest.approx(display.POLE_HOME_OUT * size)
    assert out[2] > 0.9 * np.linalg.norm(out)


def test_pole_homes_sit_out_from_the_bent_joint() -> None:
    """The plain rule (a skeleton without a posing)."""
    sk = presets.get("humanoid").with_posing(Posing())
    size = display.skeleton_size(sk)
    pose = fabrik3d.solve(sk, {"hand_l": [0.45, 1.2, 0.35]}).positions
    home = display.pole_home(sk, pose, "hand_l", size)
    chain = display.effector_chain(sk, "hand_l")
    start, end = pose[chain[0]], pose[chain[-1]]
    line = (end - start) / np.linalg.norm(end - start)
    inner = pose[chain[1:-1]]
    offsets = inner - start - np.outer((inner - start) @ line, line)
    k = int(np.argmax(np.linalg.norm(offsets, axis=1)))
    out = home - inner[k]
    assert np.linalg.norm(out) == pytest.approx(display.POLE_HOME_OUT * size)
    np.testing.assert_allclose(out / np.linalg.norm(out), offsets[k] / np.linalg.norm(offsets[k]), atol=1e-12)
    # a straight chain: in front (+Z) of its middle joint
    straight = Skeleton(*CHAIN)
    home = display.pole_home(straight, straight.rest_positions, "d", 2.0)
    np.testing.assert_allclose(home, [0.0, 1.0, display.POLE_HOME_OUT * 2.0])


def test_skeleton_size_is_the_rest_pose_diagonal() -> None:
    sk = presets.get("humanoid")
    rest = sk.rest_positions
    assert display.skeleton_size(sk) == pytest.approx(float(np.linalg.norm(rest.max(0) - rest.min(0))))
    line = Skeleton(["a", "b"], [-1, 0], [[0, 0, 0], [0, 0, 2]])
    assert display.skeleton_size(line) == pytest.approx(2.0)
    assert math.isfinite(display.skeleton_size(presets.get("octopus")))


def test_views_offer_handles_only_where_something_can_move_and_label_the_poles() -> None:
    octopus = presets.get("octopus")
    assert set(display.movable_effectors(octopus)) == set(octopus.end_effectors) - {"mantle"}
    h = presets.get("humanoid")
    assert display.movable_effectors(h) == list(h.end_effectors)
    assert display.pole_effectors(h) == ["hand_l", "hand_r", "toe_l", "toe_r"]  # (the head has no hinge)
    assert [display.pole_label(h, e) for e in display.pole_effectors(h)] == [
        "elbow_l pole",
        "elbow_r pole",
        "knee_l pole",
        "knee_r pole",
    ]
    plain = h.with_posing(None)
    assert "head" in display.pole_effectors(plain)  # (without a posing: every chain with an inner joint)
    chain = display.effector_chain(plain, "hand_l")
    assert display.pole_label(plain, "hand_l") == f"{plain.names[chain[len(chain) // 2]]} pole"
