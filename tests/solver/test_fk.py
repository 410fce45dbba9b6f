"""Forward kinematics (fabrik3d.solver.fk): one joint turned within its own limits, the joints above and
beside it unmoved to the bit, the joints below following rigidly; Euler angles (fabrik3d.rotations)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pytest
from helpers.limits import qmat, violations
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.solver.fk import joint_turn, limited_turn, turn_joint

BODY = presets.get("humanoid")
ARM = presets.get("robot_arm")
REST = fabrik3d.solve(BODY, {})
angles = st.tuples(*(st.floats(-180, 180) for _ in range(3)))
small = st.tuples(*(st.floats(-15, 15) for _ in range(3)))
reach = st.tuples(st.floats(0.1, 0.7), st.floats(0.8, 1.7), st.floats(-0.3, 0.5))


class Pose(NamedTuple):
    positions: np.ndarray
    rotations: np.ndarray


def below(skeleton, j: int) -> set[int]:
    """Joint ``j`` and every joint below it."""
    out = {j}
    for k in skeleton.order:
        if int(skeleton.parents[k]) in out:
            out.add(k)
    return out


def local_turns(skeleton, rotations: np.ndarray) -> list[np.ndarray]:
    """Each joint's frame relative to its parent's, as a matrix (the root's: its world frame)."""
    frames = [qmat(q) for q in rotations]
    return [frames[j] if p < 0 else frames[p].T @ frames[j] for j, p in enumerate(int(p) for p in skeleton.parents)]


def degrees_between(a: np.ndarray, b: np.ndarray) -> float:
    """Angle in degrees of the rotation between two rotation matrices (precise near 0)."""
    return math.degrees(2.0 * math.asin(min(1.0, float(np.linalg.norm(a - b)) / (2.0 * math.sqrt(2.0)))))


def twist_deg(turn: np.ndarray) -> float:
    """The twist about +Y of a turn (x, y, z, w), degrees: the swing-twist split."""
    return math.degrees(2.0 * math.atan2(turn[1], turn[3])) if turn[3] >= 0 else twist_deg(-turn)


def check_turn(skeleton, start, name: str, turn) -> tuple[np.ndarray, np.ndarray]:
    """Turn ``name`` from the pose ``start`` and assert what a turn guarantees; the new pose."""
    j = skeleton.index(name)
    p0, q0 = np.asarray(start.positions), np.asarray(start.rotations)
    p, q = turn_joint(skeleton, p0, q0, name, turn)
    assert np.all(np.isfinite(p)) and np.all(np.isfinite(q))
    sub = below(skeleton, j)
    others = [k for k in range(len(skeleton)) if k not in sub]
    # the joints above and beside, and the turned joint's position, keep their very floats
    assert np.array_equal(p[others], p0[others]) and np.array_equal(q[others], q0[others])
    assert np.array_equal(p[j], p0[j])
    # the joints below keep their rotations relative to their parents; the bones keep their lengths
    before, after = local_turns(skeleton, q0), local_turns(skeleton, q)
    assert max((degrees_between(before[k], after[k]) for k in sub - {j}), default=0.0) < 1e-4
    bones = [k for k in range(len(skeleton)) if skeleton.parents[k] >= 0]
    lengths = np.linalg.norm(p[bones] - p[skeleton.parents[bones]], axis=1)
    np.testing.assert_allclose(lengths, skeleton.bone_lengths[bones], rtol=1e-9)
    # the joint within its own limits (a leaf's Twist bounds the twist of its turn about its bone)
    if skeleton.children(j):
        assert violations(skeleton, p, q).get(name, 0.0) < 1e-6
    else:
        for c in skeleton.constraints.get(name, ()):
            assert c.min_deg - 1e-6 <= twist_deg(joint_turn(skeleton, q, name)) <= c.max_deg + 1e-6
    # turning again by the turn read back changes nothing
    p2, q2 = turn_joint(skeleton, p, q, name, joint_turn(skeleton, q, name))
    assert np.abs(p2 - p).max() <= 1e-9
    assert max(degrees_between(a, b) for a, b in zip(local_turns(skeleton, q), local_turns(skeleton, q2))) < 1e-6
    return p, q


def euler(skeleton, rotations, name: str) -> np.ndarray:
    return np.array(rot.euler_xyz(tuple(joint_turn(skeleton, rotations, name))))


@settings(max_examples=80, deadline=None)
@given(xyz=angles)
def test_euler_angles_round_trip(xyz) -> None:
    q = rot.from_euler_xyz(xyz)
    back = np.array(rot.from_euler_xyz(rot.euler_xyz(q)))
    assert min(np.linalg.norm(back - q), np.linalg.norm(back + q)) < 1e-9


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(BODY.names), xyz=st.one_of(small, angles), hand=st.none() | reach)
def test_a_turn_changes_only_its_joint_within_its_own_limits(name: str, xyz, hand) -> None:
    """From the rest pose or a solved one, any joint (the root too), turns inside and far beyond the limits."""
    start = REST if hand is None else fabrik3d.solve(BODY, {"hand_l": hand})
    check_turn(BODY, start, name, rot.from_euler_xyz(xyz))


