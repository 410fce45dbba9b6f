"""End to end, a prop's move handle dragged with the mouse (issue 52 item 2): the real ``fabrik3d serve`` and
Debian's headless chromium; add a box in the Scene tab (it is picked), drag its move handle 90 pixels to the right
in the view: the server moved the box (``prop_frame``, ``prop_place``), no figure moved, the image changed, and one
undo puts the box back."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_executable
from helpers import web as wh
from helpers.pixels import view_image

pytestmark = pytest.mark.browser

SHOT = wh.ROOT / "tests" / "artifacts" / "prop-handle-drag.png"


def test_a_box_dragged_by_its_move_handle_moves_on_the_server_and_in_the_image() -> None:
    require_executable("chromium", "apt-get install chromium")
    with wh.served_page() as page:
        wh.show_control(page, "#btn-add-prop").click()
        wh.wait_until(page, "() => window.trame.state.get('stage_props').length === 1")
        name = wh.get_state(page, "stage_props")[0]["name"]
        wh.wait_until(page, "(n) => window.trame.state.get('prop_picked') === n", arg=name)
        wh.wait_until(page, "() => (window.trame.state.get('prop_place') || []).length === 7")
        wh.settle(page)
        before = np.array(wh.trigger(page, "prop_frame", [name])["position"])
        pose = wh.get_state(page, "pose")
        image = view_image(page).astype(int)
        x, y = wh.trigger(page, "prop_handle_screen_position", ["move"])
        box = wh.view_box(page)
        start = (box["x"] + x, box["y"] + y)
        since = wh.now(page)
        wh.drag_to(page, start, (start[0] + 90.0, start[1]))
        wh.settle(page, since)
        assert not wh.get_state(page, "error_message")
        after = np.array(wh.trigger(page, "prop_frame", [name])["position"])
        moved = float(np.linalg.norm(after - before))
        assert 0.05 < moved < 1.0, moved  # (90 pixels at the box: some decimetres)
        np.testing.assert_allclose(wh.get_state(page, "prop_place")[:3], np.round(after, 4), atol=1e-4)
        assert wh.get_state(page, "pose") == pose  # (no figure moved)
        changed = np.abs(view_image(page, SHOT).astype(int) - image).max(axis=2) > 40
        assert changed.sum() > 200, f"the image hardly changed: {changed.sum()} pixels"
        page.locator("#btn-undo").click()
        wh.wait_until(
            page,
            "(p) => Math.abs(window.trame.state.get('prop_place')[0] - p) < 1e-4",
            arg=round(float(before[0]), 4),
        )
        np.testing.assert_allclose(wh.trigger(page, "prop_frame", [name])["position"], before, atol=1e-9)
