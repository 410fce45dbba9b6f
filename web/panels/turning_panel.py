"""The panel's "Turn a joint" section and what the user does in it: choose a joint (in the list or
by clicking it in the view) and turn it with three sliders or typed angles (``fabrik3d_web.document.turning``).

``TurningPanel`` is a component (it gets what it reads and calls explicitly, as
``fabrik3d_web.panels.figures_panel.FiguresPanel``); ``section`` declares the layout. State:
``selected_joint`` (the page may set it), ``turnable_joints`` (every joint, the root too) and
``joint_angles`` (``[x, y, z]`` degrees of the selected joint's turn as applied, read back from the pose:
after a turn beyond its limits, the stop; the server's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from ..drags.component import Component
from ..security import page_trigger

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}


@TrameApp()
class TurningPanel(Component):
    """The section's triggers (each reports a bad argument in ``error_message``), on the selected figure.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's, which turns).
        attempt: runs a user action, its failure shown in the banner (``WebApp._attempt``).
        publish: publishes the selected figure's state and renders (``WebApp._publish``).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, attempt: Callable[..., Any], publish: Callable[[], None],
                 report: Callable[[str], None], own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document = server, document
        self._attempt, self._publish, self.report, self._own = attempt, publish, report, own

    @change("selected_joint")
    def select_joint(self, selected_joint: Any, **_: Any) -> None:
        """The user chose the joint to turn."""
        self.publish()

    @page_trigger("begin_turn")
    def begin_turn(self) -> None:
        """The user started dragging an angle's slider (one undo step for the whole drag)."""
        self.controller.begin_drag()

    @page_trigger("end_turn")
    def end_turn(self) -> None:
        """The user let go of an angle's slider."""
        self.controller.end_drag()
        self._publish()

    @page_trigger("turn_joint")
    def turn_joint(self, name: Any, angles: Any, sliding: Any = False) -> None:
        """The user turned a joint: its Euler angles ``[x, y, z]`` in degrees (``sliding``: during a
        slider's drag, whose undo step ``begin_turn`` made)."""
        self._attempt(lambda: self.controller.turn(name, angles, undoable=sliding is not True))
        self._publish()

    def publish(self) -> None:
        """The section's state: the joints to turn and the selected one's angles."""
        c, name, joints = self.controller, self.state.selected_joint, self.controller.turnable_joints()
        if name not in joints:  # (another skeleton: its first arm's joint, or its first joint)
            name = next((j for j in joints if "shoulder" in j or "upperarm" in j), joints[0] if joints else None)
            self.state.selected_joint = name
        angles = None if name is None else c.joint_angles(name)
        self._own({"turnable_joints": joints, "joint_angles": angles or [0.0, 0.0, 0.0]})


def section(app: Any) -> None:
    """The joint to turn and its three angles (sliders from -180 to 180 degrees, and typed values)."""
    html.Div(
        "Choose a joint (or Alt + click it in the view; Alt + drag around it turns it) and turn it: X and Z "
        "bend it, Y twists it about its bone, from its rest pose, within its own limits (the angles then show "
        "what it took); the joints below follow, nothing else moves (the root turns the whole body).",
        classes="text-caption text-medium-emphasis mt-n2",
    )
    v3.VSelect(
        label="Joint",
        v_model=("selected_joint", "shoulder_l"),
        items=("turnable_joints",),
        id="turn-joint",
        **_FIELD,
    )
    for axis, label in enumerate("XYZ"):
        with html.Div(classes="d-flex align-center", style="gap: 6px"):
            html.Div(label, classes="text-body-2", style="width: 14px")
            v3.VSlider(
                model_value=(f"joint_angles[{axis}]",),
                min=-180,
                max=180,
                step=1,
                classes=f"turn-slider-{label.lower()}",
                hide_details=True,
                density="compact",
                start="trigger('begin_turn')",
                end="trigger('end_turn')",
                update_modelValue=(
                    f"trigger('turn_joint', [selected_joint, joint_angles.map((a, k) => k === {axis} ? $event : a), "
                    "true])"
                ),
            )
            v3.VTextField(
                model_value=(f"joint_angles[{axis}].toFixed(1)",),
                change=(
                    f"trigger('turn_joint', [selected_joint, joint_angles.map((a, k) => k === {axis} ? "
                    "Number($event.target.value) : a)])"
                ),
                id=f"turn-angle-{label.lower()}",
                style="max-width: 84px",
                suffix="°",
                **_FIELD,
            )
