"""A character's skinned meshes in the VTK scene: one actor per mesh primitive, with its base colour
or its base-colour texture, whose points and normals are updated in place every frame.

Positions and normals ``(v, 3)`` float32, scene units (``fabrik3d_web.document.characters.Characters.skinned``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkIOImage import vtkImageReader2Factory
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper, vtkTexture

from fabrik3d.io.gltf_images import decodable

from .vtk_parts import finish, triangle_cells

SKIN = (0.80, 0.72, 0.66)  # the colour of a mesh without a material
# The meshes' opacity: the bones and the handles inside them stay in sight (Blender's X-ray).
OPACITY = 0.6


class MeshView:
    """The skinned meshes of one character in ``renderer`` (none until ``set_character``)."""

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer
        self.actors: list[vtkActor] = []
        self._polys: list[vtkPolyData] = []
        self._arrays: list[tuple[np.ndarray, np.ndarray | None]] = []  # (the memory VTK reads)
        self._keep: list[Any] = []
        self._textures: dict[int, tuple[vtkTexture | None, bytes]] = {}  # id of an image's bytes -> its texture
        self.visible = True

    def set_character(self, character: Any) -> None:
        """Show ``character``'s meshes in their bind pose (``None``: remove them)."""
        for actor in self.actors:
            self.renderer.RemoveActor(actor)
        self.actors, self._polys, self._arrays, self._keep, self._textures = [], [], [], [], {}
        for prim in [] if character is None else character.meshes:
            poly, actor, arrays = self._primitive(prim)
            actor.SetVisibility(self.visible)
            self.renderer.AddActor(actor)
            self.actors.append(actor)
            self._polys.append(poly)
            self._arrays.append(arrays)

    def set_visible(self, visible: bool) -> None:
        """Show or hide the meshes."""
        self.visible = bool(visible)
        for actor in self.actors:
            actor.SetVisibility(self.visible)

    def show(self, skinned: list[tuple[np.ndarray, np.ndarray | None]]) -> None:
        """Move every primitive's points (and normals) to the skinned ones, in place."""
        for k, (positions, normals) in enumerate(skinned[: len(self._polys)]):
            points, norms = self._arrays[k]
            points[...] = positions
            poly = self._polys[k]
            poly.GetPoints().GetData().Modified()
            poly.GetPoints().Modified()
            if normals is not None and norms is not None:
                norms[...] = normals
                poly.GetPointData().GetNormals().Modified()
            poly.Modified()

    def _primitive(self, prim: Any) -> tuple[vtkPolyData, vtkActor, tuple[np.ndarray, np.ndarray | None]]:
        """The poly data and actor of one mesh primitive; its points (and normals) view numpy arrays
        that ``show`` writes."""
        poly = vtkPolyData()
        positions = np.ascontiguousarray(prim.positions, dtype=np.float32).copy()
        points = vtkPoints()
        points.SetData(numpy_to_vtk(positions, deep=False))
        poly.SetPoints(points)
        poly.SetPolys(triangle_cells(prim.indices))
        normals = None
        if prim.normals is not None:
            normals = np.ascontiguousarray(prim.normals, dtype=np.float32).copy()
            array = numpy_to_vtk(normals, deep=False)
            array.SetName("Normals")
            poly.GetPointData().SetNormals(array)
        mapper = vtkPolyDataMapper()
        mapper.SetInputData(poly)
        actor = vtkActor()
        actor.SetMapper(mapper)
        prop = actor.GetProperty()
        finish(prop, 0.1)
        rgba = np.clip(np.asarray(prim.base_color, dtype=float), 0.0, 1.0)
        texture = self._texture(prim) if prim.texture is not None and prim.uvs is not None else None
        if texture is not None:
            uvs = np.ascontiguousarray(prim.uvs, dtype=np.float32).copy()
            uvs[:, 1] = 1.0 - uvs[:, 1]  # (glTF's v runs down the image, VTK's up)
            tcoords = numpy_to_vtk(uvs, deep=True)
            tcoords.SetName("TCoords")
            poly.GetPointData().SetTCoords(tcoords)
            actor.SetTexture(texture)
            prop.SetColor(*(rgba[:3] ** (1 / 2.2)))  # (the factor times the image; white: the image)
        elif rgba[:3].min() >= 1.0:
            prop.SetColor(*SKIN)  # (no material)
        else:
            prop.SetColor(*(rgba[:3] ** (1 / 2.2)))  # (linear to display)
        prop.SetOpacity(min(float(rgba[3]), OPACITY))  # (the bones and handles show through)
        if not prim.double_sided:  # (as glTF says; see-through, only the near side shows, and it draws faster)
            prop.BackfaceCullingOn()
        return poly, actor, (positions, normals)

    def _texture(self, prim: Any) -> vtkTexture | None:
        """The primitive's base-colour image as a VTK texture (PNG or JPEG), or None if it is damaged, too
        large or VTK cannot read it. The bytes are checked first (``fabrik3d.io.gltf_images``: VTK's PNG
        reader ends the process on a damaged PNG), and primitives that share an image share its texture."""
        key = id(prim.texture)
        if key in self._textures:
            return self._textures[key][0]
        try:
            image, mime = decodable(prim.texture)
        except ValueError:
            image, mime = None, ""
        texture = None if image is None else self._read(image, mime)
        self._textures[key] = (texture, prim.texture)  # (the bytes kept: their id stays theirs)
        return texture

    def _read(self, image: bytes, mime: str) -> vtkTexture | None:
        """A VTK texture of checked image bytes (``decodable``), or None if VTK cannot read them."""
        reader = vtkImageReader2Factory().CreateImageReader2FromExtension(".png" if mime == "image/png" else ".jpg")
        if reader is None:
            return None
        if hasattr(reader, "SetStream"):  # (VTK 9.4 on; its memory buffer is deprecated since 9.6)
            from vtkmodules.vtkIOCore import vtkMemoryResourceStream

            stream = vtkMemoryResourceStream()
            stream.SetBuffer(image, len(image), True)  # (a copy of the bytes)
            reader.SetStream(stream)
            self._keep.append(stream)
        else:
            data = np.frombuffer(image, dtype=np.uint8)
            self._keep.append(data)
            reader.SetMemoryBuffer(data)
            reader.SetMemoryBufferLength(len(data))
        reader.Update()
        if reader.GetErrorCode() or reader.GetOutput().GetNumberOfPoints() == 0:  # (a bad JPEG reads as 1 x 1)
            return None
        texture = vtkTexture()
        texture.SetInputConnection(reader.GetOutputPort())
        texture.InterpolateOn()
        texture.UseSRGBColorSpaceOn()
        self._keep.append(reader)
        return texture
