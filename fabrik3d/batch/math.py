"""The rotations helpers (``fabrik3d.rotations``) on a batch of problems (for ``fabrik3d.batch``; the
limits' projections are in ``fabrik3d.batch.limits``).

Shapes, stated once: a *batch* vector is a tuple of 3 float64 arrays of shape
``(m,)`` (one per coordinate, one entry per problem), a batch quaternion
``(x, y, z, w)`` a tuple of 4; an angle or a mask is an ``(m,)`` array. Arguments
documented as *constant* (rig constants) may be tuples of plain floats; they
broadcast. Every function returns new ``(m,)`` arrays.

The pure arithmetic of ``fabrik3d.rotations`` (``add``, ``sub``, ``cross``,
``mul``, ``conj``, ``rotate``, ``rotate_inv``, ``x_axis``, ``y_axis``) already runs
on such tuples. The functions here are the ones with branches, ``None`` results
or ``math`` calls: each mirrors its scalar namesake expression for expression
(same operations in the same order), with every branch taken elementwise: both
sides are computed (floating-point warnings off) and a mask picks one per problem,
so a NaN of the side not taken never reaches a result. The results equal the
scalar ones bit for bit: ``+ - * /``, ``sqrt`` and comparisons are correctly
rounded in both, numpy's ``sin`` and ``cos`` agree with ``math``'s, and ``atan2``
calls ``math.atan2`` per element (numpy's ``arctan2`` differs in the last bit for
a few inputs in a hundred, which a stalled constrained solve, damped with a small
λ, can magnify a millionfold). The scalar code squares with ``x * x`` and takes no
``hypot`` for the same reason.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from fabrik3d import rotations as rot

Vec = tuple[np.ndarray, np.ndarray, np.ndarray]
Quat = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
# A batch vector, or a constant one of floats.
VecLike = tuple[Any, Any, Any]
QuatLike = tuple[Any, Any, Any, Any]

_atan2 = np.frompyfunc(math.atan2, 2, 1)
_acos = np.frompyfunc(math.acos, 1, 1)
# Both sides of every branch are computed: the side not taken may overflow or divide by 0.
quiet = np.errstate(all="ignore")


def atan2(y: Any, x: Any) -> np.ndarray:
    """``math.atan2`` per element (radians), as a float array."""
    return np.asarray(_atan2(y, x), dtype=float)


def acos(x: Any) -> np.ndarray:
    """``math.acos`` per element (radians; ``x`` within [-1, 1]), as a float array (numpy's ``arccos`` rounds
    differently for a few inputs in ten)."""
    return np.asarray(_acos(x), dtype=float)


def pick(mask: np.ndarray, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """Per component, ``a`` where ``mask`` else ``b`` (batch or constant tuples; new float arrays)."""
    return tuple(np.where(mask, x, y).astype(float, copy=False) for x, y in zip(a, b))


def full(values: tuple[Any, ...], like: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """``values`` as new float arrays broadcast to the common shape of ``values`` and ``like``."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in (*values, *like)))
    return tuple(np.array(np.broadcast_to(v, shape), dtype=float) for v in values)


def changed(a: VecLike, b: VecLike) -> np.ndarray:
    """Where any coordinate of ``a`` differs from ``b``'s: the batch form of ``a != b`` on tuples."""
    return np.asarray((a[0] != b[0]) | (a[1] != b[1]) | (a[2] != b[2]))


# -- fabrik3d.rotations --------------------------------------------------------------------------


@quiet
def unit(v: VecLike) -> tuple[Vec, np.ndarray]:
    """``rotations.unit``: ``(u, ok)``; ``ok`` is False where ``v`` is too short (``u`` is ``v`` there)."""
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    ok = np.asarray(n2 >= rot.TINY2)
    n = np.sqrt(np.where(ok, n2, 1.0))
    u = (v[0] / n, v[1] / n, v[2] / n)
    if not ok.all():  # (the usual case needs no pick: the quotients are new arrays of the full shape)
        u = pick(ok, u, v)
    return u, ok  # type: ignore[return-value]


@quiet
def unit_or(v: VecLike, fallback: VecLike) -> Vec:
    """``rotations.unit(v) or fallback`` (``fallback`` batch or constant)."""
    u, ok = unit(v)
    return pick(ok, u, fallback)  # type: ignore[return-value]


