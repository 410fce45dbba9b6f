"""The web UI's logic without a browser: the controller, the VTK scene and the trame app in-process.

Everything runs the real solver, the real VTK pipeline (off screen) and a real trame
server object (not started): moving a target re-solves from the previous pose and
updates the actors and the state; bad input of any kind sets an error and leaves the
scene, the targets and the pose exactly as they were.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, missing_tool
from fabrik3d_web.document import controller as ctl
from fabrik3d_web.document.controller import Controller

import fabrik3d
from fabrik3d.io.scene import Scene, parse_scene
from fabrik3d.io.take import parse_take
from fabrik3d.model import presets

# A point the left hand reaches (inside the arm's reach, in front of the body), scene units.
REACHABLE = np.array([0.45, 1.15, 0.3])


def snapshot(c: Controller) -> tuple:
    """Everything a failed action must leave unchanged."""
    return (
        c.scene,
        {k: v.tolist() for k, v in c.targets.items()},
        None if c.root_target is None else c.root_target.tolist(),
        c.result.positions.tolist(),
        c.result.rotations.tolist(),
        len(c.undo_stack),
        c.tolerance,
        c.max_iterations,
    )


# -- controller ---------------------------------------------------------------------------------


def test_the_default_scene_is_the_constrained_humanoid_at_rest() -> None:
    c = Controller()
    sk = c.scene.skeleton
    assert sk.names == presets.get("humanoid").names
    assert sk.constraints, "the humanoid preset carries joint limits"
    assert c.targets == {}
    # the relaxed stance (the free arms hang beside the body), not the skeleton's rest (the T)
    stance = fabrik3d.solve(sk, {}).positions
    np.testing.assert_allclose(c.result.positions, stance, atol=1e-9)
    hand, shoulder = sk.index("hand_l"), sk.index("shoulder_l")
    assert c.result.positions[hand][1] < c.result.positions[shoulder][1] - 0.4  # the left hand hangs
    assert sk.rest_positions[hand][1] == pytest.approx(sk.rest_positions[shoulder][1])  # (the rest: the T)
    state = c.state()
    assert state["joint_names"] == list(sk.names)
    assert state["targets"] == {}
    assert len(state["pose"]) == len(sk) and all(len(p) == 3 for p in state["pose"])
    assert json.loads(json.dumps(state)) == state  # plain JSON values only


def test_moving_a_target_solves_warm_started_from_the_previous_pose() -> None:
    c = Controller()
    c.move_target("hand_l", REACHABLE - np.array([0.0, 0.0, 0.1]))
    previous = c.result.positions.copy()
    c.move_target("hand_l", REACHABLE)
    expected = fabrik3d.solve(
        c.scene.skeleton, {"hand_l": REACHABLE}, positions=previous, tolerance=c.tolerance, max_iterations=100
    )
    np.testing.assert_allclose(c.result.positions, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    hand = c.scene.skeleton.index("hand_l")
    assert np.linalg.norm(c.result.positions[hand] - REACHABLE) <= c.tolerance
    assert c.state()["targets"] == {"hand_l": REACHABLE.tolist()}
    assert c.unreachable == [] and c.max_error <= c.tolerance
    assert c.solve_ms > 0


def test_an_unreachable_target_is_reported() -> None:
    c = Controller()
    far = np.array([3.0, 1.4, 0.0])
    c.move_target("hand_l", far)
    assert c.unreachable == ["hand_l"]
    assert c.max_error > 1.0
    assert c.effector_rows()[c.scene.skeleton.end_effectors.index("hand_l")]["unreachable"] is True


def test_a_drag_is_one_undo_step_and_redo_restores_it() -> None:
    c = Controller()
    rest = c.result.positions.copy()
    c.begin_drag()
    for k in range(5):
        c.move_target("hand_l", REACHABLE + np.array([0.0, 0.02 * k, 0.0]), undoable=False)
    c.end_drag()
    moved = c.result.positions.copy()
    assert len(c.undo_stack) == 1
    assert c.undo() is True
    assert c.targets == {}
    np.testing.assert_array_equal(c.result.positions, rest)
    assert c.redo() is True
    np.testing.assert_array_equal(c.result.positions, moved)
    assert c.redo() is False
    assert c.undo() and not c.undo()


def test_a_click_on_a_handle_without_moving_adds_no_undo_step() -> None:
    c = Controller()
    c.begin_drag()
    c.end_drag()
    assert c.undo_stack == []


def test_reset_pose_goes_back_to_the_scene_targets_and_rest_and_is_undoable() -> None:
    c = Controller()
    c.move_target("hand_l", REACHABLE)
    moved = c.result.positions.copy()
    c.reset_pose()
    assert c.targets == {}
    np.testing.assert_allclose(c.result.positions, fabrik3d.solve(c.scene.skeleton, {}).positions, atol=1e-9)
    c.undo()
    np.testing.assert_array_equal(c.result.positions, moved)


@pytest.mark.parametrize(
    "name, point, message",
    [
        ("hand_l", [math.nan, 1.0, 0.0], "finite"),
        ("hand_l", [math.inf, 1.0, 0.0], "finite"),
        ("hand_l", [1e6, 1.0, 0.0], "within"),
        ("hand_l", [1e300, 1.0, 0.0], "at most"),
        ("hand_l", [1.0, 2.0], "shape"),
        ("hand_l", "1,2,3", "expected [x, y, z]"),
        ("hand_l", {"x": 1}, "expected [x, y, z]"),
        ("hand_l", None, "expected shape"),
        ("elbow_l", [0.5, 1.0, 0.0], "not an end effector"),
        ("nope", [0.5, 1.0, 0.0], "valid names are head, hand_l"),
        (None, [0.5, 1.0, 0.0], "not an end effector"),
    ],
)
def test_bad_target_input_is_refused_and_changes_nothing(name: object, point: object, message: str) -> None:
    c = Controller()
    c.move_target("hand_r", [-0.45, 1.15, 0.3])
    before = snapshot(c)
    with pytest.raises(ValueError, match=re.escape(message)):
        c.move_target(name, point)  # type: ignore[arg-type]
    assert snapshot(c) == before


@pytest.mark.parametrize(
    "targets",
    [
        {"hand_l": [0.4, 1.1, 0.3], "hand_r": [math.nan, 0.0, 0.0]},
        {"hand_l": [0.4, 1.1, 0.3], "pelvis": [0.0, 1.0, 0.0]},
        {"hand_l": [0.4, 1.1, 0.3], "ghost": [0.0, 1.0, 0.0]},
        [["hand_l", [0.4, 1.1, 0.3]]],
        "hand_l=1,2,3",
    ],
)
def test_setting_all_targets_is_all_or_nothing(targets: object) -> None:
    c = Controller()
    before = snapshot(c)
    with pytest.raises(ValueError):
        c.set_targets(targets)
    assert snapshot(c) == before


def test_setting_all_targets_replaces_them() -> None:
    c = Controller()
    c.move_target("hand_r", [-0.45, 1.15, 0.3])
    c.set_targets({"hand_l": REACHABLE.tolist()})
    assert list(c.targets) == ["hand_l"]
    assert c.max_error <= c.tolerance


def test_typing_a_coordinate_moves_the_target() -> None:
    c = Controller()
    hand = c.scene.skeleton.index("hand_l")
    hanging = c.result.positions[hand].copy()  # (the free hand, where it hangs)
    c.type_coordinate("hand_l", 1, " 1.2 ")
    np.testing.assert_allclose(c.targets["hand_l"], [hanging[0], 1.2, hanging[2]])
    assert np.linalg.norm(c.result.positions[hand] - c.targets["hand_l"]) <= c.tolerance
    before = snapshot(c)
    for name, axis, text in [("hand_l", 0, "abc"), ("hand_l", 0, "nan"), ("hand_l", 3, "1"), ("spine_01", 0, "1")]:
        with pytest.raises(ValueError):
            c.type_coordinate(name, axis, text)
        assert snapshot(c) == before


def test_solver_settings_are_checked() -> None:
    c = Controller()
    c.set_solver("0.01", "20")
    assert (c.tolerance, c.max_iterations) == (0.01, 20)
    before = snapshot(c)
    for tol, its in [("0", 10), ("-1", 10), ("nan", 10), ("x", 10), (0.01, 0), (0.01, 2.5), (0.01, 10**6), (1e6, 10)]:
        with pytest.raises(ValueError):
            c.set_solver(tol, its)
        assert snapshot(c) == before


def test_limits_off_solves_without_the_joint_limits() -> None:
    target = np.array([0.2, 1.0, -0.5])  # behind the body: the limits change the pose
    on, off = Controller(), Controller()
    off.set_limits(False)
    start_on, start_off = on.result, off.result  # warm starts, with their frames
    on.move_target("hand_l", target)
    off.move_target("hand_l", target)
    sk = on.scene.skeleton
    free = sk.without_constraints()  # (no limits; the natural posing kept)
    for got, skeleton, start in ((on, sk, start_on), (off, free, start_off)):
        again = fabrik3d.solve(skeleton, {"hand_l": target}, positions=start.positions, rotations=start.rotations)
        np.testing.assert_array_equal(got.result.positions, again.positions)
    assert not np.allclose(on.result.positions, off.result.positions)
    assert off.scene.skeleton.constraints  # the scene keeps its limits for when they are switched back on


def test_a_pole_bends_the_chain_toward_it_and_is_undoable() -> None:
    c = Controller()
    c.move_target("hand_l", REACHABLE)
    sk = c.scene.skeleton
    elbow = sk.index("elbow_l")
    start = c.result.positions.copy()
    home = c.pole_home("hand_l")
    assert np.linalg.norm(home - start[elbow]) == pytest.approx(0.2 * c.size)
    pole = start[elbow] + np.array([0.0, -0.6, 0.0])  # below the elbow
    c.move_pole("hand_l", pole)
    expected = fabrik3d.solve(sk, {"hand_l": REACHABLE}, positions=start, poles={"hand_l": pole})
    np.testing.assert_allclose(c.result.positions, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    # the pole acts at once (the natural posing swivels the elbow toward it, no target moved):
    # nearer the pole, and a pole below the elbow never sends it up
    assert np.linalg.norm(c.result.positions[elbow] - pole) < np.linalg.norm(start[elbow] - pole) - 0.02
    assert c.result.positions[elbow][1] <= start[elbow][1] + 1e-9
    assert c.result.converged
    assert c.state()["poles"] == {"hand_l": np.round(pole, 6).tolist()}
    before = snapshot(c)
    for name, point in [("elbow_l", pole), ("hand_l", [math.nan, 0, 0]), ("hand_l", [1e5, 0, 0])]:
        with pytest.raises(ValueError):
            c.move_pole(name, point)
        assert snapshot(c) == before
    c.undo()
    assert c.poles == {}
    np.testing.assert_array_equal(c.result.positions, start)


def test_a_malformed_scene_keeps_the_current_one() -> None:
    c = Controller()
    c.move_target("hand_l", REACHABLE)
    before = snapshot(c)
    good = json.loads(json.dumps(Scene(presets.get("robot_arm")).to_dict()))
    cases = [
        (b"{not json", "not valid JSON"),
        (b"[]", "expected a JSON object"),
        (json.dumps({**good, "format": "other"}).encode(), "format"),
        (json.dumps({**good, "joints": [*good["joints"][:1], {"name": "x", "parent": "nope"}]}).encode(), "unknown"),
        (json.dumps({**good, "targets": {"tool": [1e9, 0, 0]}}).encode(), "within"),
        (b" " * (ctl.MAX_SCENE_BYTES + 1), "too large"),
    ]
    for text, message in cases:
        with pytest.raises(ValueError, match=message):
            c.load_scene_text(text, "bad.json")
        assert snapshot(c) == before
    for upload, message in [
        ({"name": "big.json", "size": ctl.MAX_SCENE_BYTES + 1, "content": b"{}"}, "too large"),
        ({"name": "x.json"}, "expected a file"),
        ([{"name": "a", "content": b"{}"}, {"name": "b", "content": b"{}"}], "one file"),
        ("text", "expected a file"),
    ]:
        with pytest.raises(ValueError, match=message):
            c.load_upload(upload)
        assert snapshot(c) == before


def test_a_scene_file_loads_with_its_targets_and_settings() -> None:
    c = Controller()
    arm = presets.get("robot_arm")
    tool = arm.rest_positions[arm.index("tool")] + [0.0, -0.1, 0.05]
    text = json.dumps(Scene(arm, {"tool": tool}, tolerance=0.002, max_iterations=50).to_dict())
    c.load_upload([{"name": "arm.json", "size": len(text), "content": text.encode()}])
    assert c.scene.skeleton.names == arm.names
    assert (c.tolerance, c.max_iterations, c.source) == (0.002, 50, "arm.json")
    assert np.linalg.norm(c.result.positions[arm.index("tool")] - tool) <= 0.002
    again = parse_scene(c.scene_json(), "download")
    np.testing.assert_allclose(again.targets["tool"], tool)
    assert again.tolerance == 0.002


def test_a_recorded_take_exports_as_glb_and_json() -> None:
    c = Controller()
    with pytest.raises(ValueError, match="record"):
        c.take_glb()
    c.start_recording()
    c.begin_drag()
    for k in range(6):
        c.move_target("hand_l", REACHABLE + np.array([0.0, 0.03 * k, 0.0]), undoable=False)
    c.end_drag()
    c.stop_recording()
    c.move_target("hand_l", REACHABLE)  # not recorded
    assert len(c.take_times) == 7 and np.all(np.diff(c.take_times) > 0)
    assert c.take_frame(0.0) == 0 and c.take_frame(1e9) == 6
    take = parse_take(c.take_json(), "take.json")
    np.testing.assert_array_equal(take.positions, np.array(c.take_positions))
    for blob in (c.take_glb(), c.pose_glb()):
        assert blob[:4] == b"glTF" and int.from_bytes(blob[8:12], "little") == len(blob)


def test_effector_rows_follow_free_and_targeted_effectors() -> None:
    c = Controller()
    c.move_target("hand_l", REACHABLE)
    rows = {r["name"]: r for r in c.effector_rows()}
    assert list(rows) == list(c.scene.skeleton.end_effectors)
    assert rows["hand_l"]["targeted"] and not rows["head"]["targeted"]
    assert rows["hand_l"]["y"] == f"{REACHABLE[1]:.3f}"
    head = c.result.positions[c.scene.skeleton.index("head")]
    assert rows["head"]["x"] == f"{head[0]:.3f}"


# -- VTK scene and trame app (in-process, no browser) -----------------------------------------------

_names = itertools.count()


@pytest.fixture
def web():
    """A ``WebApp`` on a fresh (not started) trame server, its state ready as on a connection."""
    try:
        from fabrik3d_web.app import WebApp
        from trame.app import get_server
    except ImportError as exc:  # the web extra is missing
        missing_tool(f"the web extra is not installed ({exc})")
    app = WebApp(server=get_server(f"fabrik3d-test-{next(_names)}", client_type="vue3"))
    app.state.ready()
    app.scene.render_window.Render()
    return app


def _bone_points(app) -> np.ndarray:
    from vtkmodules.util.numpy_support import vtk_to_numpy

    return vtk_to_numpy(app.scene._bones.GetPoints().GetData())


def test_moving_a_target_updates_the_actors_handles_and_state(web) -> None:
    from fabrik3d_web.view import scene_view

    app = web
    hand = app.controller.scene.skeleton.index("hand_l")
    before = _bone_points(app).copy()
    app.state.targets = {"hand_l": REACHABLE.tolist()}
    app.state.flush()
    pose = np.array(app.state.pose)
    assert np.linalg.norm(pose[hand] - REACHABLE) <= 1e-3
    after = _bone_points(app)
    assert not np.allclose(before, after)
    assert np.min(np.linalg.norm(after - app.controller.result.positions[hand], axis=1)) < 1e-9
    rep = app.scene.handles["target", "hand_l"].GetRepresentation()
    np.testing.assert_allclose(rep.GetWorldPosition(), REACHABLE)
    assert rep.GetProperty().GetColor() == pytest.approx(scene_view.TARGET)
    free = app.scene.handles["target", "head"].GetRepresentation()
    assert free.GetProperty().GetColor() == pytest.approx(scene_view.FREE)
    app.state.targets = {"hand_l": [3.0, 1.4, 0.0]}
    app.state.flush()
    assert rep.GetProperty().GetColor() == pytest.approx(scene_view.UNREACHABLE)
    assert app.scene._gaps.GetNumberOfCells() == 1
    assert app.state.error_message == ""


@pytest.mark.parametrize(
    "targets, message",
    [
        ({"hand_l": [math.nan, 1.0, 0.0]}, "finite"),
        ({"hand_l": [1e12, 1.0, 0.0]}, "at most"),
        ({"wing": [0.0, 1.0, 0.0]}, "not an end effector"),
        ({"hand_l": "up"}, "expected"),
        ([1, 2, 3], "expected an object"),
    ],
)
def test_bad_targets_from_the_page_set_error_message_and_keep_the_pose(web, targets, message) -> None:
    app = web
    app.state.targets = {"hand_r": [-0.45, 1.15, 0.3]}
    app.state.flush()
    pose, good = app.state.pose, app.state.targets
    app.state.targets = targets
    app.state.flush()
    assert message in app.state.error_message
    assert app.state.pose == pose and app.state.targets == good


def test_a_malformed_upload_sets_error_message_and_keeps_the_scene(web) -> None:
    app = web
    names, pose = app.state.joint_names, app.state.pose
    app.state.scene_upload = {"name": "broken.json", "size": 9, "content": b'{"format"'}
    app.state.flush()
    assert app.state.error_message.startswith("broken.json: not valid JSON")
    assert app.state.joint_names == names and app.state.pose == pose
    assert app.state.scene_upload is None


def test_choosing_a_preset_rebuilds_the_handles(web) -> None:
    app = web
    app.state.preset = "octopus"
    app.state.flush()
    sk = presets.get("octopus")
    assert app.state.joint_names == list(sk.names)
    assert {name for kind, name in app.scene.handles if kind == "target"} == set(sk.end_effectors) - {"mantle"}
    app.state.preset = "no-such-preset"
    app.state.flush()
    assert "unknown preset" in app.state.error_message
    assert app.state.joint_names == list(sk.names)


def test_a_mouse_drag_on_a_handle_in_vtk_moves_the_hand(web) -> None:
    """The VTK widget path without a browser: press on the handle, move, release."""
    app = web
    iren = app.scene.interactor
    x, y, width, height = app.scene.handle_display_position("target", "hand_l")
    assert 0 < x < width and 0 < y < height
    hand = app.controller.scene.skeleton.index("hand_l")
    start = app.controller.result.positions[hand].copy()
    path = [(x - 6 * k, y - 8 * k) for k in range(1, 11)]  # inward and down: the hand is at full reach
    iren.SetEventInformation(int(x), int(y))
    iren.MouseMoveEvent()
    iren.LeftButtonPressEvent()
    for px, py in path:
        iren.SetEventInformation(int(px), int(py))
        iren.MouseMoveEvent()
    iren.LeftButtonReleaseEvent()
    moved = app.controller.result.positions[hand]
    assert np.linalg.norm(moved - start) > 0.05
    # The hand is where the handle was dropped (same screen point) and the drag is one undo step.
    app.scene.renderer.SetWorldPoint(*moved, 1.0)
    app.scene.renderer.WorldToDisplay()
    dx, dy, _ = app.scene.renderer.GetDisplayPoint()
    assert math.dist((dx, dy), path[-1]) < 3.0
    assert len(app.controller.undo_stack) == 1
    assert app.state.targets["hand_l"] == pytest.approx(app.controller.targets["hand_l"].tolist(), abs=1e-6)


def test_pole_handles_show_on_demand_and_drag_the_pole(web) -> None:
    app = web
    app.state.targets = {"hand_l": REACHABLE.tolist()}
    app.state.flush()
    widget = app.scene.handles["pole", "hand_l"]
    assert not widget.GetEnabled()
    app.state.show_poles = True
    app.state.flush()
    assert widget.GetEnabled()
    home = app.controller.pole_home("hand_l")
    np.testing.assert_allclose(widget.GetRepresentation().GetWorldPosition(), home)
    app.scene.render_window.Render()
    iren = app.scene.interactor
    x, y, _, _ = app.scene.handle_display_position("pole", "hand_l")
    iren.SetEventInformation(int(x), int(y))
    iren.MouseMoveEvent()
    iren.LeftButtonPressEvent()
    for k in range(1, 8):
        iren.SetEventInformation(int(x), int(y - 10 * k))
        iren.MouseMoveEvent()
    iren.LeftButtonReleaseEvent()
    assert list(app.state.poles) == ["hand_l"]
    np.testing.assert_allclose(widget.GetRepresentation().GetWorldPosition(), app.controller.poles["hand_l"])
    assert np.linalg.norm(app.controller.poles["hand_l"] - home) > 0.05


def test_target_screen_position_is_in_css_pixels_from_the_top_left(web) -> None:
    app = web
    x, y, _, height = app.scene.handle_display_position("target", "head")
    sx, sy = app.screen_points.target_screen_position("head")
    assert (sx, sy) == pytest.approx((x, height - y))  # still ratio 1: CSS pixels == window pixels
    assert app.screen_points.target_screen_position("pelvis") is not None  # the root has a handle too
    assert app.screen_points.target_screen_position("nope") is None
    assert "no handle" in app.state.error_message


def test_limit_fans_follow_the_constraint_definitions() -> None:
    from fabrik3d_web.view.limits import limit_fans

    sk = presets.get("humanoid")
    (cone_pts, cone_tris), (hinge_pts, hinge_tris) = limit_fans(sk, sk.rest_positions, sk.rest_frames, 2.0)
    assert len(cone_tris) and len(hinge_tris)
    assert cone_tris.max() < len(cone_pts) and hinge_tris.max() < len(hinge_pts)
    # Rest pose: the wrist's cone rim is at 70 degrees from the rest bone wrist -> hand.
    wrist, hand = sk.index("wrist_l"), sk.index("hand_l")
    bone = sk.rest_positions[hand] - sk.rest_positions[wrist]
    bone /= np.linalg.norm(bone)
    rim = cone_pts[np.linalg.norm(cone_pts - sk.rest_positions[wrist], axis=1) > 1e-9]
    near = rim[np.linalg.norm(rim - sk.rest_positions[wrist], axis=1) < 0.2]
    angles = []
    for p in near:
        d = (p - sk.rest_positions[wrist]) / np.linalg.norm(p - sk.rest_positions[wrist])
        angles.append(math.degrees(math.acos(np.clip(d @ bone, -1, 1))))
    assert any(abs(a - 70.0) < 1e-6 for a in angles)
    # The knee hinge (axis +X) fans out in the plane x = knee.x.
    knee = sk.rest_positions[sk.index("knee_l")]
    in_plane = hinge_pts[np.abs(hinge_pts[:, 0] - knee[0]) < 1e-9]
    assert len(in_plane) > 10


def test_playback_shows_the_take_then_the_current_pose(web) -> None:
    import asyncio

    app = web
    app.start_recording()
    for k in range(5):
        app.state.targets = {"hand_l": (REACHABLE + np.array([0.0, 0.03 * k, 0.0])).tolist()}
        app.state.flush()
    app.stop_recording()
    assert app.state.take_frames == 6
    shown = []
    app._render = lambda: shown.append(_bone_points(app).copy())  # record each frame the view would push
    t0 = time.perf_counter()
    asyncio.run(app._play())
    assert time.perf_counter() - t0 >= app.controller.take_duration
    sk = app.controller.scene.skeleton
    bones = [j for j in range(len(sk)) if sk.parents[j] >= 0]
    for frame, positions in zip(shown, app.controller.take_positions):
        np.testing.assert_allclose(frame[1::2], positions[bones])
    assert len(shown) == 7  # six take frames, then the current pose again
    np.testing.assert_allclose(shown[-1][1::2], app.controller.result.positions[bones])
    assert app.state.playing is False


def test_dragging_the_root_handle_moves_the_whole_skeleton(web) -> None:
    app = web
    sk = app.controller.scene.skeleton
    start = app.controller.result.positions.copy()
    x, y, _, _ = app.scene.handle_display_position("root", "pelvis")
    iren = app.scene.interactor
    iren.SetEventInformation(int(x), int(y))
    iren.MouseMoveEvent()
    iren.LeftButtonPressEvent()
    for k in range(1, 6):
        iren.SetEventInformation(int(x + 8 * k), int(y))
        iren.MouseMoveEvent()
    iren.LeftButtonReleaseEvent()
    root = app.controller.root_target
    assert app.state.root_target == pytest.approx(root.tolist(), abs=1e-6)
    np.testing.assert_allclose(app.controller.result.positions[sk.root], root)
    assert np.linalg.norm(root - start[sk.root]) > 0.05
    assert len(app.controller.undo_stack) == 1


def test_moving_the_root_without_targets_moves_the_pose_rigidly() -> None:
    c = Controller()
    start = c.result.positions.copy()
    root = start[c.scene.skeleton.root]
    for k in range(1, 6):
        c.move_root(root + np.array([0.02 * k, 0.0, 0.0]), undoable=False)
        np.testing.assert_allclose(
            c.result.positions - start, np.tile([0.02 * k, 0.0, 0.0], (len(start), 1)), atol=1e-9
        )


def _cli(*args: str, block: str | None = None) -> subprocess.CompletedProcess[str]:
    """``fabrik3d ARGS`` in a subprocess; ``block`` names a module made unimportable first."""
    pre = f"import sys; sys.modules[{block!r}] = None; " if block else "import sys; "
    code = pre + "from fabrik3d.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )


def test_serve_without_the_web_extra_names_it() -> None:
    proc = _cli("serve", "--no-browser", "--port", "1", block="trame")
    assert proc.returncode == 2
    assert proc.stderr.startswith("fabrik3d: error: the web UI needs the extra fabrik3d[web]")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "dragon"], "invalid choice"),
        (["--scene", "no/such/file.json"], "neither a preset"),
        (["--preset", "humanoid", "--scene", "x.json"], "not allowed with"),
    ],
)
def test_serve_refuses_bad_arguments_before_starting(args: list[str], message: str, tmp_path) -> None:
    proc = _cli("serve", "--no-browser", "--port", "1", *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_serve_refuses_a_malformed_scene_file(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fabrik3d.scene", "version": 1, "joints": []}')
    proc = _cli("serve", "--no-browser", "--port", "1", "--scene", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"fabrik3d: error: {bad}: ") and "at least two joints" in proc.stderr


def test_limits_can_be_shown_for_chosen_joints(web) -> None:
    from fabrik3d_web.view.limits import limit_fans

    app = web
    cones, hinges = app.scene._limit_polys
    app.state.show_limits = True
    app.state.flush()
    assert cones.GetNumberOfCells() > 0 and hinges.GetNumberOfCells() > 0
    app.state.limit_joints = ["elbow_l"]
    app.state.flush()
    sk = app.controller.scene.skeleton
    expected = limit_fans(sk, sk.rest_positions, app.controller.result.rotations, app.controller.size, ["elbow_l"])
    assert cones.GetNumberOfCells() == 0
    assert hinges.GetNumberOfCells() == len(expected[1][1]) > 0
    app.state.limit_joints = ["elbow_l", "hand_l", "nope"]  # hand_l has only a twist limit: nothing to draw
    app.state.flush()
    assert "only joints with limits" in app.state.error_message
    assert app.state.limit_joints == ["elbow_l", "hand_l"]
    app.state.show_limits = False
    app.state.flush()
    assert not any(actor.GetVisibility() for actor in app.scene._limit_actors)


def test_a_drag_to_a_refused_point_snaps_the_handle_back(web) -> None:
    app = web
    app.state.targets = {"hand_l": REACHABLE.tolist()}
    app.state.flush()
    rep = app.scene.handles["target", "hand_l"].GetRepresentation()
    far = [1e6, 0.0, 0.0]  # beyond the workspace
    widget = app.scene.handles["target", "hand_l"]
    app.drags.grab_handle("target", "hand_l", REACHABLE)
    rep.SetWorldPosition(far)  # where the widget puts it, under the mouse, before it reports the move
    widget.InvokeEvent("InteractionEvent")
    assert "within" in app.state.error_message
    np.testing.assert_allclose(rep.GetWorldPosition(), REACHABLE)
    widget.InvokeEvent("EndInteractionEvent")
    np.testing.assert_allclose(rep.GetWorldPosition(), REACHABLE)
    np.testing.assert_allclose(app.controller.targets["hand_l"], REACHABLE)
    assert len(app.controller.undo_stack) == 1  # setting the target; the refused drag added nothing


def test_serve_passes_its_own_options_on_and_nothing_of_the_command_line(monkeypatch) -> None:
    """The framework reads options when it starts (sys.argv, --trame-args, TRAME_ARGS): none may leak in."""
    import trame_server.core
    from fabrik3d_web import serve

    seen: dict[str, Any] = {}

    def start(self: Any, **kwargs: Any) -> None:  # stands in for the event loop: what would it run with?
        seen["options"] = self.cli.parse_known_args()[0]
        seen["kwargs"] = kwargs

    monkeypatch.setattr(trame_server.core.Server, "start", start)
    monkeypatch.setattr(serve.security, "new_secret", lambda: "s3cret")
    argv = ["fabrik3d", "serve", "--authKey", "wslink-secret", "--app", "--port", "1", "--trame-args=--ssl adhoc"]
    monkeypatch.setattr(sys, "argv", list(argv))
    monkeypatch.setenv("TRAME_ARGS", "--authKey wslink-secret --app --port 1 --hot-reload")
    serve.serve("robot_arm", None, "127.0.0.1", 8123, open_browser=False)
    options, kwargs = seen["options"], seen["kwargs"]
    assert options.authKey == "s3cret" and options.authKeyFile is None  # the launch's secret, not the argv's
    assert not options.app and options.port != 1 and not options.ssl and not options.hot_reload
    assert kwargs["host"] == "127.0.0.1" and kwargs["port"] == 8123 and kwargs["open_browser"] is False
    assert sys.argv == argv  # given back afterwards


def test_pin_free_reach_and_stiffness_check_their_input_and_keep_the_pose_on_a_refusal() -> None:
    c = Controller()
    c.pin_effector("hand_r")
    np.testing.assert_allclose(c.targets["hand_r"], c.result.positions[c.scene.skeleton.index("hand_r")], atol=1e-12)
    c.set_reach("hand_l", "clavicle_l")
    c.set_stiffness("spine_02", 0.3)
    assert c.posing.reach["hand_l"] == "clavicle_l" and c.posing.stiffness["spine_02"] == 0.3
    assert c.scene.skeleton.posing.reach["toe_l"] == "hip_l"  # (the preset's other settings kept)
    assert c._free.posing == c.scene.skeleton.posing  # (limits off: the same posing)
    before = snapshot(c)
    for action, args, message in [
        (c.pin_effector, ("elbow_l",), "not an end effector"),
        (c.free_effector, (["hand_r"],), "not an end effector"),
        (c.set_reach, ("hand_l", "toe_l"), "not a joint above it"),
        (c.set_reach, ("hand_l", "hand_l"), "not a joint above it"),
        (c.set_stiffness, ("spine_02", math.nan), "from 0 to 1"),
        (c.set_stiffness, ("spine_02", "0.5"), "from 0 to 1"),
        (c.set_stiffness, (None, 0.5), "not a joint"),
    ]:
        with pytest.raises(ValueError, match=message):
            action(*args)
        assert snapshot(c) == before
    assert c.posing.stiffness["spine_02"] == 0.3
    c.free_effector("hand_r")
    assert "hand_r" not in c.targets
    assert json.loads(c.scene_json())["posing"]["reach"]["hand_l"] == "clavicle_l"


def test_pole_handles_carry_labels_at_the_natural_elbows_and_the_mantle_has_no_handle(web) -> None:
    app = web
    sk = app.controller.scene.skeleton
    assert {name for kind, name in app.scene.handles if kind == "pole"} == {"hand_l", "hand_r", "toe_l", "toe_r"}
    labels = app.scene._labels
    assert labels["hand_l"].GetInput() == "elbow_l pole" and labels["toe_r"].GetInput() == "knee_r pole"
    assert not any(label.GetVisibility() for label in labels.values())
    app.state.show_poles = True
    app.state.flush()
    assert all(label.GetVisibility() for label in labels.values())
    rep = app.scene.handles["pole", "hand_l"].GetRepresentation()
    np.testing.assert_allclose(labels["hand_l"].GetPosition(), rep.GetWorldPosition())
    elbow = app.controller.result.positions[sk.index("elbow_l")]
    home = np.array(rep.GetWorldPosition())
    assert np.linalg.norm(home - elbow) == pytest.approx(0.2 * app.controller.size)
    # the natural elbow of an arm held out to the side bends backward (and a little down), as a person's does
    assert home[2] < elbow[2] - 0.15 * app.controller.size and home[1] < elbow[1]
    # a side's pair apart (elbow_l's label above its handle, elbow_r's under), and each keeps its size on the
    # page in a drag's small images (issue 32 item 3: they grew about 3x): text and offset scaled with them
    offsets = {name: actor.GetDisplayOffset()[1] for name, actor in labels.items()}
    assert offsets["hand_l"] > 0 > offsets["hand_r"] and offsets["toe_l"] > 0 > offsets["toe_r"]
    size = labels["hand_l"].GetTextProperty().GetFontSize()
    app.scene.set_pixel_scale(0.35)
    assert labels["hand_l"].GetTextProperty().GetFontSize() == round(0.35 * size)
    assert labels["hand_r"].GetDisplayOffset()[1] == round(0.35 * offsets["hand_r"])
    app.scene.set_pixel_scale(1.0)
    assert labels["hand_l"].GetTextProperty().GetFontSize() == size
    assert {name: actor.GetDisplayOffset()[1] for name, actor in labels.items()} == offsets
    app.state.preset = "octopus"
    app.state.flush()
    tips = {name for kind, name in app.scene.handles if kind == "target"}
    assert "mantle" not in tips and len(tips) == 8  # (a rigid root: the mantle cannot move)
    assert app.screen_points.target_screen_position("mantle") is None
    assert "no handle called 'mantle'" in app.state.error_message


def test_posing_edits_are_undone_and_redone_with_their_pose() -> None:
    c = Controller()
    default = c.scene.skeleton.posing
    # (a reach already met is settled: a posing edit then moves nothing; so the reach is cut first, and
    # the edit that changes the pose is the one that lets the spine help again)
    c.set_reach("hand_l", "clavicle_l")  # the spine may not help
    c.move_target("hand_l", np.array([0.4, 1.4, 0.8]))  # (80 cm in front: beyond the arm alone)
    short = c.result
    assert not short.converged and c.posing.reach["hand_l"] == "clavicle_l"
    c.set_reach("hand_l", default.reach["hand_l"])  # the spine helps again: the hand gets there
    reached = c.result
    assert reached.converged and c.scene.skeleton.posing == default and c._free.posing == default
    c.set_stiffness("spine_02", 0.2)
    assert c.undo() and c.posing.stiffness["spine_02"] == default.stiffness["spine_02"]
    assert c.result is reached
    assert c.undo() and c.posing.reach["hand_l"] == "clavicle_l" and c._free.posing.reach["hand_l"] == "clavicle_l"
    assert c.result is short
    assert c.redo() and c.scene.skeleton.posing == default and c._free.posing == default
    assert c.result is reached
    assert c.undo() and c.result is short
    assert json.loads(c.scene_json())["posing"]["reach"]["hand_l"] == "clavicle_l"
    c.move_target("hand_l", np.array([0.3, 1.3, 0.3]))  # (solved with the posing undone to)
    assert c.scene.skeleton.posing.reach["hand_l"] == "clavicle_l"


def test_mirror_pose_is_one_undo_step_and_refuses_a_bad_side() -> None:
    c = Controller()
    sk = c.scene.skeleton
    c.move_target("hand_l", np.array([0.45, 1.43, -0.01]))
    before = snapshot(c)
    c.mirror_pose("left")
    for name in ("elbow", "hand"):
        left, right = c.result.positions[sk.index(f"{name}_l")], c.result.positions[sk.index(f"{name}_r")]
        np.testing.assert_allclose(right, [-left[0], left[1], left[2]], atol=1e-3)
    assert c.undo() and snapshot(c) == before
    for bad in ("up", None, ["left"]):
        with pytest.raises(ValueError, match="source must be 'left' or 'right'"):
            c.mirror_pose(bad)
        assert snapshot(c) == before


def test_timeline_and_joint_triggers_name_bad_arguments_and_change_nothing(web) -> None:
    app = web
    frame, pose = app.controller.frame, app.controller.result.positions.copy()
    app.timeline.step_frame("2")
    assert "step_frame: expected a whole number of frames, got '2'" in app.state.error_message
    app.timeline.toggle_timeline()
    assert "animation: set a key first" in app.state.error_message
    assert app.screen_points.joint_screen_position("elbo_l") is None
    assert "joint_screen_position: no joint called 'elbo_l'" in app.state.error_message
    x, y = app.screen_points.joint_screen_position("elbow_l")
    assert math.isfinite(x) and math.isfinite(y)
    assert app.controller.frame == frame
    np.testing.assert_array_equal(app.controller.result.positions, pose)


def test_a_moving_frame_of_a_character_is_drawn_cheaper_and_looks_like_the_still_one(tmp_path) -> None:
    """While something moves, the view drops FXAA and the order-independent blending of the
    see-through skin (``ImageDelivery.set_moving``); the frame still shows the same picture."""
    from fabrik3d_web.app import WebApp
    from helpers.character_asset import write_character
    from trame.app import get_server
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkRenderingCore import vtkWindowToImageFilter

    from fabrik3d.io.character import load_character

    model = load_character(write_character(tmp_path, "hero"))
    app = WebApp(server=get_server(f"fabrik3d-test-{next(_names)}", client_type="vue3"), scene=Scene(model.skeleton),
                 character=model)  # fmt: skip
    app.state.ready()
    window, renderer = app.scene.render_window, app.scene.renderer
    window.SetSize(400, 300)

    def image() -> np.ndarray:
        window.Render()
        grab = vtkWindowToImageFilter()
        grab.SetInput(window)
        grab.Update()
        return vtk_to_numpy(grab.GetOutput().GetPointData().GetScalars()).astype(float)

    still = image()
    app.delivery.set_moving(True)
    assert not renderer.GetUseFXAA() and not renderer.GetUseOIT()
    moving = image()
    renderer.SetUseFXAA(True)  # (the skin's blending alone)
    blended = image()
    app.delivery.set_moving(False)
    assert renderer.GetUseFXAA() and renderer.GetUseOIT()
    assert np.array_equal(image(), still)
    assert np.abs(moving - still).mean() < 2.0  # (of 255: the same picture, its edges not smoothed)
    off = np.abs(blended - still)
    assert off.max() > 0  # (the skin drawn another way)
    assert off.mean() < 0.2 and (off.max(axis=1) > 10).mean() < 0.01  # (and it hardly shows)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_a_primitive_s_base_colour_image_becomes_the_actor_s_texture(fmt: str) -> None:
    """``MeshView`` reads a primitive's PNG or JPEG bytes into a VTK texture (through a memory
    stream where VTK has one), pixel colours kept; bytes that are no image give no texture."""
    import io
    from types import SimpleNamespace

    from fabrik3d_web.view.mesh_view import MeshView
    from PIL import Image
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkRenderingCore import vtkRenderer

    buffer = io.BytesIO()
    Image.new("RGB", (8, 4), (200, 40, 10)).save(buffer, fmt)
    view = MeshView(vtkRenderer())
    prim = SimpleNamespace(texture=buffer.getvalue(), texture_mime="image/png" if fmt == "PNG" else "image/jpeg")
    texture = view._texture(prim)
    assert texture is not None
    texture.Update()
    image = texture.GetInput()
    assert image.GetDimensions()[:2] == (8, 4)
    assert np.abs(vtk_to_numpy(image.GetPointData().GetScalars())[:, :3].astype(float) - (200, 40, 10)).max() < 8
    assert view._texture(SimpleNamespace(texture=b"not an image", texture_mime=prim.texture_mime)) is None
