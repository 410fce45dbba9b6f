"""End to end, hands (issue 30, items 3 and 5): the Hands panel's fist curls the left hand's fingers
on screen, a finger's joint is picked by Alt + click when zoomed on the hand and turned by Alt + drag,
and the pose copied at frame 0 pastes mirrored at frame 20 (Ctrl+C, Ctrl+Shift+V, K keys both):
scrubbing shows each frame as pasted. The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from helpers import web as wh
from PIL import Image

from fabrik3d.model import presets
from fabrik3d.solver.hands import palm_center

pytestmark = pytest.mark.browser
BODY = presets.get("humanoid")
TIPS = ("index", "middle", "ring", "pinky")


def pose(page) -> np.ndarray:
    return np.array(wh.get_state(page, "pose"))


def fist_gap(p: np.ndarray, side: str) -> float:
    """The largest distance from a fingertip (not the thumb's) to the palm's centre, metres."""
    palm = palm_center(BODY, p, side)
    return max(float(np.linalg.norm(p[BODY.index(f"{f}_end_{side}")] - palm)) for f in TIPS)


def view_pixels(page) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(page.locator("#view3d").screenshot())).convert("RGB"), dtype=int)


def test_a_fist_for_the_left_hand_curls_its_fingers_on_screen(page) -> None:
    rest = pose(page)
    assert fist_gap(rest, "l") > 0.08  # the open hand
    assert wh.get_state(page, "hand_sides") == ["l", "r"]
    wh.trigger(page, "frame_hand", ["front"])
    wh.settle(page)
    x, y = wh.trigger(page, "joint_screen_position", ["middle_02_l"])
    before = view_pixels(page)
    since = wh.now(page)
    button = wh.show_control(page, "#btn-hand-fist")
    button.scroll_into_view_if_needed()
    button.click()
    wh.wait_until(page, "() => window.trame.state.get('hand_shape') === 'fist'")
    got = pose(page)
    assert fist_gap(got, "l") < 0.03
    assert all(v == 1.0 for v in wh.get_state(page, "hand_curls").values())
    np.testing.assert_array_equal(got[BODY.index("hand_l")], rest[BODY.index("hand_l")])  # the hand stays
    wh.settle(page, since)
    after = view_pixels(page)
    near = (slice(max(0, int(y) - 80), int(y) + 80), slice(max(0, int(x) - 80), int(x) + 80))
    changed = np.abs(after[near] - before[near]).sum(axis=2) > 60
    assert changed.mean() > 0.05, changed.mean()  # the fingers curled on screen, near the hand
    page.locator("#view3d").screenshot(path=str(wh.ROOT / "tests" / "artifacts" / "hands-fist-front.png"))


def test_alt_click_picks_a_finger_joint_when_zoomed_and_alt_drag_turns_it_within_its_limits(page) -> None:
    wh.trigger(page, "reset_pose")
    wh.wait_until(page, "() => Object.values(window.trame.state.get('hand_curls')).every((c) => c === 0)")
    wh.trigger(page, "frame_hand", ["front"])
    wh.settle(page)
    start = pose(page)
    box = wh.view_box(page)
    jx, jy = wh.trigger(page, "joint_screen_position", ["index_02_l"])
    x, y = box["x"] + jx, box["y"] + jy
    page.keyboard.down("Alt")
    try:
        page.mouse.move(x, y)
        page.mouse.down()
        for k in range(0, 25):  # off the joint, then around it, clockwise on the screen: the finger bends down
            a = math.radians(-6.0 * k)
            page.mouse.move(x + 60 * math.cos(a), y - 60 * math.sin(a))
            page.wait_for_timeout(30)
        page.mouse.up()
    finally:
        page.keyboard.up("Alt")
    wh.wait_until(page, "() => window.trame.state.get('selected_joint') === 'index_02_l'")
    wh.settle(page)
    got = pose(page)
    tip, knuckle = BODY.index("index_end_l"), BODY.index("index_02_l")
    assert np.linalg.norm(got[tip] - start[tip]) > 0.01  # the finger bent
    np.testing.assert_allclose(got[knuckle], start[knuckle], atol=1e-9)  # the joint itself stayed
    others = [j for j, n in enumerate(BODY.names) if not n.startswith("index_") or n.endswith("_r")]
    np.testing.assert_allclose(got[others], start[others], atol=1e-9)
    # within the middle knuckle's hinge (-5..110 degrees): the angle between the finger's bones
    a, b, c = (got[BODY.index(f"index_{k}_l")] for k in ("01", "02", "03"))
    bend = math.degrees(math.acos(np.dot(b - a, c - b) / np.linalg.norm(b - a) / np.linalg.norm(c - b)))
    assert 20.0 < bend <= 110.5
    wh.trigger(page, "undo")
    wh.wait_until(
        page, "([i, y]) => Math.abs(window.trame.state.get('pose')[i][1] - y) < 1e-9", arg=[tip, start[tip][1]]
    )


def test_copy_at_frame_0_and_paste_mirrored_at_frame_20_each_frame_shows_what_was_pasted(page) -> None:
    wh.trigger(page, "reset_pose")
    wh.wait_until(page, "() => Object.values(window.trame.state.get('hand_curls')).every((c) => c === 0)")
    wh.trigger(page, "reset_camera", ["front"])
    wh.show_control(page, "#btn-hand-fist").click()
    wh.wait_until(page, "() => window.trame.state.get('hand_shape') === 'fist'")
    hanging = pose(page)[BODY.index("hand_l")]
    wh.trigger(page, "turn_joint", ["shoulder_l", [0, 0, -50]])
    wh.wait_until(  # (the arm turned: its hand 10 cm or more from where it hung)
        page,
        "([i, p]) => Math.hypot(...window.trame.state.get('pose')[i].map((v, k) => v - p[k])) > 0.1",
        arg=[BODY.index("hand_l"), hanging.tolist()],
    )
    frame0 = pose(page)
    assert fist_gap(frame0, "l") < 0.03 and fist_gap(frame0, "r") > 0.08
    wh.show_control(page, "#btn-hand-fist").focus()
    page.keyboard.press("Control+c")
    wh.wait_until(page, "() => window.trame.state.get('clipboard_what') === 'the whole pose'")
    page.keyboard.press("k")
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0]'")
    go_to(page, 20)
    page.keyboard.press("Control+Shift+V")
    wh.wait_until(page, "() => window.trame.state.get('can_undo') && window.trame.state.get('pose')")
    wh.wait_until(
        page,
        "([i, y]) => Math.abs(window.trame.state.get('pose')[i][1] - y) < 1e-3",
        arg=[BODY.index("hand_r"), frame0[BODY.index("hand_l")][1]],
    )
    page.keyboard.press("k")
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,20]'")
    frame20 = pose(page)
    mirror = [
        BODY.index(n[:-1] + ("r" if n.endswith("l") else "l")) if n[-2:] in ("_l", "_r") else j
        for j, n in enumerate(BODY.names)
    ]
    np.testing.assert_allclose(frame20, frame0[mirror] * [-1, 1, 1], atol=2e-3)
    for _ in range(2):  # scrub back and forth
        go_to(page, 0, frame0)
        np.testing.assert_allclose(pose(page), frame0, atol=1e-5)
        go_to(page, 20, frame20)
        np.testing.assert_allclose(pose(page), frame20, atol=1e-5)
    assert fist_gap(frame20, "r") < 0.03 and fist_gap(frame20, "l") > 0.08


def go_to(page, frame: int, expected: np.ndarray | None = None) -> None:
    """Scrub: the page sets the timeline's frame, as the slider does; wait until the right hand's
    fingertip is where ``expected`` has it."""
    page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
    tip = BODY.index("index_end_r")
    if expected is None:
        wh.wait_until(
            page, f"() => window.trame.state.get('frame_shown') === {frame} && !window.trame.state.get('frame_preview')"
        )
        return
    wh.wait_until(
        page,
        "([i, p]) => window.trame.state.get('pose')[i].every((v, k) => Math.abs(v - p[k]) < 1e-4)",
        arg=[tip, expected[tip].tolist()],
    )
    assert wh.get_state(page, "frame") == frame and not wh.get_state(page, "error_message")


def test_a_curl_slider_drag_streams_small_images_and_is_one_undo_step(page) -> None:
    """A curl slider held and moved: each move's image sent at once (as a drag's), the panel and one
    undo step when it is let go; the mirror button shows its hand at once too."""
    page.evaluate("() => window.trame.state.set('hand_side', 'r')")
    wh.wait_until(page, "() => window.trame.state.get('hand_side') === 'r'")
    wh.trigger(page, "choose_hand_shape", ["open"])
    wh.wait_until(page, "() => window.trame.state.get('hand_shape') === 'open'")
    wh.settle(page)
    before = pose(page)
    frames = wh.frame_count(page)
    wh.trigger(page, "begin_hand")
    for value in np.linspace(0.1, 1.0, 6):
        wh.trigger(page, "curl_finger", ["index", float(value), True])
    wh.wait_until(page, f"() => window.__fabrik.frames.length >= {frames + 3}")  # (images while held)
    wh.trigger(page, "end_hand")
    wh.wait_until(page, "() => (window.trame.state.get('hand_curls') || {}).index > 0.95")
    curled = pose(page)
    j = BODY.index("index_end_r")
    assert np.linalg.norm(curled[j] - before[j]) > 0.03
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => (window.trame.state.get('hand_curls') || {}).index < 0.05")
    np.testing.assert_allclose(pose(page)[j], before[j], atol=1e-9)
