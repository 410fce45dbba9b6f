"""The panel's "Hands" section and what the user does in it: choose the hand (or grab its handle),
give it a shape, curl a finger, spread them, blend by an amount, mirror it onto the other hand
(``fabrik3d_web.document.hands``).

``HandsPanel`` is a component (it gets what it reads and calls explicitly); ``section`` declares the layout. State:
``hand_side`` (``"l"`` or ``"r"``; the page sets it, and grabbing a hand's handle chooses that hand),
``hand_sides`` (the sides with fingers: none hides the section's controls), ``hand_curls`` (finger ->
0..1 measured on the pose shown), ``hand_spread``, ``hand_shape``, ``hand_amount`` (the hand edit's;
the server's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from fabrik3d.model.fingers import FINGERS
from fabrik3d.solver.hands import SHAPES

from ..drags.component import Component
from ..security import page_trigger
from ..view.vtk_parts import check_view, frame_camera

_SLIDER = {"hide_details": True, "density": "compact", "start": "trigger('begin_hand')", "end": "trigger('end_hand')"}


@TrameApp()
class HandsPanel(Component):
    """The Hands section's triggers (each reports a bad argument in ``error_message``), on the selected figure.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its renderer's camera frames a hand).
        delivery: the view's image stream (``fabrik3d_web.view.delivery.ImageDelivery``).
        attempt: runs a user action, its failure shown in the banner (``WebApp._attempt``).
        publish: publishes the selected figure's state and renders (``WebApp._publish``).
        show_pose: shows the pose in the 3D scene without publishing (``WebApp._show_pose``).
        render: renders the view (``WebApp._render``).
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Any, scene: Any, delivery: Any, attempt: Callable[..., Any],
                 publish: Callable[[], None], show_pose: Callable[[], None], render: Callable[[], None],
                 report: Callable[[str], None], own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.scene, self.delivery = server, document, scene, delivery
        self._attempt, self._publish, self._show_pose, self._render = attempt, publish, show_pose, render
        self.report, self._own = report, own
        self._grabbed_hand = ""  # (the hand's handle grabbed last: it chose the hand)

    @change("hand_side")
    def choose_hand(self, hand_side: Any, **_: Any) -> None:
        """The user chose the left or the right hand."""
        self.publish()

    @page_trigger("choose_hand_shape")
    def choose_hand_shape(self, shape: Any) -> None:
        """The user clicked a shape for the hand: its image sent at once, then the panel."""
        if not self._attempt(lambda: self.controller.shape_hand(self.state.hand_side, shape)):
            self._publish()
            return
        self._show_pose()
        self.delivery.image_first(self._publish_panel)  # (a drag's quick small image first)

    def _publish_panel(self) -> None:
        with self.state:
            self._publish()

    @page_trigger("curl_finger")
    def curl_finger(self, finger: Any, curl: Any, sliding: Any = False) -> None:
        """The user moved a finger's curl slider (``sliding``: during its drag, one undo step)."""
        c = self.controller
        done = self._attempt(lambda: c.curl_finger(self.state.hand_side, finger, curl, undoable=sliding is not True))
        self._hand_changed(done, sliding)

    @page_trigger("spread_hand")
    def spread_hand(self, degrees: Any, sliding: Any = False) -> None:
        """The user moved the spread slider."""
        c = self.controller
        done = self._attempt(lambda: c.spread_hand(self.state.hand_side, degrees, undoable=sliding is not True))
        self._hand_changed(done, sliding)

    @page_trigger("blend_hand")
    def blend_hand(self, amount: Any, sliding: Any = False) -> None:
        """The user moved the amount slider."""
        c = self.controller
        done = self._attempt(lambda: c.set_hand_amount(self.state.hand_side, amount, undoable=sliding is not True))
        self._hand_changed(done, sliding)

    @page_trigger("begin_hand")
    def begin_hand(self) -> None:
        """The user took a hand slider (one undo step for its whole drag; its images small and quick,
        as a drag's, until it is let go)."""
        self.controller.begin_drag()
        self.delivery.set_moving(True)

    @page_trigger("end_hand")
    def end_hand(self) -> None:
        """The user let go of a hand slider: the still image and the panel."""
        self.controller.end_drag()
        self.delivery.set_moving(False)
        self._publish()

    @page_trigger("mirror_hand")
    def mirror_hand(self) -> None:
        """The user clicked "Mirror hand to the other side"."""
        self._hand_changed(self._attempt(self.controller.mirror_hand, self.state.hand_side), False)

    def _hand_changed(self, done: Any, sliding: Any) -> None:
        """Show a hand's change: during a slider's drag its image alone, small and quick (the panel when
        it is let go); otherwise the image first, the panel a moment later; a refused change, the panel."""
        if not done:
            self._publish()
            return
        self._show_pose()
        if sliding is True and self.delivery.held:
            self.delivery.push_now()
        else:
            self.delivery.image_first(self._publish_panel)

    @page_trigger("frame_hand")
    def frame_hand(self, view: Any = "perspective") -> None:
        """The user clicked "Zoom on the hand" (a view: perspective, front, side, top): the chosen
        hand and its fingers fill the view (Alt + click picks a finger's joint there)."""
        c = self.controller
        points = self._attempt(lambda: check_view(view) or c.hand_points(self.state.hand_side))
        if points is not None:
            extent = float((points.max(axis=0) - points.min(axis=0)).max())
            frame_camera(self.scene.renderer, points, max(extent, 1e-3) * 3.0, view)
            self._render()

    def publish(self) -> None:
        """The hand readouts; a hand's handle grabbed since chooses that hand."""
        c, grabbed = self.controller, self.state.selected_effector or ""
        sides = c.hand_sides()
        if grabbed != self._grabbed_hand:
            self._grabbed_hand = grabbed
            roles = {} if c.character is None else {b: r for r, b in c.character.effectors.items()}
            role = roles.get(grabbed, grabbed)
            if role in ("hand_l", "hand_r") and role[-1] in sides:
                self.state.hand_side = role[-1]
        if self.state.hand_side not in sides and sides:
            self.state.hand_side = sides[0]
        self._own({"hand_sides": sides, **c.hand_state(self.state.hand_side)})


