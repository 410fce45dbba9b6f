"""The Body and Proportions sections of the panel, and what their controls do
(``fabrik3d_web.document.body``, ``fabrik3d_web.view.body_view``).

State: ``show_mannequin`` (the mannequin shown; on by default for a skeleton with feet and no
character mesh: the humanoid), ``show_sticks`` (the bones and joints drawn over it; always drawn
without it), ``show_com`` (the centre of mass, its shadow and the support area), ``floor_on``,
``balance_on`` (the scene's floor and balance), ``export_mannequin`` (the Pose .glb download with the
mannequin's body); the server's: ``com``, ``com_inside``, ``has_feet``, ``has_mannequin``,
``proportions`` (name -> value; null: not the humanoid). Triggers: ``set_proportion(name, value)``
(a proportion slider let go: one undo step).

``BodyPanel`` is a component (it gets what it reads and calls explicitly); ``section`` and
``proportions_section`` declare the layout.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from ..document.body import BOUNDS, PROPORTIONS
from ..drags.component import Component
from ..security import page_trigger, switched
from ..view.body_view import BodyView, place_grid

_SWITCH = {"density": "compact", "hide_details": True, "inset": True, "color": "primary", "style": "flex: 0 0 auto"}
LABELS = {"height": "height (m)", "shoulder_width": "shoulders", "hip_width": "hips"}


@TrameApp()
class BodyPanel(Component):
    """The body's switches and proportions, and the mannequin, sticks and balance drawn at each pose (see the
    module docstring), of the selected figure.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its bones, joints, handles, floor).
        body: the mannequin and the balance drawings (``fabrik3d_web.view.body_view.BodyView``).
        attempt: runs a user action, its failure shown in the banner (``WebApp._attempt``).
        publish: publishes the selected figure's state and renders (``WebApp._publish``).
        render: renders the view (``WebApp._render``).
        show_skeleton: shows a new skeleton of the selected figure (``WebApp._show_skeleton``).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, scene: Any, body: BodyView, attempt: Callable[..., Any],
                 publish: Callable[[], None], render: Callable[[], None], show_skeleton: Callable[[], None],
                 report: Callable[[str], None], own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.scene, self.body = server, document, scene, body
        self._attempt, self._publish, self._render, self._show_skeleton = attempt, publish, render, show_skeleton
        self.report, self._own = report, own
        self.skin_ms = 0.0  # the last frame's skinning of the mannequin, milliseconds
        self._body_kind: tuple[bool, bool] | None = None

    @change("show_mannequin", "show_sticks", "show_com")
    def switch_body_display(self, **_: Any) -> None:
        """The user showed or hid the mannequin, the sticks or the centre of mass."""
        for name in ("show_mannequin", "show_sticks", "show_com"):
            if not isinstance(self.state[name], bool):
                switched(self, name, self.state[name], name != "show_sticks" and self.body.has_mesh)
        self.show()
        self._render()

    @change("floor_on")
    def switch_floor(self, floor_on: Any, **_: Any) -> None:
        """The user turned the floor on or off."""
        was = self.controller.scene.floor is not None
        on = switched(self, "floor_on", floor_on, was)
        if on is not None and on != was:
            self._attempt(self.controller.set_floor, on)
            self._publish()

    @change("balance_on")
    def switch_balance(self, balance_on: Any, **_: Any) -> None:
        """The user turned balance on or off."""
        on = switched(self, "balance_on", balance_on, self.controller.scene.balance)
        if on is not None and on != self.controller.scene.balance:
            self._attempt(self.controller.set_balance, on)
            self._publish()

    @page_trigger("set_proportion")
    def set_proportion(self, name: Any, value: Any) -> None:
        """The user let go of a proportion slider: the body rebuilt, the pose kept (one undo step)."""
        if self._attempt(self.controller.set_proportion, name, value):
            self._show_skeleton()
        self._publish()

    # -- shown every frame ----------------------------------------------------------------------
    def show_skeleton(self) -> None:
        """A new skeleton: the mannequin's mesh, the display's defaults for a new kind of body."""
        c = self.controller
        mannequin = c.mannequin()
        kind = (mannequin is not None, c.has_feet)
        if kind != self._body_kind:
            self._body_kind = kind
            on = kind[0] and kind[1]
            self.state.update({"show_mannequin": on, "export_mannequin": on, "show_sticks": False, "show_com": on})
        self.body.on_top(self.scene.handles.values())
        if mannequin is None:
            self.body.set_mesh(None)
        else:
            self.body.set_mesh(mannequin.positions, mannequin.normals, mannequin.triangles)

    def show(self, positions: Any = None, rotations: Any = None) -> None:
        """The mannequin, the sticks and the balance drawings at the current pose (or the one given)."""
        c, s = self.controller, self.state
        mannequin = bool(s.show_mannequin) and self.body.has_mesh
        if mannequin:
            t0 = time.perf_counter()
            self.body.show_mesh(True, *c.mannequin_skinned(positions, rotations))
            self.skin_ms = (time.perf_counter() - t0) * 1e3
        else:
            self.body.show_mesh(False)
        sticks = not mannequin or bool(s.show_sticks)
        self.scene.bone_actor.SetVisibility(sticks)
        self.scene.joint_actor.SetVisibility(sticks)
        balance = c.balance_state(positions) if s.show_com and c.has_feet else None
        self.body.show_balance(balance, c.size)
        for grid in self.scene.floor_actors:
            place_grid(grid, c.ground, c.size)

    def publish(self) -> None:
        """The body's state: the proportions (the page's too) and the server's readouts."""
        values = self.controller.body_state()
        self.state.proportions = values.pop("proportions")  # (the sliders write it: the page's too)
        self._own(values)


