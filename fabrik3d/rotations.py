"""Rotation helpers on plain Python floats.

Conventions, stated once for the whole package:

* Quaternions are ``(x, y, z, w)`` tuples of floats (scalar last, as in glTF and
  three.js), unit length, acting on column vectors: ``rotate(q, v) = q v q*``.
* ``mul(a, b)`` is the rotation ``b`` followed by ``a`` (like matrices ``A @ B``).
* Vectors are ``(x, y, z)`` tuples of floats.

The solver's inner loops run on Python floats because, for the 3-vectors and
4-quaternions of one joint, they are several times faster than numpy calls.
Array-level helpers for public use (``quat_to_matrix``) take numpy arrays.
"""

from __future__ import annotations

import math

import numpy as np

Quat = tuple[float, float, float, float]
Vec = tuple[float, float, float]

IDENTITY: Quat = (0.0, 0.0, 0.0, 1.0)
# A frame's +X and +Y axes in its own coordinates (+Y: along the bone; +X: the half-turn axis).
X_AXIS: Vec = (1.0, 0.0, 0.0)
Y_AXIS: Vec = (0.0, 1.0, 0.0)
# Below this squared length a direction is treated as undefined.
TINY2 = 1e-24
# Unit vectors whose cross product is shorter than 1e-8 and that point apart count as opposite:
# closer to opposite, the minimal rotation's axis is lost in rounding (each component's 1e-16
# error turns it by 1e-16/|a x b|), so a swing there is the documented half turn.
OPPOSITE2 = 1e-16


def add(a: Vec, b: Vec, k: float = 1.0) -> Vec:
    """``a + k b``."""
    return (a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2])


def sub(a: Vec, b: Vec) -> Vec:
    """``a − b``."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dist(a: Vec, b: Vec) -> float:
    """``|a − b|``, written out (``math.dist`` rounds differently) so that the batch solve's numpy
    form of it gives the same floats (``fabrik3d.batch.constrained.solve``)."""
    dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


def dot(a: Vec, b: Vec) -> float:
    """``a · b``."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def slerp(a: Quat, b: Quat, t: float) -> Quat:
    """The rotation ``t`` (0..1) of the way from ``a`` to ``b`` along the shorter arc."""
    d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    if d < 0.0:
        b, d = (-b[0], -b[1], -b[2], -b[3]), -d
    if d > 0.9995:  # nearly equal: the normalised straight line
        return normalize_quat(tuple(a[i] + t * (b[i] - a[i]) for i in range(4)))  # type: ignore[arg-type]
    theta = math.acos(d)
    s = math.sin(theta)
    wa, wb = math.sin((1.0 - t) * theta) / s, math.sin(t * theta) / s
    return (wa * a[0] + wb * b[0], wa * a[1] + wb * b[1], wa * a[2] + wb * b[2], wa * a[3] + wb * b[3])


def cross(a: Vec, b: Vec) -> Vec:
    """``a × b``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def mul(a: Quat, b: Quat) -> Quat:
    """Hamilton product ``a * b``: rotate by ``b``, then by ``a``."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def conj(q: Quat) -> Quat:
    """Inverse of a unit quaternion."""
    return (-q[0], -q[1], -q[2], q[3])


def rotate(q: Quat, v: Vec) -> Vec:
    """Rotate the vector ``v`` by the unit quaternion ``q``."""
    qx, qy, qz, qw = q
    vx, vy, vz = v
    # t = 2 * cross(q.xyz, v); v' = v + w t + cross(q.xyz, t)
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (
        vx + qw * tx + (qy * tz - qz * ty),
        vy + qw * ty + (qz * tx - qx * tz),
        vz + qw * tz + (qx * ty - qy * tx),
    )


def rotate_inv(q: Quat, v: Vec) -> Vec:
    """Rotate the vector ``v`` by the inverse of the unit quaternion ``q`` (``rotate(conj(q), v)``)."""
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


def x_axis(q: Quat) -> Vec:
    """The frame's +X axis in world coordinates (``rotate(q, (1, 0, 0))``)."""
    qx, qy, qz, qw = q
    return (1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy + qz * qw), 2.0 * (qx * qz - qy * qw))


def y_axis(q: Quat) -> Vec:
    """The frame's +Y axis in world coordinates (``rotate(q, (0, 1, 0))``): a bone's direction."""
    qx, qy, qz, qw = q
    return (2.0 * (qx * qy - qz * qw), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz + qx * qw))


