"""The control panel (trame-vuetify 3), declared once; every control is bound to state or to one callback.

``toolbar(app)`` fills the app bar (live readouts and undo/redo), ``drawer(app)`` the side
panel (scene, solver, effectors, take and export). ``app`` is the ``fabrik3d_web.app.WebApp``
whose methods the controls call. Element ids (``id="..."``) are for tests and automation.
"""

from __future__ import annotations

from typing import Any

from trame.widgets import client, html
from trame.widgets import vuetify3 as v3

from . import posing_panel

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}


def toolbar(app: Any) -> None:
    """Readouts (iterations, largest error, solve ms, fps), undo/redo and the error banner."""
    v3.VSpacer()
    with html.Div(classes="d-flex align-center text-body-2", style="gap: 6px"):
        _readout("readout-iterations", "mdi-repeat", "{{ iterations }} it")
        _readout("readout-error", "mdi-target", "{{ (max_error * 1000).toFixed(1) }} mm")
        _readout("readout-solve", "mdi-timer-outline", "{{ solve_ms.toFixed(2) }} ms")
        _readout("readout-fps", "mdi-speedometer", "{{ fps ? fps.toFixed(0) : '–' }} fps")
    v3.VDivider(vertical=True, classes="mx-2")
    v3.VBtn(icon="mdi-undo", id="btn-undo", disabled=("!can_undo",), click=app.undo, title="Undo (Ctrl+Z)")
    v3.VBtn(icon="mdi-redo", id="btn-redo", disabled=("!can_redo",), click=app.redo, title="Redo (Ctrl+Shift+Z)")
    v3.VBtn(icon="mdi-backup-restore", id="btn-reset", click=app.reset_pose, title="Reset pose")
    v3.VBtn(icon="mdi-crop-free", id="btn-camera", click=app.reset_camera, title="Frame the skeleton (F)")
    for view in ("front", "side", "top"):
        click = f"trigger('reset_camera', ['{view}'])"
        v3.VBtn(view.title(), id=f"btn-view-{view}", size="small", variant="text", click=click, title=f"{view} view")
    client.ClientTriggers(mounted=SHORTCUTS)


# The keyboard shortcuts (the page's keys, not while a text field has the focus): Ctrl+Z (or Cmd+Z)
# undo, Ctrl+Shift+Z or Ctrl+Y redo, F frames the skeleton, Delete frees the effector whose handle was
# grabbed last (``selected_effector``). Listed in the panel (SHORTCUT_HELP).
SHORTCUTS = """window.addEventListener('keydown', (e) => {
  const t = e.target && e.target.tagName;
  if (t === 'INPUT' || t === 'TEXTAREA' || (e.target && e.target.isContentEditable)) return;
  const mod = e.ctrlKey || e.metaKey, key = (e.key || '').toLowerCase();
  let name = null;
  if (mod && key === 'z') name = e.shiftKey ? 'redo' : 'undo';
  else if (mod && key === 'y') name = 'redo';
  else if (!mod && !e.altKey && key === 'f') name = 'reset_camera';
  if (name) { e.preventDefault(); trigger(name); }
  else if (!mod && key === 'delete' && selected_effector) {
    e.preventDefault(); trigger('free_effector', [selected_effector]);
  }
})"""
SHORTCUT_HELP = "Keys: Ctrl+Z undo, Ctrl+Shift+Z or Ctrl+Y redo, F frames the skeleton, Delete frees the last grabbed."


def _readout(element_id: str, icon: str, text: str) -> None:
    with v3.VChip(id=element_id, size="small", variant="tonal", label=True):
        v3.VIcon(icon, start=True, size="small")
        html.Span(text)


def error_banner(app: Any) -> None:
    """A dismissable banner over the 3D view showing ``error_message``."""
    v3.VAlert(
        text=("error_message",),
        v_show="error_message",
        id="error-message",
        type="error",
        density="compact",
        closable=True,
        click_close="error_message = ''",
        style="position: absolute; top: 8px; left: 8px; right: 8px; z-index: 10;",
    )


