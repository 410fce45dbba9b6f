"""Rotation rings (issue 51, item 1): Blender's rotate gizmo on the handle or joint the user works on.

Three rings about the world's X, Y and Z axes (red, green, blue) and a larger white ring facing the
viewer (the view ring) are drawn around a point: the target or root handle grabbed or clicked last, or
the joint chosen with Alt. They keep their size on the screen (``RING_PX``, ``VIEW_RING_PX`` render
pixels at a pixel scale of 1) and follow the point and the camera at every render. ``Rings.pick``
tells which ring passes nearest a pixel, and how near: a press within ``PICK_PX`` of a ring grabs it
(``fabrik3d_web.drags.ring_turn``), one within ``CATCH_PX`` is kept from the camera (a near miss does not
orbit the view).

Points are world (scene) coordinates, ``(3,)`` arrays; pixels are the render window's, origin bottom-left.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

from .vtk_parts import toward_viewer

# The rings' radii on the screen (render pixels at a pixel scale of 1).
RING_PX = 46.0
VIEW_RING_PX = 56.0
# A press this near a ring (pixels) grabs it; this near, it is kept from the camera all the same.
PICK_PX = 8.0
CATCH_PX = 16.0
# Points on each ring.
SEGMENTS = 96
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
COLOURS = {"x": (0.95, 0.40, 0.42), "y": (0.40, 0.80, 0.27), "z": (0.27, 0.52, 0.96), "view": (0.45, 0.45, 0.50)}
# (X a lighter red than the falling centre of mass's: one red means one thing in the view.)
# Within this share of ``RING_PX`` of the centre a press is the handle's (its drag), not a ring's: a ring
# seen edge-on is a line through the handle.
INNER = 0.5


def ring_points(centre: np.ndarray, axis: np.ndarray, radius: float, segments: int = SEGMENTS) -> np.ndarray:
    """``(segments, 3)`` points on the circle of ``radius`` about the unit ``axis`` through ``centre``."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(a, helper)
    u /= np.linalg.norm(u)
    v = np.cross(a, u)
    t = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
    return np.asarray(centre, dtype=float) + radius * (np.cos(t)[:, None] * u + np.sin(t)[:, None] * v)


def _loop(count: int) -> vtkCellArray:
    """One closed line through ``count`` points (the same for every ring: made once)."""
    lines = vtkCellArray()
    lines.InsertNextCell(count + 1)
    for k in [*range(count), 0]:
        lines.InsertCellPoint(k)
    return lines


def _set_points(poly: vtkPolyData, points: np.ndarray) -> None:
    """``poly``'s points: ``points`` ``(n, 3)``, copied in one call (a ring moves at every render)."""
    poly.GetPoints().SetData(numpy_to_vtk(np.ascontiguousarray(points, dtype=float), deep=True))
    poly.Modified()


