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
    """The names the hover labels give (a label on a stack says a click passes to the next)."""
    return [h[0].split(" (")[0] for h in wh.get_state(page, "handle_screen")]


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
    wh.wait_until(page, "() => !window.trame.state.get('handle_screen').some((h) => h[0].startsWith('hand_l'))")
    assert "hand_r" in hover_names(page)  # (the hover names the one the next press grabs)
    assert dragged(page, left) == "hand_r"
    assert "hand_r" in hover_names(page)  # (a drag brings every handle back; the one worked on shows)
    # two clicks go round the stack: the left hand again
    wh.trigger(page, "undo")
    wh.settle(page)
    click(page, left)
    click(page, left)
    wh.wait_until(page, "() => window.trame.state.get('handle_screen').some((h) => h[0].startsWith('hand_l'))")
    assert dragged(page, left) == "hand_l"


def test_a_press_on_a_stack_grabs_the_hand_worked_on_last_and_its_label_says_a_click_passes(page) -> None:
    """Issue 51 item 4: after working on the right hand, a press on the stacked hands in the Side view
    grabs the right hand (not the nearer left one), and the hover label names it and says a click
    passes to the next."""
    wh.trigger(page, "reset_pose")
    page.locator("#btn-view-side").click()
    wh.settle(page)
    left = wh.handle_point(page, "hand_l")
    click(page, left)  # (the left hand grabbed: a click passes to the right)
    wh.wait_until(page, "() => !window.trame.state.get('handle_screen').some((h) => h[0].startsWith('hand_l'))")
    assert dragged(page, left) == "hand_r"  # (worked on: the right hand)
    wh.trigger(page, "undo")
    wh.settle(page)
    wh.wait_until(  # (the labels of the still image after the undo: the drag's own showed both hands)
        page,
        "() => { const h = window.trame.state.get('handle_screen');"
        " return h.some((x) => x[0].startsWith('hand_r')) && !h.some((x) => x[0].startsWith('hand_l')); }",
    )
    labels = [h[0] for h in wh.get_state(page, "handle_screen")]
    assert not any(t.startswith("hand_l") for t in labels), labels
    assert any(t.startswith("hand_r") and "a click: the next" in t for t in labels), labels
    rest = np.array(wh.get_state(page, "pose"))
    come_to(page, left)
    wh.drag(page, left, (left[0], left[1] - 60.0), steps=10)  # (the press on the stack grabs the one worked on last)
    wh.settle(page)
    names = wh.get_state(page, "joint_names")
    wh.wait_until(page, "() => (window.trame.state.get('targets').hand_r || [0, 0])[1] > 0.9")
    targets = wh.get_state(page, "targets")
    assert targets["hand_r"][1] - rest[names.index("hand_r")][1] > 0.12, targets
    assert np.allclose(targets["hand_l"], rest[names.index("hand_l")], atol=1e-3), targets
