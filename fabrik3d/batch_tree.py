"""The unconstrained solve of ``fabrik3d.solver``, vectorised over a batch of problems.

Internal to ``fabrik3d.batch``. Every step mirrors the scalar code operation by
operation (the same additions in the same order), so each problem's result
equals ``fabrik3d.solve`` on that problem to rounding (about 1e-12):

* ``start_pose``: ``solver._start_pose`` (no root orientation);
* ``solve_path``: ``chain.run_chain`` on the root-to-effector path (one target);
* ``solve_tree``: ``solver._solve_tree`` (several targets);
* ``finish``: ``solver._finish`` (untargeted branches, frames by the swing rule).

A pose is three lists of ``n`` arrays ``(m,)``: the x, y and z of each joint
over the ``m`` problems (``m`` is 1 for a start pose shared by all). Problems
that stop drop out of the arrays (the active set is compacted by index arrays),
so converged problems cost no more work. A stalled chain lying straight (the
rare case ``chain._bend_if_straight`` bends) is re-solved by the scalar
``run_chain`` from its start, which gives the scalar result exactly.
"""

from __future__ import annotations

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.chain import MAX_BENDS, STALL, STRAIGHT, run_chain
from fabrik3d.frames import Rig, bone_direction
from fabrik3d.skeleton import Skeleton
from fabrik3d.solver import tree_plan

_TINY2 = 1e-24
# With fewer live chains than this, the scalar run_chain finishes them (each numpy call costs ~1 us).
TAIL = 8
Cols = list[np.ndarray]
Pose = tuple[Cols, Cols, Cols]
QuatArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def start_pose(r: Rig, rest: np.ndarray, pts: np.ndarray, root: np.ndarray | None) -> Pose:
    """``solver._start_pose`` for ``(m, n, 3)`` poses ``pts`` and ``(m, 3)`` root positions (or None)."""
    n = pts.shape[1]
    xs: Cols = [np.empty(0)] * n
    ys: Cols = [np.empty(0)] * n
    zs: Cols = [np.empty(0)] * n
    top = r.order[0]
    src = pts if root is None else np.broadcast_to(root[:, None, :], (root.shape[0], n, 3))
    m = max(pts.shape[0], src.shape[0])
    xs[top], ys[top], zs[top] = (np.broadcast_to(src[:, top, k], (m,)).copy() for k in range(3))
    rest_rows = rest.tolist()
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in r.order[1:]:
            p = r.parents[j]
            dx, dy, dz = (pts[:, j, k] - pts[:, p, k] for k in range(3))
            n2 = dx * dx + dy * dy + dz * dz
            norm = np.sqrt(n2)
            ux, uy, uz = dx / norm, dy / norm, dz / norm
            bad = n2 < _TINY2
            if bad.any():  # coincident joints: the rest bone's direction
                d = bone_direction(rest_rows[p], rest_rows[j])
                assert d is not None
                ux, uy, uz = np.where(bad, d[0], ux), np.where(bad, d[1], uy), np.where(bad, d[2], uz)
            k = r.lengths[j]
            xs[j], ys[j], zs[j] = xs[p] + ux * k, ys[p] + uy * k, zs[p] + uz * k
    return xs, ys, zs


