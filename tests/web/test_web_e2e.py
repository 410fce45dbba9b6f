"""End to end: the real ``fabrik3d serve`` and Debian's headless chromium, driven by playwright.

One server and one page serve the whole module (the server's state is shared by its
pages, so each test starts from the humanoid at rest). The page is read through
trame's state (``window.trame.state.get``) and triggers, never guessed from pixels;
every wait is bounded. Screenshots are kept in ``tests/artifacts/``.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, ROOT, require_executable, require_node_modules
from helpers import web as wh

from fabrik3d.io.scene import Scene
from fabrik3d.io.take import parse_take
from fabrik3d.model import presets

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture(scope="module")
def server():
    require_executable("chromium", "apt-get install chromium")
    with wh.WebServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def page(server):
    with wh.browser() as b:
        yield wh.open_page(b, server.url)


@pytest.fixture
def app(page, server):
    """The page, back on the humanoid at rest with no error, before each test; the server must survive it."""
    set_state(page, "preset", "humanoid")
    wh.trigger(page, "reset_pose")
    wh.trigger(page, "reset_camera")
    set_state(page, "error_message", "")
    wh.wait_until(page, "window.trame.state.get('targets') && !Object.keys(window.trame.state.get('targets')).length")
    wh.settle(page)
    yield page
    assert server.alive, server.output()


def set_state(page, key: str, value, timeout: float = 15.0) -> None:
    """``window.trame.state.set(key, value)`` from the page, bounded (it waits for the server's reply)."""
    page.evaluate(
        """([key, value, ms]) => Promise.race([
             Promise.resolve(window.trame.state.set(key, value)),
             new Promise((_, reject) => setTimeout(() => reject(new Error('state.set timed out')), ms)),
           ])""",
        [key, value, int(timeout * 1000)],
    )


def hand_index(page, name: str = "hand_l") -> int:
    return wh.get_state(page, "joint_names").index(name)


def wait_for_error(page, text: str, timeout: float = 15.0) -> str:
    wh.wait_until(page, "(t) => (window.trame.state.get('error_message') || '').includes(t)", timeout, arg=text)
    return wh.get_state(page, "error_message")


def test_the_page_loads_and_shows_a_rendered_frame(app) -> None:
    page = app
    wh.wait_until(page, "window.fabrikView.images > 0")  # (the view's canvas shows its images)
    # (the panel may still settle the layout as the page loads: the server renders the new size in turn)
    fills = """() => { const c = document.querySelector('#view3d canvas.fabrik-image');
        const r = document.querySelector('#view3d').getBoundingClientRect();
        return c.width >= 0.9 * r.width && c.height >= 0.9 * r.height; }"""
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        wh.wait_until(page, fills)
    except PageTimeout:
        pass  # (the assertion below says by how much it falls short)
    size = page.evaluate(
        "() => { const c = document.querySelector('#view3d canvas.fabrik-image'); return [c.width, c.height]; }"
    )
    box = wh.view_box(page)
    assert size[0] >= 0.9 * box["width"] and size[1] >= 0.9 * box["height"], (size, box)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = page.screenshot(path=str(ARTIFACTS / "web-e2e-start.png"), clip=box)
    assert len(shot) > 10_000
    # The frame shows the scene: many distinct colours, the handles' accent among them, not a blank image.
    colors = page.evaluate(
        """() => { const c = document.querySelector('#view3d canvas.fabrik-image');
                 const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; const s = new Set();
                 for (let k = 0; k < d.length; k += 28) s.add((d[k] >> 3) << 10 | (d[k + 1] >> 3) << 5 | d[k + 2] >> 3);
                 return s.size; }"""
    )
    assert colors > 200, colors
    assert wh.get_state(page, "joint_names") == list(presets.get("humanoid").names)


def test_a_real_mouse_drag_of_a_hand_moves_it_to_the_drop_point(app) -> None:
    page = app
    i = hand_index(page)
    before = np.array(wh.get_state(page, "pose")[i])
    start = wh.handle_point(page, "hand_l")
    drop = (start[0] - 110.0, start[1] - 90.0)  # inward and up: the hanging hand is at full reach downward
    frames = wh.frame_count(page)
    wh.drag(page, start, drop, steps=25, pause=0.03)
    released = wh.now(page)
    wh.wait_until(page, "(i) => window.trame.state.get('targets').hand_l !== undefined", arg=i)
    wh.wait_until(page, "(n) => window.__fabrik.frames.length > n + 3", arg=frames)  # a new image per solve
    after = np.array(wh.get_state(page, "pose")[i])
    target = np.array(wh.get_state(page, "targets")["hand_l"])
    assert np.linalg.norm(after - before) > 0.1
    assert np.linalg.norm(after - target) <= 1e-3 + 1e-6  # solved onto the dropped target
    assert wh.get_state(page, "max_error") <= 1e-3 + 1e-9
    landed = wh.handle_point(page, "hand_l")
    assert math.dist(landed, drop) < 6.0, (landed, drop)
    assert wh.get_state(page, "iterations") >= 0 and wh.get_state(page, "solve_ms") > 0
    wh.settle(page, since=released)  # the still (full resolution) image after the drag
    page.screenshot(path=str(ARTIFACTS / "web-e2e-drag.png"))
    assert page.locator("#btn-undo").is_enabled()
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('targets')).length")
    np.testing.assert_allclose(wh.get_state(page, "pose")[i], before, atol=1e-6)


