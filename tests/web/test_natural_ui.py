"""End to end, the panel's Posing section: pin and free an effector with its button, choose a
chain's reach in its menu, set a joint's stiffness; the real ``fabrik3d serve`` and Debian's
headless chromium (playwright). State is read through trame's state, never from pixels.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import web as wh

from fabrik3d.model import presets

pytestmark = pytest.mark.browser

H = presets.get("humanoid")


@pytest.fixture(autouse=True)
def no_banner(page):
    """Each test starts from the rest pose, the error banner closed (it covers the top of the view)."""
    wh.trigger(page, "reset_pose")
    page.evaluate("() => window.trame.state.set('error_message', '')")
    wh.wait_until(page, "() => window.trame.state.get('error_message') === ''")


def test_pin_then_a_reach_of_the_other_hand_leaves_the_pinned_hand_where_it_was(page) -> None:
    r = H.index("hand_r")
    rest = np.array(wh.get_state(page, "pose")[r])
    wh.show_control(page, "#pin-hand_r").click()
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r !== undefined")
    assert wh.get_state(page, "targets")["hand_r"] == pytest.approx(rest.tolist(), abs=1e-6)
    # the left hand reaches toward the chest (the arm alone can): the pinned hand stays put
    field = wh.show_control(page, "#coord-hand_l-x")
    field.fill("0.15")
    field.press("Enter")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    pose = np.array(wh.get_state(page, "pose"))
    assert np.linalg.norm(pose[r] - rest) <= 1e-3 + 1e-6
    assert wh.get_state(page, "converged")
    # the button now frees it: its target goes, the other one stays
    wh.show_control(page, "#pin-hand_r").click()
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r === undefined")
    assert set(wh.get_state(page, "targets")) == {"hand_l"}
    wh.trigger(page, "free_effector", ["hand_l"])
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('targets')).length")


def test_the_reach_menu_stops_a_chain_and_the_scene_file_keeps_it(page) -> None:
    assert wh.get_state(page, "reach_of")["hand_l"] == "spine_01"  # (the preset's default)
    wh.show_control(page, "#reach-hand_l").click(force=True)  # (the field's own layer takes the pointer)
    page.get_by_role("option", name="clavicle_l", exact=True).click()
    wh.wait_until(page, "() => window.trame.state.get('reach_of').hand_l === 'clavicle_l'")
    # a target beyond the arm: the chain's top joint is the clavicle (it turns, the spine stays at rest)
    before = np.array(wh.get_state(page, "pose"))
    wh.trigger(page, "type_coordinate", ["hand_l", 1, "2.2"])
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    after = np.array(wh.get_state(page, "pose"))
    for name in ("spine_01", "spine_02", "spine_03", "chest", "clavicle_l", "head"):
        assert np.linalg.norm(after[H.index(name)] - before[H.index(name)]) <= 1e-6, name
    assert np.linalg.norm(after[H.index("shoulder_l")] - before[H.index("shoulder_l")]) > 0.01  # (the clavicle turns)
    assert not wh.get_state(page, "converged")
    scene = json.loads(_scene_text(page))
    assert scene["posing"]["reach"]["hand_l"] == "clavicle_l"
    # a joint not above the hand: refused, nothing changes
    wh.trigger(page, "set_reach", ["hand_l", "toe_l"])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('not a joint above it')")
    assert wh.get_state(page, "reach_of")["hand_l"] == "clavicle_l"
    wh.trigger(page, "free_effector", ["hand_l"])
    wh.trigger(page, "set_reach", ["hand_l", "spine_01"])


def test_stiffness_is_shown_with_the_presets_defaults_and_can_be_set(page) -> None:
    stiffness = wh.get_state(page, "stiffness_of")
    assert stiffness["spine_02"] == pytest.approx(H.posing.stiffness["spine_02"])
    assert stiffness["elbow_l"] == 0.0
    assert wh.show_control(page, "#stiffness-joint").input_value() == "spine_01"  # (the first stiff joint)
    assert page.locator("#group-posing .v-slider").first.is_visible()
    wh.trigger(page, "set_stiffness", ["spine_02", 0.25])
    wh.wait_until(page, "() => window.trame.state.get('stiffness_of').spine_02 === 0.25")
    assert json.loads(_scene_text(page))["posing"]["stiffness"]["spine_02"] == 0.25
    for args, message in ((["spine_02", 1.5], "from 0 to 1"), (["nope", 0.5], "not a joint"), (["spine_02"], "")):
        wh.trigger(page, "set_stiffness", args)
        wh.wait_until(
            page, "(m) => window.trame.state.get('error_message').includes(m)", arg=message or "set_stiffness"
        )
    assert wh.get_state(page, "stiffness_of")["spine_02"] == 0.25
    wh.trigger(page, "set_stiffness", ["spine_02", H.posing.stiffness["spine_02"]])


def test_dragging_a_pole_handle_bends_the_elbow_while_the_mouse_moves(page) -> None:
    wh.show_control(page, "#show-poles").click(force=True)
    wh.wait_until(page, "() => window.trame.state.get('show_poles') === true")
    e, hand = H.index("elbow_l"), H.index("hand_l")
    wh.trigger(page, "type_coordinate", ["hand_l", 0, "0.5"])  # the hand in: the elbow bends (down, by default)
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    wh.settle(page)
    before = np.array(wh.get_state(page, "pose"))
    box = wh.view_box(page)
    x, y = wh.trigger(page, "target_screen_position", ["hand_l", True])
    start = (box["x"] + x, box["y"] + y)
    page.mouse.move(*start)
    page.mouse.down()
    for k in range(1, 16):  # up and toward the camera, slowly
        page.mouse.move(start[0] + 3.0 * k, start[1] - 8.0 * k)
        page.wait_for_timeout(40)
    # before the mouse is released the pose has followed (the pole re-solves at once)
    moved = "([e, y]) => Math.abs(window.trame.state.get('pose')[e][1] - y) > 0.03"
    wh.wait_until(page, moved, arg=[e, float(before[e][1])])
    page.mouse.up()
    wh.wait_until(page, "() => window.trame.state.get('poles').hand_l !== undefined")
    after = np.array(wh.get_state(page, "pose"))
    assert after[e][1] > before[e][1] + 0.03  # the elbow went up, toward the pole
    target = np.array(wh.get_state(page, "targets")["hand_l"])
    assert np.linalg.norm(after[hand] - target) <= 1e-3 + 1e-6  # the hand stays on its target (the tolerance)
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('poles')).length")
    wh.trigger(page, "free_effector", ["hand_l"])


@pytest.mark.parametrize("view", ["perspective", "front"])
def test_a_pole_dragged_outward_pulls_the_elbow_outward(page, view: str) -> None:
    """Issue 32 item 5: the left hand in front of the chest, its elbow's pole dragged about 30 cm outward (to
    the character's left) in the view: the elbow follows outward, never inward in front of the breastbone."""
    if not wh.get_state(page, "show_poles"):
        wh.show_control(page, "#show-poles").click(force=True)
        wh.wait_until(page, "() => window.trame.state.get('show_poles') === true")
    if view == "front":
        page.locator("#btn-view-front").click()
    wh.trigger(page, "reset_pose")
    for axis, value in enumerate((0.3, 1.2, 0.35)):
        wh.trigger(page, "type_coordinate", ["hand_l", axis, str(value)])
    wh.settle(page)
    e = H.index("elbow_l")
    before = np.array(wh.get_state(page, "pose"))[e]
    box = wh.view_box(page)
    x, y = wh.trigger(page, "target_screen_position", ["hand_l", True])
    start = (box["x"] + x, box["y"] + y)
    wh.drag(page, start, (start[0] + 120.0, start[1]), steps=15)  # (screen right: the character's left, outward)
    wh.wait_until(page, "() => window.trame.state.get('poles').hand_l !== undefined")
    wh.settle(page)
    pole = np.array(wh.get_state(page, "poles")["hand_l"])
    after = np.array(wh.get_state(page, "pose"))[e]
    assert pole[0] > before[0] + 0.25  # (the pole went about 30 cm outward)
    assert after[0] > before[0] + 0.03 and after[0] > 0.2  # (the elbow outward, not toward the breastbone)
    wh.trigger(page, "reset_pose")
    page.locator("#btn-camera").click()