class Rings:
    """The rings of one point in ``renderer`` (see the module docstring); hidden until ``show``."""

    def __init__(self, renderer: Any, pixel_scale: Any = lambda: 1.0) -> None:
        self.renderer = renderer
        self.owner: tuple[str, str] | None = None  # ((kind, name): "target", "root" or "joint")
        self.centre = np.zeros(3)
        self.pixel_scale = pixel_scale  # (render pixels per page pixel, now: ``SceneView.pixel_scale``)
        self.polys: dict[str, vtkPolyData] = {}
        self.actors: dict[str, vtkActor] = {}
        self.points: dict[str, np.ndarray] = {}
        for name, colour in COLOURS.items():
            poly = vtkPolyData()
            poly.SetPoints(vtkPoints())
            poly.SetLines(_loop(SEGMENTS))
            mapper = vtkPolyDataMapper()
            mapper.SetInputData(poly)
            actor = vtkActor()
            actor.SetMapper(mapper)
            prop = actor.GetProperty()
            prop.SetColor(*colour)
            prop.SetLineWidth(3.0 if name != "view" else 2.0)
            prop.SetLighting(False)
            actor.PickableOff()
            actor.SetVisibility(False)
            renderer.AddActor(actor)
            self.polys[name], self.actors[name] = poly, actor
        renderer.AddObserver("StartEvent", lambda *_: self.layout())

    @property
    def shown(self) -> bool:
        return self.owner is not None

    def show(self, owner: tuple[str, str], centre: Any) -> None:
        """Rings around ``centre`` for ``owner`` (``(kind, name)``)."""
        self.owner = owner
        self.centre = np.array(centre, dtype=float)
        for actor in self.actors.values():
            actor.SetVisibility(True)
        self.layout()

    def move(self, centre: Any) -> None:
        """The rings' point moved (the handle or joint followed the pose); they are laid out there at the next
        render (every render lays them out for its camera) or pick."""
        if self.owner is not None:
            self.centre = np.array(centre, dtype=float)

    def hide(self) -> None:
        self.owner = None
        for actor in self.actors.values():
            actor.SetVisibility(False)

    def toward_viewer(self) -> np.ndarray:
        """``(3,)`` the unit line of sight toward the viewer (either projection)."""
        return toward_viewer(self.renderer.GetActiveCamera())

    def axis(self, ring: str) -> np.ndarray:
        """``(3,)`` the unit axis of ``ring`` (``"x"``, ``"y"``, ``"z"`` or ``"view"``: toward the viewer)."""
        return self.toward_viewer() if ring == "view" else np.array(AXES[ring])

    def world_per_pixel(self) -> float:
        """Scene units per render pixel at the rings' point (its depth in the view)."""
        ren = self.renderer
        ren.SetWorldPoint(*self.centre, 1.0)
        ren.WorldToDisplay()
        x, y, z = ren.GetDisplayPoint()
        ren.SetDisplayPoint(x + 100.0, y, z)
        ren.DisplayToWorld()
        w = np.array(ren.GetWorldPoint(), dtype=float)
        far = w[:3] / w[3] if w[3] else w[:3]
        return float(np.linalg.norm(far - self.centre)) / 100.0

    def layout(self) -> None:
        """Place the rings for the camera as it is (at every render)."""
        if self.owner is None:
            return
        unit = self.world_per_pixel() * float(self.pixel_scale())
        if not math.isfinite(unit) or unit <= 0.0:
            return
        for name, poly in self.polys.items():
            radius = (VIEW_RING_PX if name == "view" else RING_PX) * unit
            self.points[name] = ring_points(self.centre, self.axis(name), radius)
            _set_points(poly, self.points[name])

    def display(self, points: np.ndarray) -> np.ndarray:
        """``(n, 2)`` render pixels of world ``points`` ``(n, 3)``."""
        ren, out = self.renderer, np.empty((len(points), 2))
        for k, p in enumerate(points):
            ren.SetWorldPoint(*p, 1.0)
            ren.WorldToDisplay()
            out[k] = ren.GetDisplayPoint()[:2]
        return out

    def pick(self, x: float, y: float) -> tuple[str | None, float]:
        """The ring passing nearest render pixel ``(x, y)`` and how near (pixels, along its drawn line);
        ``(None, inf)`` without rings, or within ``INNER`` of the rings' radius from their centre."""
        if self.owner is None:
            return None, math.inf
        self.layout()
        best, found = math.inf, None
        here = np.array([x, y], dtype=float)
        centre = self.display(self.centre[None, :])[0]
        if np.linalg.norm(here - centre) < INNER * RING_PX * float(self.pixel_scale()):
            return None, math.inf  # (on the handle: its own drag)
        for name, points in self.points.items():
            screen = self.display(points)
            a, b = screen, np.roll(screen, -1, axis=0)
            ab = b - a
            t = np.clip(np.einsum("ij,ij->i", here - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-12), 0, 1)
            d = float(np.min(np.linalg.norm(a + t[:, None] * ab - here, axis=1)))
            if d < best:
                best, found = d, name
        return found, best
