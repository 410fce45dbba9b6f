"""Every way to change the frame shows it (issue 32 item 8), in the real ``fabrik3d serve`` and Debian's
headless chromium: the arrow keys, a click on the slider, a press on a key marker, and, right after a key
edit on a long range, a click far ahead of the background bake (a preview at once, then the baked pose:
the hand on its interpolated target). Their speed is benchmarks/bench_web.py's ("ways to change the
frame")."""

from __future__ import annotations

import pytest
from conftest import require_executable
from helpers import web as wh

from fabrik3d.model.keys import Animation, Key

pytestmark = pytest.mark.browser

REST_HAND = [0.81, 1.43, -0.01]
REACH = [0.25, 1.25, 0.35]


@pytest.fixture(scope="module")
def page():
    require_executable("chromium", "apt-get install chromium")
    with wh.WebServer() as srv, wh.browser() as b:
        page = wh.open_page(b, srv.url)
        for frame, point in ((0, REST_HAND), (30, REACH)):
            page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
            wh.wait_until(page, f"() => window.trame.state.get('frame_shown') === {frame}")
            for axis, value in enumerate(point):
                wh.trigger(page, "type_coordinate", ["hand_l", axis, str(value)])
            wh.trigger(page, "set_key")
        wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,30]'")
        yield page
        assert srv.alive, srv.output()


def shown(page, frame: int) -> None:
    """Wait until the state is of ``frame``; its hand's target is the keys' interpolated one there."""
    wh.wait_until(page, f"() => window.trame.state.get('frame_shown') === {frame}", 20)
    expected = Animation((Key(0, {"hand_l": REST_HAND}), Key(30, {"hand_l": REACH}))).goals_at(frame)
    assert wh.get_state(page, "targets")["hand_l"] == pytest.approx(expected.targets["hand_l"].position, abs=1e-6)


def test_the_arrow_keys_step_a_frame(page) -> None:
    page.evaluate("() => window.trame.state.set('frame', 10)")
    shown(page, 10)
    page.locator("#view3d").click(position={"x": 10, "y": 10})  # (the keyboard to the view)
    page.keyboard.press("ArrowRight")
    shown(page, 11)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    shown(page, 9)


def test_a_click_on_the_slider_goes_to_that_frame(page) -> None:
    track = page.locator(".timeline-slider .v-slider-track").bounding_box()
    page.mouse.click(track["x"] + 0.25 * track["width"], track["y"] + track["height"] / 2)  # (range 0..60)
    wh.wait_until(page, "() => Math.abs(window.trame.state.get('frame_shown') - 15) <= 1")
    shown(page, wh.get_state(page, "frame_shown"))


def test_a_press_on_a_key_marker_goes_to_its_frame(page) -> None:
    page.locator("#key-30").click()
    shown(page, 30)
    page.locator("#key-0").click()
    shown(page, 0)


def test_a_frame_far_ahead_of_the_bake_shows_a_preview_then_the_baked_pose(page) -> None:
    page.evaluate("() => window.trame.state.set('frame_end', 600)")
    wh.wait_until(page, "() => window.trame.state.get('frame_end') === 600")
    track = page.locator(".timeline-slider .v-slider-track").bounding_box()
    page.mouse.click(track["x"] + 0.97 * track["width"], track["y"] + track["height"] / 2)
    wh.wait_until(page, "() => window.trame.state.get('frame_shown') > 550")
    frame = wh.get_state(page, "frame_shown")
    shown(page, frame)  # (the keys' goals at once; beyond the last key, its own)
    names = wh.get_state(page, "joint_names")
    hand = names.index("hand_l")
    # the baked pose once the background bake reaches the frame: the hand on its target
    wh.wait_until(
        page,
        "([i, t]) => { const p = window.trame.state.get('pose')[i]; "
        "return window.trame.state.get('converged') && p.every((v, k) => Math.abs(v - t[k]) < 1e-3); }",
        60,
        [hand, REACH],
    )
    assert wh.get_state(page, "frame_shown") == frame
    page.evaluate("() => window.trame.state.set('frame_end', 60)")
