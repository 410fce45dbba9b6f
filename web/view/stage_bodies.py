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

from vtkmodules.vtkRenderingCore import vtkActor, vtkRenderer

from .mesh_view import MeshView
from .stage_view import transform_matrix
from .vtk_parts import body_actor


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
            actors = [body_actor(*c.mannequin_skinned(), c.mannequin().triangles, s.tint)]
        else:
            continue
        matrix = transform_matrix(into_view.then(s.placement.transform))
        for actor in actors:
            actor.SetUserMatrix(matrix)
        out[s.name] = actors
    return out
