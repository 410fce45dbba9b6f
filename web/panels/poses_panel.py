"""The panel's "Copy and paste" and "Pose library" sections and what the user does in them
(``fabrik3d_web.document.poses``): copy the pose (Ctrl+C), paste it (Ctrl+V) or paste it mirrored
(Ctrl+Shift+V); save the pose shown under a name (with a thumbnail of the view), apply a saved or
starter pose to chosen parts, mirrored, blended, delete a saved one.

What Copy takes is in sight (issue 51, item 5): a chip beside it names it (``copy_scope``: the limb
whose handle was grabbed last, or the whole pose); Esc, a click on empty space, Reset and an Apply
clear the choice (``clear_selection``). An Apply's parts and amount go back to all, 1.0 after it, and
while they are not, a line over the list says what the next Apply takes. The starter poses show
thumbnails the project renders itself (``fabrik3d_web.view.thumbnails``), made once per server on a worker
thread after it is up; the rows get them when they are done.

``PosesPanel`` is a component (it gets what it reads and calls explicitly); ``section`` (copy and paste)
and ``library_section`` declare the layout. State: ``pose_name``, ``pose_parts`` (some of arms, legs,
spine, hands), ``pose_amount`` (0..1) the page sets; ``clipboard_what``, ``copy_scope``,
``library_path``, ``library_rows`` (``name``, ``saved``, ``thumbnail``, ``key``: a page of the saved
poses, then the starter poses), ``library_page`` (``offset``: the page's first saved pose, 0-based;
``total``: how many the library holds; ``size``: rows in a page; ``shown``: counts the server's
publications of the library) and ``library_problem`` the server's.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3
from vtkmodules.vtkImagingCore import vtkImageResize
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkRenderingCore import vtkWindowToImageFilter

from fabrik3d.model.pose_library import PARTS

from ..document.poses import PAGE_SIZE
from ..drags.component import Component
from ..security import page_trigger
from ..view import thumbnails

log = logging.getLogger("fabrik3d_web")

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}
THUMBNAIL_WIDTH = 160  # pixels
# A thumbnail in the list (a saved pose's, of the view, fitted; a starter pose's, square).
THUMB_STYLE = "width: 48px; height: 48px; flex: 0 0 48px; object-fit: contain; background: #f2f2f4; border-radius: 4px"


def view_png(render_window: Any, width: int = THUMBNAIL_WIDTH) -> bytes:
    """A small PNG of the 3D view as it is (``width`` pixels wide): a library pose's thumbnail."""
    render_window.Render()
    grab = vtkWindowToImageFilter()
    grab.SetInput(render_window)
    grab.ReadFrontBufferOff()
    grab.Update()
    w, h, _ = grab.GetOutput().GetDimensions()
    resize = vtkImageResize()
    resize.SetInputConnection(grab.GetOutputPort())
    resize.SetOutputDimensions(width, max(1, round(h * width / max(w, 1))), 1)
    writer = vtkPNGWriter()
    writer.WriteToMemoryOn()
    writer.SetInputConnection(resize.GetOutputPort())
    writer.Write()
    return bytes(memoryview(writer.GetResult()))


