"""Joint limits bound to a rig: the projections (cones, ellipse, hinge, clamp)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabrik3d import rotations as rot
from fabrik3d.model.constraints import Cone, EllipticalCone, Hinge, Rigid, Twist, parent_axis

if TYPE_CHECKING:
    from fabrik3d.model.skeleton import Skeleton


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
    steps, where Eberly's bisection takes 57). ``fabrik3d.batch.math`` takes the same steps on
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


def bind(skeleton: Skeleton, rest_local: Sequence[rot.Quat]) -> list[JointLimits]:
    """Per joint, its limits expressed in its parent's (rest) frame.

    ``rest_local[j]`` is the joint's rest rotation relative to its parent's rest
    frame (for the root, the world). The skeleton has checked the axes
    (``fabrik3d.model.constraints.check_axes``).
    """
    limits = [JointLimits() for _ in skeleton.names]
    for name, items in skeleton.constraints.items():
        j = skeleton.index(name)
        rest_dir = rot.rotate(rest_local[j], rot.Y_AXIS)
        rest_x = rot.rotate(rest_local[j], rot.X_AXIS)
        lim = limits[j]
        for c in items:
            if isinstance(c, Cone):
                lim.swing = _BoundCone(c, rest_dir, rest_x)
            elif isinstance(c, EllipticalCone):
                lim.swing = _BoundEllipse(c, rest_dir, parent_axis(skeleton, j, c.right_axis))
            elif isinstance(c, Hinge):
                lim.swing = _BoundHinge(c, rest_dir, parent_axis(skeleton, j, c.axis))
            elif isinstance(c, Twist):
                lim.twist = (math.radians(c.min_deg), math.radians(c.max_deg))
            elif isinstance(c, Rigid):
                lim.rigid = True
    return limits


class _BoundLock(SwingLimit):
    """A joint held still: its bone keeps one direction (``fabrik3d.solver.rig.Rig.locked``)."""

    def __init__(self, direction: rot.Vec) -> None:
        self.d = direction

    def project(self, d: rot.Vec, previous: rot.Vec | None) -> rot.Vec:
        return self.d


def held(local: rot.Quat, rest_local: rot.Quat, lim: JointLimits) -> JointLimits:
    """The limits that hold a joint at the rotation ``local`` relative to its parent's frame (its
    bone's direction and its twist about the rest bone, as ``limit_frame`` splits them), where its
    rest rotation is ``rest_local``; a rigid joint stays rigid."""
    rest_dir = rot.rotate(rest_local, rot.Y_AXIS)
    tau = rot.twist_angle(rot.mul(local, rot.conj(rest_local)), rest_dir)
    return JointLimits(_BoundLock(rot.rotate(local, rot.Y_AXIS)), (tau, tau), lim.rigid)


def limit_motion(lim: JointLimits, rest_dir: rot.Vec, rest_x: rot.Vec, motion: rot.Quat) -> rot.Quat:
    """A joint's ``motion`` with its swing and twist limits applied: the one per-joint clamp of the
    solver's rigid frames (``ReachingPasses.limit_frame``) and of forward kinematics
    (``fabrik3d.solver.fk.limited_turn``).

    ``motion`` (a unit quaternion, x, y, z, w) is the joint's rotation from its rest pose in its
    parent's frame: ``L · L0⁻¹``, with ``L`` its frame relative to its parent's and ``L0`` the same
    at rest (for the root, its world frame and rest frame). It splits into a swing of the rest bone
    direction ``rest_dir`` (a unit vector in the parent's frame, ``L0·Y``) onto ``d = motion·rest_dir``
    and a twist ``τ`` (radians) about ``rest_dir``; ``lim.swing`` projects ``d`` (a hinge past its
    range: to the nearer stop) and ``lim.twist`` clamps ``τ``. Returns ``swing(rest_dir, d) ·
    twist(rest_dir, τ)``; a bone ending opposite ``rest_dir`` swings a half turn about ``rest_x``
    (``L0·X``). ``fabrik3d.batch``'s ``BatchPasses.limit_frame`` writes these operations out: keep
    the two the same.
    """
    tau = rot.twist_angle(motion, rest_dir)
    d = rot.rotate(motion, rest_dir)
    if lim.swing is not None:
        d = lim.swing.project(d, None)
    if lim.twist is not None:
        tau = clamp_angle(tau, *lim.twist)
    return rot.mul(rot.swing(rest_dir, d, rest_x), rot.axis_angle(rest_dir, tau))
