"""The panel's "Picture" section and what its buttons do (``fabrik3d_web.view.picture``): the user sets the
picture's size, lens, projection, light, background and overlays, and downloads it as a PNG named after
the scene (``hero-picture-<time>.png``); or, with the pass selector, one of the pictures that guide an
image generator (OpenPose, depth, normal, outline: ``fabrik3d_web.view.passes``, the same camera and size),
or every pass in one ZIP (All passes .zip).

``PicturePanel`` is a component (it gets what it reads and calls explicitly); ``section`` declares the
layout. State (the page's, sent whole with the download): ``picture_width``, ``picture_height`` (pixels),
``picture_lens`` (mm, 0: the view's; one of ``LENS_ITEMS``), ``picture_projection``, ``picture_light``,
``picture_background`` (``#rrggbb``), ``picture_transparent``, ``picture_sticks``, ``picture_handles``,
``picture_floor``, ``picture_pass`` (``KINDS``). Triggers: ``start_picture(settings, kind)`` -> an id,
then ``take_picture(id)`` -> the file once the id is in ``pictures_done`` (the buttons); for scripts
``export_picture(settings)`` (``picture.picture_settings``' keys) -> the PNG in one call, or null and
``error_message``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp
from trame.widgets import client, html
from trame.widgets import vuetify3 as v3

from ..drags.component import Component
from ..security import failure, page_trigger
from ..view.passes import PASSES, Figure, passes_job
from ..view.picture import LIGHTS, PROJECTIONS, PictureSettings, picture_job, picture_settings, picture_worker
from ..view.stage_bodies import figure_bodies
from .download import file_name_js

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}
_CHECK = {"density": "compact", "hide_details": True}
# The lenses offered (mm; 0: the view's own); ``picture_settings`` takes any from 8 to 600.
LENS_ITEMS = [{"title": "as the view", "value": 0}] + [
    {"title": f"{mm} mm", "value": mm} for mm in (18, 24, 35, 50, 85, 135, 200)
]
# Pictures made and not taken yet that the server keeps (and ids in ``pictures_done``).
KEPT_PICTURES = 4
# What a picture download may be: the colour picture, a pass for an image generator, all passes zipped.
KINDS = ("picture", *PASSES, "zip")
# The page's side of Picture .png and All passes .zip: start the picture of ``kind``, wait for its id in
# ``pictures_done`` (or ``pictures_failed``), take it and save it under ``name``.
PICTURE_JS = """window.__fabrikPicture = async (settings, name, kind) => {
  const t = window.trame, s = t.state;
  const id = await t.trigger('start_picture', [settings, kind]);
  if (!id) return;
  while (!(s.get('pictures_done') || []).includes(id)) await new window.Promise((ok) => window.setTimeout(ok, 50));
  if ((s.get('pictures_failed') || []).includes(id)) return;
  const data = await t.trigger('take_picture', [id]);
  if (data) t.utils.download(name, data, 'application/octet-stream');
}"""
# The pass selector's items: the colour picture, then the passes for image generators.
PASS_ITEMS = [{"title": "colour picture", "value": "picture"}] + [
    {"title": f"{k} (for image generators)", "value": k} for k in PASSES
]
# The settings object the download button sends, from the section's state.
SETTINGS_JS = (
    "{width: Number(picture_width), height: Number(picture_height), lens_mm: Number(picture_lens),"
    " projection: picture_projection, light: picture_light,"
    " background: picture_transparent ? 'transparent' : picture_background,"
    " sticks: picture_sticks, handles: picture_handles, floor: picture_floor}"
)


@TrameApp()
class PicturePanel(Component):
    """The picture's download (see the module docstring): every figure shown, the selected one first.

    Args:
        server: the trame server (its state; a picture's file goes as its attachment).
        document: the scene document (every figure a picture shows).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its renderer, bones, handles, floor).
        meshes: the view's character meshes (``fabrik3d_web.view.mesh_view.MeshView``).
        body: the mannequin (``fabrik3d_web.view.body_view.BodyView``).
        figures: the Scene tab's figures (``FiguresPanel``: the other figures' and the props' actors).
        publish: publishes the selected figure's state (after a failed trigger: ``security.with_state_restored``).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, scene: Any, meshes: Any, body: Any, figures: Any,
                 publish: Callable[[], None], report: Callable[[str], None],
                 own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.scene, self.meshes, self.body = server, document, scene, meshes, body
        self.figures, self._publish, self.report, self._own = figures, publish, report, own
        self._picture_worker: Any = None  # (``picture.picture_worker``, made at the first picture)
        self._pictures: dict[str, bytes] = {}  # (made, not taken yet)
        self._picture_tasks: set[asyncio.Task[None]] = set()  # (being made)
        own({"pictures_done": [], "pictures_failed": []})

    def picture_props(self, settings: PictureSettings) -> list[Any]:
        """The view's props a picture shows: the body (the mannequin or the character's meshes, as shown),
        the sticks if asked or if there is no body, the floor grid and the handles if asked; the other figures
        likewise (their bodies: ``stage_bodies.figure_bodies``; the view draws them as tubes) and the props."""
        scene, others = self.scene, self.figures.view
        body = [a for a in (*self.meshes.actors, self.body.mannequin) if a.GetVisibility()]
        bodies = figure_bodies(self.document, bool(self.state.show_mannequin))
        props = body + [a for actors in bodies.values() for a in actors] + others.prop_actors
        props += [a for name, a in others.figure_actors.items() if settings.sticks or name not in bodies]
        if settings.sticks or not body:
            props += [scene.bone_actor, scene.joint_actor]
        if settings.floor:
            props += scene.floor_actors
        if settings.handles:
            props += [w.GetRepresentation() for w in scene.handles.values() if w.GetEnabled()]
        return props

    @page_trigger("export_picture")
    async def export_picture(self, settings: Any) -> Any:
        """A picture of the view with ``settings`` (``picture.picture_settings``), in one call (scripts and
        tests; the page's button takes ``start_picture`` and ``take_picture``, below). What it shows is
        copied at once; the render runs on a worker thread, one picture at a time, so that drags and key
        edits of other pages are answered meanwhile."""
        data = await self._run(self._job(settings, "picture"))
        self.report("")
        return self.server.protocol.addAttachment(data)

    @page_trigger("start_picture")
    def start_picture(self, settings: Any, kind: Any = "picture") -> str:
        """The user clicked Picture .png (or All passes .zip): the picture of ``settings`` starts (checked
        and copied now) and its id returns at once, so that the page's own drags and key edits are
        answered while it renders (a page's calls are answered in turn); once made, its id joins
        ``pictures_done`` (or the failure shows in the banner) and the page takes it (``take_picture``).
        ``kind`` (``KINDS``): the colour picture, one pass for an image generator
        (``fabrik3d_web.view.passes``: openpose, depth, normal, outline) or every pass in a ZIP."""
        job = self._job(settings, kind)
        ident = secrets.token_hex(8)
        self._picture_tasks.add(asyncio.ensure_future(self._make_picture(ident, job)))
        return ident

    @page_trigger("take_picture")
    def take_picture(self, ident: Any) -> Any:
        """The page takes the picture ``start_picture`` made (once: it is let go)."""
        data = self._pictures.pop(ident, None) if isinstance(ident, str) else None
        if data is None:
            raise ValueError(f"take picture {str(ident)[:40]!r}: no such picture made (or taken already)")
        return self.server.protocol.addAttachment(data)

    def _job(self, settings: Any, kind: Any) -> Any:
        """The picture of ``settings`` of ``kind`` (``KINDS``), checked and copied now: the function that
        makes its file's bytes, to run on a worker thread (``_run``)."""
        if not isinstance(kind, str) or kind not in KINDS:
            raise ValueError(f"picture: expected one of {', '.join(KINDS)}, got {str(kind)[:40]!r}")
        checked = picture_settings(settings)
        if kind != "picture":
            return self._pass_job(checked, kind)
        return picture_job(self.picture_props(checked), self.scene.renderer, checked)

    async def _run(self, job: Any) -> bytes:
        """``job``'s bytes, made on the picture worker (``picture.picture_worker``: one picture at a time)."""
        if self._picture_worker is None:
            self._picture_worker = picture_worker()
        return await asyncio.get_running_loop().run_in_executor(self._picture_worker, job)

    def _pass_job(self, checked: PictureSettings, kind: str) -> Any:
        """The job making pass ``kind``'s PNG (or with ``"zip"`` every pass's file in one ZIP) of the pose
        shown, as the picture frames it (``passes.passes_job``; the floor grid, sticks and handles left out)."""
        d = self.document  # (every figure shown, the selected one first: the OpenPose people)
        shown = [d.slot] + [s for s in d.slots if s is not d.slot and not s.hidden]
        figures = [Figure(s.controller.scene.skeleton, *d.in_view(s), s.controller.character) for s in shown]
        bare = dataclasses.replace(checked, sticks=False, handles=False, floor=False)
        chosen = PASSES if kind == "zip" else (kind,)
        job = passes_job(self.picture_props(bare), self.scene.renderer, bare, chosen, figures)
        stem = self.state["file_stem"] or "fabrik3d"

        def run() -> bytes:
            made = job()
            return made.zip(stem) if kind == "zip" else made.files()[f"{kind}.png"]

        return run

    async def _make_picture(self, ident: str, job: Any) -> None:
        try:
            data: bytes | None = await self._run(job)
        except Exception as exc:  # (the banner says why; the page stops waiting for it)
            self.report(failure("picture", exc))
            data = None
        if data is not None:
            while len(self._pictures) >= KEPT_PICTURES:  # (pictures never taken: the oldest go)
                self._pictures.pop(next(iter(self._pictures)))
            self._pictures[ident] = data
        done = [*(self.state["pictures_done"] or [])[-(KEPT_PICTURES - 1) :], ident]
        self._own({"pictures_done": done, "pictures_failed": [] if data is not None else [ident]})
        self.state.flush()
        self._picture_tasks = {t for t in self._picture_tasks if not t.done()}


