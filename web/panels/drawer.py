"""The side panel (issue 51, item 6): one tab per task, each at most about a screen tall, and a first-run
hint for the three gestures of the view.

``TABS``: Pose (copy and paste with its chip, then the pose library, posing, turning and target sections
as a group of which one is open at a time), Hands, Body (the body and its proportions), Animate (the
take; the timeline stays under the view), Picture, Scene (groups: the figures, props and contacts of the
scene, ``figures_panel``; the scene file, the character and the downloads; the solver).
Every control keeps its element id; a tab's content is ``#tab-<key>-panel``, its button ``#tab-<key>``,
a group's ``#group-<key>``. ``page(app)`` declares the whole page around it (the toolbar, the 3D view, the
timeline bar); ``drawer(app)`` declares it, inside the layout's navigation drawer: the hint
and the tabs stay in place, the tab's content scrolls under them. The hint (``#gesture-hint``) is shown
until its close button is clicked, which the page remembers (``localStorage``, ``HINT_KEY``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.ui.vuetify3 import SinglePageWithDrawerLayout
from trame.widgets import client, html
from trame.widgets import vuetify3 as v3

from . import (
    body_panel,
    character_panel,
    figures_panel,
    hands_panel,
    panel,
    picture_panel,
    poses_panel,
    posing_panel,
    turning_panel,
)
from .download import download_button
from .panel import SHORTCUT_HELP
from .timeline_panel import timeline_bar

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}
_SWITCH = {"density": "compact", "hide_details": True, "inset": True, "style": "flex: 0 0 auto"}
HINT_KEY = "fabrik3d-gesture-hint"
# The hint's line: (in bold, then plain).
HINT = (
    ("Drag", " a sphere to move it. "),
    ("Click", " a hand, foot, head or pelvis, drag a ring to turn it. "),
    ("Alt", "+drag a joint to turn it."),
)


# The groups' contents as wide as a tab's sections (Vuetify's padding is 24 pixels a side).
STYLE = "#side-panel .v-expansion-panel-text__wrapper { padding: 4px 4px 12px 8px; }"


def page(app: Any) -> Any:
    """The page, declared once: the toolbar, the side panel (``drawer``), the 3D view (``app.view`` is set to it)
    under the error banner, and the timeline bar; the layout."""
    with SinglePageWithDrawerLayout(app.server, width=400) as layout:
        layout.title.set_text("fabrik3d")
        layout.footer.hide()
        with layout.toolbar:
            panel.toolbar(app)
        with layout.drawer:
            drawer(app)
        with layout.content:
            with v3.VContainer(fluid=True, classes="pa-0 fill-height d-flex flex-column"):
                with html.Div(style="position: relative; flex: 1 1 auto; width: 100%; min-height: 0"):
                    panel.error_banner(app)
                    app.view = panel.view_3d(app)
                timeline_bar(app)
    return layout


def drawer(app: Any) -> None:
    """The hint, the tab bar and the tabs' contents (``TABS``)."""
    client.Style(STYLE)
    with html.Div(classes="d-flex flex-column", style="height: 100%", id="side-panel"):
        gesture_hint()
        with v3.VTabs(
            v_model=("panel_tab", TABS[0][0]), density="compact", grow=True, color="primary", id="panel-tabs",
            classes="border-b px-2", style="flex: 0 0 auto",
        ):  # fmt: skip
            for key, title, _ in TABS:
                v3.VTab(title, value=key, id=f"tab-{key}", min_width=0, classes="px-1 text-none")
        with html.Div(style="flex: 1 1 auto; min-height: 0; overflow-y: auto", id="panel-scroll"):
            with v3.VWindow(v_model=("panel_tab",), id="panel-window"):
                for key, _, sections in TABS:
                    with v3.VWindowItem(value=key, eager=True, transition=False, reverse_transition=False,
                                        id=f"tab-{key}-panel", raw_attrs=[f'data-tab="{key}"']):  # fmt: skip
                        _tab(app, key, sections)


def _tab(app: Any, key: str, sections: Any) -> None:
    with v3.VContainer(classes="pa-3 d-flex flex-column", style="gap: 14px"):
        for item in sections:
            if isinstance(item, dict):
                _group(app, key, item)
                continue
            title, build = item
            if title:
                html.Div(title, classes="text-overline mb-n2")
            build(app)


