"""Handles that move, turn and scale a prop in the 3D view (issue 52 item 2).

While a prop is picked in the Scene tab (state ``prop_picked``: a free prop or a held one) the view shows a
**move** handle at its centre, dragged as a target's handle (in the plane facing the camera, the drag locks of
``fabrik3d_web.drags.dragging.constrain`` held); the **rings** of ``fabrik3d_web.view.rings`` around it (X, Y, Z, view),
a press on one turning the prop about its axis by the angle the mouse sweeps, as a target's rings do; and a
**scale** handle ``SCALE_PX`` up and right of the centre on the screen: dragged from the centre (or toward it)
it scales the prop uniformly by the ratio of the distances, within the library's ``SCALE_RANGE``.

A held prop's handles change its hold offset (its transform relative to the joint, which it follows
afterwards). Each drag is one undo step of the document, taken at its first change (a click is none); only the
figures with a hand on one of the prop's points move, to keep it there (``Document.replace_prop``). A value the
library refuses (``Transform``, ``Prop``) changes nothing and shows as one line in ``error_message``. Frames
flow as a target drag's: ``ImageDelivery.set_moving`` on press and release, ``push_now`` per change.

The handles are ``vtkHandleWidget``s in ``SceneView.handles`` as the kinds ``"prop"`` and ``"prop_scale"``
(sizes, hover labels, stacks and pictures as the figure's); ``FiguresPanel.draw`` calls ``follow``. Points
are in the view's coordinates (the selected figure's own) unless named world; metres, radians inside.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from trame.decorators import TrameApp, change
from vtkmodules.vtkInteractionWidgets import vtkHandleWidget, vtkSphereHandleRepresentation

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.placement import SCALE_RANGE, Transform, frame_transform, quat_mul, rotate
from fabrik3d.model.props import Prop

from ..pages import watch_closed_pages
from ..security import failure, page_trigger
from ..view.rings import CATCH_PX, PICK_PX, Rings
from ..view.vtk_parts import MouseWatch, finish
from .dragging import constrain
from .joint_drag import PRIORITY

MOVE, SCALE, TURN = "prop", "prop_scale", "turn"  # (the handles' kinds in ``SceneView.handles``; a ring's turn)
ACTIONS = {MOVE: "move_prop", SCALE: "scale_prop", TURN: "turn_prop"}  # (how a failure names the drag)
# The scale handle's distance from the prop's centre on the screen, up and to the right (render pixels at a
# pixel scale of 1): outside the view ring (``rings.VIEW_RING_PX``).
SCALE_PX = 84.0
COLOURS = {MOVE: (0.88, 0.30, 0.62), SCALE: (0.97, 0.68, 0.84)}  # (a magenta pair: no other handle's, nor a ring's)
GRABBED = (1.0, 0.85, 0.3)  # (as the figure's handles)
# The rings' presses are observed ahead of the figure's rings (``ring_turn``: PRIORITY + 1), behind the stacks'.
RING_PRIORITY = PRIORITY + 1.5


@dataclasses.dataclass
class PropDrag:
    """One drag of a prop's handle or ring, from press to release."""

    kind: str  # MOVE, SCALE or TURN
    prop: Prop  # the prop as it was at the press (a drag back to its start puts it back)
    world: Transform  # its frame in the world at the press
    holder: Transform | None  # the world frame of the joint that holds it (None: a free prop)
    view: Transform  # the view's frame in the world (the selected figure's placement)
    centre: np.ndarray  # (3,) its centre at the press
    origin: np.ndarray  # (3,) where the handle was at the press
    turning: dict[str, Any] = dataclasses.field(default_factory=dict)  # (a ring's: ``MouseTurn.swept``'s record)
    last: np.ndarray | None = None  # the last point (or angle) applied
    stepped: bool = False  # its undo step taken (at its first change)


def holder_frame(document: Any, prop: Prop) -> Transform | None:
    """The world frame of the joint that holds ``prop`` in its figure's current pose (None: a free prop)."""
    if prop.parent is None:
        return None
    slot = document.find(prop.parent.figure)
    pose, j = slot.controller.result, slot.controller.scene.skeleton.names.index(prop.parent.joint)
    return slot.placement.transform.then(frame_transform(pose.positions[j], pose.rotations[j]))


def moved(drag: PropDrag, point: np.ndarray) -> Transform | None:
    """The prop's world frame with its centre moved as the move handle from ``drag.origin`` to ``point``
    (None: where it was)."""
    if np.array_equal(point, drag.origin):
        return None
    centre = drag.centre + (np.asarray(point, float) - drag.origin)
    return Transform(drag.view.apply(centre), drag.world.rotation, drag.world.scale)