def _perpendicular(v: VecLike) -> Vec:
    """``rotations._perpendicular``: ``v`` crossed with its least aligned world axis (first on ties)."""
    a0, a1, a2 = np.abs(v[0]), np.abs(v[1]), np.abs(v[2])
    # min(range(3), key=abs): the running minimum is replaced only by a strictly smaller key
    best = np.where(a1 < a0, 1, 0)
    best = np.where(a2 < np.where(best == 1, a1, a0), 2, best)
    e = ((best == 0).astype(float), (best == 1).astype(float), (best == 2).astype(float))
    return (v[1] * e[2] - v[2] * e[1], v[2] * e[0] - v[0] * e[2], v[0] * e[1] - v[1] * e[0])


@quiet
def swing(a: VecLike, b: VecLike, half_turn_axis: VecLike, fold: bool = False) -> Quat:
    """``rotations.swing``: minimal rotation taking unit ``a`` onto unit ``b`` (each batch or constant).

    Where ``b`` is opposite ``a``: the half turn about ``half_turn_axis`` made
    perpendicular to ``a`` (about ``a``'s perpendicular where they are parallel).
    With ``fold``, products by a constant 0.0 or 1.0 are skipped as in ``mul`` (the same
    floats but for the sign of a zero; a component that is a constant zero stays a float):
    for the plain path's frames (``fabrik3d.batch.frames``), whose rest directions are
    mostly along the axes; the constrained twins take every product, as the scalar does.
    """
    m, add, sub, div = (_m, _add, _sub, _div) if fold else (operator.mul, operator.add, operator.sub, operator.truediv)
    ax, ay, az = a
    bx, by, bz = b
    d = add(add(m(ax, bx), m(ay, by)), m(az, bz))
    cx = sub(m(ay, bz), m(az, by))
    cy = sub(m(az, bx), m(ax, bz))
    cz = sub(m(ax, by), m(ay, bx))
    c2 = add(add(m(cx, cx), m(cy, cy)), m(cz, cz))
    opposite = (d < 0.0) & (c2 < rot.OPPOSITE2)
    w = np.where(d >= 0.0, 1.0 + d, c2 / (1.0 - d))  # 1 + cos = sin² / (1 - cos): no cancellation
    n = np.sqrt(add(c2, w * w))
    q: tuple[Any, ...] = (div(cx, n), div(cy, n), div(cz, n), w / n)
    if np.any(opposite):  # (the half turn is rare: computed only when some problem needs it)
        hx, hy, hz = half_turn_axis
        k = hx * ax + hy * ay + hz * az
        axis, ok = unit((hx - k * ax, hy - k * ay, hz - k * az))
        axis = pick(ok, axis, unit(_perpendicular(a))[0])
        q = pick(opposite, (*axis, 0.0), q)
    if fold:
        return q  # type: ignore[return-value]
    shape = np.broadcast_shapes(*(np.shape(v) for v in (*q, *a, *b, *half_turn_axis)))
    # (new arrays of the full shape are returned as they are; others broadcast into new ones)
    return tuple(
        v if isinstance(v, np.ndarray) and v.shape == shape else np.array(np.broadcast_to(v, shape), dtype=float)
        for v in q
    )  # type: ignore[return-value]


@quiet
def normalize_quat(q: QuatLike) -> Quat:
    """``rotations.normalize_quat``: ``q`` at unit length (the identity where it is 0)."""
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    zero = n == 0.0
    out = pick(zero, rot.IDENTITY, (q[0] / n, q[1] / n, q[2] / n, q[3] / n))
    return full(out, q)  # type: ignore[return-value]


@quiet
def axis_angle(axis: VecLike, angle: Any) -> Quat:
    """``rotations.axis_angle``: rotation by ``angle`` radians ((m,) or a float) about the unit ``axis``."""
    s = np.sin(0.5 * angle)
    return full((axis[0] * s, axis[1] * s, axis[2] * s, np.cos(0.5 * angle)), axis)  # type: ignore[return-value]


@quiet
def twist_angle(q: QuatLike, axis: VecLike) -> np.ndarray:
    """``rotations.twist_angle``: radians in (-pi, pi] of the twist of ``q`` about the unit ``axis``."""
    t = q[0] * axis[0] + q[1] * axis[1] + q[2] * axis[2]
    none = (np.abs(t) < 1e-15) & (np.abs(q[3]) < 1e-15)
    a = 2.0 * atan2(t, q[3])
    a = np.where(a > math.pi, a - (2.0 * math.pi), np.where(a <= -math.pi, a + (2.0 * math.pi), a))
    return full((np.where(none, 0.0, a),), (*q, *axis))[0]


