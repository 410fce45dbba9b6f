"""Turning in the notebook view: a target's orientation, a joint turned by hand (forward
kinematics), where the head looks. A part of ``fabrik3d.notebook.SkeletonView``.

``set_orientation`` gives an effector's target an orientation (``fabrik3d.Target``); ``turn_joint``
turns one joint within its own limits (``fabrik3d.solver.fk.turn_joint``; the targets of the
effectors below it ride along), and later solves keep the pose so built (its frames included:
``solve``'s ``relax_to`` and ``relax_rotations``); ``look_at`` turns the neck and the head toward a
point after every solve until ``free_look``. Orientations are unit quaternions (x, y, z, w), world
frames; angles Blender's XYZ Euler in degrees.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.io.scene import Scene
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Target, unit_quaternion
from fabrik3d.solver.fk import turn_joint
from fabrik3d.solver.rig import rig
from fabrik3d.solver.tree import SolveResult, solve


class Turns:
    """The turning part of ``SkeletonView`` (see the module docstring)."""

    skeleton: Skeleton
    _scene: Scene
    _result: SolveResult
    _orientations: dict[str, np.ndarray]
    _look: np.ndarray | None
    _built: SolveResult | None
    _look_head: str

    def _check_name(self, name: Any) -> None:
        raise NotImplementedError  # (SkeletonView's)

    def _show_result(self) -> None:
        raise NotImplementedError  # (SkeletonView's)

    def _update_targets(self, targets: dict[str, Any]) -> None:
        raise NotImplementedError  # (SkeletonView's)

    @property
    def orientations(self) -> dict[str, np.ndarray]:
        """Effector name -> its target's orientation ``(4,)`` (copies)."""
        return {k: q.copy() for k, q in self._orientations.items()}

    def set_orientation(self, name: str, orientation: Any) -> None:
        """Give effector ``name``'s target the orientation ``orientation`` (a free effector is pinned
        where it is) and re-solve; ``None`` lets its orientation go."""
        self._check_name(name)
        kept = dict(self._orientations)
        if orientation is None:
            self._orientations.pop(name, None)
        else:
            self._orientations[name] = unit_quaternion(orientation, f"orientation of {name}")
        goals = dict(self._scene.targets)
        goals.setdefault(name, self._result.positions[self.skeleton.index(name)].copy())
        try:
            self._update_targets(goals)
        except ValueError:
            self._orientations = kept
            raise

    def turn_joint(self, name: str, angles: Any) -> None:
        """Turn joint ``name`` to Euler ``angles`` ``(x, y, z)`` (degrees, its turn from rest about its
        rest axes, Blender's pose-bone rotation) within its own limits; the joints below follow
        rigidly with their effectors' targets, nothing above moves, and later solves keep it."""
        sk = self.skeleton
        if not isinstance(name, str) or name not in sk.names:
            raise ValueError(f"turn_joint: {str(name)[:60]!r} is not a joint of the skeleton")
        xyz = checks.vec(angles, f"turn_joint {name}: angles")
        old = self._result
        positions, rotations = turn_joint(sk, old.positions, old.rotations, name, rot.from_euler_xyz(xyz))
        j = sk.index(name)
        carry = rot.mul(tuple(rotations[j].tolist()), rot.conj(tuple(old.rotations[j].tolist())))  # type: ignore[arg-type]
        below = {sk.names[k] for k in rig(sk).subtree(j)}
        pivot = old.positions[j]
        moved = {
            k: pivot + np.array(rot.rotate(carry, tuple((v - pivot).tolist()))) if k in below else v  # type: ignore[arg-type]
            for k, v in self._scene.targets.items()
        }
        errors = {k: float(np.linalg.norm(positions[sk.index(k)] - v)) for k, v in moved.items()}
        self._scene = dataclasses.replace(self._scene, targets=moved)
        self._result = self._built = SolveResult(
            positions, rotations, 0, errors, all(e <= self._scene.tolerance for e in errors.values())
        )
        self._show_result()

    def look_at(self, point: Any, head: str = "head") -> None:
        """Turn the head (and the neck) toward ``point`` (scene units), now and after every solve."""
        if head not in self.skeleton.names:
            raise ValueError(f"look_at: the skeleton has no joint {head!r} (name the head with head=)")
        kept = self._look, self._look_head
        self._look, self._look_head = checks.point(point, "look_at"), head
        try:
            self._update_targets(dict(self._scene.targets))
        except ValueError:
            self._look, self._look_head = kept
            raise

    def free_look(self) -> None:
        """Stop turning the head toward a point (its turn stays until the body moves it)."""
        self._look = None

    def _turned_solve(self, scene: Scene, start: SolveResult | None) -> SolveResult:
        """``solve`` of ``scene`` from ``start`` (with its frames), the orientations, the built pose and
        the look given; each edit reaches whatever it costs (an edit typed or picked is no drag's frame:
        ``effort``, ``fabrik3d.solver.effort``)."""
        goals = {
            k: Target(p, self._orientations[k]) if k in self._orientations else p for k, p in scene.targets.items()
        }
        built = self._built
        look = None if self._look is None else {self._look_head: self._look}
        return solve(
            scene.skeleton,
            goals,
            positions=None if start is None else start.positions,
            rotations=None if start is None else start.rotations,
            root_target=scene.root_target,
            weights=scene.weights,
            tolerance=scene.tolerance,
            max_iterations=scene.max_iterations,
            relax_to=None if built is None else built.positions,
            relax_rotations=None if built is None else built.rotations,
            look_at=look,
            floor=scene.floor,
            balance=scene.balance,
            effort=math.inf,
        )
