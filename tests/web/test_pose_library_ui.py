"""End to end, the pose library (issue 30, items 4 and 5): save the pose shown under a name (with a
thumbnail of the view) in a library file the test gives, reset, apply it: the pose comes back
within 1 mm; apply a starter pose to the legs only; a bad file reaches the banner's line; a library
database a page at a time (issue 53). The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import web as wh

import fabrik3d
from fabrik3d.model import presets

pytestmark = pytest.mark.browser
BODY = presets.get("humanoid")
PNG = b"\x89PNG\r\n\x1a\n" + b"thumbnail"


def pose(page) -> np.ndarray:
    return np.array(wh.get_state(page, "pose"))


def rows(page) -> list[dict]:
    return wh.get_state(page, "library_rows")


def test_save_reset_apply_brings_the_pose_back_and_the_file_is_written_whole(page, tmp_path) -> None:
    rest = pose(page)
    field = wh.show_control(page, "#pose-library-path")
    field.scroll_into_view_if_needed()
    field.fill(str(tmp_path))
    field.press("Enter")
    wh.wait_until(page, "(p) => window.trame.state.get('library_path') === p", arg=str(tmp_path / "poses.json"))
    wh.trigger(page, "turn_joint", ["shoulder_r", [0, 0, 60]])
    wh.trigger(page, "turn_joint", ["elbow_l", [80, 0, 0]])
    wh.show_control(page, "#btn-hand-fist").click()
    wh.wait_until(page, "() => window.trame.state.get('hand_shape') === 'fist'")
    saved = pose(page)
    wh.show_control(page, "#pose-name").fill("fist up")
    wh.show_control(page, "#btn-save-pose").click()
    wh.wait_until(page, "() => window.trame.state.get('library_rows')[0].name === 'fist up'")
    row = rows(page)[0]
    assert row["saved"] and row["thumbnail"].startswith("data:image/png;base64,")
    assert [p.name for p in tmp_path.iterdir()] == ["poses.json"]  # (written whole: no temporary left)
    assert list(json.loads((tmp_path / "poses.json").read_text())["poses"]) == ["fist up"]
    page.locator("#btn-reset").click()
    wh.wait_until(page, "() => !window.trame.state.get('hand_shape')")
    np.testing.assert_allclose(pose(page), rest, atol=1e-9)
    wh.show_control(page, ".pose-row").first.locator(".pose-apply").click()
    wh.wait_until(page, "() => window.trame.state.get('hand_curls').index > 0.9")
    assert np.abs(pose(page) - saved).max() < 1e-3
    assert not wh.get_state(page, "error_message")
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => window.trame.state.get('hand_curls').index < 0.01")
    # the legs of a starter pose only: the arms and hands stay
    wh.show_control(page, "#pose-part-arms").uncheck()
    wh.show_control(page, "#pose-part-hands").uncheck()
    wh.show_control(page, "#pose-part-spine").uncheck()
    starter = [r["name"] for r in rows(page)].index("kneel")
    wh.show_control(page, ".pose-row").nth(starter).locator(".pose-apply").click()
    ankle = BODY.index("ankle_l")
    wh.wait_until(
        page, "([i, y]) => Math.abs(window.trame.state.get('pose')[i][1] - y) > 0.05", arg=[ankle, rest[ankle][1]]
    )
    got = pose(page)
    arm = [BODY.index(n) for n in ("shoulder_l", "elbow_l", "hand_l")]
    hip = BODY.index("pelvis")
    np.testing.assert_allclose(got[arm] - got[hip], rest[arm] - rest[hip], atol=1e-6)
    # delete the saved pose
    wh.show_control(page, ".pose-row").first.locator(".pose-delete").click()
    wh.wait_until(page, "() => !window.trame.state.get('library_rows')[0].saved")
    assert json.loads((tmp_path / "poses.json").read_text())["poses"] == {}


def test_a_bad_library_file_is_one_line_in_the_panel_and_saving_over_it_is_refused(page, tmp_path) -> None:
    (tmp_path / "poses.json").write_text("{not json")
    wh.trigger(page, "set_pose_library", [str(tmp_path / "poses.json")])
    wh.wait_until(page, "() => window.trame.state.get('library_problem').includes('poses.json')")
    assert "\n" not in wh.get_state(page, "library_problem")
    wh.trigger(page, "save_library_pose", ["x"])
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('poses.json')")
    assert "\n" not in wh.get_state(page, "error_message")
    assert (tmp_path / "poses.json").read_text() == "{not json"


def test_a_large_library_database_shows_a_page_at_a_time_with_the_count(page, tmp_path) -> None:
    """Issue 53: 120 saved poses in a database: the page shows 50 and the count, next and previous
    page through them, an apply on the second page reads that pose; a refused path leaves the field
    showing the server's."""
    path = tmp_path / "many.db"
    wave = fabrik3d.starter_poses()["wave"]
    for i in range(120):
        fabrik3d.save_pose(path, f"p{i:03d}", wave, thumbnail=PNG)
    field = wh.show_control(page, "#pose-library-path")
    field.scroll_into_view_if_needed()
    field.fill(str(path))
    field.press("Enter")
    wh.wait_until(page, "() => (window.trame.state.get('library_page') || {}).total === 120")
    saved = lambda: [r["name"] for r in rows(page) if r["saved"]]  # noqa: E731
    assert saved() == [f"p{i:03d}" for i in range(50)]
    assert wh.show_control(page, "#pose-count").inner_text() == "Saved poses 1-50 of 120"
    assert wh.show_control(page, "#btn-poses-previous").is_disabled()
    wh.show_control(page, "#btn-poses-next").click()
    wh.wait_until(page, "() => window.trame.state.get('library_page').offset === 50")
    assert saved() == [f"p{i:03d}" for i in range(50, 100)]
    wh.show_control(page, "#btn-poses-next").click()
    wh.wait_until(page, "() => window.trame.state.get('library_page').offset === 100")
    assert saved() == [f"p{i:03d}" for i in range(100, 120)]
    assert wh.show_control(page, "#pose-count").inner_text() == "Saved poses 101-120 of 120"
    assert wh.show_control(page, "#btn-poses-next").is_disabled()
    wh.show_control(page, "#btn-poses-previous").click()
    wh.wait_until(page, "() => window.trame.state.get('library_page').offset === 50")
    rest = pose(page)
    wh.show_control(page, ".pose-row").nth(3).locator(".pose-apply").click()  # p053
    wh.wait_until(page, "(p) => JSON.stringify(window.trame.state.get('pose')) !== p", arg=json.dumps(rest.tolist()))
    assert not wh.get_state(page, "error_message")
    # a path the server refuses: the field shows the path the server still uses
    field.fill("x" * 1001)
    field.press("Enter")
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('pose library')")
    wh.wait_until(page, "(p) => document.querySelector('#pose-library-path').value === p", arg=str(path))
    assert wh.get_state(page, "library_path") == str(path)
