"""Turning joints in the web UI's controller (fabrik3d_web.document.turning), without a browser: the real solver."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import missing_tool
from fabrik3d_web.document.controller import Controller

from fabrik3d import rotations as rot
from fabrik3d.solver.fk import turn_joint
from fabrik3d.solver.hang import hang_free_limbs
from fabrik3d.solver.rig import rig


def test_goals_below_the_turned_joint_ride_with_it_and_the_others_stay() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", [0.45, 1.15, 0.3])
    c.move_target("hand_r", [-0.45, 1.15, 0.3])
    right = c.targets["hand_r"].copy()
    hand_before = c.result.positions[sk.index("hand_l")].copy()
    c.turn("shoulder_l", [0, 0, -30])
    hand = c.result.positions[sk.index("hand_l")]
    assert np.linalg.norm(hand - hand_before) > 0.05  # the arm turned, its target with it
    np.testing.assert_allclose(c.targets["hand_l"], hand, atol=1e-3)
    np.testing.assert_array_equal(c.targets["hand_r"], right)
    assert c.joint_angles("shoulder_l")[2] == pytest.approx(-30.0, abs=0.5)


def test_a_turned_stiff_joint_stays_turned_when_a_hand_is_dragged_after() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.turn("chest", [0, 0, 12])
    turned = c.joint_angles("chest")
    assert abs(turned[2]) > 5.0
    head = c.result.positions[sk.index("head")].copy()
    for x in np.linspace(0.45, 0.5, 6):  # a small drag of the left hand, within the arm's reach
        c.move_target("hand_l", [x, 1.15, 0.3], undoable=False)
    np.testing.assert_allclose(c.joint_angles("chest"), turned, atol=1.0)
    assert np.linalg.norm(c.result.positions[sk.index("head")] - head) < 0.01
    # reset pose forgets the built pose; undo brings it back
    c.reset_pose()
    assert c.built is None and c.joint_angles("chest") == pytest.approx([0, 0, 0], abs=1e-6)
    c.undo()
    assert c.built is not None and c.joint_angles("chest")[2] == pytest.approx(turned[2], abs=1.0)


@pytest.mark.parametrize(
    ("name", "angles", "message"),
    [
        ("pelvic", [0, 0, 0], "not a joint that turns"),
        ("elbow_l", [0, 0], "expected three angles"),
        ("elbow_l", [0, float("nan"), 0], "expected three angles"),
        ("elbow_l", [0, 400, 0], "within ±360 degrees"),
        (3, [0, 0, 0], "not a joint that turns"),
    ],
)
def test_bad_turns_change_nothing(name, angles, message: str) -> None:
    c = Controller()
    before = c.result
    with pytest.raises(ValueError, match=message):
        c.turn(name, angles)
    assert c.result is before and not c.undo_stack


def test_the_root_turns_the_whole_body_its_goals_with_it() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", [0.45, 1.15, 0.3])
    assert "pelvis" in c.turnable_joints()
    before, frames = c.result.positions.copy(), c.result.rotations.copy()
    c.turn("pelvis", [0, 90, 0])
    assert c.joint_angles("pelvis") == pytest.approx([0.0, 90.0, 0.0], abs=1e-6)
    pelvis = sk.index("pelvis")
    got = c.result.positions
    np.testing.assert_array_equal(got[pelvis], before[pelvis])
    # the body turned rigidly, but for the free right arm below its shoulder: it hangs from the turned trunk
    # (the pelvis's Y leans back, so the turned trunk leans aside and the arm hangs straight down from it)
    arm = set(rig(sk).subtree(sk.index("elbow_r")))
    body = [j for j in range(len(sk)) if j not in arm]
    arm = sorted(arm)
    for part in (body, arm):  # (the hanging arm keeps its own shape: only its shoulder turns)
        gaps = np.linalg.norm(before[part][:, None] - before[part][None], axis=2)
        np.testing.assert_allclose(np.linalg.norm(got[part][:, None] - got[part][None], axis=2), gaps, atol=1e-12)
    turned = turn_joint(sk, before, frames, "pelvis", rot.from_euler_xyz((0, 90, 0)))
    hung, _ = hang_free_limbs(sk, *turned, busy={"hand_l"})
    np.testing.assert_allclose(got, hung, atol=1e-12)
    np.testing.assert_allclose(c.targets["hand_l"], got[sk.index("hand_l")], atol=1e-3)
    c.undo()
    np.testing.assert_array_equal(c.result.positions, before)


def test_the_angles_shown_are_the_turn_applied() -> None:
    """In the app (no browser): a turn beyond the limits shows the stop it went to."""
    try:
        from fabrik3d_web.app import WebApp
        from trame.app import get_server
    except ImportError as exc:  # the web extra is missing
        missing_tool(f"the web extra is not installed ({exc})")

    app = WebApp(server=get_server("fabrik3d-test-turning", client_type="vue3"))
    app.state.ready()
    app.state.selected_joint = "elbow_l"
    app.state.flush()
    app.turning.turn_joint("elbow_l", [60, 0, 0])
    assert app.state.joint_angles[0] == pytest.approx(60.0, abs=1.0)
    app.turning.turn_joint("elbow_l", [-40, 0, 0])  # straighter than straight: the stop, from the bent side
    assert app.state.joint_angles == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    app.turning.turn_joint("elbow_l", [170, 0, 0])  # beyond the far stop
    assert app.state.joint_angles[0] == pytest.approx(150.0, abs=1.0)
    app.turning.turn_joint("neck", [0, 30, 0])
    assert app.controller.joint_angles("neck") == pytest.approx([0.0, 30.0, 0.0], abs=1e-6)
    assert "pelvis" in app.state.turnable_joints
