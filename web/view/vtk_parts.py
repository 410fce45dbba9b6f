"""VTK building blocks of the scene view: the colour palette, lit actors, and poly data filled from
numpy arrays (points ``(m, 3)`` in scene units, cells as index arrays)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkFiltersSources import vtkPlaneSource
from vtkmodules.vtkInteractionStyle import vtkInteractorStyleTrackballCamera
from vtkmodules.vtkInteractionWidgets import vtkOrientationMarkerWidget
from vtkmodules.vtkRenderingAnnotation import vtkAxesActor
from vtkmodules.vtkRenderingCore import vtkActor, vtkBillboardTextActor3D, vtkPolyDataMapper

# Colours (RGB 0..1): a calm light theme a user would screenshot.
BONE = (0.86, 0.88, 0.92)
JOINT = (0.27, 0.35, 0.48)
EFFECTOR = (0.15, 0.55, 0.78)
TARGET = (0.98, 0.60, 0.13)
UNREACHABLE = (0.90, 0.22, 0.21)
FREE = (0.80, 0.84, 0.90)
ROOT = (0.36, 0.42, 0.85)
POLE = (0.62, 0.36, 0.86)
FREE_POLE = (0.82, 0.75, 0.93)
LOOK = (0.10, 0.70, 0.70)
FREE_LOOK = (0.70, 0.88, 0.88)
LIMIT_CONE = (0.30, 0.72, 0.55)
LIMIT_HINGE = (0.55, 0.38, 0.85)
SKY_TOP = (0.97, 0.98, 1.0)
SKY_BOTTOM = (0.78, 0.83, 0.90)
GRID = (0.70, 0.74, 0.80)


def lit_actor(source: Any, color: tuple[float, float, float], specular: float) -> vtkActor:
    mapper = vtkPolyDataMapper()
    mapper.SetInputConnection(source.GetOutputPort())
    actor = vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetColor(*color)
    finish(actor.GetProperty(), specular)
    return actor


def finish(prop: Any, specular: float) -> None:
    prop.SetInterpolationToPhong()
    prop.SetAmbient(0.15)
    prop.SetDiffuse(0.85)
    prop.SetSpecular(specular)
    prop.SetSpecularPower(30.0)


def nice_step(x: float) -> float:
    """The largest of 1, 2, 5 times a power of ten that is at most ``x``."""
    exp = 10.0 ** math.floor(math.log10(x))
    return max(m * exp for m in (1.0, 2.0, 5.0) if m * exp <= x)


def set_points(poly: vtkPolyData, points: np.ndarray, radius: np.ndarray, colors: np.ndarray) -> None:
    """Give ``poly`` the ``(m, 3)`` points (shared, C-contiguous float64), a "radius" scale array, uint8 colours."""
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(points, deep=False))  # shares ``points``: later in-place changes show
    poly.SetPoints(pts)
    r = numpy_to_vtk(np.ascontiguousarray(radius), deep=True)
    r.SetName("radius")
    c = numpy_to_vtk(np.ascontiguousarray(colors), deep=True)
    c.SetName("colors")
    poly.GetPointData().AddArray(r)
    poly.GetPointData().SetScalars(c)
    poly.Modified()


def set_triangles(poly: vtkPolyData, points: np.ndarray, triangles: np.ndarray) -> None:
    """Give ``poly`` the ``(m, 3)`` points and ``(k, 3)`` triangles."""
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(points, dtype=float).reshape(-1, 3), deep=True))
    poly.SetPoints(pts)
    poly.SetPolys(triangle_cells(triangles))
    poly.Modified()


def triangle_cells(triangles: Any) -> vtkCellArray:
    """The ``(k, 3)`` point indices ``triangles`` as VTK's cells (made in two array copies, not a cell at a time)."""
    tris = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    offsets = np.arange(0, 3 * len(tris) + 1, 3, dtype=np.int64)
    cells = vtkCellArray()
    cells.SetData(numpy_to_vtkIdTypeArray(offsets, deep=True), numpy_to_vtkIdTypeArray(tris.ravel(), deep=True))
    return cells


