"""Handles on the same pixel (issue 32 item 2): in the Side view the two hands (and toes) sit on one pixel,
in the Top view the head covers the pelvis. A press on a stack grabs the handle the user last worked on
(grabbed, dragged or turned: ``worked``), if it is in the stack, not the front-most one (issue 51 item 4):
the others take no mouse events for that press (``prefer``). A click (a press and a release without a
move) on a handle that another covers passes the next press at that spot to the next handle of the
stack: that handle takes no mouse events (``vtkHandleWidget.ProcessEventsOff``) until the stack has gone
round, a handle is dragged, or the camera is turned. The page's hover label (``handle_screen``) names
the handle the next press grabs, saying that a click passes to the next (``label``): a passed handle,
or one the last worked on covers, is left out of it (``ImageDelivery.handle_points``).

``HandleStacks`` is held by ``fabrik3d_web.app.WebApp`` (``app.stacks``; the drags' ``DragActions`` calls
``clicked`` and ``reset``); the scene is ``fabrik3d_web.view.scene_view.SceneView``.
"""

from __future__ import annotations

from typing import Any

# Handles whose centres lie within this share of a handle's size on the screen form a stack.
STACK_REACH = 0.6
# The press observer's priority: ahead of the rings, the turns and the handles (``joint_drag.PRIORITY``).
PRESS_PRIORITY = 12.0

Key = tuple[str, str]  # (kind, name) of a handle, as ``SceneView.handles``' keys


class HandleStacks:
    """The handles a click passed over (see the module docstring)."""

    def __init__(self, scene: Any) -> None:
        self.scene = scene
        self.passed: dict[Key, Any] = {}  # (key -> its widget: a new skeleton's handles are other widgets)
        self.last: Key | None = None  # (the handle the user last worked on)
        self.held: list[Any] = []  # (the widgets ``prefer`` kept from this press)
        scene.style.AddObserver("StartInteractionEvent", lambda *_: self.reset())  # (the camera turned)
        # (a widget takes a press only where the mouse's last move found it nearest: the choice is made
        # as the mouse comes, and again at the press)
        scene.interactor.AddObserver("MouseMoveEvent", self._press, PRESS_PRIORITY)
        scene.interactor.AddObserver("LeftButtonPressEvent", self._press, PRESS_PRIORITY)

    def worked(self, key: Key) -> None:
        """The user grabbed, dragged or turned handle ``key``: a press on its stack grabs it."""
        self.last = key

    def stack_under(self, x: float, y: float) -> list[Key]:
        """The handles taking the mouse whose centres lie within a stack's reach of render pixel
        ``(x, y)``, front-most first."""
        scene, out = self.scene, []
        camera = scene.renderer.GetActiveCamera().GetPosition()
        for key, widget in scene.handles.items():
            if widget.GetEnabled() and widget.GetProcessEvents():
                hx, hy, _, _ = scene.handle_display_position(*key)
                if (hx - x) ** 2 + (hy - y) ** 2 <= scene.handle_px(key[0]) ** 2:
                    p = widget.GetRepresentation().GetWorldPosition()
                    out.append((sum((a - b) ** 2 for a, b in zip(p, camera, strict=True)), key))
        return [k for _, k in sorted(out)]

    def prefer(self, x: float, y: float) -> None:
        """The mouse at render pixel ``(x, y)`` (moving, or pressed): on a stack holding the last handle
        worked on, the others of it take no mouse events until it leaves or lets go (``release``)."""
        self.release()
        stack = self.stack_under(x, y)
        if len(stack) < 2 or self.last not in stack or stack[0] == self.last:
            return
        for key in stack:
            if key != self.last:
                widget = self.scene.handles[key]
                widget.ProcessEventsOff()
                self.held.append(widget)

    def release(self) -> None:
        """The press ``prefer`` steered is over: the handles it kept take the mouse again (not those a
        click passed)."""
        passed = {id(w) for w in self.passed.values()}
        for widget in self.held:
            if id(widget) not in passed:
                widget.ProcessEventsOn()
        self.held = []

    def label(self, key: Key, text: str) -> str | None:
        """The hover label of handle ``key`` (``text``), or None where the last handle worked on covers
        it; with ", click: the next" where others share its pixel."""
        x, y, _, _ = self.scene.handle_display_position(*key)
        stack = self.stack_under(x, y)
        if len(stack) < 2:
            return text
        if self.last in stack and key != self.last:
            return None
        return f"{text} (a click: the next of {len(stack)})"

    def _press(self, it: Any, event: str) -> None:
        self.prefer(*it.GetEventPosition())

    def stack_at(self, key: Key) -> list[Key]:
        """The handles shown on the pixel of handle ``key`` (itself included), front-most first as VTK
        picks them (nearest the camera)."""
        scene = self.scene
        x, y, _, _ = scene.handle_display_position(*key)
        reach = STACK_REACH * scene.handle_px(key[0])
        camera = scene.renderer.GetActiveCamera().GetPosition()
        out = []
        for other, widget in scene.handles.items():
            if not widget.GetEnabled():
                continue
            ox, oy, _, _ = scene.handle_display_position(*other)
            if (ox - x) ** 2 + (oy - y) ** 2 <= reach**2:
                p = widget.GetRepresentation().GetWorldPosition()
                out.append((sum((a - b) ** 2 for a, b in zip(p, camera, strict=True)), other))
        return [k for _, k in sorted(out)]

    def clicked(self, key: Key) -> None:
        """The user clicked handle ``key`` without moving it: the next press there goes to the next
        handle of its stack (after the last, to the first again)."""
        stack = self.stack_at(key)
        if len(stack) < 2:
            self.reset()
            return
        widget = self.passed[key] = self.scene.handles[key]
        widget.ProcessEventsOff()
        if all(self.passed.get(k) is self.scene.handles[k] for k in stack):
            self.reset()

    def reset(self) -> None:
        """Every handle takes the mouse again."""
        for widget in self.passed.values():
            widget.ProcessEventsOn()
        self.passed = {}
