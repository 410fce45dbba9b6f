"""The control images' pixels from one render (issue 54, ``fabrik3d_web.view.passes``): numpy on the z-buffer and
the normal colours that ``fabrik3d_web.view.pass_render`` reads back, and PNG encoding (VTK's writer, 8 and 16
bits a channel; no other image library).

Conventions (docs/control-images.md):

* **depth**: near bright, far dark, background 0, as the depth maps ControlNet's depth model was trained on
  (MiDaS: relative inverse depth, min-max normalised per image by ControlNet's annotator,
  ``annotator/midas/__init__.py`` of lllyasviel/ControlNet-v1-1-nightly). A perspective picture gives inverse
  view depth ``1 / z`` (disparity, as MiDaS); an orthographic one linear depth (a parallel camera has no
  disparity: its distance along the line of sight is arbitrary). Either is normalised to the figures' own
  range: their nearest point 1, their farthest ``DEPTH_FLOOR`` (so that it stays apart from the background).
* **normal**: camera-space normals coded as ControlNet 1.1's normal-BAE model reads them: "blue is front, red
  is left, green is top" (ControlNet-v1-1-nightly's README, Normal 1.1), each channel ``(c + 1) / 2 * 255`` as
  its annotator writes them (``annotator/normalbae/__init__.py``). With VTK's eye coordinates (x right, y up,
  z toward the viewer): ``R = (1 - x) / 2``, ``G = (1 + y) / 2``, ``B = (1 + z) / 2``. The background is a flat
  backdrop facing the camera, ``(127, 127, 255)``: what the estimator gives a wall behind a figure.
* **outline**: white lines (255) on black: the silhouette, depth jumps steeper than ``DEPTH_JUMP`` pixels'
  widths per pixel (one part in front of another) and creases where the normal turns more than
  ``CREASE_DEG`` between neighbouring pixels (where parts meet), ``line_width`` pixels wide.
"""

from __future__ import annotations

import math

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOImage import vtkPNGWriter

# The farthest point of the figures in the depth pass (the nearest is 1, the background 0).
DEPTH_FLOOR = 0.1
# The normal pass's background: the normal (0, 0, 1), facing the camera, coded as the annotator does.
NORMAL_BACKGROUND = (127, 127, 255)
# Outline: a depth step between neighbouring pixels over this many pixel widths (at that depth) is an edge
# (a surface turned more than atan(6) = 80.5 degrees from the camera: one part seen in front of another).
DEPTH_JUMP = 6.0
# Outline: neighbouring normals more than this apart (degrees) are a crease, where two parts meet.
CREASE_DEG = 40.0
# Outline: lines LINE_PX wide at a REFERENCE_SIDE picture (the shorter side), scaled with it.
LINE_PX, REFERENCE_SIDE = 1.5, 512


def view_depth(zbuffer: np.ndarray, near: float, far: float, parallel: bool) -> np.ndarray:
    """The view-space depth (scene units along the line of sight, ``inf`` where nothing was drawn) of an
    OpenGL z-buffer ``zbuffer`` ``(h, w)`` in 0..1, for the clipping range ``near``, ``far`` (scene units)."""
    z = zbuffer.astype(np.float64)
    if parallel:
        depth = near + z * (far - near)
    else:
        ndc = 2.0 * z - 1.0
        with np.errstate(divide="ignore"):
            depth = 2.0 * near * far / ((far + near) - ndc * (far - near))
    depth[zbuffer >= 1.0] = np.inf
    return depth


def depth_image(depth: np.ndarray, parallel: bool) -> np.ndarray:
    """The depth pass ``(h, w)`` float32 in 0..1 from view depth ``depth`` (``view_depth``; module
    docstring: nearest 1, farthest ``DEPTH_FLOOR``, background 0; inverse depth for a perspective picture)."""
    mask = np.isfinite(depth)
    out = np.zeros(depth.shape, dtype=np.float32)
    if not mask.any():
        return out
    d = depth[mask]
    values = -d if parallel else 1.0 / np.maximum(d, 1e-12)
    lo, hi = float(values.min()), float(values.max())
    scaled = np.ones_like(values) if hi - lo <= 1e-12 * max(abs(hi), 1.0) else (values - lo) / (hi - lo)
    out[mask] = DEPTH_FLOOR + (1.0 - DEPTH_FLOOR) * scaled
    return out


def depth_levels(depth: np.ndarray, bits: int = 8) -> np.ndarray:
    """The depth pass (0..1) as whole levels: uint8 (``bits`` 8) or uint16 (``bits`` 16)."""
    if bits not in (8, 16):
        raise ValueError(f"depth bits: expected 8 or 16, got {bits!r}")
    top = 255 if bits == 8 else 65535
    return np.rint(np.clip(depth, 0.0, 1.0) * top).astype(np.uint8 if bits == 8 else np.uint16)


