"""The picked prop's handles in the 3D view, in process (issue 52 item 2): the move handle moves the prop by the
drag (the drag locks hold), a ring turns it by the angle swept, the scale handle scales it within the library's
limits, a held prop's handles change its hold offset; each drag is one undo step, no figure moves, and a drag
the library refuses changes nothing. The widgets' callbacks are called as VTK calls them (the representation
moved, then its interaction events), the rings' presses through the interactor's own events.

The selected figure stands turned and away from the origin, so that the view's coordinates (its own) are not
the world's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fabrik3d_web.app import WebApp
from fabrik3d_web.drags.prop_handles import MOVE, SCALE, SCALE_PX
from trame.app import get_server

from fabrik3d.model.placement import SCALE_RANGE, Transform, frame_transform, quat_conj, quat_mul, rotate

FACING = 30.0  # degrees: the selected figure's turn (the view's frame in the world)


@pytest.fixture
def app() -> WebApp:
    out = WebApp(server=get_server(f"fabrik3d-test-prop-handles-{np.random.randint(1 << 30)}", client_type="vue3"))
    out.state.ready()  # (the state's changes reach their handlers, as on a connection)
    out.figures.add_figure("humanoid")  # Figure 2, selected
    out.figures.place_figure("0.9", "0", "-0.2", str(FACING))
    out.figures.add_prop("box")  # picked
    out.state.flush()  # (as after a page's call)
    out.scene.render_window.Render()
    assert out.state.error_message == ""
    return out


def prop_of(app: WebApp):  # type: ignore[no-untyped-def]
    return app.document.prop(app.state.prop_picked)


def world(app: WebApp) -> Transform:
    return app.document.prop_world(prop_of(app))


def poses(app: WebApp) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(s.controller.result.positions.copy(), s.controller.result.rotations.copy()) for s in app.document.slots]


def assert_same_poses(app: WebApp, before: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for (p, r), (p2, r2) in zip(before, poses(app), strict=True):
        assert np.array_equal(p, p2) and np.array_equal(r, r2), "a figure moved"


def handle(app: WebApp, kind: str):  # type: ignore[no-untyped-def]
    return app.scene.handles[kind, app.state.prop_picked]


def drag(app: WebApp, kind: str, points: list[np.ndarray]) -> None:
    """Press the handle ``kind`` where it is, move it through ``points`` (view coordinates) and let go, as the
    ``vtkHandleWidget`` does: its representation moved, then its events."""
    widget = handle(app, kind)
    rep = widget.GetRepresentation()
    widget.InvokeEvent("StartInteractionEvent")
    for p in points:
        rep.SetWorldPosition([float(v) for v in p])
        widget.InvokeEvent("InteractionEvent")
    widget.InvokeEvent("EndInteractionEvent")


def at(app: WebApp, kind: str) -> np.ndarray:
    return np.array(handle(app, kind).GetRepresentation().GetWorldPosition())


def view_rotation(app: WebApp) -> np.ndarray:
    return app.document.slot.placement.rotation


def turn_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Degrees between two unit quaternions."""
    return math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(a, b))))))


def test_picking_a_prop_shows_its_handles_at_its_centre_and_picking_none_hides_them(app: WebApp) -> None:
    name = app.state.prop_picked
    assert {(MOVE, name), (SCALE, name)} <= set(app.scene.handles)
    assert all(handle(app, kind).GetEnabled() for kind in (MOVE, SCALE))
    centre = app.document.slot.placement.to_local(world(app).position)  # (the view's coordinates)
    np.testing.assert_allclose(at(app, MOVE), centre, atol=1e-12)
    assert app.figures.handles.rings.owner == (MOVE, name)
    x, y = app.joint_drag.display_point(centre)  # the scale handle: SCALE_PX up and right on the screen
    sx, sy = app.joint_drag.display_point(at(app, SCALE))
    np.testing.assert_allclose([sx - x, sy - y], [SCALE_PX / math.sqrt(2)] * 2, atol=0.01)
    css = app.figures.handles.prop_handle_screen_position("move")
    assert len(css) == 2 and all(math.isfinite(v) for v in css)
    app.state.prop_picked = None
    app.state.flush()
    assert not any(kind in (MOVE, SCALE) for kind, _ in app.scene.handles)
    assert app.figures.handles.rings.owner is None
    app.state.prop_picked = name
    app.state.flush()
    assert (MOVE, name) in app.scene.handles
    app.figures.select_figure("Figure 1")  # a new skeleton's handles: the prop's come back with them
    assert handle(app, MOVE).GetEnabled()
    np.testing.assert_allclose(at(app, MOVE), app.document.slot.placement.to_local(world(app).position), atol=1e-12)