def section(app: Any) -> None:
    """The Picture section: size, lens, projection, light, background, overlays and the download."""
    app.state.setdefault("picture_transparent", False)
    with html.Div(classes="d-flex", style="gap: 6px"):
        v3.VTextField(label="Width", suffix="px", v_model=("picture_width", 1920), id="picture-width", **_FIELD)
        v3.VTextField(label="Height", suffix="px", v_model=("picture_height", 1080), id="picture-height", **_FIELD)
        v3.VSelect(label="Lens", v_model=("picture_lens", 0), items=("picture_lenses", LENS_ITEMS), id="picture-lens",
                   **_FIELD)  # fmt: skip
    with html.Div(classes="d-flex", style="gap: 6px"):
        v3.VSelect(label="Projection", v_model=("picture_projection", "view"), items=("picture_projections",
                   list(PROJECTIONS)), id="picture-projection", **_FIELD)  # fmt: skip
        v3.VSelect(label="Light", v_model=("picture_light", "studio"), items=("picture_lights", list(LIGHTS)),
                   id="picture-light", **_FIELD)  # fmt: skip
    with html.Div(classes="d-flex align-center", style="gap: 10px"):
        v3.VTextField(label="Background", v_model=("picture_background", "#ffffff"), id="picture-background",
                      disabled=("picture_transparent",), **_FIELD)  # fmt: skip
        v3.VCheckbox(label="Transparent", v_model=("picture_transparent", False), id="picture-transparent", **_CHECK)
    with html.Div(classes="d-flex flex-wrap", style="column-gap: 10px"):
        v3.VCheckbox(label="Sticks", v_model=("picture_sticks", False), id="picture-sticks", **_CHECK)
        v3.VCheckbox(label="Handles", v_model=("picture_handles", False), id="picture-handles", **_CHECK)
        v3.VCheckbox(label="Floor", v_model=("picture_floor", False), id="picture-floor", **_CHECK)
    # (as octet-stream: headless Chromium saves an image/png blob link as a 1x1 GIF placeholder)
    v3.VSelect(label="Pass", v_model=("picture_pass", "picture"), items=("picture_passes", PASS_ITEMS),
               id="picture-pass", **_FIELD)  # fmt: skip
    names = " : ".join(f"picture_pass === '{k}' ? {file_name_js(f'{k}.png')}" for k in KINDS[1:-1])
    with html.Div(classes="d-flex", style="gap: 6px"):
        v3.VBtn("Picture .png", id="btn-export-picture", prepend_icon="mdi-download", variant="tonal", size="small",
                click=f"window.__fabrikPicture({SETTINGS_JS}, {names} : {file_name_js('picture.png')}, "
                      "picture_pass)")  # fmt: skip
        zipped = f"window.__fabrikPicture({SETTINGS_JS}, {file_name_js('passes.zip')}, 'zip')"
        v3.VBtn("All passes .zip", id="btn-export-passes", prepend_icon="mdi-folder-zip-outline", variant="tonal",
                size="small", click=zipped)  # fmt: skip
    client.ClientTriggers(mounted=PICTURE_JS)