def section(app: Any) -> None:
    """The mannequin, sticks and centre-of-mass switches, the floor and balance switches."""
    with html.Div(classes="d-flex flex-wrap", style="column-gap: 16px", id="body-panel"):
        v3.VSwitch(label="Mannequin", v_model=("show_mannequin", True), id="show-mannequin",
                   disabled=("!has_mannequin",), **_SWITCH)  # fmt: skip
        v3.VSwitch(label="Sticks", v_model=("show_sticks", False), id="show-sticks",
                   disabled=("!show_mannequin",), **_SWITCH)  # fmt: skip
        v3.VSwitch(label="Centre of mass", v_model=("show_com", True), id="show-com",
                   disabled=("!has_feet",), **_SWITCH)  # fmt: skip
        v3.VSwitch(label="Floor", v_model=("floor_on", False), id="floor-on", **_SWITCH)
        v3.VSwitch(label="Balance", v_model=("balance_on", False), id="balance-on", disabled=("!has_feet",),
                   **_SWITCH)  # fmt: skip
    with html.Div(v_show="has_feet && show_com", classes="text-caption", id="balance-readout"):
        v3.VIcon("mdi-circle", size="x-small", color=("com_inside ? 'success' : 'error'",), classes="mr-1")
        html.Span("{{ com_inside ? 'Balanced: the centre of mass is over the feet' : 'Falling over: the centre "
                  "of mass is outside the support area' }}")  # fmt: skip


def proportions_section(app: Any) -> None:
    """A slider per proportion of the humanoid (height in metres, the others factors of the default
    body's); letting go of one rebuilds the body, the pose kept."""
    html.Div("Proportions are the humanoid's.", v_show="!proportions", classes="text-caption text-medium-emphasis")
    with html.Div(v_show="proportions", classes="d-flex flex-column", id="proportions-panel"):
        for name in PROPORTIONS:
            low, high = BOUNDS[name]
            with html.Div(classes="d-flex align-center", style="gap: 6px", id=f"proportion-{name}"):
                html.Div(LABELS.get(name, name), classes="text-body-2", style="width: 84px")
                v3.VSlider(
                    model_value=(f"proportions && proportions.{name}",),
                    update_modelValue=f"proportions = {{...proportions, {name}: $event}}",
                    end=f"trigger('set_proportion', ['{name}', $event])",
                    min=low,
                    max=high,
                    step=0.01,
                    density="compact",
                    hide_details=True,
                    color="primary",
                )
                html.Div(f"{{{{ proportions ? Number(proportions.{name}).toFixed(2) : '' }}}}", style="width: 34px")