def test_a_drag_of_the_move_handle_moves_the_prop_by_the_drag_and_one_undo_puts_it_back(app: WebApp) -> None:
    before, kept = world(app), poses(app)
    start = at(app, MOVE)
    shift = np.array([0.25, 0.1, -0.15])  # (view coordinates)
    drag(app, MOVE, [start + shift * k / 5 for k in range(1, 6)])
    after = world(app)
    np.testing.assert_allclose(after.position - before.position, rotate(view_rotation(app), shift), atol=1e-12)
    assert np.array_equal(after.rotation, before.rotation) and after.scale == before.scale
    np.testing.assert_allclose(at(app, MOVE), start + shift, atol=1e-12)  # (the handle on the prop)
    np.testing.assert_allclose(app.state.prop_place[:3], np.round(after.position, 4), atol=1e-9)
    assert_same_poses(app, kept)
    assert app.state.error_message == ""
    app.undo()
    assert np.array_equal(world(app).position, before.position)  # the whole drag: one step
    assert app.state.stage_props and app.state.prop_picked == prop_of(app).name  # (the prop's adding stays)
    np.testing.assert_allclose(at(app, MOVE), start, atol=1e-12)
    assert_same_poses(app, kept)


def test_a_click_on_the_move_handle_is_no_undo_step(app: WebApp) -> None:
    steps = len(app.document._undo)
    drag(app, MOVE, [at(app, MOVE)])
    assert len(app.document._undo) == steps


def test_the_y_lock_keeps_a_drag_of_the_prop_on_the_vertical(app: WebApp) -> None:
    app.state.drag_lock = "y"
    start = at(app, MOVE)
    goal = start + np.array([0.3, 0.2, 0.1])
    app.scene.interactor.SetEventPosition(*(round(v) for v in app.joint_drag.display_point(goal)))
    before = world(app)
    drag(app, MOVE, [goal])
    moved = at(app, MOVE)
    assert moved[0] == start[0] and moved[2] == start[2] and moved[1] > start[1] + 0.05
    np.testing.assert_allclose(world(app).position[[0, 2]], before.position[[0, 2]], atol=1e-12)


def test_a_ring_turns_the_prop_by_the_angle_swept_about_its_axis(app: WebApp) -> None:
    app.reset_camera("top")  # (the Y ring seen face on)
    app.scene.render_window.Render()
    rings, it = app.figures.handles.rings, app.scene.interactor
    before, kept = world(app), poses(app)
    rings.layout()
    ring = rings.points["y"]  # 96 points, 3.75 degrees apart: 8 steps make 30 degrees
    press, *moves = (app.joint_drag.display_point(ring[k]) for k in (5, 7, 9, 11, 13))
    it.SetEventPosition(*(round(v) for v in press))
    it.InvokeEvent("LeftButtonPressEvent")
    for point in moves:
        it.SetEventPosition(*(round(v) for v in point))
        it.InvokeEvent("MouseMoveEvent")
    it.InvokeEvent("LeftButtonReleaseEvent")
    after = world(app)
    turn = quat_mul(after.rotation, quat_conj(before.rotation))
    turn = turn if turn[3] >= 0 else -turn
    assert abs(turn_angle(after.rotation, before.rotation) - 30.0) <= 1.5
    assert turn[1] > 0 and abs(turn[0]) < 1e-9 and abs(turn[2]) < 1e-9  # right-handed about +Y
    np.testing.assert_allclose(after.position, before.position, atol=1e-12)
    assert_same_poses(app, kept)
    app.undo()
    assert np.array_equal(world(app).rotation, before.rotation)