def _group(app: Any, key: str, sections: dict[str, Section]) -> None:
    """Collapsible sections, one open at a time (the first at the start)."""
    first = next(iter(sections))
    with v3.VExpansionPanels(
        v_model=(f"{key}_group", first), variant="accordion", id=f"{key}-groups", classes="mx-n2"
    ):  # fmt: skip
        for name, (title, build) in sections.items():
            with v3.VExpansionPanel(value=name, id=f"group-{name}", raw_attrs=[f'data-group="{name}"']):
                v3.VExpansionPanelTitle(title, classes="text-overline py-0 px-3", style="min-height: 40px")
                with v3.VExpansionPanelText(eager=True):
                    with html.Div(classes="d-flex flex-column", style="gap: 14px"):
                        build(app)


def gesture_hint() -> None:
    """The first-run line on the view's three gestures: drag, ring, Alt (closed for good by its x)."""
    client.ClientTriggers(mounted=f"gesture_hint = window.localStorage.getItem('{HINT_KEY}') !== 'closed'")
    with v3.VAlert(
        v_model=("gesture_hint", False),
        closable=True,
        click_close=f"window.localStorage.setItem('{HINT_KEY}', 'closed')",
        density="compact",
        variant="tonal",
        type="info",
        icon=False,
        id="gesture-hint",
        classes="ma-2 mb-1 text-caption",
        style="flex: 0 0 auto",
    ):
        for bold, text in HINT:
            html.B(bold)
            html.Span(text)


def scene_section(app: Any) -> None:
    """The preset, the scene or character file, the character, the downloads."""
    v3.VSelect(label="Preset", v_model=("preset",), items=("presets",), id="preset", **_FIELD)
    v3.VFileInput(
        label="Open a scene (.json) with its characters, or a character (.glb, .gltf)",
        v_model=("scene_upload", None),
        multiple=True,
        accept=".json,application/json,.glb,.gltf,model/gltf-binary,model/gltf+json",
        id="scene-upload",
        prepend_icon="",
        prepend_inner_icon="mdi-folder-open-outline",
        **_FIELD,
    )
    character_panel.section(app)
    with html.Div(classes="d-flex", style="gap: 6px"):
        download_button(
            "btn-download-scene", "Scene .json", "scene.json", app.figures.download_scene, "application/json"
        )
        download_button("btn-export-pose", "Pose .glb", "pose.glb", app.figures.export_pose_glb, "model/gltf-binary")
        v3.VCheckbox(label="Mannequin", v_model=("export_mannequin", True), id="export-mannequin",
                     disabled=("!has_mannequin",), density="compact", hide_details=True)  # fmt: skip


def solver_section(app: Any) -> None:
    """Tolerance, iterations, the limits' and poles' switches."""
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


def targets_section(app: Any) -> None:
    """A row per end effector: its state and its target's coordinates."""
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
        html.Div("{{ row.label }}", classes="text-body-2 text-truncate", style="width: 84px", title=("row.name",))
        for axis, key in enumerate("xyz"):
            v3.VTextField(
                model_value=(f"row.{key}",),
                change=(app.type_coordinate, f"[row.name, {axis}, $event.target.value]"),
                id=(f"'coord-' + row.name + '-{key}'",),
                style="min-width: 0",
                **_FIELD,
            )


def take_section(app: Any) -> None:
    """Record, play and download a take."""
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
        download_button(
            "btn-export-take", "Take .glb", "take.glb", app.export_take_glb, "model/gltf-binary", "take_frames < 2"
        )
        download_button(
            "btn-export-take-json",
            "Take .json",
            "take.json",
            app.export_take_json,
            "application/json",
            "take_frames < 2",
        )


def timeline_note(app: Any) -> None:
    """Where the timeline is."""
    html.Div(
        "The timeline is under the view: K keys the pose at its frame, Space plays.",
        classes="text-caption text-medium-emphasis",
    )


Section = tuple[str, Callable[[Any], None]]
# (key, title, sections): each a (heading or "", build), or a group: name -> (title, build).
TABS: tuple[tuple[str, str, tuple[Section | dict[str, Section], ...]], ...] = (
    (
        "pose",
        "Pose",
        (
            ("Copy and paste", poses_panel.section),
            {
                "library": ("Pose library", poses_panel.library_section),
                "posing": ("Posing", posing_panel.section),
                "turning": ("Turn a joint", turning_panel.section),
                "targets": ("Targets", targets_section),
            },
        ),
    ),
    ("hands", "Hands", (("", hands_panel.section),)),
    ("body", "Body", (("Body", body_panel.section), ("Proportions", body_panel.proportions_section))),
    (
        "animate",
        "Animate",
        (("Take", take_section), ("", timeline_note)),
    ),
    ("picture", "Picture", (("", picture_panel.section),)),
    (
        "scene",
        "Scene",
        (
            {
                "figures": ("Figures, props and contacts", figures_panel.section),
                "file": ("Scene", scene_section),
                "solver": ("Solver", solver_section),
            },
        ),
    ),
)
