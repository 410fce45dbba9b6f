"""End to end, the drag's locks: an axis held down (X, Y, Z) or chosen in the toolbar keeps a dragged
handle on that axis, the ground toggle keeps its height; the real ``fabrik3d serve`` and Debian's
headless chromium, real mouse drags. And ``constrain`` itself, without a browser."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import web as wh

from fabrik3d.model import presets

pytestmark = pytest.mark.browser

H = presets.get("humanoid")
MM = 1e-3


@pytest.fixture(autouse=True)
def rest(request):
    """Each browser test starts from the rest pose and camera, with no lock."""
    if "page" not in request.fixturenames:
        yield
        return
    page = request.getfixturevalue("page")
    wh.trigger(page, "reset_pose")
    wh.trigger(page, "reset_camera")
    page.evaluate("() => { window.trame.state.set('drag_lock', ''); window.trame.state.set('error_message', ''); }")
    wh.wait_until(page, "() => window.trame.state.get('drag_lock') === '' && !window.trame.state.get('error_message')")
    wh.settle(page)
    yield


def joint(page, name: str) -> np.ndarray:
    return np.array(wh.get_state(page, "pose")[H.index(name)])


def drag_by(page, name: str, dx: float, dy: float) -> None:
    start = wh.handle_point(page, name)
    wh.drag(page, start, (start[0] + dx, start[1] + dy), steps=20)
    wh.settle(page)


def test_the_x_button_drags_a_hand_along_x_only(page) -> None:
    start = joint(page, "hand_l")
    page.locator("#btn-lock-x").click()
    wh.wait_until(page, "() => window.trame.state.get('drag_lock') === 'x'")
    drag_by(page, "hand_l", -60.0, 70.0)  # diagonal on the screen: only X may change
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    target = np.array(wh.get_state(page, "targets")["hand_l"])
    assert abs(target[1] - start[1]) <= MM and abs(target[2] - start[2]) <= MM, (target, start)
    assert start[0] - target[0] > 0.02  # it moved inward along X


def test_holding_y_drags_the_pelvis_straight_down(page) -> None:
    # (without the floor: with it, free feet do not bend and the pose is lifted back onto it)
    page.evaluate("window.trame.state.set('floor_on', false)")
    wh.wait_until(page, "() => window.trame.state.get('floor_on') === false && !window.trame.state.get('balance_on')")
    start = joint(page, "pelvis")
    page.keyboard.down("y")
    try:
        wh.wait_until(page, "() => window.trame.state.get('drag_key') === 'y'")
        drag_by(page, "pelvis", 25.0, 80.0)  # down (and a little sideways): only Y may change
    finally:
        page.keyboard.up("y")
    wh.wait_until(page, "() => window.trame.state.get('drag_key') === ''")
    root = np.array(wh.get_state(page, "root_target"))
    assert abs(root[0] - start[0]) <= MM and abs(root[2] - start[2]) <= MM, (root, start)
    assert start[1] - root[1] > 0.05
    assert np.linalg.norm(joint(page, "pelvis") - root) <= MM  # the pelvis is where it was dragged


def test_holding_z_drags_a_hand_along_z_only(page) -> None:
    start = joint(page, "hand_r")
    page.keyboard.down("z")
    try:
        drag_by(page, "hand_r", 40.0, 40.0)
    finally:
        page.keyboard.up("z")
    target = np.array(wh.get_state(page, "targets")["hand_r"])
    assert abs(target[0] - start[0]) <= MM and abs(target[1] - start[1]) <= MM, (target, start)
    assert abs(target[2] - start[2]) > 0.02


def test_the_ground_toggle_keeps_the_height_of_a_drag(page) -> None:
    start = joint(page, "hand_l")
    page.locator("#btn-lock-ground").click()
    wh.wait_until(page, "() => window.trame.state.get('drag_lock') === 'ground'")
    drag_by(page, "hand_l", -70.0, 40.0)
    target = np.array(wh.get_state(page, "targets")["hand_l"])
    assert abs(target[1] - start[1]) <= MM, (target, start)
    assert np.hypot(target[0] - start[0], target[2] - start[2]) > 0.05
    page.keyboard.press("g")  # G switches it off again
    wh.wait_until(page, "() => window.trame.state.get('drag_lock') === ''")


def test_a_bad_lock_from_the_page_is_no_lock(page) -> None:
    page.evaluate("() => window.trame.state.set('drag_lock', 'diagonal')")
    wh.wait_until(page, "() => window.trame.state.get('drag_lock') === ''")
    page.evaluate("() => window.trame.state.set('drag_key', ['x'])")
    wh.wait_until(page, "() => window.trame.state.get('drag_key') === ''")
    start = joint(page, "hand_l")
    drag_by(page, "hand_l", -40.0, 40.0)  # (no lock: the drag moves it freely, the server still answers)
    assert np.linalg.norm(np.array(wh.get_state(page, "targets")["hand_l"]) - start) > 0.02


# -- without a browser ---------------------------------------------------------------------------


def test_constrain_meets_the_mouse_ray_on_the_axis_and_the_ground() -> None:
    from fabrik3d_web.drags.dragging import constrain

    origin = np.array([0.5, 1.0, 0.0])
    ray = (np.array([0.0, 2.0, 5.0]), np.array([0.3, -0.5, -5.0]))  # from the front, a little above
    along = constrain("x", origin, np.zeros(3), ray)
    assert along[1:] == pytest.approx(origin[1:], abs=1e-12)
    # the nearest point of the X axis through the origin to the ray (sampled)
    d = ray[1] / np.linalg.norm(ray[1])
    ts = np.linspace(-2.0, 2.0, 40001)
    points = origin + ts[:, None] * np.array([1.0, 0.0, 0.0])
    off = points - ray[0]
    dist = np.linalg.norm(off - (off @ d)[:, None] * d, axis=1)
    assert along[0] == pytest.approx(points[np.argmin(dist), 0], abs=1e-3)
    ground = constrain("ground", origin, np.zeros(3), ray)
    s = (1.0 - 2.0) / -0.5
    assert ground == pytest.approx(ray[0] + s * ray[1], abs=1e-12)
    # along the ray (the Z axis seen from the front): the widget's point is projected instead
    straight = (ray[0], np.array([0.02, -0.03, -5.0]))
    grazing = constrain("z", origin, np.array([0.7, 1.3, 0.4]), straight)
    assert grazing == pytest.approx([0.5, 1.0, 0.4])
    assert constrain("", origin, np.array([1.0, 2.0, 3.0]), ray) == pytest.approx([1.0, 2.0, 3.0])


def test_after_typing_a_value_and_enter_a_held_axis_locks_the_drag(page) -> None:
    """Issue 32, item 4: Enter in a field, or a click in the view, gives the keyboard back to the view."""
    field = wh.show_control(page, "#coord-hand_l-y")
    field.fill("1.35")
    field.press("Enter")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    wh.wait_until(page, "() => !document.activeElement || document.activeElement.tagName !== 'INPUT'")
    wh.settle(page)
    start = np.array(wh.get_state(page, "targets")["hand_l"])
    x, y = wh.handle_point(page, "hand_l")
    page.mouse.move(x, y)
    page.keyboard.down("x")
    try:
        wh.wait_until(page, "() => window.trame.state.get('drag_key') === 'x'")
        wh.drag(page, (x, y), (x - 60.0, y + 70.0), steps=20)
        wh.settle(page)
    finally:
        page.keyboard.up("x")
    target = np.array(wh.get_state(page, "targets")["hand_l"])
    assert abs(target[1] - start[1]) <= MM and abs(target[2] - start[2]) <= MM, (target, start)
    assert start[0] - target[0] > 0.02
    # a field with the focus, then a click in the view: G is the view's ground lock, not a letter typed
    field = wh.show_control(page, "#coord-hand_l-z")
    field.click()
    box = wh.view_box(page)
    page.mouse.click(box["x"] + 30.0, box["y"] + box["height"] / 2)
    wh.wait_until(page, "() => !document.activeElement || document.activeElement.tagName !== 'INPUT'")
    page.keyboard.press("g")
    wh.wait_until(page, "() => window.trame.state.get('drag_lock') === 'ground'")
    assert "g" not in field.input_value()
