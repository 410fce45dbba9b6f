"""The compiled backends' kernel sources for a rigid joint fitted to three or more children (the humanoid's
chest) by Horn's method (``fabrik3d.solver.constrained.passes.ReachingPasses.rigid_turn`` and
``rotations.fit_rotation``), one problem at a time, on scalars, around numpy's ``eigh``.

Horn's fit takes the eigenvector of a symmetric 4x4 matrix: that stays LAPACK's call, as the scalar solve
makes it (``numpy.linalg.eigh``), and the kernels run on either side of it, for the problems ``lo`` to
``hi - 1``:

* ``build_fit_matrix(jit)``'s block: joint ``j``'s 4x4 matrix ``(m, 4, 4)`` from its kids' points ``q``
  (``(n, 3, m)``) and its frame's offsets to them, centred or not (stage 1 or stage 2), the sums in the
  scalar order;
* ``build_fit_finish(jit)``'s block: from ``eigh``'s values ``(m, 4)`` and vectors ``(m, 4, 4)``, the fitted
  frame (``fallback``'s where the fit is flat, as ``fit_rotation``), then stage 1's point and frame
  (``ReachingPasses.rigid_stage1``: the kids' points less their offsets, averaged by weight) or stage 2's
  frame, limited, and the children placed (``BatchPasses.place_rigid``).

So the floats are the scalar solve's and the numpy twins' (``BatchPasses.rigid_stage1``, ``place_rigid``)
bit for bit. Rig constants: ``kernels_joints.rig_arrays``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from fabrik3d.batch.kernels_joints import build_joints
from fabrik3d.batch.kernels_limits import build_limits
from fabrik3d.rotations import IDENTITY


def build_fit_matrix(jit: Callable[[Any], Any]) -> Callable[..., None]:
    """Horn's matrix of a rigid joint's fit (``ReachingPasses.rigid_turn`` with three or more kids, then
    ``rotations.fit_rotation`` up to ``eigh``) on scalars; returns its ``block``."""
    vec = build_joints(jit)["vec"]

    @jit
    def block(k, lo, hi, j, centred, q, pose, kid_idx, kid_w, out, *rig):  # type: ignore[no-untyped-def]
        """Problems ``lo`` to ``hi - 1``: joint ``j``'s kids ``kid_idx`` with weights ``kid_w``, their points ``q``
        and ``j``'s ``pose`` ``(n, 3, m)``; ``centred``: both sides less their weighted means (stage 1);
        ``out`` ``(m, 4, 4)``. ``k`` unused."""
        offset = rig[12]
        kids = len(kid_idx)
        total = 0.0
        for i in range(kids):
            total = total + kid_w[i]
        for b in range(lo, hi):
            msx = msy = msz = mdx = mdy = mdz = 0.0
            if centred:
                for i in range(kids):
                    c, w = kid_idx[i], kid_w[i]
                    ox, oy, oz = vec(offset, c)
                    msx, msy, msz = msx + w * ox, msy + w * oy, msz + w * oz
                    mdx = mdx + w * (q[c, 0, b] - pose[j, 0, b])
                    mdy = mdy + w * (q[c, 1, b] - pose[j, 1, b])
                    mdz = mdz + w * (q[c, 2, b] - pose[j, 2, b])
                msx, msy, msz, mdx, mdy, mdz = (
                    msx / total,
                    msy / total,
                    msz / total,
                    mdx / total,
                    mdy / total,
                    mdz / total,
                )
            sxx = sxy = sxz = syx = syy = syz = szx = szy = szz = 0.0
            for i in range(kids):
                c, w = kid_idx[i], kid_w[i]
                ax, ay, az = vec(offset, c)
                bx, by, bz = q[c, 0, b] - pose[j, 0, b], q[c, 1, b] - pose[j, 1, b], q[c, 2, b] - pose[j, 2, b]
                if centred:
                    ax, ay, az, bx, by, bz = ax - msx, ay - msy, az - msz, bx - mdx, by - mdy, bz - mdz
                wx, wy, wz = w * ax, w * ay, w * az
                sxx, sxy, sxz = sxx + wx * bx, sxy + wx * by, sxz + wx * bz
                syx, syy, syz = syx + wy * bx, syy + wy * by, syz + wy * bz
                szx, szy, szz = szx + wz * bx, szy + wz * by, szz + wz * bz
            out[b, 0, 0], out[b, 0, 1], out[b, 0, 2], out[b, 0, 3] = sxx + syy + szz, syz - szy, szx - sxz, sxy - syx
            out[b, 1, 0], out[b, 1, 1], out[b, 1, 2], out[b, 1, 3] = syz - szy, sxx - syy - szz, sxy + syx, szx + sxz
            out[b, 2, 0], out[b, 2, 1], out[b, 2, 2], out[b, 2, 3] = szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy
            out[b, 3, 0], out[b, 3, 1], out[b, 3, 2], out[b, 3, 3] = sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz

    return block


def build_fit_finish(jit: Callable[[Any], Any]) -> Callable[..., None]:
    """The rest of a rigid joint's fit after ``eigh`` (``fit_rotation``'s flat test and normalised
    eigenvector), then its stage-1 point and frame or its stage-2 frame and children, on scalars; returns its
    ``block``."""
    f = build_limits(jit)
    rotate, sub, add = f["rotate"], f["sub"], f["add"]
    g = build_joints(jit)
    vec, limit_frame = g["vec"], g["limit_frame"]

    @jit
    def block(k, lo, hi, j, stage1, vals, vecs, q, frames, pose, out_frames, kid_idx, kid_w, *rig):  # type: ignore[no-untyped-def]
        """Problems ``lo`` to ``hi - 1``: ``eigh``'s ``vals`` ``(m, 4)`` and ``vecs`` ``(m, 4, 4)`` of joint ``j``'s
        matrix. Stage 1 (``stage1``): its frame (``frames[j]`` where the fit is flat) into ``out_frames[j]``
        and its point into ``pose[j]`` from its kids' points ``q`` (``(n, 3, m)``). Stage 2: its fit (``frames``
        are the pass's start frames, the fallback) limited relative to its parent's new frame
        ``out_frames[parent]`` into ``out_frames[j]``, and every child of ``j`` placed at its offset from
        ``pose[j]`` into ``pose``. ``k`` unused."""
        offset, child_ptr, child_idx = rig[12], rig[15], rig[16]
        p = rig[0][j]
        for b in range(lo, hi):
            top = abs(vals[b, 3])
            if vals[b, 3] - vals[b, 2] <= 1e-9 * (1e-300 if 1e-300 > top else top):
                fit = (frames[j, 0, b], frames[j, 1, b], frames[j, 2, b], frames[j, 3, b])
            else:
                w, x, y, z = vecs[b, 0, 3], vecs[b, 1, 3], vecs[b, 2, 3], vecs[b, 3, 3]
                n = math.sqrt(x * x + y * y + z * z + w * w)
                fit = IDENTITY if n == 0.0 else (x / n, y / n, z / n, w / n)
            if stage1:
                sx = sy = sz = sw = 0.0
                for i in range(len(kid_idx)):
                    c, wc = kid_idx[i], kid_w[i]
                    pc = sub((q[c, 0, b], q[c, 1, b], q[c, 2, b]), rotate(fit, vec(offset, c)))
                    sx, sy, sz, sw = sx + wc * pc[0], sy + wc * pc[1], sz + wc * pc[2], sw + wc
                pose[j, 0, b], pose[j, 1, b], pose[j, 2, b] = sx / sw, sy / sw, sz / sw
                out_frames[j, 0, b], out_frames[j, 1, b], out_frames[j, 2, b], out_frames[j, 3, b] = fit
                continue
            fp = (out_frames[p, 0, b], out_frames[p, 1, b], out_frames[p, 2, b], out_frames[p, 3, b])
            fj = limit_frame(j, fp, fit, rig)
            out_frames[j, 0, b], out_frames[j, 1, b], out_frames[j, 2, b], out_frames[j, 3, b] = fj
            pj = (pose[j, 0, b], pose[j, 1, b], pose[j, 2, b])
            for at in range(child_ptr[j], child_ptr[j + 1]):
                c = child_idx[at]
                pose[c, 0, b], pose[c, 1, b], pose[c, 2, b] = add(pj, rotate(fj, vec(offset, c)), 1.0)

    return block
