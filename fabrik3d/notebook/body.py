"""The body in the notebook view: the mannequin skinned into every pose (``fabrik3d.model.mannequin``),
the floor and balance of the scene (``solve(..., floor=, balance=)``), and the centre of mass with its
ground shadow, green over the support area and red outside it (``fabrik3d.center_of_mass``,
``fabrik3d.support_area``). A part of ``fabrik3d.notebook.SkeletonView``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pythreejs as three

from fabrik3d.io.scene import Scene
from fabrik3d.model import mass
from fabrik3d.model.mannequin import Mannequin
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.tree import SolveResult

WOOD = "#d9ab75"  # the mannequin's colour (the web UI's)
BALANCED, FALLING = "#29a052", "#e03c31"


def _f32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


class Body:
    """The body part of ``SkeletonView`` (see the module docstring)."""

    skeleton: Skeleton
    _scene: Scene
    _result: SolveResult
    _extent: float

    def _solve(self, scene: Scene, start: SolveResult | None) -> SolveResult:
        raise NotImplementedError  # (SkeletonView's)

    def _show_result(self) -> None:
        raise NotImplementedError  # (SkeletonView's)

    def _body_parts(self, show_mannequin: bool | None) -> list[Any]:
        """The mannequin's mesh (shown by default for a skeleton standing on feet), the centre of mass's
        marker and shadow: three.js objects for the scene."""
        self.has_feet = len(mass.humanoid_roles(self.skeleton)) >= 8
        self.mannequin: Mannequin | None = Mannequin.of(self.skeleton) if show_mannequin is not False else None
        self.mannequin_mesh = None
        parts: list[Any] = []
        if self.mannequin is not None:
            m = self.mannequin
            self._mannequin_attrs = (three.BufferAttribute(array=_f32(m.positions)),
                                     three.BufferAttribute(array=_f32(m.normals)))  # fmt: skip
            geometry = three.BufferGeometry(
                attributes={"position": self._mannequin_attrs[0], "normal": self._mannequin_attrs[1]},
                index=three.BufferAttribute(array=np.asarray(m.triangles, np.uint32).ravel()),
            )
            self.mannequin_mesh = three.Mesh(geometry=geometry, material=three.MeshLambertMaterial(color=WOOD),
                                             name="fabrik3d.mannequin", frustumCulled=False)  # fmt: skip
            self.mannequin_mesh.visible = show_mannequin is True or (show_mannequin is None and self.has_feet)
            parts.append(self.mannequin_mesh)
        radius = 0.018 * self._extent
        sphere = three.SphereGeometry(radius=radius, widthSegments=16, heightSegments=12)
        self.com_marker = three.Mesh(geometry=sphere, material=three.MeshLambertMaterial(color=BALANCED),
                                     name="fabrik3d.com")  # fmt: skip
        disc = three.CircleGeometry(radius=1.6 * radius, segments=24)
        shade = three.MeshBasicMaterial(color=BALANCED, transparent=True, opacity=0.5)
        flat = (-np.pi / 2, 0.0, 0.0, "XYZ")
        self.com_shadow = three.Mesh(geometry=disc, material=shade, rotation=flat, name="fabrik3d.com_shadow")
        for part in (self.com_marker, self.com_shadow):
            part.visible = self.has_feet
            parts.append(part)
        return parts

    def _show_body(self) -> None:
        """The mannequin in the pose shown, the centre of mass and its shadow (green over the feet)."""
        r = self._result
        if self.mannequin is not None and self.mannequin_mesh is not None and self.mannequin_mesh.visible:
            positions, normals = self.mannequin.skinned(r.positions, r.rotations)
            self._mannequin_attrs[0].array = _f32(positions)
            self._mannequin_attrs[1].array = _f32(normals)
        if self.has_feet:
            com, _, margin = mass.balance_margin(self.skeleton, r.positions, floor=self._scene.floor)
            ground = mass.rest_ground(self.skeleton) if self._scene.floor is None else self._scene.floor
            color = BALANCED if margin >= 0.0 else FALLING
            self.com_marker.position = tuple(float(x) for x in com)
            self.com_shadow.position = (float(com[0]), float(ground) + 1e-3 * self._extent, float(com[2]))
            self.com_marker.material.color = self.com_shadow.material.color = color

    @property
    def balanced(self) -> bool:
        """Whether the centre of mass's ground shadow lies over the support area (a skeleton without
        feet: True)."""
        if not self.has_feet:
            return True
        return mass.balance_margin(self.skeleton, self._result.positions, floor=self._scene.floor)[2] >= 0.0

    def show_mannequin(self, visible: bool = True) -> None:
        """Show the mannequin over the sticks (or hide it)."""
        if self.mannequin_mesh is None:
            raise ValueError("show_mannequin: this view was made without a mannequin (show_mannequin=False)")
        self.mannequin_mesh.visible = bool(visible)
        self._show_result()

    def set_floor(self, height: float | None) -> None:
        """Solve with a floor at ``height`` (scene units; ``solve(..., floor=)``) or none (None)."""
        self._use(dataclasses.replace(self._scene, floor=height))

    def set_balance(self, on: bool) -> None:
        """Keep the centre of mass over the feet in every solve (``solve(..., balance=)``), or not."""
        self._use(dataclasses.replace(self._scene, balance=on))

    def _use(self, scene: Scene) -> None:
        self._result = self._solve(scene, self._result)
        self._scene = scene
        self._show_result()
