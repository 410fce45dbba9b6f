"""The trame web application: ``fabrik3d serve`` opens it. A ``WebApp`` joins the ``Controller`` (what the
user can do, no UI), the ``SceneView`` (the server-side VTK scene streamed by ``VtkRemoteView``) and the panel
(``fabrik3d_web.panels.panel``). trame's state is the single source of truth for the page; the contract (docs/web.md):

* ``joint_names`` (skeleton order), ``pose`` (``[x, y, z]`` per joint), ``targets`` (effector name -> ``[x, y, z]``),
  ``solve_ms``, ``iterations``, ``max_error``, ``error_message``; setting ``targets`` moves the handles and re-solves;
* the trigger ``target_screen_position(name[, pole])`` -> ``[x, y]`` of a handle in CSS pixels from the view's top-left.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from trame.app import get_server
from trame.decorators import TrameApp, change

from fabrik3d.io.scene import Scene
from fabrik3d.model import presets

from .document.controller import Controller
from .document.document import Document
from .drags import prop_handles
from .drags.dragging import DragActions, Held
from .drags.joint_drag import JointDrag
from .drags.ring_turn import RingTurn
from .drags.screen_points import ScreenPoints
from .drags.target_turn import TargetTurn
from .pages import watch_closed_pages
from .panels import drawer
from .panels.body_panel import BodyPanel
from .panels.character_panel import CharacterPanel
from .panels.figures_panel import FiguresPanel
from .panels.hands_panel import HandsPanel
from .panels.picture_panel import PicturePanel
from .panels.poses_panel import PosesPanel
from .panels.posing_panel import PosingPanel
from .panels.timeline_panel import TimelinePanel
from .panels.turning_panel import TurningPanel
from .security import SERVER_OWNED, OwnedState, failure, page_trigger, switched
from .view.body_view import BodyView
from .view.delivery import ImageDelivery
from .view.handle_stacks import HandleStacks
from .view.mesh_view import MeshView
from .view.scene_view import SceneView
from .view.stage_view import StageView
from .view.vtk_parts import check_view

log = logging.getLogger("fabrik3d_web")


@TrameApp()
class WebApp:
    """The web UI of one scene (see the module docstring).

    Args:
        server: a trame server (default: a new one).
        scene: the scene to open (default: the humanoid preset).
        source: its name, shown in the panel (a preset name or a file name).
        character: the rigged character ``scene`` is the skeleton of (``fabrik3d.io.character``), or None.
    """

    def __init__(
        self, server: Any = None, scene: Scene | None = None, source: str = "humanoid", character: Any = None
    ) -> None:
        self.server = server or get_server(None, client_type="vue3")
        self.document = Document(Controller(scene, source, character))  # (its figures, props and contacts)
        self.owned = OwnedState(self.server.state)
        self._own = self.owned.set
        self.held = Held()  # (what the user holds down in the view: a handle, a joint's or a target's turn)
        self.scene = SceneView(lambda *a: self.drags.grab_handle(*a), lambda *a: self.drags.drag_handle(*a),
                               lambda *a: self.drags.release_handle(*a))  # (``self.drags``, made below)  # fmt: skip
        self.meshes, self.body = MeshView(self.scene.renderer), BodyView(self.scene.renderer)
        self.scene.label_layer = self.body.overlay
        self.stacks = HandleStacks(self.scene)
        self.rings = RingTurn(self.server, self.document, self.scene, lambda: self.figures, self._own, self._render,
                              self.report, self._publish)  # fmt: skip
        # (``self.delivery`` is made after the drags, whose VTK observers go first: the joint's turn's, the
        # target's, the rings' presses')
        turns = (self.server, self.document, self.held, self.scene, lambda: self.delivery, self._attempt,
                 self._publish, self._show_pose, self.rings.show_rings)  # fmt: skip
        self.drags = DragActions(*turns, self.stacks, lambda: self.timeline, self._own)
        self.joint_drag = JointDrag(*turns)
        self.target_turn = TargetTurn(*turns, self.drags.drag_lock, self._own, self.stacks)
        self.rings.watch(self.joint_drag, self.target_turn)
        self.delivery = ImageDelivery(self.server, self.scene, self.stacks)  # (its VTK observers after the drags')
        self._playback: asyncio.Task[None] | None = None
        self.figures = FiguresPanel(self.server, self.document, StageView(self.scene.renderer),
                                    self.scene.renderer.GetActiveCamera, self._show_skeleton, self._publish,
                                    self.report, self._own)  # fmt: skip
        self.turning = TurningPanel(self.server, self.document, self._attempt, self._publish, self.report, self._own)
        self.posing = PosingPanel(self.server, self.document, self._attempt, self._publish, self.report)
        self.body_panel = BodyPanel(self.server, self.document, self.scene, self.body, self._attempt, self._publish,
                                    self._render, self._show_skeleton, self.report, self._own)  # fmt: skip
        self.poses = PosesPanel(self.server, self.document, self.scene, self._attempt, self._publish,
                                self.rings.clear_selection, self.report, self._own)  # fmt: skip
        self.timeline = TimelinePanel(self.server, self.document, self.delivery, lambda: getattr(self, "view", None),
                                      self._attempt, self._publish, self._show_pose, self._file,
                                      lambda: self.held.dragging, self.report, self._own)  # fmt: skip
        self.pictures = PicturePanel(self.server, self.document, self.scene, self.meshes, self.body, self.figures,
                                     self._publish, self.report, self._own)  # fmt: skip
        self.hands = HandsPanel(self.server, self.document, self.scene, self.delivery, self._attempt, self._publish,
                                self._show_pose, self._render, self.report, self._own)  # fmt: skip
        self.screen_points = ScreenPoints(self.server, self.document, self.scene, self.delivery,
                                          self.joint_drag.display_point, self.report)  # fmt: skip
        self.character_panel = CharacterPanel(self.server, self.document, self.meshes, self.scene, self._render,
                                              self.report, self._own)  # fmt: skip
        preset = source if source in presets.names() else None
        self.state.update({"preset": preset, "scene_upload": None, "limits_on": True, "show_limits": False})
        self.state.update({"limit_joints": [], "show_poles": False, "recording": False, "playing": False, "fps": 0.0})
        self._own({"presets": list(presets.names()), "error_message": "", "selected_effector": "", "rings_on": ""})
        self._show_skeleton()
        self._publish()
        self.poses.publish_library()
        self.ui = drawer.page(self)  # (the layout; ``self.view``: the 3D view in it)
        prop_handles.PropHandles(self)  # (the picked prop's handles in the view: ``self.figures.handles``)
        self.server.controller.on_client_connected.add(self.drags.page_connected)
        self.server.controller.on_client_exited.add(self.drags.page_connected)
        watch_closed_pages(self.server, self.drags.page_connected)

    @property
    def state(self) -> Any:
        return self.server.state

    @property
    def controller(self) -> Controller:
        """The selected figure's: what the panels act on."""
        return self.document.controller

    # -- panel actions ------------------------------------------------------------------------
    @change("preset")
    def choose_preset(self, preset: Any, **_: Any) -> None:
        """The user picked a preset."""
        if preset is None or preset == self.controller.source:
            return
        if self._attempt(self.controller.load_preset, preset):
            self._show_skeleton()
        else:
            self.state.preset = self.controller.source if self.controller.source in presets.names() else None
        self._publish()

    @change("scene_upload")
    def upload_scene(self, scene_upload: Any, **_: Any) -> None:
        """The user chose a scene file: load it, or keep the current scene and show why not."""
        if not scene_upload:
            return
        missing = self._attempt(self.document.open_upload, scene_upload)
        if missing is not None:
            self.state.preset = None
            self._show_skeleton()
        if missing:  # (a scene chosen without the characters it names: those figures show as skeletons)
            self.report(f"{', '.join(missing)}: not among the files chosen; choose the scene and its characters")
        self.state.scene_upload = None
        self.figures.refresh()

    @change("targets")
    def edit_targets(self, targets: Any, **_: Any) -> None:
        """The page set ``targets`` (automation, tests): move the handles and re-solve."""
        if targets == self.controller.state()["targets"]:
            return  # our own update coming back
        self._attempt(self.controller.set_targets, targets)
        self._publish()

    @change("tolerance", "max_iterations")
    def edit_solver(self, tolerance: Any, max_iterations: Any, **_: Any) -> None:
        """The user changed the tolerance or the iteration limit."""
        c = self.controller
        if (tolerance, max_iterations) == (c.tolerance, c.max_iterations):
            return
        self._attempt(c.set_solver, tolerance, max_iterations)
        self._publish()

    @change("limits_on")
    def switch_limits(self, limits_on: Any, **_: Any) -> None:
        """The user turned the joint limits on or off."""
        on = switched(self, "limits_on", limits_on, self.controller.limits)
        if on is not None and on != self.controller.limits:
            self._attempt(self.controller.set_limits, on)
            self._publish()

    @change("show_poles")
    def switch_pole_handles(self, show_poles: Any, **_: Any) -> None:
        """The user showed or hid the pole handles (drag one to bend its chain toward it)."""
        on = switched(self, "show_poles", show_poles, self.scene.show_poles)
        if on is not None and on != self.scene.show_poles:
            self.scene.set_show_poles(on)
            self._publish()

    @change("show_limits", "limit_joints")
    def switch_limit_display(self, show_limits: Any, limit_joints: Any, **_: Any) -> None:
        """The user showed or hid the joint limits, or chose the joints whose limits are shown."""
        constrained = self.controller.scene.skeleton.constraints
        if not isinstance(limit_joints, list) or len(limit_joints) > len(constrained):
            limit_joints = [] if not isinstance(limit_joints, list) else limit_joints[: len(constrained) + 1]
        joints = [j for j in limit_joints if isinstance(j, str) and j in constrained]
        if len(joints) != len(limit_joints) or not isinstance(self.state.limit_joints, list):
            self.report(f"limit_joints: only joints with limits can be chosen: {sorted(constrained)}")
            self.state.limit_joints = joints
        if (bool(show_limits), frozenset(joints)) != (self.scene.show_limits, self.scene.limit_joints):
            result = self.controller.result
            self.scene.set_show_limits(bool(show_limits), result.positions, result.rotations, joints)
            self._render()

    @page_trigger("type_coordinate")
    def type_coordinate(self, name: Any, axis: Any, text: Any) -> None:
        """The user typed a coordinate of an effector's target and pressed Enter."""
        self._attempt(self.controller.type_coordinate, name, axis, text)
        self._publish()

    @page_trigger("undo")
    def undo(self) -> None:
        """The user clicked undo (of any figure or of the scene; past a preset switch or an opened file: the
        scene before it)."""
        self._step_history(self.document.undo)

    @page_trigger("redo")
    def redo(self) -> None:
        """The user clicked redo."""
        self._step_history(self.document.redo)

    def _step_history(self, step: Callable[[], bool]) -> None:
        if self._attempt(self.controller.skeleton_changed_by, step) is True:
            self._show_skeleton()
        self.state.preset = self.controller.source if self.controller.source in presets.names() else None
        self.figures.refresh()

    @page_trigger("reset_pose")
    def reset_pose(self) -> None:
        """The user clicked reset pose."""
        self._attempt(self.controller.reset_pose)
        self.rings.clear_selection()  # (no rings; Copy takes the whole pose)
        self._publish()

    @page_trigger("reset_camera")
    def reset_camera(self, view: Any = "perspective") -> None:
        """The user framed the pose (F), or chose a view: perspective, front, side, top; the pose, its
        targets and handles and a character's mesh in view."""
        if self._attempt(check_view, view):
            self.scene.reset_camera(view, self.controller.framed_points())
            self._render()

    # -- take ---------------------------------------------------------------------------------
    @page_trigger("start_recording")
    def start_recording(self) -> None:
        """The user clicked record: keep every pose from now on."""
        self.controller.start_recording()
        self._publish()

    @page_trigger("stop_recording")
    def stop_recording(self) -> None:
        """The user stopped recording."""
        self.controller.stop_recording()
        self._publish()

    @page_trigger("toggle_playback")
    def toggle_playback(self) -> None:
        """The user clicked play (or stop while playing)."""
        if self._playback is not None and not self._playback.done():
            self._playback.cancel()
            return
        if len(self.controller.take_times) < 2:
            self.report("take: record a take first")
            return
        self._playback = asyncio.ensure_future(self._play())

    async def _play(self) -> None:
        c = self.controller
        with self.state:
            self.state.playing = True
        start = time.perf_counter()
        try:
            for k, t in enumerate(c.take_times):
                await asyncio.sleep(max(0.0, t - (time.perf_counter() - start)))
                self.scene.show_pose(c.take_positions[k], c.take_rotations[k], {}, None, [])
                self.body_panel.show(c.take_positions[k], c.take_rotations[k])
                self._render()
        finally:
            with self.state:
                self.state.playing = False
                self._publish()

    # -- files (the scene's and its pose's: ``FiguresPanel``) -----------------------------------
    @page_trigger("export_take_glb")
    def export_take_glb(self) -> Any:
        """The user clicked export take: the take as an animated binary glTF (with the mannequin's body when
        the Mannequin box is on)."""
        return self._file(lambda: self.controller.take_glb(self.state.export_mannequin is True))

    @page_trigger("export_take_json")
    def export_take_json(self) -> Any:
        """The user clicked export take JSON: the take file the CLI reads."""
        return self._file(lambda: self.controller.take_json().encode())

    def _file(self, make: Callable[[], bytes]) -> Any:
        data = self._attempt(make)
        if data is None:
            self.state.flush()
            return None
        return self.server.protocol.addAttachment(data)

    # -- internals ----------------------------------------------------------------------------
    def _attempt(self, action: Callable[..., Any], *args: Any) -> Any:
        """Run a user action; a ``ValueError`` (or any failure) becomes ``error_message``.

        Returns the action's result, True for ``None`` results, or ``None`` on failure.
        """
        try:
            out = action(*args)
        except Exception as exc:  # the server keeps running whatever a client sends
            self.report(failure(getattr(action, "__name__", "action"), exc))
            return None
        if not self.held.dragging:
            self.report("")
        return True if out is None else out

    def _show_skeleton(self) -> None:
        c = self.controller
        self.rings.hide_rings()
        self.scene.set_skeleton(c.scene.skeleton, c.size, c.head_name())
        self.character_panel.show()
        self.body_panel.show_skeleton()
        sk = c.scene.skeleton
        stiff = [n for n, v in c.posing.stiffness.items() if v > 0.0] or [sk.names[j] for j in sk.order[1:2]]
        self.state.update({"limit_joints": [], "limits_on": c.limits, "stiffness_joint": stiff[0] if stiff else None})
        self._own(
            {"has_limits": bool(c.scene.skeleton.constraints), "limited_joints": list(c.scene.skeleton.constraints)}
        )

    def _show_pose(self, moving: tuple[str, str] | None = None) -> None:
        """Show the controller's pose, targets and poles in the 3D scene."""
        c = self.controller
        homes = {}
        if self.scene.show_poles:
            homes = {name: c.pole_home(name) for name in c.scene.skeleton.end_effectors if name not in c.poles}
        result = c.result
        point = c.look_point()
        look = None if point is None else (point, c.look is not None)
        self.scene.show_pose(
            result.positions, result.rotations, c.targets, c.root_target, c.unreachable, moving, c.poles, homes, look
        )
        if c.character is not None and self.meshes.visible:
            self.meshes.show(c.skinned())
        self.body_panel.show()
        self.rings.follow_rings()
        self.figures.draw()

    def _publish(self) -> None:
        """Copy the controller's state to trame's state and the scene; render unless dragging."""
        c = self.controller
        self._show_pose()
        settings = {"tolerance": c.tolerance, "max_iterations": c.max_iterations, "recording": c.recording}
        self.state.update({**settings, **c.timeline_state()})
        self.turning.publish()
        self.hands.publish()
        self.body_panel.publish()
        self.figures.publish()
        self.timeline.prebake()
        self._own(
            {
                **c.state(),
                **c.posing_state(),
                **c.key_state(),
                "frame_shown": c.frame,  # (the frame the targets and pose above are of; a preview: not baked yet)
                "frame_preview": c.previewing is not None,
                "effectors": c.effector_rows(),
                "fps": round(c.fps, 1),
                "can_undo": self.document.can_undo,
                "can_redo": self.document.can_redo,
                "take_frames": len(c.take_times),
                "take_seconds": c.take_duration,
            }
        )
        if not self.held.dragging:
            self._render()

    def report(self, message: str) -> None:
        """Show ``message`` in the page's error banner ("" hides it)."""
        self._own({"error_message": message})

    @change(*SERVER_OWNED)
    def refuse_page_writes(self, **state: Any) -> None:
        """A page wrote state that only the server sets: put it back and say so."""
        self.owned.refuse_writes(state)

    def _render(self) -> None:
        """Push a new image of the view (outside drags; during one, trame-vtk pushes frames itself)."""
        if hasattr(self, "view"):
            self.delivery.still_soon(self.view.update)
