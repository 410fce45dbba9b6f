"""The server-side VTK scene: skeleton, target handles, ground grid and joint limits.

``SceneView`` owns an off-screen render window that trame's ``VtkRemoteView`` streams
to the browser. It draws

* the joints as spheres (one glyph actor) and the bones as tapered tubes (one actor),
* one ``vtkHandleWidget`` per end effector, one on the root and (on demand) one per
  effector's pole, dragged with the mouse; a targeted effector's handle sits on its
  target (accent colour; warning colour when out of reach, with a line to the
  effector), a free one on the effector (grey),
* a ground grid, an orientation marker, soft lighting (a light kit),
* optionally the joint limits found in ``skeleton.constraints`` (``fabrik3d_web.view.limits``):
  cones as translucent fans around the allowed directions, hinges as flat fans.

The view never solves: drag callbacks report ``(kind, name, point)`` and the caller
sends back the new pose through ``show_pose``. Shapes: ``positions`` ``(n, 3)`` in
scene units, ``rotations`` ``(n, 4)`` quaternions (x, y, z, w).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")  # off screen, no X

import vtkmodules.vtkInteractionStyle
import vtkmodules.vtkRenderingFreeType
import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (the OpenGL render window)
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkFiltersCore import vtkTubeFilter
from vtkmodules.vtkFiltersSources import vtkSphereSource
from vtkmodules.vtkInteractionWidgets import vtkHandleWidget, vtkSphereHandleRepresentation
from vtkmodules.vtkRenderingCore import (
    vtkActor,
    vtkGlyph3DMapper,
    vtkLightKit,
    vtkPolyDataMapper,
    vtkRenderer,
    vtkRenderWindow,
    vtkRenderWindowInteractor,
)

from fabrik3d import display
from fabrik3d.model.skeleton import Skeleton

from .limits import limit_fans
from .vtk_parts import (
    BONE,
    EFFECTOR,
    FREE,
    FREE_LOOK,
    FREE_POLE,
    JOINT,
    LIMIT_CONE,
    LIMIT_HINGE,
    LOOK,
    POLE,
    ROOT,
    SKY_BOTTOM,
    SKY_TOP,
    TARGET,
    UNREACHABLE,
    camera_style,
    finish,
    floor_grid,
    frame_camera,
    keep_handle_sizes,
    label,
    lit_actor,
    orientation_marker,
    scale_label,
    set_lines,
    set_points,
    set_triangles,
)

# Handle size on screen, pixels (the sphere's radius is about half of it).
HANDLE_PX = 18.0

DragCallback = Callable[[str, str, np.ndarray], None]


class SceneView:
    """The VTK pipeline of one skeleton (see the module docstring).

    Args:
        on_drag_start: ``(kind, name, point)`` when the user grabs a handle; ``kind``
            is ``"target"`` (an end effector's handle), ``"pole"`` (the pole of an end
            effector's chain), ``"root"`` or ``"look"`` (what the head, ``name``, looks at).
        on_drag: the same, on every mouse move of a drag; ``point`` ``(3,)`` scene units.
        on_drag_end: the same, when the button is released.
        size: ``(width, height)`` of the render window before the browser sets it, pixels.
    """

    def __init__(
        self,
        on_drag_start: DragCallback,
        on_drag: DragCallback,
        on_drag_end: DragCallback,
        size: tuple[int, int] = (960, 720),
    ) -> None:
        self._callbacks = (on_drag_start, on_drag, on_drag_end)
        self.renderer = vtkRenderer()
        self.renderer.GradientBackgroundOn()
        self.renderer.SetBackground(*SKY_BOTTOM)
        self.renderer.SetBackground2(*SKY_TOP)
        self.renderer.UseFXAAOn()
        vtkLightKit().AddLightsToRenderer(self.renderer)
        self.render_window = vtkRenderWindow()
        self.render_window.SetOffScreenRendering(1)
        self.render_window.SetMultiSamples(0)
        self.render_window.SetSize(*size)
        self.render_window.AddRenderer(self.renderer)
        self.interactor = vtkRenderWindowInteractor()
        self.interactor.SetRenderWindow(self.render_window)
        self.style = camera_style(self.interactor)  # (the wheel zooms toward the cursor)
        self.interactor.EnableRenderOff()  # trame renders once per frame, not every widget event

        self._bones = vtkPolyData()
        tube = vtkTubeFilter()
        tube.SetInputData(self._bones)
        tube.SetVaryRadiusToVaryRadiusByAbsoluteScalar()
        tube.SetNumberOfSides(18)
        tube.CappingOn()
        self.bone_actor = lit_actor(tube, BONE, specular=0.25)
        self.bone_actor.GetMapper().ScalarVisibilityOff()

        self._joints = vtkPolyData()
        sphere = vtkSphereSource()
        sphere.SetThetaResolution(16)
        sphere.SetPhiResolution(12)
        sphere.SetRadius(1.0)
        glyphs = vtkGlyph3DMapper()
        glyphs.SetInputData(self._joints)
        glyphs.SetSourceConnection(sphere.GetOutputPort())
        glyphs.SetScaleArray("radius")
        glyphs.SetScaleModeToScaleByMagnitude()
        glyphs.SetColorModeToDirectScalars()
        glyphs.ScalarVisibilityOn()
        self.joint_actor = vtkActor()
        self.joint_actor.SetMapper(glyphs)
        finish(self.joint_actor.GetProperty(), specular=0.4)

        self._gaps = vtkPolyData()
        gap_mapper = vtkPolyDataMapper()
        gap_mapper.SetInputData(self._gaps)
        self.gap_actor = vtkActor()
        self.gap_actor.SetMapper(gap_mapper)
        self.gap_actor.GetProperty().SetColor(*UNREACHABLE)
        self.gap_actor.GetProperty().SetLineWidth(2.0)
        self.gap_actor.GetProperty().LightingOff()

        for actor in (self.bone_actor, self.joint_actor, self.gap_actor):
            self.renderer.AddActor(actor)
        self.floor_actors: list[vtkActor] = []  # (the ground grid)
        self._limit_polys = [vtkPolyData(), vtkPolyData()]
        self._limit_actors = []
        for poly, color, opacity in zip(self._limit_polys, (LIMIT_CONE, LIMIT_HINGE), (0.25, 0.4)):
            mapper = vtkPolyDataMapper()
            mapper.SetInputData(poly)
            actor = vtkActor()
            actor.SetMapper(mapper)
            actor.GetProperty().SetColor(*color)
            actor.GetProperty().SetOpacity(opacity)
            actor.GetProperty().BackfaceCullingOff()
            actor.VisibilityOff()
            self._limit_actors.append(actor)
            self.renderer.AddActor(actor)
        self.handles: dict[tuple[str, str], vtkHandleWidget] = {}
        keep_handle_sizes(self.renderer, lambda: self.handles.values())
        self.show_limits = False
        self.roles: dict[str, str] = {}  # (a character's bone -> its role: the hover labels', ``delivery.role_names``)
        self.pixel_scale = 1.0
        self.limit_joints: frozenset[str] = frozenset()  # joints whose limits are drawn (empty: all)
        self.show_poles = False
        self.skeleton: Skeleton | None = None
        self.marker = orientation_marker(self.interactor)
        self._labels: dict[str, Any] = {}  # effector -> the label of its pole handle, drawn by label_layer:
        self.label_layer = self.renderer  # (the app's overlay draws them over the body, as the handles)

    # -- building ------------------------------------------------------------------------------
    def set_skeleton(self, skeleton: Skeleton, size: float, head: str | None = None) -> None:
        """Rebuild handles, floor and limits for ``skeleton``; ``size`` is its length scale (scene units);
        ``head``: the joint that carries the face (a look handle for it), or None."""
        self.skeleton = skeleton
        self.size = size
        self.joint_radius = 0.0095 * size
        for widget in self.handles.values():
            widget.Off()
            widget.SetInteractor(None)
        self.handles = {}
        self._handle_shown: dict[tuple[str, str], tuple[tuple[float, ...], tuple[float, float, float]]] = {}
        names = [("target", name) for name in display.movable_effectors(skeleton)]  # (the octopus's mantle: none)
        poles = display.pole_effectors(skeleton)  # (left and right pairs: one label above, one below)
        names += [("pole", name) for name in poles] + [("root", skeleton.names[skeleton.root])]
        names += [] if head is None else [("look", head)]
        for actor in self._labels.values():
            self.label_layer.RemoveActor(actor)
        self._labels = {n: label(display.pole_label(skeleton, n), POLE, k % 2 == 1) for k, n in enumerate(poles)}
        for kind, name in names:
            self.handles[kind, name] = self._make_handle(kind, name)
        for actor in self._labels.values():
            self.label_layer.AddActor(actor)
        self.set_show_poles(self.show_poles)
        self._build_skeleton_geometry(skeleton)
        self._build_floor(skeleton)
        self._build_limits(skeleton.rest_positions, skeleton.rest_frames)
        self.reset_camera()

    def handle_px(self, kind: str) -> float:
        """A handle's size of ``kind`` in render-window pixels."""
        return (HANDLE_PX if kind != "pole" else 0.8 * HANDLE_PX) * self.pixel_scale

    def set_pixel_scale(self, scale: float) -> None:
        """Render pixels per page pixel (below 1 while a drag renders small images): the handles and the
        pole labels keep their size on the page whatever the size of the image rendered."""
        if scale > 0 and abs(scale - self.pixel_scale) > 1e-3:
            self.pixel_scale = scale
            for (kind, _), widget in self.handles.items():
                widget.GetRepresentation().SetHandleSize(self.handle_px(kind))
            for actor in self._labels.values():
                scale_label(actor, scale)

    def _build_skeleton_geometry(self, sk: Skeleton) -> None:
        """Bones (a tapered tube per bone) and joints (a sphere each): topology, radii and colours, set once."""
        bones = np.array([j for j in range(len(sk)) if sk.parents[j] >= 0], dtype=int)
        self._bone_parents, self._bone_children = sk.parents[bones], bones
        thick = np.minimum(0.16 * sk.bone_lengths[bones], 0.85 * self.joint_radius)
        radius = np.empty(2 * len(bones))
        radius[0::2], radius[1::2] = thick, 0.45 * thick
        self._bone_xyz = np.zeros((2 * len(bones), 3))
        set_lines(self._bones, self._bone_xyz, np.arange(2 * len(bones)).reshape(-1, 2), radius, share=True)
        leaf = np.array([not sk.children(j) for j in range(len(sk))])
        colors = np.tile(np.array(JOINT) * 255, (len(sk), 1))
        colors[leaf & ~(riders := np.isin(sk.names, sk.riders))] = np.array(EFFECTOR) * 255  # (not fingertips)
        colors[sk.root] = np.array(ROOT) * 255
        joint_radius = np.full(len(sk), self.joint_radius) * np.where(leaf, 0.8, 1.0)
        joint_radius[riders] = np.minimum(joint_radius[riders], 0.22 * sk.bone_lengths[riders])  # (fingers: small)
        self._joint_xyz = np.array(sk.rest_positions, dtype=float)
        set_points(self._joints, self._joint_xyz, joint_radius, colors.astype(np.uint8))

    def _make_handle(self, kind: str, name: str) -> vtkHandleWidget:
        rep = vtkSphereHandleRepresentation()
        rep.SetHandleSize(self.handle_px(kind))  # constant size on screen
        finish(rep.GetProperty(), specular=0.5)
        finish(rep.GetSelectedProperty(), specular=0.5)
        rep.GetSelectedProperty().SetColor(1.0, 0.85, 0.3)
        widget = vtkHandleWidget()
        widget.SetInteractor(self.interactor)
        widget.SetRepresentation(rep)
        widget.EnableAxisConstraintOff()
        on_start, on_move, on_end = self._callbacks

        def report(callback: DragCallback) -> Callable[[Any, str], None]:
            def observe(_obj: Any, _event: str) -> None:
                self._handle_shown.pop((kind, name), None)  # the widget moved it: show_pose must place it
                callback(kind, name, np.array(rep.GetWorldPosition(), dtype=float))

            return observe

        widget.AddObserver("StartInteractionEvent", report(on_start))
        widget.AddObserver("InteractionEvent", report(on_move))
        widget.AddObserver("EndInteractionEvent", report(on_end))
        widget.On()
        return widget

    def _build_floor(self, skeleton: Skeleton) -> None:
        for actor in self.floor_actors:
            self.renderer.RemoveActor(actor)
        grid = floor_grid(skeleton.rest_positions, self.size)
        self.floor_actors = [grid]
        for actor in self.floor_actors:
            self.renderer.AddActor(actor)

    def reset_camera(self, view: str = "perspective", points: np.ndarray | None = None) -> None:
        """Frame ``points`` (``(m, 3)``: the pose, its targets, a mesh; default the rest pose) and its
        reach: ``"perspective"`` from the front, a little from the right and above; ``"front"``,
        ``"side"`` (from the left) or ``"top"`` along an axis, in parallel projection (``VIEWS``)."""
        assert self.skeleton is not None
        frame_camera(self.renderer, self.skeleton.rest_positions if points is None else points, self.size, view)

    # -- per frame ----------------------------------------------------------------------------
    def show_pose(
        self,
        positions: np.ndarray,
        rotations: np.ndarray,
        targets: Mapping[str, np.ndarray],
        root_target: np.ndarray | None,
        unreachable: Sequence[str],
        moving: tuple[str, str] | None = None,
        poles: Mapping[str, np.ndarray] | None = None,
        pole_homes: Mapping[str, np.ndarray] | None = None,
        look: tuple[np.ndarray, bool] | None = None,
    ) -> None:
        """Update the actors and handles to a pose.

        Args:
            positions: ``(n, 3)`` joint positions.
            rotations: ``(n, 4)`` world frames (for the limits display).
            targets: effector name -> ``(3,)`` target; other effectors are free.
            root_target: ``(3,)`` or ``None``.
            unreachable: targeted effectors that are out of reach (warning colour).
            moving: ``(kind, name)`` of the handle being dragged (left where the mouse put it).
            poles: effector name -> ``(3,)`` pole point of its chain.
            pole_homes: effector name -> ``(3,)`` where a pole handle without a pole sits.
            look: ``((3,) point, looking)``: the look handle's place, whether the head looks at it.
        """
        sk = self.skeleton
        assert sk is not None
        positions = np.asarray(positions, dtype=float)
        self._bone_xyz[0::2] = positions[self._bone_parents]  # the arrays VTK reads: update in place
        self._bone_xyz[1::2] = positions[self._bone_children]
        self._joint_xyz[:] = positions
        for poly in (self._bones, self._joints):
            poly.GetPoints().Modified()
            poly.Modified()

        bad = set(unreachable)
        gaps = [(positions[sk.index(n)], targets[n]) for n in bad if n in targets]
        gap_points = np.array([p for pair in gaps for p in pair]).reshape(-1, 3)
        set_lines(self._gaps, gap_points, np.arange(len(gap_points)).reshape(-1, 2), None)

        poles, pole_homes = poles or {}, pole_homes or {}
        for (kind, name), widget in self.handles.items():
            rep = widget.GetRepresentation()
            if kind == "pole":
                if name in poles:
                    point, color = poles[name], POLE
                elif name in pole_homes:
                    point, color = pole_homes[name], FREE_POLE
                else:
                    continue
                self._labels[name].SetPosition(*point)
            elif kind == "root":
                point = positions[sk.root] if root_target is None else root_target
                color = ROOT
            elif kind != "target":  # (the look handle; a prop's are placed by fabrik3d_web.drags.prop_handles)
                if kind != "look" or look is None:
                    continue
                point, color = look[0], LOOK if look[1] else FREE_LOOK
            elif name in targets:
                point = targets[name]
                color = UNREACHABLE if name in bad else TARGET
            else:
                point = positions[sk.index(name)]
                color = FREE
            if (kind, name) == moving:  # the widget put it under the mouse
                self._handle_shown.pop((kind, name), None)
                rep.GetProperty().SetColor(*color)
                continue
            shown = (tuple(float(v) for v in point), color)
            if self._handle_shown.get((kind, name)) == shown:
                continue  # unchanged: no rebuild of the handle's geometry
            self._handle_shown[kind, name] = shown
            rep.SetWorldPosition(list(shown[0]))
            rep.GetProperty().SetColor(*color)
        if self.show_limits:
            self._build_limits(positions, rotations)

    def set_show_limits(
        self, show: bool, positions: np.ndarray, rotations: np.ndarray, joints: Sequence[str] = ()
    ) -> None:
        """Show or hide the joint limits at the given pose, of the named ``joints`` only (empty: all)."""
        self.show_limits = bool(show)
        self.limit_joints = frozenset(joints)
        self._build_limits(positions, rotations)

    def set_show_poles(self, show: bool) -> None:
        """Show or hide the pole handles."""
        self.show_poles = bool(show)
        for (kind, _), widget in self.handles.items():
            if kind == "pole":
                widget.SetEnabled(self.show_poles)
        for actor in self._labels.values():
            actor.SetVisibility(self.show_poles)

    def handle_display_position(self, kind: str, name: str) -> tuple[float, float, int, int]:
        """Handle's ``(x, y)`` in render-window pixels (origin bottom-left) and the window's ``(width, height)``."""
        rep = self.handles[kind, name].GetRepresentation()
        self.renderer.SetWorldPoint(*rep.GetWorldPosition(), 1.0)
        self.renderer.WorldToDisplay()
        x, y, _ = self.renderer.GetDisplayPoint()
        width, height = self.render_window.GetSize()
        return float(x), float(y), int(width), int(height)

    # -- joint limits -------------------------------------------------------------------------
    def _build_limits(self, positions: np.ndarray, rotations: np.ndarray) -> None:
        sk = self.skeleton
        show = self.show_limits and sk is not None and bool(sk.constraints)
        for actor in self._limit_actors:
            actor.SetVisibility(show)
        if not show:
            return
        cones, hinges = limit_fans(sk, positions, rotations, self.size, self.limit_joints)
        for poly, (points, triangles) in zip(self._limit_polys, (cones, hinges)):
            set_triangles(poly, points, triangles)