def eye_normals(rgb: np.ndarray) -> np.ndarray:
    """Unit camera-space normals ``(h, w, 3)`` (x right, y up, z toward the viewer) decoded from the normal
    pass's colours ``rgb`` (module docstring)."""
    n = rgb.astype(np.float32) / 127.5 - 1.0
    n[..., 0] *= -1.0
    return n / np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-6)


def normal_colours(normals: np.ndarray) -> np.ndarray:
    """Camera-space normals ``(..., 3)`` (x right, y up, z toward the viewer; unit length) coded as the
    normal pass's colours ``(..., 3)`` uint8: red left, green up, blue toward the viewer."""
    coded = np.stack([-normals[..., 0], normals[..., 1], normals[..., 2]], axis=-1)
    return np.clip((coded + 1.0) * 127.5, 0.0, 255.0).astype(np.uint8)


def line_width(width: int, height: int) -> int:
    """The outline's width in pixels: ``LINE_PX`` at a ``REFERENCE_SIDE`` picture, scaled with its shorter side."""
    return max(1, round(LINE_PX * min(width, height) / REFERENCE_SIDE))


def outline_image(depth: np.ndarray, normals: np.ndarray, pixel: np.ndarray | float) -> np.ndarray:
    """The outline ``(h, w)`` uint8 (255 on the lines, 0 elsewhere) from view depth ``depth`` (``inf`` for
    the background), unit normals ``(h, w, 3)`` and ``pixel``, a pixel's width at each depth (scene units:
    an array like ``depth``, or one number for a parallel camera). The line marks the nearer pixel of each
    pair of neighbours that differ (module docstring), widened to ``line_width``."""
    h, w = depth.shape
    mask = np.isfinite(depth)
    finite = np.where(mask, depth, 0.0)
    step = DEPTH_JUMP * (np.where(mask, pixel, 0.0) if np.ndim(pixel) else np.full(depth.shape, float(pixel)))
    crease = math.cos(math.radians(CREASE_DEG))
    edges = np.zeros((h, w), dtype=bool)
    for axis in (0, 1):
        a = [slice(None), slice(None)]
        b = [slice(None), slice(None)]
        a[axis], b[axis] = slice(None, -1), slice(1, None)
        ma, mb = mask[tuple(a)], mask[tuple(b)]
        da, db = finite[tuple(a)], finite[tuple(b)]
        both = ma & mb
        jump = both & (np.abs(da - db) > np.minimum(step[tuple(a)], step[tuple(b)]))
        turned = both & (np.einsum("ijk,ijk->ij", normals[tuple(a)], normals[tuple(b)]) < crease)
        differ = (ma != mb) | jump | turned
        a_marks = differ & ma & (~mb | (da <= db))  # (the nearer one, or the one on the figure)
        edges[tuple(a)] |= a_marks
        edges[tuple(b)] |= differ & ~a_marks
    return (_widen(edges, line_width(w, h)) * 255).astype(np.uint8)


def _widen(edges: np.ndarray, width: int) -> np.ndarray:
    """``edges`` dilated to lines ``width`` pixels wide (a square brush)."""
    if width <= 1:
        return edges
    lo = (width - 1) // 2
    out = edges.copy()
    h, w = edges.shape
    for dy in range(-lo, width - lo):
        for dx in range(-lo, width - lo):
            if dy == dx == 0:
                continue
            src = edges[max(0, -dy) : h - max(0, dy), max(0, -dx) : w - max(0, dx)]
            out[max(0, dy) : h - max(0, -dy), max(0, dx) : w - max(0, -dx)] |= src
    return out


def png_bytes(image: np.ndarray) -> bytes:
    """A PNG of ``image``: ``(h, w)`` grey or ``(h, w, 3)`` RGB, uint8 or uint16 (16 bits a channel),
    row 0 at the top."""
    if image.dtype not in (np.uint8, np.uint16) or image.ndim not in (2, 3):
        raise ValueError(f"png: expected (h, w) or (h, w, 3) uint8 or uint16, got {image.shape} {image.dtype}")
    h, w = image.shape[:2]
    channels = 1 if image.ndim == 2 else image.shape[2]
    data = vtkImageData()
    data.SetDimensions(w, h, 1)
    flat = np.ascontiguousarray(image[::-1].reshape(h * w, channels))  # (VTK's rows start at the bottom)
    array = numpy_to_vtk(flat, deep=True)
    data.GetPointData().SetScalars(array)
    writer = vtkPNGWriter()
    writer.SetCompressionLevel(3)
    writer.WriteToMemoryOn()
    writer.SetInputData(data)
    writer.Write()
    return bytes(memoryview(writer.GetResult()))
