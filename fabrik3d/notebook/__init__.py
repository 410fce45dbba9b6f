"""Pose a skeleton inside Jupyter: a pythreejs view with per-target controls.

``SkeletonView(skeleton_or_scene)`` is an ipywidget: a pythreejs renderer with orbit controls showing
the joints, the bones (as lines and as pickable tubes), the targets and, when the skeleton has them,
its joint limits (cone and elliptical-cone rims, hinge arcs), and for a body on feet the mannequin and
the centre of mass (``fabrik3d.notebook.body``). Beside it, one row per end effector: a checkbox that
turns its target on or off and x, y, z number boxes; a menu chooses which target a double-click on the
ground or the body places. Every change re-solves with ``fabrik3d.solve``, warm-started from the
previous pose, and updates the geometry in place (buffer arrays and object positions; the three.js
scene is never rebuilt); ``control_images`` renders the pose's pictures for image generators
(``fabrik3d.notebook.pictures``). Bad input from the controls shows a message in the view and leaves
the pose as it was; the Python API raises ``ValueError``.

Needs the ``notebook`` extra: ``pip install 'fabrik3d[notebook]'`` (the one part of the package
that imports pythreejs and ipywidgets).
"""

from __future__ import annotations

import dataclasses
import html
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

try:
    import ipywidgets as widgets
    import pythreejs as three
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "fabrik3d.notebook needs pythreejs and ipywidgets; install them with: pip install 'fabrik3d[notebook]'"
    ) from exc

from fabrik3d.display import bone_pairs, bone_tubes, limit_outlines, tube_indices
from fabrik3d.io.bake import bake
from fabrik3d.io.scene import Scene
from fabrik3d.model import targets
from fabrik3d.model.keys import Animation
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.notebook.body import Body, _f32
from fabrik3d.notebook.hands import Hands
from fabrik3d.notebook.pictures import Pictures
from fabrik3d.notebook.turning import Turns
from fabrik3d.solver.tree import SolveResult

__all__ = ["SkeletonView", "bone_tubes", "limit_outlines", "timeline"]

COLORS = {
    "background": "#f7f7f9",
    "ground": "#e3e6ea",
    "grid": "#c3c8cf",
    "bone": "#2b3440",
    "body": "#8fb3de",
    "joint": "#17202b",
    "target": "#e4572e",
    "limit": "#e0a21b",
}