def scaled(drag: PropDrag, point: np.ndarray) -> Transform | None:
    """The prop's world frame scaled by the scale handle's distance from the centre at ``point`` over its
    distance at the press, within ``SCALE_RANGE`` (None: as it was)."""
    if np.array_equal(point, drag.origin):
        return None
    reach = float(np.linalg.norm(drag.origin - drag.centre))
    if not reach > 0.0:
        raise ValueError("scale: the scale handle sits on the prop's centre")
    ratio = float(np.linalg.norm(np.asarray(point, float) - drag.centre)) / reach
    scale = min(max(drag.world.scale * ratio, SCALE_RANGE[0]), SCALE_RANGE[1]) if math.isfinite(ratio) else ratio
    return Transform(drag.world.position, drag.world.rotation, scale)


def turned(drag: PropDrag, angle: float) -> Transform | None:
    """The prop's world frame turned by ``angle`` radians (right-handed) about the ring's axis
    (``drag.turning["axis"]``, view coordinates) through its centre (None: as it was)."""
    if angle == 0.0:
        return None
    axis = rotate(drag.view.rotation, np.asarray(drag.turning["axis"], float))
    turn = np.array(rot.axis_angle(tuple(axis.tolist()), checks.number(angle, "turn")))  # type: ignore[arg-type]
    return Transform(drag.world.position, quat_mul(turn, drag.world.rotation), drag.world.scale)