def solve_path(
    path: list[int], lengths: list[float], pose: Pose, target: np.ndarray, tol: float, max_it: int
) -> np.ndarray:
    """``chain.run_chain`` on the joints ``path`` of ``pose`` (``(B,)`` arrays), in place; returns iterations ``(B,)``.

    ``lengths[i]`` is the bone from ``path[i]`` to ``path[i + 1]``; ``target`` is ``(B, 3)``.
    """
    xs_all, ys_all, zs_all = pose
    bsize = target.shape[0]
    last = len(path) - 1
    first = np.array([[xs_all[j], ys_all[j], zs_all[j]] for j in path])  # (L, 3, B)
    out = first.copy()
    t_all = np.ascontiguousarray(target.T)
    iterations = np.zeros(bsize, dtype=np.int64)
    base = first[0]
    dist = _norm(t_all - base)
    far = dist > sum(lengths)
    if far.any():  # unreachable: straighten toward the target in one step
        u = (t_all - base)[:, far] / dist[far]
        p = base[:, far]
        for i in range(last):
            p = p + u * lengths[i]
            out[i + 1][:, far] = p
        iterations[far] = 1
    err = _norm(out[last] - t_all)
    live = np.flatnonzero(~far & (err > tol))
    # The live problems' joints: ``a`` (L, 3, m). A problem that stops is written to ``out`` and no
    # longer ``running``; its column is dropped when a quarter of the columns have stopped.
    a = out[:, :, live]
    t, base, err = t_all[:, live], base[:, live], err[live]
    running = np.ones(live.size, dtype=bool)
    work = _Work(a.shape)
    eps = STALL * tol
    it = 0
    while live.size and it < max_it:
        count = int(running.sum())
        if count < TAIL:  # a few stragglers: numpy's per-call cost exceeds the scalar chain's
            for b in live[running]:
                iterations[b] = _scalar_chain(first[:, :, b], lengths, t_all[:, b], out[:, :, b], tol, max_it)
            break
        if 4 * count <= 3 * live.size:
            live, t, base, err, a = live[running], t[:, running], base[:, running], err[running], a[:, :, running]
            running = np.ones(live.size, dtype=bool)
            work = _Work(a.shape)
        it += 1
        _chain_iteration(a, t, base, lengths, work)
        new = _norm(a[last] - t)
        stalled = running & (err - new < eps) & (new > tol)
        stop = stalled | (running & ((new <= tol) | (it >= max_it)))
        err = new
        if not stop.any():
            continue
        rerun = np.zeros(live.size, dtype=bool)
        if MAX_BENDS > 0 and stalled.any():
            cols = np.flatnonzero(stalled)
            rerun[cols] = _straight(a[:, :, cols], t[:, cols], sum(lengths))
        cols = np.flatnonzero(stop & ~rerun)
        out[:, :, live[cols]] = a[:, :, cols]
        iterations[live[cols]] = it
        for b in live[rerun]:  # the scalar chain, which bends a straight chain, from the start
            iterations[b] = _scalar_chain(first[:, :, b], lengths, t_all[:, b], out[:, :, b], tol, max_it)
        running &= ~stop
    for k, j in enumerate(path):
        xs_all[j], ys_all[j], zs_all[j] = out[k]
    return iterations


def _norm(v: np.ndarray) -> np.ndarray:
    """Lengths of the columns of ``(3, m)`` vectors, summed as ``x*x + y*y + z*z`` like the scalar code."""
    sq = v * v
    return np.sqrt(sq[0] + sq[1] + sq[2])


def _scalar_chain(
    start: np.ndarray, lengths: list[float], target: np.ndarray, out: np.ndarray, tol: float, max_it: int
) -> int:
    """``run_chain`` on one problem's ``(L, 3)`` start; writes the ``(L, 3)`` result to ``out``; its iterations."""
    xs, ys, zs = start.T.tolist()
    it, _ = run_chain(xs, ys, zs, lengths, target.tolist(), tol, max_it)
    out[:, 0], out[:, 1], out[:, 2] = xs, ys, zs
    return it


