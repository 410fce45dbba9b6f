"""The timeline and the undo history of the web UI without a browser (fabrik3d_web.document.timeline, .history):
the real controller and the real solver."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fabrik3d_web.document.controller import Controller

from fabrik3d.animation import Animation, Key, bake
from fabrik3d.io.scene import Scene, parse_scene
from fabrik3d.model import presets

REACH = np.array([0.25, 1.25, 0.35])


def keyed() -> Controller:
    c = Controller()
    c.move_target("hand_l", c.result.positions[c.scene.skeleton.index("hand_l")])
    c.set_key()
    c.go_to_frame(30)
    c.move_target("hand_l", REACH)
    c.set_key()
    return c


def test_the_pose_at_a_frame_is_the_baked_pose_there() -> None:
    c = keyed()
    c.go_to_frame(17)
    take = bake(c.scene.skeleton, c.animation, frames=(0, 17))
    np.testing.assert_array_equal(c.result.positions, take.positions[-1])
    np.testing.assert_allclose(c.targets["hand_l"], c.animation.goals_at(17).targets["hand_l"].position)
    # back and forth: the same pose again (baked once, kept)
    c.go_to_frame(3)
    c.go_to_frame(17)
    np.testing.assert_array_equal(c.result.positions, take.positions[-1])
    # switching the limits off bakes again, without them
    c.set_limits(False)
    c.go_to_frame(16)
    c.go_to_frame(17)
    free = bake(c.scene.skeleton.without_constraints(), c.animation, frames=(0, 17))
    np.testing.assert_array_equal(c.result.positions, free.positions[-1])


def test_key_edits_are_undo_steps_and_scrubbing_is_not() -> None:
    c = keyed()
    assert [k.frame for k in c.animation.keys] == [0, 30]
    depth = len(c.undo_stack)
    c.go_to_frame(10)
    assert len(c.undo_stack) == depth
    c.move_key(30, 40)
    assert [k.frame for k in c.animation.keys] == [0, 40] and c.frame == 40
    c.delete_key(0)
    assert [k.frame for k in c.animation.keys] == [40]
    c.undo()
    assert [k.frame for k in c.animation.keys] == [0, 40]
    c.undo()
    assert [k.frame for k in c.animation.keys] == [0, 30]
    c.redo()
    assert [k.frame for k in c.animation.keys] == [0, 40]


def test_timeline_settings_are_checked_and_undoable() -> None:
    c = keyed()
    c.set_timeline("24", "0", "45", "linear")
    assert (c.animation.fps, c.animation.last, c.animation.interpolation) == (24.0, 45, "linear")
    c.set_timeline(24, 0, "", "linear")  # an emptied end: the last key's frame
    assert c.animation.end is None and c.animation.last == 30
    c.undo()
    assert c.animation.last == 45
    before = c.animation
    for args, message in [
        (("0", 0, 30, "smooth"), "fps: must be finite and > 0"),
        (("abc", 0, 30, "smooth"), "fps: 'abc' is not a number"),
        ((30, 20, 10, "smooth"), "end: frame 10 is before start 20"),
        ((30, 0, 30, "cubic"), "interpolation: expected one of"),
        ((30, -1, 30, "smooth"), "start: frame -1 is outside"),
    ]:
        with pytest.raises(ValueError, match=message):
            c.set_timeline(*args)
        assert c.animation is before
    with pytest.raises(ValueError, match=r"frame: 99 is outside the range 0\.\.45"):
        c.go_to_frame(99)
    with pytest.raises(ValueError, match="frame 7: there is no key on this frame"):
        c.delete_key(7)
    with pytest.raises(ValueError, match="frame 30: there is a key on this frame already"):
        c.move_key(0, 30)


def test_the_downloads_carry_the_keys_and_the_baked_animation() -> None:
    c = keyed()
    c.set_timeline(30, 0, 30, "smooth")
    again = parse_scene(c.scene_json(), "download")
    assert [k.frame for k in again.animation.keys] == [0, 30]
    take = json.loads(c.animation_json())
    assert len(take["times"]) == 31
    assert c.baked_glb()[:4] == b"glTF"
    # a scene with keys opens at its first frame, posed there
    opened = Controller(again, "download")
    assert opened.frame == 0 and [k.frame for k in opened.animation.keys] == [0, 30]
    with pytest.raises(ValueError, match="animation: set a key first"):
        Controller().baked_glb()


def test_undo_after_a_preset_switch_or_an_opened_file_brings_the_scene_back() -> None:
    c = Controller()
    c.move_target("hand_l", REACH)
    pose = c.result.positions.copy()
    c.load_preset("robot_arm")
    assert c.source == "robot_arm" and len(c.scene.skeleton) != 25
    assert c.skeleton_changed_by(c.undo) is True
    assert c.source == "humanoid" and len(c.scene.skeleton) == 65
    np.testing.assert_array_equal(c.result.positions, pose)
    np.testing.assert_array_equal(c.targets["hand_l"], REACH)
    assert c.skeleton_changed_by(c.redo) is True and c.source == "robot_arm"
    c.undo()
    scene = Scene(presets.get("octopus"), animation=Animation((Key(0, {}),)))
    c.load_scene_text(json.dumps(scene.to_dict()), "octopus.json")
    assert c.source == "octopus.json"
    c.undo()
    assert c.source == "humanoid" and "hand_l" in c.targets
    # a posing change keeps the joints: not a skeleton change for the view
    c.set_stiffness("chest", 0.2)
    assert c.skeleton_changed_by(c.undo) is False


def test_baking_ahead_fills_the_range_a_few_frames_at_a_time() -> None:
    c = keyed()
    c.set_timeline(30, 0, 20, "smooth")
    c.set_key()  # (a key edit: the baked frames are forgotten)
    assert len(c._baked) == 0
    steps = 0
    while c.bake_ahead(3):
        steps += 1
    assert steps == 6 and len(c._baked) == 21  # 3 + 3 + ... frames, the last step finishing the range
    take = bake(c.scene.skeleton, c.animation)
    c.go_to_frame(20)
    np.testing.assert_array_equal(c.result.positions, take.positions[-1])
    assert Controller().bake_ahead(3) is False  # no keys: nothing to bake


def test_a_characters_scene_download_names_the_character_and_its_rig_map(tmp_path) -> None:
    from helpers.character_asset import write_character

    from fabrik3d.io.character import load_character, scene_character

    path = write_character(tmp_path, "hero", "mixamo", armature=True)
    model = load_character(path)
    c = Controller()
    c.load_character_file(path)
    text = c.scene_json()
    scene = parse_scene(text, "download")
    assert scene.character == {"file": "hero.glb", "rig_map": dict(model.rig_map)}
    (tmp_path / "scene.json").write_text(text)
    opened = scene_character(scene, tmp_path / "scene.json")
    assert opened is not None and opened.skeleton.names == model.skeleton.names


def test_a_frame_far_ahead_of_the_bake_shows_a_preview_then_its_baked_pose() -> None:
    """Issue 32 item 8: right after a key edit on a long range, a frame the user goes to far ahead of the
    background bake shows at once the curve through the keys' poses, and its baked pose once the bake
    reaches it; a near frame is baked at once; an edit on a preview keeps the edit."""
    from fabrik3d_web.document.timeline import QUICK_BAKE

    from fabrik3d.model.key_poses import pose_curve

    c = keyed()
    c.set_timeline(30, 0, 600, "smooth")
    c.go_to_frame(580, quick=True)
    assert c.previewing == 580
    curve = pose_curve(c.scene.skeleton, c.animation.keys, [580], "smooth")[0]
    np.testing.assert_array_equal(c.result.positions, curve.positions)
    np.testing.assert_allclose(c.targets["hand_l"], c.animation.goals_at(580).targets["hand_l"].position)
    assert not c.refine_preview()  # (not baked yet)
    while c.bake_ahead(50):
        pass
    assert c.refine_preview() and c.previewing is None
    take = bake(c.scene.skeleton, c.animation, frames=(0, 580))
    np.testing.assert_allclose(c.result.positions, take.positions[-1], atol=1e-12)
    # near the baked end a frame is baked at once (no preview)
    c.set_timeline(30, 0, 601, "smooth")
    c.go_to_frame(QUICK_BAKE - 1, quick=True)
    assert c.previewing is None
    # an edit on a preview is kept when the bake reaches the frame
    c.go_to_frame(500, quick=True)
    assert c.previewing == 500
    c.move_target("hand_l", REACH + np.array([0.0, 0.1, 0.0]))
    while c.bake_ahead(50):
        pass
    assert not c.refine_preview() and c.previewing is None
    np.testing.assert_allclose(c.targets["hand_l"], REACH + np.array([0.0, 0.1, 0.0]))
