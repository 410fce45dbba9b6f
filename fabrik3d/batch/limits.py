"""The joint limits' projections (``fabrik3d.solver.limits``) on a batch of problems: cones,
elliptical cones, hinges and the angle clamp, each the scalar one expression for expression
with its branches taken elementwise (``fabrik3d.batch.math``: shapes, ``pick``, ``atan2``), so the
results equal the scalar ones bit for bit. The ellipse's nearest point takes the scalar's
Newton steps (``limits.ellipse_root``), per problem until it stops rising.
"""

from __future__ import annotations

import math

import numpy as np

from fabrik3d.batch import math as bm
from fabrik3d.batch.math import Vec, VecLike
from fabrik3d.solver import limits as lm


@bm.quiet
def clamp_angle(
    phi: np.ndarray, lo: float, hi: float, before: np.ndarray | None = None, has_before: np.ndarray | None = None
) -> np.ndarray:
    """``limits.clamp_angle``: ``phi`` (radians) clamped to [lo, hi] on the circle.

    ``before``: the previous angle, used where ``has_before`` (everywhere when
    ``has_before`` is None); without ``before`` the nearer bound is taken.
    """
    phi = np.asarray(phi, dtype=float)
    inside = (lo <= phi) & (phi <= hi)
    to_lo = (lo - phi) % (2.0 * math.pi)
    from_hi = (phi - hi) % (2.0 * math.pi)
    out = np.where(from_hi <= to_lo, hi, lo)
    if before is not None:
        b = np.where(lo > before, lo, before)  # min(max(before, lo), hi)
        b = np.where(hi < b, hi, b)
        delta = (phi - b + math.pi) % (2.0 * math.pi) - math.pi
        use = delta != 0.0
        if has_before is not None:
            use = use & has_before
        out = np.where(use, np.where(delta > 0, hi, lo), out)
    return np.where(inside, phi, out)


@bm.quiet
def project(limit: lm.SwingLimit, d: Vec, previous: Vec | None = None, has_previous: np.ndarray | None = None) -> Vec:
    """``limit.project(d, previous)`` for a bound Cone, EllipticalCone or Hinge (parent-frame unit vectors).

    ``previous``: the last allowed directions, used where ``has_previous``
    (everywhere when None; only a hinge uses them).
    """
    if isinstance(limit, lm._BoundCone):
        return _project_cone(limit, d)
    if isinstance(limit, lm._BoundEllipse):
        return _project_ellipse(limit, d)
    if isinstance(limit, lm._BoundHinge):
        return _project_hinge(limit, d, previous, has_previous)
    raise TypeError(f"limit: expected a bound Cone, EllipticalCone or Hinge, got {type(limit).__name__}")


def _dot(d: VecLike, e: VecLike) -> np.ndarray:
    return d[0] * e[0] + d[1] * e[1] + d[2] * e[2]


def _project_cone(limit: lm._BoundCone, d: Vec) -> Vec:
    d0 = limit.d0
    k = _dot(d, d0)
    perp = (d[0] - k * d0[0], d[1] - k * d0[1], d[2] - k * d0[2])
    inside = k >= limit.cos_max
    if not limit.max_rad >= 0.02:  # narrow cones measure the angle
        inside &= bm.atan2(np.sqrt(perp[0] * perp[0] + perp[1] * perp[1] + perp[2] * perp[2]), k) <= limit.max_rad
    w = bm.unit_or(perp, limit.fallback)
    c, s = limit.c, limit.s
    return bm.pick(inside, d, (c * d0[0] + s * w[0], c * d0[1] + s * w[1], c * d0[2] + s * w[2]))  # type: ignore[return-value]


def _project_ellipse(limit: lm._BoundEllipse, d: Vec) -> Vec:
    d0, r, up = limit.d0, limit.r, limit.up
    x = _dot(d, r)
    z = _dot(d, up)
    y = _dot(d, d0)
    rho = np.sqrt(x * x + z * z)
    theta = bm.atan2(rho, y)
    along = rho < 1e-15
    keep = along & (y > 0)
    x, z, rho = np.where(along, 1.0, x), np.where(along, 0.0, z), np.where(along, 1.0, rho)  # opposite: "right"
    u, v = theta * x / rho, theta * z / rho
    axes = limit.axes
    a = np.where(u >= 0, axes[0], axes[1])
    b = np.where(v >= 0, axes[2], axes[3])
    keep |= _inside_ellipse(np.abs(u), np.abs(v), a, b)
    out = np.flatnonzero(~keep)  # the nearest point only where it is used
    pu, pv = np.zeros_like(u), np.zeros_like(v)
    pu[out], pv[out] = nearest_on_ellipse(np.abs(u[out]), np.abs(v[out]), a[out], b[out])
    pu, pv = np.copysign(pu, u), np.copysign(pv, v)
    t = np.sqrt(pu * pu + pv * pv)
    c, s = np.cos(t), np.sin(t) / t
    moved = tuple(c * d0[i] + s * (pu * r[i] + pv * up[i]) for i in range(3))
    return bm.pick(keep, d, bm.pick(t < 1e-15, d0, moved))  # type: ignore[return-value]


