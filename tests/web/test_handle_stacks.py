"""Handles on the same pixel (issue 32 item 2), in the real ``fabrik3d serve`` and Debian's headless chromium:
in the Side view the two hands sit on one pixel; a press there grabs the nearer (the left hand); a click
passes the next press to the one it covers (the right hand), whose name the hover label then gives; a
click on that one goes round to the first again; a drag brings every handle back."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import web as wh

pytestmark = pytest.mark.browser


def come_to(page, point: tuple[float, float]) -> None:
    """The mouse comes to ``point`` as a user's does (vtk.js sends the server moves that follow others)."""
    for d in (12, 8, 4, 2, 0):
        page.mouse.move(point[0] + d, point[1] + d)
        time.sleep(0.03)


def click(page, point: tuple[float, float]) -> None:
    come_to(page, point)
    page.mouse.down()
    time.sleep(0.05)
    page.mouse.up()
    wh.settle(page)


def hover_names(page) -> list[str]:
    return [h[0] for h in wh.get_state(page, "handle_screen")]


def dragged(page, point: tuple[float, float]) -> str:
    """Drag from ``point`` 60 pixels up; the hand whose target moved."""
    before = {k: np.array(v) for k, v in wh.get_state(page, "targets").items()}
    come_to(page, point)
    wh.drag(page, point, (point[0], point[1] - 60.0), steps=10)
    wh.settle(page)
    after = {k: np.array(v) for k, v in wh.get_state(page, "targets").items()}
    moved = [k for k in after if k not in before or np.linalg.norm(after[k] - before[k]) > 0.05]
    assert len(moved) == 1, moved
    return moved[0]


def test_a_click_on_a_stack_of_handles_passes_the_next_press_to_the_one_it_covers(page) -> None:
    page.locator("#btn-view-side").click()
    wh.settle(page)
    left, right = wh.handle_point(page, "hand_l"), wh.handle_point(page, "hand_r")
    assert np.hypot(left[0] - right[0], left[1] - right[1]) < 2.0  # (one pixel)
    assert dragged(page, left) == "hand_l"  # (a press grabs the nearer: the left hand, from the left)
    wh.trigger(page, "undo")
    wh.settle(page)
    click(page, left)
    wh.wait_until(page, "() => !window.trame.state.get('handle_screen').some((h) => h[0] === 'hand_l')")
    assert "hand_r" in hover_names(page)  # (the hover names the one the next press grabs)
    assert dragged(page, left) == "hand_r"
    assert "hand_l" in hover_names(page)  # (a drag brings every handle back)
    # two clicks go round the stack: the left hand again
    wh.trigger(page, "undo")
    wh.settle(page)
    click(page, left)
    click(page, left)
    wh.wait_until(page, "() => window.trame.state.get('handle_screen').some((h) => h[0] === 'hand_l')")
    assert dragged(page, left) == "hand_l"
