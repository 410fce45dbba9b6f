"""The other figures' bodies for a picture (issue 52: "Picture .png shows all of them").

The 3D view draws the figures other than the selected one plainly, as tubes (``fabrik3d_web.view.stage_view``):
four more skinned bodies would cost a drag frame 5-11 ms more to render on this machine's software renderer.
A picture is made on a worker thread, so it shows every figure with a body as the selected one is shown: a
character figure with its own skinned meshes and textures (``MeshView``'s actors), a figure whose skeleton has
a mannequin with the mannequin, skinned at its pose, in its tint, while the view shows the mannequin. The
actors are new (no renderer holds them) and placed in the view's coordinates (``inverse(selected placement)``
then the figure's placement, as a user matrix); the picture copies them at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper, vtkRenderer

from .mesh_view import MeshView
from .stage_view import transform_matrix
from .vtk_parts import finish


def figure_bodies(document: Any, mannequin: bool) -> dict[str, list[vtkActor]]:
    """The bodies of ``document``'s figures other than the selected one and not hidden, by figure name: a
    character's meshes, or (``mannequin``: the view shows the mannequin) the mannequin of a skeleton that has
    one. A figure with neither is left out (the picture shows its tubes)."""
    into_view = document.slot.placement.transform.inverse()
    out: dict[str, list[vtkActor]] = {}
    for s in document.slots:
        if s.name == document.selected or s.hidden:
            continue
        c = s.controller
        if c.character is not None:
            meshes = MeshView(vtkRenderer())  # (a renderer of its own: the view's is left as it is)
            meshes.set_character(c.character)
            meshes.show(c.skinned())
            actors = list(meshes.actors)
        elif mannequin and c.mannequin() is not None:
            actors = [_mannequin(c.mannequin().triangles, *c.mannequin_skinned(), s.tint)]
        else:
            continue
        matrix = transform_matrix(into_view.then(s.placement.transform))
        for actor in actors:
            actor.SetUserMatrix(matrix)
        out[s.name] = actors
    return out


def _mannequin(triangles: np.ndarray, positions: np.ndarray, normals: np.ndarray, tint: Any) -> vtkActor:
    """A mannequin's actor: ``positions``, ``normals`` ``(v, 3)`` (its figure's frame), ``triangles`` ``(t, 3)``."""
    poly = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(positions, dtype=np.float32), deep=True))
    poly.SetPoints(points)
    array = numpy_to_vtk(np.ascontiguousarray(normals, dtype=np.float32), deep=True)
    array.SetName("Normals")
    poly.GetPointData().SetNormals(array)
    tris = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    cells = vtkCellArray()
    offsets = np.arange(0, 3 * len(tris) + 1, 3, dtype=np.int64)
    cells.SetData(numpy_to_vtkIdTypeArray(offsets, deep=True), numpy_to_vtkIdTypeArray(tris.ravel(), deep=True))
    poly.SetPolys(cells)
    mapper = vtkPolyDataMapper()
    mapper.SetInputData(poly)
    actor = vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetColor(*(float(x) for x in tint))
    finish(actor.GetProperty(), 0.2)
    actor.PickableOff()
    return actor
