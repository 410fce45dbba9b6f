"""Turning a joint with the mouse: Alt + click a joint in the 3D view chooses it (the "Turn a joint"
section shows it), Alt + drag turns it about the line of sight, by the angle the mouse sweeps around
the joint on the screen (counted from where it first leaves the joint), within its own limits
(``fabrik3d_web.document.turning``); the root too (the whole skeleton turns about it; without Alt its handle
moves it). The whole drag is one undo step.

``JointDrag`` is a component (given what it reads and calls; the app holds it as ``joint_drag``). It
observes the render window interactor ahead of the camera style and the handle widgets (a higher priority)
and takes a left-button press only with Alt held on a joint (within ``PICK_PX`` pixels of it on the
screen); the handles and the camera keep every other press.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.solver.fk import joint_turn

from ..view.vtk_parts import MouseWatch, display_ray, toward_viewer
from .component import Component
from .dragging import Held

# A press within this many render-window pixels of a joint picks it.
PICK_PX = 14.0
# A finger's joint (a rider: ``Skeleton.riders``) is picked only when its bone to its parent is this
# long on the screen (zoomed on the hand); farther away, a press near the hand picks the hand.
RIDER_PX = 10.0
# The mouse turns the joint by the angle it sweeps around it, counted once it is this far off it (pixels).
START_PX = 8.0
# A ring's plane seen more nearly edge-on than this (the cosine of the ray to its axis) is turned by
# the mouse's sweep on the screen instead.
EDGE_ON = 0.25
# Observer priority: above the camera style's and the widgets' (0 and 0.5).
PRIORITY = 10.0


class MouseTurn(Component):
    """What turning something with the mouse around its point on the screen takes (``JointDrag``,
    ``fabrik3d_web.drags.target_turn.TargetTurn``): the line of sight, the angle swept, the end.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        held: what the user holds down in the view (``fabrik3d_web.drags.dragging.Held``: the turn in progress).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its renderer and interactor).
        delivery: the view's image stream, ``ImageDelivery`` (a getter: it is made after the turns, whose VTK
            observers go first).
        attempt: runs an action, its failure shown (``WebApp._attempt``).
        publish: the controller's state to the page and the scene (``WebApp._publish``).
        show_pose: the pose in the 3D scene (``WebApp._show_pose``).
        show_rings: rings around a handle or a joint (``RingTurn.show_rings``).
    """

    def __init__(self, server: Any, document: Any, held: Held, scene: Any, delivery: Callable[[], Any],
                 attempt: Callable[..., Any], publish: Callable[[], None], show_pose: Callable[..., None],
                 show_rings: Callable[[str, str], None]) -> None:  # fmt: skip
        self.server, self.document, self.held, self.scene, self._delivery = server, document, held, scene, delivery
        self._attempt, self._publish, self._show_pose, self.show_rings = attempt, publish, show_pose, show_rings

    @property
    def delivery(self) -> Any:
        """The view's image stream."""
        return self._delivery()

    def toward_viewer(self) -> np.ndarray:
        """``(3,)`` the unit line of sight, toward the viewer (the camera's, in either projection)."""
        return toward_viewer(self.scene.renderer.GetActiveCamera())

    def swept(self, turning: dict[str, Any], x: float, y: float) -> float | None:
        """The angle (radians, counterclockwise on the screen) the mouse at render-window pixel
        ``(x, y)`` has swept around ``turning["centre"]`` since it first left it by ``START_PX``
        (kept in ``turning["from"]``); None until then. With ``turning["origin"]`` (a ring's turn), the
        angle right-handed about ``turning["axis"]`` that the mouse's ray, met with the plane through
        the origin across the axis, has swept there (on the screen as above where the plane is seen
        nearly edge-on)."""
        angle = self._in_plane(turning, x, y) if "origin" in turning else None
        if angle is None:
            dx, dy = x - turning["centre"][0], y - turning["centre"][1]
            if math.hypot(dx, dy) < START_PX:
                return None  # (too near the centre for a direction)
            angle = math.atan2(dy, dx)
            if "origin" in turning and float(np.dot(turning["axis"], self.toward_viewer())) < 0.0:
                angle = -angle  # (the axis faces away: counterclockwise on the screen turns it back)
        if turning["from"] is None:
            turning["from"] = angle
            return None
        return angle - turning["from"]

    def _in_plane(self, turning: dict[str, Any], x: float, y: float) -> float | None:
        """The angle of the mouse's ray's meeting with the ring's plane about its axis (``swept``), or
        None where the plane is seen nearly edge-on or the point lies on the axis."""
        near, ray = display_ray(self.scene.renderer, x, y)
        axis, origin = np.asarray(turning["axis"], dtype=float), turning["origin"]
        ray /= np.linalg.norm(ray)
        if abs(float(ray @ axis)) < EDGE_ON:
            return None
        hit = near + ray * float((origin - near) @ axis) / float(ray @ axis) - origin
        u = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(axis, u)
        if math.hypot(float(hit @ u), float(hit @ v)) < 1e-9:
            return None
        return math.atan2(float(hit @ v), float(hit @ u))

    def _end_turn(self) -> None:
        """A turning drag ended: one undo step, the still image, the page's state."""
        self.controller.end_drag()
        self.delivery.set_moving(False)
        with self.state:
            self._publish()


