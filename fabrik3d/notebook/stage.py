"""A stage in the notebook (issue 52): every figure and every prop of a ``fabrik3d.stage.Stage`` in one
pythreejs view.

``StageView(stage)`` solves the stage (``solve_stage``: contacts kept) and draws each figure's bones as
tubes in its tint (a mesh named ``fabrik3d.figure.<name>``, in the stage's world) and each prop as its
shape (``fabrik3d.prop.<name>``, with the prop's world position, rotation and scale; a mesh prop's file's
triangles, found through ``Stage.mesh_files``: ``fabrik3d.io.prop_file.prop_surface``), over a ground
grid; orbit with the mouse. ``show(pose)`` draws another pose of the same stage in place (a frame of a
bake, a re-solve after an edit); ``solve(changed)`` re-solves the figures a change touches.
Positions in metres; hidden figures are not drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pythreejs as three
from ipywidgets import widgets

from fabrik3d.display import bone_pairs, bone_tubes, hex_colour, skeleton_size, tube_indices
from fabrik3d.io.prop_file import MeshFiles, prop_surface
from fabrik3d.io.stage import Stage
from fabrik3d.io.stage_pose import StagePose, solve_stage
from fabrik3d.model.props import Prop
from fabrik3d.notebook.body import _f32


class StageView(widgets.VBox):
    """Every figure and prop of ``stage`` (the module docstring).

    Args:
        stage: the stage.
        pose: its pose (default: solved here, ``solve_stage``).
        width, height: the view's size in pixels.
    """

    def __init__(self, stage: Stage, pose: StagePose | None = None, width: int = 720, height: int = 480) -> None:
        if not isinstance(stage, Stage):
            raise ValueError(f"stage: expected a fabrik3d.stage.Stage, got {type(stage).__name__}")
        self.stage = stage
        self.pose = solve_stage(stage) if pose is None else pose
        self._pairs = {f.name: bone_pairs(f.scene.skeleton) for f in stage.figures}
        self._size = max(skeleton_size(f.scene.skeleton) for f in stage.figures)
        self.figure_meshes: dict[str, Any] = {}
        self.prop_meshes: dict[str, Any] = {}
        children: list[Any] = [three.AmbientLight(intensity=0.55)]
        for i, f in enumerate(stage.figures):
            if f.hidden:
                continue
            verts, normals = self._tubes(i)
            mesh = three.Mesh(
                geometry=three.BufferGeometry(
                    attributes={"position": three.BufferAttribute(array=_f32(verts)),
                                "normal": three.BufferAttribute(array=_f32(normals))},
                    index=three.BufferAttribute(array=tube_indices(len(self._pairs[f.name]))),
                ),
                material=three.MeshLambertMaterial(color=hex_colour(f.tint)),
                name=f"fabrik3d.figure.{f.name}",
                frustumCulled=False,
            )  # fmt: skip
            self.figure_meshes[f.name] = mesh
            children.append(mesh)
        for prop in stage.props:
            mesh = _prop_mesh(prop, stage.mesh_files)
            self.prop_meshes[prop.name] = mesh
            children.append(mesh)
        self._place_props()
        ground = min(float(self.pose.world(i)[0][:, 1].min()) for i in range(len(stage.figures)))
        everything = np.vstack([self.pose.world(i)[0] for i in range(len(stage.figures))])
        center = (everything.min(axis=0) + everything.max(axis=0)) / 2
        ext = float(np.ptp(everything, axis=0).max()) + self._size
        grid = three.GridHelper(size=3 * ext, divisions=30, colorCenterLine="#b4bccc", colorGrid="#c8cfdb")
        grid.position = (float(center[0]), ground, float(center[2]))
        children.append(grid)
        eye = center + ext * np.array([0.8, 0.5, 1.4])
        camera = three.PerspectiveCamera(
            position=tuple(float(x) for x in eye), fov=40, aspect=width / height, near=0.01 * ext, far=100 * ext,
            children=[three.DirectionalLight(color="white", intensity=0.6, position=(1.0, 2.0, 1.0))],
        )  # fmt: skip
        self.renderer = three.Renderer(
            camera=camera,
            scene=three.Scene(children=[*children, camera], background="#eef2f8"),
            controls=[three.OrbitControls(controlling=camera, target=tuple(float(x) for x in center))],
            width=width,
            height=height,
            antialias=True,
        )
        super().__init__([self.renderer])

    def show(self, pose: StagePose) -> None:
        """Draw ``pose`` (of this stage) in place."""
        if not isinstance(pose, StagePose) or len(pose.poses) != len(self.stage.figures):
            raise ValueError("pose: expected a StagePose of this stage (one pose per figure)")
        self.pose = pose
        for i, f in enumerate(self.stage.figures):
            mesh = self.figure_meshes.get(f.name)
            if mesh is not None:
                verts, normals = self._tubes(i)
                mesh.geometry.attributes["position"].array = _f32(verts)
                mesh.geometry.attributes["normal"].array = _f32(normals)
        self._place_props()

    def solve(self, changed: Sequence[str] | None = None) -> StagePose:
        """Re-solve the figures ``changed`` touches (default all) from the pose shown, and show it."""
        self.show(solve_stage(self.stage, self.pose.poses, changed))
        return self.pose

    def _tubes(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        f = self.stage.figures[i]
        return bone_tubes(self.pose.world(i)[0], self._pairs[f.name], 0.012 * self._size)

    def _place_props(self) -> None:
        for prop in self.stage.props:
            t = self.pose.prop_transform(prop)
            mesh = self.prop_meshes[prop.name]
            mesh.position = tuple(float(x) for x in t.position)
            mesh.quaternion = tuple(float(x) for x in t.rotation)
            mesh.scale = (t.scale,) * 3


def _prop_mesh(prop: Prop, files: MeshFiles) -> Any:
    vertices, normals, triangles = prop_surface(prop, files)
    return three.Mesh(
        geometry=three.BufferGeometry(
            attributes={"position": three.BufferAttribute(array=_f32(vertices)),
                        "normal": three.BufferAttribute(array=_f32(normals))},
            index=three.BufferAttribute(array=triangles.reshape(-1).astype(np.uint32)),
        ),
        material=three.MeshLambertMaterial(color=hex_colour(prop.colour)),
        name=f"fabrik3d.prop.{prop.name}",
    )  # fmt: skip
