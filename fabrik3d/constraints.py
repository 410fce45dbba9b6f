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
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar

from fabrik3d import rotations as rot

if TYPE_CHECKING:
    from fabrik3d.skeleton import Skeleton


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
        raise ValueError(f"{field}: expected a finite number of degrees, got {value!r}")
    v = float(value)
    if v < lo or v > hi or (hi_open and v >= hi):
        bound = f"< {hi:g}" if hi_open else f"<= {hi:g}"
        raise ValueError(f"{field}: must be >= {lo:g} and {bound} degrees, got {v:g}")
    return v


def _axis(value: Any, field: str) -> tuple[float, float, float]:
    try:
        x, y, z = (float(c) for c in value)
    except (TypeError, ValueError):
        raise ValueError(f"{field}: expected three numbers, got {value!r}") from None
    if not all(math.isfinite(c) for c in (x, y, z)) or x * x + y * y + z * z < 1e-18:
        raise ValueError(f"{field}: expected a finite, non-zero vector, got {value!r}")
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


def constraint_from_dict(data: Any, where: str) -> Constraint:
    """A constraint from ``{"type": ..., **arguments}``; errors are prefixed with ``where``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object with a 'type'")
    cls = TYPES.get(data.get("type"))  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"{where}.type: unknown constraint {data.get('type')!r}; types are {', '.join(TYPES)}")
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


class SwingLimit:
    """A swing limit of one joint, in parent-frame coordinates (unit vectors as tuples)."""

    def project(self, d: rot.Vec, previous: rot.Vec | None) -> rot.Vec:
        """The allowed bone direction nearest to ``d`` (``previous``: last allowed one)."""
        raise NotImplementedError


class _BoundCone(SwingLimit):
    def __init__(self, c: Cone, rest_dir: rot.Vec, rest_x: rot.Vec) -> None:
        self.d0 = rest_dir
        self.cos_max = math.cos(math.radians(c.max_deg))
        self.max_rad = math.radians(c.max_deg)
        self.c, self.s = math.cos(math.radians(c.max_deg)), math.sin(math.radians(c.max_deg))
        self.fallback = _perp(rest_x, rest_dir)

    def project(self, d: rot.Vec, previous: rot.Vec | None) -> rot.Vec:
        d0 = self.d0
        k = d[0] * d0[0] + d[1] * d0[1] + d[2] * d0[2]
        perp = (d[0] - k * d0[0], d[1] - k * d0[1], d[2] - k * d0[2])
        if k >= self.cos_max and (
            self.max_rad >= 0.02
            or math.atan2(math.sqrt(perp[0] * perp[0] + perp[1] * perp[1] + perp[2] * perp[2]), k) <= self.max_rad
        ):  # (a cosine cannot tell angles apart below ~1e-8 rad: narrow cones measure the angle)
            return d
        w = rot.unit(perp) or self.fallback
        c, s = self.c, self.s
        return (c * d0[0] + s * w[0], c * d0[1] + s * w[1], c * d0[2] + s * w[2])


class _BoundEllipse(SwingLimit):
    def __init__(self, c: EllipticalCone, rest_dir: rot.Vec, right: rot.Vec) -> None:
        self.d0 = rest_dir
        self.r = _perp(right, rest_dir)
        d0, r = rest_dir, self.r
        self.up = (r[1] * d0[2] - r[2] * d0[1], r[2] * d0[0] - r[0] * d0[2], r[0] * d0[1] - r[1] * d0[0])
        self.axes = tuple(math.radians(v) for v in (c.right_deg, c.left_deg, c.up_deg, c.down_deg))

    def project(self, d: rot.Vec, previous: rot.Vec | None) -> rot.Vec:
        d0, r, up = self.d0, self.r, self.up
        x = d[0] * r[0] + d[1] * r[1] + d[2] * r[2]
        z = d[0] * up[0] + d[1] * up[1] + d[2] * up[2]
        y = d[0] * d0[0] + d[1] * d0[1] + d[2] * d0[2]
        rho = math.sqrt(x * x + z * z)  # (not hypot: the batch solve's numpy form gives the same floats)
        theta = math.atan2(rho, y)
        if rho < 1e-15:
            if y > 0:
                return d
            x, z, rho = 1.0, 0.0, 1.0  # exactly opposite: measured toward "right"
        u, v = theta * x / rho, theta * z / rho
        a = self.axes[0] if u >= 0 else self.axes[1]
        b = self.axes[2] if v >= 0 else self.axes[3]
        if _inside_ellipse(abs(u), abs(v), a, b):
            return d
        pu, pv = nearest_on_ellipse(abs(u), abs(v), a, b)
        pu, pv = math.copysign(pu, u), math.copysign(pv, v)
        t = math.sqrt(pu * pu + pv * pv)
        if t < 1e-15:
            return d0
        c, s = math.cos(t), math.sin(t) / t
        return tuple(c * d0[i] + s * (pu * r[i] + pv * up[i]) for i in range(3))  # type: ignore[return-value]


class _BoundHinge(SwingLimit):
    def __init__(self, h: Hinge, rest_dir: rot.Vec, axis: rot.Vec) -> None:
        self.a, self.d0 = _perp(axis, rest_dir), rest_dir
        a, d0 = self.a, rest_dir
        self.b = (a[1] * d0[2] - a[2] * d0[1], a[2] * d0[0] - a[0] * d0[2], a[0] * d0[1] - a[1] * d0[0])
        self.lo, self.hi = math.radians(h.min_deg), math.radians(h.max_deg)

    def angle(self, d: rot.Vec) -> float | None:
        """Signed hinge angle of ``d`` in radians, or ``None`` along the axis."""
        c = d[0] * self.d0[0] + d[1] * self.d0[1] + d[2] * self.d0[2]
        s = d[0] * self.b[0] + d[1] * self.b[1] + d[2] * self.b[2]
        if c * c + s * s < 1e-20:
            return None
        return math.atan2(s, c)

    def project(self, d: rot.Vec, previous: rot.Vec | None) -> rot.Vec:
        phi = self.angle(d)
        before = self.angle(previous) if previous is not None else None
        if phi is None:
            phi = before or 0.0
        phi = clamp_angle(phi, self.lo, self.hi, before)
        c, s = math.cos(phi), math.sin(phi)
        return tuple(c * self.d0[i] + s * self.b[i] for i in range(3))  # type: ignore[return-value]


def clamp_angle(phi: float, lo: float, hi: float, before: float | None = None) -> float:
    """``phi`` (radians) clamped to [lo, hi] on the circle.

    Outside, the bound first met on the shortest way from the angle ``before`` (so
    a target swinging round behind a hinge does not make it flip from one bound to
    the other), or without ``before`` the nearer bound.
    """
    if lo <= phi <= hi:
        return phi
    two_pi = 2.0 * math.pi
    if before is not None:
        before = min(max(before, lo), hi)
        delta = (phi - before + math.pi) % two_pi - math.pi
        if delta != 0.0:  # (0.0 when phi is off the range only by rounding: the nearer bound)
            return hi if delta > 0 else lo
    to_lo = (lo - phi) % two_pi
    from_hi = (phi - hi) % two_pi
    return hi if from_hi <= to_lo else lo


# Elliptical-cone angles below this (radians) count as 0: the chart's ratios would overflow.
_TINY_ANGLE = 1e-12


def _inside_ellipse(u: float, v: float, a: float, b: float) -> bool:
    a = a if a > _TINY_ANGLE else 0.0
    b = b if b > _TINY_ANGLE else 0.0
    if a <= 0.0 or b <= 0.0:
        return (a <= 0.0 and u <= 1e-15 and v <= b) or (b <= 0.0 and v <= 1e-15 and u <= a)
    ua, vb = u / a, v / b
    return ua * ua + vb * vb <= 1.0 + 1e-12


# Newton's steps toward the ellipse's Lagrange parameter: at most this many (about 20 are taken).
ELLIPSE_STEPS = 200


def ellipse_root(n0: float, z1: float, r0: float, s0: float, s1: float) -> float:
    """The root of ``g(s) = (n0/(s+r0))² + (z1/(s+1))² − 1`` in ``[s0, s1]`` (``g(s0) >= 0``).

    ``g`` is convex and decreasing for ``s > -1``, so Newton's steps from ``s0`` rise to the
    root without passing it; they stop where one no longer rises (to the last bits: about 20
    steps, where Eberly's bisection takes 57). ``fabrik3d.batch_math`` takes the same steps on
    arrays, with the same floats.
    """
    s = s0
    for _ in range(ELLIPSE_STEPS):
        p, q = s + r0, s + 1.0
        u, v = n0 / p, z1 / q
        g = u * u + v * v - 1.0
        step = min(s + 0.5 * g / (u * u / p + v * v / q), s1)
        if not (step > s and g > 0.0):
            break
        s = step
    return s


def nearest_on_ellipse(y0: float, y1: float, a: float, b: float) -> tuple[float, float]:
    """Nearest point of the first-quadrant ellipse (x/a)² + (y/b)² = 1 to (y0, y1) >= 0.

    Eberly's method on the Lagrange parameter ``s`` (the root of ``ellipse_root``'s
    function), with Newton's steps instead of his bisection. Zero semi-axes make the
    ellipse a segment.
    """
    a = a if a > _TINY_ANGLE else 0.0
    b = b if b > _TINY_ANGLE else 0.0
    if a <= 0.0 or b <= 0.0:
        return (0.0, min(y1, b)) if a <= 0.0 else (min(y0, a), 0.0)
    if a < b:
        x1, x0 = nearest_on_ellipse(y1, y0, b, a)
        return x0, x1
    if y1 > 1e-12 * b:  # (a smaller y1 counts as 0: the bisection below would divide by ~0)
        if y0 > 0.0:
            z0, z1 = y0 / a, y1 / b
            g = z0 * z0 + z1 * z1 - 1.0
            if g == 0.0:
                return y0, y1
            ab = a / b
            r0 = ab * ab
            n0 = r0 * z0
            s1 = math.sqrt(n0 * n0 + z1 * z1) - 1.0 if g > 0 else 0.0
            s = ellipse_root(n0, z1, r0, z1 - 1.0, s1)
            return r0 * y0 / (s + r0), y1 / (s + 1.0)
        return 0.0, b
    numer, denom = a * y0, a * a - b * b
    if numer < denom:
        x = numer / denom
        return a * x, b * math.sqrt(max(0.0, 1.0 - x * x))
    return a, 0.0


def _perp(v: rot.Vec, to: rot.Vec) -> rot.Vec:
    """``v`` made perpendicular to the unit ``to`` and normalised (any perpendicular if parallel)."""
    k = v[0] * to[0] + v[1] * to[1] + v[2] * to[2]
    w = rot.unit((v[0] - k * to[0], v[1] - k * to[1], v[2] - k * to[2]))
    if w is None:
        w = rot.unit(rot._perpendicular(to))
    assert w is not None
    return w


@dataclass
class JointLimits:
    """The bound limits of one joint (parent-frame coordinates; radians)."""

    swing: SwingLimit | None = None
    twist: tuple[float, float] | None = None
    rigid: bool = False


def check_constraints(skeleton: Skeleton, constraints: Mapping[str, Any]) -> dict[str, tuple[Constraint, ...]]:
    """Validate ``constraints`` (joint name -> constraint or list) against ``skeleton``.

    Raises:
        JointLimitError / ValueError: naming the joint and the field.
    """
    if not isinstance(constraints, Mapping):
        raise ValueError("constraints: expected a mapping from joint names to constraints")
    out: dict[str, tuple[Constraint, ...]] = {}
    for name, value in constraints.items():
        if name not in skeleton.names:
            raise ValueError(f"constraints: unknown joint {name!r}")
        items = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        j = skeleton.index(name)
        kids = skeleton.children(j)
        seen: dict[str, int] = {}
        for m, c in enumerate(items):
            if not isinstance(c, Constraint):
                raise JointLimitError(name, m, "", f"expected a constraint object, got {c!r}")
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


def bind(skeleton: Skeleton, rest_local: Sequence[rot.Quat]) -> list[JointLimits]:
    """Per joint, its limits expressed in its parent's (rest) frame.

    ``rest_local[j]`` is the joint's rest rotation relative to its parent's rest
    frame (for the root, the world). Raises ``JointLimitError`` for a hinge axis
    not perpendicular to the rest bone.
    """
    limits = [JointLimits() for _ in skeleton.names]
    r0 = skeleton.rest_frames.tolist()
    for name, items in skeleton.constraints.items():
        j = skeleton.index(name)
        p = int(skeleton.parents[j])
        to_parent = rot.conj(tuple(r0[p])) if p >= 0 else rot.IDENTITY  # world -> parent's rest frame
        rest_dir = rot.rotate(rest_local[j], (0.0, 1.0, 0.0))
        rest_x = rot.rotate(rest_local[j], (1.0, 0.0, 0.0))
        lim = limits[j]
        for m, c in enumerate(items):
            if isinstance(c, Cone):
                lim.swing = _BoundCone(c, rest_dir, rest_x)
            elif isinstance(c, EllipticalCone):
                right = rot.rotate(to_parent, rot.unit(c.right_axis))  # type: ignore[arg-type]
                if abs(sum(right[i] * rest_dir[i] for i in range(3))) > 1.0 - 1e-6:
                    raise JointLimitError(name, m, "right_axis", "parallel to the rest bone")
                lim.swing = _BoundEllipse(c, rest_dir, right)
            elif isinstance(c, Hinge):
                axis = rot.rotate(to_parent, rot.unit(c.axis))  # type: ignore[arg-type]
                if abs(sum(axis[i] * rest_dir[i] for i in range(3))) > 1e-6:
                    raise JointLimitError(name, m, "axis", "not perpendicular to the rest bone (within 1e-6)")
                lim.swing = _BoundHinge(c, rest_dir, axis)
            elif isinstance(c, Twist):
                lim.twist = (math.radians(c.min_deg), math.radians(c.max_deg))
            elif isinstance(c, Rigid):
                lim.rigid = True
    return limits
