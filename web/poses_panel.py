"""The panel's "Copy and paste" and "Pose library" sections and what the user does in them
(``fabrik3d_web.poses``): copy the pose (Ctrl+C), paste it (Ctrl+V) or paste it mirrored
(Ctrl+Shift+V); save the pose shown under a name (with a thumbnail of the view), apply a saved or
starter pose to chosen parts, mirrored, blended, delete a saved one.

``PoseActions`` is a part of ``fabrik3d_web.app.WebApp``; ``section`` declares the layout. State:
``pose_name``, ``pose_parts`` (some of arms, legs, spine, hands), ``pose_amount`` (0..1) the page
sets; ``clipboard_what``, ``library_path``, ``library_rows`` (``name``, ``saved``, ``thumbnail``,
``key``: a page of the saved poses, then the starter poses), ``library_page`` (``offset``: the page's
first saved pose, 0-based; ``total``: how many the library holds; ``size``: rows in a page; ``shown``:
counts the server's publications of the library) and ``library_problem`` the server's.
"""

from __future__ import annotations

from typing import Any

from trame.widgets import html
from trame.widgets import vuetify3 as v3
from vtkmodules.vtkImagingCore import vtkImageResize
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkRenderingCore import vtkWindowToImageFilter

from fabrik3d.model.pose_library import PARTS

from .poses import PAGE_SIZE
from .security import page_trigger

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}
THUMBNAIL_WIDTH = 160  # pixels


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


class PoseActions:
    """The copy, paste and library triggers (each reports a problem in ``error_message``)."""

    controller: Any
    state: Any
    scene: Any

    def _attempt(self, action: Any, *args: Any) -> Any:
        raise NotImplementedError  # (the WebApp's)

    def _publish(self) -> None:
        raise NotImplementedError  # (the WebApp's)

    def _own(self, values: dict[str, Any]) -> None:
        raise NotImplementedError  # (the WebApp's)

    @page_trigger("copy_pose")
    def copy_pose(self) -> None:
        """The user copied the pose (Ctrl+C): the limb whose handle was grabbed last, or all of it."""
        self._attempt(self.controller.copy_pose, self.state.selected_effector or "")
        self._own({"clipboard_what": self.controller.clipboard_what})

    @page_trigger("paste_pose")
    def paste_pose(self, mirrored: Any = False) -> None:
        """The user pasted the copied pose (Ctrl+V), or pasted it mirrored (Ctrl+Shift+V)."""
        self._attempt(self.controller.paste_pose, mirrored is True)
        self._publish()

    @page_trigger("set_pose_library")
    def set_pose_library(self, path: Any) -> None:
        """The user typed the library's file or folder."""
        self._attempt(self.controller.set_library_path, path)
        self._publish_library()

    @page_trigger("show_library_page")
    def show_library_page(self, offset: Any) -> None:
        """The user asked for another page of saved poses (``offset``: its first row, 0-based)."""
        self._attempt(self.controller.set_library_offset, offset)
        self._publish_library()

    @page_trigger("save_library_pose")
    def save_library_pose(self, name: Any) -> None:
        """The user clicked "Save pose as" with a name."""
        png = self._attempt(view_png, self.scene.render_window)
        self._attempt(self.controller.save_library_pose, name, png if isinstance(png, bytes) else None)
        self._publish_library()

    @page_trigger("apply_library_pose")
    def apply_library_pose(self, name: Any, saved: Any, parts: Any, mirrored: Any = False, amount: Any = 1.0) -> None:
        """The user clicked Apply (or Apply mirrored) on a library pose."""
        self._attempt(self.controller.apply_library_pose, name, saved, parts, mirrored, amount)
        self._publish()

    @page_trigger("delete_library_pose")
    def delete_library_pose(self, name: Any) -> None:
        """The user clicked Delete on a saved pose."""
        self._attempt(self.controller.delete_library_pose, name)
        self._publish_library()

    def _publish_library(self) -> None:
        """The library's path, and a page of its rows read again (after a save, a delete, another file or
        page); the path is the server's whatever the read gives (a problem is ``library_problem``)."""
        c = self.controller
        self._own({"library_path": str(c.library_path)})
        rows, problem = c.library_rows()
        self._library_shown = getattr(self, "_library_shown", 0) + 1
        page = {"offset": c.library_offset, "total": c.library_total, "size": PAGE_SIZE, "shown": self._library_shown}
        self._own({"library_rows": rows, "library_problem": problem, "library_page": page})


def section(app: Any) -> None:
    """Copy / paste buttons, then the library: its file, save as, parts, amount and the poses."""
    app.state.update({"pose_name": "", "pose_parts": list(PARTS), "pose_amount": 1.0, "clipboard_what": ""})
    with html.Div(classes="d-flex align-center flex-wrap", style="gap: 4px"):
        v3.VBtn("Copy", id="btn-copy-pose", size="small", variant="tonal", click="trigger('copy_pose')")
        v3.VBtn("Paste", id="btn-paste-pose", size="small", variant="tonal", click="trigger('paste_pose')")
        v3.VBtn(
            "Paste mirrored",
            id="btn-paste-mirrored",
            size="small",
            variant="tonal",
            click="trigger('paste_pose', [true])",
        )
    html.Div(
        "{{ clipboard_what ? 'Copied: ' + clipboard_what + '. ' : '' }}Ctrl+C copies the pose (with a hand's or "
        "foot's handle grabbed last: that limb), Ctrl+V pastes it here, Ctrl+Shift+V mirrored; K keys it.",
        id="clipboard-info",
        classes="text-caption text-medium-emphasis",
    )
    html.Div("Pose library", classes="text-overline mb-n2")
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
    with html.Div(style="max-height: 280px; overflow-y: auto", id="pose-list"):
        with html.Div(
            v_for="row in library_rows", key="row.key", classes="d-flex align-center py-1 pose-row", style="gap: 4px"
        ):
            html.Img(v_if="row.thumbnail", src=("row.thumbnail",), style="width: 40px; height: 30px; object-fit: cover")
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