def _hinge_angle(limit: lm._BoundHinge, d: Vec) -> tuple[np.ndarray, np.ndarray]:
    """``_BoundHinge.angle``: ``(phi, ok)``; ``ok`` is False along the axis (``None`` there)."""
    c = d[0] * limit.d0[0] + d[1] * limit.d0[1] + d[2] * limit.d0[2]
    s = d[0] * limit.b[0] + d[1] * limit.b[1] + d[2] * limit.b[2]
    ok = ~(c * c + s * s < 1e-20)
    return bm.atan2(s, c), ok


def _project_hinge(limit: lm._BoundHinge, d: Vec, previous: Vec | None, has_previous: np.ndarray | None) -> Vec:
    phi, ok = _hinge_angle(limit, d)
    if previous is None:
        before, has_before = None, None
        phi = np.where(ok, phi, 0.0)
    else:
        before, has_before = _hinge_angle(limit, previous)
        if has_previous is not None:
            has_before = has_before & has_previous
        phi = np.where(ok, phi, np.where(has_before & (before != 0.0), before, 0.0))  # before or 0.0
    phi = clamp_angle(phi, limit.lo, limit.hi, before, has_before)
    c, s = np.cos(phi), np.sin(phi)
    return bm.full(tuple(c * limit.d0[i] + s * limit.b[i] for i in range(3)), d)  # type: ignore[return-value]


def _inside_ellipse(u: np.ndarray, v: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``limits._inside_ellipse`` on arrays."""
    a = np.where(a > lm._TINY_ANGLE, a, 0.0)
    b = np.where(b > lm._TINY_ANGLE, b, 0.0)
    segment = ((a <= 0.0) & (u <= 1e-15) & (v <= b)) | ((b <= 0.0) & (v <= 1e-15) & (u <= a))
    ua, vb = u / a, v / b
    ellipse = ua * ua + vb * vb <= 1.0 + 1e-12
    return np.where((a <= 0.0) | (b <= 0.0), segment, ellipse)


@bm.quiet
def nearest_on_ellipse(y0: np.ndarray, y1: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``limits.nearest_on_ellipse``: per problem, the nearest point of the first-quadrant
    ellipse (x/a)² + (y/b)² = 1 to (y0, y1) >= 0 (all four ``(m,)`` arrays or floats)."""
    y0, y1, a, b = bm.full((y0, y1, a, b), ())
    a = np.where(a > lm._TINY_ANGLE, a, 0.0)
    b = np.where(b > lm._TINY_ANGLE, b, 0.0)
    segment = (a <= 0.0) | (b <= 0.0)
    on_segment = bm.pick(a <= 0.0, (0.0, np.where(b < y1, b, y1)), (np.where(a < y0, a, y0), 0.0))
    swap = ~segment & (a < b)  # the recursion with the axes swapped
    x0, x1 = _nearest_wide(~segment, *bm.pick(swap, (y1, y0, b, a), (y0, y1, a, b)))
    x0, x1 = bm.pick(swap, (x1, x0), (x0, x1))
    return bm.pick(segment, on_segment, (x0, x1))  # type: ignore[return-value]


def _nearest_wide(
    live: np.ndarray, y0: np.ndarray, y1: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``nearest_on_ellipse`` past its segment and swap cases: a >= b > 0 where ``live``."""
    off_axis = y1 > 1e-12 * b
    z0, z1 = y0 / a, y1 / b
    g = z0 * z0 + z1 * z1 - 1.0
    ab = a / b
    r0 = ab * ab
    n0 = r0 * z0
    s0, s1 = z1 - 1.0, np.where(g > 0, np.sqrt(n0 * n0 + z1 * z1) - 1.0, 0.0)
    s = _newton(live & off_axis & (y0 > 0.0) & (g != 0.0), n0, z1, r0, s0, s1)
    fit = bm.pick(g == 0.0, (y0, y1), (r0 * y0 / (s + r0), y1 / (s + 1.0)))
    fit = bm.pick(y0 > 0.0, fit, (0.0, b))
    numer, denom = a * y0, a * a - b * b
    x = numer / denom
    one = 1.0 - x * x
    on_axis = bm.pick(numer < denom, (a * x, b * np.sqrt(np.where(one > 0.0, one, 0.0))), (a, 0.0))
    return bm.pick(off_axis, fit, on_axis)  # type: ignore[return-value]


def _newton(
    run: np.ndarray, n0: np.ndarray, z1: np.ndarray, r0: np.ndarray, s0: np.ndarray, s1: np.ndarray
) -> np.ndarray:
    """``limits.ellipse_root`` where ``run``: each round, the problems still rising."""
    s = np.zeros_like(n0)
    idx = np.flatnonzero(run)
    n0, z1, r0, cur, s1 = n0[idx], z1[idx], r0[idx], s0[idx], s1[idx]
    s[idx] = cur
    for _ in range(lm.ELLIPSE_STEPS):
        if idx.size == 0:
            break
        p, q = cur + r0, cur + 1.0
        u, v = n0 / p, z1 / q
        g = u * u + v * v - 1.0
        nxt = np.minimum(cur + 0.5 * g / (u * u / p + v * v / q), s1)
        go = (nxt > cur) & (g > 0.0)
        s[idx[go]] = nxt[go]
        idx, n0, z1, r0, cur, s1 = idx[go], n0[go], z1[go], r0[go], nxt[go], s1[go]
    return s
