"""Hands and library poses in the notebook view: ``shape_hand`` curls a hand's fingers into a shape
(``fabrik3d.solver.hands``), ``apply_pose`` puts a pose of the library on the body
(``fabrik3d.solver.pose_apply``). A part of ``fabrik3d.notebook.SkeletonView``; like ``turn_joint``,
the pose so built is kept by later solves (the targets of the effectors it moved follow them).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from fabrik3d.io.scene import Scene
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.hands import shape_hand
from fabrik3d.solver.pose_apply import apply_pose
from fabrik3d.solver.tree import SolveResult


class Hands:
    """The hands and poses part of ``SkeletonView`` (see the module docstring)."""

    skeleton: Skeleton
    _scene: Scene
    _result: SolveResult
    _built: SolveResult | None

    def _show_result(self) -> None:
        raise NotImplementedError  # (SkeletonView's)

    def shape_hand(
        self, side: str, shape: str, amount: float = 1.0, curls: dict[str, float] | None = None, spread: Any = None
    ) -> None:
        """Turn the fingers of hand ``side`` (``"l"`` or ``"r"``) toward ``shape`` (``fabrik3d.shape_hand``:
        open, relaxed, fist, point, spread, grip, pinch; ``amount`` 0..1, per-finger ``curls``,
        ``spread`` in degrees); nothing but those fingers moves."""
        old = self._result
        p, q = shape_hand(self.skeleton, old.positions, old.rotations, side, shape, amount, curls, spread)
        self._keep_built(p, q)

    def apply_pose(self, pose: Any, parts: Any = None, mirrored: bool = False, amount: float = 1.0) -> None:
        """Put ``pose`` (a ``fabrik3d.Pose``, e.g. from ``fabrik3d.starter_poses()``) on the body, or
        only on ``parts`` ("arms", "legs", "spine", "hands"), ``mirrored`` left for right, blended in
        by ``amount`` (``fabrik3d.apply_pose``); the targeted effectors' targets follow."""
        old = self._result
        p, q = apply_pose(
            self.skeleton, old.positions, old.rotations, pose, parts=parts, mirrored=mirrored, amount=amount
        )
        self._keep_built(p, q)

    def _keep_built(self, positions: np.ndarray, rotations: np.ndarray) -> None:
        """Show the pose ``positions``, ``rotations`` built by hand and keep it: targets move to their
        effectors, later solves relax to it."""
        sk = self.skeleton
        moved = {k: positions[sk.index(k)].copy() for k in self._scene.targets}
        self._scene = dataclasses.replace(self._scene, targets=moved)
        self._result = self._built = SolveResult(positions, rotations, 0, dict.fromkeys(moved, 0.0), True)
        self._show_result()
