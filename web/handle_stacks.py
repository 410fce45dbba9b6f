"""Handles on the same pixel (issue 32 item 2): in the Side view the two hands (and toes) sit on one pixel,
in the Top view the head covers the pelvis. A click (a press and a release without a move) on a handle
that another covers passes the next press at that spot to the next handle of the stack: that handle
takes no mouse events (``vtkHandleWidget.ProcessEventsOff``) until the stack has gone round, a handle
is dragged, or the camera is turned. The page's hover label (``handle_screen``) names the handle the
next press grabs: a passed handle is left out of it (``ImageDelivery.handle_points``).

``HandleStacks`` is a part of ``fabrik3d_web.app.WebApp`` (``DragActions`` calls ``clicked`` and
``reset``); the scene is ``fabrik3d_web.scene_view.SceneView``.
"""

from __future__ import annotations

from typing import Any

# Handles whose centres lie within this share of a handle's size on the screen form a stack.
STACK_REACH = 0.6

Key = tuple[str, str]  # (kind, name) of a handle, as ``SceneView.handles``' keys


class HandleStacks:
    """The handles a click passed over (see the module docstring)."""

    def __init__(self, scene: Any) -> None:
        self.scene = scene
        self.passed: dict[Key, Any] = {}  # (key -> its widget: a new skeleton's handles are other widgets)
        scene.style.AddObserver("StartInteractionEvent", lambda *_: self.reset())  # (the camera turned)

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