# -- the widget -----------------------------------------------------------------------------
class SkeletonView(Hands, Turns, Body, Pictures, widgets.HBox):
    """A pythreejs view of a skeleton with controls that set targets and re-solve.

    Args:
        skeleton_or_scene: a ``Skeleton`` (no targets) or a ``Scene`` (its targets,
            root target, weights and solver settings are used).
        targets: optional end-effector name -> ``(3,)`` point, scene units, added to
            (or replacing) the scene's targets.
        show_limits: draw the joint limits, if the skeleton has any.
        show_mannequin: the mannequin over the sticks: None (default) on a body on feet; True; False: none.
        width, height: size of the 3D view in pixels.

    Attributes:
        renderer: the ``pythreejs.Renderer`` (orbit controls and a double-click picker).
        picker: the ``pythreejs.Picker`` on the ground and the body.
        place_on_pick: ``Dropdown`` choosing the target a double-click places.
        checkboxes: effector name -> ``Checkbox`` (target on/off).
        boxes: effector name -> ``(x, y, z)`` ``FloatText`` boxes.

    Raises:
        ValueError: for a bad skeleton/scene or bad initial targets.
    """

    def __init__(
        self,
        skeleton_or_scene: Skeleton | Scene,
        targets: Mapping[str, Any] | None = None,
        *,
        show_limits: bool = True,
        show_mannequin: bool | None = None,
        width: int = 640,
        height: int = 480,
        **kwargs: Any,
    ) -> None:
        if isinstance(skeleton_or_scene, Scene):
            scene = skeleton_or_scene
        elif isinstance(skeleton_or_scene, Skeleton):
            scene = Scene(skeleton_or_scene)
        else:
            raise ValueError(f"SkeletonView: expected a Skeleton or a Scene, got {type(skeleton_or_scene).__name__}")
        self._scene = dataclasses.replace(scene, targets={**scene.targets, **dict(targets or {})})
        self.skeleton = scene.skeleton
        self._orientations: dict[str, np.ndarray] = {}
        self._look: np.ndarray | None = None
        self._look_head = "head"
        self._built: SolveResult | None = None
        self._result = self._solve(self._scene, None)
        self._syncing = False
        self._message = ""
        rest = self.skeleton.rest_positions
        low, high = rest.min(axis=0), rest.max(axis=0)
        self._extent = max(float(np.max(high - low)), 1e-3)
        self._pairs = bone_pairs(self.skeleton)
        self._show_limits, self._show_mannequin = show_limits, show_mannequin
        self._build_scene(low, high, width, height)
        self._build_controls()
        super().__init__(children=[self.renderer, self._panel], **kwargs)
        self._show_result()

    # -- Python API ---------------------------------------------------------------------------
    @property
    def targets(self) -> dict[str, np.ndarray]:
        """Current targets: end-effector name -> ``(3,)`` point (copies), scene units."""
        return {k: v.copy() for k, v in self._scene.targets.items()}

    @property
    def pose(self) -> np.ndarray:
        """``(n, 3)`` current joint positions (a copy), skeleton order, scene units."""
        return self._result.positions.copy()

    @property
    def result(self) -> SolveResult:
        """The last ``SolveResult``."""
        return self._result

    @property
    def scene(self) -> Scene:
        """A ``Scene`` with the current targets and solver settings (e.g. for ``fabrik3d.scene.save_scene``)."""
        return dataclasses.replace(self._scene, targets=self.targets)

    @property
    def message(self) -> str:
        """The message shown in the view: the last bad input from the controls, or ``""``."""
        return self._message

    def set_target(self, name: str, point: Any) -> None:
        """Move (or add) the target of end effector ``name`` to ``point`` ((3,), scene units) and re-solve.

        Raises:
            ValueError: for a name that is not an end effector or a point that is
                not three finite numbers; the pose and targets stay as they were.
        """
        self._check_name(name)
        self._update_targets({**self._scene.targets, name: point})

    def pin(self, name: str) -> None:
        """Pin end effector ``name`` where it is now (its target: its current position) and re-solve."""
        self._check_name(name)
        self._update_targets(targets.pin(self._scene.targets, self.skeleton, self._result.positions, name))

    def free(self, name: str) -> None:
        """Remove the target of end effector ``name`` (the effector becomes free) and re-solve."""
        self._check_name(name)
        self._update_targets(targets.free(self._scene.targets, name))

    def clear_target(self, name: str) -> None:
        """``free`` (the first version's name)."""
        self.free(name)

    def export_gltf(self, path: str | os.PathLike[str]) -> None:
        """Write the current pose as glTF (``.glb`` or ``.gltf``) with ``fabrik3d.gltf.export_pose``.

        Raises:
            ValueError: when the file cannot be written (nothing is left behind).
        """
        from fabrik3d.io.gltf import export_pose

        export_pose(self.skeleton, self._result, path)

    # -- solving --------------------------------------------------------------------------------
    def _check_name(self, name: Any) -> None:
        effectors = self.skeleton.end_effectors
        if not isinstance(name, str) or name not in effectors:
            raise ValueError(f"target {name!r}: not an end effector; valid names are {', '.join(effectors)}")

    def _solve(self, scene: Scene, start: SolveResult | None) -> SolveResult:
        result = self._turned_solve(scene, start)
        if not (np.all(np.isfinite(result.positions)) and np.all(np.isfinite(result.rotations))):
            raise ValueError("solve: the solver returned a non-finite pose; it was not applied")
        return result

    def _update_targets(self, targets: dict[str, Any]) -> None:
        scene = dataclasses.replace(self._scene, targets=targets)  # validates names and points
        result = self._solve(scene, self._result)
        self._scene, self._result = scene, result
        self._message = ""
        self._show_result()

    # -- what the user did ----------------------------------------------------------------------
    def _apply_from_controls(self, action: Callable[[], None]) -> None:
        try:
            action()
        except ValueError as exc:
            self._message = str(exc)
            self._show_result()

    def _on_box_edited(self, name: str) -> Callable[[Any], None]:
        def handler(change: Any) -> None:
            if not self._syncing:
                point = list(self._scene.targets.get(name, self._result.positions[self.skeleton.index(name)]))
                point[self.boxes[name].index(change["owner"])] = change["new"]
                self._apply_from_controls(lambda: self.set_target(name, point))

        return handler

    def _on_checkbox_toggled(self, name: str) -> Callable[[Any], None]:
        def handler(change: Any) -> None:
            if self._syncing:
                return
            self._apply_from_controls(lambda: (self.pin if change["new"] else self.free)(name))

        return handler

    def _on_ground_or_body_picked(self, change: Any) -> None:
        if self.picker.object is not None:
            point = list(self.picker.point)
            self._apply_from_controls(lambda: self.set_target(self.place_on_pick.value, point))

    # -- layout (built once) ---------------------------------------------------------------------
    def _build_scene(self, low: np.ndarray, high: np.ndarray, width: int, height: int) -> None:
        ext, pose = self._extent, self._result.positions
        center = (low + high) / 2.0
        self._joints_attr = three.BufferAttribute(array=_f32(pose))
        joints = three.Points(
            geometry=three.BufferGeometry(attributes={"position": self._joints_attr}),
            material=three.PointsMaterial(color=COLORS["joint"], size=7.0, sizeAttenuation=False),
            name="fabrik3d.joints",
            frustumCulled=False,
        )
        self._bones_attr = three.BufferAttribute(array=_f32(pose[self._pairs].reshape(-1, 3)))
        bones = three.LineSegments(
            geometry=three.BufferGeometry(attributes={"position": self._bones_attr}),
            material=three.LineBasicMaterial(color=COLORS["bone"]),
            name="fabrik3d.bones",
            frustumCulled=False,
        )
        # Two unused vertices keep three.js's bounding sphere (computed once, used to
        # cull picking rays) around every reachable pose: the root stays put and no
        # joint gets farther from it than the bone lengths along its path.
        path = np.zeros(len(self.skeleton))
        for j in self.skeleton.order:
            p = int(self.skeleton.parents[j])
            path[j] = path[p] + self.skeleton.bone_lengths[j] if p >= 0 else 0.0
        root, reach = pose[self.skeleton.root], float(path.max()) + ext
        self._sentinels = np.array([root - reach, root + reach])
        verts, normals = self._body_arrays(pose)
        self._body_pos = three.BufferAttribute(array=_f32(verts))
        self._body_nrm = three.BufferAttribute(array=_f32(normals))
        body = three.Mesh(
            geometry=three.BufferGeometry(
                attributes={"position": self._body_pos, "normal": self._body_nrm},
                index=three.BufferAttribute(array=tube_indices(len(self._pairs))),
            ),
            material=three.MeshLambertMaterial(color=COLORS["body"], transparent=True, opacity=0.75),
            name="fabrik3d.body",
            frustumCulled=False,
        )
        ground = three.Mesh(
            geometry=three.PlaneGeometry(width=4 * ext, height=4 * ext),
            material=three.MeshLambertMaterial(color=COLORS["ground"], side="DoubleSide"),
            name="fabrik3d.ground",
            position=(float(center[0]), float(low[1]), float(center[2])),
            rotation=(-math.pi / 2, 0.0, 0.0, "XYZ"),
        )
        grid = three.GridHelper(
            size=4 * ext, divisions=20, colorCenterLine=COLORS["grid"], colorGrid=COLORS["grid"], name="fabrik3d.grid"
        )
        grid.position = (float(center[0]), float(low[1]) + 1e-3 * ext, float(center[2]))
        marker_geometry = three.SphereGeometry(radius=0.018 * ext, widthSegments=16, heightSegments=12)
        marker_material = three.MeshLambertMaterial(color=COLORS["target"])
        self.markers = {
            name: three.Mesh(geometry=marker_geometry, material=marker_material, name=f"fabrik3d.target.{name}")
            for name in self.skeleton.end_effectors
        }
        children: list[Any] = [joints, bones, grid, three.AmbientLight(intensity=0.55), *self.markers.values()]
        children += self._body_parts(self._show_mannequin)
        self._limits_attr = None
        outlines = limit_outlines(self.skeleton, pose, self._result.rotations, 0.15 * ext)
        if self._show_limits and len(outlines):
            self._limits_attr = three.BufferAttribute(array=_f32(outlines))
            children.append(
                three.LineSegments(
                    geometry=three.BufferGeometry(attributes={"position": self._limits_attr}),
                    material=three.LineBasicMaterial(color=COLORS["limit"]),
                    name="fabrik3d.limits",
                    frustumCulled=False,
                )
            )
        pickable = three.Group(children=[ground, body], name="fabrik3d.pickable")
        eye = center + ext * np.array([0.9, 0.45, 1.6])
        camera = three.PerspectiveCamera(
            position=tuple(float(x) for x in eye),
            fov=40,
            aspect=width / height,
            near=0.01 * ext,
            far=100 * ext,
            children=[three.DirectionalLight(color="white", intensity=0.6, position=(1.0, 2.0, 1.0))],
        )
        self.picker = three.Picker(controlling=pickable, event="dblclick")
        self.picker.observe(self._on_ground_or_body_picked, names="point")
        self.renderer = three.Renderer(
            camera=camera,
            scene=three.Scene(children=[*children, pickable, camera], background=COLORS["background"]),
            controls=[three.OrbitControls(controlling=camera, target=tuple(float(x) for x in center)), self.picker],
            width=width,
            height=height,
            antialias=True,
        )

    def _body_arrays(self, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        verts, normals = bone_tubes(pose, self._pairs, 0.012 * self._extent)
        return np.vstack([verts, self._sentinels]), np.vstack([normals, [[0.0, 1.0, 0.0]] * 2])

    def _build_controls(self) -> None:
        names = self.skeleton.end_effectors
        box_layout = widgets.Layout(width="6.5em")
        self.checkboxes = {
            n: widgets.Checkbox(description=n, indent=False, layout=widgets.Layout(width="8em")) for n in names
        }
        self.boxes = {n: tuple(widgets.FloatText(step=0.01, layout=box_layout) for _ in "xyz") for n in names}
        for n in names:
            self.checkboxes[n].observe(self._on_checkbox_toggled(n), names="value")
            for box in self.boxes[n]:
                box.observe(self._on_box_edited(n), names="value")
        first = next(iter(self._scene.targets), names[0])
        self.place_on_pick = widgets.Dropdown(options=names, value=first, description="double-click places")
        self._status = widgets.HTML()
        self._message_html = widgets.HTML()
        header = widgets.HTML("<b>target</b> &nbsp; x, y, z (scene units)")
        rows = [widgets.HBox([self.checkboxes[n], *self.boxes[n]]) for n in names]
        self._panel = widgets.VBox([header, *rows, self.place_on_pick, self._status, self._message_html])

    # -- showing a result (in place) --------------------------------------------------------------
    def _show_result(self) -> None:
        pose, targets = self._result.positions, self._scene.targets
        self._joints_attr.array = _f32(pose)
        self._bones_attr.array = _f32(pose[self._pairs].reshape(-1, 3))
        verts, normals = self._body_arrays(pose)
        self._body_pos.array = _f32(verts)
        self._body_nrm.array = _f32(normals)
        if self._limits_attr is not None:
            self._limits_attr.array = _f32(
                limit_outlines(self.skeleton, pose, self._result.rotations, 0.15 * self._extent)
            )
        self._syncing = True
        try:
            for name, marker in self.markers.items():
                here = targets.get(name, pose[self.skeleton.index(name)])
                marker.position = tuple(float(x) for x in here)
                marker.visible = name in targets
                self.checkboxes[name].value = name in targets
                for box, value in zip(self.boxes[name], here):
                    box.value = float(value)
                    box.disabled = name not in targets
        finally:
            self._syncing = False
        r = self._result
        worst = max(r.errors.values(), default=0.0)
        state = "all targets reached" if r.converged else "not reached (out of reach or limited)"
        self._status.value = f"{r.iterations} iterations, largest error {worst:.4g}: {state}"
        self._message_html.value = (
            f'<span style="color:#b00020">{html.escape(self._message)}</span>' if self._message else ""
        )
        self._show_body()


def timeline(view: SkeletonView, animation: Animation | None = None) -> widgets.IntSlider:
    """A frame slider for ``view``: moving it shows the pose of ``animation`` (default: the view's
    scene's keys) baked at that frame, and its targets (``fabrik3d.animation.bake``, every frame of
    the range baked once, warm, with the scene's settings). ``ValueError`` without keys."""
    anim = view.scene.animation if animation is None else animation
    if not isinstance(anim, Animation) or not anim.keys:
        raise ValueError("timeline: expected an Animation with keys (or a view of a scene with keys)")
    s, solved = view.scene, []
    settings = {"weights": s.weights, "tolerance": s.tolerance, "max_iterations": s.max_iterations}
    bake(s.skeleton, anim, on_frame=lambda _, result: solved.append(result), **settings)  # type: ignore[arg-type]
    slider = widgets.IntSlider(value=anim.start, min=anim.start, max=anim.last, description="frame")

    def on_frame(change: Any) -> None:
        k, goals = change["new"] - anim.start, anim.goals_at(change["new"])
        view._scene = dataclasses.replace(view._scene, targets={n: t.position for n, t in goals.targets.items()})
        view._result = solved[k]
        view._show_result()

    slider.observe(on_frame, names="value")
    on_frame({"new": anim.start})
    return slider