@pytest.mark.parametrize("hand", [None, (0.3, 1.2, 0.4)])
@pytest.mark.parametrize(("name", "limit"), [("elbow_l", 85), ("hand_l", 90), ("neck", 60), ("shoulder_l", 120)])
def test_half_the_twist_limit_is_kept(name: str, limit: float, hand) -> None:
    start = REST if hand is None else fabrik3d.solve(BODY, {"hand_l": hand})
    _, q = check_turn(BODY, start, name, rot.from_euler_xyz((0.0, limit / 2, 0.0)))
    np.testing.assert_allclose(euler(BODY, q, name), (0.0, limit / 2, 0.0), atol=0.5)


@pytest.mark.parametrize("hand", [None, (0.3, 1.2, 0.4)])
@pytest.mark.parametrize("name", ["shoulder_l", "spine_02", "wrist_l", "knee_l", "neck", "chest"])
def test_a_small_bend_within_the_limits_is_kept(name: str, hand) -> None:
    """(Not the elbow: its hinge's axis is the frame's X tilted 4.4 degrees, so X = 8 leaves its plane.)"""
    start = REST if hand is None else fabrik3d.solve(BODY, {"hand_l": hand})
    turn = rot.from_euler_xyz((8.0, 0.0, 0.0))
    _, q = check_turn(BODY, start, name, turn)
    assert math.degrees(rot.angle_between(tuple(joint_turn(BODY, q, name)), turn)) < 0.75


def test_the_elbow_goes_to_the_nearer_stop_and_moves_nothing_above() -> None:
    start = fabrik3d.solve(BODY, {"hand_l": (0.3, 1.2, 0.4)})
    shoulder = joint_turn(BODY, start.rotations, "shoulder_l")
    _, q = check_turn(BODY, start, "elbow_l", rot.from_euler_xyz((170.0, 0.0, 0.0)))
    assert np.array_equal(joint_turn(BODY, q, "shoulder_l"), shoulder)
    assert euler(BODY, q, "elbow_l")[0] == pytest.approx(150.0, abs=1.0)  # the far end of its range
    # a bend the wrong way stops straight, from straight, bent or folded alike (the nearer stop)
    for x0 in (0.0, 100.0, 150.0):
        bent = Pose(*turn_joint(BODY, REST.positions, REST.rotations, "elbow_l", rot.from_euler_xyz((x0, 0, 0))))
        _, q = check_turn(BODY, bent, "elbow_l", rot.from_euler_xyz((-40.0, 0.0, 0.0)))
        np.testing.assert_allclose(euler(BODY, q, "elbow_l"), 0.0, atol=1e-6)
    # past the fold, nearer to it than to straight: folded
    _, q = check_turn(BODY, REST, "elbow_l", rot.from_euler_xyz((-170.0, 0.0, 0.0)))
    assert euler(BODY, q, "elbow_l")[0] == pytest.approx(150.0, abs=1.0)


def test_twists_within_the_limits_are_kept() -> None:
    for name, xyz in [("neck", (0.0, 30.0, 0.0)), ("elbow_l", (0.0, 50.0, 0.0)), ("head", (0.0, -70.0, 0.0))]:
        _, q = check_turn(BODY, REST, name, rot.from_euler_xyz(xyz))
        np.testing.assert_allclose(euler(BODY, q, name), xyz, atol=1.0)
    _, q = check_turn(BODY, REST, "neck", rot.from_euler_xyz((0.0, 75.0, 0.0)))  # beyond: to the limit
    np.testing.assert_allclose(euler(BODY, q, "neck"), (0.0, 60.0, 0.0), atol=1e-6)