CANVAS_JS = """() => { const c = document.querySelector('#view3d canvas.fabrik-image'), r = c.getBoundingClientRect();
  const img = document.querySelector('#view3d img');
  return {width: c.width, height: c.height, box: [r.x, r.y, r.width, r.height],
          hidden: getComputedStyle(img).visibility === 'hidden', placeholder: img.src.startsWith('data:'),
          images: window.fabrikView.images}; }"""


def test_a_drags_small_images_fill_the_view_and_the_still_one_comes_at_full_size(app) -> None:
    """The view's images are drawn in its canvas (fabrik3d_web.view.view_js.IMAGES_JS), not trame-vtk's <img>."""
    page = app
    box = wh.view_box(page)
    start = wh.handle_point(page, "hand_l")
    shown = page.evaluate(CANVAS_JS)
    page.mouse.move(*start)
    page.mouse.down()
    during = []
    for k in range(1, 16):
        page.mouse.move(start[0] - 4.0 * k, start[1] + 3.0 * k)
        time.sleep(0.04)
        during.append(page.evaluate(CANVAS_JS))
    page.mouse.up()
    released = wh.now(page)
    wh.settle(page, since=released)
    still = page.evaluate(CANVAS_JS)
    assert during[-1]["images"] - shown["images"] >= 5  # the drag's images, drawn one by one
    small = [s for s in during if s["width"] < 0.5 * box["width"]]
    assert small, during  # (INTERACTIVE_RATIO: 0.35 of the view)
    for s in [*small, still]:
        assert s["hidden"] and s["placeholder"]
        np.testing.assert_allclose(s["box"], [box["x"], box["y"], box["width"], box["height"]], atol=1.0)
    assert still["width"] >= 0.9 * box["width"] and still["height"] >= 0.9 * box["height"], (still, box)
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('targets')).length")


def test_every_pixel_of_a_drag_moves_the_handle(app) -> None:
    """The mouse maps onto the view's full size during a drag (not onto the small drag image's
    pixels, 3 of the page's each): each one-pixel move shows a new pose."""
    page = app
    start = wh.handle_point(page, "hand_l")
    page.mouse.move(*start)
    page.mouse.down()
    try:
        page.mouse.move(start[0] - 12.0, start[1] + 9.0, steps=4)
        time.sleep(0.1)
        for k in range(1, 9):
            frames = wh.frame_count(page)
            page.mouse.move(start[0] - 12.0 - k, start[1] + 9.0)
            wh.wait_until(page, "(n) => window.__fabrik.frames.length > n", timeout=3.0, arg=frames)
            time.sleep(0.03)
    finally:
        page.mouse.up()
    released = wh.now(page)
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    wh.settle(page, since=released)
    landed = wh.handle_point(page, "hand_l")
    assert math.dist(landed, (start[0] - 20.0, start[1] + 9.0)) < 1.5, (landed, start)
    wh.trigger(page, "undo")
    wh.wait_until(page, "() => !Object.keys(window.trame.state.get('targets')).length")


