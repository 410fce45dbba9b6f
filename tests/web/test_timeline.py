"""End to end, the timeline (issue 17): keys set with the button and K, a key dragged along the ruler,
scrubbing, play, loop off, and the exported animation checked by the Khronos validator and three.js.
The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_node_modules
from helpers import web as wh

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.io.take import parse_take
from fabrik3d.model import presets

pytestmark = pytest.mark.browser

_BODY = presets.get("humanoid")
# The free left hand where it hangs: the app opens on the relaxed stance (not the rest pose, the T).
HANG_HAND = fabrik3d.solve(_BODY, {}).positions[_BODY.index("hand_l")].tolist()
REACH = [0.25, 1.25, 0.35]


def state(page, key: str):
    return wh.get_state(page, key)


def go_to(page, frame: int) -> None:
    """Scrub: the page sets the timeline's frame, as the slider does."""
    page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
    wh.trigger(page, "target_screen_position", ["hand_l"])  # (a round trip after the change: it is handled)
    done = (
        f"() => window.trame.state.get('frame_shown') === {frame} && !window.trame.state.get('frame_preview') "
        "&& !window.trame.state.get('error_message')"
    )
    wh.wait_until(page, done)


def type_field(page, element_id: str, value: str) -> None:
    field = page.locator(f"#{element_id}")
    field.fill(value)
    field.press("Enter")
    field.blur()


def test_keys_scrub_and_the_hand_between_them(page) -> None:
    type_field(page, "timeline-frame-end", "30")
    wh.wait_until(page, "() => window.trame.state.get('frame_end') === 30")
    # frame 0: the left hand where it hangs (pinned there: its own x typed), keyed with the button
    wh.trigger(page, "type_coordinate", ["hand_l", 0, repr(HANG_HAND[0])])
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    assert state(page, "targets")["hand_l"] == pytest.approx(HANG_HAND, abs=1e-6)
    page.locator("#btn-key").click()
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0]'")
    assert state(page, "key_here") is True
    # frame 30: the hand dragged with the mouse toward the chest, then typed exactly; keyed with K
    go_to(page, 30)
    start = wh.handle_point(page, "hand_l")
    wh.drag(page, start, (start[0] - 60.0, start[1] + 40.0), steps=12)
    wh.settle(page)
    for axis, value in enumerate(REACH):
        wh.trigger(page, "type_coordinate", ["hand_l", axis, str(value)])
    page.locator("#view3d").click(position={"x": 20, "y": 300})  # (the view has the focus, not a field)
    page.keyboard.press("k")
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,30]'")
    # scrub to 15: the hand's target is the interpolated one, and the solved hand is on it
    go_to(page, 15)
    anim = Animation((Key(0, {"hand_l": HANG_HAND}), Key(30, {"hand_l": REACH})))
    expected = anim.goals_at(15).targets["hand_l"].position
    assert state(page, "targets")["hand_l"] == pytest.approx(expected, abs=1e-6)
    names = state(page, "joint_names")
    hand = np.array(state(page, "pose")[names.index("hand_l")])
    assert np.linalg.norm(hand - expected) <= 1e-3 + 1e-6
    # strictly between the keys (up from where it hangs, and forward)
    assert HANG_HAND[1] + 0.1 < expected[1] < REACH[1] - 0.1 and HANG_HAND[2] + 0.05 < expected[2] < REACH[2] - 0.05
    assert state(page, "key_here") is False


def test_a_held_slider_shows_each_frame_and_the_panel_catches_up_when_let_go(page) -> None:
    go_to(page, 0)
    slider = page.locator(".timeline-slider .v-slider-track").bounding_box()
    y = slider["y"] + slider["height"] / 2
    x0, x1 = slider["x"] + 2, slider["x"] + slider["width"] * 0.5
    page.mouse.move(x0, y)
    page.mouse.down()
    try:
        images = page.evaluate("window.__fabrik.frames.length")
        for k in range(1, 11):  # (half-way along: frame 15 of 0..30)
            page.mouse.move(x0 + (x1 - x0) * k / 10, y)
            page.wait_for_timeout(40)
        wh.wait_until(page, "() => window.trame.state.get('frame') >= 12")
        # each frame's image is sent while the slider is held; the panel's readouts wait
        wh.wait_until(page, f"() => window.__fabrik.frames.length >= {images + 3}")
        assert state(page, "targets")["hand_l"] == pytest.approx(HANG_HAND, abs=1e-6)
    finally:
        page.mouse.up()
    frame = state(page, "frame")
    assert 12 <= frame <= 18
    anim = Animation((Key(0, {"hand_l": HANG_HAND}), Key(30, {"hand_l": REACH})))
    expected = anim.goals_at(frame).targets["hand_l"].position
    wh.wait_until(page, f"() => Math.abs(window.trame.state.get('targets').hand_l?.[0] - {expected[0]}) < 1e-6")
    names = state(page, "joint_names")
    assert np.linalg.norm(np.array(state(page, "pose")[names.index("hand_l")]) - expected) <= 1e-3 + 1e-6


