"""Targets for ``solve``: points, or ``Target`` with an orientation; checked at the boundary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot


@dataclass(frozen=True)
class Target:
    """A target for an end effector (or, as ``root_target``, for the root).

    Args:
        position: ``(3,)`` point, scene units.
        orientation: optional unit quaternion ``(x, y, z, w)``: the effector's last
            bone and frame align to it (a hand's palm). Position wins when the two
            conflict.
        weight: the orientation's share, in (0, 1], in the last bone's stage-1
            direction.
    """

    position: Any
    orientation: Any = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", checks.point(self.position, "position"))
        if self.orientation is not None:
            object.__setattr__(self, "orientation", unit_quaternion(self.orientation, "orientation"))
        w = checks.positive(self.weight, "weight")
        if w > 1.0:
            raise ValueError(f"weight: must be in (0, 1], got {w:g}")
        object.__setattr__(self, "weight", w)


def unit_quaternion(value: Any, name: str) -> np.ndarray:
    """A ``(4,)`` unit quaternion (x, y, z, w), or ``ValueError`` naming ``name``."""
    try:
        q = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a quaternion (x, y, z, w), got {value!r}") from None
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        raise ValueError(f"{name}: expected four finite numbers (x, y, z, w), got {value!r}")
    if abs(float(np.linalg.norm(q)) - 1.0) > 1e-6:
        raise ValueError(f"{name}: not a unit quaternion (length {np.linalg.norm(q):.6g})")
    return q / np.linalg.norm(q)


@dataclass(frozen=True)
class Goal:
    """A checked target as plain floats: position, optional orientation, orientation weight."""

    position: rot.Vec
    orientation: rot.Quat | None
    weight: float


def goal(value: Any, name: str) -> Goal:
    """A ``Goal`` from a point or a ``Target``."""
    if isinstance(value, Target):
        q = None if value.orientation is None else tuple(value.orientation.tolist())
        return Goal(tuple(value.position.tolist()), q, value.weight)  # type: ignore[arg-type]
    return Goal(tuple(checks.point(value, name).tolist()), None, 1.0)  # type: ignore[arg-type]


def goals(skeleton: Any, targets: Any) -> dict[int, Goal]:
    """Targets by effector index, in skeleton order; ``ValueError`` listing valid names."""
    if not isinstance(targets, Mapping):
        raise ValueError("targets: expected a mapping from end-effector names to points or Targets")
    effectors = skeleton.end_effectors
    for name in targets:
        if name not in effectors:
            raise ValueError(
                f"targets: {name!r} is not an end effector of this skeleton; valid names are {', '.join(effectors)}"
            )
    return {skeleton.index(n): goal(targets[n], f"targets[{n!r}]") for n in effectors if n in targets}


def effector_weights(skeleton: Any, weights: Any) -> dict[int, float] | None:
    """Centroid weights by effector index (``None`` for the plain mean)."""
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise ValueError("weights: expected a mapping from end-effector names to positive numbers")
    effectors = skeleton.end_effectors
    out = {}
    for name, value in weights.items():
        if name not in effectors:
            raise ValueError(f"weights: {name!r} is not an end effector; valid names are {', '.join(effectors)}")
        out[skeleton.index(name)] = checks.positive(value, f"weights[{name!r}]")
    return out


def pole_points(skeleton: Any, poles: Any) -> dict[int, rot.Vec]:
    """Pole points by effector index."""
    if poles is None:
        return {}
    if not isinstance(poles, Mapping):
        raise ValueError("poles: expected a mapping from end-effector names to points")
    effectors = skeleton.end_effectors
    out = {}
    for name, value in poles.items():
        if name not in effectors:
            raise ValueError(f"poles: {name!r} is not an end effector; valid names are {', '.join(effectors)}")
        out[skeleton.index(name)] = tuple(checks.point(value, f"poles[{name!r}]").tolist())
    return out


def degrees_between(a: rot.Quat, b: rot.Quat) -> float:
    """Angle of the rotation between two frames, in degrees."""
    return math.degrees(rot.angle_between(a, b))
