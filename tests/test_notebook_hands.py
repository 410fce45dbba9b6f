"""Hands and library poses in the notebook view, and keys that hold finger turns (issue 30, items 3, 4
and 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require_notebook

import fabrik3d
from fabrik3d.io.bake import bake
from fabrik3d.model.keys import Animation, Key
from fabrik3d.solver.fk import joint_turn

SkeletonView = require_notebook().SkeletonView

BODY = fabrik3d.presets.get("humanoid")


def bend_deg(rotations: np.ndarray, name: str) -> float:
    q = joint_turn(BODY, rotations, name)
    return math.degrees(2.0 * math.acos(min(1.0, abs(float(q[3])))))


def test_a_hand_shape_in_the_notebook_stays_through_later_solves() -> None:
    view = SkeletonView(BODY, {"hand_l": [0.3, 1.15, 0.3]})
    view.shape_hand("l", "fist")
    curled = bend_deg(view.result.rotations, "index_02_l")
    assert curled > 90.0 and bend_deg(view.result.rotations, "index_02_r") < 1e-6
    view.set_target("hand_l", [0.35, 1.2, 0.3])
    assert view.result.converged
    assert bend_deg(view.result.rotations, "index_02_l") == pytest.approx(curled, abs=1e-6)
    with pytest.raises(ValueError, match="shape: expected one of"):
        view.shape_hand("l", "claw")


def test_a_library_pose_in_the_notebook_moves_the_body_and_the_targets_follow() -> None:
    view = SkeletonView(BODY, {"hand_l": [0.3, 1.15, 0.3]})
    poses = fabrik3d.starter_poses()
    name = next(n for n in poses if "reach" in n.lower() or "up" in n.lower())
    view.apply_pose(poses[name])
    np.testing.assert_allclose(view.targets["hand_l"], view.pose[BODY.index("hand_l")], atol=1e-9)
    assert view.pose[BODY.index("hand_l")][1] > 1.5  # (reach up: the hand above the head's base)


def test_keys_hold_finger_turns_and_the_bake_blends_them() -> None:
    rest = fabrik3d.solve(BODY, {})
    fist = fabrik3d.shape_hand(BODY, rest.positions, rest.rotations, "l", "fist")
    hand = rest.positions[BODY.index("hand_l")]
    anim = Animation(
        [
            Key(0, {"hand_l": hand}, pose=fabrik3d.SolveResult(rest.positions, rest.rotations, 0, {}, True)),
            Key(20, {"hand_l": hand}, pose=fabrik3d.SolveResult(*fist, 0, {}, True)),
        ],
        fps=30,
        start=0,
        end=20,
    )
    take = bake(BODY, anim)
    at = [bend_deg(take.rotations[f], "index_02_l") for f in (0, 10, 20)]
    assert at[0] < 1e-6 and at[2] == pytest.approx(bend_deg(fist[1], "index_02_l"), abs=1e-6)
    assert 0.3 * at[2] < at[1] < 0.7 * at[2]  # (between the keys: the turns blended)
