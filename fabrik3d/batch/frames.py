"""Frames of a batch of poses (internal to ``fabrik3d.batch``): ``solver._finish`` on arrays.

``finish`` places the untargeted branches and computes every joint's frame by
the swing rule, as ``solver._finish`` does for one pose, on ``(n, 3, B)`` poses
(joint, coordinate, problem). Each helper below is the formula of
``fabrik3d.rotations`` term by term, so the frames equal the scalar ones to
rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.rotations import TINY2
from fabrik3d.solver.rig import Rig

QuatArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def finish(skeleton: Skeleton, r: Rig, pose: np.ndarray, start: np.ndarray, active: list[bool]) -> list[QuatArrays]:
    """``solver._finish``: place untargeted branches (``pose`` in place) and return every joint's frame.

    ``pose`` is ``(n, 3, B)``, ``start`` ``(n, 3, B)`` or ``(n, 3, 1)``; frames are ``(B,)`` or ``(1,)`` arrays.
    """
    xs, ys, zs = pose[:, 0], pose[:, 1], pose[:, 2]
    sx, sy, sz = start[:, 0], start[:, 1], start[:, 2]
    n = len(active)
    # Start frames are needed only where a kept local rotation or a carried branch asks for them.
    need = set()
    for j in range(n):
        if not active[j]:
            continue
        c = r.first_child[j]
        p = r.parents[j]
        if c >= 0 and not active[c]:
            need.update((j, p) if p >= 0 else (j,))
        if p >= 0 and any(not active[k] for k in r.children[j]):
            need.add(j)
    for j in list(need):
        while r.parents[j] >= 0:
            j = r.parents[j]
            need.add(j)
    sf: dict[int, QuatArrays] = {}
    for j in r.order:
        if j not in need:
            continue
        p = r.parents[j]
        pf = sf[p] if p >= 0 else rot.IDENTITY
        c = r.first_child[j]  # never a leaf: leaves carry nothing and have no kept local rotation
        d, none = _unit((sx[c] - sx[j], sy[c] - sy[j], sz[c] - sz[j]))
        frame = _swing_frame(r, j, pf, d)
        if none.any():  # a bone lost to rounding (a tiny bone far from the origin)
            fixed = _qmul(pf, r.rest_local[j])
            frame = tuple(np.where(none, a, b) for a, b in zip(fixed, frame))  # type: ignore[assignment]
        sf[j] = frame
    frames: list[QuatArrays] = [None] * n  # type: ignore[list-item]
    for j in r.order:
        p = r.parents[j]
        pf = frames[p] if p >= 0 else rot.IDENTITY
        c = r.first_child[j]
        if c < 0:
            frames[j] = _qmul(pf, r.rest_local[j])
        elif active[j] and not active[c]:
            frames[j] = sf[j] if p < 0 else _qmul(pf, _qmul(_conj(sf[p]), sf[j]))
        else:
            d, _ = _unit((xs[c] - xs[j], ys[c] - ys[j], zs[c] - zs[j]))
            frames[j] = _swing_frame(r, j, pf, d)
        carried = [c for c in r.children[j] if not active[c]] if active[j] else []
        if not carried:
            continue
        turn = rot.IDENTITY if p < 0 else _qmul(frames[j], _conj(sf[j]))
        for c in carried:
            for x in r.subtree(c):
                v = _rotate(turn, (sx[x] - sx[j], sy[x] - sy[j], sz[x] - sz[j]))
                xs[x], ys[x], zs[x] = xs[j] + v[0], ys[j] + v[1], zs[j] + v[2]
    return frames


def _unit(v: tuple) -> tuple[tuple, np.ndarray]:
    """``rotations.unit`` on arrays: the unit vectors and where they are undefined (None in the scalar)."""
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    with np.errstate(invalid="ignore", divide="ignore"):
        n = np.sqrt(n2)
        return (v[0] / n, v[1] / n, v[2] / n), n2 < TINY2


# Frames on arrays. The helpers below are ``fabrik3d.rotations``' formulas, term by term in the same
# order, on components that are arrays or Python floats (the rig's constants): a product with a
# constant 0.0 is dropped and one with 1.0 is the other factor, so rest frames and directions along
# the axes (common: a rest bone along +Y has the identity rest rotation) cost no array work. Dropping
# an exact zero term changes nothing but the sign of a zero.
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


def _conj(q: tuple) -> tuple:
    """``rotations.conj``."""
    return (-q[0], -q[1], -q[2], q[3])


def _qmul(a: tuple, b: tuple) -> tuple:
    """``rotations.mul``."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        _sub(_add(_add(_m(aw, bx), _m(ax, bw)), _m(ay, bz)), _m(az, by)),
        _add(_add(_sub(_m(aw, by), _m(ax, bz)), _m(ay, bw)), _m(az, bx)),
        _add(_sub(_add(_m(aw, bz), _m(ax, by)), _m(ay, bx)), _m(az, bw)),
        _sub(_sub(_sub(_m(aw, bw), _m(ax, bx)), _m(ay, by)), _m(az, bz)),
    )


def _rotate(q: tuple, v: tuple) -> tuple:
    """``rotations.rotate``."""
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


def _swing_frame(r: Rig, j: int, parent_frame: tuple, direction: tuple) -> tuple:
    """``Rig.swing_frame`` on arrays."""
    local = _rotate(_conj(parent_frame), direction)
    s = _swing(r.rest_dir[j], local, r.rest_x[j])
    return _qmul(parent_frame, _qmul(s, r.rest_local[j]))


def _swing(a: rot.Vec, b: tuple, half_turn_axis: rot.Vec) -> tuple:
    """``rotations.swing`` of a constant unit ``a`` onto unit vectors ``b`` (arrays)."""
    ax, ay, az = a
    bx, by, bz = b
    d = _add(_add(_m(ax, bx), _m(ay, by)), _m(az, bz))
    cx = _sub(_m(ay, bz), _m(az, by))
    cy = _sub(_m(az, bx), _m(ax, bz))
    cz = _sub(_m(ax, by), _m(ay, bx))
    c2 = _add(_add(_m(cx, cx), _m(cy, cy)), _m(cz, cz))
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(d >= 0.0, 1.0 + d, c2 / (1.0 - d))  # as rotations.swing: no cancellation
        n = np.sqrt(_add(c2, w * w))
        q = (_div(cx, n), _div(cy, n), _div(cz, n), w / n)
    opposite = (d < 0.0) & (c2 < rot.OPPOSITE2)
    if np.any(opposite):  # the half turn does not depend on b
        half = rot.swing(a, (-ax, -ay, -az), half_turn_axis)
        q = tuple(np.where(opposite, h, c) for h, c in zip(half, q))
    return q


def _div(a: Any, b: np.ndarray) -> Any:
    return 0.0 if type(a) is float and a == 0.0 else a / b