def drawer(app: Any) -> None:
    """Scene, solver, effectors, take and export sections."""
    with v3.VContainer(classes="pa-3 d-flex flex-column", style="gap: 14px"):
        _section("Scene")
        v3.VSelect(label="Preset", v_model=("preset",), items=("presets",), id="preset", **_FIELD)
        v3.VFileInput(
            label="Open scene file (.json)",
            v_model=("scene_upload", None),
            accept=".json,application/json",
            id="scene-upload",
            prepend_icon="",
            prepend_inner_icon="mdi-folder-open-outline",
            **_FIELD,
        )
        with html.Div(classes="d-flex", style="gap: 6px"):
            _download_button("btn-download-scene", "Scene .json", "scene.json", app.download_scene, "application/json")
            _download_button("btn-export-pose", "Pose .glb", "pose.glb", app.export_pose_glb, "model/gltf-binary")

        _section("Solver")
        with html.Div(classes="d-flex", style="gap: 6px"):
            v3.VTextField(
                label="Tolerance",
                model_value=("tolerance",),
                change="tolerance = $event.target.value",
                id="tolerance",
                **_FIELD,
            )
            v3.VTextField(
                label="Iterations",
                model_value=("max_iterations",),
                change="max_iterations = $event.target.value",
                id="max-iterations",
                **_FIELD,
            )
        with html.Div(classes="d-flex flex-wrap", style="column-gap: 16px"):
            v3.VSwitch(label="Joint limits", v_model=("limits_on",), color="primary", id="limits-on", **_SWITCH)
            v3.VSwitch(label="Show limits", v_model=("show_limits",), color="primary", id="show-limits", **_SWITCH)
            v3.VSwitch(label="Pole handles", v_model=("show_poles",), color="primary", id="show-poles", **_SWITCH)
        v3.VSelect(
            label="Limits shown for (all when empty)",
            v_model=("limit_joints",),
            items=("limited_joints",),
            v_show="show_limits && has_limits",
            multiple=True,
            chips=True,
            closable_chips=True,
            id="limit-joints",
            **_FIELD,
        )
        html.Div(
            "This skeleton has no joint limits.",
            v_show="!has_limits",
            classes="text-caption text-medium-emphasis mt-n2",
        )

        _section("Targets")
        html.Div(
            "Drag a sphere in the view, or type a coordinate and press Enter. " + SHORTCUT_HELP,
            classes="text-caption text-medium-emphasis mt-n2",
        )
        with html.Div(v_for="row in effectors", key="row.name", classes="d-flex align-center", style="gap: 4px"):
            v3.VIcon(
                "mdi-circle",
                size="x-small",
                color=("row.unreachable ? 'error' : row.targeted ? 'warning' : 'grey'",),
            )
            html.Div("{{ row.name }}", classes="text-body-2 text-truncate", style="width: 84px")
            for axis, key in enumerate("xyz"):
                v3.VTextField(
                    model_value=(f"row.{key}",),
                    change=(app.type_coordinate, f"[row.name, {axis}, $event.target.value]"),
                    id=(f"'coord-' + row.name + '-{key}'",),
                    style="min-width: 0",
                    **_FIELD,
                )

        _section("Posing")
        posing_panel.section(app)

        _section("Take")
        with html.Div(classes="d-flex align-center", style="gap: 6px"):
            v3.VBtn(
                "Record",
                v_show="!recording",
                prepend_icon="mdi-record-circle-outline",
                color="error",
                variant="tonal",
                size="small",
                id="btn-record",
                disabled=("playing",),
                click=app.start_recording,
            )
            v3.VBtn(
                "Stop",
                v_show="recording",
                prepend_icon="mdi-stop",
                color="error",
                size="small",
                id="btn-stop-recording",
                click=app.stop_recording,
            )
            v3.VBtn(
                text=("playing ? 'Stop' : 'Play'",),
                prepend_icon=("playing ? 'mdi-stop' : 'mdi-play'",),
                variant="tonal",
                size="small",
                id="btn-play",
                disabled=("recording || take_frames < 2",),
                click=app.toggle_playback,
            )
            html.Span(
                "{{ take_frames }} frames, {{ take_seconds.toFixed(1) }} s",
                id="take-info",
                classes="text-caption",
            )
        with html.Div(classes="d-flex", style="gap: 6px"):
            _download_button(
                "btn-export-take", "Take .glb", "take.glb", app.export_take_glb, "model/gltf-binary", "take_frames < 2"
            )
            _download_button(
                "btn-export-take-json",
                "Take .json",
                "take.json",
                app.export_take_json,
                "application/json",
                "take_frames < 2",
            )


_SWITCH = {"density": "compact", "hide_details": True, "inset": True, "style": "flex: 0 0 auto"}


def _section(title: str) -> None:
    html.Div(title, classes="text-overline mb-n2")


def _download_button(
    element_id: str, text: str, filename: str, callback: Any, mime: str, disabled: str = "false"
) -> None:
    """A button that asks the server for a file and saves it (trame's ``utils.download``)."""
    name = callback.__name__
    v3.VBtn(
        text,
        id=element_id,
        prepend_icon="mdi-download",
        variant="tonal",
        size="small",
        disabled=(disabled,),
        # A failed export returns null (and sets error_message): then nothing is saved.
        click=f"trigger('{name}').then((data) => data && utils.download('{filename}', data, '{mime}'))",
    )
