"""Keys hold the pose the user saw (issue 29, item 5), in the web UI's controller without a browser: the
real ``Controller`` on the humanoid and the real solver. FK turns stay through a later drag; a key keeps
the pose shown (turns about the bones included) and going back to its frame shows that very pose; the
downloaded scene file carries the keyed poses; undo of a key edit brings the previous keys back.

The issue's bar is joint positions within 1 mm and rotations within 0.5 degrees; keys show their pose
exactly, so the checks here are tight (1e-9 m, 1e-6 degrees)."""

from __future__ import annotations

import numpy as np
import pytest
from fabrik3d_web.document.controller import Controller

REACH_0 = [0.3, 1.15, 0.3]  # the left hand in front of the chest (frame 0)
REACH_30 = [0.45, 1.0, 0.25]  # lower and to the side (frame 30)
POSITION_ATOL = 1e-9  # m (the bar: 1 mm)
ROTATION_ATOL = 1e-6  # degrees (the bar: 0.5)


def angles_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(n,)`` angle in degrees of the rotation taking each of the ``(n, 4)`` unit quaternions ``a`` to
    ``b`` (q and -q are one rotation; atan2 of the chord stays accurate near 0)."""
    b = np.where(np.sum(a * b, axis=1, keepdims=True) < 0.0, -b, b)
    chord = np.linalg.norm(a - b, axis=1)
    return np.degrees(4.0 * np.arctan2(chord, np.linalg.norm(a + b, axis=1)))


def assert_pose(result, positions: np.ndarray, rotations: np.ndarray, where: str) -> None:
    np.testing.assert_allclose(result.positions, positions, rtol=0, atol=POSITION_ATOL, err_msg=where)
    worst = float(angles_between(result.rotations, rotations).max())
    assert worst <= ROTATION_ATOL, f"{where}: a joint's frame is {worst:.3g} degrees off the keyed one"


def keyed_two_poses() -> tuple[Controller, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """Frame 0: spine and neck twisted by FK, then the left hand dragged (the turns stay), the hand turned
    on its own; keyed. Frame 30: the hand elsewhere and the neck twisted the other way; keyed. Returns the
    controller (at frame 30) and copies of the poses shown when each key was set."""
    c = Controller()
    c.turn("spine_02", [0, 20, 0])
    c.turn("neck", [0, 40, 0])
    assert c.joint_angles("spine_02") == pytest.approx([0, 20, 0], abs=1e-6)
    assert c.joint_angles("neck") == pytest.approx([0, 40, 0], abs=1e-6)
    for k in np.linspace(0.0, 1.0, 6)[1:]:  # a drag from the hand's place to REACH_0, in five moves
        c.move_target("hand_l", (1 - k) * c.effector_point("hand_l") + k * np.array(REACH_0), undoable=False)
    # the FK turns stayed through the drag, and the hand got there
    assert c.joint_angles("spine_02") == pytest.approx([0, 20, 0], abs=0.5)
    assert c.joint_angles("neck") == pytest.approx([0, 40, 0], abs=0.5)
    assert c.result.errors["hand_l"] <= 1e-3
    c.turn("hand_l", [0, 0, 20])  # the hand's own turn (a leaf: nothing below it moves)
    c.set_key()
    keyed = {0: (c.result.positions.copy(), c.result.rotations.copy())}
    assert [k.frame for k in c.animation.keys] == [0]

    c.go_to_frame(30)
    c.move_target("hand_l", REACH_30)
    assert c.result.errors["hand_l"] <= 1e-3
    c.turn("neck", [0, -30, 0])
    assert c.joint_angles("neck") == pytest.approx([0, -30, 0], abs=1e-6)
    c.set_key()
    keyed[30] = (c.result.positions.copy(), c.result.rotations.copy())
    assert [k.frame for k in c.animation.keys] == [0, 30]
    assert np.linalg.norm(keyed[0][0] - keyed[30][0], axis=1).max() > 0.1  # two different poses
    return c, keyed


def test_a_key_shows_the_pose_it_was_set_with_and_frames_between_run_from_one_to_the_other() -> None:
    c, keyed = keyed_two_poses()
    c.go_to_frame(15)
    # between the keys: the neck's twist between the two keyed ones, the spine's (the same in both) kept
    neck = c.joint_angles("neck")
    assert -29.0 < neck[1] < 39.0 and abs(neck[0]) < 0.5 and abs(neck[2]) < 0.5, neck
    assert c.joint_angles("spine_02") == pytest.approx([0, 20, 0], abs=0.5)
    assert c.result.errors["hand_l"] <= 1e-3  # the hand on its interpolated target
    for frame in (0, 30, 0):
        c.go_to_frame(frame)
        assert_pose(c.result, *keyed[frame], f"frame {frame}")
    c.go_to_frame(0)
    assert c.joint_angles("neck") == pytest.approx([0, 40, 0], abs=1e-6)
    assert c.joint_angles("spine_02") == pytest.approx([0, 20, 0], abs=1e-6)
    assert c.joint_angles("hand_l") == pytest.approx([0, 0, 20], abs=1e-6)


def test_the_downloaded_scene_file_carries_the_keyed_poses() -> None:
    c, keyed = keyed_two_poses()
    c.go_to_frame(15)  # (downloaded away from a key: the file still holds both poses)
    between = (c.result.positions.copy(), c.result.rotations.copy())
    text = c.scene_json()
    loaded = Controller()
    loaded.load_scene_text(text, "scene.json")
    assert [k.frame for k in loaded.animation.keys] == [0, 30]
    assert all(k.pose is not None for k in loaded.animation.keys)
    assert loaded.frame == 0  # (a scene with keys opens at the range's first frame)
    assert_pose(loaded.result, *keyed[0], "the loaded scene at frame 0")
    loaded.go_to_frame(30)
    assert_pose(loaded.result, *keyed[30], "the loaded scene at frame 30")
    loaded.go_to_frame(15)
    assert_pose(loaded.result, *between, "the loaded scene at frame 15")
    loaded.go_to_frame(0)
    assert_pose(loaded.result, *keyed[0], "the loaded scene back at frame 0")


def test_undo_of_a_key_edit_brings_the_previous_keys_back() -> None:
    c, keyed = keyed_two_poses()
    before = c.animation
    # the key at 0 replaced with another pose (the neck twisted the other way)
    c.go_to_frame(0)
    c.turn("neck", [0, -10, 0])
    c.set_key()
    replaced = (c.result.positions.copy(), c.result.rotations.copy())
    c.go_to_frame(30)
    c.go_to_frame(0)
    assert_pose(c.result, *replaced, "frame 0 after the key was replaced")
    assert c.joint_angles("neck") == pytest.approx([0, -10, 0], abs=1e-6)
    # undo the key edit: the keys before it, the key at 0 holding its first pose
    assert c.undo()
    assert c.animation is before
    assert [k.frame for k in c.animation.keys] == [0, 30]
    np.testing.assert_array_equal(c.animation.keys[0].pose.positions, keyed[0][0])
    c.go_to_frame(30)
    assert_pose(c.result, *keyed[30], "frame 30 after the undo")
    c.go_to_frame(0)
    assert_pose(c.result, *keyed[0], "frame 0 after the undo")
    assert c.joint_angles("neck") == pytest.approx([0, 40, 0], abs=1e-6)
    # redo: the replaced key again
    assert c.redo()
    c.go_to_frame(0)
    assert_pose(c.result, *replaced, "frame 0 after the redo")
    # undo of setting the key at 30: only the key at 0 is left, and it still holds its pose
    c.undo()
    c.undo()  # (the replaced key at 0, then the turn of the neck before it)
    c.undo()  # the key at 30
    assert [k.frame for k in c.animation.keys] == [0]
    c.go_to_frame(0)
    assert_pose(c.result, *keyed[0], "frame 0 with the key at 30 undone")
