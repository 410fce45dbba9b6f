"""End to end, a short panel (issue 51, item 6, and its bar "Look"): the side panel is one tab per task
(Pose, Hands, Body, Animate, Picture, Scene), no tab's content is much taller than the panel at
1400 x 900 (one open group at a time in the Pose tab), every former section's heading is reachable
within two clicks, the starter poses show thumbnails the project renders (valid PNGs), and a first-run
hint for the view's gestures closes for good. Screenshots of every tab and group in tests/artifacts.
The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import base64
import io

import pytest
from conftest import require_executable
from fabrik3d_web.panels.drawer import HINT, TABS
from helpers import web as wh
from PIL import Image

pytestmark = pytest.mark.browser
SHOTS = wh.ROOT / "tests" / "artifacts"
LOOK = {"width": 1400, "height": 900}
# The sections of the one long panel before the tabs.
FORMER = ("Scene", "Body", "Proportions", "Solver", "Targets", "Posing", "Turn a joint", "Hands",
          "Copy and paste", "Pose library", "Take", "Picture")  # fmt: skip
# A tab's content (the hint and the tab bar above it) at most this much taller than the panel.
MOST = 1.1

HEIGHTS_JS = """() => {
  const scroll = document.querySelector('#panel-scroll');
  const drawer = document.querySelector('.v-navigation-drawer__content');
  const hint = document.querySelector('#gesture-hint'), tabs = document.querySelector('#panel-tabs');
  const above = (hint && hint.offsetParent ? hint.offsetHeight : 0) + tabs.offsetHeight;
  return {content: scroll.scrollHeight + above, drawer: drawer.clientHeight, scroll: scroll.scrollHeight,
          shown: scroll.clientHeight};
}"""

# The visible headings of the side panel (a section's, a group's title, a tab's), upper-cased.
HEADINGS_JS = """() => [...document.querySelectorAll(
    '.v-navigation-drawer .text-overline, .v-navigation-drawer .v-expansion-panel-title, .v-navigation-drawer .v-tab')]
  .filter((e) => e.offsetParent !== null).map((e) => e.textContent.trim().toUpperCase())"""


URL: dict[str, str] = {}


@pytest.fixture(scope="module")
def page():
    require_executable("chromium", "apt-get install chromium")
    with wh.WebServer() as srv, wh.browser() as b:
        URL["page"] = srv.url
        yield wh.open_page(b.new_context(viewport=LOOK, accept_downloads=True), srv.url)
        assert srv.alive, srv.output()


def _tab(page, key: str) -> None:
    page.locator(f"#tab-{key}").click()
    wh.wait_until(page, "(k) => document.querySelector('#tab-' + k + '-panel').offsetParent !== null", arg=key)


def _group(page, name: str) -> None:
    """Open the group ``name`` (a click on its title, unless it is open)."""
    if page.locator(f"#group-{name}.v-expansion-panel--active").count():
        return
    page.locator(f"#group-{name} .v-expansion-panel-title").click()
    wh.wait_until(page, "(n) => document.querySelector('#group-' + n).classList.contains('v-expansion-panel--active')",
                  arg=name)  # fmt: skip
    page.wait_for_timeout(400)  # (the group's opening transition)


def _fits(page, shot: str) -> dict:
    page.screenshot(path=SHOTS / f"panel-{shot}.png", clip={"x": 0, "y": 0, "width": 420, "height": LOOK["height"]})
    h = page.evaluate(HEIGHTS_JS)
    assert h["content"] <= MOST * h["drawer"], (shot, h)
    return h


def test_the_tabs_are_the_tasks_and_each_fits_about_a_screen(page) -> None:
    SHOTS.mkdir(exist_ok=True)
    titles = [t.strip() for t in page.locator("#panel-tabs .v-tab").all_inner_texts()]
    assert titles == ["Pose", "Hands", "Body", "Animate", "Picture", "Scene"]
    for key, _, sections in TABS:
        _tab(page, key)
        _fits(page, key)
        for group in (g for g in sections if isinstance(g, dict)):  # (one open at a time)
            for name in list(group)[1:] + list(group)[:1]:
                _group(page, name)
                _fits(page, f"{key}-{name}")
                opened = page.locator(f"#{key}-groups .v-expansion-panel--active").count()
                assert opened == 1, (name, opened)
    _tab(page, "pose")


def test_every_former_section_is_within_two_clicks(page) -> None:
    found: dict[str, int] = {}
    for key, _, sections in TABS:
        _tab(page, key)
        for heading in page.evaluate(HEADINGS_JS):
            found.setdefault(heading, 1)
        for group in (g for g in sections if isinstance(g, dict)):
            for name, (title, _) in group.items():
                active = page.locator(f"#group-{name}.v-expansion-panel--active").count()
                if not active:
                    _group(page, name)
                assert page.locator(f"#group-{name} .v-expansion-panel-text").first.is_visible(), name
                found[title.upper()] = 1 if active else 2  # (the tab, then the group's title)
    missing = [h for h in FORMER if h.upper() not in found]
    assert not missing, (missing, found)
    assert all(found[h.upper()] <= 2 for h in FORMER)
    _tab(page, "pose")
    _group(page, "library")


def test_every_starter_pose_has_a_rendered_thumbnail(page) -> None:
    wh.wait_until(page, "() => window.trame.state.get('library_rows').every((r) => r.saved || r.thumbnail)", 60)
    starters = [r for r in wh.get_state(page, "library_rows") if not r["saved"]]
    assert len(starters) >= 18
    for row in starters:
        head, _, data = row["thumbnail"].partition(",")
        assert head == "data:image/png;base64", row["name"]
        image = Image.open(io.BytesIO(base64.b64decode(data)))
        assert image.format == "PNG" and 96 <= image.width <= 128 and image.height == image.width, row["name"]
        image.load()
        assert image.convert("L").getextrema()[0] < 200, f"{row['name']}: nothing drawn"
    shown = page.locator("#pose-list img.pose-thumbnail")
    wh.wait_until(
        page, "(n) => document.querySelectorAll('#pose-list img.pose-thumbnail').length >= n", arg=len(starters)
    )
    assert shown.first.evaluate("(img) => img.complete && img.naturalWidth") > 0
    page.locator("#pose-list").screenshot(path=SHOTS / "panel-pose-thumbnails.png")


def test_the_gesture_hint_shows_once_and_its_close_is_remembered(page) -> None:
    hint = page.locator("#gesture-hint")
    assert hint.is_visible()
    text = hint.inner_text()
    for bold, _ in HINT:
        assert bold in text
    assert "ring" in text and "Alt" in text
    page.locator("#gesture-hint .v-alert__close button, #gesture-hint button").first.click()
    gone = "() => { const h = document.querySelector('#gesture-hint'); return !h || !h.offsetParent; }"
    wh.wait_until(page, gone)
    assert page.evaluate("() => window.localStorage.getItem('fabrik3d-gesture-hint')") == "closed"
    again = page.context.new_page()  # (the same browser profile: its local storage)
    try:
        again.goto(URL["page"])
        wh.wait_until(again, "() => window.trame && window.trame.state && window.trame.state.get('joint_names')", 60)
        again.wait_for_timeout(500)
        assert again.locator("#panel-tabs").is_visible()
        assert not again.locator("#gesture-hint").is_visible()
    finally:
        again.close()
