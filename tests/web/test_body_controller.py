"""The body in the web UI without a browser (issue 31): the mannequin skinned into the pose, the floor
and balance switches (scene files keep them, one undo step each), the centre of mass over the support
area or not, the proportion sliders (the pose's joint turns kept); and the app's callbacks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fabrik3d_web.document.controller import Controller

from fabrik3d import rotations as rot
from fabrik3d import solve
from fabrik3d.io.scene import parse_scene
from fabrik3d.model.mannequin import mannequin_mesh
from fabrik3d.solver.fk import joint_turn


def _turns(c: Controller) -> np.ndarray:
    sk = c.scene.skeleton
    return np.array([joint_turn(sk, c.result.rotations, name) for name in sk.names if name != sk.names[sk.root]])


def _falling(c: Controller) -> None:
    """Both toes pinned, the pelvis dragged 30 cm forward."""
    sk = c.scene.skeleton
    c.pin_effector("toe_l")
    c.pin_effector("toe_r")
    c.move_root(c.result.positions[sk.root] + [0.0, 0.0, 0.3])


def test_the_mannequin_follows_the_pose_rigidly() -> None:
    c = Controller()
    sk = c.scene.skeleton
    rest, _, joints, _, _ = mannequin_mesh(sk)
    at_rest, _ = c.mannequin_skinned(sk.rest_positions, sk.rest_frames)
    np.testing.assert_allclose(at_rest, rest, atol=1e-5)
    rest_frames = rot.quat_to_matrix(sk.rest_frames)
    local = np.einsum("vji,vj->vi", rest_frames[joints], rest - sk.rest_positions[joints])

    def rigid() -> np.ndarray:
        """Each vertex kept at its place in its joint's frame: D_j . v, in the current pose."""
        frames = rot.quat_to_matrix(c.result.rotations)
        return c.result.positions[joints] + np.einsum("vij,vj->vi", frames[joints], local)

    # the app opens on the relaxed stance (the arms hanging), the mannequin skinned into it
    np.testing.assert_allclose(c.result.positions, solve(sk, {}).positions, atol=1e-6)
    start, _ = c.mannequin_skinned()
    np.testing.assert_allclose(start, rigid(), atol=1e-4)
    hand = sk.index("hand_l")
    c.move_target("hand_l", c.result.positions[hand] + [0.1, 0.3, 0.2])
    posed, normals = c.mannequin_skinned()
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(posed, rigid(), atol=1e-4)
    wrist = joints == sk.index("wrist_l")  # (the palm: the wrist carries it)
    assert np.linalg.norm(posed[wrist].mean(axis=0) - start[wrist].mean(axis=0)) > 0.2


def test_a_character_has_no_mannequin() -> None:
    c = Controller()
    c.character = object()  # (any character: its own mesh)
    assert c.mannequin() is None and c.proportions() is None
    with pytest.raises(ValueError, match="own mesh"):
        c.mannequin_skinned()


def test_the_humanoid_stands_on_a_floor_and_the_switches_are_undoable_and_saved() -> None:
    c = Controller()
    state = c.body_state()
    assert state["floor_on"] and not state["balance_on"] and state["has_feet"] and state["com_inside"]
    assert c.scene.floor == pytest.approx(0.0)
    c.set_floor(False)
    assert c.scene.floor is None and not c.body_state()["floor_on"]
    c.set_balance(True)  # (balance puts the floor back)
    assert c.scene.balance and c.scene.floor == pytest.approx(0.0)
    saved = json.loads(c.scene_json())["solver"]
    assert saved["balance"] is True and saved["floor"] == pytest.approx(0.0)
    assert parse_scene(c.scene_json()).balance
    c.undo()
    assert c.scene.floor is None and not c.scene.balance
    c.undo()
    assert c.scene.floor == pytest.approx(0.0)
    with pytest.raises(ValueError, match="balance"):
        c.set_balance("yes")


def test_the_floor_keeps_every_joint_above_it() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_root(c.result.positions[sk.root] - [0.0, 0.4, 0.0])
    assert c.result.positions[:, 1].min() >= -1e-3
    assert c.result.positions[sk.root, 1] < 0.6  # (the free feet placed on the floor, the legs bent)
    c.set_floor(False)
    c.move_root(c.result.positions[sk.root] - [0.0, 0.4, 0.0])
    assert c.result.positions[:, 1].min() < -0.05


def test_the_pelvis_far_forward_falls_over_and_balance_brings_it_back() -> None:
    c = Controller()
    _falling(c)
    state = c.balance_state()
    assert not state["inside"] and state["margin"] < -0.02 and not c.body_state()["com_inside"]
    assert len(state["support"]) >= 3 and state["shadow"][1] == pytest.approx(0.0)
    c.set_balance(True)
    assert c.balance_state()["inside"] and c.body_state()["com_inside"]
    for toe in ("toe_l", "toe_r"):
        assert np.linalg.norm(c.result.positions[c.scene.skeleton.index(toe)] - c.targets[toe]) < 1e-3