def beside(renderer: Any, point: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """The point ``(dx, dy)`` render pixels from ``point`` on the screen, at its depth."""
    renderer.SetWorldPoint(*(float(v) for v in point), 1.0)
    renderer.WorldToDisplay()
    x, y, z = renderer.GetDisplayPoint()
    renderer.SetDisplayPoint(x + dx, y + dy, z)
    renderer.DisplayToWorld()
    w = np.array(renderer.GetWorldPoint(), dtype=float)
    out = w[:3] / w[3] if w[3] else w[:3]
    return out if np.all(np.isfinite(out)) else np.asarray(point, float)


@TrameApp()
class PropHandles:
    """The picked prop's handles and rings in the view of ``app`` (a ``fabrik3d_web.app.WebApp``: its
    ``scene``, ``document``, ``figures``, ``delivery``, ``stacks``, the drag lock and ray of ``app.drags``, the
    sweep and ``display_point`` of ``app.joint_drag``, ``app.rings.on_handle``, ``screen_points``, ``report``); see
    the module docstring.
    ``app.figures.handles`` is set to it (``FiguresPanel.draw`` calls ``follow``)."""

    def __init__(self, app: Any) -> None:
        self.app, self.server, self.scene = app, app.server, app.scene
        self.rings = Rings(self.scene.label_layer, lambda: self.scene.pixel_scale)  # (over the props, as the handles)
        self.widgets = {kind: self._make(kind) for kind in (MOVE, SCALE)}
        self.shown: str | None = None  # (the prop whose handles are shown)
        self.centre = np.zeros(3)
        self.drag: PropDrag | None = None
        self._placed: dict[str, tuple[float, ...]] = {}  # (kind -> where its widget was put last)
        self._mouse = MouseWatch(
            self.scene.interactor, self._press_ring, self._turn_by_mouse, self._release_ring, RING_PRIORITY
        )
        self.scene.renderer.AddObserver("StartEvent", lambda *_: self._place_scale())  # (the camera may have moved)
        for hook in (self.server.controller.on_client_connected, self.server.controller.on_client_exited):
            hook.add(self.drop)
        watch_closed_pages(self.server, self.drop)
        app.figures.handles = self

    @property
    def state(self) -> Any:
        return self.server.state

    def report(self, message: str) -> None:
        """Show ``message`` in the page's error banner."""
        self.app.report(message)

    # -- what is shown ---------------------------------------------------------------------------------
    def picked(self) -> Prop | None:
        """The prop picked in the panel (state ``prop_picked``), or None."""
        name = self.state["prop_picked"] if "prop_picked" in self.state else None
        if not isinstance(name, str):
            return None
        return next((p for p in self.app.document.props if p.name == name), None)

    def view_frame(self, prop: Prop) -> Transform:
        """A prop's frame in the view's coordinates."""
        doc = self.app.document
        return doc.slot.placement.transform.inverse().then(doc.prop_world(prop))

    def follow(self) -> None:
        """Put the handles and rings on the picked prop where it is now, or hide them if none is picked."""
        prop = self.picked()
        if prop is None:
            self.hide()
            return
        if prop.name != self.shown:
            self.hide()
            self.shown = prop.name
        for kind, widget in self.widgets.items():
            if self.scene.handles.get((kind, prop.name)) is not widget:  # (new, or a new skeleton's dropped it)
                self._attach(kind, widget)
        self.centre = self.view_frame(prop).position
        dragged = None if self.drag is None else self.drag.kind
        if dragged != MOVE:
            self._place(MOVE, self.centre)
        if self.rings.owner is None:
            self.rings.show((MOVE, prop.name), self.centre)
        else:
            self.rings.move(self.centre)
        self._place_scale()

    def hide(self) -> None:
        """No handles, no rings."""
        for kind, widget in self.widgets.items():
            if self.shown is not None and self.scene.handles.get((kind, self.shown)) is widget:
                del self.scene.handles[kind, self.shown]
            if widget.GetEnabled():
                widget.Off()
        self.rings.hide()
        self.shown = None
        self._placed.clear()

    def drop(self, **_: Any) -> None:
        """A page connected or left: a drag it left in the middle ends where it was (its undo step too)."""
        if self.drag is not None:
            self.drag = None
            self.follow()

    @change("prop_picked")
    def pick(self, **_: Any) -> None:
        """The user picked a prop (or none): its handles are shown (or hidden)."""
        self.follow()
        self.app._render()

    def _make(self, kind: str) -> vtkHandleWidget:
        rep = vtkSphereHandleRepresentation()
        rep.SetHandleSize(self.scene.handle_px(kind))
        for prop in (rep.GetProperty(), rep.GetSelectedProperty()):
            finish(prop, specular=0.5)
        rep.GetProperty().SetColor(*COLOURS[kind])
        rep.GetSelectedProperty().SetColor(*GRABBED)
        widget = vtkHandleWidget()
        widget.SetRepresentation(rep)
        widget.EnableAxisConstraintOff()
        calls = {"StartInteractionEvent": self.press, "InteractionEvent": self.move}
        for event, call in {**calls, "EndInteractionEvent": self.release}.items():
            widget.AddObserver(event, lambda _o, _e, call=call: call(kind, np.array(rep.GetWorldPosition(), float)))
        return widget

    def _attach(self, kind: str, widget: vtkHandleWidget) -> None:
        """Show ``widget`` in the view (drawn over the scene, as the figure's handles) among the scene's handles."""
        widget.SetInteractor(self.scene.interactor)
        widget.SetCurrentRenderer(self.scene.label_layer)
        widget.GetRepresentation().SetHandleSize(self.scene.handle_px(kind))
        widget.ProcessEventsOn()
        widget.On()
        self.scene.handles[kind, self.shown] = widget
        self._placed.pop(kind, None)

    def _place(self, kind: str, point: np.ndarray) -> None:
        shown = tuple(float(v) for v in point)
        if self._placed.get(kind) != shown:  # (unchanged: no rebuild of its geometry)
            self._placed[kind] = shown
            self.widgets[kind].GetRepresentation().SetWorldPosition(list(shown))

    def _place_scale(self) -> None:
        """The scale handle ``SCALE_PX`` up and right of the centre on the screen (at every render)."""
        if self.shown is None or (self.drag is not None and self.drag.kind == SCALE):
            return
        offset = SCALE_PX * self.scene.pixel_scale / math.sqrt(2.0)
        self._place(SCALE, beside(self.scene.renderer, self.centre, offset, offset))

    # -- the handles' drags (the widgets' callbacks) ------------------------------------------------------
    def press(self, kind: str, point: Any) -> None:
        """The user pressed the move or the scale handle (``kind``) at ``point``."""
        if self._begin(kind, point) is not None:
            self._placed.pop(kind, None)  # (the widget moves it: ``follow`` puts it back)
            self.app.stacks.worked((kind, self.shown))

    def move(self, kind: str, point: Any) -> None:
        """The user moved the handle to ``point``: the prop moves (or scales) and the next frame shows it."""
        drag = self.drag
        if drag is None or drag.kind != kind:  # (a move without its press: the press starts it)
            if (drag := self._begin(kind, point)) is None:
                return
        point = np.array(point, dtype=float)
        if kind == MOVE:
            lock = self.app.drags.drag_lock()
            point = constrain(lock, drag.origin, point, self.app.drags.scene_ray() if lock else None)
            if np.all(np.isfinite(point)):
                self.widgets[MOVE].GetRepresentation().SetWorldPosition(list(point))
        if drag.last is not None and np.array_equal(point, drag.last):
            return
        drag.last = point
        self._change(lambda: moved(drag, point) if kind == MOVE else scaled(drag, point), drag)

    def release(self, kind: str, point: Any) -> None:
        """The user let go of the handle: its last move, then the still image and the panel's state; a click (no
        change) passes the next press there to a handle it covers, as a figure's
        (``fabrik3d_web.view.handle_stacks``)."""
        if self.drag is None or self.drag.kind != kind:
            return
        self.move(kind, point)
        stacks = self.app.stacks
        stacks.release()
        stacks.reset() if self.drag.stepped else stacks.clicked((kind, self.shown))
        self._end()

    # -- the rings' turns (the interactor's events, ahead of the camera and the figure's rings) ----------
    def _take(self, event: str) -> None:
        self._mouse.take(event)

    def _press_ring(self, it: Any, event: str) -> None:
        if self.rings.owner is None or self.state.rotate_held is True or self.state.alt_held is True:
            return
        x, y = it.GetEventPosition()
        if self.app.rings.on_handle(x, y):  # (a handle's press: its own drag)
            return
        ring, near = self.rings.pick(x, y)
        if ring is None or near > CATCH_PX:
            return
        self._take(event)  # (a near miss too: not the camera's)
        if near > PICK_PX:
            return
        self.begin_turn(ring, x, y)

    def begin_turn(self, ring: str, x: float, y: float) -> None:
        """Start turning the picked prop with ring ``ring`` (``"x"``, ``"y"``, ``"z"`` or ``"view"``) from
        the press at render pixel ``(x, y)``."""
        drag = self._begin(TURN, self.centre)
        if drag is None:
            return
        drag.turning = {
            "centre": self.app.joint_drag.display_point(drag.centre),
            "axis": self.rings.axis(ring),
            "from": None,
        }
        if ring != "view":  # (the view ring: the sweep on the screen, about the line of sight)
            drag.turning["origin"] = drag.centre.copy()
        self.app.joint_drag.swept(drag.turning, x, y)  # (the turn counts from the press, on the ring)

    def _turn_by_mouse(self, it: Any, event: str) -> None:
        drag = self.drag
        if drag is None or drag.kind != TURN:
            return
        self._take(event)
        angle = self.app.joint_drag.swept(drag.turning, *it.GetEventPosition())
        if angle is None or (drag.last is not None and float(drag.last[0]) == angle):
            return
        drag.last = np.array([angle])
        self._change(lambda: turned(drag, angle), drag)

    def _release_ring(self, it: Any, event: str) -> None:
        if self.drag is None or self.drag.kind != TURN:
            return
        self._take(event)
        self._end()

    # -- one drag ------------------------------------------------------------------------------------
    def _begin(self, kind: str, origin: Any) -> PropDrag | None:
        """A drag of ``kind`` from ``origin`` starts (None: no prop is picked)."""
        self.drag, prop, doc = None, self.picked(), self.app.document
        if prop is None:
            return None
        view, world = doc.slot.placement.transform, doc.prop_world(prop)
        centre = view.inverse().then(world).position
        self.drag = PropDrag(kind, prop, world, holder_frame(doc, prop), view, centre, np.array(origin, dtype=float))
        with self.state:
            self.report("")
        self.app.delivery.set_moving(True)
        return self.drag

    def _change(self, make: Callable[[], Transform | None], drag: PropDrag) -> None:
        """Put the prop where ``make()`` says (its world frame; None: as at the press); a value the library
        refuses changes nothing and is reported."""
        doc = self.app.document
        try:
            world = make()
            current = doc.prop(drag.prop.name)
            local = None if world is None else world if drag.holder is None else drag.holder.inverse().then(world)
            new = drag.prop if local is None else dataclasses.replace(current, transform=local)
        except Exception as exc:
            with self.state:
                self.report(failure(ACTIONS[drag.kind], exc))
            return
        if new is current:
            return
        if not drag.stepped:
            doc.step()  # (one undo step for the whole drag)
            drag.stepped = True
        doc.replace_prop(current, new)  # (the figures with a hand on it follow: the selected one's pose too)
        self.app._show_pose()
        self.app.delivery.push_now()

    def _end(self) -> None:
        self.drag = None
        self.app.delivery.set_moving(False)
        with self.state:
            self.app.figures.refresh()  # (the panel's place, undo, and the still image)

    # -- where the handles are on the page (tests and automation) ------------------------------------
    @page_trigger("prop_handle_screen_position")
    def prop_handle_screen_position(self, handle: Any = "move") -> list[float]:
        """``[x, y]`` of the picked prop's ``"move"`` or ``"scale"`` handle in CSS pixels from the view's
        top-left."""
        kind = {"move": MOVE, "scale": SCALE}.get(handle) if isinstance(handle, str) else None
        if kind is None:
            raise ValueError(f"handle: expected move or scale, got {checks.quoted(handle)}")
        if self.shown is None:
            raise ValueError("prop_handle_screen_position: no prop is picked")
        return self.app.screen_points.css(*self.scene.handle_display_position(kind, self.shown))
