"""The panel's character line and what the user does with it: show or hide the skinned meshes of an
opened character (``fabrik3d_web.document.characters``, ``fabrik3d_web.view.mesh_view``).

``CharacterActions`` is a part of ``fabrik3d_web.app.WebApp``; ``section`` declares the layout.
State: ``character`` (the server's: ``null``, or ``{name, convention, joints, bones, primitives,
vertices, notes}``), ``show_mesh`` (the page may set it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from ..security import switched
from ..view.delivery import role_names


class CharacterActions:
    """Show or hide the meshes; the character's summary for the panel."""

    controller: Any
    meshes: Any
    scene: Any

    _render: Callable[..., None]  # (the WebApp's)
    _own: Callable[..., None]  # (the WebApp's)

    @change("show_mesh")
    def switch_mesh(self, show_mesh: Any, **_: Any) -> None:
        """The user showed or hid the character's meshes (the bones stay)."""
        on = switched(self, "show_mesh", show_mesh, self.meshes.visible)
        if on is not None and on != self.meshes.visible:
            self.meshes.set_visible(on)
            if self.meshes.visible:
                self.meshes.show(self.controller.skinned())
            self._render()

    def _show_character(self) -> None:
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
