"""A camera as VTK's ``vtkCamera`` defines one, and the projection of world points into its picture.

The view (VTK's ``vtkPerspectiveTransform.SetupCamera``): the direction ``d`` from ``position`` to
``focal_point``, the picture's right ``side = unit(d × view_up)`` and its up ``up = side × d`` (the
``view_up`` made perpendicular to ``d``). A point ``p`` has view coordinates ``x = (p - position)·side``,
``y = (p - position)·up`` and depth ``z = (p - position)·d`` (scene units along the view direction).

The projection (``vtkCamera.GetProjectionTransformMatrix`` with the renderer's aspect ``width / height``):
perspective, ``ndc = (x / (z·t·aspect), y / (z·t))`` with ``t = tan(view_angle / 2)``, the view angle
vertical; parallel, ``ndc = (x / (parallel_scale·aspect), y / parallel_scale)``. The display
(``vtkViewport.ViewToDisplay``): ``x_vtk = (ndc_x + 1)·width/2``, ``y_vtk = (ndc_y + 1)·height/2``; this
module's pixels count y down from the top: ``y = height - y_vtk``. Pixel ``(i, j)`` covers
``[i, i + 1) × [j, j + 1)``: its centre is at ``(i + 0.5, j + 0.5)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import checks

# The sizes of a picture (pixels, each side).
MIN_SIZE, MAX_SIZE = 16, 4096


def check_size(value: Any, name: str) -> int:
    """A picture's side in pixels: an integer in ``MIN_SIZE..MAX_SIZE``; ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not MIN_SIZE <= value <= MAX_SIZE:
        raise ValueError(
            f"{name}: expected an integer number of pixels in {MIN_SIZE}..{MAX_SIZE}, got {checks.quoted(value)}"
        )
    return int(value)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {checks.quoted(value)}")
    return bool(value)


@dataclass(frozen=True)
class Camera:
    """A pinhole (perspective) or orthographic (``parallel``) camera, as ``vtkCamera`` defines it.

    Args:
        position: ``(3,)`` the eye, scene units.
        focal_point: ``(3,)`` the point looked at (not the eye).
        view_up: ``(3,)`` the picture's up (not along the view direction; made perpendicular to it).
        view_angle: degrees, the vertical field of view of a perspective camera (``GetViewAngle``), in (0, 180).
        parallel: an orthographic camera (``GetParallelProjection``).
        parallel_scale: half the picture's height in scene units (``GetParallelScale``), > 0.
        width, height: the picture's size in pixels, each in 16..4096.

    Raises:
        ValueError: naming the argument, for a non-finite or degenerate camera or a bad size.
    """

    position: tuple[float, float, float]
    focal_point: tuple[float, float, float]
    view_up: tuple[float, float, float]
    view_angle: float = 30.0
    parallel: bool = False
    parallel_scale: float = 1.0
    width: int = 512
    height: int = 512

    def __post_init__(self) -> None:
        position = checks.point(self.position, "Camera: position")
        focal = checks.point(self.focal_point, "Camera: focal_point")
        up = checks.point(self.view_up, "Camera: view_up")
        angle = checks.number(self.view_angle, "Camera: view_angle", "degrees in (0, 180)")
        if not 0.0 < angle < 180.0:
            raise ValueError(f"Camera: view_angle: expected degrees in (0, 180), got {angle:g}")
        scale = checks.number(self.parallel_scale, "Camera: parallel_scale", "a finite number > 0")
        if not scale > 0.0:
            raise ValueError(f"Camera: parallel_scale: expected a finite number > 0, got {scale:g}")
        distance = float(np.linalg.norm(focal - position))
        if not distance > 1e-12 * max(1.0, float(np.abs(position).max())):
            raise ValueError("Camera: focal_point: must differ from position (no view direction)")
        d = (focal - position) / distance
        norm = float(np.linalg.norm(up))
        if not norm > 0.0 or float(np.linalg.norm(np.cross(d, up / norm))) < 1e-9:
            raise ValueError("Camera: view_up: must be a non-zero vector not along the view direction")
        for key, value in (("position", position), ("focal_point", focal), ("view_up", up)):
            object.__setattr__(self, key, tuple(float(v) for v in value))
        object.__setattr__(self, "view_angle", angle)
        object.__setattr__(self, "parallel_scale", scale)
        object.__setattr__(self, "parallel", _flag(self.parallel, "Camera: parallel"))
        object.__setattr__(self, "width", check_size(self.width, "Camera: width"))
        object.__setattr__(self, "height", check_size(self.height, "Camera: height"))

    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(eye, side, up, direction)``: the eye and the view's unit axes, world (module docstring)."""
        eye = np.array(self.position)
        d = np.array(self.focal_point) - eye
        d /= np.linalg.norm(d)
        side = np.cross(d, np.array(self.view_up))
        side /= np.linalg.norm(side)
        return eye, side, np.cross(side, d), d


def check_camera(value: Any, name: str = "camera") -> Camera:
    """``value`` if it is a ``Camera``; ``ValueError`` naming ``name`` otherwise."""
    if not isinstance(value, Camera):
        raise ValueError(f"{name}: expected a fabrik3d.pictures.Camera, got {type(value).__name__}")
    return value


def project(camera: Camera, points: Any) -> tuple[np.ndarray, np.ndarray]:
    """World points into the camera's picture (module docstring).

    Args:
        camera: the ``Camera``.
        points: ``(n, 3)`` world points, scene units.

    Returns:
        ``(pixels (n, 2), depth (n,))``: x right and y down from the picture's top-left corner, pixel
        centres at +0.5 (VTK's ``vtkRenderer.WorldToDisplay`` for the same camera and window size, y
        flipped); the depth along the view direction, scene units. A perspective camera gives NaN pixels
        for points at or behind the eye's plane (depth <= 0).

    Raises:
        ValueError: naming the argument, for a camera that is not a ``Camera`` or points that are not
            ``(n, 3)`` finite numbers.
    """
    cam = check_camera(camera)
    p = checks.points(points, "points")
    eye, side, up, d = cam.basis()
    rel = p - eye
    x, y, z = rel @ side, rel @ up, rel @ d
    aspect = cam.width / cam.height
    if cam.parallel:
        nx, ny = x / (cam.parallel_scale * aspect), y / cam.parallel_scale
    else:
        t = math.tan(math.radians(cam.view_angle) / 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ahead = z > 0.0
            safe = np.where(ahead, z, 1.0)
            nx = np.where(ahead, x / (safe * t * aspect), np.nan)
            ny = np.where(ahead, y / (safe * t), np.nan)
    pixels = np.column_stack([(nx + 1.0) * (0.5 * cam.width), (1.0 - ny) * (0.5 * cam.height)])
    return pixels, z