def test_a_held_slider_sends_one_image_per_frame(page) -> None:
    """Each frame shown while the slider is held is rendered and sent once (``push_now``): no
    stream renders it a second time."""
    go_to(page, 0)
    wh.trigger(page, "begin_scrub")
    try:
        wh.settle(page)
        images = wh.frame_count(page)
        for k, frame in enumerate((4, 9, 14, 19, 24), start=1):
            page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
            wh.wait_until(page, f"() => window.__fabrik.frames.length >= {images + k}")
        page.wait_for_timeout(500)
        assert wh.frame_count(page) == images + 5
    finally:
        wh.trigger(page, "end_scrub")
    wh.wait_until(page, f"() => window.__fabrik.frames.length >= {images + 6}")  # (the still image)


def test_a_key_dragged_along_the_ruler_moves_and_undo_brings_it_back(page) -> None:
    go_to(page, 15)
    wh.trigger(page, "set_key")
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,15,30]'")
    marker = page.locator("#key-15").bounding_box()
    ruler = page.locator("#timeline-ruler").bounding_box()
    x, y = marker["x"] + marker["width"] / 2, marker["y"] + marker["height"] / 2
    to = ruler["x"] + ruler["width"] * 20 / 30
    wh.drag(page, (x, y), (to, y), steps=10, pause=0.02)
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,20,30]'")
    assert state(page, "frame") == 20
    page.keyboard.press("Control+z")
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,15,30]'")
    go_to(page, 15)
    page.locator("#btn-delete-key").click()
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,30]'")


def test_play_advances_the_frame_and_stops_at_the_end_without_loop(page) -> None:
    page.locator("#btn-timeline-loop").click()  # loop off
    wh.wait_until(page, "() => window.trame.state.get('loop') === false")
    go_to(page, 0)
    page.locator("#btn-timeline-play").click()
    wh.wait_until(page, "() => window.trame.state.get('timeline_playing') === true")
    wh.wait_until(page, "() => window.trame.state.get('frame') > 0")
    wh.wait_until(page, "() => window.trame.state.get('timeline_playing') === false", timeout=30)
    assert state(page, "frame") == 30
    # Space plays and pauses
    go_to(page, 0)
    page.locator("#view3d").click(position={"x": 20, "y": 300})
    page.keyboard.press(" ")
    wh.wait_until(page, "() => window.trame.state.get('timeline_playing') === true")
    page.keyboard.press(" ")
    wh.wait_until(page, "() => window.trame.state.get('timeline_playing') === false")
    assert state(page, "frame") < 30
    # the arrows step a frame
    go_to(page, 10)
    page.keyboard.press("ArrowRight")
    wh.wait_until(page, "() => window.trame.state.get('frame') === 11")
    page.keyboard.press("ArrowLeft")
    wh.wait_until(page, "() => window.trame.state.get('frame') === 10")


def test_the_exported_animation_has_every_frame_and_three_js_plays_the_solver_s_bones(page, tmp_path: Path) -> None:
    node = require_node_modules("gltf-validator", "three")
    files = {}
    for button, name in (("#btn-export-anim-glb", "animation.glb"), ("#btn-export-anim-json", "animation.json")):
        with page.expect_download(timeout=60_000) as info:
            page.locator(button).click()
        stem, ext = name.split(".")  # (named after the scene, the preset; then the local date and time)
        assert re.fullmatch(rf"humanoid-{stem}-\d{{4}}-\d\d-\d\d-\d{{6}}\.{ext}", info.value.suggested_filename)
        files[name] = tmp_path / name
        info.value.save_as(files[name])
    take = parse_take(files["animation.json"].read_bytes(), "animation.json")
    assert len(take.times) == 31 and take.times[1] == pytest.approx(1 / 30)
    reports = []
    for script in ("validate.mjs", "three_check.mjs"):
        proc = subprocess.run(
            [node, script, str(files["animation.glb"])], cwd=JS_DIR, capture_output=True, text=True, timeout=180
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        reports.append(json.loads(proc.stdout)[str(files["animation.glb"])])
    valid, three = reports
    assert valid["errors"] == 0 and valid["warnings"] == 0, valid["messages"]
    assert len(three["samples"]) == 31
    body = presets.get("humanoid")
    for k in (0, 15, 30):
        got = {b["name"]: p for b, p in zip(three["bones"], three["samples"][k]["positions"])}
        for j, name in enumerate(body.names):
            np.testing.assert_allclose(got[name], take.positions[k, j], atol=1e-5)
    # the view at frame 15 shows the pose the file has there
    go_to(page, 15)
    np.testing.assert_allclose(state(page, "pose"), take.positions[15], atol=1e-6)
