"""Forward kinematics (fabrik3d.solver.fk): one joint turned, the joints below following, the limits held;
Euler angles (fabrik3d.rotations)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.limits import violations
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.solver.fk import joint_turn, turn_joint

BODY = presets.get("humanoid")
REST = fabrik3d.solve(BODY, {})
angles = st.tuples(*(st.floats(-180, 180) for _ in range(3)))
joints = st.sampled_from([n for j, n in enumerate(BODY.names) if j != BODY.root])


def below(skeleton, j: int) -> set[int]:
    out = {j}
    for k in skeleton.order:
        if int(skeleton.parents[k]) in out:
            out.add(k)
    return out


@settings(max_examples=80, deadline=None)
@given(xyz=angles)
def test_euler_angles_round_trip(xyz) -> None:
    q = rot.from_euler_xyz(xyz)
    back = np.array(rot.from_euler_xyz(rot.euler_xyz(q)))
    assert min(np.linalg.norm(back - q), np.linalg.norm(back + q)) < 1e-9


@settings(max_examples=60, deadline=None)
@given(name=joints, xyz=angles)
def test_a_turn_moves_only_the_joints_below_keeps_bones_and_holds_the_limits(name: str, xyz) -> None:
    j = BODY.index(name)
    p, q = turn_joint(BODY, REST.positions, REST.rotations, name, rot.from_euler_xyz(xyz))
    assert np.all(np.isfinite(p)) and np.all(np.isfinite(q))
    sub = below(BODY, j)
    others = [k for k in range(len(BODY)) if k not in sub]
    np.testing.assert_allclose(p[others], REST.positions[others], atol=1e-9)
    lengths = np.linalg.norm(p[1:] - p[BODY.parents[1:]], axis=1)
    np.testing.assert_allclose(lengths, BODY.bone_lengths[1:], rtol=1e-9)
    assert max(violations(BODY, p, q).values(), default=0.0) < 1e-3


def test_a_turn_within_the_limits_is_kept_exactly_and_read_back() -> None:
    turn = rot.from_euler_xyz((20.0, 10.0, -30.0))  # the shoulder can do this
    p, q = turn_joint(BODY, REST.positions, REST.rotations, "shoulder_l", turn)
    assert math.degrees(rot.angle_between(tuple(joint_turn(BODY, q, "shoulder_l")), turn)) < 1e-4
    np.testing.assert_allclose(rot.euler_xyz(tuple(joint_turn(BODY, q, "shoulder_l"))), (20, 10, -30), atol=1e-6)
    # the elbow is a hinge about its frame's X: a bend about X is kept, a bend about Z is brought onto X
    _, q3 = turn_joint(BODY, p, q, "elbow_l", rot.from_euler_xyz((60.0, 0.0, 0.0)))
    _, q2 = turn_joint(BODY, p, q, "elbow_l", rot.from_euler_xyz((0.0, 0.0, 60.0)))
    assert rot.euler_xyz(tuple(joint_turn(BODY, q3, "elbow_l")))[0] == pytest.approx(60.0, abs=1.0)
    x, _, z = rot.euler_xyz(tuple(joint_turn(BODY, q2, "elbow_l")))
    assert abs(z) < 10.0 and x > 10.0, (x, z)  # (the hinge axis is the frame X turned a few degrees)


def test_without_limits_any_turn_is_kept() -> None:
    free = BODY.without_constraints()
    turn = rot.from_euler_xyz((150.0, 0.0, 100.0))
    _, q = turn_joint(free, REST.positions, REST.rotations, "elbow_l", turn)
    assert math.degrees(rot.angle_between(tuple(joint_turn(free, q, "elbow_l")), turn)) < 1e-4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("pelvis", (0, 0, 0, 1)), "not the root"),
        (("elbo_l", (0, 0, 0, 1)), "elbo_l"),
        (("elbow_l", (0, 0, 0, 2)), "turn: not a unit quaternion"),
        (("elbow_l", (0, 0, float("nan"), 1)), "turn: expected four finite numbers"),
    ],
)
def test_bad_turns_fail_clearly(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        turn_joint(BODY, REST.positions, REST.rotations, *args)
    with pytest.raises(ValueError, match=r"positions: expected shape \(25, 3\)"):
        turn_joint(BODY, REST.positions[:3], REST.rotations, "elbow_l", (0, 0, 0, 1))