def test_turning_the_camera_sends_small_frames_then_a_still_one(app) -> None:
    page = app
    # the left hand's target held out to the side (where the hand is at rest, in the T), far from the point the
    # camera turns about, so that its handle moves on the screen as the camera turns (the hand hangs near it)
    for axis, value in enumerate(presets.get("humanoid").rest_positions[hand_index(page)]):
        wh.trigger(page, "type_coordinate", ["hand_l", axis, repr(float(value))])
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l?.[1] > 1.4")
    wh.settle(page)
    box = wh.view_box(page)
    sky = (box["x"] + 0.85 * box["width"], box["y"] + 0.2 * box["height"])
    before = wh.handle_point(page, "hand_l")
    shown = page.evaluate(CANVAS_JS)
    page.mouse.move(*sky)
    page.mouse.down()
    during = []
    try:
        for k in range(1, 13):  # (about 250 px: the view frames the look handle in front of the face too)
            page.mouse.move(sky[0] - 20.0 * k, sky[1] + 4.0 * k)
            time.sleep(0.04)
            during.append(page.evaluate(CANVAS_JS))
    finally:
        page.mouse.up()
    wh.settle(page, since=wh.now(page))
    still = page.evaluate(CANVAS_JS)
    after = wh.handle_point(page, "hand_l")
    try:
        assert math.dist(before, after) > 20.0, (before, after)  # the camera turned
        assert during[-1]["images"] - shown["images"] >= 5
        assert any(s["width"] < 0.5 * box["width"] for s in during), during
        assert still["width"] >= 0.9 * box["width"], (still, box)
    finally:
        wh.trigger(page, "reset_camera")


def test_typing_a_coordinate_moves_a_target(app) -> None:
    page = app
    i = hand_index(page, "hand_r")
    hanging = wh.get_state(page, "pose")[i]  # (the free hand, where it hangs)
    field = wh.show_control(page, "#coord-hand_r-x")
    field.fill("-0.55")
    field.press("Enter")
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_r !== undefined")
    target = wh.get_state(page, "targets")["hand_r"]
    assert target == pytest.approx([-0.55, hanging[1], hanging[2]])
    assert np.linalg.norm(np.array(wh.get_state(page, "pose")[i]) - target) <= 1e-3 + 1e-6
    assert field.input_value() == "-0.550"
    field.fill("left")
    field.press("Enter")
    assert "is not a number" in wait_for_error(page, "hand_r.x")
    assert page.locator("#error-message").is_visible()
    assert wh.get_state(page, "targets")["hand_r"] == pytest.approx(target)


