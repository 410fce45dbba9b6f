"""Turning a target with the mouse: hold R and drag a hand's, a foot's or the head's sphere (or the
root's) around itself, and its target turns about the line of sight (about X, Y or Z with that axis
held or locked in the toolbar) by the angle the mouse sweeps around the sphere on the screen,
counted from where it first leaves it, about the joint it hangs from (a hand about its wrist, a
foot's toe about its ankle: its target moves with it). The hand (foot, head) then keeps that orientation through
later drags of its position; the root's turn turns and tilts the pelvis, the legs following with
their feet where they are (``fabrik3d_web.document.orienting``). The whole drag is one undo step.

``TargetTurn`` is a component (given what it reads and calls; the app holds it as ``target_turn``). Like
``fabrik3d_web.drags.joint_drag`` it observes the render window interactor ahead of the camera style and
the handle widgets, and takes a left-button press only with R held (state ``rotate_held``, set by the
page's key handler) on a target's or the root's sphere (within its size on the screen).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import rotations as rot

from ..document.orienting import turned_about
from ..view.vtk_parts import MouseWatch
from .dragging import AXES, Held
from .joint_drag import PRIORITY, MouseTurn


class TargetTurn(MouseTurn):
    """Hold R and drag a sphere to turn its target (see the module docstring); it observes the interactor's
    left button and moves from its construction.

    Args:
        server, document, held, scene, delivery, attempt, publish, show_pose, show_rings: ``MouseTurn``'s.
        drag_lock: the drag's lock in force (``DragActions.drag_lock``: a turn about an axis held or locked).
        own: sets server-owned state keys (``selected_effector``).
        stacks: the handles' stacks (``fabrik3d_web.view.handle_stacks.HandleStacks``).
    """

    def __init__(self, server: Any, document: Any, held: Held, scene: Any, delivery: Callable[[], Any],
                 attempt: Callable[..., Any], publish: Callable[[], None], show_pose: Callable[..., None],
                 show_rings: Callable[[str, str], None], drag_lock: Callable[[], str],
                 own: Callable[[dict[str, Any]], None], stacks: Any) -> None:  # fmt: skip
        super().__init__(server, document, held, scene, delivery, attempt, publish, show_pose, show_rings)
        self.drag_lock, self._own, self.stacks = drag_lock, own, stacks
        self._target_mouse = MouseWatch(
            self.scene.interactor, self._press_to_turn, self._turn_target_by_mouse, self._release_turn, PRIORITY
        )

    def sphere_at(self, x: float, y: float) -> tuple[str, str] | None:
        """``(kind, name)`` of the target or root sphere under render-window pixel ``(x, y)``, or None."""
        best, found = math.inf, None
        for kind, name in self.scene.handles:
            if kind not in ("target", "root"):
                continue
            hx, hy, _, _ = self.scene.handle_display_position(kind, name)
            d = math.hypot(hx - x, hy - y)
            if d <= self.scene.handle_px(kind) and d < best:
                best, found = d, (kind, name)
        return found

    def _take_turn_event(self, event: str) -> None:
        self._target_mouse.take(event)

    def _press_to_turn(self, it: Any, event: str) -> None:
        if self.state.rotate_held is not True:
            return
        x, y = it.GetEventPosition()
        found = self.sphere_at(x, y)
        if found is None:
            return
        self._take_turn_event(event)
        toward_viewer = self.toward_viewer()
        lock = self.drag_lock()
        axis = toward_viewer
        if lock in AXES:  # (about a world axis: the sweep's sense as seen from the side it faces)
            axis = AXES[lock] * (1.0 if float(AXES[lock] @ toward_viewer) >= 0.0 else -1.0)
        self.begin_target_turn(*found, axis)

    def begin_target_turn(
        self, kind: str, name: str, axis: np.ndarray, origin: np.ndarray | None = None
    ) -> dict[str, Any]:
        """Start turning the target (or root) ``name`` about ``axis`` by the mouse's sweep around its
        handle on the screen, or with ``origin`` (a world point) by its sweep in the plane through it
        across ``axis`` (a ring's: ``MouseTurn.swept``); the turn's record."""
        c = self.controller
        sk = c.scene.skeleton
        hx, hy, _, _ = self.scene.handle_display_position(kind, name)
        t: dict[str, Any] = {"kind": kind, "name": name, "centre": (hx, hy), "axis": axis, "from": None}
        if origin is not None:
            t["origin"] = np.array(origin, dtype=float)
        if kind == "root":
            start = c.root_orientation if c.root_orientation is not None else c.result.rotations[sk.root]
        else:
            start = c.target_orientation(name)
            t["point"] = c.effector_point(name)
            t["pivot"] = c.result.positions[sk.parents[sk.index(name)]].copy()
        t["start"] = np.array(start, dtype=float)
        self.held.target_turning = t
        with self.state:
            self._own({"selected_effector": name if kind == "target" else ""})
        self.show_rings(kind, name)
        self.stacks.worked((kind, name))
        c.begin_drag()
        self.delivery.set_moving(True)
        return t

    def _turn_target_by_mouse(self, it: Any, event: str) -> None:
        t = self.held.target_turning
        if t is None:
            return
        self._take_turn_event(event)
        swept = self.swept(t, *it.GetEventPosition())  # (counterclockwise: right-handed about the axis)
        if swept is None:
            return
        q = turned_about(t["start"], t["axis"], swept)
        c = self.controller
        if t["kind"] == "root":
            done = self._attempt(lambda: c.orient_root(q, undoable=False))
        else:
            turn = turned_about((0.0, 0.0, 0.0, 1.0), t["axis"], swept)
            point = t["pivot"] + np.array(rot.rotate(tuple(turn.tolist()), tuple((t["point"] - t["pivot"]).tolist())))
            done = self._attempt(lambda: c.orient_target(t["name"], q, point, undoable=False))
        if done:
            self._show_pose()
            self.delivery.push_now()

    def _release_turn(self, it: Any, event: str) -> None:
        if self.held.target_turning is None:
            return
        self._take_turn_event(event)
        self.held.target_turning = None
        self._end_turn()