@TrameApp()
class PosesPanel(Component):
    """The copy, paste and library triggers (each reports a problem in ``error_message``), on the selected figure.

    Args:
        server: the trame server (its state; the starter poses' thumbnails are made once it is up).
        document: the scene document (``document.controller``: the selected figure's).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its render window, a saved pose's
            thumbnail).
        attempt: runs a user action, its failure shown in the banner (``WebApp._attempt``).
        publish: publishes the selected figure's state and renders (``WebApp._publish``).
        clear_selection: no rings, no limb chosen for Copy (``RingTurn.clear_selection``).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, scene: Any, attempt: Callable[..., Any],
                 publish: Callable[[], None], clear_selection: Callable[[], None], report: Callable[[str], None],
                 own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.scene = server, document, scene
        self._attempt, self._publish, self.clear_selection = attempt, publish, clear_selection
        self.report, self._own = report, own
        self._thumbnails_asked = False
        self._library_shown = 0  # (the library's publications: the path field is made again at each)
        self._thumbnails_task: asyncio.Task[None] | None = None

    @page_trigger("copy_pose")
    def copy_pose(self) -> None:
        """The user copied the pose (Ctrl+C): the limb whose handle was grabbed last, or all of it."""
        self._attempt(self.controller.copy_pose, self.state.selected_effector or "")
        self._own({"clipboard_what": self.controller.clipboard_what})

    @change("selected_effector")
    def show_copy_scope(self, selected_effector: Any = "", **_: Any) -> None:
        """The handle grabbed last changed (or the choice was cleared): the chip says what Copy takes."""
        self._own({"copy_scope": self.controller.copy_scope(selected_effector or "")})

    @page_trigger("paste_pose")
    def paste_pose(self, mirrored: Any = False) -> None:
        """The user pasted the copied pose (Ctrl+V), or pasted it mirrored (Ctrl+Shift+V)."""
        self._attempt(self.controller.paste_pose, mirrored is True)
        self._publish()

    @page_trigger("set_pose_library")
    def set_pose_library(self, path: Any) -> None:
        """The user typed the library's file or folder."""
        self._attempt(self.controller.set_library_path, path)
        self.publish_library()

    @page_trigger("show_library_page")
    def show_library_page(self, offset: Any) -> None:
        """The user asked for another page of saved poses (``offset``: its first row, 0-based)."""
        self._attempt(self.controller.set_library_offset, offset)
        self.publish_library()

    @page_trigger("save_library_pose")
    def save_library_pose(self, name: Any) -> None:
        """The user clicked "Save pose as" with a name."""
        png = self._attempt(view_png, self.scene.render_window)
        self._attempt(self.controller.save_library_pose, name, png if isinstance(png, bytes) else None)
        self.publish_library()

    @page_trigger("apply_library_pose")
    def apply_library_pose(self, name: Any, saved: Any, parts: Any, mirrored: Any = False, amount: Any = 1.0) -> None:
        """The user clicked Apply (or Apply mirrored) on a library pose."""
        if self._attempt(self.controller.apply_library_pose, name, saved, parts, mirrored, amount) is not None:
            self.state.update({"pose_parts": list(PARTS), "pose_amount": 1.0})  # (the next Apply: all, 1.0)
            self.clear_selection()  # (no limb chosen: Copy takes the whole pose)
        self._publish()

    @page_trigger("delete_library_pose")
    def delete_library_pose(self, name: Any) -> None:
        """The user clicked Delete on a saved pose."""
        self._attempt(self.controller.delete_library_pose, name)
        self.publish_library()

    def publish_library(self) -> None:
        """The library's path, and a page of its rows read again (after a save, a delete, another file or
        page); the path is the server's whatever the read gives (a problem is ``library_problem``)."""
        c = self.controller
        self._own({"library_path": str(c.library_path)})
        rows, problem = c.library_rows()
        self._library_shown += 1
        page = {"offset": c.library_offset, "total": c.library_total, "size": PAGE_SIZE, "shown": self._library_shown}
        self._own({"library_rows": with_thumbnails(rows), "library_problem": problem, "library_page": page})
        self._thumbnails_later()

    def _thumbnails_later(self) -> None:
        """Have the starter poses' thumbnails made on a worker thread once the server runs (once)."""
        if self._thumbnails_asked or thumbnails.cached():
            return
        self._thumbnails_asked = True
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # (not serving yet: when the server is up)
            self.server.controller.on_server_ready.add_task(self._make_thumbnails)
            return
        self._thumbnails_task = asyncio.ensure_future(self._make_thumbnails())

    async def _make_thumbnails(self, **_: Any) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(None, thumbnails.starter_thumbnails)
        except Exception:  # (the rows keep no pictures; the server goes on)
            log.exception("the starter poses' thumbnails could not be made")
            return
        with self.state:
            self._own({"library_rows": with_thumbnails(self.state.library_rows or [])})


