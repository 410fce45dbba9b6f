"""Dragging a handle in the 3D view: press, move, release, and the drag's locks.

A handle's widget moves in the plane facing the camera. A lock keeps it on a line or a plane
through the point where the drag started:

* ``"x"``, ``"y"``, ``"z"``: along that axis only (the point of the axis nearest to the mouse's ray,
  so the handle stays under the cursor's projection on the axis); the other two coordinates are
  exactly those of the start;
* ``"ground"``: in the horizontal plane of the start (the mouse's ray meets it), the height kept.

The lock is the axis key held during the drag (state ``drag_key``: X, Y or Z held down) or else the
toolbar's choice (state ``drag_lock``). Where the mouse's ray runs (nearly) along the axis or the
plane, the widget's own point is projected instead: the lock still holds, the cursor leads less.

``DragActions`` is a component (given what it reads and calls, as ``fabrik3d_web.drags.screen_points``'s); the
app holds it as ``drags`` and gives ``SceneView`` its grab, drag and release callbacks. ``Held``: what the user
holds down in the view now, shared with the joint's and the target's turns.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from trame.decorators import TrameApp, change

from fabrik3d.model.mass import rest_ground

from ..view.depth_cues import DepthCues
from ..view.vtk_parts import display_ray
from .component import Component

AXES = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]), "z": np.array([0.0, 0.0, 1.0])}
LOCKS = ("", "x", "y", "z", "ground")  # "": free (the camera's plane)
# Below this sine of the angle between the mouse's ray and the axis (or the ground plane), the
# widget's point is projected instead of meeting the ray.
GRAZING = 0.08
# During a drag the scene changes on every mouse move, the page's state at most this often (seconds).
DRAG_STATE_INTERVAL = 0.1


def constrain(
    lock: str, origin: np.ndarray, point: np.ndarray, ray: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """Where a handle dragged from ``origin`` goes under ``lock`` (``LOCKS``).

    Args:
        lock: ``""`` (``point`` itself), ``"x"``, ``"y"``, ``"z"`` or ``"ground"``.
        origin: ``(3,)`` the handle's position when the drag started.
        point: ``(3,)`` where the widget put it (in the plane facing the camera).
        ray: the mouse's ray, ``(start, direction)`` ``(3,)`` each in scene units, or None.
    """
    point = np.asarray(point, dtype=float)
    if lock not in AXES and lock != "ground":
        return point
    origin = np.asarray(origin, dtype=float)
    if ray is not None:
        start, direction = ray
        length = float(np.linalg.norm(direction))
        if length > 0.0 and np.all(np.isfinite(direction)):
            d = direction / length
            if lock == "ground":
                if abs(d[1]) > GRAZING and (s := (origin[1] - start[1]) / d[1]) > 0.0:
                    hit = start + s * d
                    return np.array([hit[0], origin[1], hit[2]])
            else:
                axis = AXES[lock]
                b = float(axis @ d)
                if 1.0 - b * b > GRAZING * GRAZING:  # (the nearest point of the axis to the ray)
                    w = origin - start
                    t = (b * float(d @ w) - float(axis @ w)) / (1.0 - b * b)
                    return origin + t * axis
    if lock == "ground":
        return np.array([point[0], origin[1], point[2]])
    axis = AXES[lock]
    return origin + float((point - origin) @ axis) * axis


@dataclasses.dataclass
class Held:
    """What the user holds down in the view now (None: nothing): a handle's drag, a joint's turn, a target's
    turn. ``DragActions``, ``JointDrag`` and ``TargetTurn`` share one; the app reads ``dragging``."""

    dragging: tuple[str, str] | None = None  # ``(kind, name)`` of the handle dragged
    turning: dict[str, Any] | None = None  # the joint turned (``JointDrag.begin_joint_turn``'s record)
    target_turning: dict[str, Any] | None = None  # the target turned (``TargetTurn.begin_target_turn``'s)

    def let_go(self) -> bool:
        """Nothing held any more; whether something was."""
        was = any(v is not None for v in (self.dragging, self.turning, self.target_turning))
        self.dragging, self.turning, self.target_turning = None, None, None
        return was


@TrameApp()
class DragActions(Component):
    """The 3D view's drag callbacks (``SceneView``'s), with the locks, and a page left in a drag's middle.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        held: what the user holds down in the view (shared with the turns).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its handles and interactor).
        delivery: the view's image stream, ``ImageDelivery`` (a getter: it is made after the drags, whose VTK
            observers go first).
        attempt: runs an action, its failure shown (``WebApp._attempt``).
        publish: the controller's state to the page and the scene (``WebApp._publish``).
        show_pose: the pose in the 3D scene (``WebApp._show_pose``).
        show_rings: rings around a handle (``RingTurn.show_rings``).
        stacks: the handles' stacks (``fabrik3d_web.view.handle_stacks.HandleStacks``).
        timeline: the timeline's panel (a getter, made later: its frame slider held, ``scrubbing``).
        own: sets server-owned state keys.
    """

    def __init__(self, server: Any, document: Any, held: Held, scene: Any, delivery: Callable[[], Any],
                 attempt: Callable[..., Any], publish: Callable[[], None], show_pose: Callable[..., None],
                 show_rings: Callable[[str, str], None], stacks: Any, timeline: Callable[[], Any],
                 own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.held, self.scene, self.stacks = server, document, held, scene, stacks
        self._delivery, self._timeline = delivery, timeline
        self._attempt, self._publish, self._show_pose, self._own = attempt, publish, show_pose, own
        self.show_rings = show_rings
        self._depth_cues: DepthCues | None = None
        self._drag_origin = np.zeros(3)
        self._drag_last: np.ndarray | None = None
        self._drag_pending: tuple[str, str, np.ndarray] | None = None
        self._drag_scheduled = self._state_pending = False
        self._state_pushed = 0.0

    @property
    def delivery(self) -> Any:
        """The view's image stream."""
        return self._delivery()

    def grab_handle(self, kind: str, name: str, point: Any) -> None:
        """The user pressed the mouse on a handle (an effector's is then the selected one: Delete frees it)."""
        self.held.dragging = (kind, name)
        self._drag_origin = np.array(point, dtype=float)
        self._drag_last = None
        self._drag_pending = None
        self.controller.begin_drag()
        self.delivery.set_moving(True)
        self._own({"selected_effector": name if kind == "target" else ""})
        self.stacks.worked((kind, name))
        self._show_depth(point)
        if kind in ("target", "root"):
            self.show_rings(kind, name)

    def _show_depth(self, point: Any) -> None:
        """The drag's depth cues at the handle's ``point`` (None: none; ``fabrik3d_web.view.depth_cues``)."""
        cues = self._depth_cues
        if cues is None:
            cues = self._depth_cues = DepthCues(self.scene.renderer, self.scene.label_layer)
        if point is None:
            cues.hide()
            self._own({"drag_depth": ""})
            return
        c = self.controller
        floor = c.scene.floor if c.scene.floor is not None else rest_ground(c.scene.skeleton)
        self._own({"drag_depth": cues.show(point, float(floor), c.size)})

    def drag_handle(self, kind: str, name: str, point: Any) -> None:
        """The user moved a handle: solve from the previous pose and show it in the next frame.

        The handle follows at once; the solve waits until the moves already received are read, and
        solves the last one only (a slow solve lets moves queue up: they are not solved one by one).
        A move to where the handle already is solves nothing (the readouts keep the last solve's)."""
        if self.held.dragging != (kind, name):  # (a move without its press: the press starts it)
            self.grab_handle(kind, name, point)
        lock = self.drag_lock()
        point = constrain(lock, self._drag_origin, point, self.scene_ray() if lock else None)
        self.scene.handles[kind, name].GetRepresentation().SetWorldPosition(list(point))
        self._show_depth(point)
        if self._drag_last is not None and np.array_equal(point, self._drag_last):
            return
        self._drag_last = point
        self._drag_pending = (kind, name, point)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (tests in-process): at once
            self._solve_drag()
            return
        if not self._drag_scheduled:
            self._drag_scheduled = True
            loop.call_soon(self._solve_drag)

    def _solve_drag(self) -> None:
        """Solve for the drag's last move (if not solved yet) and show it."""
        self._drag_scheduled = False
        pending, self._drag_pending = self._drag_pending, None
        if pending is None or self.held.dragging is None:
            return
        kind, name, point = pending
        moved = self._attempt(self._move, kind, name, point, False)
        self._show_pose((kind, name) if moved else None)
        self.delivery.push_now()
        now = time.perf_counter()
        if now - self._state_pushed >= DRAG_STATE_INTERVAL or not moved:
            self._push_drag_state()
        else:
            self._push_drag_state_later(DRAG_STATE_INTERVAL - (now - self._state_pushed))

    def release_handle(self, kind: str, name: str, point: Any) -> None:
        """The user let go of a handle (its last move solved first); one let go where it was pressed (a
        click) passes the next press to the handle it covers, if any (``fabrik3d_web.view.handle_stacks``)."""
        stacks, last = self.stacks, self._drag_last
        moved = last is not None and not np.array_equal(last, self._drag_origin)
        stacks.release()
        stacks.reset() if moved else stacks.clicked((kind, name))
        self._solve_drag()
        self.held.dragging = None
        self._show_depth(None)
        self.controller.end_drag()
        self.delivery.set_moving(False)
        with self.state:
            self._publish()

    def page_connected(self, **_: Any) -> None:
        """A page connected or left (``fabrik3d_web.pages``: its tab closed): a drag, a joint's turn,
        a camera's turn or a scrub that a page left in the middle (its button never released) ends
        where it was, its undo step too, and the view renders again: trame-vtk's stream, held while
        something moved, is released for the pages still open (issue 33 item 8)."""
        timeline = self._timeline()
        scrubbing, timeline.scrubbing = timeline.scrubbing, False
        if self.held.let_go():
            self.controller.end_drag()
        elif not (self.delivery.held or scrubbing):
            return
        self.delivery.set_moving(False)
        with self.state:
            self._publish()

    def _move(self, kind: str, name: str, point: Any, undoable: bool) -> None:
        if kind == "root":
            self.controller.move_root(point, undoable=undoable)
        elif kind == "pole":
            self.controller.move_pole(name, point, undoable=undoable)
        elif kind == "look":
            self.controller.look_toward(point, undoable=undoable)
        else:
            self.controller.move_target(name, point, undoable=undoable)

    def _push_drag_state(self) -> None:
        """The readouts of the drag so far (the page follows at most every DRAG_STATE_INTERVAL)."""
        self._state_pushed = time.perf_counter()
        c = self.controller
        with self.state:
            self._own({**c.state(), "fps": round(c.fps, 1)})

    def _push_drag_state_later(self, delay: float) -> None:
        """The last moves of a drag that pauses reach the readouts too, ``delay`` seconds from now."""
        if self._state_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (tests in-process): the release publishes
            return

        def push() -> None:
            self._state_pending = False
            if self.held.dragging is not None:
                self._push_drag_state()

        self._state_pending = True
        loop.call_later(max(delay, 0.0), push)

    def drag_lock(self) -> str:
        """The lock in force: the axis key held down, else the toolbar's (``""``: none)."""
        key = self.state["drag_key"] if "drag_key" in self.state else ""
        if isinstance(key, str) and key in AXES:
            return key
        lock = self.state["drag_lock"] if "drag_lock" in self.state else ""
        return lock if isinstance(lock, str) and lock in LOCKS else ""

    def scene_ray(self) -> tuple[np.ndarray, np.ndarray]:
        """The mouse's ray through the view at the interactor's event position (scene units)."""
        return display_ray(self.scene.renderer, *self.scene.interactor.GetEventPosition())

    @change("drag_lock", "drag_key")
    def check_drag_lock(self, drag_lock: Any = "", drag_key: Any = "", **_: Any) -> None:
        """The page chose a lock (toolbar) or held an axis key: anything else is no lock."""
        if not (isinstance(drag_lock, str) and drag_lock in LOCKS):
            self.state.drag_lock = ""
        if not (isinstance(drag_key, str) and (drag_key in AXES or drag_key == "")):
            self.state.drag_key = ""
