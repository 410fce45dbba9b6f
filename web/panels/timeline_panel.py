"""The timeline under the 3D view and what the user does on it: set, delete and drag keys, scrub,
play and loop, the frame rate, range and interpolation, and the animation's downloads
(``fabrik3d_web.document.timeline``).

``TimelinePanel`` is a component (it gets what it reads and calls explicitly); ``timeline_bar`` declares the
layout.
State (docs/web.md): ``frame``, ``frame_start``, ``frame_end``, ``anim_fps``, ``interpolation`` (the
page may set them), ``key_frames`` and ``key_here`` (the server's), ``timeline_playing``, ``loop``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from ..document import stage_frames as frames
from ..drags.component import Component
from ..security import page_trigger
from .download import download_button

log = logging.getLogger("fabrik3d_web")
# Frames baked per step of the background bake (one: 5-15 ms here; the page's messages wait no longer).
PREBAKE_FRAMES = 1
# Seconds the background bake rests between frames: the server answers the page in them, and the browser has a
# core to draw its images (on two cores, a bake without rests held up a frame change by 25-45 ms).
PREBAKE_REST_S = 0.003
_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined", "single_line": True}


def _left(frame: str) -> str:
    """Where frame ``frame`` (a JS expression) sits on the ruler, as a CSS percentage (a JS expression)."""
    return f"(({frame} - frame_start) / Math.max(1, frame_end - frame_start) * 100) + '%'"


# The frame under the pointer on the ruler (a JS expression of the pointer event).
_FRAME_AT = (
    "Math.max(frame_start, Math.min(frame_end, Math.round(frame_start + (frame_end - frame_start) * "
    "($event.clientX - $event.currentTarget.getBoundingClientRect().left) / "
    "$event.currentTarget.getBoundingClientRect().width)))"
)


@TrameApp()
class TimelinePanel(Component):
    """The timeline's triggers and state changes (each reports a problem in ``error_message``), on every
    figure's frame (``fabrik3d_web.document.stage_frames``), the selected figure's keys.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        delivery: the view's image stream (``fabrik3d_web.view.delivery.ImageDelivery``).
        view: the 3D view (trame-vtk's ``VtkRemoteView``; None before the layout made it).
        attempt: runs a user action, its failure shown in the banner (``WebApp._attempt``).
        publish: publishes the selected figure's state and renders (``WebApp._publish``).
        show_pose: shows the pose in the 3D scene without publishing (``WebApp._show_pose``).
        file: a download's attachment made by a function, or None (``WebApp._file``).
        dragging: whether a handle is dragged now (the background bake waits meanwhile).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, delivery: Any, view: Callable[[], Any],
                 attempt: Callable[..., Any], publish: Callable[[], None], show_pose: Callable[[], None],
                 file: Callable[..., Any], dragging: Callable[[], Any], report: Callable[[str], None],
                 own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.delivery, self._view = server, document, delivery, view
        self._attempt, self._publish, self._show_pose, self._file = attempt, publish, show_pose, file
        self._dragging, self.report, self._own = dragging, report, own
        self._timeline_task: asyncio.Task[None] | None = None
        self._prebake_task: asyncio.Task[None] | None = None
        self.scrubbing = False  # (the frame slider held: ``page_connected`` lets go of it when its page leaves)

    @page_trigger("set_key")
    def set_key(self) -> None:
        """The user keyed the current frame (Key button, or K)."""
        self._attempt(self.controller.set_key)
        self._publish()

    @page_trigger("delete_key")
    def delete_key(self) -> None:
        """The user deleted the key on the current frame."""
        self._attempt(self.controller.delete_key)
        self._publish()

    @page_trigger("move_key")
    def move_key(self, frame: Any, to: Any) -> None:
        """The user dragged a key to another frame."""
        self._attempt(self.controller.move_key, frame, to)
        self._publish()

    @page_trigger("step_frame")
    def step_frame(self, step: Any) -> None:
        """The user stepped frames (arrow keys): ``step`` frames on, within the range."""
        c = self.controller
        if isinstance(step, bool) or not isinstance(step, int):
            self.report(f"step_frame: expected a whole number of frames, got {str(step)[:40]!r}")
        elif self._attempt(frames.go_to_frame, self.document, min(max(c.frame + step, c.animation.start),
                                                                  c.animation.last), True):  # fmt: skip
            self._frame_first()
            return
        self._publish()

    def _frame_first(self) -> None:
        """The frame just stepped to: its image at once, small as a drag's, the panel and the still
        image a moment later (``ImageDelivery.image_first``; issue 32: a frame stepped with the arrow
        keys shows as fast as a dragged one)."""
        self._show_pose()
        self.delivery.image_first(self._publish_frame_panel)

    def _publish_frame_panel(self) -> None:
        with self.state:
            self._publish()

    @page_trigger("begin_scrub")
    def begin_scrub(self) -> None:
        """The user took the frame slider: small, quick images until it is let go (as a drag's), and
        the panel's readouts when it is let go (``_show_frame``)."""
        self.scrubbing = True
        self._stream_frames(True)

    @page_trigger("end_scrub")
    def end_scrub(self) -> None:
        """The user let go of the frame slider: a full-size image and the whole state again, a moment
        later (``ImageDelivery.after_image``: a click on the slider lets go at once, and the frame's small
        image must leave first; the whole state would hold it up by about 85 ms here)."""
        self.scrubbing = False

        def settle() -> None:
            if self.scrubbing:  # (taken again meanwhile)
                return
            with self.state:
                self._stream_frames(False)
                self._publish()

        self.delivery.after_image(settle)

    def _stream_frames(self, on: bool) -> None:
        """Show frames as a drag's, small and quick (``on``: each sent by ``_show_frame``), or go
        back to a full-size still image."""
        view = self._view()
        if view is None:
            return
        self.delivery.set_moving(on)
        if not on:
            view.update()

    @page_trigger("go_to_frame")
    def go_to_frame(self, frame: Any) -> None:
        """The user went to a frame: the slider clicked or dragged, a key marker pressed (sent as a
        trigger, which reaches the server sooner than the state's ``frame`` it also sets)."""
        self.scrub(frame)

    @change("frame")
    def scrub(self, frame: Any, **_: Any) -> None:
        """The user moved the timeline's frame (the slider, a click on the ruler or a typed number)."""
        if frame == self.controller.frame:
            return
        if not self._attempt(frames.go_to_frame, self.document, frame, True):  # (every figure: stage_frames)
            self._publish()
        elif not self.scrubbing:
            self._frame_first()  # (a click on the slider or a key marker, a typed frame: as an arrow key's)
        else:
            self._show_frame()

    def _show_frame(self) -> None:
        """The current frame while the slider is held or the timeline plays: its image rendered and
        sent at once, and of the panel only the frame and its key (the rest when the slider is let
        go, or the play stops: the page's work on the panel would hold up the image)."""
        self._show_pose()
        self.delivery.push_now()
        self.state.frame = self.controller.frame
        self._own(self.controller.key_state())

    @change("anim_fps", "frame_start", "frame_end", "interpolation")
    def edit_timeline(self, anim_fps: Any, frame_start: Any, frame_end: Any, interpolation: Any, **_: Any) -> None:
        """The user changed the frame rate, the range or the interpolation."""
        anim = self.controller.animation
        if (anim_fps, frame_start, frame_end, interpolation) != (anim.fps, anim.start, anim.last, anim.interpolation):
            self._attempt(self.controller.set_timeline, anim_fps, frame_start, frame_end, interpolation)
            self._publish()

    @page_trigger("toggle_timeline")
    def toggle_timeline(self) -> None:
        """The user clicked play (or pause while playing; Space)."""
        if self._timeline_task is not None and not self._timeline_task.done():
            self._timeline_task.cancel()
            return
        if not self.controller.animation.keys:
            self.report("animation: set a key first (Key, or K)")
            return
        self._timeline_task = asyncio.ensure_future(self._play_timeline())

    async def _play_timeline(self) -> None:
        """Show the frames from the current one at the animation's rate (frames are skipped when a
        frame takes longer than its time), from the start again with ``loop``, until paused."""
        c = self.controller
        with self.state:
            self._own({"timeline_playing": True})
        self._stream_frames(True)
        try:
            first = c.frame if c.frame < c.animation.last else c.animation.start
            t0 = time.perf_counter()
            while True:
                anim = c.animation
                f = first + int((time.perf_counter() - t0) * anim.fps)
                if f > anim.last:
                    if not self.state.loop:
                        f = anim.last
                    else:
                        first, t0, f = anim.start, time.perf_counter(), anim.start
                if f != c.frame:
                    with self.state:
                        self._attempt(frames.go_to_frame, self.document, f)
                        self._show_frame()
                if f == anim.last and not self.state.loop:
                    break
                await asyncio.sleep(max(0.001, (f + 1 - first) / anim.fps - (time.perf_counter() - t0)))
        finally:
            self._stream_frames(False)
            with self.state:
                self._own({"timeline_playing": False})
                self._publish()

    def prebake(self) -> None:
        """Bake the range's frames in the background (a few at a time between the page's messages,
        paused while a handle is dragged), so that a scrub shows a baked frame at once."""
        if self._prebake_task is not None and not self._prebake_task.done():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # (not serving: tests in-process)
            return
        self._prebake_task = asyncio.ensure_future(self._bake_in_background())

    async def _bake_in_background(self) -> None:
        while True:
            if self._dragging():
                await asyncio.sleep(0.1)
                continue
            try:
                more, refined = frames.bake_ahead(self.document, PREBAKE_FRAMES)  # (every figure's keys)
                if refined:  # (a frame shown as a preview, baked)
                    with self.state:
                        self._publish()
            except Exception:  # (a scrub to the frame reports it; the banner is not touched from here)
                log.exception("baking in the background stopped")
                return
            if not more:
                return
            await asyncio.sleep(PREBAKE_REST_S)

    @page_trigger("export_animation_glb")
    def export_animation_glb(self) -> Any:
        """The user downloaded the animation as an animated binary glTF (every frame keyed; with the
        mannequin's body when the Pose download's Mannequin box is on)."""
        return self._file(lambda: self.document.animation_glb(self.state.export_mannequin is True))

    @page_trigger("export_animation_json")
    def export_animation_json(self) -> Any:
        """The user downloaded the animation as a take file."""
        return self._file(lambda: self.controller.animation_json().encode())


def _typed_into(name: str) -> str:
    """The JS that sets state ``name`` to the number typed (an emptied end: the last key's frame)."""
    value = "Number($event.target.value)"
    if name == "frame_end":
        value = f"$event.target.value === '' ? '' : {value}"
    return f"{name} = {value}"


def timeline_bar(app: Any) -> None:
    """Under the 3D view: play, loop, the ruler with its key markers over the frame slider and the
    frame; below, Key and Delete key, the range, frame rate and interpolation, and the downloads."""
    app.state.update({"loop": True, "key_drag": None, "key_drop": None})
    app._own({"timeline_playing": False})
    with html.Div(id="timeline", classes="px-2 pb-1", style="width: 100%; border-top: 1px solid #ddd"):
        with html.Div(classes="d-flex align-center", style="gap: 4px"):
            v3.VBtn(
                icon=("timeline_playing ? 'mdi-pause' : 'mdi-play'",),
                id="btn-timeline-play",
                size="small",
                variant="text",
                click="trigger('toggle_timeline')",
                title="Play or pause (Space)",
            )
            v3.VBtn(
                icon="mdi-repeat",
                id="btn-timeline-loop",
                size="small",
                variant=("loop ? 'tonal' : 'text'",),
                click="loop = !loop",
                title="Loop",
            )
            with html.Div(style="flex: 1; min-width: 200px"):
                _ruler()
                v3.VSlider(
                    v_model=("frame", 0),
                    min=("frame_start",),
                    max=("frame_end",),
                    step=1,
                    id="timeline-slider",
                    hide_details=True,
                    density="compact",
                    color="primary",
                    classes="mt-n1 timeline-slider",
                    start="trigger('begin_scrub')",
                    update_modelValue="trigger('go_to_frame', [$event])",
                    end="trigger('end_scrub')",
                )
            html.Div("{{ frame }}", id="timeline-frame", classes="text-body-1", style="width: 44px; text-align: right")
        with html.Div(classes="d-flex align-center flex-wrap", style="gap: 6px"):
            v3.VBtn(
                "Key",
                id="btn-key",
                size="small",
                variant=("key_here ? 'flat' : 'tonal'",),
                color="orange-darken-2",
                prepend_icon="mdi-key-variant",
                click="trigger('set_key')",
                title="Key the targets at this frame (K)",
            )
            v3.VBtn(
                "Delete key",
                id="btn-delete-key",
                size="small",
                variant="text",
                disabled=("!key_here",),
                click="trigger('delete_key')",
                title="Delete the key at this frame",
            )
            for name, label in (("frame_start", "start"), ("frame_end", "end"), ("anim_fps", "fps")):
                v3.VTextField(
                    prefix=label,
                    model_value=(name,),
                    change=_typed_into(name),
                    type="number",
                    id=f"timeline-{name.replace('_', '-')}",
                    style="max-width: 100px",
                    **_FIELD,
                )
            v3.VSelect(
                v_model=("interpolation", "smooth"),
                items=("['smooth', 'ease', 'linear']",),
                id="timeline-interpolation",
                style="max-width: 110px",
                **_FIELD,
            )
            t = app.timeline
            download_button(
                "btn-export-anim-glb", "Anim .glb", "animation.glb", t.export_animation_glb, "model/gltf-binary"
            )
            download_button("btn-export-anim-json", "Anim .json", "animation.json", t.export_animation_json,
                            "application/json")  # fmt: skip


def _ruler() -> None:
    """The key markers over the slider: press one to go to its frame, drag it to move the key."""
    with html.Div(
        id="timeline-ruler",
        style="position: relative; z-index: 1; height: 14px; margin: 0 10px; touch-action: none",
        pointermove=f"key_drag !== null && (key_drop = {_FRAME_AT})",
        pointerup=(
            "if (key_drag !== null) { if (key_drop !== null && key_drop !== key_drag) "
            "{ trigger('move_key', [key_drag, key_drop]) } } "
            "key_drag = null; key_drop = null"
        ),
        pointerleave="key_drag = null; key_drop = null",
        __events=["pointermove", "pointerup", "pointerleave"],
    ):
        html.Div(
            v_for="f in key_frames",
            key="f",
            classes="key-marker",
            id=("'key-' + f",),
            title=("'Key at frame ' + f + ' (drag to move it)'",),
            style=(
                f"{{position: 'absolute', left: {_left('f')}, top: '2px', width: '10px', height: '10px', "
                "transform: 'translateX(-50%) rotate(45deg)', cursor: 'ew-resize', "
                "background: f === frame ? '#e65100' : '#fb8c00', opacity: key_drag === f ? 0.4 : 1}",
            ),
            pointerdown="key_drag = f; key_drop = f; trigger('go_to_frame', [f])",  # (shown as it is pressed)
            __events=["pointerdown"],
        )
        html.Div(
            v_if="key_drag !== null && key_drop !== null && key_drop !== key_drag",
            id="key-drop",
            style=(
                f"{{position: 'absolute', left: {_left('key_drop')}, top: '0px', width: '2px', height: '14px', "
                "background: '#e65100'}",
            ),
        )
