"""End to end, the panel's labels (issue 32, item 3): no button of the side panel is cut by its edge
("MIRROR RIGHT TO LEFT" was), in any of its tabs and groups (issue 51, item 6). The real
``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import pytest
from fabrik3d_web.panels.drawer import TABS
from helpers import web as wh

pytestmark = pytest.mark.browser

CUT_JS = """() => {
  const drawer = document.querySelector('.v-navigation-drawer').getBoundingClientRect();
  return [...document.querySelectorAll('.v-navigation-drawer .v-btn')]
    .filter((b) => b.offsetParent !== null)
    .map((b) => [b.id || b.textContent.trim(), b.getBoundingClientRect().right, b.scrollWidth - b.clientWidth])
    .filter(([, right, over]) => right > drawer.right - 4 || over > 1);
}"""


def _shown() -> list[str]:
    """A selector per tab, and per group of a tab, that shows it (``show_control``)."""
    out = []
    for key, _, sections in TABS:
        out.append(f"#tab-{key}-panel")
        out += [f"#group-{name}" for group in sections if isinstance(group, dict) for name in group]
    return out


@pytest.mark.parametrize("place", _shown())
def test_every_panel_button_lies_within_the_panel(page, place: str) -> None:
    inside = place if place.endswith("-panel") else f"{place} .v-expansion-panel-text"
    wh.show_control(page, inside)
    cut = page.evaluate(CUT_JS)
    assert not cut, (place, cut)