def body_actor(points: np.ndarray, normals: np.ndarray, triangles: np.ndarray, colour: Any) -> vtkActor:
    """A lit body (a mannequin's mesh) of ``points`` and ``normals`` ``(v, 3)`` and ``triangles`` ``(t, 3)`` in
    ``colour`` (RGB 0..1), copied: not pickable."""
    poly = vtkPolyData()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(points, dtype=np.float32), deep=True))
    poly.SetPoints(pts)
    array = numpy_to_vtk(np.ascontiguousarray(normals, dtype=np.float32), deep=True)
    array.SetName("Normals")
    poly.GetPointData().SetNormals(array)
    poly.SetPolys(triangle_cells(triangles))
    mapper = vtkPolyDataMapper()
    mapper.SetInputData(poly)
    actor = vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetColor(*(float(x) for x in colour))
    finish(actor.GetProperty(), 0.2)
    actor.PickableOff()
    return actor


def set_lines(
    poly: vtkPolyData, points: np.ndarray, segments: np.ndarray, radius: np.ndarray | None, share: bool = False
) -> None:
    """Give ``poly`` the ``(m, 3)`` points and ``(k, 2)`` line segments, with point scalars ``radius``.

    With ``share`` the points array is shared with VTK (C-contiguous float64): change it in place later.
    """
    pts = vtkPoints()
    pts.SetData(
        numpy_to_vtk(points if share else np.ascontiguousarray(points, dtype=float).reshape(-1, 3), deep=not share)
    )
    poly.SetPoints(pts)
    lines = vtkCellArray()
    for a, b in segments:
        lines.InsertNextCell(2)
        lines.InsertCellPoint(int(a))
        lines.InsertCellPoint(int(b))
    poly.SetLines(lines)
    if radius is not None:
        poly.GetPointData().SetScalars(numpy_to_vtk(np.ascontiguousarray(radius, dtype=float), deep=True))
    poly.Modified()


def floor_grid(rest: np.ndarray, size: float) -> vtkActor:
    """A wireframe ground grid under the rest pose ``rest`` ``(n, 3)``: square, centred under it, at
    least 1.2 × ``size`` (scene units) across, in cells of 1, 2 or 5 times a power of ten."""
    lo, hi = rest.min(axis=0), rest.max(axis=0)
    center = (lo + hi) / 2
    half = max(float(np.ptp(rest[:, [0, 2]], axis=0).max()), 0.6 * size)
    step = nice_step(half / 6)
    half = math.ceil(half / step) * step
    y = float(lo[1]) - 0.002 * size
    cx, cz = round(center[0] / step) * step, round(center[2] / step) * step
    cells = round(2 * half / step)
    floor = vtkPlaneSource()
    floor.SetOrigin(cx - half, y, cz - half)
    floor.SetPoint1(cx + half, y, cz - half)
    floor.SetPoint2(cx - half, y, cz + half)
    floor.SetResolution(cells, cells)
    grid = lit_actor(floor, GRID, specular=0.0)
    grid.GetProperty().SetRepresentationToWireframe()
    grid.GetProperty().LightingOff()  # lines only: a lit solid floor costs more than the skeleton in software
    return grid


# A label's font size and its offset above (or below) its point, in pixels of a still image.
LABEL_PX, LABEL_ABOVE, LABEL_BELOW = 14, 14, 30


def label(text: str, color: tuple[float, float, float], below: bool = False) -> vtkBillboardTextActor3D:
    """A small text label facing the camera, drawn just above (``below``: under) the world point set
    with ``SetPosition``."""
    actor = vtkBillboardTextActor3D()
    actor.SetInput(text)
    actor.SetDisplayOffset(0, -LABEL_BELOW if below else LABEL_ABOVE)
    prop = actor.GetTextProperty()
    prop.SetFontSize(LABEL_PX)
    prop.SetColor(*color)
    prop.SetJustificationToCentered()
    prop.SetBackgroundColor(1.0, 1.0, 1.0)
    prop.SetBackgroundOpacity(0.7)
    return actor


