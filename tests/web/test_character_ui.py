"""End to end, a rigged character in the web UI (issue 16): ``fabrik3d serve --character`` opens it with its
skinned mesh; a hand drag moves the mesh's hand; the Pose download is the user's own file with the pose
(validated, and three.js skins it where fabrik3d does); Open takes another .glb; a broken one changes
nothing. The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_executable, require_node_modules
from helpers import web as wh
from helpers.character_asset import node_world, write_character

from fabrik3d.io.character import load_character

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def hero(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_character(tmp_path_factory.mktemp("hero"), "hero", "mixamo", armature=True)


@pytest.fixture(scope="module")
def page(hero: Path):
    require_executable("chromium", "apt-get install chromium")
    with wh.WebServer(["--character", str(hero)]) as srv, wh.browser() as b:
        yield wh.open_page(b, srv.url)
        assert srv.alive, srv.output()


def test_the_character_opens_with_its_mesh_and_its_effectors(page, hero: Path) -> None:
    info = wh.get_state(page, "character")
    model = load_character(hero)
    assert info["name"] == "hero.glb" and info["convention"] == "mixamo"
    assert info["vertices"] == sum(len(m.positions) for m in model.meshes)
    assert wh.get_state(page, "joint_names") == list(model.skeleton.names)
    assert wh.show_control(page, "#character-info").is_visible()


def test_the_mesh_toggle_hides_and_shows_the_skin(page) -> None:
    wh.settle(page)
    with_mesh = page.locator("#view3d").screenshot(path=wh.ROOT / "tests" / "artifacts" / "character-mesh.png")
    wh.show_control(page, "#switch-mesh").click()
    wh.wait_until(page, "() => window.trame.state.get('show_mesh') === false")
    without = _shot_unlike(page, with_mesh)
    assert with_mesh != without
    wh.show_control(page, "#switch-mesh").click()
    wh.wait_until(page, "() => window.trame.state.get('show_mesh') === true")
    assert _shot_unlike(page, without) != without


def _shot_unlike(page, earlier: bytes, timeout: float = 10.0) -> bytes:
    """The 3D view's screenshot once it differs from ``earlier`` (the view may take a few frames
    to show a change), or the last one after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        wh.settle(page)
        shot = page.locator("#view3d").screenshot()
        if shot != earlier or time.monotonic() > deadline:
            return shot
        time.sleep(0.2)


def test_a_hand_drag_poses_the_character_and_the_download_is_the_users_file(page, hero: Path, tmp_path: Path) -> None:
    model = load_character(hero)
    hand = model.effectors["hand_l"]
    names = wh.get_state(page, "joint_names")
    before = np.array(wh.get_state(page, "pose"))
    start = wh.handle_point(page, hand)
    wh.drag(page, start, (start[0] - 70.0, start[1] - 50.0), steps=15)
    wh.settle(page)
    after = np.array(wh.get_state(page, "pose"))
    assert np.linalg.norm(after[names.index(hand)] - before[names.index(hand)]) > 0.05
    with page.expect_download(timeout=60_000) as info:
        wh.show_control(page, "#btn-export-pose").click()
    assert re.fullmatch(r"hero-pose-\d{4}-\d\d-\d\d-\d{6}\.glb", info.value.suggested_filename)  # (the character's)
    path = tmp_path / "posed.glb"
    info.value.save_as(path)
    posed = load_character(path)
    assert posed.document["meshes"] == model.document["meshes"]
    assert posed.document["materials"] == model.document["materials"]
    assert [a["name"] for a in posed.document.get("animations", [])] == [
        a["name"] for a in model.document.get("animations", [])
    ]
    node = require_node_modules("gltf-validator")
    proc = subprocess.run([node, "validate.mjs", str(path)], cwd=JS_DIR, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)[str(path)]
    assert report["errors"] == 0, report["messages"]
    # the hand's bone in the file is where the page showed the hand
    nodes = posed.document["nodes"]
    k = next(i for i, n in enumerate(nodes) if n.get("name") == hand)
    np.testing.assert_allclose(node_world(nodes, k)[:3, 3], after[names.index(hand)], atol=1e-4 * model.size)


def test_the_downloaded_scene_names_the_character_and_opens_it_again(page, hero: Path) -> None:
    with page.expect_download(timeout=60_000) as info:
        wh.show_control(page, "#btn-download-scene").click()
    assert re.fullmatch(r"hero-scene-\d{4}-\d\d-\d\d-\d{6}\.json", info.value.suggested_filename)
    path = hero.parent / "hero_scene.json"
    info.value.save_as(path)
    data = json.loads(path.read_text())
    assert data["character"]["file"] == "hero.glb" and data["character"]["rig_map"]["hand_l"]
    with wh.WebServer(["--scene", str(path)]) as srv:
        again = wh.open_page(page.context.browser, srv.url)
        try:
            info = wh.get_state(again, "character")
            assert info is not None and info["name"] == "hero.glb"
            targets = wh.get_state(again, "targets")
            assert set(targets) == set(data["targets"])
            for name, point in data["targets"].items():
                np.testing.assert_allclose(targets[name], point, atol=1e-6)
        finally:
            again.close()


def test_open_takes_a_glb_and_a_broken_one_changes_nothing(page, tmp_path: Path) -> None:
    other = write_character(tmp_path, "other", "blender", armature=False)
    page.locator("#scene-upload").set_input_files(str(other))
    wh.wait_until(page, "() => (window.trame.state.get('character') || {}).name === 'other.glb'")
    names = wh.get_state(page, "joint_names")
    broken = tmp_path / "broken.glb"
    broken.write_bytes(other.read_bytes()[:600])
    page.locator("#scene-upload").set_input_files(str(broken))
    wh.wait_until(page, "() => window.trame.state.get('error_message').includes('broken.glb')")
    assert wh.get_state(page, "joint_names") == names
    assert wh.get_state(page, "character")["name"] == "other.glb"
