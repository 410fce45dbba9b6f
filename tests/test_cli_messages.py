"""The command line's messages (issue 33, item 3): every error one line on stderr naming the file and
the place, quoting at most 80 characters of any input and listing at most 10 names; no warning
printed (a zero quaternion in a node, an fps of 5e-324, a huge orientation: one-line errors). The
files are made by each test."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from helpers.character_asset import write_character
from helpers.cli import assert_one_line_error, run

from fabrik3d import checks
from fabrik3d.io.character import load_character
from fabrik3d.io.scene import Scene, save_scene
from fabrik3d.model import presets

# No message of these tests may be longer than this (an input of any size quoted in it or not).
SHORT = 600


def star(path: Path, leaves: int) -> Path:
    """A scene file of a root and ``leaves`` leaf joints (``leaf_0``, ...): a long list of effectors."""
    joints = [{"name": "root", "parent": None, "position": [0, 0, 0]}]
    joints += [{"name": f"leaf_{k}", "parent": "root", "position": [1, k * 1e-3, 0]} for k in range(leaves)]
    path.write_text(json.dumps({"format": "fabrik3d.scene", "version": 3, "joints": joints}))
    return path


def humanoid_scene(path: Path, **extra: Any) -> Path:
    save_scene(Scene(presets.get("humanoid")), path)
    data = json.loads(path.read_text())
    data.update(extra)
    path.write_text(json.dumps(data))
    return path


def assert_short(proc: Any, pattern: str) -> str:
    assert_one_line_error(proc, pattern)
    line = proc.stderr.strip()
    assert len(line) <= SHORT, len(line)
    assert "Warning" not in proc.stderr
    return line


def test_quoted_and_names_list_bound_what_a_message_holds() -> None:
    assert checks.quoted("hand_l") == "'hand_l'"
    assert len(checks.quoted("x" * 10**6)) == 80 and checks.quoted("x" * 10**6).endswith("...")
    assert len(checks.quoted(list(range(10**5)))) == 80
    assert checks.quoted(10**5000).startswith("<an integer of")  # (repr would raise)
    assert checks.names_list(["a", "b"]) == "a, b"
    assert checks.names_list(["a", "b"], quote=True) == "'a', 'b'"
    many = checks.names_list(f"bone_{k}" for k in range(10**5))
    assert many.startswith("bone_0, bone_1, ") and many.endswith("bone_9 ... and 99,990 more")
    assert len(checks.names_list(["y" * 10**6] * 20)) < 1000


def test_valid_names_are_listed_ten_at_most(tmp_path: Path) -> None:
    scene = star(tmp_path / "star.json", 2000)
    line = assert_short(
        run("solve", str(scene), "--target", "nope=1,2,3"),
        r"star\.json: --target nope: not an end effector; valid names are leaf_0, leaf_1, .*leaf_9 "
        r"\.\.\. and 1,990 more$",
    )
    assert line.count("leaf_") == 10


def test_a_huge_target_list_and_a_huge_target_name_are_not_echoed(tmp_path: Path) -> None:
    scene = humanoid_scene(tmp_path / "long.json", targets={"hand_l": list(range(10**5))})
    line = assert_short(
        run("solve", str(scene)), r"long\.json: targets\.hand_l: expected three finite numbers, got \[0, 1"
    )
    assert "99999" not in line
    scene = humanoid_scene(tmp_path / "name.json", targets={"n" * 10**6: [0, 1, 0]})
    assert_short(
        run("solve", str(scene)), r"name\.json: targets\.n+\.\.\.n+: not an end effector; valid names are head"
    )
    # on the command line (an argument holds at most 128 KiB)
    assert_short(
        run("solve", "humanoid", "--target", "m" * 100_000 + "=0,1,0"), r"humanoid: --target m+\.\.\.m+: not an"
    )
    assert_short(run("solve", "humanoid", "--target", "hand_l=" + ",".join(["1"] * 30_000)), r"--target 'hand_l=1,1")
    assert_short(run("bake", str(scene), "-o", "o.glb", "--fps", "x" * 100_000), r"argument --fps: invalid float")


def test_no_warning_a_zero_quaternion_in_a_node(tmp_path: Path) -> None:
    hero = write_character(tmp_path, "hero", "mixamo", armature=True, external=True)
    doc = json.loads(hero.read_text())
    k = next(i for i, n in enumerate(doc["nodes"]) if n.get("name") == "mixamorig:Spine")
    doc["nodes"][k]["rotation"] = [0.0, 0.0, 0.0, 0.0]
    hero.write_text(json.dumps(doc))
    pattern = rf"hero\.gltf: nodes\[{k}\] \('mixamorig:Spine'\): rotation: expected a non-zero quaternion"
    assert_short(run("export", str(hero), "-o", str(tmp_path / "out.gltf")), pattern)
    doc["nodes"][k]["rotation"] = [1e308, -1e308, 1e308, 0.0]  # (its length overflows)
    hero.write_text(json.dumps(doc))
    proc = run("export", str(hero), "-o", str(tmp_path / "out.gltf"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # (a turn, read without overflow)


def test_no_warning_a_tiny_fps(tmp_path: Path) -> None:
    keys = [{"frame": 0, "targets": {"hand_l": [0.3, 1.2, 0.3]}}, {"frame": 10, "targets": {"hand_l": [0.3, 1.3, 0.3]}}]
    slow = humanoid_scene(tmp_path / "slow.json", animation={"fps": 5e-324, "keys": keys})
    assert_short(
        run("bake", str(slow), "-o", str(tmp_path / "o.glb")), r"slow\.json: animation\.fps: must be at least 0\.01"
    )
    fine = humanoid_scene(tmp_path / "fine.json", animation={"fps": 30, "keys": keys})
    for out in ("o.glb", "o.json"):
        proc = run("bake", str(fine), "-o", str(tmp_path / out), "--fps", "5e-324")
        assert_short(proc, r"--fps: must be at least 0\.01, got 4\.94066e-324$")
    assert not list(tmp_path.glob("o.*"))


def test_no_warning_a_huge_orientation(tmp_path: Path) -> None:
    turned = {"position": [0.3, 1.2, 0.3], "orientation": [1e300, 1e300, 0, 0]}
    keys = [{"frame": 0, "targets": {"hand_l": [0.3, 1.2, 0.3]}}, {"frame": 10, "targets": {"hand_l": turned}}]
    scene = humanoid_scene(tmp_path / "turned.json", animation={"fps": 30, "keys": keys})
    assert_short(
        run("bake", str(scene), "-o", str(tmp_path / "o.glb")),
        r"turned\.json: animation\.keys\[1\]: key at frame 10: targets\.hand_l\.orientation: not a unit quaternion",
    )


def test_an_effector_error_names_the_scene_file(tmp_path: Path) -> None:
    arm = tmp_path / "arm.json"
    save_scene(Scene(presets.get("robot_arm")), arm)
    for command in ("solve", "export"):
        extra = ["-o", str(tmp_path / "o.glb")] if command == "export" else []
        proc = run(command, str(arm), "--target", "hand_l=0,1,0", *extra)
        assert_short(proc, r"arm\.json: --target hand_l: not an end effector; valid names are tool$")
    proc = run("solve", str(arm), "--target", "tool=0,1,0.5", "--turn", "hand_l=0,0,10")
    assert_short(proc, r"arm\.json: --turn 'hand_l': not a joint of the skeleton")


def test_a_zero_scale_names_the_character_file(tmp_path: Path) -> None:
    hero = write_character(tmp_path, "hero", "mixamo", armature=True, external=True)
    model = load_character(hero)
    k = int(model.bone_nodes[list(model.bones).index(model.effectors["hand_l"])])
    doc = json.loads(hero.read_text())
    doc["nodes"][k]["scale"] = [0.0, 0.0, 0.0]
    hero.write_text(json.dumps(doc))
    out = tmp_path / "posed.gltf"
    for target in ([], ["--target", "hand_l=0.3,1.2,0.3"]):
        proc = run("export", str(hero), *target, "-o", str(out))
        assert_short(
            proc, rf"hero\.gltf: nodes\[{k}\]: its parent's or its own scale is 0; its pose cannot be written$"
        )
    assert not out.exists()


def test_the_pelvis_of_a_character_moves_its_root(tmp_path: Path) -> None:
    hero = write_character(tmp_path, "hero", "mixamo", armature=True)
    proc = run("export", str(hero), "--target", "pelvis=0,0.9,0.1", "-o", str(tmp_path / "o.glb"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert re.match(r"wrote .*o\.glb: pose \(converged\)", proc.stdout), proc.stdout