@quiet
def fit_rotation(src: list[VecLike], dst: list[VecLike], weights: list[float], fallback: QuatLike) -> Quat:
    """``rotations.fit_rotation`` (Horn): per problem, the rotation best taking ``src[i]`` to ``dst[i]``.

    ``src``: k constant or batch vectors; ``dst``: k batch vectors; ``weights``: k
    floats; ``fallback`` (batch quaternion) where the vectors lie on one line.
    """
    sxx = sxy = sxz = syx = syy = syz = szx = szy = szz = 0.0
    for (ax, ay, az), (bx, by, bz), w in zip(src, dst, weights):
        wx, wy, wz = w * ax, w * ay, w * az
        sxx, sxy, sxz = sxx + wx * bx, sxy + wx * by, sxz + wx * bz
        syx, syy, syz = syx + wy * bx, syy + wy * by, syz + wy * bz
        szx, szy, szz = szx + wz * bx, szy + wz * by, szz + wz * bz
    entries = full(
        (
            *(sxx + syy + szz, syz - szy, szx - sxz, sxy - syx),
            *(syz - szy, sxx - syy - szz, sxy + syx, szx + sxz),
            *(szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy),
            *(sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz),
        ),
        fallback,
    )
    n = np.stack(entries, axis=-1).reshape(-1, 4, 4)
    vals, vecs = np.linalg.eigh(n)
    top = np.abs(vals[:, -1])
    flat = vals[:, -1] - vals[:, -2] <= 1e-9 * np.where(1e-300 > top, 1e-300, top)
    q = normalize_quat((vecs[:, 1, -1], vecs[:, 2, -1], vecs[:, 3, -1], vecs[:, 0, -1]))
    return pick(flat, fallback, q)  # type: ignore[return-value]


# -- constants folded ------------------------------------------------------------------------------
# ``mul`` and ``rotate`` are ``fabrik3d.rotations``' formulas, term by term in the same
# order, on components that are arrays or Python floats (the rig's constants): a product with a
# constant 0.0 is dropped and one with 1.0 is the other factor, so rest frames and directions along
# the axes (common: a rest bone along +Y has the identity rest rotation) cost no array work. Dropping
# an exact zero term changes nothing but the sign of a zero. (``fabrik3d.batch.frames`` uses them;
# the constrained twins take ``rotations.mul`` and ``rotate`` as they are, which run on batch tuples.)
def _m(a: Any, b: Any) -> Any:
    if type(a) is float:
        if a == 0.0:
            return 0.0
        if a == 1.0:
            return b
    if type(b) is float:
        if b == 0.0:
            return 0.0
        if b == 1.0:
            return a
    return a * b


def _add(a: Any, b: Any) -> Any:
    if type(b) is float and b == 0.0:
        return a
    if type(a) is float and a == 0.0:
        return b
    return a + b


def _sub(a: Any, b: Any) -> Any:
    if type(b) is float and b == 0.0:
        return a
    if type(a) is float and a == 0.0:
        return -b
    return a - b


def _div(a: Any, b: Any) -> Any:
    return 0.0 if type(a) is float and a == 0.0 else a / b


def mul(a: QuatLike, b: QuatLike) -> QuatLike:
    """``rotations.mul`` with constants folded (see above)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        _sub(_add(_add(_m(aw, bx), _m(ax, bw)), _m(ay, bz)), _m(az, by)),
        _add(_add(_sub(_m(aw, by), _m(ax, bz)), _m(ay, bw)), _m(az, bx)),
        _add(_sub(_add(_m(aw, bz), _m(ax, by)), _m(ay, bx)), _m(az, bw)),
        _sub(_sub(_sub(_m(aw, bw), _m(ax, bx)), _m(ay, by)), _m(az, bz)),
    )


def rotate(q: QuatLike, v: VecLike) -> VecLike:
    """``rotations.rotate`` with constants folded (see above)."""
    qx, qy, qz, qw = q
    vx, vy, vz = v
    tx = _m(2.0, _sub(_m(qy, vz), _m(qz, vy)))
    ty = _m(2.0, _sub(_m(qz, vx), _m(qx, vz)))
    tz = _m(2.0, _sub(_m(qx, vy), _m(qy, vx)))
    return (
        _add(_add(vx, _m(qw, tx)), _sub(_m(qy, tz), _m(qz, ty))),
        _add(_add(vy, _m(qw, ty)), _sub(_m(qz, tx), _m(qx, tz))),
        _add(_add(vz, _m(qw, tz)), _sub(_m(qx, ty), _m(qy, tx))),
    )
