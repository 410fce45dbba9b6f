"""Targets for ``solve``: points, or ``Target`` with an orientation; checked at the boundary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

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

    @classmethod
    def at(cls, position: np.ndarray) -> Target:
        """A target at ``position`` without an orientation; ``position`` is already checked (``(3,)``
        float64, finite, bounded: ``checks.point``'s) and becomes the target's own."""
        target = object.__new__(cls)
        for attribute, value in (("position", position), ("orientation", None), ("weight", 1.0)):
            object.__setattr__(target, attribute, value)
        return target

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", checks.point(self.position, "position"))
        if self.orientation is not None:
            object.__setattr__(self, "orientation", unit_quaternion(self.orientation, "orientation"))
        w = (
            self.weight
            if type(self.weight) is float and 0.0 < self.weight <= 1.0
            else checks.positive(self.weight, "weight")
        )
        if w > 1.0:
            raise ValueError(f"weight: must be in (0, 1], got {w:g}")
        object.__setattr__(self, "weight", w)


def unit_quaternion(value: Any, name: str) -> np.ndarray:
    """A ``(4,)`` unit quaternion (x, y, z, w), or ``ValueError`` naming ``name``."""
    try:
        q = checks.real_array(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected a quaternion (x, y, z, w), got {checks.quoted(value)}") from None
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        raise ValueError(f"{name}: expected four finite numbers (x, y, z, w), got {checks.quoted(value)}")
    if not np.abs(q).max() <= 2.0:  # (far from unit: its length would overflow)
        raise ValueError(f"{name}: not a unit quaternion (a component is {np.abs(q).max():.6g})")
    # (written out, as ``solve_batch`` normalises its (B, 4) orientations: the same floats)
    length = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if abs(float(length) - 1.0) > 1e-6:
        raise ValueError(f"{name}: not a unit quaternion (length {length:.6g})")
    return q / length


class Goal(NamedTuple):
    """A checked target as plain floats: position, optional orientation, orientation weight."""

    position: rot.Vec
    orientation: rot.Quat | None
    weight: float


def goal(value: Any, name: str) -> Goal:
    """A ``Goal`` from a point or a ``Target``."""
    if isinstance(value, Target):
        q = None if value.orientation is None else tuple(value.orientation.tolist())
        return Goal(tuple(value.position.tolist()), q, value.weight)  # type: ignore[arg-type]
    return Goal(checks.vec(value, name), None, 1.0)


def by_effector(skeleton: Any, value: Any, argument: str, what: str) -> list[tuple[int, str, Any]]:
    """``(index, name, item)`` for each entry of the mapping ``value``, in skeleton order.

    Raises ``ValueError`` naming ``argument`` when ``value`` is not a mapping (``what``
    says what it maps to) or a key is not an end effector (listing the valid names).
    """
    if type(value) is not dict and not isinstance(value, Mapping):
        raise ValueError(f"{argument}: expected a mapping from end-effector names to {what}")
    effectors = skeleton.end_effectors
    for name in value:
        if not skeleton.is_effector(name):
            raise ValueError(
                f"{argument}: {checks.quoted(name)} is not an end effector of this skeleton; "
                f"valid names are {checks.names_list(effectors)}"
            )
    return [(skeleton.index(n), n, value[n]) for n in effectors if n in value]


def goals(skeleton: Any, targets: Any) -> dict[int, Goal]:
    """Targets by effector index, in skeleton order; ``ValueError`` listing valid names."""
    items = by_effector(skeleton, targets, "targets", "points or Targets")
    return {j: goal(item, f"targets[{n!r}]") for j, n, item in items}


def effector_weights(skeleton: Any, weights: Any) -> dict[int, float] | None:
    """Centroid weights by effector index (``None`` for the plain mean)."""
    if weights is None:
        return None
    items = by_effector(skeleton, weights, "weights", "positive numbers")
    return {j: checks.positive(item, f"weights[{n!r}]") for j, n, item in items}


def pole_points(skeleton: Any, poles: Any) -> dict[int, rot.Vec]:
    """Pole points by effector index."""
    if poles is None:
        return {}
    items = by_effector(skeleton, poles, "poles", "points")
    return {j: tuple(checks.point(item, f"poles[{n!r}]").tolist()) for j, n, item in items}  # type: ignore[misc]


def degrees_between(a: rot.Quat, b: rot.Quat) -> float:
    """Angle of the rotation between two frames, in degrees."""
    return math.degrees(rot.angle_between(a, b))


def pin(targets: Mapping[str, Any], skeleton: Any, positions: Any, name: str) -> dict[str, Any]:
    """``targets`` with effector ``name`` pinned where it is in the pose ``positions`` (``(n, 3)``,
    scene units): a new dict; ``ValueError`` naming ``name`` if it is not an end effector."""
    if not skeleton.is_effector(name):
        names = checks.names_list(skeleton.end_effectors)
        raise ValueError(f"pin: {checks.quoted(name)} is not an end effector; valid names are {names}")
    xs, ys, zs = checks.columns(positions, "positions")
    if len(xs) != len(skeleton):
        raise ValueError(f"positions: expected shape ({len(skeleton)}, 3), got {np.shape(positions)}")
    j = skeleton.index(name)
    return {**targets, name: np.array([xs[j], ys[j], zs[j]])}


def free(targets: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``targets`` without effector ``name``'s target (a new dict; nothing happens if it has none)."""
    return {k: v for k, v in targets.items() if k != name}