def test_the_scale_handle_scales_the_prop_within_the_librarys_limits(app: WebApp) -> None:
    before, kept = world(app), poses(app)
    centre, start = at(app, MOVE), at(app, SCALE)
    drag(app, SCALE, [centre + (start - centre) * f for f in (1.5, 2.0)])
    assert world(app).scale == pytest.approx(2.0 * before.scale, rel=1e-9)
    np.testing.assert_allclose(world(app).position, before.position, atol=1e-12)
    assert app.state.prop_place[6] == pytest.approx(2.0, abs=1e-4)
    drag(app, SCALE, [centre + (at(app, SCALE) - centre) * 1e6])
    assert world(app).scale == SCALE_RANGE[1]
    assert_same_poses(app, kept)
    app.undo()
    app.undo()
    assert world(app).scale == before.scale


def hand_frame(app: WebApp) -> Transform:
    slot = app.document.slot
    j = slot.controller.scene.skeleton.index("hand_r")
    pose = slot.controller.result
    return slot.placement.transform.then(frame_transform(pose.positions[j], pose.rotations[j]))


def test_a_held_props_drag_changes_its_hold_offset_and_it_still_follows_the_hand(app: WebApp) -> None:
    app.figures.hold_prop(app.state.prop_picked, "hand_r")
    assert prop_of(app).parent is not None and app.state.error_message == ""
    grip, before, kept = prop_of(app).transform, world(app), poses(app)
    shift = np.array([0.0, 0.12, 0.05])
    drag(app, MOVE, [at(app, MOVE) + shift])
    prop = prop_of(app)
    assert prop.parent is not None and prop.parent.joint == "hand_r"  # still held
    assert not np.allclose(prop.transform.position, grip.position)  # a new grip
    np.testing.assert_allclose(world(app).position - before.position, rotate(view_rotation(app), shift), atol=1e-9)
    assert_same_poses(app, kept)
    hand, held = hand_frame(app), world(app)
    c = app.controller
    c.move_target("hand_r", np.add(c.effector_point("hand_r"), (0.05, 0.15, 0.1)))
    app.figures.refresh()
    follows = hand_frame(app).then(hand.inverse()).then(held)  # (the prop kept its place in the hand)
    np.testing.assert_allclose(world(app).position, follows.position, atol=1e-9)
    assert turn_angle(world(app).rotation, follows.rotation) < 1e-6
    np.testing.assert_allclose(at(app, MOVE), app.document.slot.placement.to_local(follows.position), atol=1e-9)


@pytest.mark.parametrize(
    ("kind", "point", "message"),
    [
        (MOVE, [float("nan"), 0.0, 0.0], "position"),
        (MOVE, [1e9, 0.0, 0.0], "position: coordinates must be within"),
        (SCALE, [float("nan"), 0.0, 0.0], "scale: expected a number"),
    ],
)
def test_a_drag_the_library_refuses_changes_nothing_and_names_the_problem(app: WebApp, kind, point, message) -> None:  # type: ignore[no-untyped-def]
    prop, steps, kept, start = prop_of(app), len(app.document._undo), poses(app), at(app, kind)
    drag(app, kind, [np.array(point)])
    assert message in app.state.error_message and "\n" not in app.state.error_message
    assert prop_of(app) is prop and len(app.document._undo) == steps
    assert_same_poses(app, kept)
    np.testing.assert_allclose(at(app, kind), start, atol=1e-9)  # (the handle back on the prop)


def test_the_screen_position_of_a_handle_that_is_not_there_is_an_error(app: WebApp) -> None:
    assert app.figures.handles.prop_handle_screen_position("sideways") is None
    assert "handle: expected move or scale" in app.state.error_message
    app.state.prop_picked = None
    app.state.flush()
    assert app.figures.handles.prop_handle_screen_position("move") is None
    assert "no prop is picked" in app.state.error_message
