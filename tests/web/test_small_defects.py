"""The small defects of issue 51 (item 8), without a browser: the real controller, scene view and solver.

1. No red before a goal's first key: where keys hold poses (the web app's keys), a goal is free before its
   first key (``fabrik3d.model.keys``), so an earlier key shows its pose with that effector free, not
   measured against a target set later (it was red there), and the frames between follow the keyed poses.
2. Hover labels name a character's handles by role (``hand_l``), the bone's name in brackets.
3. Every download gets its own name: the scene's or character's, what it holds, the frame when the
   timeline has keys, the browser's local date and time (``fabrik3d_web.panels.download.file_name_js``, run in node).
4. ``Anim .glb`` with the Mannequin box on holds the mannequin's body skinned to the bones, which the
   Khronos validator passes and three.js moves with the bones where fabrik3d does.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_executable, require_node_modules
from fabrik3d_web.document.controller import Controller
from helpers.character_asset import write_character
from helpers.validator import validate

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.io.character import load_character
from fabrik3d.io.scene import Scene

UP = np.array([0.0, 0.3, 0.2])  # the right hand's move at frame 30: up and forward


def keyed_late_goal() -> Controller:
    """Frame 0: the left hand pinned, keyed (the right hand free); frame 30: the right hand raised, keyed."""
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", c.result.positions[sk.index("hand_l")] + [0.05, 0.0, 0.0])
    c.set_key()
    c.go_to_frame(30)
    c.move_target("hand_r", c.result.positions[sk.index("hand_r")] + UP)
    c.set_key()
    return c


def test_a_key_before_a_goals_first_key_shows_its_pose_without_red_and_the_frames_between_follow() -> None:
    c = keyed_late_goal()
    sk = c.scene.skeleton
    keyed_0 = c.animation.keys[0].pose.positions[sk.index("hand_r")]
    c.go_to_frame(0)
    # the keyed pose, the right hand free in it (no target: its handle on the hand, not red)
    np.testing.assert_array_equal(c.result.positions[sk.index("hand_r")], keyed_0)
    assert c.unreachable == [] and "hand_r" not in c.targets and "hand_r" not in c.result.errors
    row = c.effector_rows()[sk.end_effectors.index("hand_r")]
    assert (row["targeted"], row["unreachable"]) == (False, False)
    # the frames between rise from the keyed pose to the target (no jump at frame 1), none red
    heights = []
    for f in range(0, 31, 3):
        c.go_to_frame(f)
        assert c.unreachable == [], f
        heights.append(c.result.positions[sk.index("hand_r"), 1])
    assert heights[1] - heights[0] < 0.05 < heights[-1] - heights[0]  # (was: 0.3 up at frame 1 already)
    assert all(b >= a - 1e-3 for a, b in itertools.pairwise(heights)), heights
    c.go_to_frame(30)
    assert "hand_r" in c.targets and c.result.errors["hand_r"] <= c.tolerance


def test_goals_hold_before_their_first_key_where_no_key_holds_a_pose() -> None:
    """The library's rule: keys of goals only (a scene file's, the CLI's) hold a goal's first value before its
    first key, as before; once a key holds a pose, the keyed poses lead there."""
    first, later = [0.3, 1.2, 0.3], [0.1, 1.0, 0.4]
    goals_only = Animation((Key(0, {"hand_l": first}), Key(30, {"hand_l": later, "hand_r": later})))
    assert sorted(goals_only.goals_at(0).targets) == ["hand_l", "hand_r"]
    np.testing.assert_allclose(goals_only.goals_at(10).targets["hand_r"].position, later)
    body = fabrik3d.presets.get("humanoid")
    pose = fabrik3d.solve(body, {"hand_l": first})
    posed = Animation((Key(0, {"hand_l": first}, pose=pose), Key(30, {"hand_l": later, "hand_r": later}, poles={
        "hand_r": [0.0, 1.0, -0.5]}, root_target=[0.0, 0.95, 0.1])))  # fmt: skip
    for f in (0, 10, 29):
        g = posed.goals_at(f)
        assert sorted(g.targets) == ["hand_l"] and g.poles == {} and g.root_target is None, f
    g = posed.goals_at(30)
    assert sorted(g.targets) == ["hand_l", "hand_r"] and list(g.poles) == ["hand_r"] and g.root_target is not None
    assert sorted(posed.goals_at(45).targets) == ["hand_l", "hand_r"]  # (held after its last key, as before)


def test_hover_labels_name_a_characters_handles_by_role_with_the_bone_in_brackets(tmp_path: Path) -> None:
    from fabrik3d_web.view.delivery import ImageDelivery, role_names
    from fabrik3d_web.view.scene_view import SceneView

    model = load_character(write_character(tmp_path, "hero", "mixamo"))
    scene = SceneView(lambda *_: None, lambda *_: None, lambda *_: None)
    scene.set_skeleton(model.skeleton, 1.8, "mixamorig:Head")
    scene.set_show_poles(True)
    delivery = ImageDelivery(None, scene)
    scene.render_window.Render()
    bare = {label for label, _, _ in delivery.handle_points()}
    assert "mixamorig:LeftHandMiddle1" in bare  # (the defect: the rig's names)
    scene.roles = role_names(model)  # (as the web app does when it shows a character)
    labels = {label for label, _, _ in delivery.handle_points()}
    for label in (
        "hand_l [mixamorig:LeftHandMiddle1]",
        "hand_r [mixamorig:RightHandMiddle1]",
        "foot_l [mixamorig:LeftToeBase]",
        "head [mixamorig:Head]",
        "pelvis [mixamorig:Hips] (root: moves the whole skeleton)",
        "elbow_l pole [mixamorig:LeftForeArm]",
        "knee_r pole [mixamorig:RightLeg]",
        "head [mixamorig:Head] looks here",
    ):
        assert label in labels, sorted(labels)
    assert not any(label.startswith("mixamorig:") for label in labels), sorted(labels)
    scene.roles = role_names(None)  # (a preset: the joints' own names, unchanged)
    assert {label for label, _, _ in delivery.handle_points()} == bare


def download_names(filename: str, cases: list[dict], tz: str = "Asia/Kolkata") -> list[str]:
    """The names ``file_name_js(filename)`` gives in node for each case: ``file_stem``, ``frame``,
    ``key_frames`` and ``time`` (milliseconds since 1970, UTC), in time zone ``tz``."""
    from fabrik3d_web.panels.download import file_name_js

    node = require_executable("node", "apt-get install nodejs")
    script = """
        const [expr, cases] = [process.argv[1], JSON.parse(process.argv[2])];
        const RealDate = Date;
        const names = cases.map((c) => {
          globalThis.Date = class extends RealDate {
            constructor(...a) { super(...(a.length ? a : [c.time])); }
            static now() { return c.time; }
          };
          return new Function("file_stem", "frame", "key_frames", "return " + expr)(c.file_stem, c.frame, c.key_frames);
        });
        console.log(JSON.stringify(names));
    """
    proc = subprocess.run([node, "-e", script, file_name_js(filename), json.dumps(cases)], capture_output=True,
                          text=True, timeout=60, check=True, env={"TZ": tz})  # fmt: skip
    return json.loads(proc.stdout)


def test_two_downloads_of_one_character_get_distinct_names_that_say_what_and_when() -> None:
    t = 1748768412345  # 2025-06-01 09:00:12.345 UTC: 14:30:12 in Kolkata
    still = {"file_stem": "hero", "frame": 0, "key_frames": [], "time": t}
    names = download_names(
        "pose.glb",
        [still, {**still, "time": t + 1000}, {**still, "frame": 12, "key_frames": [0, 30]}, {**still, "file_stem": ""}],
    )
    assert names == [
        "hero-pose-2025-06-01-143012.glb",  # (the browser's local time, to the second)
        "hero-pose-2025-06-01-143013.glb",  # (a second later: another name; it was "hero-pose.glb" twice)
        "hero-pose-f12-2025-06-01-143012.glb",  # (the timeline has keys: the frame it shows)
        "fabrik3d-pose-2025-06-01-143012.glb",
    ]
    keyed = {**still, "frame": 12, "key_frames": [0, 30]}
    assert download_names("animation.glb", [keyed]) == ["hero-animation-2025-06-01-143012.glb"]  # (every frame)
    assert download_names("take.json", [keyed]) == ["hero-take-2025-06-01-143012.json"]
    assert download_names("picture.png", [keyed], "UTC") == ["hero-picture-f12-2025-06-01-090012.png"]


def animated_mannequin(tmp_path: Path, mannequin: bool) -> tuple[Path, Controller]:
    c = Controller()
    c.set_key()
    c.go_to_frame(30)
    c.move_target("hand_l", [0.25, 1.25, 0.35])
    c.set_key()
    path = tmp_path / f"animation-{mannequin}.glb"
    path.write_bytes(c.baked_glb(mannequin))
    return path, c


@pytest.mark.node
def test_the_animation_glb_holds_the_mannequin_moving_with_the_bones(tmp_path: Path) -> None:
    path, c = animated_mannequin(tmp_path, True)
    sticks, _ = animated_mannequin(tmp_path, False)
    for p in (path, sticks):
        report = validate(p)[str(p)]
        assert report["errors"] == 0 and report["warnings"] == 0, report["messages"]
    doc = load_character(path).document
    (body,) = doc["meshes"]
    assert body["name"].startswith("fabrik3d_body") and doc["materials"][0]["name"] == "mannequin wood"
    assert [m["name"] for m in load_character(sticks).document["meshes"]] == ["fabrik3d_bones"]
    # three.js plays the take: at frames 0, 15 and 30 the body's vertices are where fabrik3d skins them
    node = require_node_modules("three")
    frames = (0, 15, 30)
    specs = [{"file": str(path), "animation": "take", "time": f / c.animation.fps} for f in frames]
    proc = subprocess.run([node, "skinned_check.mjs", json.dumps(specs)], cwd=JS_DIR, capture_output=True, text=True,
                          timeout=300, check=True)  # fmt: skip
    model = load_character(path)
    assert model.skeleton.names == c.scene.skeleton.names
    skinned = []
    for f, report in zip(frames, json.loads(proc.stdout)):
        c.go_to_frame(f)
        (mesh,) = report["meshes"]
        got = np.array(mesh["skinned"]).reshape(-1, 3)
        np.testing.assert_allclose(got, model.skin(c.result)[0][0], atol=1e-4)
        skinned.append(got)
    hand = np.argmin(np.linalg.norm(skinned[0] - c.animation.keys[0].pose.positions[c.scene.skeleton.index("hand_l")],
                                    axis=1))  # fmt: skip
    assert np.linalg.norm(skinned[2][hand] - skinned[0][hand]) > 0.2  # (the left hand's skin went with the hand)


def test_a_characters_animation_ignores_the_mannequin(tmp_path: Path) -> None:
    """A character writes its own file, mesh and all: the box changes nothing there (as for Pose .glb)."""
    model = load_character(write_character(tmp_path, "hero", "mixamo"))
    c = Controller(Scene(model.skeleton), "hero.glb", model)
    c.set_key()
    assert c.baked_glb(True) == c.baked_glb(False)


def test_the_recorded_take_glb_follows_the_mannequin_box_too(tmp_path: Path) -> None:
    """The Take panel's .glb, like Anim .glb: with the Mannequin box on, the mannequin's body skinned to
    the bones (valid glTF); off, the sticks."""
    c = Controller()
    c.start_recording()
    for k in range(6):
        c.move_target("hand_l", [0.2 + 0.02 * k, 1.2, 0.3])
    c.stop_recording()
    for mannequin, name in ((True, "fabrik3d_body"), (False, "fabrik3d_bones")):
        path = tmp_path / f"take-{mannequin}.glb"
        path.write_bytes(c.take_glb(mannequin))
        assert [m["name"][: len(name)] for m in load_character(path).document["meshes"]] == [name]
