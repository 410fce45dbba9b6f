"""The panel's character line and what the user does with it: show or hide the skinned meshes of an
opened character (``fabrik3d_web.document.characters``, ``fabrik3d_web.view.mesh_view``).

``CharacterPanel`` is a component (it gets what it reads and calls explicitly); ``section`` declares the
layout.
State: ``character`` (the server's: ``null``, or ``{name, convention, joints, bones, primitives,
vertices, notes}``), ``show_mesh`` (the page may set it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from ..drags.component import Component
from ..security import switched
from ..view.delivery import role_names


@TrameApp()
class CharacterPanel(Component):
    """Show or hide the meshes; the character's summary for the panel (the selected figure's character).

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        meshes: the view's character meshes (``fabrik3d_web.view.mesh_view.MeshView``).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its handles' hover labels).
        render: renders the view (``WebApp._render``).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, meshes: Any, scene: Any, render: Callable[[], None],
                 report: Callable[[str], None], own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.meshes, self.scene = server, document, meshes, scene
        self._render, self.report, self._own = render, report, own

    @change("show_mesh")
    def switch_mesh(self, show_mesh: Any, **_: Any) -> None:
        """The user showed or hid the character's meshes (the bones stay)."""
        on = switched(self, "show_mesh", show_mesh, self.meshes.visible)
        if on is not None and on != self.meshes.visible:
            self.meshes.set_visible(on)
            if self.meshes.visible:
                self.meshes.show(self.controller.skinned())
            self._render()

    def show(self) -> None:
        """Put the controller's character (or none) in the view and its summary in the state."""
        ch = self.controller.character
        self.meshes.set_character(ch)
        self.scene.roles = role_names(ch)  # (hover labels name a character's handles by role)
        summary = None
        if ch is not None:  # (skinned into the pose by the publish that follows)
            summary = {
                "name": self.controller.source,
                "convention": ch.convention or "other",
                "joints": len(ch.skeleton),
                "bones": len(ch.bones),
                "primitives": len(ch.meshes),
                "vertices": int(sum(len(m.positions) for m in ch.meshes)),
                "notes": list(ch.notes),
            }
        self._own({"character": summary})


def section(app: Any) -> None:
    """The opened character's summary and the mesh toggle (shown only with a character)."""
    app.state.update({"show_mesh": True})
    with html.Div(v_if="character", id="character-info", classes="text-body-2"):
        html.Div(
            "{{ character.name }}: {{ character.vertices }} vertices, {{ character.joints }} joints posed "
            "of {{ character.bones }} bones ({{ character.convention }} names)",
        )
        v3.VSwitch(
            v_model=("show_mesh", True),
            label="Mesh",
            id="switch-mesh",
            density="compact",
            hide_details=True,
            color="primary",
        )
        html.Div("{{ note }}", v_for="note in character.notes", key="note", classes="text-caption text-medium-emphasis")