def test_a_proportion_changes_the_body_keeps_the_joint_turns_and_is_one_undo_step() -> None:
    c = Controller()
    c.move_target("hand_l", c.result.positions[c.scene.skeleton.index("hand_l")] + [0.1, 0.35, 0.15])
    turns, head = _turns(c), c.result.positions[c.scene.skeleton.index("head"), 1]
    c.set_proportion("height", 2.0)
    sk = c.scene.skeleton
    assert c.scene.proportions.height == 2.0 and c.body_state()["proportions"]["height"] == 2.0
    assert sk.rest_positions[sk.index("head"), 1] == pytest.approx(2.0)
    assert c.result.positions[sk.index("head"), 1] / head == pytest.approx(2.0 / 1.75, rel=0.02)
    np.testing.assert_allclose(np.abs(np.einsum("ij,ij->i", _turns(c), turns)), 1.0, atol=1e-4)
    assert json.loads(c.scene_json())["proportions"]["height"] == 2.0
    c.set_proportion("arm", 1.3)
    assert c.scene.proportions.arm == 1.3 and c.scene.proportions.height == 2.0
    c.undo()
    assert c.scene.proportions.arm == 1.0
    c.undo()
    assert c.scene.skeleton.rest_positions[c.scene.skeleton.index("head"), 1] == pytest.approx(1.75)
    with pytest.raises(ValueError, match="height"):
        c.set_proportion("height", 3.0)
    with pytest.raises(ValueError, match="not one of"):
        c.set_proportion("tail", 1.0)
    c.load_preset("robot_arm")
    assert c.body_state()["proportions"] is None and not c.has_feet
    with pytest.raises(ValueError, match="only the humanoid"):
        c.set_proportion("height", 1.5)


def test_a_proportion_carries_the_timelines_keys_onto_the_new_body() -> None:
    """Keys set on the default body, then the height changed: each key's pose is the old one with the
    same joint turns on the new body (no "pose of another skeleton" when scrubbing, as before), its
    targets where its effectors went; frames between keys bake on the new body; undo brings the old
    keys back."""
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", c.result.positions[sk.index("hand_l")] + [-0.1, 0.2, 0.3])
    c.set_key()
    c.go_to_frame(20)
    c.move_target("hand_l", c.result.positions[sk.index("hand_l")] + [0.0, -0.3, 0.1])
    c.set_key()
    keyed = {k.frame: k.pose for k in c.animation.keys}
    c.set_proportion("height", 1.5)
    new = c.scene.skeleton
    for frame, pose in keyed.items():
        c.go_to_frame(frame)
        turns = [(joint_turn(sk, pose.rotations, n), joint_turn(new, c.result.rotations, n)) for n in new.names]
        worst = max(rot.angle_between(tuple(a), tuple(b)) for a, b in turns)
        assert math.degrees(worst) < 1e-4, frame  # (acos rounding near 0)
        key = c.animation.key_at(frame)
        np.testing.assert_allclose(key.targets["hand_l"].position, c.result.positions[new.index("hand_l")], atol=1e-9)
    c.go_to_frame(10)
    bones = np.linalg.norm(c.result.positions[1:] - c.result.positions[new.parents[1:]], axis=1)
    np.testing.assert_allclose(bones, new.bone_lengths[1:], atol=1e-6)
    c.undo()
    assert c.scene.skeleton is sk or c.scene.proportions.height != 1.5
    c.go_to_frame(20)
    np.testing.assert_allclose(c.result.positions, keyed[20].positions, atol=1e-9)


def test_the_apps_callbacks() -> None:
    """The panel's switches and sliders through the app, in-process: state, scene and view follow."""
    from fabrik3d_web.app import WebApp
    from trame.app import get_server

    app = WebApp(server=get_server("fabrik3d-test-body", client_type="vue3"))
    app.state.ready()
    s, c = app.state, app.controller
    assert s.show_mannequin and s.show_com and s.floor_on and s.com_inside and s.export_mannequin
    assert app.body.mannequin.GetVisibility() and not app.scene.bone_actor.GetVisibility()
    s.show_sticks = True
    s.flush()
    assert app.scene.bone_actor.GetVisibility() and app.body.mannequin.GetVisibility()
    s.show_mannequin = False
    s.flush()
    assert not app.body.mannequin.GetVisibility() and app.scene.bone_actor.GetVisibility()
    assert all(w.GetCurrentRenderer() is app.body.overlay for w in app.scene.handles.values())
    _falling(c)
    app._publish()
    assert s.com_inside is False and app.body.marker.GetProperty().GetColor()[0] > 0.8
    s.balance_on = True
    s.flush()
    assert c.scene.balance and s.com_inside is True
    s.floor_on = False
    s.flush()
    assert c.scene.floor is None and not c.scene.balance and s.balance_on is False
    app.body_panel.set_proportion("leg", 1.2)
    assert c.scene.proportions.leg == 1.2 and s.proportions["leg"] == 1.2
    assert app.body.has_mesh and app.scene.skeleton is c.scene.skeleton
    app.body_panel.set_proportion("leg", "long")
    assert "leg" in s.error_message and c.scene.proportions.leg == 1.2
    assert app.body_panel.skin_ms < 50.0
    glb = c.pose_glb(mannequin=True)
    assert b"mannequin wood" in glb and b"mannequin wood" not in c.pose_glb()
