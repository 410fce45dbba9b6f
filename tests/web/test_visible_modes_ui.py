"""End to end, visible modes (issue 51, item 5, and the bar "Copy"): a chip beside Copy names what it
takes (the limb whose handle was grabbed last, or the whole pose); Esc, a click on empty space, Reset and
a library Apply clear it, after which Copy takes the whole pose; an Apply's parts and amount go back to
all, 1.0, and while they are not the panel says what the next Apply takes. The real ``fabrik3d serve``
and Debian's headless chromium."""

from __future__ import annotations

import pytest
from helpers import web as wh

from fabrik3d.model.pose_library import PARTS

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def rest(page):
    wh.trigger(page, "reset_pose")
    page.evaluate("() => window.trame.state.set('error_message', '')")
    wh.wait_until(page, "() => window.trame.state.get('copy_scope') === 'the whole pose'")
    yield


def click(page, point: tuple[float, float]) -> None:
    page.mouse.move(*point)
    page.mouse.down()
    page.mouse.up()
    wh.behind(page)


def chip(page) -> str:
    return wh.show_control(page, "#copy-scope").inner_text().strip()


def grab(page, name: str, scope: str) -> None:
    """Click the handle of ``name``: the chip then names ``scope``."""
    click(page, wh.handle_point(page, name))
    wh.wait_until(page, "(s) => window.trame.state.get('copy_scope') === s", arg=scope)


def test_the_chip_names_the_limb_and_after_esc_copy_takes_the_whole_pose(page) -> None:
    assert chip(page) == "Copy: whole pose"
    grab(page, "hand_l", "the left arm")
    assert chip(page) == "Copy: left arm"
    page.locator("#side-panel").screenshot(path=wh.ROOT / "tests" / "artifacts" / "panel-copy-chip.png")
    wh.show_control(page, "#btn-copy-pose").click()
    wh.wait_until(page, "() => window.trame.state.get('clipboard_what') === 'the left arm'")
    page.locator("#view3d").hover()
    page.keyboard.press("Escape")
    wh.wait_until(page, "() => window.trame.state.get('copy_scope') === 'the whole pose'")
    assert chip(page) == "Copy: whole pose"
    assert wh.get_state(page, "selected_effector") == ""
    wh.show_control(page, "#btn-copy-pose").click()
    wh.wait_until(page, "() => window.trame.state.get('clipboard_what') === 'the whole pose'")


def test_a_click_on_empty_space_and_reset_clear_the_chip(page) -> None:
    grab(page, "toe_r", "the right leg")
    box = wh.view_box(page)
    click(page, (box["x"] + 40.0, box["y"] + 40.0))  # (the view's corner: nothing there)
    wh.wait_until(page, "() => window.trame.state.get('copy_scope') === 'the whole pose'")
    grab(page, "hand_r", "the right arm")
    assert chip(page) == "Copy: right arm"
    page.locator("#btn-reset").click()
    wh.wait_until(page, "() => window.trame.state.get('copy_scope') === 'the whole pose'")
    assert chip(page) == "Copy: whole pose"


def test_an_apply_clears_the_chip_and_sets_parts_and_amount_back(page) -> None:
    grab(page, "hand_l", "the left arm")
    wh.show_control(page, "#pose-part-legs").uncheck()
    page.evaluate("() => window.trame.state.set('pose_amount', 0.5)")
    note = wh.show_control(page, "#pose-apply-scope")
    wh.wait_until(page, "() => document.querySelector('#pose-apply-scope').textContent.includes('0.50')")
    assert note.inner_text().strip() == "Apply takes arms, spine, hands at 0.50; after it, all at 1.00 again"
    starter = [r["name"] for r in wh.get_state(page, "library_rows")].index("T")
    wh.show_control(page, ".pose-row").nth(starter).locator(".pose-apply").click()
    wh.wait_until(page, "() => window.trame.state.get('copy_scope') === 'the whole pose'")
    wh.wait_until(page, "() => window.trame.state.get('pose_amount') === 1")
    assert sorted(wh.get_state(page, "pose_parts")) == sorted(PARTS)
    assert wh.show_control(page, "#pose-part-legs").is_checked()
    assert note.inner_text().strip() == "Apply takes all parts at 1.00"
    assert not wh.get_state(page, "error_message")
    wh.show_control(page, "#btn-copy-pose").click()
    wh.wait_until(page, "() => window.trame.state.get('clipboard_what') === 'the whole pose'")
