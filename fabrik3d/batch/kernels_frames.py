"""The compiled backends' frames: ``solver.tree._finish`` for one solved pose whose joints all moved.

Where every joint lies on a path from the root to a target (a chain solved whole, the humanoid with
its five targets), ``_finish`` carries no branch and keeps no start rotation: each joint's frame is
its parent's turned by the swing of its bone (``Rig.swing_frame``: ``rotate`` by the parent's inverse,
``rotations.swing``, two ``mul``), a leaf's its parent's times its rest local rotation. ``build_frames``
writes that per problem on scalars, each expression ``rotations``' own in the same order, so the frames
are the scalar ones (``fabrik3d.batch.frames.finish`` differs from both only in the sign of a zero);
the drivers are in ``fabrik3d.batch.backends``, the build as in ``fabrik3d.batch.kernels``.

Arrays: ``pose`` ``(B, n, 3)``, ``steps`` ``(n, 3)`` (joint, parent, first child; -1 for none) in
skeleton order, ``rest`` ``(n, 10)`` (the rig's rest direction, rest +X and rest local rotation per
joint), ``frames`` ``(B, n, 4)`` the results (``x, y, z, w``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.rotations import OPPOSITE2, TINY2
from fabrik3d.solver.rig import Rig


def frame_arrays(r: Rig) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, rest)`` for ``build_frames``: the rig's order and rest constants as arrays."""
    steps = np.array([(j, r.parents[j], r.first_child[j]) for j in r.order], dtype=np.int64)
    rest = np.array([(*r.rest_dir[j], *r.rest_x[j], *r.rest_local[j]) for j in range(len(r.parents))])
    return steps, rest.reshape(-1, 10)


def build_frames(jit: Callable[[Any], Any]) -> Callable[..., None]:
    """The frames' functions, each passed through ``jit``; returns ``frames_block``."""

    @jit
    def unit_or_perpendicular(hx, hy, hz, ax, ay, az):  # type: ignore[no-untyped-def]
        """``swing``'s half-turn axis: ``h`` made perpendicular to unit ``a``, or else ``a`` crossed with
        its least aligned world axis (``rotations._perpendicular``), normalised (``rotations.unit``)."""
        k = hx * ax + hy * ay + hz * az
        vx, vy, vz = hx - k * ax, hy - k * ay, hz - k * az
        n2 = vx * vx + vy * vy + vz * vz
        if n2 < TINY2:
            axis = 0  # min(range(3), key=abs): the first of the smallest
            if abs(ay) < abs(ax):
                axis = 1
            if abs(az) < (abs(ax) if axis == 0 else abs(ay)):
                axis = 2
            e0, e1, e2 = (1.0 if axis == 0 else 0.0), (1.0 if axis == 1 else 0.0), (1.0 if axis == 2 else 0.0)
            vx, vy, vz = ay * e2 - az * e1, az * e0 - ax * e2, ax * e1 - ay * e0
            n2 = vx * vx + vy * vy + vz * vz
        n = math.sqrt(n2)
        return vx / n, vy / n, vz / n

    @jit
    def frames_of(b, pose, steps, rest, frames):  # type: ignore[no-untyped-def]
        """Every joint's frame of solved pose ``pose[b]`` into ``frames[b]``."""
        for s in range(steps.shape[0]):
            j, p, c = steps[s, 0], steps[s, 1], steps[s, 2]
            fx, fy, fz, fw = 0.0, 0.0, 0.0, 1.0
            if p >= 0:
                fx, fy, fz, fw = frames[b, p, 0], frames[b, p, 1], frames[b, p, 2], frames[b, p, 3]
            lx, ly, lz, lw = rest[j, 6], rest[j, 7], rest[j, 8], rest[j, 9]
            if c < 0:  # a leaf: its parent's frame times its rest local rotation (rotations.mul)
                frames[b, j, 0] = fw * lx + fx * lw + fy * lz - fz * ly
                frames[b, j, 1] = fw * ly - fx * lz + fy * lw + fz * lx
                frames[b, j, 2] = fw * lz + fx * ly - fy * lx + fz * lw
                frames[b, j, 3] = fw * lw - fx * lx - fy * ly - fz * lz
                continue
            vx, vy, vz = pose[b, c, 0] - pose[b, j, 0], pose[b, c, 1] - pose[b, j, 1], pose[b, c, 2] - pose[b, j, 2]
            n = math.sqrt(vx * vx + vy * vy + vz * vz)
            vx, vy, vz = vx / n, vy / n, vz / n
            qx, qy, qz = -fx, -fy, -fz  # the bone in the parent's frame: rotate(conj(parent), bone)
            tx = 2.0 * (qy * vz - qz * vy)
            ty = 2.0 * (qz * vx - qx * vz)
            tz = 2.0 * (qx * vy - qy * vx)
            bx = vx + fw * tx + (qy * tz - qz * ty)
            by = vy + fw * ty + (qz * tx - qx * tz)
            bz = vz + fw * tz + (qx * ty - qy * tx)
            ax, ay, az = rest[j, 0], rest[j, 1], rest[j, 2]  # rotations.swing(rest_dir, local, rest_x)
            d = ax * bx + ay * by + az * bz
            cx = ay * bz - az * by
            cy = az * bx - ax * bz
            cz = ax * by - ay * bx
            c2 = cx * cx + cy * cy + cz * cz
            if d < 0.0 and c2 < OPPOSITE2:  # opposite to within rounding: the half turn
                sx, sy, sz = unit_or_perpendicular(rest[j, 3], rest[j, 4], rest[j, 5], ax, ay, az)
                sw = 0.0
            else:
                w = 1.0 + d if d >= 0.0 else c2 / (1.0 - d)
                m = math.sqrt(c2 + w * w)
                sx, sy, sz, sw = cx / m, cy / m, cz / m, w / m
            mx = sw * lx + sx * lw + sy * lz - sz * ly  # mul(parent, mul(swing, rest local))
            my = sw * ly - sx * lz + sy * lw + sz * lx
            mz = sw * lz + sx * ly - sy * lx + sz * lw
            mw = sw * lw - sx * lx - sy * ly - sz * lz
            frames[b, j, 0] = fw * mx + fx * mw + fy * mz - fz * my
            frames[b, j, 1] = fw * my - fx * mz + fy * mw + fz * mx
            frames[b, j, 2] = fw * mz + fx * my - fy * mx + fz * mw
            frames[b, j, 3] = fw * mw - fx * mx - fy * my - fz * mz

    @jit
    def frames_block(k, lo, hi, pose, steps, rest, frames):  # type: ignore[no-untyped-def]
        """``frames_of`` for problems ``lo`` to ``hi - 1`` (block ``k``: the drivers' common signature).
        (Stepping 32 problems joint by joint together measured no faster: the square roots and
        divisions' throughput, not their latency, bounds it: about 31 ns a joint on one core.)"""
        for b in range(lo, hi):
            frames_of(b, pose, steps, rest, frames)

    return frames_block