def normalize_quat(q: Quat) -> Quat:
    """``q`` scaled to unit length (the identity for a zero quaternion)."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n == 0.0:
        return IDENTITY
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def axis_angle(axis: Vec, angle: float) -> Quat:
    """Rotation by ``angle`` radians, right-handed about the unit ``axis``."""
    s = math.sin(0.5 * angle)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle))


def unit(v: Vec) -> Vec | None:
    """``v`` normalised, or ``None`` when it is too short to have a direction."""
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    if n2 < TINY2:
        return None
    n = math.sqrt(n2)
    return (v[0] / n, v[1] / n, v[2] / n)


def swing(a: Vec, b: Vec, half_turn_axis: Vec) -> Quat:
    """Minimal rotation taking unit vector ``a`` onto unit vector ``b``.

    When ``b`` is (numerically) opposite ``a`` the minimal rotation is not unique;
    the result is then the half turn about ``half_turn_axis`` made perpendicular
    to ``a`` (callers pass the joint's rest +X axis, see ``fabrik3d.frames``).
    """
    ax, ay, az = a
    bx, by, bz = b
    d = ax * bx + ay * by + az * bz
    cx = ay * bz - az * by
    cy = az * bx - ax * bz
    cz = ax * by - ay * bx
    if d < 0.0 and cx * cx + cy * cy + cz * cz < OPPOSITE2:  # opposite to within rounding
        hx, hy, hz = half_turn_axis
        k = hx * ax + hy * ay + hz * az
        axis = unit((hx - k * ax, hy - k * ay, hz - k * az))
        if axis is None:  # the given axis is parallel to a: any perpendicular will do
            axis = unit(_perpendicular(a))
            assert axis is not None
        return (axis[0], axis[1], axis[2], 0.0)
    # q = (a x b, 1 + a.b) normalised: the half-angle construction (accurate up to the
    # opposite direction: both parts shrink there, but keep their ratio).
    c2 = cx * cx + cy * cy + cz * cz
    w = 1.0 + d if d >= 0.0 else c2 / (1.0 - d)  # 1 + cos = sin² / (1 - cos): no cancellation
    n = math.sqrt(c2 + w * w)
    return (cx / n, cy / n, cz / n, w / n)


def _perpendicular(v: Vec) -> Vec:
    """Some vector perpendicular to ``v``: ``v`` crossed with its least aligned world axis."""
    ax = min(range(3), key=lambda i: abs(v[i]))
    e = [0.0, 0.0, 0.0]
    e[ax] = 1.0
    return (v[1] * e[2] - v[2] * e[1], v[2] * e[0] - v[0] * e[2], v[0] * e[1] - v[1] * e[0])


def angle_between(a: Quat, b: Quat) -> float:
    """Angle in radians of the rotation taking ``a`` to ``b`` (0 to pi)."""
    d = abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3])
    return 2.0 * math.acos(min(1.0, d))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of unit quaternions.

    Args:
        q: ``(..., 4)`` quaternions ``(x, y, z, w)``.

    Returns:
        ``(..., 3, 3)`` matrices acting on column vectors.
    """
    q = np.asarray(q, dtype=float)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty((*q.shape[:-1], 3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def fit_rotation(src: list[Vec], dst: list[Vec], weights: list[float], fallback: Quat) -> Quat:
    """Rotation ``R`` minimising ``sum w_i |R·src_i − dst_i|²`` (Horn's quaternion method).

    The vectors are used as given (centre them first for a fit with translation).
    When the vectors do not pin the rotation down (all on one line, so any turn
    about it fits as well), ``fallback`` is returned instead.
    """
    sxx = sxy = sxz = syx = syy = syz = szx = szy = szz = 0.0
    for (ax, ay, az), (bx, by, bz), w in zip(src, dst, weights):
        wx, wy, wz = w * ax, w * ay, w * az
        sxx, sxy, sxz = sxx + wx * bx, sxy + wx * by, sxz + wx * bz
        syx, syy, syz = syx + wy * bx, syy + wy * by, syz + wy * bz
        szx, szy, szz = szx + wz * bx, szy + wz * by, szz + wz * bz
    n = np.array(
        [
            [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
            [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
            [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
            [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
        ]
    )
    vals, vecs = np.linalg.eigh(n)
    if vals[-1] - vals[-2] <= 1e-9 * max(abs(vals[-1]), 1e-300):
        return fallback
    w, x, y, z = vecs[:, -1].tolist()
    return normalize_quat((x, y, z, w))


def twist_angle(q: Quat, axis: Vec) -> float:
    """Angle (radians, in (-pi, pi]) of the twist of ``q`` about the unit ``axis``."""
    t = q[0] * axis[0] + q[1] * axis[1] + q[2] * axis[2]
    if abs(t) < 1e-15 and abs(q[3]) < 1e-15:
        return 0.0
    a = 2.0 * math.atan2(t, q[3])
    if a > math.pi:
        a -= 2.0 * math.pi
    elif a <= -math.pi:
        a += 2.0 * math.pi
    return a


def from_euler_xyz(degrees: Vec) -> Quat:
    """The rotation of Euler angles ``(x, y, z)`` in degrees, Blender's "XYZ Euler": about X
    first, then Y, then Z, each about the fixed axes (``R = Rz @ Ry @ Rx``)."""
    qx = axis_angle(X_AXIS, math.radians(degrees[0]))
    qy = axis_angle(Y_AXIS, math.radians(degrees[1]))
    qz = axis_angle((0.0, 0.0, 1.0), math.radians(degrees[2]))
    return normalize_quat(mul(qz, mul(qy, qx)))


def euler_xyz(q: Quat) -> Vec:
    """The Euler angles ``(x, y, z)`` in degrees of ``q`` (``from_euler_xyz``'s convention), Y in
    [-90, 90]; at Y = ±90 (gimbal lock) X is 0."""
    x, y, z, w = q
    m20 = 2 * (x * z - y * w)
    if abs(m20) > 1.0 - 1e-12:
        m01, m11 = 2 * (x * y - z * w), 1 - 2 * (x * x + z * z)
        return (0.0, math.degrees(math.asin(-max(-1.0, min(1.0, m20)))), math.degrees(math.atan2(-m01, m11)))
    m21, m22 = 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    m10, m00 = 2 * (x * y + z * w), 1 - 2 * (y * y + z * z)
    return (
        math.degrees(math.atan2(m21, m22)),
        math.degrees(math.asin(-m20)),
        math.degrees(math.atan2(m10, m00)),
    )
