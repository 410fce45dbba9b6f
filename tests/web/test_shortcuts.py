"""End to end, the keyboard: Ctrl+Z undoes, Ctrl+Shift+Z and Ctrl+Y redo, F frames the skeleton;
a text field keeps its own keys. The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import math

import pytest
from helpers import web as wh

pytestmark = pytest.mark.browser


def targets(page) -> dict:
    return wh.get_state(page, "targets")


def test_ctrl_z_undoes_and_ctrl_shift_z_and_ctrl_y_redo(page) -> None:
    names, pose = wh.get_state(page, "joint_names"), wh.get_state(page, "pose")
    hand = pose[names.index("hand_l")]  # (free: where the stance hangs it)
    wh.trigger(page, "type_coordinate", ["hand_l", 0, "0.5"])
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    page.locator("#view3d").click(position={"x": 20, "y": 400})  # (the view has the focus, not a field)
    page.keyboard.press("Control+z")
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('targets')).length")
    page.keyboard.press("Control+Shift+z")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    page.keyboard.press("Control+z")
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('targets')).length")
    page.keyboard.press("Control+y")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    assert targets(page)["hand_l"] == pytest.approx([0.5, hand[1], hand[2]])


def test_in_a_text_field_ctrl_z_is_the_fields_own(page) -> None:
    before = targets(page)
    field = wh.show_control(page, "#coord-hand_r-x")
    field.click()
    field.fill("-0.6")
    page.keyboard.press("Control+z")  # (undoes the typing, not a target move)
    page.wait_for_timeout(500)
    assert targets(page) == before


def test_f_frames_the_skeleton_after_the_camera_moved(page) -> None:
    wh.trigger(page, "reset_camera")
    home = wh.handle_point(page, "head")
    box = wh.view_box(page)
    empty = (box["x"] + 40.0, box["y"] + box["height"] - 60.0)  # (no handle there)
    wh.drag(page, empty, (empty[0] + 400.0, empty[1] - 150.0), steps=25)  # orbit
    wh.settle(page)
    moved = wh.handle_point(page, "head")
    assert math.dist(home, moved) > 10.0
    page.keyboard.press("f")
    wh.settle(page)
    assert math.dist(wh.handle_point(page, "head"), home) < 2.0


def test_delete_frees_the_effector_whose_handle_was_grabbed_last(page) -> None:
    wh.trigger(page, "reset_pose")
    wh.settle(page)
    start = wh.handle_point(page, "hand_r")
    wh.drag(page, start, (start[0] + 60.0, start[1] + 60.0), steps=15)
    wh.wait_until(page, "() => window.trame.state.get('selected_effector') === 'hand_r'")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r !== undefined")
    page.keyboard.press("Delete")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r === undefined")
    assert page.locator("#btn-undo").is_enabled()


def test_front_side_and_top_views_look_along_the_axes(page) -> None:
    wh.trigger(page, "reset_pose")
    for name, hangs in wh.get_state(page, "hang_of").items():  # (an arm freed before follows: the stance again)
        if hangs is False:
            wh.trigger(page, "set_hang", [name, True])

    def points(*names: str) -> list[tuple[float, float]]:
        wh.settle(page)
        return [wh.handle_point(page, n) for n in names]

    page.locator("#btn-view-side").click()  # from the left: the two hands, which differ only in X, coincide
    left, right = points("hand_l", "hand_r")
    assert math.dist(left, right) < 2.0
    page.locator("#btn-view-front").click()  # the middle line is vertical on the screen
    head, root = points("head", "pelvis")
    assert abs(head[0] - root[0]) < 2.0 and head[1] < root[1] - 50.0
    page.locator("#btn-view-top").click()  # from above: the head over the pelvis (2 cm in front of it)
    head, root = points("head", "pelvis")
    assert abs(head[0] - root[0]) < 2.0 and math.dist(head, root) < 12.0
    page.keyboard.press("f")  # back to the perspective view: they part again
    head, root = points("head", "pelvis")
    assert math.dist(head, root) > 50.0
    wh.trigger(page, "reset_camera", ["under"])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('view: expected one of')")
