"""A rigged character in Jupyter: ``CharacterView`` is a ``SkeletonView`` of the character's skeleton
with its skinned meshes drawn over the bones, updated in place on every solve.

Needs the ``notebook`` extra (pythreejs, ipywidgets), as ``fabrik3d.notebook``.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pythreejs as three

from fabrik3d.io.character import Character
from fabrik3d.io.scene import Scene
from fabrik3d.notebook import SkeletonView, _f32


class CharacterView(SkeletonView):
    """``SkeletonView`` of ``character.skeleton`` (its effectors, limits and natural posing) that
    also shows its meshes, skinned into every pose (``Character.skin``).

    Args:
        character: a loaded character (``fabrik3d.io.character.load_character``).
        targets: optional skeleton joint name -> ``(3,)`` point, scene units (a humanoid's roles are
            in ``character.effectors``).
        show_mesh: draw the meshes (the bones stay visible through them).
        kwargs: as ``SkeletonView``.

    Attributes:
        meshes: one ``pythreejs.Mesh`` per mesh primitive.
    """

    def __init__(self, character: Character, targets: Any = None, *, show_mesh: bool = True, **kwargs: Any) -> None:
        if not isinstance(character, Character):
            raise ValueError(f"CharacterView: expected a Character, got {type(character).__name__}")
        self.character = character
        self.meshes: list[Any] = []
        self._mesh_attrs: list[tuple[Any, Any]] = []
        super().__init__(Scene(character.skeleton), targets, **{"show_mannequin": False, **kwargs})
        for prim in character.meshes:
            mesh, attrs = _mesh(prim)
            mesh.visible = show_mesh
            self.meshes.append(mesh)
            self._mesh_attrs.append(attrs)
        self.renderer.scene.children = (*self.renderer.scene.children, *self.meshes)
        self._show_result()

    def _show_result(self) -> None:
        super()._show_result()
        if self._mesh_attrs:
            for (positions, normals), (p_attr, n_attr) in zip(
                self.character.skin(self._result, True), self._mesh_attrs
            ):
                p_attr.array = _f32(positions)
                if n_attr is not None and normals is not None:
                    n_attr.array = _f32(normals)


def _mesh(prim: Any) -> tuple[Any, tuple[Any, Any]]:
    """A pythreejs mesh of one primitive in its bind pose, and its position and normal attributes."""
    position = three.BufferAttribute(array=_f32(prim.positions))
    attributes = {"position": position}
    normal = None
    if prim.normals is not None:
        normal = three.BufferAttribute(array=_f32(prim.normals))
        attributes["normal"] = normal
    rgba = np.clip(np.asarray(prim.base_color, dtype=float), 0.0, 1.0)
    color = "#" + "".join(f"{round(255 * float(c) ** (1 / 2.2)):02x}" for c in rgba[:3])
    material: dict[str, Any] = {"color": color, "side": "DoubleSide"}
    if prim.texture is not None and prim.uvs is not None:
        attributes["uv"] = three.BufferAttribute(array=_f32(prim.uvs))
        uri = f"data:{prim.texture_mime or 'image/png'};base64," + base64.b64encode(prim.texture).decode("ascii")
        material["map"] = three.ImageTexture(imageUri=uri, flipY=False)
    if rgba[3] < 1.0:
        material.update(transparent=True, opacity=float(rgba[3]))
    geometry = three.BufferGeometry(
        attributes=attributes, index=three.BufferAttribute(array=np.asarray(prim.indices, np.uint32).ravel())
    )
    mesh = three.Mesh(geometry=geometry, material=three.MeshLambertMaterial(**material), frustumCulled=False)
    return mesh, (position, normal)