def scale_label(actor: vtkBillboardTextActor3D, scale: float) -> None:
    """Size ``label``'s text and offset for images of ``scale`` render pixels per page pixel (a drag's small
    image: the label keeps its size on the page instead of growing as the image is enlarged)."""
    below = actor.GetDisplayOffset()[1] < 0
    actor.GetTextProperty().SetFontSize(max(4, round(LABEL_PX * scale)))
    actor.SetDisplayOffset(0, -round(LABEL_BELOW * scale) if below else round(LABEL_ABOVE * scale))


def orientation_marker(interactor: Any) -> vtkOrientationMarkerWidget:
    """The axes in the view's bottom-left corner (X red, Y green, Z blue), not interactive."""
    axes = vtkAxesActor()
    axes.SetShaftTypeToCylinder()
    axes.SetTotalLength(1.0, 1.0, 1.0)
    marker = vtkOrientationMarkerWidget()
    marker.SetOrientationMarker(axes)
    marker.SetInteractor(interactor)
    marker.SetViewport(0.0, 0.0, 0.16, 0.2)
    marker.EnabledOn()
    marker.InteractiveOff()
    return marker


def camera_style(interactor: Any) -> vtkInteractorStyleTrackballCamera:
    """Give ``interactor`` VTK's trackball camera style, whose mouse wheel zooms toward the point under
    the cursor, which stays under it (VTK's own zooms toward the view's centre). The same steps as VTK's:
    1.1 to the power of the style's motion factor times 0.2 times its wheel factor (which trame-vtk
    scales by the wheel's spin). Keep the style returned: its observers live as long as it does."""
    style = vtkInteractorStyleTrackballCamera()
    interactor.SetInteractorStyle(style)

    def wheel(sign: float) -> Any:
        def zoom(_obj: Any, _event: str) -> None:
            x, y = interactor.GetEventPosition()
            renderer = interactor.FindPokedRenderer(x, y)
            if renderer is None:
                return
            factor = 1.1 ** (sign * 0.2 * style.GetMotionFactor() * style.GetMouseWheelMotionFactor())
            vtkInteractorStyleTrackballCamera.DollyToPosition(factor, [int(x), int(y)], renderer)
            renderer.ResetCameraClippingRange()

        return zoom

    # An observer of the style's wheel events replaces its own handling of them (vtkInteractorStyle).
    style.AddObserver("MouseWheelForwardEvent", wheel(1.0))
    style.AddObserver("MouseWheelBackwardEvent", wheel(-1.0))
    return style


# Camera views: name -> (direction from the skeleton's centre to the camera, view up, parallel projection).
VIEWS = {
    "perspective": ((0.42, 0.28, 1.0), (0.0, 1.0, 0.0), False),
    "front": ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), True),
    "side": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), True),
    "top": ((0.0, 1.0, 0.0), (0.0, 0.0, -1.0), True),
}


def keep_handle_sizes(renderer: Any, handles: Callable[[], Iterable[Any]]) -> None:
    """The widgets of ``handles()`` keep their size on screen as the camera moves: VTK sizes a sphere
    handle (its ``HandleSize`` pixels) when its representation is built, so each is marked modified
    whenever the camera is (zoomed on a hand, the hand's handle stayed as large as the whole hand)."""

    def camera_moved(_obj: Any, _event: str) -> None:
        for widget in handles():
            widget.GetRepresentation().Modified()

    renderer.GetActiveCamera().AddObserver("ModifiedEvent", camera_moved)


