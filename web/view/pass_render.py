"""The render behind the depth, normal and outline passes (``fabrik3d_web.view.passes``): one off-screen draw of the
scene's surfaces coloured by their camera-space normals, lighting off, read back as colours and z-buffer.

``Surface`` is one mesh: its VTK poly data and place (an actor's matrix), its normals in world space
(``(v, 3)``, the matrix's turn applied), and its own actor whose per-vertex colours are those normals turned
into the camera's frame and coded as the normal pass (``pass_images.normal_colours``); the colours are
interpolated over each triangle (the normals' smooth shading, renormalised when decoded). ``surfaces_of``
makes them from frozen copies of the view's actors (``fabrik3d_web.view.picture.frozen``): the meshes (the
mannequin, a character's primitives, props), not points, lines or glyphs.

``PassRenderer`` holds one window (reused frame after frame: a sequence makes no new window a frame) and
``draw(surfaces, camera)`` returns ``(rgb (h, w, 3) uint8, zbuffer (h, w) float32 0..1)``, row 0 at the top.
``pixels(camera, width, height, points)`` projects scene points as VTK does (tests, the OpenPose check).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")  # off screen, no X (as scene_view)

import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (the OpenGL render window)
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkFloatArray, vtkPoints, vtkUnsignedCharArray
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkCommonMath import vtkMatrix4x4
from vtkmodules.vtkFiltersCore import vtkPolyDataNormals
from vtkmodules.vtkRenderingCore import vtkActor, vtkCamera, vtkPolyDataMapper, vtkRenderer, vtkRenderWindow

from fabrik3d.model.props import vertex_normals

from .pass_images import NORMAL_BACKGROUND, normal_colours


class Surface:
    """One mesh of the passes (module docstring): ``points`` and ``normals`` ``(v, 3)`` float32 (the mesh's
    own frame; ``matrix`` places it, scene units) and ``triangles`` given, or ``poly`` (VTK poly data with
    polygons, normals computed where it has none)."""

    def __init__(
        self,
        points: np.ndarray | None = None,
        normals: np.ndarray | None = None,
        triangles: np.ndarray | None = None,
        *,
        poly: vtkPolyData | None = None,
        matrix: vtkMatrix4x4 | None = None,
    ) -> None:
        own = vtkPolyData()
        if poly is None:
            pts = np.ascontiguousarray(points, dtype=np.float32).copy()
            self._points = pts
            vtk_points = vtkPoints()
            vtk_points.SetData(numpy_to_vtk(pts, deep=False))
            own.SetPoints(vtk_points)
            tris = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
            self._triangles = tris
            cells = vtkCellArray()
            offsets = np.arange(0, 3 * len(tris) + 1, 3, dtype=np.int64)
            cells.SetData(numpy_to_vtkIdTypeArray(offsets, deep=True), numpy_to_vtkIdTypeArray(tris.ravel(), deep=True))
            own.SetPolys(cells)
            model_normals = np.asarray(vertex_normals(pts, tris) if normals is None else normals, dtype=np.float32)
        else:
            if poly.GetPointData().GetNormals() is None:
                maker = vtkPolyDataNormals()
                maker.SetInputData(poly)
                maker.SplittingOff()
                maker.Update()
                poly = maker.GetOutput()
            own.SetPoints(poly.GetPoints())
            own.SetPolys(poly.GetPolys())
            own.SetStrips(poly.GetStrips())
            model_normals = vtk_to_numpy(poly.GetPointData().GetNormals()).astype(np.float32)
            self._points = None
        turn = np.eye(3)
        if matrix is not None:
            m = np.array([[matrix.GetElement(i, j) for j in range(3)] for i in range(3)])
            turn = np.linalg.inv(m)  # (normals turn by the inverse transpose: as rows, n @ inv(M))
        self._turn = turn
        self.normals = self._world(model_normals)
        self.poly = own
        self._colours = np.zeros((len(self.normals), 3), dtype=np.uint8)
        colours = numpy_to_vtk(self._colours, deep=False)
        colours.SetName("normal colours")
        own.GetPointData().SetScalars(colours)
        mapper = vtkPolyDataMapper()
        mapper.SetInputData(own)
        mapper.SetColorModeToDirectScalars()
        mapper.SetScalarModeToUsePointData()
        mapper.ScalarVisibilityOn()
        self.actor = vtkActor()
        self.actor.SetMapper(mapper)
        prop = self.actor.GetProperty()
        prop.LightingOff()
        prop.SetAmbient(1.0)
        prop.SetDiffuse(0.0)
        prop.SetSpecular(0.0)
        if matrix is not None:
            own_matrix = vtkMatrix4x4()
            own_matrix.DeepCopy(matrix)
            self.actor.SetUserMatrix(own_matrix)

    def _world(self, normals: np.ndarray) -> np.ndarray:
        n = np.asarray(normals, dtype=np.float64) @ self._turn
        return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)

    def move(self, points: np.ndarray, normals: np.ndarray | None) -> None:
        """New ``points`` and ``normals`` ``(v, 3)`` (None: from the triangles) of a mesh made from arrays (a
        sequence's next frame)."""
        if self._points is None:
            raise ValueError("surface: made from poly data, it moves with its actor")
        self._points[...] = points
        self.normals = self._world(vertex_normals(self._points, self._triangles) if normals is None else normals)
        self.poly.GetPoints().Modified()
        self.poly.Modified()

    def colour(self, camera: vtkCamera) -> None:
        """Colour the vertices with their normals as ``camera`` sees them (``pass_images.normal_colours``)."""
        view = camera.GetViewTransformMatrix()
        r = np.array([[view.GetElement(i, j) for j in range(3)] for i in range(3)])
        self._colours[...] = normal_colours(self.normals @ r.T)
        self.poly.GetPointData().GetScalars().Modified()
        self.poly.Modified()


def surfaces_of(props: Sequence[Any]) -> list[Surface]:
    """The ``Surface`` of every actor in ``props`` (frozen copies) whose mapper draws poly data with
    polygons or strips (points, lines and glyphs left out), placed by the actor's matrix."""
    out = []
    for prop in props:
        mapper = prop.GetMapper() if isinstance(prop, vtkActor) else None
        if mapper is None or not mapper.IsA("vtkPolyDataMapper") or mapper.IsA("vtkGlyph3DMapper"):
            continue
        data = mapper.GetInputDataObject(0, 0)
        if not isinstance(data, vtkPolyData) or data.GetNumberOfPolys() + data.GetNumberOfStrips() == 0:
            continue
        matrix = prop.GetMatrix()
        identity = all(matrix.GetElement(i, j) == float(i == j) for i in range(4) for j in range(4))
        out.append(Surface(poly=data, matrix=None if identity else matrix))
    return out


class PassRenderer:
    """An off-screen window of ``width`` x ``height`` pixels for the passes' draws (module docstring);
    ``close()`` lets its memory go."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = int(width), int(height)
        self.window = vtkRenderWindow()
        self.window.SetOffScreenRendering(1)
        self.window.SetMultiSamples(0)  # (no blending: every pixel one surface's normal and depth)
        self.window.SetSize(self.width, self.height)
        self.renderer = vtkRenderer()
        self.renderer.SetBackground(*(c / 255.0 for c in NORMAL_BACKGROUND))
        self.renderer.SetUseFXAA(False)
        self.renderer.AutomaticLightCreationOff()
        self.window.AddRenderer(self.renderer)

    def draw(
        self, surfaces: Sequence[Surface], camera: vtkCamera
    ) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
        """Draw ``surfaces`` seen by ``camera`` (its clipping range fitted to them): ``(rgb (h, w, 3) uint8,
        zbuffer (h, w) float32, (near, far))``, rows from the top; the z-buffer 1 where nothing was drawn."""
        renderer = self.renderer
        renderer.RemoveAllViewProps()
        renderer.SetActiveCamera(camera)
        for surface in surfaces:
            surface.colour(camera)
            renderer.AddActor(surface.actor)
        renderer.ResetCameraClippingRange()
        self.window.Render()
        w, h = self.width, self.height
        colours = vtkUnsignedCharArray()
        self.window.GetPixelData(0, 0, w - 1, h - 1, 0, colours, 0)
        rgb = vtk_to_numpy(colours).reshape(h, w, -1)[::-1, :, :3].copy()
        depths = vtkFloatArray()
        self.window.GetZbufferData(0, 0, w - 1, h - 1, depths)
        zbuffer = vtk_to_numpy(depths).reshape(h, w)[::-1].copy()
        renderer.RemoveAllViewProps()
        near, far = camera.GetClippingRange()
        return rgb, zbuffer, (float(near), float(far))

    def close(self) -> None:
        """Let the window's memory go."""
        self.renderer.RemoveAllViewProps()
        self.window.Finalize()


def pixels(camera: vtkCamera, width: int, height: int, points: np.ndarray) -> np.ndarray:
    """Scene ``points`` ``(m, 3)`` as ``camera`` shows them in a ``width`` x ``height`` picture: ``(m, 2)``
    pixels, x right and y down from the top-left corner (pixel centres at half pixels), as VTK draws them."""
    matrix = camera.GetCompositeProjectionTransformMatrix(width / height, -1.0, 1.0)
    m = np.array([[matrix.GetElement(i, j) for j in range(4)] for i in range(4)])
    p = np.c_[np.asarray(points, dtype=float).reshape(-1, 3), np.ones(len(np.reshape(points, (-1, 3))))] @ m.T
    ndc = p[:, :2] / p[:, 3:4]
    return np.c_[(ndc[:, 0] + 1.0) * 0.5 * width, (1.0 - ndc[:, 1]) * 0.5 * height]
