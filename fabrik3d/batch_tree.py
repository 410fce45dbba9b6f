"""The unconstrained solve of ``fabrik3d.solver``, vectorised over a batch of problems.

Internal to ``fabrik3d.batch``. Every step mirrors the scalar code operation by
operation (the same additions in the same order), so each problem's result
equals ``fabrik3d.solve`` on that problem to rounding (about 1e-12):

* ``start_pose``: ``solver._start_pose`` (no root orientation);
* ``solve_tree``: ``solver._solve_tree`` (several targets);
* ``finish``: ``solver._finish`` (untargeted branches, frames by the swing rule).

(One target: ``fabrik3d.batch_chain`` runs ``chain.run_chain`` on the path.)

A pose is an ``(n, 3, m)`` array: joint, coordinate, problem (``m`` is 1 for a
start pose shared by all), so each joint's x, y and z over the problems are
contiguous rows. Problems that stop drop out of the arrays (the active set is
compacted by index arrays), so converged problems cost no more work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.chain import STALL
from fabrik3d.frames import Rig, bone_direction
from fabrik3d.skeleton import Skeleton
from fabrik3d.solver import tree_plan

_TINY2 = 1e-24
QuatArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def start_pose(r: Rig, rest: np.ndarray, pts: np.ndarray, root: np.ndarray | None) -> np.ndarray:
    """``solver._start_pose`` for ``(m, n, 3)`` poses ``pts`` and ``(m, 3)`` root positions (or None).

    Returns the ``(n, 3, m)`` start pose (joint, coordinate, problem).
    """
    n = pts.shape[1]
    top = r.order[0]
    src = pts if root is None else np.broadcast_to(root[:, None, :], (root.shape[0], n, 3))
    m = max(pts.shape[0], src.shape[0])
    out = np.empty((n, 3, m))
    out[top] = src[:, top].T
    rest_rows = rest.tolist()
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in r.order[1:]:
            p = r.parents[j]
            v = (pts[:, j] - pts[:, p]).T
            n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
            u = v / np.sqrt(n2)
            bad = n2 < _TINY2
            if bad.any():  # coincident joints: the rest bone's direction
                d = bone_direction(rest_rows[p], rest_rows[j])
                assert d is not None
                u = np.where(bad, np.array(d)[:, None], u)
            np.add(out[p], u * r.lengths[j], out=out[j])
    return out


def solve_tree(
    skeleton: Skeleton,
    r: Rig,
    pose: np.ndarray,
    goal: dict[int, np.ndarray],
    weights: dict[int, float] | None,
    active: list[bool],
    tol: float,
    max_it: int,
) -> np.ndarray:
    """``solver._solve_tree`` on the ``(n, 3, B)`` ``pose``, in place; returns iterations ``(B,)``.

    ``goal`` maps effectors to ``(B, 3)`` targets.
    """
    n = len(active)
    d = r.lengths
    parents = r.parents
    rest = skeleton.rest_positions.tolist()
    up, down, kids = tree_plan(skeleton, r, goal, weights, active)
    total = [0.0] * n
    for j in down:
        for _, wc in kids[j]:
            total[j] += wc
    moving = [j for j in r.order if active[j]]
    coords = (pose[:, 0], pose[:, 1], pose[:, 2])  # (n, B) each
    out = [c[moving] for c in coords]  # (len(moving), B) per coordinate
    bsize = out[0].shape[1]
    iterations = np.zeros(bsize, dtype=np.int64)
    targets = {e: [t[:, 0].copy(), t[:, 1].copy(), t[:, 2].copy()] for e, t in goal.items()}
    err = _largest_error(coords, targets)
    live = np.flatnonzero(err > tol)
    state = [{j: c[j][live] for j in moving} for c in coords]
    tg = {e: [c[live] for c in t] for e, t in targets.items()}
    err = err[live]
    eps = STALL * tol
    it = 0
    while live.size and it < max_it:
        it += 1
        xs, ys, zs = state
        q: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for j in down:  # stage 1: effectors onto targets, then inward with centroids at sub-bases
            t = tg.get(j)
            if t is not None:
                q[j] = (t[0], t[1], t[2])
                continue
            acc = None
            for c, wc in kids[j]:
                qx, qy, qz = q[c]
                dx, dy, dz = xs[j] - qx, ys[j] - qy, zs[j] - qz
                l2 = dx * dx + dy * dy + dz * dz
                small = l2 < _TINY2
                if small.any():  # keep the old bone's direction
                    dx = np.where(small, xs[j] - xs[c], dx)
                    dy = np.where(small, ys[j] - ys[c], dy)
                    dz = np.where(small, zs[j] - zs[c], dz)
                    l2 = dx * dx + dy * dy + dz * dz
                s = d[c] / np.sqrt(l2)
                vx, vy, vz = qx + dx * s, qy + dy * s, qz + dz * s
                if wc != 1.0:
                    vx, vy, vz = wc * vx, wc * vy, wc * vz
                acc = (vx, vy, vz) if acc is None else (acc[0] + vx, acc[1] + vy, acc[2] + vz)
            assert acc is not None
            q[j] = (acc[0] / total[j], acc[1] / total[j], acc[2] / total[j])
        for j in up:  # stage 2: the root stays; every active joint back at its length from its parent
            p = parents[j]
            px, py, pz = xs[p], ys[p], zs[p]
            qx, qy, qz = q[j]
            dx, dy, dz = qx - px, qy - py, qz - pz
            l2 = dx * dx + dy * dy + dz * dz
            small = l2 < _TINY2
            if small.any():  # the stage-1 bone's direction, or else the rest bone's
                ax, ay, az = qx - q[p][0], qy - q[p][1], qz - q[p][2]
                l2a = ax * ax + ay * ay + az * az
                rx, ry, rz = (rest[j][k] - rest[p][k] for k in range(3))
                rest2 = rx * rx + ry * ry + rz * rz
                tiny = l2a < _TINY2
                dx = np.where(small, np.where(tiny, rx, ax), dx)
                dy = np.where(small, np.where(tiny, ry, ay), dy)
                dz = np.where(small, np.where(tiny, rz, az), dz)
                l2 = np.where(small, np.where(tiny, rest2, l2a), l2)
            s = d[j] / np.sqrt(l2)
            xs[j], ys[j], zs[j] = px + dx * s, py + dy * s, pz + dz * s
        new = _largest_error(state, tg)
        stop = (np.abs(err - new) < eps) | (new <= tol) | (it >= max_it)
        err = new
        if stop.any():
            idx = live[stop]
            for coords, o in zip(state, out):
                o[:, idx] = np.array([coords[j][stop] for j in moving])
            iterations[idx] = it
            keep = ~stop
            live = live[keep]
            state = [{j: a[keep] for j, a in coords.items()} for coords in state]
            tg = {e: [c[keep] for c in t] for e, t in tg.items()}
            err = err[keep]
    for k in range(3):
        pose[moving, k] = out[k]
    return iterations


def _largest_error(pose: tuple | list[dict[int, np.ndarray]], targets: dict[int, list[np.ndarray]]) -> np.ndarray:
    xs, ys, zs = pose
    err = None
    for e, (tx, ty, tz) in targets.items():
        dx, dy, dz = xs[e] - tx, ys[e] - ty, zs[e] - tz
        one = np.sqrt(dx * dx + dy * dy + dz * dz)
        err = one if err is None else np.maximum(err, one)
    assert err is not None
    return err


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
        return (v[0] / n, v[1] / n, v[2] / n), n2 < _TINY2


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
