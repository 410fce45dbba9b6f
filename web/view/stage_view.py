"""The rest of the stage in the 3D view (issue 52): the figures other than the selected one, drawn plainly
(their bones as tubes in their tint, no handles), and the props, with their shapes and colours (a mesh prop's
uploaded file's triangles, ``Document.mesh_files``; its box while the file is not uploaded).

The view's coordinates are the selected figure's own (``fabrik3d_web.document.document``: its handles, rings and
readouts stay in its coordinates), so everything here is drawn through ``inverse(selected placement)``;
``carry_camera`` moves the camera with it when the selection or a placement changes, so that the picture
does not jump; ``pick`` finds the other figure a click falls on. Shapes: positions ``(n, 3)`` metres.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkCommonMath import vtkMatrix4x4
from vtkmodules.vtkFiltersCore import vtkPolyDataNormals, vtkTubeFilter
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

from fabrik3d import rotations as rot
from fabrik3d.io.prop_file import mesh_of
from fabrik3d.model.placement import Placement, Transform
from fabrik3d.model.props import Prop, prop_mesh

from .vtk_parts import finish, lit_actor, set_lines, set_triangles


class _Figure:
    """One other figure's tubes: its skeleton (their topology) and the shared bone end points."""

    def __init__(self, renderer: Any, skeleton: Any) -> None:
        self.skeleton = skeleton
        bones = np.array([j for j in range(len(skeleton)) if skeleton.parents[j] >= 0], dtype=int)
        self.parents, self.children = skeleton.parents[bones], bones
        thick = np.clip(0.16 * skeleton.bone_lengths[bones], 0.004, 0.03)
        self.xyz = np.zeros((2 * len(bones), 3))
        self.poly = vtkPolyData()
        set_lines(self.poly, self.xyz, np.arange(2 * len(bones)).reshape(-1, 2), np.repeat(thick, 2), share=True)
        tube = vtkTubeFilter()
        tube.SetInputData(self.poly)
        tube.SetVaryRadiusToVaryRadiusByAbsoluteScalar()
        tube.SetNumberOfSides(10)
        tube.CappingOn()
        self.actor = lit_actor(tube, (0.8, 0.8, 0.8), specular=0.15)
        self.actor.GetMapper().ScalarVisibilityOff()
        self.actor.PickableOff()
        renderer.AddActor(self.actor)

    def show(self, positions: np.ndarray, tint: Any) -> None:
        """The bones at ``positions`` ``(n, 3)`` (view coordinates), in ``tint``."""
        self.xyz[0::2] = positions[self.parents]
        self.xyz[1::2] = positions[self.children]
        self.poly.GetPoints().Modified()
        self.poly.Modified()
        self.actor.GetProperty().SetColor(*(float(x) for x in tint))


