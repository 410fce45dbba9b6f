"""The panel's "Posing" section and what the user does in it: pin or free an effector, choose the
joint where its chain stops (chain reach), mirror the pose, set a joint's stiffness
(``fabrik3d_web.document.posing``).

``PosingPanel`` is a component (it gets what it reads and calls explicitly); ``section`` declares the layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from ..drags.component import Component
from ..security import page_trigger

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}


@TrameApp()
class PosingPanel(Component):
    """The Posing section's triggers (each reports a bad argument in ``error_message``), on the selected figure.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        attempt: runs a user action, its failure shown in the banner (``WebApp._attempt``).
        publish: publishes the selected figure's state and renders (``WebApp._publish``).
        report: shows a message in the page's error banner.
    """

    def __init__(self, server: Any, document: Any, attempt: Callable[..., Any], publish: Callable[[], None],
                 report: Callable[[str], None]) -> None:  # fmt: skip
        self.server, self.document = server, document
        self._attempt, self._publish, self.report = attempt, publish, report

    @page_trigger("pin_effector")
    def pin_effector(self, name: Any) -> None:
        """The user pinned a free effector where it is."""
        self._attempt(self.controller.pin_effector, name)
        self._publish()

    @page_trigger("free_effector")
    def free_effector(self, name: Any) -> None:
        """The user freed an effector (its target removed)."""
        self._attempt(self.controller.free_effector, name)
        self._publish()

    @page_trigger("free_look")
    def free_look(self) -> None:
        """The user let the head look nowhere in particular."""
        self._attempt(self.controller.free_look)
        self._publish()

    @page_trigger("free_turns")
    def free_turns(self) -> None:
        """The user freed the targets' orientations (turned with R) and the pelvis's."""
        self._attempt(self.controller.free_turns)
        self._publish()

    @page_trigger("mirror_pose")
    def mirror_pose(self, source: Any) -> None:
        """The user mirrored the pose from one side ("left" or "right") to the other."""
        self._attempt(self.controller.mirror_pose, source)
        self._publish()

    @page_trigger("set_reach")
    def set_reach(self, effector: Any, joint: Any) -> None:
        """The user chose where an effector's chain stops."""
        self._attempt(self.controller.set_reach, effector, joint)
        self._publish()

    @page_trigger("set_hang")
    def set_hang(self, effector: Any, hangs: Any) -> None:
        """The user let a free limb hang, or follow the body."""
        self._attempt(self.controller.set_hang, effector, hangs)
        self._publish()

    @page_trigger("set_stiffness")
    def set_stiffness(self, joint: Any, value: Any) -> None:
        """The user set a joint's stiffness."""
        self._attempt(self.controller.set_stiffness, joint, value)
        self._publish()


def section(app: Any) -> None:
    """Per effector: pin/free and its chain reach; one joint's stiffness (a joint chosen, a slider)."""
    html.Div(
        "Pin holds an effector where it is; a free arm hangs (arrow) or follows the body; the chain of a "
        "target stops at its reach joint. Stiff joints (0 free .. 1) turn only when the freer ones cannot reach.",
        classes="text-caption text-medium-emphasis mt-n2",
    )
    with html.Div(v_for="row in effectors", key="row.name", classes="d-flex align-center", style="gap: 4px"):
        v3.VBtn(
            icon=("row.targeted ? 'mdi-pin' : 'mdi-pin-off-outline'",),
            size="small",
            variant="text",
            id=("'pin-' + row.name",),
            title=("row.targeted ? 'Free ' + row.name : 'Pin ' + row.name + ' where it is'",),
            click="trigger(row.targeted ? 'free_effector' : 'pin_effector', [row.name])",
        )
        html.Div("{{ row.label }}", classes="text-body-2 text-truncate", style="width: 72px", title=("row.name",))
        v3.VBtn(
            icon=("hang_of[row.name] ? 'mdi-arrow-down-bold' : 'mdi-human-handsdown'",),
            size="small",
            variant="text",
            id=("'hang-' + row.name",),
            disabled=("hang_of[row.name] == null",),
            title=(
                "hang_of[row.name] == null ? row.name + ' has no limb to hang' : hang_of[row.name] ? "
                "row.name + ' hangs when free (click: it follows the body)' : "
                "row.name + ' follows the body when free (click: it hangs)'",
            ),
            click="trigger('set_hang', [row.name, !hang_of[row.name]])",
        )
        v3.VSelect(
            label="reach",
            model_value=("reach_of[row.name]",),
            items=("reach_options[row.name]",),
            update_modelValue=(app.posing.set_reach, "[row.name, $event]"),
            id=("'reach-' + row.name",),
            **_FIELD,
        )
    with html.Div(classes="d-flex align-center flex-wrap", style="gap: 6px"):  # (no button cut by the panel)
        for source, text in (("left", "Mirror left to right"), ("right", "Mirror right to left")):
            v3.VBtn(
                text,
                size="small",
                variant="tonal",
                prepend_icon="mdi-flip-horizontal",
                id=f"btn-mirror-{source}",
                click=f"trigger('mirror_pose', ['{source}'])",
            )
    with html.Div(classes="d-flex align-center flex-wrap", style="gap: 6px"):
        v3.VBtn(
            "Free the look",
            size="small",
            variant="tonal",
            prepend_icon="mdi-eye-off-outline",
            id="btn-free-look",
            disabled=("!look_target",),
            click="trigger('free_look')",
            title="The head stops looking at the teal sphere (drag the sphere to look somewhere)",
        )
        v3.VBtn(
            "Free the turns",
            size="small",
            variant="tonal",
            prepend_icon="mdi-rotate-3d-variant",
            id="btn-free-turns",
            disabled=("!(Object.keys(orientations || {}).length || root_orientation)",),
            click="trigger('free_turns')",
            title="The targets (and the pelvis) keep their places but no longer their turns (hold R and drag to turn)",
        )
    with html.Div(classes="d-flex align-center", style="gap: 6px"):
        v3.VSelect(
            label="Stiffness of",
            v_model=("stiffness_joint", "spine_02"),
            items=("joint_names",),
            id="stiffness-joint",
            style="max-width: 150px",
            **_FIELD,
        )
        v3.VSlider(
            model_value=("stiffness_of[stiffness_joint] || 0",),
            end=(app.posing.set_stiffness, "[stiffness_joint, $event]"),
            min=0,
            max=1,
            step=0.05,
            thumb_label=True,
            id="stiffness",
            hide_details=True,
            density="compact",
        )
