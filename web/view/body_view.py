"""The body in the VTK scene: the mannequin's mesh, the centre of mass and the support area.

``BodyView`` adds its actors to the scene's renderer (``fabrik3d_web.view.scene_view.SceneView``): the
mannequin (points and normals ``(v, 3)`` float32 updated in place every frame, as a character's
mesh, ``fabrik3d_web.view.mesh_view``), a marker at the centre of mass and its shadow on the ground, and the
support area drawn on the ground, green, the marker red when its shadow is outside the area.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkFiltersSources import vtkRegularPolygonSource, vtkSphereSource
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper, vtkRenderer

from .vtk_parts import UNREACHABLE, finish, lit_actor, set_lines, set_triangles, triangle_cells

WOOD = (0.86, 0.67, 0.46)  # the mannequin's colour (its glTF material's, as displayed)
BALANCED = (0.16, 0.62, 0.32)  # the centre of mass over the support area, and the area
FALLING = UNREACHABLE  # the centre of mass outside it
SHADOW = (0.25, 0.27, 0.32)
# Sizes as fractions of the skeleton's size; the ground drawings sit this far above the floor.
MARKER, SHADOW_RADIUS, LIFT = 0.018, 0.03, 0.0015


class BodyView:
    """The mannequin and the balance drawings in ``renderer`` (nothing shown until told)."""

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer
        # Drawn over the scene (the handles and the centre of mass inside the mannequin stay in sight):
        # a second layer with the same camera, not interactive (the camera's events go to ``renderer``).
        self.overlay = vtkRenderer()
        self.overlay.SetLayer(1)
        self.overlay.SetActiveCamera(renderer.GetActiveCamera())
        self.overlay.InteractiveOff()
        window = renderer.GetRenderWindow()
        window.SetNumberOfLayers(max(2, window.GetNumberOfLayers()))
        window.AddRenderer(self.overlay)
        self._poly = vtkPolyData()
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None
        mapper = vtkPolyDataMapper()
        mapper.SetInputData(self._poly)
        self.mannequin = vtkActor()
        self.mannequin.SetMapper(mapper)
        self.mannequin.GetProperty().SetColor(*WOOD)
        finish(self.mannequin.GetProperty(), 0.2)
        self.mannequin.PickableOff()
        self.mannequin.VisibilityOff()
        sphere = vtkSphereSource()
        sphere.SetThetaResolution(20)
        sphere.SetPhiResolution(14)
        self._sphere = sphere
        self.marker = lit_actor(sphere, BALANCED, specular=0.4)
        disc = vtkRegularPolygonSource()
        disc.SetNumberOfSides(32)
        disc.SetNormal(0.0, 1.0, 0.0)
        self._disc = disc
        self.shadow = lit_actor(disc, SHADOW, specular=0.0)
        self.shadow.GetProperty().SetOpacity(0.55)
        self.shadow.GetProperty().LightingOff()
        self._area, self._outline = vtkPolyData(), vtkPolyData()
        self.area = _actor(self._area, BALANCED, 0.25)
        self.outline = _actor(self._outline, BALANCED, 1.0)
        self.outline.GetProperty().SetLineWidth(2.0)
        self.balance_actors = (self.marker, self.shadow, self.area, self.outline)
        for actor in (self.mannequin, *self.balance_actors):
            actor.PickableOff()
            (self.overlay if actor is self.marker else self.renderer).AddActor(actor)
        self.show_balance(None)

    def on_top(self, widgets: Any) -> None:
        """Draw the handle ``widgets`` (``SceneView.handles``' values) over the scene, in the overlay
        (an enabled widget finds its renderer when turned on: each is turned off and on again)."""
        for widget in widgets:
            if widget.GetCurrentRenderer() is self.overlay:
                continue
            enabled = widget.GetEnabled()
            widget.SetEnabled(0)
            widget.SetCurrentRenderer(self.overlay)
            widget.SetEnabled(enabled)

    # -- the mannequin ---------------------------------------------------------------------------
    def set_mesh(self, positions: np.ndarray | None, normals: Any = None, triangles: Any = None) -> None:
        """A new mesh (rest ``positions`` and ``normals`` ``(v, 3)``, ``triangles`` ``(t, 3)``), or None:
        no mannequin."""
        if positions is None:
            self._arrays = None
            self.mannequin.VisibilityOff()
            return
        points = np.ascontiguousarray(positions, dtype=np.float32).copy()
        norms = np.ascontiguousarray(normals, dtype=np.float32).copy()
        self._arrays = (points, norms)
        pts = vtkPoints()
        pts.SetData(numpy_to_vtk(points, deep=False))
        self._poly.SetPoints(pts)
        array = numpy_to_vtk(norms, deep=False)
        array.SetName("Normals")
        self._poly.GetPointData().SetNormals(array)
        self._poly.SetPolys(triangle_cells(triangles))
        self._poly.Modified()

    @property
    def has_mesh(self) -> bool:
        return self._arrays is not None

    def show_mesh(self, visible: bool, positions: Any = None, normals: Any = None) -> None:
        """Show (moved to the skinned ``positions``, ``normals``, in place) or hide the mannequin."""
        visible = visible and self._arrays is not None
        self.mannequin.SetVisibility(visible)
        if not visible or positions is None or self._arrays is None:
            return
        points, norms = self._arrays
        points[...] = positions
        norms[...] = normals
        self._poly.GetPoints().Modified()
        self._poly.GetPointData().GetNormals().Modified()
        self._poly.Modified()

    # -- balance -----------------------------------------------------------------------------------
    def show_balance(self, balance: dict[str, Any] | None, size: float = 1.0) -> None:
        """Draw ``balance`` (``Body.balance_state``: ``com``, ``shadow``, ``support``, ``inside``) for a
        skeleton of ``size`` scene units, or hide the drawings (None)."""
        for actor in self.balance_actors:
            actor.SetVisibility(balance is not None)
        if balance is None:
            return
        color = BALANCED if balance["inside"] else FALLING
        self._sphere.SetRadius(MARKER * size)
        self.marker.SetPosition(*balance["com"])
        self.marker.GetProperty().SetColor(*color)
        self._disc.SetRadius(SHADOW_RADIUS * size)
        self.shadow.SetPosition(*(balance["shadow"] + (0.0, 2 * LIFT * size, 0.0)))
        self.shadow.GetProperty().SetColor(*(SHADOW if balance["inside"] else FALLING))
        support = np.asarray(balance["support"], dtype=float).reshape(-1, 2)
        y = float(balance["shadow"][1]) + LIFT * size
        ring = np.column_stack([support[:, 0], np.full(len(support), y), support[:, 1]])
        k = len(ring)
        fan = np.array([(0, i, i + 1) for i in range(1, k - 1)], dtype=np.int64).reshape(-1, 3)
        set_triangles(self._area, ring if k else np.zeros((0, 3)), fan)
        set_lines(self._outline, ring if k else np.zeros((0, 3)), np.array([(i, (i + 1) % k) for i in range(k)]), None)


def _actor(poly: vtkPolyData, color: tuple[float, float, float], opacity: float) -> vtkActor:
    mapper = vtkPolyDataMapper()
    mapper.SetInputData(poly)
    actor = vtkActor()
    actor.SetMapper(mapper)
    prop = actor.GetProperty()
    prop.SetColor(*color)
    prop.SetOpacity(opacity)
    prop.LightingOff()
    return actor


def place_grid(grid: Any, ground: float, size: float) -> None:
    """Move the floor grid's actor ``grid`` (``fabrik3d_web.view.vtk_parts.floor_grid``) to just below ``ground``."""
    low = grid.GetBounds()[2] - grid.GetPosition()[1]
    grid.SetPosition(0.0, ground - 0.5 * LIFT * size - low, 0.0)
