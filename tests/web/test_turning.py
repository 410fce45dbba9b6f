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
from fabrik3d.solver.fk import turn_joint

pytestmark = pytest.mark.browser
BODY = presets.get("humanoid")


def pose(page) -> np.ndarray:
    return np.array(wh.get_state(page, "pose"))


def choose(page, joint: str) -> None:
    page.evaluate("(j) => window.trame.state.set('selected_joint', j)", joint)
    wh.wait_until(page, f"() => window.trame.state.get('selected_joint') === '{joint}'")


def test_typed_angles_turn_the_joint_within_its_limits_and_the_limb_follows(page) -> None:
    rest = pose(page)
    choose(page, "elbow_l")
    field = page.locator("#turn-angle-x")
    field.fill("170")  # beyond the elbow's range (X from 0 to about 150)
    field.press("Enter")
    field.blur()
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[0]) > 100")
    got = pose(page)
    hand, elbow, shoulder = (BODY.index(n) for n in ("hand_l", "elbow_l", "shoulder_l"))
    assert np.linalg.norm(got[hand] - rest[hand]) > 0.1  # the forearm turned
    np.testing.assert_array_equal(got[[elbow, shoulder]], rest[[elbow, shoulder]])  # the joints above stayed
    start = fabrik3d.solve(BODY, {})
    expected, _ = turn_joint(BODY, start.positions, start.rotations, "elbow_l", rot.from_euler_xyz((170, 0, 0)))
    np.testing.assert_allclose(got, expected, atol=1e-5)
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


def test_a_slider_drag_turns_the_shoulder_in_one_undo_step(page) -> None:
    rest = pose(page)
    choose(page, "shoulder_l")
    slider = page.locator(".turn-slider-z")
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


def test_a_bad_angle_is_named_and_changes_nothing(page) -> None:
    rest = pose(page)
    wh.trigger(page, "turn_joint", ["elbow_l", [0, "x", 0]])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('turn elbow_l')")
    wh.trigger(page, "turn_joint", ["pelvic", [0, 0, 0]])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('not a joint that turns')")
    np.testing.assert_allclose(pose(page), rest, atol=1e-12)


def test_alt_click_chooses_a_joint_and_alt_drag_turns_it_in_one_undo_step(page) -> None:
    rest = pose(page)
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


def test_the_root_is_offered_and_turns_the_whole_body(page) -> None:
    rest = pose(page)
    assert "pelvis" in wh.get_state(page, "turnable_joints")
    choose(page, "pelvis")
    wh.trigger(page, "turn_joint", ["pelvis", [0, 90, 0]])
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[1] - 90) < 1e-3")
    got = pose(page)
    pelvis = BODY.index("pelvis")
    np.testing.assert_array_equal(got[pelvis], rest[pelvis])
    gaps = np.linalg.norm(rest[:, None] - rest[None], axis=2)
    np.testing.assert_allclose(np.linalg.norm(got[:, None] - got[None], axis=2), gaps, atol=1e-5)  # (the state: 1e-6)
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('joint_angles')[1]) < 1e-6")
    np.testing.assert_allclose(pose(page), rest, atol=1e-9)
