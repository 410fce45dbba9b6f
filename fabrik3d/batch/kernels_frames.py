"""The compiled backends' frames: ``solver.tree._finish`` for one solved pose whose joints all moved.

Where every joint lies on a path from the root to a target (a chain solved whole, the humanoid with
its five targets), ``_finish`` carries no branch and keeps no start rotation: each joint's frame is
its parent's turned by the swing of its bone (``Rig.swing_frame``: ``rotate`` by the parent's inverse,
``rotations.swing``, two ``mul``), a leaf's its parent's times its rest local rotation. ``build_frames``
writes that per problem on scalars, each expression ``rotations``' own in the same order, so the frames
are the scalar ones (``fabrik3d.batch.frames.finish`` differs from both only in the sign of a zero);
the drivers are in ``fabrik3d.batch.backends``, the build as in ``fabrik3d.batch.kernels``. A block's
problems go through joint by joint as the lanes (columns) of ``(n, 3, G)`` and ``(n, 4, G)`` working
arrays, and a bone opposite its rest direction picks the swing's half turn (about an axis that depends
on the joint alone: ``frame_arrays`` works it out with ``rotations.swing`` itself) instead of
branching, so the loop over the lanes compiles to vector instructions on a CPU (``G`` is 1 on a GPU).

Arrays: ``pose`` ``(B, n, 3)``, ``steps`` ``(n, 3)`` (joint, parent, first child; -1 for none) in
skeleton order, ``rest`` ``(n, 10)`` (per joint: the rig's rest direction, the swing's half-turn axis
for a bone opposite it, the rest local rotation), ``frames`` ``(B, n, 4)`` the results (``x, y, z,
w``); lane state ``p`` ``(K, n, 3, G)`` and ``f`` ``(K, n, 4, G)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch.kernels import in_order
from fabrik3d.rotations import OPPOSITE2
from fabrik3d.solver.rig import Rig


def frame_arrays(r: Rig) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, rest)`` for ``build_frames``: the rig's order and rest constants as arrays (the half-turn
    axis is ``rotations.swing``'s for a bone opposite the rest direction)."""
    steps = np.array([(j, r.parents[j], r.first_child[j]) for j in r.order], dtype=np.int64)
    rows = []
    for j in range(len(r.parents)):
        a = r.rest_dir[j]
        half = rot.swing(a, (-a[0], -a[1], -a[2]), r.rest_x[j])
        rows.append((*a, *half[:3], *r.rest_local[j]))
    return steps, np.array(rows, dtype=np.float64).reshape(-1, 10)


def build_frames(jit: Callable[[Any], Any], take: Callable[..., int] = in_order) -> Callable[..., None]:
    """The frames' functions, each passed through ``jit``; returns ``frames_block``. ``take``: as
    ``kernels.build``'s."""
    take_next = jit(take)

    @jit
    def frames_block(k, lo, hi, queue, pose, steps, rest, frames, p, f):  # type: ignore[no-untyped-def]
        """Every joint's frame of the solved poses ``lo`` to ``hi - 1``, ``G`` at a time in block ``k``'s
        lanes (``p[k]``, ``f[k]``: the lanes' joints and frames; a lane past ``hi`` steps along on
        what it holds, unread); ``take`` gives the first of each ``G`` (its ``queue``, with ``G`` 1 on a
        GPU; or in order)."""
        width = p.shape[3]
        n = steps.shape[0]
        first = lo
        while True:
            first = take_next(queue, first)
            if first >= hi:
                return
            count = min(width, hi - first)
            for g in range(count):
                for j in range(n):
                    for c in range(3):
                        p[k, j, c, g] = pose[first + g, j, c]
            for s in range(n):
                j, parent, c = steps[s, 0], steps[s, 1], steps[s, 2]
                lx, ly, lz, lw = rest[j, 6], rest[j, 7], rest[j, 8], rest[j, 9]
                if c < 0:  # a leaf: its parent's frame times its rest local rotation (rotations.mul)
                    for g in range(width):
                        fx, fy, fz, fw = 0.0, 0.0, 0.0, 1.0
                        if parent >= 0:
                            fx, fy, fz, fw = (f[k, parent, 0, g], f[k, parent, 1, g], f[k, parent, 2, g],
                                              f[k, parent, 3, g])  # fmt: skip
                        f[k, j, 0, g] = fw * lx + fx * lw + fy * lz - fz * ly
                        f[k, j, 1, g] = fw * ly - fx * lz + fy * lw + fz * lx
                        f[k, j, 2, g] = fw * lz + fx * ly - fy * lx + fz * lw
                        f[k, j, 3, g] = fw * lw - fx * lx - fy * ly - fz * lz
                    continue
                ax, ay, az = rest[j, 0], rest[j, 1], rest[j, 2]
                hx, hy, hz = rest[j, 3], rest[j, 4], rest[j, 5]
                for g in range(width):
                    fx, fy, fz, fw = 0.0, 0.0, 0.0, 1.0
                    if parent >= 0:
                        fx, fy, fz, fw = f[k, parent, 0, g], f[k, parent, 1, g], f[k, parent, 2, g], f[k, parent, 3, g]
                    vx, vy, vz = (
                        p[k, c, 0, g] - p[k, j, 0, g],
                        p[k, c, 1, g] - p[k, j, 1, g],
                        p[k, c, 2, g] - p[k, j, 2, g],
                    )
                    m = math.sqrt(vx * vx + vy * vy + vz * vz)
                    vx, vy, vz = vx / m, vy / m, vz / m
                    qx, qy, qz = -fx, -fy, -fz  # the bone in the parent's frame: rotate(conj(parent), bone)
                    tx = 2.0 * (qy * vz - qz * vy)
                    ty = 2.0 * (qz * vx - qx * vz)
                    tz = 2.0 * (qx * vy - qy * vx)
                    bx = vx + fw * tx + (qy * tz - qz * ty)
                    by = vy + fw * ty + (qz * tx - qx * tz)
                    bz = vz + fw * tz + (qx * ty - qy * tx)
                    d = ax * bx + ay * by + az * bz  # rotations.swing(rest_dir, local, rest_x)
                    cx = ay * bz - az * by
                    cy = az * bx - ax * bz
                    cz = ax * by - ay * bx
                    c2 = cx * cx + cy * cy + cz * cz
                    w = 1.0 + d if d >= 0.0 else c2 / (1.0 - d)
                    m = math.sqrt(c2 + w * w)
                    half = d < 0.0 and c2 < OPPOSITE2  # opposite to within rounding: the half turn
                    sx, sy, sz = (hx if half else cx / m), (hy if half else cy / m), (hz if half else cz / m)
                    sw = 0.0 if half else w / m
                    mx = sw * lx + sx * lw + sy * lz - sz * ly  # mul(parent, mul(swing, rest local))
                    my = sw * ly - sx * lz + sy * lw + sz * lx
                    mz = sw * lz + sx * ly - sy * lx + sz * lw
                    mw = sw * lw - sx * lx - sy * ly - sz * lz
                    f[k, j, 0, g] = fw * mx + fx * mw + fy * mz - fz * my
                    f[k, j, 1, g] = fw * my - fx * mz + fy * mw + fz * mx
                    f[k, j, 2, g] = fw * mz + fx * my - fy * mx + fz * mw
                    f[k, j, 3, g] = fw * mw - fx * mx - fy * my - fz * mz
            for g in range(count):
                for j in range(n):
                    for c in range(4):
                        frames[first + g, j, c] = f[k, j, c, g]
            first += width

    return frames_block
