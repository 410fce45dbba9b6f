"""End to end, framing (issue 32, item 1): F, Front, Side and Top frame the current pose with its
targets and handles (the rest pose no longer): both hands raised to 2.05 m stay inside the view.
The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import pytest
from helpers import web as wh

pytestmark = pytest.mark.browser


def inside(page, name: str, margin: float = 4.0) -> bool:
    box = wh.view_box(page)
    x, y = wh.trigger(page, "target_screen_position", [name])
    return margin <= x <= box["width"] - margin and margin <= y <= box["height"] - margin


def test_every_view_frames_hands_raised_high(page) -> None:
    for hand in ("hand_l", "hand_r"):  # (typed: y first, then x and z)
        for axis, value in ((1, "2.05"), (0, "0.3" if hand == "hand_l" else "-0.3"), (2, "0.1")):
            wh.trigger(page, "type_coordinate", [hand, axis, value])
    wh.wait_until(page, "() => (window.trame.state.get('targets').hand_r || [0])[2] === 0.1")
    for view, press in (("perspective", "f"), ("front", None), ("side", None), ("top", None)):
        if press:
            page.locator("#view3d").click(position={"x": 10, "y": 10})
            page.keyboard.press(press)
        else:
            page.locator(f"#btn-view-{view}").click()
        wh.settle(page)
        for name in ("hand_l", "hand_r", "toe_l", "toe_r", "head"):
            assert inside(page, name), (view, name)