class _Work:
    """Scratch arrays of a chain iteration on ``(L, 3, m)`` joints (numpy's out= avoids an allocation per step)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.stage1 = np.empty(shape)
        self.d = np.empty(shape[1:])
        self.sq = np.empty(shape[1:])
        self.l2 = np.empty(shape[2:])


def _chain_iteration(a: np.ndarray, t: np.ndarray, base: np.ndarray, lengths: list[float], work: _Work) -> None:
    """One forward-and-backward iteration of ``run_chain`` on ``(L, 3, m)`` joints ``a``, in place."""
    w = work.stage1
    last = a.shape[0] - 1
    w[last] = t
    for i in range(last - 1, -1, -1):  # stage 1, forward reaching: old joints a, new joints w
        _reach(a[i], w[i + 1], a[i + 1], lengths[i], w[i], work)
    a[0] = base
    for i in range(1, last + 1):  # stage 2, backward reaching: stage-1 joints w, new joints a
        _reach(w[i], a[i - 1], w[i - 1], lengths[i - 1], a[i], work)


def _reach(c: np.ndarray, p: np.ndarray, old: np.ndarray, length: float, out: np.ndarray, work: _Work) -> None:
    """``out = p + (c - p) * (length / |c - p|)`` on ``(3, m)`` points; ``c - old`` where ``c`` lies on ``p``."""
    d, sq, l2 = work.d, work.sq, work.l2
    np.subtract(c, p, out=d)
    np.multiply(d, d, out=sq)
    np.add(sq[0], sq[1], out=l2)
    np.add(l2, sq[2], out=l2)
    if l2.min() < _TINY2:  # landed on the joint: keep the old bone's direction
        np.copyto(d, c - old, where=l2 < _TINY2)
        np.multiply(d, d, out=sq)
        np.add(sq[0], sq[1], out=l2)
        np.add(l2, sq[2], out=l2)
    np.sqrt(l2, out=l2)
    np.divide(length, l2, out=l2)
    np.multiply(d, l2, out=d)
    np.add(p, d, out=out)


def _straight(joints: np.ndarray, t: np.ndarray, scale: float) -> np.ndarray:
    """``chain._bend_if_straight``'s test (without the bend) for ``(L, 3, k)`` chains and ``(3, k)`` targets."""
    n, _, k = joints.shape
    if n < 3:
        return np.zeros(k, dtype=bool)
    b = joints[0]
    sq = (joints[1:] - b) ** 2
    far = np.argmax(sq[:, 0] + sq[:, 1] + sq[:, 2], axis=0) + 1
    u = joints[far, :, np.arange(k)].T - b
    n2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    ok = n2 >= _TINY2
    with np.errstate(invalid="ignore", divide="ignore"):
        u = u / np.sqrt(n2)
    r = np.concatenate([joints, t[None]]) - b
    along = r[:, 0] * u[0] + r[:, 1] * u[1] + r[:, 2] * u[2]
    off = (r - along[:, None, :] * u) ** 2
    return ok & ~np.any(off[:, 0] + off[:, 1] + off[:, 2] > (STRAIGHT * scale) ** 2, axis=0)


def solve_tree(
    skeleton: Skeleton,
    r: Rig,
    pose: Pose,
    goal: dict[int, np.ndarray],
    weights: dict[int, float] | None,
    active: list[bool],
    tol: float,
    max_it: int,
) -> np.ndarray:
    """``solver._solve_tree`` on ``(B,)`` arrays, in place; ``goal``: effector -> ``(B, 3)``; iterations ``(B,)``."""
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
    xs_all, ys_all, zs_all = pose
    out = [np.array([c[j] for j in moving]) for c in pose]  # (len(moving), B) per coordinate
    bsize = out[0].shape[1]
    iterations = np.zeros(bsize, dtype=np.int64)
    targets = {e: [t[:, 0].copy(), t[:, 1].copy(), t[:, 2].copy()] for e, t in goal.items()}
    err = _largest_error(pose, targets)
    live = np.flatnonzero(err > tol)
    state = [{j: c[j][live] for j in moving} for c in pose]
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
    for k, j in enumerate(moving):
        xs_all[j], ys_all[j], zs_all[j] = out[0][k], out[1][k], out[2][k]
    return iterations


def _largest_error(pose: Pose | list[dict[int, np.ndarray]], targets: dict[int, list[np.ndarray]]) -> np.ndarray:
    xs, ys, zs = pose
    err = None
    for e, (tx, ty, tz) in targets.items():
        dx, dy, dz = xs[e] - tx, ys[e] - ty, zs[e] - tz
        one = np.sqrt(dx * dx + dy * dy + dz * dz)
        err = one if err is None else np.maximum(err, one)
    assert err is not None
    return err


