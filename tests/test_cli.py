"""The ``fabrik3d`` command line, run as a real subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import node_world, write_character
from helpers.cli import assert_one_line_error, run

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.io.character import load_character
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.io.take import Take, load_take, save_take
from fabrik3d.model import presets

CONSOLE_SCRIPT = Path(sys.executable).parent / "fabrik3d"


def test_console_script_lists_the_presets() -> None:
    assert CONSOLE_SCRIPT.exists(), "the console script is not installed"
    proc = subprocess.run([str(CONSOLE_SCRIPT), "presets"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for name in presets.names():
        s = presets.get(name)
        line = next(x for x in proc.stdout.splitlines() if x.startswith(f"{name}:"))
        assert f"{len(s)} joints" in line
        assert all(e in line for e in s.end_effectors)


def test_solve_a_preset_prints_iterations_errors_and_time_and_writes_the_pose(tmp_path: Path) -> None:
    out = tmp_path / "pose.json"
    proc = run(
        "solve", "humanoid", "--target", "hand_l=0.5,1.2,0.3", "--target", "toe_r=-0.1,0.05,0.25", "-o", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    m = re.search(r"iterations: (\d+)\s+converged: (True|False)\s+solve: ([0-9.]+) ms", proc.stdout)
    assert m, proc.stdout
    errors = dict(re.findall(r"^\s+(\w+): error ([0-9.e+-]+)$", proc.stdout, flags=re.M))
    assert set(errors) == {"hand_l", "toe_r"}

    pose = json.loads(out.read_text())
    assert set(pose) >= {"joint_names", "positions", "iterations", "errors"}
    # The same solve in this process gives the same pose (the CLI adds nothing of its own).
    scene = Scene(presets.get("humanoid"), targets={"hand_l": [0.5, 1.2, 0.3], "toe_r": [-0.1, 0.05, 0.25]})
    expected = scene.solve()
    assert pose["joint_names"] == list(scene.skeleton.names)
    np.testing.assert_array_equal(np.array(pose["positions"]), expected.positions)
    assert pose["iterations"] == expected.iterations == int(m.group(1))
    assert pose["errors"] == pytest.approx(expected.errors, abs=0)
    for name, text in errors.items():
        assert float(text) == pytest.approx(expected.errors[name], rel=1e-5)
    assert m.group(2) == str(expected.converged)


def test_solve_a_scene_file_with_its_own_targets_and_an_override(tmp_path: Path) -> None:
    skeleton = presets.get("robot_arm")
    tip = skeleton.end_effectors[0]
    scene = Scene(skeleton, targets={tip: [0.3, 0.6, 0.3]}, tolerance=1e-4, max_iterations=50)
    path = tmp_path / "arm.json"
    save_scene(scene, path)
    out = tmp_path / "pose.json"
    proc = run("solve", str(path), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(json.loads(out.read_text())["positions"], scene.solve().positions)
    # --target replaces the scene's target for that effector.
    proc = run("solve", str(path), "--target", f"{tip}=0.2,0.5,0.4", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    moved = Scene(skeleton, targets={tip: [0.2, 0.5, 0.4]}, tolerance=1e-4, max_iterations=50).solve()
    np.testing.assert_array_equal(json.loads(out.read_text())["positions"], moved.positions)


def test_solve_without_targets_reports_zero_iterations() -> None:
    proc = run("solve", "octopus")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"iterations: 0\b", proc.stdout)


def test_tolerance_and_max_iterations_options() -> None:
    proc = run("solve", "humanoid", "--target", "hand_l=0.3,1.0,0.4", "--tolerance", "1e-12", "--max-iterations", "3")
    assert proc.returncode == 0, proc.stderr
    iterations = int(re.search(r"iterations: (\d+)", proc.stdout).group(1))
    assert 1 <= iterations <= 3


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (["solve", "cat"], r"cat: neither a preset \(humanoid, robot_arm, octopus\) nor an existing scene file"),
        (["solve", "humanoid", "--target", "hand_l=1,2"], r"--target 'hand_l=1,2': expected NAME=X,Y,Z"),
        (["solve", "humanoid", "--target", "hand_l"], r"expected NAME=X,Y,Z"),
        (["solve", "humanoid", "--target", "=1,2,3"], r"expected NAME=X,Y,Z"),
        (["solve", "humanoid", "--target", "hand_l=a,b,c"], r"expected NAME=X,Y,Z"),
        (["solve", "humanoid", "--target", "hand_l=1,2,3,4"], r"expected NAME=X,Y,Z"),
        (["solve", "humanoid", "--target", "hand=1,2,3"], r"hand: not an end effector.*head, hand_l, hand_r"),
        (["solve", "humanoid", "--target", "pelvis=1,2,3"], r"pelvis: not an end effector"),
        (["solve", "humanoid", "--target", "hand_l=nan,0,0"], r"hand_l.*finite"),
        (["solve", "humanoid", "--target", "hand_l=1e999,0,0"], r"hand_l.*finite"),
        (["solve", "humanoid", "--tolerance", "0"], r"tolerance"),
        (["solve", "humanoid", "--tolerance", "nan"], r"tolerance"),
        (["solve", "humanoid", "--tolerance", "abc"], r"tolerance"),
        (["solve", "humanoid", "--max-iterations", "0"], r"max_iterations"),
        (["solve", "humanoid", "--max-iterations", "2.5"], r"max-iterations"),
        (["solve"], r"SCENE_OR_PRESET"),
        (["frobnicate"], r"invalid choice"),
        ([], r"command"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], pattern: str) -> None:
    assert_one_line_error(run(*args), pattern)


def test_bad_files_are_one_line_and_exit_2(tmp_path: Path) -> None:
    assert_one_line_error(run("solve", str(tmp_path / "missing.json")), r"missing\.json: neither a preset")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert_one_line_error(run("solve", str(bad)), r"bad\.json: not valid JSON")
    wrong = tmp_path / "wrong.json"
    data = Scene(presets.get("humanoid")).to_dict()
    data["joints"][4]["parent"] = "hipp"
    wrong.write_text(json.dumps(data))
    assert_one_line_error(run("solve", str(wrong)), r"wrong\.json: joints\[4\]\.parent: unknown joint 'hipp'")
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(data).replace('"hipp"', '"spine_03"').replace("0.95", "1" + "0" * 400, 1))
    assert_one_line_error(run("solve", str(huge)), r"huge\.json: joints\[0\]\.position: expected three finite")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert_one_line_error(run("solve", str(deep)), r"deep\.json: JSON nested too deeply")
    assert_one_line_error(run("solve", str(tmp_path)), re.escape(str(tmp_path)))


def test_unwritable_output_is_one_line_exit_2_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "pose.json"
    assert_one_line_error(run("solve", "humanoid", "--target", "hand_l=0.5,1.2,0.3", "-o", str(target)), r"pose\.json")
    assert not (tmp_path / "no").exists()
    folder = tmp_path / "taken"
    folder.mkdir()
    assert_one_line_error(run("solve", "humanoid", "-o", str(folder)), r"taken")
    assert list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


# -- issue 15: every CLI error is one line and exit 2 ---------------------------------------------------------
def _bound_port() -> tuple[object, int]:
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock, sock.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (["serve", "--port", "0"], r"argument --port: expected an integer 1\.\.65535, got 0"),
        (["serve", "--port", "70000"], r"argument --port: expected an integer 1\.\.65535, got 70000"),
        (["serve", "--port", "http"], r"argument --port: expected an integer 1\.\.65535, got 'http'"),
        (
            ["serve", "--no-browser", "--host", "no.such.host.invalid"],
            r"--host 'no\.such\.host\.invalid': unknown host",
        ),
        (
            ["serve", "--no-browser", "--host", "10.255.255.1"],
            r"--host '10\.255\.255\.1': not an address of this machine",
        ),
        (["export", "humanoid", "-o", ""], r"argument -o/--output: expected a file name, got an empty one"),
        (["solve", "humanoid", "-o", " "], r"argument -o/--output: expected a file name, got an empty one"),
        (["solve", "/dev/zero"], r"/dev/zero: not a regular file"),
        (["solve", "x" * 300 + ".json"], r"neither a preset .* nor an existing scene file"),
        (["solve", "hum\nanoid"], r"hum\\nanoid: neither a preset"),
        (["solve", "humanoid", "--target", "ha\nnd_l=1,2,3"], r"humanoid: --target ha\\nnd_l: not an end effector"),
    ],
)
def test_more_bad_input_is_one_line_and_exit_2(args: list[str], pattern: str) -> None:
    assert_one_line_error(run(*args), pattern)


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    sock, port = _bound_port()
    try:
        assert_one_line_error(run("serve", "--no-browser", "--port", str(port)), rf"--port {port}: already in use")
    finally:
        sock.close()  # type: ignore[attr-defined]


def test_a_long_legal_output_name_is_written(tmp_path: Path) -> None:
    out = tmp_path / ("p" * 246 + ".glb")
    proc = run("export", "humanoid", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 1000 and [p.name for p in tmp_path.iterdir()] == [out.name]


# -- bake -----------------------------------------------------------------------------------------------------


@pytest.fixture
def keyed_scene(tmp_path: Path) -> Path:
    body = presets.get("humanoid")
    hand = body.rest_positions[body.index("hand_l")]
    path = tmp_path / "keys.json"
    keys = (Key(0, {"hand_l": hand}), Key(30, {"hand_l": [0.25, 1.25, 0.35]}))
    save_scene(Scene(body, animation=Animation(keys)), path)
    return path


def test_bake_writes_every_frame_of_the_keys_as_glb_and_as_a_take(keyed_scene: Path, tmp_path: Path) -> None:
    proc = run("bake", str(keyed_scene), "-o", str(tmp_path / "a.glb"))
    assert proc.returncode == 0, proc.stderr
    assert re.match(r"wrote .*a\.glb: frames 0\.\.30 at 30 fps \(31 poses of 65 joints, baked in \d+ ms\)", proc.stdout)
    assert (tmp_path / "a.glb").read_bytes()[:4] == b"glTF"
    proc = run("bake", str(keyed_scene), "-o", str(tmp_path / "a.json"), "--frames", "10:20", "--fps", "24")
    assert proc.returncode == 0, proc.stderr
    take = load_take(tmp_path / "a.json")
    assert len(take.times) == 11 and take.times[-1] == pytest.approx(10 / 24)
    hand = take.skeleton.index("hand_l")
    # the hand at frame 20 is where the keys put it (not at frame 20 of a clip from frame 0)
    goal = load_scene(keyed_scene).animation.goals_at(20).targets["hand_l"].position
    np.testing.assert_allclose(take.positions[-1, hand], goal, atol=1e-3)


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        (["-o", "out.txt"], r"out\.txt: expected a file name ending in \.glb, \.gltf or \.json"),
        (["-o", "out.glb", "--frames", "5"], r"--frames: expected FIRST:LAST"),
        (["-o", "out.glb", "--frames", "9:3"], r"frames: the last frame 3 is before the first 9"),
        (["-o", "out.glb", "--fps", "nan"], r"fps: must be finite and > 0"),
        (["-o", "out.glb", "--method", "fast"], r"invalid choice: 'fast'"),
    ],
)
def test_bad_bakes_are_one_line_and_exit_2(keyed_scene: Path, extra: list[str], pattern: str) -> None:
    assert_one_line_error(run("bake", str(keyed_scene), *extra, cwd=keyed_scene.parent), pattern)
    assert not (keyed_scene.parent / "out.glb").exists()


def test_bake_of_a_scene_without_keys_says_so(tmp_path: Path) -> None:
    assert_one_line_error(run("bake", "humanoid", "-o", str(tmp_path / "a.glb")), r"humanoid: no keys to bake")


# -- characters -----------------------------------------------------------------------------------------------


@pytest.fixture
def hero(tmp_path: Path) -> Path:
    return write_character(tmp_path, "hero", "mixamo", armature=True)


def test_export_of_a_character_writes_the_pose_into_its_own_file(hero: Path, tmp_path: Path) -> None:
    out = tmp_path / "posed.glb"
    proc = run("export", str(hero), "--target", "hand_l=0.3,1.3,0.35", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "pose (converged)" in proc.stdout
    before, after = load_character(hero), load_character(out)
    sk = after.skeleton
    assert sk.names == before.skeleton.names
    # the file's meshes and materials are the user's own, the hand's bone node is posed
    assert after.document["meshes"] == before.document["meshes"]
    assert after.document["materials"] == before.document["materials"]
    hand = before.effectors["hand_l"]
    result = fabrik3d.solve(before.skeleton, {hand: [0.3, 1.3, 0.35]})
    nodes = after.document["nodes"]
    k = next(i for i, node in enumerate(nodes) if node.get("name") == hand)
    np.testing.assert_allclose(node_world(nodes, k)[:3, 3], result.positions[sk.index(hand)], atol=1e-4)


def test_export_of_a_character_with_a_take_adds_a_named_animation(hero: Path, tmp_path: Path) -> None:
    model = load_character(hero)
    hand = model.effectors["hand_l"]
    rest = model.skeleton.rest_positions[model.skeleton.index(hand)]
    frames = [fabrik3d.solve(model.skeleton, {hand: rest + np.array([0, 0.05 * k, 0.1])}) for k in range(4)]
    save_take(Take.from_frames(model.skeleton, frames, [0, 0.1, 0.2, 0.3]), tmp_path / "wave.json")
    out = tmp_path / "animated.glb"
    proc = run("export", str(hero), "--take", str(tmp_path / "wave.json"), "--name", "wave", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "take 'wave' of 4 frames" in proc.stdout
    assert [a["name"] for a in load_character(out).document["animations"]] == ["idle", "wave"]  # (its own kept)


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        (["-o", "out.gltf"], r"a GLB character is written to a \.glb"),
        (
            ["--target", "hand_q=0,1,0", "-o", "out.glb"],
            r"--target 'hand_q': not a role of this character .* the roles are pelvis, head, hand_l",
        ),
        (["--take", "missing.json", "-o", "out.glb"], r"missing\.json"),
    ],
)
def test_bad_character_exports_are_one_line_and_exit_2(hero: Path, extra: list[str], pattern: str) -> None:
    assert_one_line_error(run("export", str(hero), *extra, cwd=hero.parent), pattern)
    assert not (hero.parent / "out.glb").exists() and not (hero.parent / "out.gltf").exists()


def test_name_without_a_character_is_refused(tmp_path: Path) -> None:
    proc = run("export", "humanoid", "--name", "x", "-o", str(tmp_path / "a.glb"))
    assert_one_line_error(proc, r"--name names a take written into a character's file")
    proc = run("export", "humanoid", "--rig-map", "map.json", "-o", str(tmp_path / "a.glb"))
    assert_one_line_error(proc, r"--rig-map goes with a character's file")
    assert_one_line_error(run("serve", "--rig-map", "map.json"), r"serve: --rig-map goes with --character")


def test_export_of_a_character_takes_a_rig_map_file(hero: Path, tmp_path: Path) -> None:
    model = load_character(hero)
    custom = {**model.rig_map, "hand_l": model.rig_map["hand_r"], "hand_r": model.rig_map["hand_l"]}
    (tmp_path / "map.json").write_text(json.dumps(custom))
    out = tmp_path / "posed.glb"
    proc = run("export", str(hero), "--rig-map", str(tmp_path / "map.json"), "--target", "hand_l=-0.3,1.3,0.35")
    assert proc.returncode == 2  # (no -o)
    args = ("export", str(hero), "--rig-map", str(tmp_path / "map.json"), "--target", "hand_l=-0.3,1.3,0.35")
    proc = run(*args, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    # hand_l is the right hand's bone now: that bone went to the target
    nodes = load_character(out).document["nodes"]
    k = next(i for i, n in enumerate(nodes) if n.get("name") == model.rig_map["hand_r"])
    np.testing.assert_allclose(node_world(nodes, k)[:3, 3], [-0.3, 1.3, 0.35], atol=2e-3)
