"""Two pages on one server (issue 33 item 8): a frame change on either shows on both, and a tab closed
in the middle of a drag or a scrub leaves the other page drawing. The real ``fabrik3d serve`` and
Debian's headless chromium, two pages (each its own browser context)."""

from __future__ import annotations

import pytest
from helpers import web as wh

pytestmark = pytest.mark.browser


@pytest.fixture
def two_pages():
    with wh.WebServer() as srv, wh.browser() as b:
        yield wh.open_page(b, srv.url), wh.open_page(b, srv.url)
        assert srv.alive, srv.output()


def shows_frame(page, frame: int, images: int) -> None:
    """The page's ``frame`` is ``frame`` and an image newer than ``images`` (its count) arrived."""
    wh.wait_until(page, f"() => window.trame.state.get('frame') === {frame}", timeout=20)
    wh.wait_until(page, f"() => window.__fabrik.frames.length > {images}", timeout=20)


def test_a_frame_changed_on_either_page_shows_on_both(two_pages) -> None:
    a, b = two_pages
    wh.trigger(a, "set_key")
    wh.wait_until(b, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0]'", timeout=20)
    # the state (the slider, a click on the ruler, a typed frame) on A
    images = wh.frame_count(b)
    a.evaluate("() => window.trame.state.set('frame', 7)")
    shows_frame(b, 7, images)
    # the arrow keys on A
    images = wh.frame_count(b)
    a.locator("#view3d").click(position={"x": 20, "y": 300})
    a.keyboard.press("ArrowRight")
    shows_frame(b, 8, images)
    # a held slider on A
    images = wh.frame_count(b)
    wh.trigger(a, "begin_scrub")
    for frame in (10, 12, 14):
        a.evaluate("(f) => window.trame.state.set('frame', f)", frame)
        wh.wait_until(a, f"() => window.trame.state.get('frame') === {frame}")
    wh.trigger(a, "end_scrub")
    shows_frame(b, 14, images)
    # and the other way: B's change on A
    images = wh.frame_count(a)
    b.evaluate("() => window.trame.state.set('frame', 3)")
    shows_frame(a, 3, images)
    # K on B keys the frame both pages show
    b.locator("#view3d").click(position={"x": 20, "y": 300})
    b.keyboard.press("k")
    wh.wait_until(a, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,3]'", timeout=20)


def _still_draws(page) -> None:
    """A change on ``page`` brings it a new image (the stream is not held by a page that left)."""
    images = wh.frame_count(page)
    wh.trigger(page, "type_coordinate", ["hand_r", 1, "1.3"])
    wh.wait_until(page, f"() => window.__fabrik.frames.length > {images}", timeout=20)


def test_a_tab_closed_mid_drag_leaves_the_other_drawing(two_pages) -> None:
    b, a = two_pages
    before = wh.get_state(b, "targets")
    x, y = wh.handle_point(a, "hand_l")
    a.mouse.move(x, y)
    a.mouse.down()
    for k in range(1, 9):
        a.mouse.move(x - 5 * k, y + 3 * k)
        a.wait_for_timeout(40)
    moved = "(t) => JSON.stringify(window.trame.state.get('targets')) !== JSON.stringify(t)"
    wh.wait_until(b, moved, timeout=20, arg=before)
    a.close()  # (no mouse up, no beforeunload)
    _still_draws(b)
    # the drag's undo step ended: undo takes back the typed coordinate, then the drag
    wh.trigger(b, "undo")
    wh.wait_until(b, "() => window.trame.state.get('targets').hand_r?.[1] !== 1.3", timeout=20)
    wh.trigger(b, "undo")
    back = "(t) => JSON.stringify(window.trame.state.get('targets')) === JSON.stringify(t)"
    wh.wait_until(b, back, timeout=20, arg=before)


def test_a_tab_closed_mid_scrub_leaves_the_other_drawing(two_pages) -> None:
    b, a = two_pages
    wh.trigger(a, "set_key")
    wh.trigger(a, "begin_scrub")
    a.evaluate("() => window.trame.state.set('frame', 9)")
    wh.wait_until(b, "() => window.trame.state.get('frame') === 9", timeout=20)
    a.close()  # (no end_scrub, no beforeunload)
    _still_draws(b)
