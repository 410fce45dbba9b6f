"""One page's picture does not stall another page (issue 53, items 11 and 13): in the real ``fabrik3d serve``
and Debian's headless chromium, page A asks for a 4096 x 4096 transparent picture (the trigger the "Picture
.png" button calls) and, while it renders, page B types a coordinate, keys a frame and drags a hand: each
of B's actions is answered before A's picture arrives. The picture then arrives whole (an RGBA PNG of that
size) and the server still answers.

Only the order is asserted, never a time: after each of B's actions is answered, A's picture must still be
pending. Before the picture left the event loop (commit "Pictures off the event loop"), the render blocked
the server for seconds and B's actions were answered only after it: at most the first, if it reached the
server before A's request, could come in between. How long each takes is benchmarks/bench_two_pages.py's.
"""

from __future__ import annotations

import base64
import io
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import require_executable
from helpers import web as wh
from PIL import Image

pytestmark = pytest.mark.browser

SIDE = 4096
# Page A: the picture's trigger, called as the download button calls it (``download.download_button``
# with ``picture_panel.SETTINGS_JS``); its answer kept in ``window.__picture`` when it comes.
ASK_PICTURE_JS = """(settings) => {
  window.__picture = {done: false};
  window.trame.trigger('export_picture', [settings]).then(
    (data) => Object.assign(window.__picture, {done: true, data}),
    (error) => Object.assign(window.__picture, {done: true, error: String(error)}));
  return true;
}"""
# The picture's bytes (the trigger's answer: an ArrayBuffer or a typed array) as base64.
PICTURE_BYTES_JS = """() => {
  const d = window.__picture.data;
  if (!d) return null;
  const u8 = d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  let text = '';
  for (let k = 0; k < u8.length; k += 0x8000) text += String.fromCharCode.apply(null, u8.subarray(k, k + 0x8000));
  return btoa(text);
}"""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RGBA = 6  # (a PNG's colour type: truecolour with alpha)


@pytest.fixture
def two_pages() -> Iterator[tuple[Any, Any, wh.WebServer]]:
    """Two pages (each its own browser context) on one fresh server."""
    require_executable("chromium", "apt-get install chromium")
    with wh.WebServer() as srv, wh.browser() as b:
        yield wh.open_page(b, srv.url), wh.open_page(b, srv.url), srv


def picture_pending(page: Any) -> bool:
    """Whether the page's picture (``ASK_PICTURE_JS``) has not been answered yet."""
    return not page.evaluate("() => window.__picture.done")


def b_actions(b: Any) -> list[tuple[str, Callable[[int], None]]]:
    """Page B's quick actions, each returning once its answer shows in the page."""

    def type_coordinate(k: int) -> None:
        value = round(1.2 + 0.01 * (k % 10), 2)
        wh.trigger(b, "type_coordinate", ["hand_r", 1, str(value)], timeout=60)
        wh.wait_until(b, f"() => window.trame.state.get('targets').hand_r?.[1] === {value}", timeout=60)

    def set_key(k: int) -> None:
        frame = 2 * k + 1
        b.evaluate("(f) => window.trame.state.set('frame', f)", frame)
        wh.wait_until(b, f"() => window.trame.state.get('frame_shown') === {frame}", timeout=60)
        wh.trigger(b, "set_key", timeout=60)
        wh.wait_until(b, f"() => (window.trame.state.get('key_frames') || []).includes({frame})", timeout=60)

    def drag_hand(k: int) -> None:
        hand = "() => JSON.stringify(window.trame.state.get('targets').hand_l ?? null)"
        before = b.evaluate(hand)
        x, y = wh.handle_point(b, "hand_l")
        sign = 1 if k % 2 else -1
        wh.drag(b, (x, y), (x + sign * 25, y + 15), steps=8, pause=0.03)
        wh.wait_until(b, f"(t) => ({hand})() !== t", timeout=60, arg=before)

    return [("type_coordinate", type_coordinate), ("set_key", set_key), ("drag", drag_hand)]


def test_another_page_is_answered_while_a_picture_renders(two_pages) -> None:
    a, b, srv = two_pages
    settings = {"width": SIDE, "height": SIDE, "background": "transparent"}
    a.evaluate(ASK_PICTURE_JS, settings)
    answered = []  # (B's actions answered while A's picture was still pending)
    actions = b_actions(b)
    for k, (name, action) in enumerate(actions):
        action(k)
        if not picture_pending(a):
            break
        answered.append(name)
    # every kind of B's action (type, key, drag) came back before A's picture: the server was not blocked
    assert answered == [name for name, _ in actions], answered
    wh.wait_until(a, "() => window.__picture.done", timeout=120)
    assert a.evaluate("() => window.__picture.error || ''") == ""
    data = base64.b64decode(a.evaluate(PICTURE_BYTES_JS))
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert (width, height, depth, colour) == (SIDE, SIDE, 8, RGBA)
    image = Image.open(io.BytesIO(data))
    image.load()  # (the whole file decodes)
    alpha = image.getchannel("A")
    assert alpha.getextrema() == (0, 255)  # (clear air and the opaque mannequin)
    assert wh.get_state(a, "error_message") == ""
    assert srv.alive, srv.output()


def test_the_page_that_asked_for_a_picture_is_answered_while_it_renders(two_pages) -> None:
    """The Picture .png button (``start_picture``, then ``take_picture`` once it is made) returns at once:
    the same page's typed coordinate, key edit and drag are answered while its 4096 x 4096 picture
    renders (a page's calls are answered one after another: with one call for the picture, they waited
    for it), and the download then arrives."""
    a, _, srv = two_pages
    for field, value in (("picture_width", SIDE), ("picture_height", SIDE), ("picture_transparent", True)):
        a.evaluate("([k, v]) => window.trame.state.set(k, v)", [field, value])
    button = wh.show_control(a, "#btn-export-picture")
    with a.expect_download(timeout=120_000) as download:
        button.click()
        wh.wait_until(a, "() => window.trame.state.get('pictures_done') !== undefined")
        answered = []
        actions = b_actions(a)
        for k, (name, action) in enumerate(actions):
            action(k)
            if (wh.get_state(a, "pictures_done") or []) != []:
                break
            answered.append(name)
        assert answered == [name for name, _ in actions], answered
    data = open(download.value.path(), "rb").read()
    assert struct.unpack(">IIBB", data[16:26]) == (SIDE, SIDE, 8, RGBA)
    assert wh.get_state(a, "error_message") == ""
    assert srv.alive, srv.output()


def test_a_server_says_where_it_waits() -> None:
    """``kill -USR1`` makes the running server write every thread's Python stack to its log (what a
    stalled server is asked, ``WebServer.stacks``) and it goes on answering."""
    with wh.WebServer() as srv:
        before = srv.output(20000)
        assert "Current thread" not in before
        dumped = srv.stacks()
        assert "Current thread" in dumped and 'File "' in dumped, dumped[-2000:]
        assert srv.alive, srv.output()