def test_exports_download_glb_files_that_the_khronos_validator_accepts(app, tmp_path: Path) -> None:
    node = require_node_modules("gltf-validator")
    page = app
    wh.trigger(page, "start_recording")
    start = wh.handle_point(page, "hand_l")
    wh.drag(page, start, (start[0] - 80.0, start[1] + 60.0), steps=15, pause=0.03)
    wh.wait_until(page, "() => window.trame.state.get('take_frames') > 3")
    wh.show_control(page, "#btn-stop-recording").click()
    wh.wait_until(page, "() => !window.trame.state.get('recording')")
    files = {}
    for button, name in [
        ("#btn-export-pose", "pose.glb"),
        ("#btn-export-take", "take.glb"),
        ("#btn-export-take-json", "take.json"),
    ]:
        with page.expect_download(timeout=30_000) as info:
            wh.show_control(page, button).click()
        download = info.value
        stem, ext = name.split(".")  # (named after the scene, the preset; then the local date and time)
        assert re.fullmatch(rf"humanoid-{stem}-\d{{4}}-\d\d-\d\d-\d{{6}}\.{ext}", download.suggested_filename)
        files[name] = tmp_path / name
        download.save_as(files[name])
    wh.show_control(page, "#btn-play").click()  # play the take back in the view, to its end
    wh.wait_until(page, "() => window.trame.state.get('playing') === true")
    wh.wait_until(page, "() => window.trame.state.get('playing') === false", timeout=30)
    take = parse_take(files["take.json"].read_bytes(), "take.json")
    assert len(take.times) == wh.get_state(page, "take_frames")
    cli = subprocess.run(  # the CLI reads the downloaded take
        [
            sys.executable,
            "-m",
            "fabrik3d.cli",
            "export",
            "--take",
            str(files["take.json"]),
            "-o",
            str(tmp_path / "cli.glb"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    assert (tmp_path / "cli.glb").read_bytes()[:4] == b"glTF"
    proc = subprocess.run(
        [node, str(JS_DIR / "validate.mjs"), str(files["pose.glb"]), str(files["take.glb"])],
        cwd=JS_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for name in ("pose.glb", "take.glb"):
        assert report[str(files[name])]["errors"] == 0, report[str(files[name])]["messages"]
        assert files[name].read_bytes()[:4] == b"glTF"


def test_uploading_a_malformed_scene_shows_the_error_and_keeps_the_scene(app, tmp_path: Path) -> None:
    page = app
    names, pose = wh.get_state(page, "joint_names"), wh.get_state(page, "pose")
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "fabrik3d.scene", "version": 1, "joints": [{"name": "a", "parent": "zz"')
    page.locator("#scene-upload").set_input_files(str(bad))
    message = wait_for_error(page, "broken.json")
    assert "not valid JSON" in message
    assert page.locator("#error-message").is_visible()
    assert page.locator("#error-message").inner_text().strip().startswith("broken.json")
    assert wh.get_state(page, "joint_names") == names and wh.get_state(page, "pose") == pose
    # A good file through the same field loads.
    arm = presets.get("robot_arm")
    good = tmp_path / "arm.json"
    good.write_text(json.dumps(Scene(arm).to_dict()))
    page.locator("#scene-upload").set_input_files(str(good))
    wh.wait_until(page, "() => window.trame.state.get('joint_names').includes('tool')")
    assert wh.get_state(page, "error_message") == ""


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("targets", {"hand_l": [float("nan"), 1.0, 0.0]}, "finite"),
        ("targets", {"hand_l": [1e300, 1.0, 0.0]}, "at most"),
        ("targets", {"hand_l": [500.0, 1.0, 0.0]}, "within"),
        ("targets", {"tail": [0.0, 1.0, 0.0]}, "not an end effector"),
        ("targets", {"hand_l": "up"}, "expected [x, y, z]"),
        ("tolerance", -1, "tolerance"),
        ("max_iterations", 1e9, "max_iterations"),
        ("preset", "dragon", "unknown preset"),
    ],
)
def test_bad_client_messages_set_an_error_and_change_nothing(app, key, value, message) -> None:
    page = app
    pose, targets = wh.get_state(page, "pose"), wh.get_state(page, "targets")
    set_state(page, key, value)
    assert message in wait_for_error(page, message)
    assert wh.get_state(page, "pose") == pose and wh.get_state(page, "targets") == targets


def test_bad_triggers_and_an_oversized_upload_leave_the_server_running(app, server, tmp_path: Path) -> None:
    page = app
    pose = wh.get_state(page, "pose")
    wh.trigger(page, "type_coordinate", ["hand_l", 7, "1"])
    assert "axis" in wait_for_error(page, "axis")
    assert wh.trigger(page, "target_screen_position", [{"no": "name"}]) is None
    assert "no handle" in wait_for_error(page, "no handle")
    big = tmp_path / "huge.json"
    big.write_bytes(b" " * (3 * 1024 * 1024) + b"{}")
    page.locator("#scene-upload").set_input_files(str(big))
    assert "too large" in wait_for_error(page, "huge.json")
    assert wh.get_state(page, "pose") == pose
    # A 1.2 MB scene of 10^4 limited joints (it held the server 16.5 s and 4.6 GB) is refused before it is built.
    many = tmp_path / "many.json"
    joints = [{"name": "j0", "parent": None, "position": [0, 0, 0]}]
    for i in range(1, 10_001):
        link = {"name": f"j{i}", "parent": "j0" if i % 10 == 1 else f"j{i - 1}", "position": [i // 10, i % 10, 0]}
        joints.append(link | ({"constraints": [{"type": "Cone", "max_deg": 30}]} if i % 10 else {}))
    many.write_text(json.dumps({"format": "fabrik3d.scene", "version": 1, "joints": joints}))
    page.locator("#scene-upload").set_input_files(str(many))
    assert "10001 joints, more than the 2000 allowed here" in wait_for_error(page, "many.json")
    assert wh.get_state(page, "pose") == pose
    assert server.alive
    assert wh.trigger(page, "target_screen_position", ["hand_l"]) is not None


def test_limits_can_be_shown_and_switched_off(app) -> None:
    page = app
    assert wh.get_state(page, "has_limits") is True
    shown = wh.now(page)
    wh.show_control(page, "#show-limits").check()
    wh.wait_until(page, "() => window.trame.state.get('show_limits') === true")
    wh.settle(page, since=shown)
    page.screenshot(path=str(ARTIFACTS / "web-e2e-limits.png"))
    wh.show_control(page, "#show-limits").uncheck()
    set_state(page, "targets", {"hand_l": [0.2, 1.0, -0.5]})  # behind the body: the limits shape the pose
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    with_limits = json.dumps(wh.get_state(page, "pose"))
    wh.show_control(page, "#limits-on").uncheck()
    wh.wait_until(page, "(p) => JSON.stringify(window.trame.state.get('pose')) !== p", arg=with_limits)
    assert wh.get_state(page, "limits_on") is False
    wh.show_control(page, "#limits-on").check()
    wh.wait_until(page, "() => window.trame.state.get('limits_on') === true")