def with_thumbnails(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with the rendered thumbnails of the starter poses (those made so far) filled in."""
    made, out = thumbnails.cached(), []
    for row in rows:
        png = made.get(row["name"]) if not row["saved"] and not row["thumbnail"] else None
        out.append(row if png is None else {**row, "thumbnail": _data_url(png)})
    return out


_URLS: dict[bytes, str] = {}


def _data_url(png: bytes) -> str:
    if png not in _URLS:
        _URLS[png] = "data:image/png;base64," + base64.b64encode(png).decode()
    return _URLS[png]


def section(app: Any) -> None:
    """Copy (with the chip saying what it takes), Paste, Paste mirrored; what was copied, once it was."""
    app.state.update({"clipboard_what": ""})
    app._own({"copy_scope": "the whole pose"})
    whole = "copy_scope === 'the whole pose'"
    with html.Div(classes="d-flex align-center flex-wrap", style="gap: 4px", id="copy-paste"):
        v3.VBtn(
            "Copy",
            id="btn-copy-pose",
            size="small",
            variant="tonal",
            click="trigger('copy_pose')",
            title="Copy (Ctrl+C) what the chip says: grab a hand's, foot's or the head's handle for that limb",
        )
        v3.VChip(
            "{{ 'Copy: ' + copy_scope.replace(/^the /, '') }}",
            id="copy-scope",
            size="small",
            label=True,
            color=(f"{whole} ? '' : 'primary'",),
            closable=(f"!({whole})",),
            click_close="trigger('clear_selection')",
            title=(f"{whole} ? 'Copy takes the whole pose' : 'Copy takes ' + copy_scope + ' (the handle grabbed "
                   "last); Esc: the whole pose'",),
        )  # fmt: skip
        v3.VSpacer()
        v3.VBtn("Paste", id="btn-paste-pose", size="small", variant="tonal", click="trigger('paste_pose')",
                title="Paste the copied pose at this frame (Ctrl+V; K keys it)")  # fmt: skip
        v3.VBtn(
            "Mirrored",
            id="btn-paste-mirrored",
            size="small",
            variant="tonal",
            click="trigger('paste_pose', [true])",
            title="Paste the copied pose mirrored, left and right swapped (Ctrl+Shift+V)",
        )
    html.Div(
        "Copied {{ clipboard_what }}: Ctrl+V pastes it at this frame (K keys it), Ctrl+Shift+V mirrored.",
        v_show="clipboard_what",
        id="clipboard-info",
        classes="text-caption text-medium-emphasis mt-n2",
    )


def library_section(app: Any) -> None:
    """The library: its file, save as, the parts and amount of the next Apply, the poses."""
    app.state.update({"pose_name": "", "pose_parts": list(PARTS), "pose_amount": 1.0})
    with html.Div(classes="d-flex flex-wrap", style="column-gap: 8px"):
        for part in PARTS:
            v3.VCheckbox(
                label=part,
                value=part,
                v_model=("pose_parts",),
                id=f"pose-part-{part}",
                density="compact",
                hide_details=True,
            )
    with html.Div(classes="d-flex align-center", style="gap: 6px"):
        html.Div("amount", classes="text-body-2", style="width: 52px")
        v3.VSlider(
            v_model=("pose_amount",), min=0, max=1, step=0.05, hide_details=True, density="compact", id="pose-amount"
        )
        html.Div("{{ Number(pose_amount).toFixed(2) }}", style="width: 34px")
    changed = f"(pose_parts.length < {len(PARTS)} || Number(pose_amount) < 1)"
    parts = f"pose_parts.length >= {len(PARTS)} ? 'all parts' : pose_parts.length ? pose_parts.join(', ') : 'no part'"
    html.Div(
        f"Apply takes {{{{ {parts} }}}} at {{{{ Number(pose_amount).toFixed(2) }}}}"
        f"{{{{ {changed} ? '; after it, all at 1.00 again' : '' }}}}",
        id="pose-apply-scope",
        classes=(f"{changed} ? 'text-caption text-warning' : 'text-caption text-medium-emphasis'",),
        style="margin-top: -10px",
    )
    with html.Div(classes="d-flex align-center", style="gap: 4px", id="pose-pages"):
        html.Div(
            "{{ library_page.total ? 'Saved poses ' + (library_page.offset + 1) + '-' + Math.min(library_page.offset "
            "+ library_page.size, library_page.total) + ' of ' + library_page.total : 'No saved poses' }}",
            id="pose-count",
            classes="text-caption text-medium-emphasis",
            style="flex: 1 1 auto",
        )
        v3.VBtn(
            icon="mdi-chevron-left",
            size="x-small",
            variant="text",
            id="btn-poses-previous",
            title="The previous page of saved poses",
            disabled=("library_page.offset <= 0",),
            click="trigger('show_library_page', [Math.max(0, library_page.offset - library_page.size)])",
        )
        v3.VBtn(
            icon="mdi-chevron-right",
            size="x-small",
            variant="text",
            id="btn-poses-next",
            title="The next page of saved poses",
            disabled=("library_page.offset + library_page.size >= library_page.total",),
            click="trigger('show_library_page', [library_page.offset + library_page.size])",
        )
    with html.Div(style="max-height: 236px; overflow-y: auto", id="pose-list"):
        with html.Div(
            v_for="row in library_rows", key="row.key", classes="d-flex align-center py-1 pose-row", style="gap: 4px"
        ):
            html.Img(v_if="row.thumbnail", src=("row.thumbnail",), classes="pose-thumbnail", style=THUMB_STYLE)
            html.Div(v_else=True, style=THUMB_STYLE)
            html.Div(
                "{{ row.name }}",
                classes=("row.saved ? 'text-body-2 text-truncate' : 'text-body-2 text-truncate text-medium-emphasis'",),
                style="flex: 1 1 auto; min-width: 0",
                title=("row.saved ? 'saved' : 'starter pose'",),
            )
            apply = "trigger('apply_library_pose', [row.name, row.saved, pose_parts, {}, Number(pose_amount)])"
            v3.VBtn("Apply", size="x-small", variant="tonal", classes="pose-apply", click=apply.format("false"))
            v3.VBtn(
                "Mirrored", size="x-small", variant="tonal", classes="pose-apply-mirrored", click=apply.format("true")
            )
            v3.VBtn(
                icon="mdi-delete-outline",
                size="x-small",
                variant="text",
                v_if="row.saved",
                classes="pose-delete",
                title="Delete this saved pose",
                click="trigger('delete_library_pose', [row.name])",
            )
    v3.VTextField(
        label="Library file (or folder)",
        model_value=("library_path",),
        # (made again each time the server publishes the library: the field shows the path the server
        # uses, the new one or the old one when refused, never only what was typed)
        key=("'library-' + library_page.shown",),
        change="trigger('set_pose_library', [$event.target.value])",
        id="pose-library-path",
        **_FIELD,
    )
    html.Div("{{ library_problem }}", v_show="library_problem", classes="text-caption text-error")
    with html.Div(classes="d-flex align-center", style="gap: 6px"):
        v3.VTextField(label="Name", v_model=("pose_name",), id="pose-name", **_FIELD)
        v3.VBtn(
            "Save pose as",
            id="btn-save-pose",
            size="small",
            variant="tonal",
            prepend_icon="mdi-content-save-outline",
            click="trigger('save_library_pose', [pose_name])",
        )