def test_a_turn_within_the_limits_is_kept_and_read_back() -> None:
    turn = rot.from_euler_xyz((20.0, 10.0, -30.0))  # the shoulder can do this
    _, q = check_turn(BODY, REST, "shoulder_l", turn)
    np.testing.assert_allclose(euler(BODY, q, "shoulder_l"), (20, 10, -30), atol=1e-6)
    assert np.allclose(limited_turn(BODY, "shoulder_l", turn), turn, atol=1e-12)


def test_the_root_turns_the_whole_skeleton_about_itself() -> None:
    start = fabrik3d.solve(BODY, {"hand_l": (0.3, 1.2, 0.4)})
    turn = rot.from_euler_xyz((10.0, 120.0, -20.0))  # the pelvis is Rigid without swing or twist limits
    p, q = check_turn(BODY, start, "pelvis", turn)
    assert math.degrees(rot.angle_between(tuple(joint_turn(BODY, q, "pelvis")), turn)) < 1e-6
    gaps = np.linalg.norm(start.positions[:, None] - start.positions[None], axis=2)
    np.testing.assert_allclose(np.linalg.norm(p[:, None] - p[None], axis=2), gaps, atol=1e-12)


def test_a_leaf_turns_its_frame_only() -> None:
    p, q = check_turn(BODY, REST, "hand_l", rot.from_euler_xyz((30.0, 120.0, 0.0)))  # twist beyond 90
    assert np.array_equal(p, REST.positions)
    assert twist_deg(joint_turn(BODY, q, "hand_l")) == pytest.approx(90.0, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(ARM.names), xyz=angles)
def test_the_robot_arms_hinges_turn_about_their_axes_only(name: str, xyz) -> None:
    start = fabrik3d.solve(ARM, {})
    p, q = check_turn(ARM, start, name, rot.from_euler_xyz(xyz))
    j = ARM.index(name)
    if ARM.children(j):  # a hinge without a Twist: no twist about its bone
        assert abs(twist_deg(joint_turn(ARM, q, name))) < 1e-6
    if name == "base":  # the turntable turns about the vertical through the base: no point rises or falls
        np.testing.assert_allclose(p[:, 1], start.positions[:, 1], atol=1e-12)


def test_a_skeleton_without_constraints_keeps_any_turn() -> None:
    free = BODY.without_constraints()
    turn = rot.from_euler_xyz((150.0, -70.0, 100.0))
    for name in ("pelvis", "elbow_l", "knee_r", "hand_l"):
        _, q = check_turn(free, REST, name, turn)
        assert math.degrees(rot.angle_between(tuple(joint_turn(free, q, name)), turn)) < 1e-6
        assert np.array_equal(limited_turn(free, name, turn), np.copysign(1.0, turn[3]) * np.array(turn))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("elbo_l", (0, 0, 0, 1)), "elbo_l"),
        ((3, (0, 0, 0, 1)), "joint: expected the name of a joint"),
        (("elbow_l", (0, 0, 0, 2)), "turn: not a unit quaternion"),
        (("elbow_l", (0, 0, float("nan"), 1)), "turn: expected four finite numbers"),
    ],
)
def test_bad_turns_fail_clearly(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        turn_joint(BODY, REST.positions, REST.rotations, *args)
    with pytest.raises(ValueError, match=message):
        limited_turn(BODY, *args)
    with pytest.raises(ValueError, match=r"positions: expected shape \(65, 3\)"):
        turn_joint(BODY, REST.positions[:3], REST.rotations, "elbow_l", (0, 0, 0, 1))
    with pytest.raises(ValueError, match=r"rotations: expected \(65, 4\) finite"):
        turn_joint(BODY, REST.positions, np.full((65, 4), np.nan), "pelvis", (0, 0, 0, 1))
    with pytest.raises(ValueError, match="elbo_l"):
        joint_turn(BODY, REST.rotations, "elbo_l")
