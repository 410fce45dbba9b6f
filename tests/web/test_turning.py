"""End to end, turning a joint (issue 18, item 1; issue 29, item 4): choose a joint (the root too), type its
angles or drag a slider; the limb below follows, the joints above stay, the joint's own limits hold and the
panel shows the turn applied, one undo step per slider drag. The real ``fabrik3d serve`` and Debian's
headless chromium."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import web as wh

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.solver.fk import joint_turn, turn_joint
from fabrik3d.solver.hang import hang_free_limbs
from fabrik3d.solver.rig import rig

pytestmark = pytest.mark.browser
BODY = presets.get("humanoid")
# The app opens on the relaxed stance (the free arms hang beside the body), not on the rest pose (the T).
STANCE = fabrik3d.solve(BODY, {})


def pose(page) -> np.ndarray:
    return np.array(wh.get_state(page, "pose"))


def choose(page, joint: str) -> None:
    page.evaluate("(j) => window.trame.state.set('selected_joint', j)", joint)
    wh.wait_until(page, f"() => window.trame.state.get('selected_joint') === '{joint}'")


def hold_the_arms_out(page) -> np.ndarray:
    """Apply the starter pose "T" (one undo step): the arms held out to the sides, as at rest; the pose."""
    wh.trigger(page, "apply_library_pose", ["T", False, None])
    hand, shoulder = BODY.index("hand_l"), BODY.index("shoulder_l")
    wh.wait_until(
        page,
        "([h, s]) => Math.abs(window.trame.state.get('pose')[h][1] - window.trame.state.get('pose')[s][1]) < 1e-3",
        arg=[hand, shoulder],
    )
    got = pose(page)
    np.testing.assert_allclose(got, BODY.rest_positions, atol=1e-6)
    return got


def back_to_the_stance(page) -> None:
    """Undo the starter pose "T": the arms hang again."""
    wh.trigger(page, "undo")
    hand = BODY.index("hand_l")
    wh.wait_until(
        page,
        "([i, y]) => Math.abs(window.trame.state.get('pose')[i][1] - y) < 1e-5",
        arg=[hand, float(STANCE.positions[hand][1])],
    )
    np.testing.assert_allclose(pose(page), STANCE.positions, atol=1e-6)


def test_typed_angles_turn_the_joint_within_its_limits_and_the_limb_follows(page) -> None:
    rest = pose(page)
    np.testing.assert_allclose(rest, STANCE.positions, atol=1e-6)  # (the left arm hangs, its elbow a little bent)
    assert wh.get_state(page, "hang_of")["hand_l"] is True
    choose(page, "elbow_l")
    # the panel shows the hanging elbow's turn; the typed X is sent with the Y and Z shown
    shown = [round(a, 3) + 0.0 for a in rot.euler_xyz(tuple(joint_turn(BODY, STANCE.rotations, "elbow_l").tolist()))]
    wh.wait_until(
        page, "(a) => window.trame.state.get('joint_angles').every((v, k) => Math.abs(v - a[k]) < 1e-9)", arg=shown
    )
    field = wh.show_control(page, "#turn-angle-x")
    field.fill("170")  # beyond the elbow's range (X from 0 to about 150)
    field.press("Enter")
    field.blur()
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[0]) > 100")
    got = pose(page)
    hand, elbow, shoulder = (BODY.index(n) for n in ("hand_l", "elbow_l", "shoulder_l"))
    assert np.linalg.norm(got[hand] - rest[hand]) > 0.1  # the forearm turned
    np.testing.assert_array_equal(got[[elbow, shoulder]], rest[[elbow, shoulder]])  # the joints above stayed
    turn = rot.from_euler_xyz((170, shown[1], shown[2]))
    expected, _ = turn_joint(BODY, STANCE.positions, STANCE.rotations, "elbow_l", turn)
    np.testing.assert_allclose(got, expected, atol=1e-5)  # (shown as turned: the arm turned by hand no longer hangs)
    assert wh.get_state(page, "hang_of")["hand_l"] is True  # (the setting stays: the pose built has the arm posed)
    # the hinge's limit held: the panel shows the stop it went to, 150 degrees
    assert wh.get_state(page, "joint_angles")[0] == pytest.approx(150.0, abs=1.0)
    # bent the wrong way from there: the straight stop, shown in the field
    field.fill("-40")
    field.press("Enter")
    field.blur()
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[0]) < 1e-6")
    assert field.input_value() == "0.0"
    wh.trigger(page, "undo")
    wh.trigger(page, "undo")
    # the angle read 0 before the undos too: wait for the hand itself to come back to rest
    wh.wait_until(
        page,
        "([i, x]) => Math.abs(window.trame.state.get('pose')[i][0] - x) < 1e-9",
        arg=[hand, float(rest[hand][0])],
    )
    np.testing.assert_allclose(pose(page), rest, atol=1e-9)
    assert wh.get_state(page, "hang_of")["hand_l"] is True


def test_a_slider_drag_turns_the_shoulder_in_one_undo_step(page) -> None:
    rest = hold_the_arms_out(page)  # (the arm hangs at the start: held out, it can come down)
    choose(page, "shoulder_l")
    wh.wait_until(page, "() => window.trame.state.get('joint_angles').every((a) => Math.abs(a) < 1e-6)")
    slider = wh.show_control(page, ".turn-slider-z")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    wh.drag(page, (box["x"] + box["width"] * 0.5, y), (box["x"] + box["width"] * 0.35, y), steps=10, pause=0.03)
    wh.wait_until(page, "() => window.trame.state.get('joint_angles')[2] < -20")
    hand = BODY.index("hand_l")
    assert pose(page)[hand][1] < rest[hand][1] - 0.1  # the arm came down
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[2]) < 1e-6")
    np.testing.assert_allclose(pose(page), rest, atol=1e-9)
    back_to_the_stance(page)


def test_a_bad_angle_is_named_and_changes_nothing(page) -> None:
    rest = pose(page)
    wh.trigger(page, "turn_joint", ["elbow_l", [0, "x", 0]])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('turn elbow_l')")
    wh.trigger(page, "turn_joint", ["pelvic", [0, 0, 0]])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('not a joint that turns')")
    np.testing.assert_allclose(pose(page), rest, atol=1e-12)


def test_alt_click_chooses_a_joint_and_alt_drag_turns_it_in_one_undo_step(page) -> None:
    rest = hold_the_arms_out(page)  # (the arm hangs at the start: held out, it can swing down)
    box = wh.view_box(page)
    jx, jy = wh.trigger(page, "joint_screen_position", ["shoulder_l"])
    x, y = box["x"] + jx, box["y"] + jy
    page.keyboard.down("Alt")
    try:
        page.mouse.move(x, y)
        page.mouse.down()
        radius = 60.0
        for k in range(0, 19):  # off the joint to its right, then a quarter turn around it, downward on screen
            a = math.radians(-5.0 * k)
            page.mouse.move(x + radius * math.cos(a), y - radius * math.sin(a))
            page.wait_for_timeout(30)
        page.mouse.up()
    finally:
        page.keyboard.up("Alt")
    wh.wait_until(page, "() => window.trame.state.get('selected_joint') === 'shoulder_l'")
    wh.settle(page)
    got = pose(page)
    hand, shoulder, chest = (BODY.index(n) for n in ("hand_l", "shoulder_l", "chest"))
    assert got[hand][1] < rest[hand][1] - 0.2  # the arm swung down (clockwise on the screen)
    np.testing.assert_allclose(got[[shoulder, chest]], rest[[shoulder, chest]], atol=1e-9)
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[2]) < 1e-6")
    np.testing.assert_allclose(pose(page), rest, atol=1e-9)
    back_to_the_stance(page)


def test_the_root_is_offered_and_turns_the_whole_body(page) -> None:
    rest = pose(page)
    assert "pelvis" in wh.get_state(page, "turnable_joints")
    choose(page, "pelvis")
    wh.trigger(page, "turn_joint", ["pelvis", [0, 90, 0]])
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[1] - 90) < 1e-3")
    got = pose(page)
    pelvis = BODY.index("pelvis")
    np.testing.assert_array_equal(got[pelvis], rest[pelvis])
    # the body turned rigidly, but for the free arms below their shoulders: they hang from the turned trunk at
    # once, each keeping its own shape (the pelvis's Y leans back: the turned trunk leans aside a little)
    arms = [set(rig(BODY).subtree(BODY.index(f"elbow_{side}"))) for side in "lr"]
    body = [j for j in range(len(BODY)) if not any(j in arm for arm in arms)]
    for part in [body, *(sorted(arm) for arm in arms)]:
        gaps = np.linalg.norm(rest[part][:, None] - rest[part][None], axis=2)
        np.testing.assert_allclose(
            np.linalg.norm(got[part][:, None] - got[part][None], axis=2), gaps, atol=1e-5
        )  # (the state: 1e-6)
    turned = turn_joint(BODY, STANCE.positions, STANCE.rotations, "pelvis", rot.from_euler_xyz((0, 90, 0)))
    np.testing.assert_allclose(got, hang_free_limbs(BODY, *turned)[0], atol=1e-5)
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[1]) < 1e-6")
    np.testing.assert_allclose(pose(page), rest, atol=1e-9)
