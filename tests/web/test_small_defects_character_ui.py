"""End to end, the small defects of issue 51 (item 8) on a character, in the real ``fabrik3d serve --character``
and Debian's headless chromium (the unit tests: tests/web/test_small_defects.py):

2. The hover label of a character's hand names it by role, the bone's name in brackets
   (``hand_l [mixamorig:LeftHandMiddle1]``; it was the bone's name alone).
3. Two Pose downloads of one character get distinct names (both were ``hero-pose.glb``).
Screenshot: ``tests/artifacts/small-defects-hover-role.png``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import require_executable
from helpers import web as wh
from helpers.character_asset import write_character

pytestmark = pytest.mark.browser
SHOTS = wh.ROOT / "tests" / "artifacts"
WHEN = r"\d{4}-\d\d-\d\d-\d{6}"  # (the browser's local date and time: 2025-06-01-143012)


def download(page, button: str, folder: Path) -> Path:
    with page.expect_download(timeout=60_000) as info:
        page.locator(button).dispatch_event("click")  # (the button, in whichever tab of the panel holds it)
    path = folder / info.value.suggested_filename
    info.value.save_as(path)
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    require_executable("chromium", "apt-get install chromium")
    hero = write_character(tmp_path_factory.mktemp("hero"), "hero", "mixamo", armature=True)
    with wh.WebServer(["--character", str(hero)]) as srv, wh.browser() as b:
        yield wh.open_page(b, srv.url)
        assert srv.alive, srv.output()


def test_a_characters_hover_label_gives_the_role_and_two_downloads_two_names(page, tmp_path: Path) -> None:
    wh.settle(page)
    wh.wait_until(page, "() => (window.trame.state.get('handle_screen') || []).length > 0")
    labels = [h[0].split(" (")[0] for h in wh.get_state(page, "handle_screen")]
    assert "hand_l [mixamorig:LeftHandMiddle1]" in labels and "head [mixamorig:Head]" in labels, labels
    assert not any(label.startswith("mixamorig:") for label in labels), labels
    x, y = wh.handle_point(page, "mixamorig:LeftHandMiddle1")
    page.mouse.move(x + 30, y + 30)
    page.mouse.move(x, y, steps=5)
    tip = page.locator("#handle-tip")
    tip.wait_for(state="visible", timeout=10_000)
    assert tip.inner_text().startswith("hand_l [mixamorig:LeftHandMiddle1]")
    page.screenshot(path=SHOTS / "small-defects-hover-role.png")
    first = download(page, "#btn-export-pose", tmp_path)
    time.sleep(1.1)  # (names are to the second)
    second = download(page, "#btn-export-pose", tmp_path)
    assert first.name != second.name  # (both were "hero-pose.glb")
    for path in (first, second):
        assert re.fullmatch(rf"hero-pose-{WHEN}\.glb", path.name), path.name
