"""Where an object stands in a stage of several: a rigid placement, and the rigid transforms of props.

A figure's skeleton, targets and keys are in the figure's own coordinates (its scene file's); a
``Placement`` puts them in the stage's world: turned ``facing`` degrees about +Y (a right-handed turn
seen from above: +Z toward +X), then moved by ``position``. So a figure is placed and turned without
solving anything.

A ``Transform`` is a position, a rotation (a unit quaternion ``(x, y, z, w)``) and a uniform scale:
a prop's, or a prop's relative to the joint frame that holds it. Shapes: points ``(..., 3)`` in
metres (scene units), quaternions ``(..., 4)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot

# The largest placement offset or prop position accepted, scene units (a stage is a room, not a planet).
MAX_PLACE = 1e4
# The smallest and largest uniform scale of a prop.
SCALE_RANGE = (1e-3, 1e3)


def quat_array(value: Any, where: str) -> np.ndarray:
    """A rotation ``(4,)`` ``(x, y, z, w)``: four finite numbers, not all zero, returned normalised."""
    try:
        q = checks.real_array(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: expected a quaternion [x, y, z, w], got {checks.quoted(value)}") from None
    if q.shape != (4,) or not np.all(np.isfinite(q)) or float(np.linalg.norm(q)) < 1e-9:
        raise ValueError(f"{where}: expected a quaternion [x, y, z, w] of four finite numbers, not all 0")
    norm = float(np.linalg.norm(q))
    return q if abs(norm - 1.0) < 1e-12 else q / norm  # (a unit one as given: a file round-trips exactly)


def place_point(value: Any, where: str) -> np.ndarray:
    """A position ``(3,)`` within ``MAX_PLACE`` of the origin."""
    p = checks.point(value, where)
    if float(np.abs(p).max()) > MAX_PLACE:
        raise ValueError(f"{where}: coordinates must be within ±{MAX_PLACE:g} scene units (got {p.tolist()})")
    return p


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product ``a·b`` of quaternions ``(..., 4)`` (broadcast), ``rotations.mul`` on arrays."""
    qa, qb = np.moveaxis(np.asarray(a, float), -1, 0), np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack(rot.mul(tuple(qa), tuple(qb)), axis=-1)  # type: ignore[arg-type]


def quat_conj(q: np.ndarray) -> np.ndarray:
    """The inverse of unit quaternions ``(..., 4)``."""
    return np.asarray(q, float) * np.array([-1.0, -1.0, -1.0, 1.0])


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Points ``(..., 3)`` turned by the unit quaternion ``q`` ``(4,)`` (or ``(..., 4)``, broadcast)."""
    m = rot.quat_to_matrix(np.asarray(q, float))
    return np.einsum("...ij,...j->...i", m, np.asarray(v, float))


@dataclass(frozen=True, eq=False)  # (compared by identity: numpy fields)
class Transform:
    """A rigid transform with a uniform scale: ``x -> position + rotation·(scale·x)``."""

    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", place_point(self.position, "position"))
        object.__setattr__(self, "rotation", quat_array(self.rotation, "rotation"))
        s = checks.number(self.scale, "scale", "a number")
        if not SCALE_RANGE[0] <= s <= SCALE_RANGE[1]:
            raise ValueError(f"scale: expected {SCALE_RANGE[0]:g} to {SCALE_RANGE[1]:g}, got {s:g}")
        object.__setattr__(self, "scale", s)

    def apply(self, points: np.ndarray) -> np.ndarray:
        """Points ``(..., 3)`` of the local frame, in the outer one."""
        return self.position + rotate(self.rotation, self.scale * np.asarray(points, float))

    def then(self, inner: Transform) -> Transform:
        """The transform of ``inner``'s local frame through this one (``self ∘ inner``)."""
        return Transform(self.apply(inner.position), quat_mul(self.rotation, inner.rotation), self.scale * inner.scale)

    def inverse(self) -> Transform:
        """The transform back (``self.inverse().then(self)`` is the identity)."""
        q = quat_conj(self.rotation)
        return Transform(-rotate(q, self.position) / self.scale, q, 1.0 / self.scale)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"position": [float(x) for x in self.position],
                               "rotation": [float(x) for x in self.rotation]}  # fmt: skip
        if self.scale != 1.0:
            out["scale"] = self.scale
        return out


def frame_transform(position: np.ndarray, rotation: np.ndarray) -> Transform:
    """A joint's world frame (``SolveResult.positions[j]``, ``.rotations[j]``) as a ``Transform``."""
    return Transform(np.asarray(position, float), np.asarray(rotation, float))


@dataclass(frozen=True, eq=False)  # (compared by identity: numpy fields)
class Placement:
    """A figure's place in the stage: turned ``facing`` degrees about +Y, then moved by ``position`` (metres)."""

    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    facing: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", place_point(self.position, "position"))
        f = checks.number(self.facing, "facing", "an angle in degrees")
        if abs(f) > 3600:
            raise ValueError(f"facing: expected an angle in degrees within ±3600, got {f:g}")
        object.__setattr__(self, "facing", f)

    @property
    def rotation(self) -> np.ndarray:
        """The turn ``(4,)``, a quaternion about +Y."""
        half = math.radians(self.facing) / 2
        return np.array([0.0, math.sin(half), 0.0, math.cos(half)])

    @property
    def transform(self) -> Transform:
        return Transform(self.position, self.rotation)

    @property
    def is_identity(self) -> bool:
        return not self.position.any() and self.facing % 360.0 == 0.0

    def to_world(self, points: np.ndarray) -> np.ndarray:
        """The figure's points ``(..., 3)`` in the stage's world."""
        return self.position + rotate(self.rotation, points)

    def to_local(self, points: np.ndarray) -> np.ndarray:
        """World points ``(..., 3)`` in the figure's own coordinates."""
        return rotate(quat_conj(self.rotation), np.asarray(points, float) - self.position)

    def frames_to_world(self, rotations: np.ndarray) -> np.ndarray:
        """The figure's joint frames ``(..., 4)`` in the world."""
        return quat_mul(self.rotation, rotations)
