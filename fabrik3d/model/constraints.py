"""Joint constraints: cones, elliptical cones, hinges, twist limits and rigid sub-bases.

Angles are in degrees. A limit on joint ``j`` constrains ``j``'s rotation relative
to its parent's frame (the root: relative to its own rest frame): the *swing* of
the bone from ``j`` to its child (with ``Rigid``, to its first child) and the
*twist* about that bone. Axes are given in world coordinates of the rest pose
and move with the parent's frame. Every limit contains the rest pose.

* ``Cone(max_deg)``: the bone stays within ``max_deg`` of its rest direction.
* ``EllipticalCone(left_deg, right_deg, up_deg, down_deg, right_axis)``: the
  paper's four-quadrant cone. "right" is ``right_axis`` made perpendicular to
  the rest bone, "up" is right × bone. A swing of angle θ toward the direction
  (x, z) in the (right, up) basis maps to (u, v) = θ·(x, z)/|(x, z)|; it is
  allowed when (u/a)² + (v/b)² ≤ 1 with a = right or left, b = up or down by
  quadrant. A swing outside moves to the Euclidean-nearest point of its
  quadrant's quarter ellipse in that chart.
* ``Hinge(axis, min_deg, max_deg)``: the bone stays in the plane perpendicular
  to ``axis`` through the joint, its signed angle from the rest direction
  (right-handed about the axis) within the limits; twist stays at rest. A bone
  along the axis keeps its previous hinge angle.
* ``Twist(min_deg, max_deg)``: rotation of the joint's frame about its bone
  relative to the parent's frame.
* ``Rigid()``: on a joint with several children, keeps the bones leaving it
  fixed in its frame (a pelvis, a chest).

At most one swing limit (Cone, EllipticalCone or Hinge) per joint, not on a
leaf, and on a joint with several children only together with ``Rigid``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model import frames
from fabrik3d.model.frames import JointTree


class Constraint:
    """Base of the joint constraints; ``kind`` is "swing", "twist" or "rigid"."""

    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"type": class name, **constructor arguments}``."""
        out: dict[str, Any] = {"type": type(self).__name__}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out


