"""Orientation targets, the pelvis's turn and the look in the web UI's controller (issue 29, item 2),
without a browser: the real ``Controller`` and solver."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fabrik3d_web.document.controller import Controller
from fabrik3d_web.document.orienting import turned_about

import fabrik3d
import fabrik3d.solver.fk
from fabrik3d import rotations as rot


def angle_deg(a, b) -> float:
    return math.degrees(rot.angle_between(tuple(np.asarray(a, float)), tuple(np.asarray(b, float))))


def face_miss(c: Controller, point: np.ndarray) -> float:
    sk = c.scene.skeleton
    head = c.result.positions[sk.index("head")]
    aim = (point - head) / np.linalg.norm(point - head)
    face = fabrik3d.face_axis(sk, c.result.rotations)
    return math.degrees(math.acos(min(1.0, float(face @ aim))))


def turned_hand(c: Controller, degrees: float) -> tuple[np.ndarray, np.ndarray]:
    """The hand_l's orientation and target turned about its wrist by ``degrees`` (about an axis
    mostly toward the viewer), as the R drag does."""
    sk = c.scene.skeleton
    w = sk.index("wrist_l")
    axis = np.array([0.3, 0.3, 0.9]) / np.linalg.norm([0.3, 0.3, 0.9])
    turn = turned_about((0, 0, 0, 1), axis, math.radians(degrees))
    q0, p0, pivot = c.target_orientation("hand_l"), c.effector_point("hand_l"), c.result.positions[w]
    point = pivot + np.array(rot.rotate(tuple(turn), tuple(p0 - pivot)))
    return turned_about(q0, axis, math.radians(degrees)), point


def test_a_turned_hand_meets_its_turn_and_keeps_it_through_a_20_cm_drag() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", [0.3, 1.15, 0.3])
    q, point = turned_hand(c, 45.0)
    c.orient_target("hand_l", q, point)
    h = sk.index("hand_l")
    assert angle_deg(c.result.rotations[h], q) < 3.0
    assert np.linalg.norm(c.result.positions[h] - point) < 2e-3
    assert c.state()["orientations"]["hand_l"] == pytest.approx(np.round(q, 6).tolist())
    c.begin_drag()
    for k in range(1, 21):  # 20 cm up, 1 cm a move, as a drag does
        c.move_target("hand_l", point + np.array([0.0, 0.01 * k, 0.0]), undoable=False)
        assert angle_deg(c.result.rotations[h], q) < 2.0
    c.end_drag()
    assert np.linalg.norm(c.result.positions[h] - (point + np.array([0.0, 0.2, 0.0]))) < 2e-3
    c.undo()  # the drag
    c.undo()  # the turn
    assert "hand_l" not in c.orientations


def test_turns_within_the_wrist_leave_the_body_where_it_was() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", [0.3, 1.15, 0.3])
    before = c.result.positions.copy()
    for degrees in (15, 30, 45, 60):
        q, point = turned_hand(c, 15.0)
        c.orient_target("hand_l", q, point, undoable=False)
        assert angle_deg(c.result.rotations[sk.index("hand_l")], q) < 1.0, degrees
    moved = np.linalg.norm(c.result.positions - before, axis=1)
    for name in ("head", "chest", "hand_r", "toe_l", "toe_r"):
        assert moved[sk.index(name)] < 1e-3, name


def test_the_pelvis_turns_and_tilts_with_the_toes_where_they_are() -> None:
    c = Controller()
    sk = c.scene.skeleton
    for toe in ("toe_l", "toe_r"):
        c.pin_effector(toe)
    toes = {t: c.targets[t].copy() for t in ("toe_l", "toe_r")}
    wanted = rot.from_euler_xyz((15.0, 30.0, 0.0))
    c.orient_root(wanted)
    assert angle_deg(c.result.rotations[sk.root], wanted) < 1.0
    for t, p in toes.items():
        assert np.linalg.norm(c.result.positions[sk.index(t)] - p) < 1e-3
    assert c.state()["root_orientation"] is not None
    c.free_turns()
    assert c.root_orientation is None and not c.orientations
    c.undo()
    assert c.root_orientation is not None


def test_the_head_looks_and_keeps_looking_until_freed() -> None:
    c = Controller()
    sk = c.scene.skeleton
    head = c.result.positions[sk.index("head")]
    point = head + 2.0 * np.array([math.sin(math.radians(40)), 0.0, math.cos(math.radians(40))])
    home = c.look_point()
    assert face_miss(c, home) < 1.0  # the look handle waits in front of the face
    c.look_toward(point)
    assert face_miss(c, point) < 2.0 and c.state()["look_target"] is not None
    c.move_target("hand_l", [0.3, 1.15, 0.3])
    assert face_miss(c, point) < 2.0  # still looking after a drag
    np.testing.assert_allclose(c.look_point(), point)
    neck = fabrik3d.solver.fk.joint_turn(sk, c.result.rotations, "neck")
    c.free_look()
    assert c.look is None and c.state()["look_target"] is None
    assert face_miss(c, point) < 2.0  # the neck and the head keep their turns once freed
    c.move_target("hand_l", [0.25, 1.2, 0.3])
    assert angle_deg(fabrik3d.solver.fk.joint_turn(sk, c.result.rotations, "neck"), neck) < 0.5
    c.undo()  # the move
    c.undo()  # the freed look
    assert c.look is not None


def test_keys_keep_orientations_and_scrubbing_shows_them() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", [0.3, 1.15, 0.3])
    q, point = turned_hand(c, 40.0)
    c.orient_target("hand_l", q, point)
    c.set_key()
    key = c.animation.key_at(0)
    assert key is not None and key.targets["hand_l"].orientation is not None
    c.go_to_frame(30)
    c.free_turns()
    c.move_target("hand_l", [0.2, 1.3, 0.35])
    c.set_key()
    c.go_to_frame(0)
    assert angle_deg(c.orientations["hand_l"], q) < 1e-6
    assert angle_deg(c.result.rotations[sk.index("hand_l")], q) < 3.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.orient_target("elbow_l", [0, 0, 0, 1]), "not an end effector"),
        (lambda c: c.orient_target("hand_l", [0, 0, 0, 2]), "not a unit quaternion"),
        (lambda c: c.orient_target("hand_l", [0, 0, 1]), "turn target hand_l"),
        (lambda c: c.orient_root([float("nan"), 0, 0, 1]), "turn pelvis"),
        (lambda c: c.look_toward([1e12, 0, 0]), "look"),
        (lambda c: c.orient_target("hand_l", [0, 0, 0, 1], [1, float("inf"), 0]), "turn target hand_l"),
    ],
)
def test_bad_turns_are_named_and_change_nothing(call, message) -> None:
    c = Controller()
    before = (c.result, dict(c.targets), dict(c.orientations), c.root_orientation, c.look)
    with pytest.raises(ValueError, match=message):
        call(c)
    assert (c.result, dict(c.targets), dict(c.orientations), c.root_orientation, c.look) == before