def section(app: Any) -> None:
    """The hand toggle, the shapes, a curl slider per finger, the spread, the amount and the mirror."""
    app.state.setdefault("hand_side", "l")
    html.Div(
        "This skeleton has no fingers to shape.",
        v_show="!hand_sides.length",
        classes="text-caption text-medium-emphasis mt-n2",
    )
    with html.Div(v_show="hand_sides.length", classes="d-flex flex-column", style="gap: 6px", id="hand-panel"):
        with v3.VBtnToggle(
            v_model=("hand_side",), mandatory=True, density="compact", variant="outlined", id="hand-side"
        ):
            v3.VBtn("Left hand", value="l", id="btn-hand-l", size="small", disabled=("!hand_sides.includes('l')",))
            v3.VBtn("Right hand", value="r", id="btn-hand-r", size="small", disabled=("!hand_sides.includes('r')",))
        with html.Div(classes="d-flex flex-wrap", style="gap: 4px"):
            for shape in SHAPES:
                v3.VBtn(
                    shape,
                    id=f"btn-hand-{shape}",
                    size="small",
                    variant=(f"hand_shape === '{shape}' ? 'flat' : 'tonal'",),
                    color=(f"hand_shape === '{shape}' ? 'primary' : undefined",),
                    click=f"trigger('choose_hand_shape', ['{shape}'])",
                )
        for finger in FINGERS:
            _slider(finger, f"hand_curls.{finger}", 0, 1, 0.05, f"trigger('curl_finger', ['{finger}', $event, true])")
        _slider("spread", "hand_spread", -30, 30, 1, "trigger('spread_hand', [$event, true])")
        _slider("amount", "hand_amount", 0, 1, 0.05, "trigger('blend_hand', [$event, true])")
        with html.Div(classes="d-flex align-center flex-wrap", style="gap: 4px"):
            html.Div("Zoom on the hand:", classes="text-body-2")
            for view in ("perspective", "front", "side"):
                v3.VBtn(
                    view,
                    id=f"btn-hand-view-{view}",
                    size="x-small",
                    variant="text",
                    click=f"trigger('frame_hand', ['{view}'])",
                )
        v3.VBtn(
            "Mirror hand to the other side",
            id="btn-mirror-hand",
            size="small",
            variant="tonal",
            prepend_icon="mdi-hand-back-left-outline",
            click="trigger('mirror_hand')",
        )


def _slider(label: str, value: str, low: float, high: float, step: float, update: str) -> None:
    with html.Div(classes="d-flex align-center", style="gap: 6px"):
        html.Div(label, classes="text-body-2", style="width: 52px")
        v3.VSlider(
            model_value=(value,),
            min=low,
            max=high,
            step=step,
            classes=f"hand-slider-{label}",
            update_modelValue=update,
            **_SLIDER,
        )
        html.Div(f"{{{{ Number({value} || 0).toFixed({0 if step >= 1 else 2}) }}}}", style="width: 34px")
