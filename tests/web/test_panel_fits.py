"""End to end, the panel's labels (issue 32, item 3): no button of the side panel is cut by its edge
("MIRROR RIGHT TO LEFT" was). The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_every_panel_button_lies_within_the_panel(page) -> None:
    cut = page.evaluate(
        """() => {
          const drawer = document.querySelector('.v-navigation-drawer').getBoundingClientRect();
          return [...document.querySelectorAll('.v-navigation-drawer .v-btn')]
            .filter((b) => b.offsetParent !== null)
            .map((b) => [b.id || b.textContent.trim(), b.getBoundingClientRect().right, b.scrollWidth - b.clientWidth])
            .filter(([, right, over]) => right > drawer.right - 4 || over > 1);
        }"""
    )
    assert not cut, cut
