"""A hand that mirrors the other takes that hand's fist and pinch mirrored (``fabrik3d.solver.fist.mirrored``)
instead of a second least-squares solve (about a second each: the web app's first readout of the right
hand's curls, after the left's, held up a page's key edit by that long): the same pose as solving it, and
a hand that does not mirror the other is still solved for itself."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.hand_bars import assert_fist, assert_pinch

import fabrik3d
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver import fist
from fabrik3d.solver.hand_pose import finger_joints
from fabrik3d.solver.hands import shape_hand


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the least-squares solves of ``fabrik3d.solver.fist`` (one per finger and start)."""
    count = [0]
    real = fist.least_squares

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(fist, "least_squares", counted)
    return count


def ancestors(sk: Skeleton, j: int) -> list[int]:
    out = []
    while sk.parents[j] >= 0:
        j = int(sk.parents[j])
        out.append(j)
    return out


def shaped(sk: Skeleton, side: str, shape: str) -> tuple[np.ndarray, np.ndarray]:
    rest = fabrik3d.solve(sk, {})
    return shape_hand(sk, rest.positions, rest.rotations, side, shape)


@pytest.mark.parametrize("shape", ["fist", "pinch"])
def test_the_right_hand_after_the_left_is_the_right_hand_solved(shape: str, solves: list[int]) -> None:
    alone = fabrik3d.presets.get("humanoid")
    p_alone, q_alone = shaped(alone, "r", shape)  # (solved: no left hand's yet)
    assert solves[0] > 0
    both = fabrik3d.presets.get("humanoid")
    shaped(both, "l", shape)
    before = solves[0]
    p, q = shaped(both, "r", shape)
    assert solves[0] == before  # (mirrored, not solved)
    assert np.max(np.abs(p - p_alone)) < 1e-4  # (metres: within 0.1 mm of the hand solved for itself)
    assert np.max(np.abs(np.abs(np.sum(q * q_alone, axis=1)) - 1.0)) < 1e-6
    (assert_fist if shape == "fist" else assert_pinch)(both, p, q, "r")


def test_a_hand_that_does_not_mirror_the_other_is_solved_for_itself(solves: list[int]) -> None:
    sk = fabrik3d.presets.get("humanoid")
    data = sk.to_dict()
    top = finger_joints(sk, "r")["index"][0]
    moved = {j for j in range(len(sk)) if top in (j, *ancestors(sk, j))}
    for j in moved:  # (the right index finger 4 mm higher on its hand: the hands no longer mirror)
        data["joints"][j]["position"][1] += 0.004
    odd = Skeleton.from_dict(data)
    shaped(odd, "l", "fist")
    before = solves[0]
    p, q = shaped(odd, "r", "fist")
    assert solves[0] > before
    assert_fist(odd, p, q, "r")
