"""Frames of a batch of poses (internal to ``fabrik3d.batch``): ``solver.tree._finish`` on arrays.

``finish`` places the untargeted branches and computes every joint's frame by
the swing rule, as ``solver.tree._finish`` does for one pose, on ``(n, 3, B)`` poses
(joint, coordinate, problem), with the batch math helpers (``fabrik3d.batch.math``:
``unit``, and ``mul``, ``rotate`` and ``swing`` with the rig's constants folded), so
the frames are the scalar ones (but for the sign of a zero).
"""

from __future__ import annotations

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch import math as bm
from fabrik3d.model.skeleton import Skeleton
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
        d, ok = bm.unit((sx[c] - sx[j], sy[c] - sy[j], sz[c] - sz[j]))
        frame = _swing_frame(r, j, pf, d)
        if not ok.all():  # a bone lost to rounding (a tiny bone far from the origin)
            fixed = bm.mul(pf, r.rest_local[j])
            frame = tuple(np.where(ok, b, a) for a, b in zip(fixed, frame))  # type: ignore[assignment]
        sf[j] = frame
    frames: list[QuatArrays] = [None] * n  # type: ignore[list-item]
    for j in r.order:
        p = r.parents[j]
        pf = frames[p] if p >= 0 else rot.IDENTITY
        c = r.first_child[j]
        if c < 0:
            frames[j] = bm.mul(pf, r.rest_local[j])
        elif active[j] and not active[c]:
            frames[j] = sf[j] if p < 0 else bm.mul(pf, bm.mul(rot.conj(sf[p]), sf[j]))
        else:
            d, _ = bm.unit((xs[c] - xs[j], ys[c] - ys[j], zs[c] - zs[j]))
            frames[j] = _swing_frame(r, j, pf, d)
        carried = [c for c in r.children[j] if not active[c]] if active[j] else []
        if not carried:
            continue
        turn = rot.IDENTITY if p < 0 else bm.mul(frames[j], rot.conj(sf[j]))
        for c in carried:
            for x in r.subtree(c):
                v = bm.rotate(turn, (sx[x] - sx[j], sy[x] - sy[j], sz[x] - sz[j]))
                xs[x], ys[x], zs[x] = xs[j] + v[0], ys[j] + v[1], zs[j] + v[2]
    return frames


def _swing_frame(r: Rig, j: int, parent_frame: tuple, direction: tuple) -> tuple:
    """``Rig.swing_frame`` on arrays."""
    local = bm.rotate(rot.conj(parent_frame), direction)
    s = bm.swing(r.rest_dir[j], local, r.rest_x[j], fold=True)
    return bm.mul(parent_frame, bm.mul(s, r.rest_local[j]))
