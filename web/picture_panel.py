"""The panel's "Picture" section and what its button does (``fabrik3d_web.picture``): the user sets the
picture's size, lens, projection, light, background and overlays, and downloads it as a PNG named after
the scene (``hero-picture.png``).

``PictureActions`` is a part of ``fabrik3d_web.app.WebApp``; ``section`` declares the layout. State (the
page's, sent whole with the download): ``picture_width``, ``picture_height`` (pixels),
``picture_lens`` (mm, 0: the view's; one of ``LENS_ITEMS``), ``picture_projection``, ``picture_light``,
``picture_background`` (``#rrggbb``), ``picture_transparent``, ``picture_sticks``, ``picture_handles``,
``picture_floor``.
Trigger: ``export_picture(settings)`` (``picture.picture_settings``' keys) -> the PNG, or null and
``error_message``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from trame.widgets import html
from trame.widgets import vuetify3 as v3

from .download import download_button
from .picture import LIGHTS, PROJECTIONS, PictureSettings, picture_job, picture_settings
from .security import page_trigger

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}
_CHECK = {"density": "compact", "hide_details": True}
# The lenses offered (mm; 0: the view's own); ``picture_settings`` takes any from 8 to 600.
LENS_ITEMS = [{"title": "as the view", "value": 0}] + [
    {"title": f"{mm} mm", "value": mm} for mm in (18, 24, 35, 50, 85, 135, 200)
]
# The settings object the download button sends, from the section's state.
SETTINGS_JS = (
    "{width: Number(picture_width), height: Number(picture_height), lens_mm: Number(picture_lens),"
    " projection: picture_projection, light: picture_light,"
    " background: picture_transparent ? 'transparent' : picture_background,"
    " sticks: picture_sticks, handles: picture_handles, floor: picture_floor}"
)


class PictureActions:
    """The picture's download (see the module docstring)."""

    scene: Any
    meshes: Any
    body: Any
    server: Any
    picture_turn: asyncio.Lock  # (one picture renders at a time: the WebApp's)

    def report(self, message: str) -> None:
        raise NotImplementedError  # (the WebApp's)

    def picture_props(self, settings: PictureSettings) -> list[Any]:
        """The view's props a picture shows: the body (the mannequin or the character's meshes, as shown),
        the sticks if asked or if there is no body, the floor grid and the handles if asked."""
        scene = self.scene
        body = [a for a in (*self.meshes.actors, self.body.mannequin) if a.GetVisibility()]
        props = list(body)
        if settings.sticks or not body:
            props += [scene.bone_actor, scene.joint_actor]
        if settings.floor:
            props += scene.floor_actors
        if settings.handles:
            props += [w.GetRepresentation() for w in scene.handles.values() if w.GetEnabled()]
        return props

    @page_trigger("export_picture")
    async def export_picture(self, settings: Any) -> Any:
        """The user downloaded a picture of the view with ``settings`` (``picture.picture_settings``). What
        it shows is copied at once; the render runs on a worker thread, one picture at a time, so that
        drags and key edits, this page's and others', are answered meanwhile."""
        checked = picture_settings(settings)
        job = picture_job(self.picture_props(checked), self.scene.renderer, checked)
        async with self.picture_turn:
            data = await asyncio.get_running_loop().run_in_executor(None, job)
        self.report("")
        return self.server.protocol.addAttachment(data)


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
    download_button("btn-export-picture", "Picture .png", "picture.png", app.export_picture,
                    "application/octet-stream", args=SETTINGS_JS)  # fmt: skip
