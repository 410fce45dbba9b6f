"""Turning in the notebook view (issue 29, item 6): orientation targets, joints turned by hand that
later solves keep, and the head's look, through ``SkeletonView``'s Python API."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require_notebook

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.solver.fk import joint_turn

SkeletonView = require_notebook().SkeletonView

BODY = presets.get("humanoid")


def angle_deg(a, b) -> float:
    return math.degrees(rot.angle_between(tuple(np.asarray(a, float)), tuple(np.asarray(b, float))))


def euler(rotations: np.ndarray, name: str) -> tuple[float, float, float]:
    return rot.euler_xyz(tuple(joint_turn(BODY, rotations, name).tolist()))


def test_an_orientation_target_turns_the_hand_and_stays_through_a_move() -> None:
    view = SkeletonView(BODY, {"hand_l": [0.3, 1.15, 0.3]})
    h = BODY.index("hand_l")
    wanted = rot.mul(rot.axis_angle((0.0, 0.0, 1.0), math.radians(30.0)), tuple(view.result.rotations[h].tolist()))
    view.set_orientation("hand_l", wanted)
    assert angle_deg(view.result.rotations[h], wanted) < 1.0
    assert view.orientations["hand_l"] == pytest.approx(np.array(wanted))
    view.set_target("hand_l", [0.3, 1.25, 0.3])
    assert angle_deg(view.result.rotations[h], wanted) < 1.0 and view.result.converged
    view.set_orientation("hand_l", None)
    assert "hand_l" not in view.orientations


def test_a_turned_joint_stays_turned_through_later_solves() -> None:
    view = SkeletonView(BODY)
    view.turn_joint("neck", (0.0, 35.0, 0.0))
    assert euler(view.result.rotations, "neck")[1] == pytest.approx(35.0, abs=1e-6)
    view.set_target("hand_l", [0.3, 1.15, 0.3])
    assert euler(view.result.rotations, "neck")[1] == pytest.approx(35.0, abs=0.5)
    spine_before = view.pose[BODY.index("chest")].copy()
    view.turn_joint("elbow_l", (170.0, 0.0, 0.0))  # beyond the elbow's range: to its stop
    assert euler(view.result.rotations, "elbow_l")[0] == pytest.approx(150.0, abs=1.0)
    np.testing.assert_array_equal(view.pose[BODY.index("chest")], spine_before)
    # the hand's target rode along with the forearm
    np.testing.assert_allclose(view.targets["hand_l"], view.pose[BODY.index("hand_l")], atol=1e-3)


def test_the_head_looks_at_a_point_after_every_solve() -> None:
    view = SkeletonView(BODY)
    head = view.pose[BODY.index("head")]
    point = head + 2.0 * np.array([math.sin(math.radians(45)), 0.2, math.cos(math.radians(45))])
    view.look_at(point)
    for target in ([0.3, 1.15, 0.3], [0.25, 1.3, 0.35]):
        view.set_target("hand_l", target)
        aim = (point - view.pose[BODY.index("head")]) / np.linalg.norm(point - view.pose[BODY.index("head")])
        assert math.degrees(math.acos(min(1.0, float(fabrik3d.face_axis(BODY, view.result.rotations) @ aim)))) < 2.0
    view.free_look()
    view.set_target("hand_l", [0.3, 1.2, 0.3])  # (no error, no look)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda v: v.set_orientation("elbow_l", [0, 0, 0, 1]), "not an end effector"),
        (lambda v: v.set_orientation("hand_l", [0, 0, 0, 3]), "orientation of hand_l: not a unit quaternion"),
        (lambda v: v.turn_joint("wing", (0, 0, 0)), "'wing' is not a joint"),
        (lambda v: v.turn_joint("neck", (0, float("nan"), 0)), "turn_joint neck: angles"),
        (lambda v: v.look_at([1.0, 2.0]), "look_at"),
        (lambda v: v.look_at([1.0, 2.0, 1.0], head="skull"), "no joint 'skull'"),
    ],
)
def test_bad_turns_are_named_and_change_nothing(call, message) -> None:
    view = SkeletonView(BODY, {"hand_l": [0.3, 1.15, 0.3]})
    before = view.pose.copy()
    with pytest.raises(ValueError, match=message):
        call(view)
    np.testing.assert_array_equal(view.pose, before)
    assert not view.orientations