class JointDrag(MouseTurn):
    """Alt + click chooses a joint, Alt + drag turns it (see the module docstring); it observes the interactor's
    left button and moves from its construction (the arguments: ``MouseTurn``'s)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._joint_mouse = MouseWatch(
            self.scene.interactor, self._press_joint, self._turn_joint_by_mouse, self._release_joint, PRIORITY
        )

    def joint_at(self, x: float, y: float) -> str | None:
        """The joint (the root too) nearest to render-window pixel ``(x, y)`` within ``PICK_PX``, or None;
        a finger's joint only when zoomed on its hand (``RIDER_PX``), never a fingertip's end (no turn)."""
        c, best, name = self.controller, PICK_PX, None
        sk = c.scene.skeleton
        riders = set(getattr(sk, "riders", ()))
        screen = [self.display_point(point) for point in c.result.positions]
        for j, (sx, sy) in enumerate(screen):
            d = math.hypot(sx - x, sy - y)
            if d > best:
                continue
            if sk.names[j] in riders:
                parent = screen[int(sk.parents[j])]
                if sk.first_child(j) < 0 or math.hypot(sx - parent[0], sy - parent[1]) < RIDER_PX:
                    continue
            best, name = d, sk.names[j]
        return name

    def display_point(self, point: Any) -> tuple[float, float]:
        """Render-window pixels (origin bottom-left) of the world point ``point``."""
        ren = self.scene.renderer
        ren.SetWorldPoint(*(float(v) for v in point), 1.0)
        ren.WorldToDisplay()
        x, y, _ = ren.GetDisplayPoint()
        return float(x), float(y)

    def _take(self, event: str) -> None:
        """Keep the event from the camera style and the widgets."""
        self._joint_mouse.take(event)

    def _press_joint(self, it: Any, event: str) -> None:
        if not (it.GetAltKey() or self.state.alt_held is True):  # (the page tells the Alt key: vtk.js does not)
            return
        x, y = it.GetEventPosition()
        name = self.joint_at(x, y)
        if name is None:
            return
        self._take(event)
        self.begin_joint_turn(name, self.toward_viewer())

    def begin_joint_turn(self, name: str, axis: np.ndarray, origin: np.ndarray | None = None) -> dict[str, Any]:
        """Start turning joint ``name`` about ``axis`` by the mouse's sweep around it on the screen, or
        with ``origin`` (a world point) by its sweep in the plane through it across ``axis`` (a ring's);
        the turn's record (``swept``'s)."""
        c = self.controller
        sk = c.scene.skeleton
        j = sk.index(name)
        t = self.held.turning = {
            "name": name,
            "from": None,  # (the angle of the mouse around the joint, once it is off the joint)
            "centre": self.display_point(c.result.positions[j]),
            "axis": tuple(np.asarray(axis, dtype=float).tolist()),
            "frame": tuple(c.result.rotations[j].tolist()),
            "rest": tuple(joint_turn(sk, c.result.rotations, name).tolist()),
        }
        if origin is not None:
            t["origin"] = np.array(origin, dtype=float)
        with self.state:
            self.state.selected_joint = name
        self.show_rings("joint", name)
        c.begin_drag()
        self.delivery.set_moving(True)
        return t

    def _turn_joint_by_mouse(self, it: Any, event: str) -> None:
        t = self.held.turning
        if t is None:
            return
        self._take(event)
        swept = self.swept(t, *it.GetEventPosition())
        if swept is None:
            return
        # (counterclockwise on the screen: a right-handed turn about the axis toward the viewer)
        frame = rot.mul(rot.axis_angle(t["axis"], swept), t["frame"])
        # the turn from rest: rest_turn composed with the change of the joint's frame in its parent's
        change = rot.mul(rot.conj(t["frame"]), frame)
        turn = rot.normalize_quat(rot.mul(t["rest"], change))
        angles = list(rot.euler_xyz(turn))
        if self._attempt(lambda: self.controller.turn(t["name"], angles, undoable=False)):
            self._show_pose()
            self.delivery.push_now()

    def _release_joint(self, it: Any, event: str) -> None:
        if self.held.turning is None:
            return
        self._take(event)
        self.held.turning = None
        self._end_turn()
