"""``solve_batch``'s ``rotations`` and ``relax_rotations`` (issue 29, item 6): each problem equals
``solve`` on it with the same frames, natural posing or not, and the frames' turns about the bones
are kept (an FK-turned neck stays turned)."""

from __future__ import annotations

import numpy as np
import pytest

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.batch.solve import solve_batch
from fabrik3d.model import presets
from fabrik3d.solver.fk import joint_turn, turn_joint


@pytest.fixture(scope="module")
def turned():
    sk = presets.get("humanoid")
    rest = fabrik3d.solve(sk, {})
    p, q = turn_joint(sk, rest.positions, rest.rotations, "neck", rot.from_euler_xyz((0, 30, 0)))
    p, q = turn_joint(sk, p, q, "elbow_l", rot.from_euler_xyz((0, 45, 0)))
    return sk, p, q


@pytest.mark.parametrize("posing", [None, fabrik3d.Posing()])
def test_each_problem_is_solve_with_the_same_frames(turned, posing) -> None:
    sk, p, q = turned
    rng = np.random.default_rng(4)
    hands = np.array([0.28, 1.15, 0.3]) + rng.normal(0.0, 0.04, (6, 3))
    starts = np.repeat(p[None], 6, axis=0)
    frames = np.repeat(q[None], 6, axis=0)
    got = solve_batch(
        sk, {"hand_l": hands}, positions=starts, rotations=frames, relax_to=p, relax_rotations=q, posing=posing
    )
    for b in range(6):
        one = fabrik3d.solve(
            sk, {"hand_l": hands[b]}, positions=p, rotations=q, relax_to=p, relax_rotations=q, posing=posing
        )
        np.testing.assert_array_equal(got.positions[b], one.positions)
        np.testing.assert_array_equal(got.rotations[b], one.rotations)
        neck = rot.euler_xyz(tuple(joint_turn(sk, got.rotations[b], "neck").tolist()))
        assert neck[1] == pytest.approx(30.0, abs=0.5)  # (the turn about the neck's bone kept)


def test_frames_for_another_batch_size_are_named(turned) -> None:
    sk, p, q = turned
    with pytest.raises(ValueError, match="rotations"):
        solve_batch(sk, {"hand_l": np.zeros((3, 3)) + 0.3}, positions=p, rotations=np.repeat(q[None], 2, axis=0))
    with pytest.raises(ValueError, match=r"relax_rotations: expected shape \(B, 65, 4\)"):
        solve_batch(sk, {"hand_l": [0.3, 1.2, 0.3]}, relax_to=p, relax_rotations=q[:, :3])
