"""Turning with the rotation rings (issue 51, item 1; the rings: ``fabrik3d_web.view.rings``).

Grabbing or clicking a hand's, a foot's, the head's or the pelvis's handle (or R-dragging it) shows the
rings around it; choosing a joint with Alt shows them around the joint. A press on a ring (within
``rings.PICK_PX``) turns the target, the root or the joint about that ring's axis by the angle the
mouse sweeps around the ring's centre in the ring's plane (the view ring: about the line of sight), as
R and Alt do (``fabrik3d_web.drags.target_turn``, ``fabrik3d_web.drags.joint_drag``, which carry the drag on); a
press that misses a ring by a few pixels (``rings.CATCH_PX``) does nothing rather than orbit the
camera. Esc, a click on empty space, Reset and a new skeleton hide them (``clear_selection``).

``RingTurn`` is a component (given what it reads and calls; the app holds it as ``rings``, and the rings drawn
as ``rings.view``); from ``watch`` on it observes the interactor ahead of the R and Alt turns and the handles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from trame.decorators import TrameApp

from ..security import page_trigger
from ..view.rings import CATCH_PX, PICK_PX, Rings
from .component import Component
from .joint_drag import PRIORITY, JointDrag
from .target_turn import TargetTurn

# A press and release this near (pixels) on nothing is a click on empty space.
CLICK_PX = 3.0


@TrameApp()
class RingTurn(Component):
    """The rings' presses (see the module docstring), and the trigger ``clear_selection``.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its handles and interactor).
        figures: the Scene tab's figures (a getter: the panel is made after the rings; a click on another
            figure selects it).
        own: sets server-owned state keys (``rings_on``, ``selected_effector``).
        render: pushes a new image of the view (``WebApp._render``).
        report: shows a message in the page's error banner.
        publish: the controller's state to the page and the scene (``WebApp._publish``: after a failed trigger).
    """

    def __init__(self, server: Any, document: Any, scene: Any, figures: Callable[[], Any],
                 own: Callable[[dict[str, Any]], None], render: Callable[[], None], report: Callable[[str], None],
                 publish: Callable[[], None]) -> None:  # fmt: skip
        self.server, self.document, self.scene, self._figures = server, document, scene, figures
        self._own, self._render, self.report, self._publish = own, render, report, publish
        self.view = Rings(self.scene.renderer, lambda: self.scene.pixel_scale)
        self._click: tuple[float, float] | None = None

    def watch(self, joint_drag: JointDrag, target_turn: TargetTurn) -> None:
        """Observe the interactor's presses (once, at start, after the turns that a ring's press starts)."""
        self.joint_drag, self.target_turn = joint_drag, target_turn
        it = self.scene.interactor
        self._ring_tag = it.AddObserver("LeftButtonPressEvent", self._press_ring, PRIORITY + 1.0)
        it.AddObserver("LeftButtonReleaseEvent", self._note_release, PRIORITY + 1.0)
        # (a press the camera takes grabs the interactor's focus: its release reaches the camera style
        # alone, which then ends its interaction)
        it.GetInteractorStyle().AddObserver("EndInteractionEvent", self._note_release)

    def ring_point(self, kind: str, name: str) -> np.ndarray | None:
        """The world point of ``(kind, name)``'s rings: its handle's, or the joint's; None if gone."""
        if kind == "joint":
            sk = self.controller.scene.skeleton
            return self.controller.result.positions[sk.index(name)] if name in sk else None
        widget = self.scene.handles.get((kind, name))
        return None if widget is None else np.array(widget.GetRepresentation().GetWorldPosition())

    def show_rings(self, kind: str, name: str) -> None:
        """Rings around the target or root handle ``name``, or the joint ``name`` (``kind`` "joint")."""
        point = self.ring_point(kind, name)
        if point is not None and kind in ("target", "root", "joint"):
            self.view.show((kind, name), point)
            self._own({"rings_on": f"{kind}:{name}"})

    def follow_rings(self) -> None:
        """The pose changed: the rings go where their handle or joint is now (or away with it)."""
        if self.view.owner is None:
            return
        point = self.ring_point(*self.view.owner)
        if point is None:
            self.hide_rings()
        else:
            self.view.move(point)

    def hide_rings(self) -> None:
        """No rings (Reset, a new skeleton, ``clear_selection``)."""
        self.view.hide()
        self._own({"rings_on": ""})

    @page_trigger("clear_selection")
    def clear_selection(self) -> None:
        """The user pressed Esc (or clicked empty space): no rings, no limb chosen for Copy."""
        self.hide_rings()
        self._own({"selected_effector": ""})
        self._render()

    def _press_ring(self, it: Any, event: str) -> None:
        self._click = None
        if self.state.rotate_held is True or self.state.alt_held is True:
            return
        x, y = it.GetEventPosition()
        if self.view.owner is None:  # (maybe a click on another figure, to select it)
            self._click = None if self.on_handle(x, y) else (x, y)
            return
        ring, near = self.view.pick(x, y)
        if ring is None or near > CATCH_PX:
            self._click = None if self.on_handle(x, y) else (x, y)  # (maybe a click on empty space)
        if ring is None or near > CATCH_PX:
            return
        it.GetCommand(self._ring_tag).SetAbortFlag(1)  # (a near miss: kept from the camera all the same)
        if near > PICK_PX:
            return
        kind, name = self.view.owner
        axis, origin = self.view.axis(ring), self.view.centre.copy()
        if ring == "view":  # (about the line of sight: the sweep on the screen is the turn's)
            origin = None
        if kind == "joint":
            turning = self.joint_drag.begin_joint_turn(name, axis, origin)
        else:
            turning = self.target_turn.begin_target_turn(kind, name, axis, origin)
        self.joint_drag.swept(turning, x, y)  # (the turn counts from the press, on the ring)

    def on_handle(self, x: float, y: float) -> bool:
        """Whether render pixel ``(x, y)`` lies on a handle (its press is the handle's)."""
        for kind, name in self.scene.handles:
            if self.scene.handles[kind, name].GetEnabled():
                hx, hy, _, _ = self.scene.handle_display_position(kind, name)
                if math.hypot(hx - x, hy - y) <= self.scene.handle_px(kind):
                    return True
        return False

    def _note_release(self, caller: Any, event: str) -> None:
        press, self._click = self._click, None
        if press is None:
            return
        x, y = self.scene.interactor.GetEventPosition()
        if math.hypot(x - press[0], y - press[1]) > CLICK_PX:  # (a drag: the camera turned)
            return
        if not self._figures().click(x, y, self.joint_drag.display_point) and self.view.owner is not None:
            self.clear_selection()  # (a click on nothing: the rings go)
