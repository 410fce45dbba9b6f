"""Hand shapes, copy and paste and the pose library in the web UI's controller (fabrik3d_web.document.hands,
fabrik3d_web.document.poses), without a browser: the real library."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fabrik3d_web.document.controller import Controller

import fabrik3d
from fabrik3d.solver.hands import palm_center

FINGERTIPS = [f"{f}_end_l" for f in ("index", "middle", "ring", "pinky")]


def positions(c: Controller, names: list[str]) -> np.ndarray:
    sk = c.scene.skeleton
    return c.result.positions[[sk.index(n) for n in names]]


def test_a_fist_curls_the_fingers_as_the_library_does_and_is_one_undo_step() -> None:
    c = Controller()
    sk, rest = c.scene.skeleton, c.result
    c.shape_hand("l", "fist")
    want, _ = fabrik3d.shape_hand(sk, rest.positions, rest.rotations, "l", "fist")
    np.testing.assert_allclose(c.result.positions, want, atol=1e-12)
    palm = palm_center(sk, c.result.positions, "l")
    assert np.linalg.norm(positions(c, FINGERTIPS) - palm, axis=1).max() < 0.03
    assert c.hand_state("l") == {
        "hand_curls": dict.fromkeys(("thumb", "index", "middle", "ring", "pinky"), 1.0),
        "hand_spread": 0.0,
        "hand_shape": "fist",
        "hand_amount": 1.0,
    }
    assert c.built is c.result and len(c.undo_stack) == 1
    c.undo()
    np.testing.assert_array_equal(c.result.positions, rest.positions)


def test_amount_and_curls_reshape_from_the_hand_before_the_edit() -> None:
    c = Controller()
    sk, rest = c.scene.skeleton, c.result
    c.shape_hand("l", "fist")
    c.set_hand_amount("l", 0.5)
    half, _ = fabrik3d.shape_hand(sk, rest.positions, rest.rotations, "l", "fist", 0.5)
    np.testing.assert_allclose(c.result.positions, half, atol=1e-12)
    c.set_hand_amount("l", 1.0)
    c.curl_finger("l", "index", 0.0)
    curls = c.hand_state("l")["hand_curls"]
    assert curls["index"] < 0.1 and curls["middle"] == 1.0
    # a curl alone (a new edit) moves only its finger
    c.move_target("hand_r", [-0.5, 1.2, 0.3])
    before = c.result.positions.copy()
    c.curl_finger("l", "pinky", 0.0)
    moved = np.flatnonzero(np.linalg.norm(c.result.positions - before, axis=1) > 1e-9)
    assert {sk.names[j] for j in moved} == {"pinky_02_l", "pinky_03_l", "pinky_end_l"}


def test_mirror_hand_gives_the_other_hand_mirror_image_fingers() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.shape_hand("l", "point")
    c.mirror_hand("l")
    p = c.result.positions
    for name in (n for n in sk.names if n.endswith("_l") and n.split("_")[0] in ("thumb", "index", "pinky")):
        left, right = p[sk.index(name)], p[sk.index(name[:-1] + "r")]
        np.testing.assert_allclose(right, left * [-1, 1, 1], atol=1e-3)
    assert c.hand_state("r")["hand_curls"] == c.hand_state("l")["hand_curls"]


def test_a_shaped_hand_is_kept_by_later_drags_and_keys() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.shape_hand("l", "fist")
    c.move_target("hand_l", [0.5, 1.2, 0.3])
    assert c.hand_state("l")["hand_curls"]["index"] == 1.0
    c.set_key()
    assert c.animation.key_at(0).pose is not None
    c.go_to_frame(10)
    assert c.hand_state("l")["hand_curls"]["middle"] == 1.0
    palm = palm_center(sk, c.result.positions, "l")
    assert np.linalg.norm(positions(c, FINGERTIPS) - palm, axis=1).max() < 0.03


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.shape_hand("l", "claw"), "hand shape: expected one of"),
        (lambda c: c.shape_hand("x", "fist"), "hand: expected 'l' or 'r'"),
        (lambda c: c.curl_finger("l", "toe", 0.5), "curl: expected a finger"),
        (lambda c: c.curl_finger("l", "index", 2), "from 0 to 1"),
        (lambda c: c.spread_hand("l", float("nan")), "spread: expected a number"),
        (lambda c: c.set_hand_amount("l", -1), "amount: expected a number from 0 to 1"),
        (lambda c: c.paste_pose(), "nothing copied yet"),
        (lambda c: c.apply_library_pose("nope", False), "no pose 'nope'"),
        (lambda c: c.apply_library_pose("T", False, ["wings"]), "parts are some of"),
        (lambda c: c.apply_library_pose("T", False, []), "choose at least one part"),
        (lambda c: c.apply_library_pose("T", False, None, False, 2), "amount is a number from 0 to 1"),
        (lambda c: c.save_library_pose(""), "type a name"),
    ],
)
def test_bad_hand_and_pose_actions_change_nothing(call, message: str) -> None:
    c = Controller()
    before = c.result
    with pytest.raises(ValueError, match=message):
        call(c)
    assert c.result is before and not c.undo_stack


def test_copy_paste_mirrored_and_a_limb() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.turn("shoulder_l", [0, 0, -40])
    c.shape_hand("l", "fist")
    shown = c.result.positions.copy()
    c.copy_pose()
    assert c.clipboard_what == "the whole pose"
    c.reset_pose()
    c.paste_pose()
    np.testing.assert_allclose(c.result.positions, shown, atol=1e-3)
    c.reset_pose()
    c.paste_pose(True)
    for name in ("hand_l", "elbow_l", "index_end_l", "thumb_end_l"):
        np.testing.assert_allclose(
            c.result.positions[sk.index(name[:-1] + "r")], shown[sk.index(name)] * [-1, 1, 1], atol=1e-3
        )
    c.reset_pose()
    c.paste_pose()
    c.turn("hip_l", [-30, 0, 0])
    c.copy_pose("hand_l")  # the left arm (and its fingers) only
    assert c.clipboard_what == "the left arm"
    legs = c.result.positions[sk.index("toe_l")].copy()
    c.reset_pose()
    c.paste_pose()
    np.testing.assert_allclose(c.result.positions[sk.index("index_end_l")], shown[sk.index("index_end_l")], atol=1e-3)
    assert np.linalg.norm(c.result.positions[sk.index("toe_l")] - legs) > 0.01  # the leg was not pasted


def test_the_library_saves_applies_and_deletes(tmp_path) -> None:
    c = Controller()
    c.set_library_path(str(tmp_path))
    assert c.library_path == tmp_path / "poses.json"
    c.turn("elbow_r", [90, 0, 0])
    c.shape_hand("r", "grip")
    shown = c.result.positions.copy()
    c.save_library_pose("grab", b"\x89PNG\r\n\x1a\n" + b"0" * 20)
    rows, problem = c.library_rows()
    assert problem == "" and rows[0]["name"] == "grab" and rows[0]["saved"] and rows[0]["thumbnail"]
    assert {r["name"] for r in rows if not r["saved"]} >= {"T", "A", "idle", "hand fist"}
    c.reset_pose()
    c.apply_library_pose("grab", True)
    assert np.abs(c.result.positions - shown).max() < 1e-3
    c.reset_pose()
    elbow = c.joint_angles("elbow_r")  # (the relaxed stance's: the arm hangs, a little bent)
    c.apply_library_pose("grab", True, ["hands"])
    assert c.hand_state("r")["hand_curls"]["index"] > 0.5
    assert c.joint_angles("elbow_r") == pytest.approx(elbow, abs=1e-6)  # (the hands only: the elbow as it was)
    c.delete_library_pose("grab")
    assert json.loads((tmp_path / "poses.json").read_text())["poses"] == {}
    with pytest.raises(ValueError, match="no pose 'grab'"):
        c.delete_library_pose("grab")
    (tmp_path / "poses.json").write_text("{not json")
    rows, problem = c.library_rows()
    assert "poses.json" in problem and all(not r["saved"] for r in rows)
    c.set_library_path(str(tmp_path / "missing" / "p.json"))
    with pytest.raises(ValueError, match="does not exist"):
        c.save_library_pose("x")