class StageView:
    """Draws the document's other figures and its props into ``renderer`` (module docstring)."""

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer
        self._figures: dict[str, _Figure] = {}
        self._props: dict[str, tuple[Prop, vtkActor, Any]] = {}  # (a mesh prop's file too: ``mesh_of``)
        # What each figure and prop was last drawn from (compared by identity: a drag of one figure leaves
        # the others' tubes and the props as they are, and VTK does not rebuild them every frame).
        self._drawn: dict[str, tuple[Any, ...]] = {}

    @property
    def actors(self) -> list[Any]:
        return [*self.figure_actors.values(), *self.prop_actors]

    @property
    def figure_actors(self) -> dict[str, Any]:
        """The other figures' tubes, by figure name."""
        return {name: f.actor for name, f in self._figures.items()}

    @property
    def prop_actors(self) -> list[Any]:
        return [entry[1] for entry in self._props.values()]

    def show(self, document: Any) -> None:
        """Draw every figure but the selected one (unless hidden) and every prop where it is now."""
        view = document.slot.placement
        seen = set()
        for s in document.slots:
            if s.name == document.selected or s.hidden:
                continue
            figure = self._figures.get(s.name)
            if figure is None or figure.skeleton is not s.controller.scene.skeleton:
                self._drop_figure(s.name)
                figure = self._figures[s.name] = _Figure(self.renderer, s.controller.scene.skeleton)
            key = (figure, s.controller.result, s.placement, view, s.tint)
            if not _same(self._drawn.get(f"figure:{s.name}"), key):
                figure.show(document.in_view(s)[0], s.tint)
                self._drawn[f"figure:{s.name}"] = key
            seen.add(s.name)
        for name in [n for n in self._figures if n not in seen]:
            self._drop_figure(name)
        into_view = view.transform.inverse()
        kept = set()
        for p in document.props:
            entry, mesh = self._props.get(p.name), mesh_of(p, document.mesh_files)
            if entry is None or (entry[0].shape, entry[0].size.tolist(), entry[2]) != (p.shape, p.size.tolist(), mesh):
                self._drop_prop(p.name)
                entry = self._props[p.name] = (p, _prop_actor(self.renderer, p, mesh), mesh)
            actor = entry[1]
            holder = None if p.parent is None else document.find(p.parent.figure)
            key = (actor, p, view, holder and holder.placement, holder and holder.controller.result)
            if not _same(self._drawn.get(f"prop:{p.name}"), key):
                actor.GetProperty().SetColor(*(float(x) for x in p.colour))
                actor.SetUserMatrix(transform_matrix(into_view.then(document.prop_world(p))))
                self._drawn[f"prop:{p.name}"] = key
            kept.add(p.name)
        for name in [n for n in self._props if n not in kept]:
            self._drop_prop(name)

    def pick(self, x: float, y: float, project: Callable[[np.ndarray], Any], px: float = 10.0) -> str | None:
        """The other figure whose bones pass nearest render pixel ``(x, y)`` within ``px`` pixels, or None
        (``project``: a view point ``(3,)`` to its pixel ``(x, y)``)."""
        best, name = px, None
        here = np.array([x, y], float)
        for figure_name, figure in self._figures.items():
            points = np.array([project(p)[:2] for p in figure.xyz], float)
            a, b = points[0::2], points[1::2]
            ab = b - a
            t = np.clip(np.einsum("ij,ij->i", here - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-12), 0, 1)
            d = float(np.linalg.norm(a + t[:, None] * ab - here, axis=1).min())
            if d < best:
                best, name = d, figure_name
        return name

    def _drop_figure(self, name: str) -> None:
        figure = self._figures.pop(name, None)
        if figure is not None:
            self.renderer.RemoveActor(figure.actor)

    def _drop_prop(self, name: str) -> None:
        entry = self._props.pop(name, None)
        if entry is not None:
            self.renderer.RemoveActor(entry[1])


def _same(a: tuple[Any, ...] | None, b: tuple[Any, ...]) -> bool:
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _prop_actor(renderer: Any, prop: Prop, mesh: Any) -> vtkActor:
    """A prop's actor: its shape, or a mesh prop's file's triangles (``mesh``; None: its box)."""
    vertices, _, triangles = prop_mesh(prop, surface=mesh)
    poly = vtkPolyData()
    set_triangles(poly, vertices, triangles)
    normals = vtkPolyDataNormals()
    normals.SetInputData(poly)
    normals.SetFeatureAngle(40.0)
    mapper = vtkPolyDataMapper()
    mapper.SetInputConnection(normals.GetOutputPort())
    actor = vtkActor()
    actor.SetMapper(mapper)
    finish(actor.GetProperty(), 0.2)
    actor.PickableOff()
    renderer.AddActor(actor)
    return actor


def transform_matrix(t: Transform) -> vtkMatrix4x4:
    """A ``Transform`` (with its scale) as VTK's 4x4 matrix."""
    m = np.eye(4)
    m[:3, :3] = rot.quat_to_matrix(t.rotation) * t.scale
    m[:3, 3] = t.position
    out = vtkMatrix4x4()
    for i in range(4):
        for j in range(4):
            out.SetElement(i, j, float(m[i, j]))
    return out


def carry_camera(camera: Any, before: Placement, after: Placement) -> None:
    """Move ``camera`` so that the world looks the same after the view's frame went from the placement
    ``before`` to ``after`` (a new figure selected, or the selected one placed elsewhere)."""
    move = after.transform.inverse().then(before.transform)
    position, focal = (move.apply(np.array(v, float)) for v in (camera.GetPosition(), camera.GetFocalPoint()))
    up = move.apply(np.array(camera.GetViewUp(), float)) - move.apply(np.zeros(3))
    camera.SetPosition(*position)
    camera.SetFocalPoint(*focal)
    camera.SetViewUp(*up)