def _angle(value: Any, field: str, lo: float, hi: float, hi_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{field}: expected a finite number of degrees, got {checks.quoted(value)}")
    v = float(value)
    if v < lo or v > hi or (hi_open and v >= hi):
        bound = f"< {hi:g}" if hi_open else f"<= {hi:g}"
        raise ValueError(f"{field}: must be >= {lo:g} and {bound} degrees, got {v:g}")
    return v


def _axis(value: Any, field: str) -> tuple[float, float, float]:
    try:
        x, y, z = (float(c) for c in value)
    except (TypeError, ValueError):
        raise ValueError(f"{field}: expected three numbers, got {checks.quoted(value)}") from None
    if not all(math.isfinite(c) for c in (x, y, z)) or x * x + y * y + z * z < 1e-18:
        raise ValueError(f"{field}: expected a finite, non-zero vector, got {checks.quoted(value)}")
    return (x, y, z)


def _range(lo: Any, hi: Any) -> tuple[float, float]:
    a = _angle(lo, "min_deg", -180.0, 180.0)
    b = _angle(hi, "max_deg", -180.0, 180.0)
    if a > b:
        raise ValueError(f"min_deg: must be <= max_deg, got {a:g} > {b:g}")
    if not a <= 0.0 <= b:
        raise ValueError(f"min_deg: the limits [{a:g}, {b:g}] must contain the rest pose (0 degrees)")
    return a, b


@dataclass(frozen=True)
class Cone(Constraint):
    """The bone stays within ``max_deg`` (0 <= max_deg < 180) of its rest direction."""

    max_deg: float
    kind: ClassVar[str] = "swing"

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_deg", _angle(self.max_deg, "max_deg", 0.0, 180.0, hi_open=True))


@dataclass(frozen=True)
class EllipticalCone(Constraint):
    """The paper's four-quadrant elliptical cone (module docstring); angles 0 to < 180 degrees."""

    left_deg: float
    right_deg: float
    up_deg: float
    down_deg: float
    right_axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    kind: ClassVar[str] = "swing"

    def __post_init__(self) -> None:
        for name in ("left_deg", "right_deg", "up_deg", "down_deg"):
            object.__setattr__(self, name, _angle(getattr(self, name), name, 0.0, 180.0, hi_open=True))
        object.__setattr__(self, "right_axis", _axis(self.right_axis, "right_axis"))


@dataclass(frozen=True)
class Hinge(Constraint):
    """The bone turns about ``axis`` (world, rest pose) between ``min_deg`` and ``max_deg``."""

    axis: tuple[float, float, float]
    min_deg: float
    max_deg: float
    kind: ClassVar[str] = "swing"

    def __post_init__(self) -> None:
        object.__setattr__(self, "axis", _axis(self.axis, "axis"))
        lo, hi = _range(self.min_deg, self.max_deg)
        object.__setattr__(self, "min_deg", lo)
        object.__setattr__(self, "max_deg", hi)


@dataclass(frozen=True)
class Twist(Constraint):
    """The frame's rotation about its bone, relative to the parent's, within [min_deg, max_deg]."""

    min_deg: float
    max_deg: float
    kind: ClassVar[str] = "twist"

    def __post_init__(self) -> None:
        lo, hi = _range(self.min_deg, self.max_deg)
        object.__setattr__(self, "min_deg", lo)
        object.__setattr__(self, "max_deg", hi)


@dataclass(frozen=True)
class Rigid(Constraint):
    """Keeps the bones leaving a joint with several children fixed in its frame."""

    kind: ClassVar[str] = "rigid"


TYPES: dict[str, type[Constraint]] = {c.__name__: c for c in (Cone, EllipticalCone, Hinge, Twist, Rigid)}


def rest_bend(above: Any, bone: Any, axis: Any) -> float:
    """Degrees from the bone straight on from ``above`` to ``bone``, about ``axis`` (right-handed): a
    hinge's rest angle counted from straight, for a rig bent at rest (an elbow, a knee, a finger's
    middle knuckle). ``above`` ``(3,)`` is the parent's bone into the joint, ``bone`` ``(3,)`` the
    joint's rest bone, ``axis`` ``(3,)`` the hinge's unit axis; 0 when ``above`` lies along ``axis``."""
    a, u, v = (np.asarray(x, dtype=float) for x in (axis, above, bone))
    u = u - float(np.dot(u, a)) * a
    if float(np.linalg.norm(u)) <= 1e-9 * max(float(np.linalg.norm(above)), 1e-300):
        return 0.0
    bend = math.degrees(math.atan2(float(np.dot(a, np.cross(u, v))), float(np.dot(u, v))))
    return bend if abs(bend) > 1e-9 else 0.0  # (rounding reads 0: a straight rest keeps its ranges bit for bit)


def hinge_from_straight(axis: Any, min_deg: float, max_deg: float, bend: float) -> Hinge:
    """A ``Hinge`` about ``axis`` whose range ``[min_deg, max_deg]`` counts from straight, on a joint
    bent ``bend`` degrees at rest (``rest_bend``): the range shifted by ``-bend``, widened where needed
    to keep the rest pose (0) inside it, within [-180, 180]."""
    lo = min(max(min_deg - bend, -180.0), 0.0)
    hi = max(min(max_deg - bend, 180.0), 0.0)
    return Hinge(axis, lo, hi)


def constraint_from_dict(data: Any, where: str) -> Constraint:
    """A constraint from ``{"type": ..., **arguments}``; errors are prefixed with ``where``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object with a 'type'")
    cls = TYPES.get(data.get("type"))  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(
            f"{where}.type: unknown constraint {checks.quoted(data.get('type'))}; types are {checks.names_list(TYPES)}"
        )
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    extra = set(data) - names - {"type"}
    if extra:
        raise ValueError(f"{where}: unknown fields {sorted(extra)} for {cls.__name__}")
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}  # type: ignore[arg-type]
    missing = required - set(data)
    if missing:
        raise ValueError(f"{where}.{sorted(missing)[0]}: missing")
    try:
        return cls(**{k: v for k, v in data.items() if k != "type"})
    except ValueError as exc:
        raise ValueError(f"{where}.{exc}") from None


class JointLimitError(ValueError):
    """A constraint that does not fit its joint; names the joint, the list position and the field."""

    def __init__(self, joint: str, position: int | None, field: str, message: str) -> None:
        self.joint, self.position, self.field, self.message = joint, position, field, message
        at = f"constraints[{position}]" if position is not None else "constraints"
        super().__init__(f"joint {joint!r}: {at}{'.' + field if field else ''}: {message}")


# -- binding constraints to joints: limits in the parent frame's coordinates ------------------


def check_constraints(skeleton: JointTree, constraints: Mapping[str, Any]) -> dict[str, tuple[Constraint, ...]]:
    """Validate ``constraints`` (joint name -> constraint or list) against ``skeleton``.

    Raises:
        JointLimitError / ValueError: naming the joint and the field.
    """
    if not isinstance(constraints, Mapping):
        raise ValueError("constraints: expected a mapping from joint names to constraints")
    out: dict[str, tuple[Constraint, ...]] = {}
    for name, value in constraints.items():
        if name not in skeleton:  # a dict look-up (the names are a tuple)
            raise ValueError(f"constraints: unknown joint {checks.quoted(name)}")
        items = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        j = skeleton.index(name)
        kids = skeleton.bone_children(j)
        seen: dict[str, int] = {}
        for m, c in enumerate(items):
            if not isinstance(c, Constraint):
                raise JointLimitError(name, m, "", f"expected a constraint object, got {checks.quoted(c)}")
            if c.kind in seen:
                raise JointLimitError(name, m, "", f"a joint takes at most one {c.kind} limit")
            seen[c.kind] = m
            if c.kind == "rigid" and len(kids) < 2:
                raise JointLimitError(name, m, "", "Rigid needs a joint with two or more children")
        if "swing" in seen:
            m = seen["swing"]
            if not kids:
                raise JointLimitError(name, m, "", "a swing limit cannot go on a leaf (it has no bone)")
            if len(kids) > 1 and "rigid" not in seen:
                raise JointLimitError(name, m, "", "a swing limit on a joint with several children needs Rigid")
        if items:
            out[name] = items
    return out


def parent_axis(skeleton: JointTree, j: int, axis: rot.Vec) -> rot.Vec:
    """The unit world rest ``axis`` of a limit on joint ``j``, in its parent's rest frame (the root's:
    the world), where the bound limits work (``fabrik3d.solver.limits.bind``)."""
    p = int(skeleton.parents[j])
    to_parent = rot.conj(tuple(skeleton.rest_frames[p].tolist())) if p >= 0 else rot.IDENTITY
    return rot.rotate(to_parent, rot.unit(axis))  # type: ignore[arg-type]


def check_axes(skeleton: JointTree) -> None:
    """Check the axes of the skeleton's limits against its rest bones: an ``EllipticalCone``'s
    ``right_axis`` must not be parallel to the rest bone, a ``Hinge``'s axis must be perpendicular
    to it (within 1e-6).

    Raises:
        JointLimitError: naming the joint and the field.
    """
    local = frames.rest_local(skeleton.parents, skeleton.rest_frames)
    for name, items in skeleton.constraints.items():
        j = skeleton.index(name)
        rest_dir = rot.rotate(local[j], rot.Y_AXIS)
        for m, c in enumerate(items):
            if isinstance(c, EllipticalCone):
                right = parent_axis(skeleton, j, c.right_axis)
                if abs(sum(right[i] * rest_dir[i] for i in range(3))) > 1.0 - 1e-6:
                    raise JointLimitError(name, m, "right_axis", "parallel to the rest bone")
            elif isinstance(c, Hinge):
                axis = parent_axis(skeleton, j, c.axis)
                if abs(sum(axis[i] * rest_dir[i] for i in range(3))) > 1e-6:
                    raise JointLimitError(name, m, "axis", "not perpendicular to the rest bone (within 1e-6)")