def frame_camera(renderer: Any, points: np.ndarray, size: float, view: str) -> None:
    """Point the renderer's camera at ``points`` (``(m, 3)``: a pose, its targets, a mesh) from
    ``VIEWS[view]``: VTK's framing of their box zoomed in 1.35 times, or less where that would cut
    the box (with a margin of ``FRAME_MARGIN`` times ``size``, scene units) at the view's height or
    width."""
    direction, up, parallel = VIEWS[view]
    lo, hi = points.min(axis=0), points.max(axis=0)
    center = (lo + hi) / 2
    camera = renderer.GetActiveCamera()
    camera.SetParallelProjection(parallel)
    camera.SetFocalPoint(*center)
    toward = np.array(direction, dtype=float) / np.linalg.norm(direction)
    camera.SetPosition(*(center + size * toward))
    camera.SetViewUp(*up)
    camera.SetViewAngle(30.0)
    margin = 0.08 * size
    renderer.ResetCamera(lo[0] - margin, hi[0] + margin, lo[1], hi[1] + margin, lo[2] - margin, hi[2] + margin)
    # what fits: the box's half height and half width (over the aspect) across the line of sight
    up_v = np.array(camera.GetViewUp())
    right = np.cross(up_v, toward)
    m = FRAME_MARGIN * size
    box = np.array(
        [[x, y, z] for x in (lo[0] - m, hi[0] + m) for y in (lo[1] - m, hi[1] + m) for z in (lo[2] - m, hi[2] + m)]
    )
    box -= center
    aspect = max(float(renderer.GetTiledAspectRatio()), 1e-3)
    need = max(float(np.abs(box @ up_v).max()), float(np.abs(box @ right).max()) / aspect, 1e-9)
    if parallel:
        camera.SetParallelScale(max(camera.GetParallelScale() / 1.35, need))
    else:
        far = need / math.tan(math.radians(15.0)) + 0.5 * float(np.abs(box @ toward).max())
        camera.SetPosition(*(center + max(camera.GetDistance() / 1.35, far) * toward))
    renderer.ResetCameraClippingRange()


# The margin a view keeps around what it frames, in skeleton sizes.
FRAME_MARGIN = 0.06


def check_view(view: Any) -> None:
    """``ValueError`` naming the views unless ``view`` is one of ``VIEWS``."""
    if not isinstance(view, str) or view not in VIEWS:
        raise ValueError(f"view: expected one of {', '.join(VIEWS)}, got {str(view)[:40]!r}")


def toward_viewer(camera: Any) -> np.ndarray:
    """``(3,)`` the unit line of sight of the ``vtkCamera`` ``camera``, toward the viewer (either projection)."""
    toward = np.array(camera.GetPosition()) - np.array(camera.GetFocalPoint())
    if camera.GetParallelProjection() or not np.any(toward):
        toward = -np.array(camera.GetDirectionOfProjection())
    return toward / np.linalg.norm(toward)


def display_ray(renderer: Any, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
    """The ray through render-window pixel ``(x, y)`` (origin bottom-left) of ``renderer``: its point on
    the near plane and its direction to the far plane's (scene units)."""
    ends = []
    for depth in (0.0, 1.0):
        renderer.SetDisplayPoint(float(x), float(y), depth)
        renderer.DisplayToWorld()
        w = np.array(renderer.GetWorldPoint(), dtype=float)
        ends.append(w[:3] / w[3] if w[3] else w[:3])
    return ends[0], ends[1] - ends[0]


class MouseWatch:
    """The left button's press, the mouse's moves and the button's release on ``interactor`` (a
    ``vtkRenderWindowInteractor``), each to its handler ``(interactor, event name)``, observed at ``priority``
    (above the widgets' and the camera style's): a handler may take its event (``take``) so that nothing
    below it sees the event."""

    def __init__(self, interactor: Any, press: Any, move: Any, release: Any, priority: float) -> None:
        self.interactor = interactor
        pairs = (("LeftButtonPressEvent", press), ("MouseMoveEvent", move), ("LeftButtonReleaseEvent", release))
        self.tags = {event: interactor.AddObserver(event, handler, priority) for event, handler in pairs}

    def take(self, event: str) -> None:
        """Keep ``event`` (its name) from the observers below this one (the widgets, the camera style)."""
        self.interactor.GetCommand(self.tags[event]).SetAbortFlag(1)
