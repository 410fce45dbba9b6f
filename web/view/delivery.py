"""How the 3D view's images reach the page: trame-vtk's image delivery, tuned for drags.

The server renders the VTK scene (``fabrik3d_web.view.scene_view``) and sends each frame to the page as a
JPEG. Still images (at rest: after a drag, a typed coordinate, a wheel's zoom) go through trame-vtk's
stream, at the view's full size; ``ImageDelivery`` asks for each as soon as trame-vtk's encoder
thread has it. While something moves (a handle's or a joint's drag, the camera turned with the
mouse, a scrub, the timeline playing), trame-vtk's stream is held and each change is rendered small
(``INTERACTIVE_RATIO``), encoded and sent at once (``push_now``), the handles keeping their size on
the page (docs/architecture.md: the path of one drag). After each full-size image it publishes where
the handles are on the page (state ``handle_screen``, for their names on hover).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from vtkmodules.vtkIOImage import vtkJPEGWriter
from vtkmodules.vtkRenderingCore import vtkWindowToImageFilter

from fabrik3d import display

from .scene_view import SceneView

# Image size factor and JPEG quality of the 3D view while dragging and at rest.
INTERACTIVE_RATIO = 0.35
STILL_RATIO = 1.0
INTERACTIVE_QUALITY = 70
# Seconds after a render at which its encoded image is asked for (see ImageDelivery.rendered).
PICKUP_DELAYS = (0.004, 0.012, 0.03, 0.08, 0.2)
# The longest a still image waits for the state and answers sent before it (``still_soon``), seconds.
STILL_WAIT_S = 0.25
# A change shown "image first" (``ImageDelivery.image_first``: a hand shape, a frame stepped or clicked
# on the timeline): its small image at once, the panel and the full-size still image this much later.
PANEL_DELAY_S = 0.06
# What hovering a handle shows, by its kind (``name``: the effector's or root's name, a character's by role:
# ``ImageDelivery._named``).
HANDLE_LABELS = {
    "target": "{name}",
    "root": "{name} (root: moves the whole skeleton)",
    "pole": "{pole}",
    "look": "{name} looks here",
    "prop": "{name} (prop: drag to move it; its rings turn it)",  # (fabrik3d_web.drags.prop_handles)
    "prop_scale": "{name}: scale (drag from or toward its centre)",
}


def role_names(character: Any) -> dict[str, str]:
    """A character's bone name -> its role (``hand_l``: ``Character.effectors`` first, then ``rig_map``);
    empty without a character."""
    if character is None:
        return {}
    roles = {bone: role for role, bone in character.rig_map.items()}
    return {**roles, **{bone: role for role, bone in character.effectors.items()}}


class ImageDelivery:
    """The view's image stream on ``server`` for the scene ``scene``; observes its render window."""

    def __init__(self, server: Any, scene: SceneView, stacks: Any = None) -> None:
        self.server = server
        self.scene = scene
        self.stacks = stacks  # (``fabrik3d_web.view.handle_stacks.HandleStacks``: whose labels show on a stack)
        self._points: list[list[Any]] = []
        self._publishing = False  # (push_now renders: it sends the image itself)
        self._held: bool | None = None  # (while held: whether the stream was enabled)
        self._grab: Any = None
        self._jpeg: Any = None
        self._push_scheduled = False
        self._still_update: Callable[[], None] | None = None  # (``still_soon``'s, until it runs)
        self._still_task: asyncio.Future[None] | None = None  # (the wait before it)
        scene.render_window.AddObserver("StartEvent", self.rendering)
        scene.render_window.AddObserver("EndEvent", self.rendered)
        for event, handler in (
            ("StartInteractionEvent", self.camera_grabbed),
            ("InteractionEvent", self.camera_moved),
            ("EndInteractionEvent", self.camera_released),
        ):
            scene.style.AddObserver(event, handler)

    def camera_grabbed(self, *_: Any) -> None:
        """The user began to turn, pan or dolly the camera with the mouse."""
        self.set_moving(True)

    def camera_moved(self, *_: Any) -> None:
        """The camera moved with the mouse: its frame is sent once the moves already received are read."""
        self.push_soon()

    def camera_released(self, *_: Any) -> None:
        """The user let go of the camera (the page asks for the still image)."""
        self.set_moving(False)

    def protocol(self) -> Any:
        """trame-vtk's image delivery protocol object (None before the server runs)."""
        pair = self.server.protocol.getRPCMethod("viewport.image.push") if self.server.protocol else None
        return pair[0] if pair else None

    def view_css_size(self) -> tuple[float, float] | None:
        """The 3D view's size in CSS pixels, as the page last reported it (None before it did)."""
        size = (self.tracked_view() or {}).get("originalSize")
        return (float(size[0]), float(size[1])) if size else None

    def set_moving(self, moving: bool) -> None:
        """Something moves (a handle's or a joint's drag, the camera turned with the mouse, a scrub,
        the timeline playing): its frames are drawn cheaper, without FXAA and with the see-through
        skin blended in drawing order rather than order-independently (4-5 ms a frame less here;
        the difference hardly shows in a small moving image); at rest with both again. While it
        moves, trame-vtk's stream is held (``hold_stream``): the mover sends each frame with
        ``push_now``."""
        self.scene.renderer.SetUseFXAA(not moving)
        self.scene.renderer.SetUseOIT(not moving)
        self.hold_stream(moving)

    def image_first(self, then: Any) -> None:
        """Send the view's image now, small and quick as a drag's frame, and after ``PANEL_DELAY_S``
        go back to still images and run ``then()`` (the panel's state: the page's work on it would
        hold up the image). Not serving (tests in-process): ``then()`` at once."""
        self.set_moving(True)
        self.push_now()

        def settle() -> None:
            self.set_moving(False)
            then()

        self.after_image(settle)

    def after_image(self, then: Any) -> None:
        """Run ``then()`` ``PANEL_DELAY_S`` from now, once the image just pushed is on its way (the event
        loop sends it only when this turn's work is done). Not serving (tests in-process): at once."""
        try:
            asyncio.get_running_loop().call_later(PANEL_DELAY_S, then)
        except RuntimeError:
            then()

    def tracked_view(self) -> dict[str, Any] | None:
        """trame-vtk's record of the view's stream (None before a page shows it)."""
        delivery = self.protocol()
        return None if delivery is None else delivery.tracking_views.get(str(self.server.state["viewId"]))

    @property
    def held(self) -> bool:
        """Whether trame-vtk's stream is held (something moves)."""
        return self._held is not None

    def hold_stream(self, hold: bool) -> None:
        """While something moves (``hold``), trame-vtk renders nothing itself: neither at its
        animation's ticks (a press in the view starts them) nor after each mouse event; the mover
        sends each frame with ``push_now``. Released, the stream is as it was."""
        view = self.tracked_view()
        if view is None:
            return
        if hold and self._held is None:
            self._held, view["enabled"] = view["enabled"], False
        elif not hold and self._held is not None:
            view["enabled"], self._held = self._held, None

    def push_now(self, quality: int = INTERACTIVE_QUALITY, ratio: float = INTERACTIVE_RATIO) -> None:
        """Render the view at ``ratio`` of its size and send its image (JPEG ``quality``) now: a
        frame of what moves (a handle's or a joint's drag, the camera, the timeline). Encoded here
        (2-3 ms) and published as trame-vtk publishes its images, rather than rendered at
        trame-vtk's next animation tick and left to its encoder thread, whose image is picked up
        4-14 ms later; trame-vtk's stream is held meanwhile (``set_moving``: it would render the
        frame again). One image per change: a mouse move that moves nothing sends none."""
        delivery = self.protocol()
        if delivery is None:  # (not serving: tests in-process)
            return
        view = self.tracked_view() or {}
        size, shown = view.get("originalSize"), self._held if self.held else view.get("enabled", False)
        if not size or not shown:
            return  # (no page shows the view)
        t0 = time.perf_counter()
        pixels = [int(s * ratio + 0.5) for s in size]
        window = self.scene.render_window
        window.SetSize(pixels)
        self._publishing = True
        try:
            window.Render()
            image = self.encode(quality)
        finally:
            self._publishing = False
            # (back to the view's size: the mouse's events map onto the window's pixels, so that a
            # drag's handle follows the mouse to the page's pixel, not to the small image's)
            window.SetSize([int(s * STILL_RATIO + 0.5) for s in size])
        work = round(1e3 * (time.perf_counter() - t0))
        reply = {
            "image": delivery.addAttachment(image),
            "format": "jpeg",
            "id": str(self.server.state["viewId"]),
            "size": pixels,
        }
        delivery.publish("viewport.image.push.subscription", {**reply, "memsize": len(image), "workTime": work})

    def push_soon(self) -> None:
        """``push_now`` after the events already received (one image for a burst of them)."""
        if self._push_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (tests in-process)
            return

        def push() -> None:
            self._push_scheduled = False
            if self.held:  # (still moving)
                self.push_now()

        self._push_scheduled = True
        loop.call_soon(push)

    def still_soon(self, update: Callable[[], None]) -> None:
        """Run ``update`` (the view's still image: trame-vtk's ``VtkRemoteView.update``, a full-size
        render) once this turn's work is done and its messages have left: the answer to the page's call
        and the state it changed are sent first (a key edit's new keys reached the page 100 ms after its
        answer, behind the render, even with nothing else to do), and several changes in one turn render
        once. The wait for the sends is at most ``STILL_WAIT_S``. Not serving (tests in-process): at once."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            update()
            return
        if self._still_update is None:
            self._still_task = asyncio.ensure_future(self._still_after_sends())
        self._still_update = update

    async def _still_after_sends(self) -> None:
        # (this runs once the turn that asked is over: its state flushed, its sends counted as pending by
        # wslink's network monitor, which counts every message published until it has been written)
        monitor = getattr(self.server.context, "network_monitor", None)
        if monitor is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(monitor.completion(), STILL_WAIT_S)
        self._still_task = None
        self._update_still()

    def _update_still(self) -> None:
        update, self._still_update = self._still_update, None
        if update is not None and not self.held:  # (a drag begun meanwhile sends its own frames)
            update()

    def encode(self, quality: int) -> bytes:
        """The render window's last image as JPEG bytes of ``quality`` (0-100)."""
        if self._grab is None:
            self._grab = vtkWindowToImageFilter()
            self._grab.SetInput(self.scene.render_window)
            self._grab.ShouldRerenderOff()
            self._grab.ReadFrontBufferOff()
            self._jpeg = vtkJPEGWriter()
            self._jpeg.WriteToMemoryOn()
            self._jpeg.SetInputConnection(self._grab.GetOutputPort())
        self._grab.Modified()
        self._jpeg.SetQuality(int(quality))
        self._jpeg.Write()
        return bytes(memoryview(self._jpeg.GetResult()))

    def rendering(self, *_: Any) -> None:
        """Before every render: handles keep their size on the page in small drag images too."""
        css = self.view_css_size()
        if css is not None:
            self.scene.set_pixel_scale(self.scene.render_window.GetSize()[0] / css[0])

    def rendered(self, *_: Any) -> None:
        """After every render: ask for the encoded image soon, instead of at the next tick.

        trame-vtk encodes images on a thread; a push first sends the last image already
        encoded, and the new one at the next animation tick (during a drag) or half a
        second later (otherwise). Asking again a few milliseconds after the render sends it
        as soon as it is encoded; a request with nothing new sends nothing.
        """
        delivery = self.protocol()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (tests in-process)
            return
        if self._publishing:
            return
        if delivery is not None:
            for delay in PICKUP_DELAYS:
                loop.call_later(delay, delivery.push_render, str(self.server.state["viewId"]), True)
        if self.scene.pixel_scale > 0.9:  # a still image (not a drag's or an orbit's small one)
            points = self.handle_points()
            if points != self._points:
                self._points = points
                loop.call_soon(self._publish_points, points)

    def handle_points(self) -> list[list[Any]]:
        """``[label, x, y]`` of each handle shown, ``x`` and ``y`` fractions of the view from its top-left."""
        out: list[list[Any]] = []
        for (kind, name), widget in self.scene.handles.items():
            if not widget.GetEnabled() or not widget.GetProcessEvents():  # (hidden, or passed in a stack)
                continue
            x, y, width, height = self.scene.handle_display_position(kind, name)
            hinge = display.pole_label(self.scene.skeleton, name).removesuffix(" pole") if kind == "pole" else ""
            text = HANDLE_LABELS[kind].format(name=self._named(name), pole=self._named(hinge, " pole"))
            shown = text if self.stacks is None else self.stacks.label((kind, name), text)
            if shown is not None:  # (a handle the last one worked on covers: that one's label shows)
                out.append([shown, round(x / width, 4), round(1.0 - y / height, 4)])
        return out

    def _named(self, joint: str, then: str = "") -> str:
        """How a hover label names ``joint`` (``then`` after the name): a character's by its role, as the panel
        and the docs name it, its bone's name in brackets (``hand_l [mixamorig:LeftHandMiddle1]``)."""
        role = self.scene.roles.get(joint, joint)
        return f"{joint}{then}" if role == joint else f"{role}{then} [{joint}]"

    def _publish_points(self, points: list[list[Any]]) -> None:
        with self.server.state:
            self.server.state.handle_screen = points