def test_the_mirror_buttons_pose_one_side_as_the_mirror_of_the_other(page) -> None:
    wh.trigger(page, "type_coordinate", ["hand_l", 0, "0.45"])
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    wh.show_control(page, "#btn-mirror-left").click()
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r !== undefined")
    pose = np.array(wh.get_state(page, "pose"))
    for name in ("hand", "elbow"):
        left, right = pose[H.index(f"{name}_l")], pose[H.index(f"{name}_r")]
        np.testing.assert_allclose(right, [-left[0], left[1], left[2]], atol=5e-3)  # (the plane x = 0)
    # the free left foot leaves the right one free, mirrored where it hangs (issue 32, item 6)
    assert "toe_r" not in wh.get_state(page, "targets")
    left, right = pose[H.index("toe_l")], pose[H.index("toe_r")]
    np.testing.assert_allclose(right, [-left[0], left[1], left[2]], atol=5e-3)
    assert page.locator("#btn-undo").is_enabled()
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r === undefined")
    wh.trigger(page, "mirror_pose", ["up"])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('source must be')")


def _scene_text(page) -> str:
    """The scene file the "Scene .json" button downloads."""
    with page.expect_download(timeout=30_000) as info:
        wh.show_control(page, "#btn-download-scene").click()
    return Path(info.value.path()).read_text()