def finish(skeleton: Skeleton, r: Rig, pose: Pose, start: Pose, active: list[bool]) -> list[QuatArrays]:
    """``solver._finish``: place untargeted branches (``pose`` in place) and return every joint's frame.

    ``pose`` holds ``(B,)`` arrays, ``start`` ``(B,)`` or ``(1,)`` ones; frames are ``(B,)`` or ``(1,)`` arrays.
    """
    xs, ys, zs = pose
    sx, sy, sz = start
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
            fixed = rot.mul(pf, r.rest_local[j])
            frame = tuple(np.where(none, a, b) for a, b in zip(fixed, frame))  # type: ignore[assignment]
        sf[j] = frame
    frames: list[QuatArrays] = [None] * n  # type: ignore[list-item]
    for j in r.order:
        p = r.parents[j]
        pf = frames[p] if p >= 0 else rot.IDENTITY
        c = r.first_child[j]
        if c < 0:
            frames[j] = rot.mul(pf, r.rest_local[j])
        elif active[j] and not active[c]:
            frames[j] = sf[j] if p < 0 else rot.mul(pf, rot.mul(rot.conj(sf[p]), sf[j]))
        else:
            d, _ = _unit((xs[c] - xs[j], ys[c] - ys[j], zs[c] - zs[j]))
            frames[j] = _swing_frame(r, j, pf, d)
        carried = [c for c in r.children[j] if not active[c]] if active[j] else []
        if not carried:
            continue
        turn = rot.IDENTITY if p < 0 else rot.mul(frames[j], rot.conj(sf[j]))
        for c in carried:
            for x in r.subtree(c):
                v = rot.rotate(turn, (sx[x] - sx[j], sy[x] - sy[j], sz[x] - sz[j]))
                xs[x], ys[x], zs[x] = xs[j] + v[0], ys[j] + v[1], zs[j] + v[2]
    return frames


def _unit(v: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """``rotations.unit`` on arrays: the unit vectors and where they are undefined (None in the scalar)."""
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    with np.errstate(invalid="ignore", divide="ignore"):
        n = np.sqrt(n2)
        return (v[0] / n, v[1] / n, v[2] / n), n2 < _TINY2


def _swing_frame(r: Rig, j: int, parent_frame: tuple, direction: tuple) -> QuatArrays:
    """``Rig.swing_frame`` on arrays."""
    local = rot.rotate(rot.conj(parent_frame), direction)
    s = _swing(r.rest_dir[j], local, r.rest_x[j])
    return rot.mul(parent_frame, rot.mul(s, r.rest_local[j]))  # type: ignore[return-value]


def _swing(a: rot.Vec, b: tuple, half_turn_axis: rot.Vec) -> QuatArrays:
    """``rotations.swing`` of a constant unit ``a`` onto unit vectors ``b`` (arrays)."""
    ax, ay, az = a
    bx, by, bz = b
    d = ax * bx + ay * by + az * bz
    cx = ay * bz - az * by
    cy = az * bx - ax * bz
    cz = ax * by - ay * bx
    c2 = cx * cx + cy * cy + cz * cz
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(d >= 0.0, 1.0 + d, c2 / (1.0 - d))  # as rotations.swing: no cancellation
        n = np.sqrt(c2 + w * w)
        q = (cx / n, cy / n, cz / n, w / n)
    opposite = (d < 0.0) & (c2 < rot.OPPOSITE2)
    if np.any(opposite):  # the half turn does not depend on b
        half = rot.swing(a, (-ax, -ay, -az), half_turn_axis)
        q = tuple(np.where(opposite, h, c) for h, c in zip(half, q))  # type: ignore[assignment]
    return q  # type: ignore[return-value]
