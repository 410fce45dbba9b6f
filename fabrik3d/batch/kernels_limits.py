"""The compiled backends' kernel source for joint limits: ``fabrik3d.rotations``' helpers and the limits'
projections (``fabrik3d.solver.limits``: cones, elliptical cones, hinges, the angle clamp) on scalars.

Each function is its scalar namesake expression for expression, in the same order, with its branches
as branches (one problem at a time), so its floats are the scalar ones bit for bit: ``+ - * /`` and
``sqrt`` are correctly rounded in both, and ``sin``, ``cos`` and ``atan2`` are the C library's in both
(CPython's ``math`` and numba call the same functions; the CPU target compiles without fast-math).
Vectors are tuples ``(x, y, z)`` of floats, quaternions ``(x, y, z, w)``; a result that the scalar code gives as
``None`` is a flag (``ok``) beside the values.

A joint's swing limit is a kind (``NONE``, ``CONE``, ``ELLIPSE``, ``HINGE``) and a row of ``LIMIT_WIDTH``
floats (``limit_arrays``): a cone ``d0 (3), cos_max, max_rad, c, s, fallback (3)``; an elliptical cone
``d0 (3), r (3), up (3), axes (4)``; a hinge ``d0 (3), b (3), lo, hi, a (3)`` (``a``: its axis).
``build_limits(jit)`` passes each function through ``jit`` (``numba.njit``, or nothing: plain Python,
which the tests use) and returns them by name.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.rotations import OPPOSITE2, TINY2
from fabrik3d.solver import limits as lm
from fabrik3d.solver.rig import Rig

NONE, CONE, ELLIPSE, HINGE = 0, 1, 2, 3
LIMIT_WIDTH = 13


def limit_row(s: lm.SwingLimit | None) -> tuple[int, np.ndarray] | None:
    """A swing limit's kind and row ``(LIMIT_WIDTH,)`` (see the module docstring; ``NONE`` for no limit), or
    ``None`` for a limit of another kind (a held joint's lock)."""
    row = np.zeros(LIMIT_WIDTH)
    if s is None:
        return NONE, row
    if type(s) is lm._BoundCone:
        kind, values = CONE, (*s.d0, s.cos_max, s.max_rad, s.c, s.s, *s.fallback)
    elif type(s) is lm._BoundEllipse:
        kind, values = ELLIPSE, (*s.d0, *s.r, *s.up, *s.axes)
    elif type(s) is lm._BoundHinge:
        kind, values = HINGE, (*s.d0, *s.b, s.lo, s.hi, *s.a)
    else:
        return None
    row[: len(values)] = values
    return kind, row


def limit_arrays(r: Rig) -> tuple[np.ndarray, np.ndarray] | None:
    """Per joint of ``r``, its swing limit's kind ``(n,)`` int64 and row ``(n, LIMIT_WIDTH)`` (``limit_row``);
    ``None`` if a joint's limit is of another kind."""
    got = [limit_row(lim.swing) for lim in r.limits]
    if any(g is None for g in got):
        return None
    return np.array([g[0] for g in got], dtype=np.int64), np.array([g[1] for g in got]).reshape(len(got), LIMIT_WIDTH)


@functools.cache
def build_limits(jit: Callable[[Any], Any]) -> dict[str, Any]:
    """The rotations helpers and limit projections, each passed through ``jit``, by name (built once per
    ``jit``: the kernels that use them share their compiled code). Not to be modified."""

    @jit
    def mul(a, b):  # type: ignore[no-untyped-def]
        """``rotations.mul``."""
        ax, ay, az, aw = a
        bx, by, bz, bw = b
        return (
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        )

    @jit
    def rotate(q, v):  # type: ignore[no-untyped-def]
        """``rotations.rotate``."""
        qx, qy, qz, qw = q
        vx, vy, vz = v
        tx = 2.0 * (qy * vz - qz * vy)
        ty = 2.0 * (qz * vx - qx * vz)
        tz = 2.0 * (qx * vy - qy * vx)
        return (
            vx + qw * tx + (qy * tz - qz * ty),
            vy + qw * ty + (qz * tx - qx * tz),
            vz + qw * tz + (qx * ty - qy * tx),
        )

    @jit
    def rotate_inv(q, v):  # type: ignore[no-untyped-def]
        """``rotations.rotate_inv``."""
        qx, qy, qz, qw = q
        vx, vy, vz = v
        tx = 2.0 * (qz * vy - qy * vz)
        ty = 2.0 * (qx * vz - qz * vx)
        tz = 2.0 * (qy * vx - qx * vy)
        return (
            vx + qw * tx - (qy * tz - qz * ty),
            vy + qw * ty - (qz * tx - qx * tz),
            vz + qw * tz - (qx * ty - qy * tx),
        )

    @jit
    def x_axis(q):  # type: ignore[no-untyped-def]
        """``rotations.x_axis``."""
        qx, qy, qz, qw = q
        return 1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy + qz * qw), 2.0 * (qx * qz - qy * qw)

    @jit
    def y_axis(q):  # type: ignore[no-untyped-def]
        """``rotations.y_axis``."""
        qx, qy, qz, qw = q
        return 2.0 * (qx * qy - qz * qw), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz + qx * qw)

    @jit
    def sub(a, b):  # type: ignore[no-untyped-def]
        """``rotations.sub``."""
        return a[0] - b[0], a[1] - b[1], a[2] - b[2]

    @jit
    def add(a, b, k):  # type: ignore[no-untyped-def]
        """``rotations.add``: ``a + k b``."""
        return a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]

    @jit
    def unit(v):  # type: ignore[no-untyped-def]
        """``rotations.unit``: ``(ok, u)``; not ``ok`` (``None``) where ``v`` is too short (``u`` is ``v``)."""
        n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if n2 < TINY2:
            return False, v
        n = math.sqrt(n2)
        return True, (v[0] / n, v[1] / n, v[2] / n)

    @jit
    def dist(a, b):  # type: ignore[no-untyped-def]
        """``rotations.dist``."""
        dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
        return math.sqrt(dx * dx + dy * dy + dz * dz)

    @jit
    def perpendicular(v):  # type: ignore[no-untyped-def]
        """``rotations._perpendicular``: ``v`` crossed with its least aligned world axis (the first on ties)."""
        vx, vy, vz = v
        best, low = 0, abs(vx)
        if abs(vy) < low:
            best, low = 1, abs(vy)
        if abs(vz) < low:
            best = 2
        ex, ey, ez = 1.0 if best == 0 else 0.0, 1.0 if best == 1 else 0.0, 1.0 if best == 2 else 0.0
        return vy * ez - vz * ey, vz * ex - vx * ez, vx * ey - vy * ex

    @jit
    def swing(a, b, h):  # type: ignore[no-untyped-def]
        """``rotations.swing``: the minimal rotation taking unit ``a`` onto unit ``b`` (``h``: the half
        turn's axis where they are opposite)."""
        ax, ay, az = a
        bx, by, bz = b
        d = ax * bx + ay * by + az * bz
        cx = ay * bz - az * by
        cy = az * bx - ax * bz
        cz = ax * by - ay * bx
        if d < 0.0 and cx * cx + cy * cy + cz * cz < OPPOSITE2:
            hx, hy, hz = h
            k = hx * ax + hy * ay + hz * az
            ok, u = unit((hx - k * ax, hy - k * ay, hz - k * az))
            if not ok:
                ok, u = unit(perpendicular(a))
            return u[0], u[1], u[2], 0.0
        c2 = cx * cx + cy * cy + cz * cz
        w = 1.0 + d if d >= 0.0 else c2 / (1.0 - d)
        n = math.sqrt(c2 + w * w)
        return cx / n, cy / n, cz / n, w / n

    @jit
    def axis_angle(axis, angle):  # type: ignore[no-untyped-def]
        """``rotations.axis_angle``."""
        s = math.sin(0.5 * angle)
        return axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle)

    @jit
    def twist_angle(q, axis):  # type: ignore[no-untyped-def]
        """``rotations.twist_angle``: radians in (-pi, pi] of the twist of ``q`` about the unit ``axis``."""
        t = q[0] * axis[0] + q[1] * axis[1] + q[2] * axis[2]
        if abs(t) < 1e-15 and abs(q[3]) < 1e-15:
            return 0.0
        a = 2.0 * math.atan2(t, q[3])
        if a > math.pi:
            a -= 2.0 * math.pi
        elif a <= -math.pi:
            a += 2.0 * math.pi
        return a

    @jit
    def clamp_angle(phi, lo, hi, has_before, before):  # type: ignore[no-untyped-def]
        """``limits.clamp_angle`` (``before`` used where ``has_before``)."""
        if lo <= phi and phi <= hi:
            return phi
        two_pi = 2.0 * math.pi
        if has_before:
            b = lo if lo > before else before  # min(max(before, lo), hi)
            b = hi if hi < b else b
            delta = (phi - b + math.pi) % two_pi - math.pi
            if delta != 0.0:
                return hi if delta > 0 else lo
        to_lo = (lo - phi) % two_pi
        from_hi = (phi - hi) % two_pi
        return hi if from_hi <= to_lo else lo

    @jit
    def ellipse_root(n0, z1, r0, s0, s1):  # type: ignore[no-untyped-def]
        """``limits.ellipse_root``."""
        s = s0
        for _ in range(lm.ELLIPSE_STEPS):
            p, q = s + r0, s + 1.0
            u, v = n0 / p, z1 / q
            g = u * u + v * v - 1.0
            step = s + 0.5 * g / (u * u / p + v * v / q)
            step = s1 if s1 < step else step
            if not (step > s and g > 0.0):
                break
            s = step
        return s

    @jit
    def nearest_wide(y0, y1, a, b):  # type: ignore[no-untyped-def]
        """``limits.nearest_on_ellipse`` for ``a >= b > 0``."""
        if y1 > 1e-12 * b:
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
            one = 1.0 - x * x
            return a * x, b * math.sqrt(one if one > 0.0 else 0.0)
        return a, 0.0

    @jit
    def nearest_on_ellipse(y0, y1, a, b):  # type: ignore[no-untyped-def]
        """``limits.nearest_on_ellipse``."""
        a = a if a > lm._TINY_ANGLE else 0.0
        b = b if b > lm._TINY_ANGLE else 0.0
        if a <= 0.0 or b <= 0.0:
            if a <= 0.0:
                return 0.0, (b if b < y1 else y1)
            return (a if a < y0 else y0), 0.0
        if a < b:
            x1, x0 = nearest_wide(y1, y0, b, a)
            return x0, x1
        return nearest_wide(y0, y1, a, b)

    @jit
    def inside_ellipse(u, v, a, b):  # type: ignore[no-untyped-def]
        """``limits._inside_ellipse``."""
        a = a if a > lm._TINY_ANGLE else 0.0
        b = b if b > lm._TINY_ANGLE else 0.0
        if a <= 0.0 or b <= 0.0:
            return (a <= 0.0 and u <= 1e-15 and v <= b) or (b <= 0.0 and v <= 1e-15 and u <= a)
        ua, vb = u / a, v / b
        return ua * ua + vb * vb <= 1.0 + 1e-12

    @jit
    def project_cone(row, d):  # type: ignore[no-untyped-def]
        """``_BoundCone.project``."""
        d0 = (row[0], row[1], row[2])
        k = d[0] * d0[0] + d[1] * d0[1] + d[2] * d0[2]
        perp = (d[0] - k * d0[0], d[1] - k * d0[1], d[2] - k * d0[2])
        if k >= row[3] and (
            row[4] >= 0.02
            or math.atan2(math.sqrt(perp[0] * perp[0] + perp[1] * perp[1] + perp[2] * perp[2]), k) <= row[4]
        ):
            return d
        ok, w = unit(perp)
        if not ok:
            w = (row[7], row[8], row[9])
        c, s = row[5], row[6]
        return c * d0[0] + s * w[0], c * d0[1] + s * w[1], c * d0[2] + s * w[2]

    @jit
    def project_ellipse(row, d):  # type: ignore[no-untyped-def]
        """``_BoundEllipse.project``."""
        x = d[0] * row[3] + d[1] * row[4] + d[2] * row[5]
        z = d[0] * row[6] + d[1] * row[7] + d[2] * row[8]
        y = d[0] * row[0] + d[1] * row[1] + d[2] * row[2]
        rho = math.sqrt(x * x + z * z)
        theta = math.atan2(rho, y)
        if rho < 1e-15:
            if y > 0:
                return d
            x, z, rho = 1.0, 0.0, 1.0
        u, v = theta * x / rho, theta * z / rho
        a = row[9] if u >= 0 else row[10]
        b = row[11] if v >= 0 else row[12]
        if inside_ellipse(abs(u), abs(v), a, b):
            return d
        pu, pv = nearest_on_ellipse(abs(u), abs(v), a, b)
        pu, pv = math.copysign(pu, u), math.copysign(pv, v)
        t = math.sqrt(pu * pu + pv * pv)
        if t < 1e-15:
            return row[0], row[1], row[2]
        c, s = math.cos(t), math.sin(t) / t
        return (
            c * row[0] + s * (pu * row[3] + pv * row[6]),
            c * row[1] + s * (pu * row[4] + pv * row[7]),
            c * row[2] + s * (pu * row[5] + pv * row[8]),
        )

    @jit
    def hinge_angle(row, d):  # type: ignore[no-untyped-def]
        """``_BoundHinge.angle``: ``(ok, phi)``; not ``ok`` (``None``) along the axis."""
        c = d[0] * row[0] + d[1] * row[1] + d[2] * row[2]
        s = d[0] * row[3] + d[1] * row[4] + d[2] * row[5]
        if c * c + s * s < 1e-20:
            return False, 0.0
        return True, math.atan2(s, c)

    @jit
    def project_hinge(row, d, has_previous, previous):  # type: ignore[no-untyped-def]
        """``_BoundHinge.project`` (``previous`` used where ``has_previous``)."""
        ok, phi = hinge_angle(row, d)
        has_before, before = False, 0.0
        if has_previous:
            has_before, before = hinge_angle(row, previous)
        if not ok:
            phi = before if has_before and before != 0.0 else 0.0  # (before or 0.0)
        phi = clamp_angle(phi, row[6], row[7], has_before, before)
        c, s = math.cos(phi), math.sin(phi)
        return c * row[0] + s * row[3], c * row[1] + s * row[4], c * row[2] + s * row[5]

    @jit
    def project(kind, row, d, has_previous, previous):  # type: ignore[no-untyped-def]
        """``SwingLimit.project`` of a limit ``kind`` with its ``row`` (``d`` itself for ``NONE``)."""
        if kind == CONE:
            return project_cone(row, d)
        if kind == ELLIPSE:
            return project_ellipse(row, d)
        if kind == HINGE:
            return project_hinge(row, d, has_previous, previous)
        return d

    return {
        "mul": mul,
        "sub": sub,
        "add": add,
        "rotate": rotate,
        "rotate_inv": rotate_inv,
        "x_axis": x_axis,
        "y_axis": y_axis,
        "unit": unit,
        "dist": dist,
        "swing": swing,
        "axis_angle": axis_angle,
        "twist_angle": twist_angle,
        "clamp_angle": clamp_angle,
        "project": project,
        "hinge_angle": hinge_angle,
    }
