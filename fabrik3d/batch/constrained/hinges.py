"""The hinges' rules of the constrained solver's reaching passes (``fabrik3d.solver.constrained.passes``),
vectorised over a batch: a rolling joint's roll toward its hinge's plane (``roll_for_hinge``) and the swivel
of a hinge's parent where FABRIK folded the hinge the wrong way (``swivel_for_hinge``). Batch values as in
``fabrik3d.batch.constrained.passes``; the scalar expressions in the scalar order."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch import limits as bl
from fabrik3d.batch import math as bm
from fabrik3d.batch.constrained.subsets import BQuat, BVec, put, take
from fabrik3d.solver.constrained.passes import SWIVEL_MISFIT, SWIVEL_REFINE, SWIVELS

if TYPE_CHECKING:
    from fabrik3d.solver.rig import Rig


class BatchHinges:
    """Mixin of ``BatchPasses``: the hinges' rules of stage 2 (the host provides ``r`` and ``aim_frame``)."""

    r: Rig

    if TYPE_CHECKING:

        def aim_frame(self, j: int, fp: BQuat, aim: BVec, previous: BVec | None) -> BQuat: ...

    @bm.quiet
    def roll_for_hinge(self, j: int, c: int, pj: BVec, frame: BQuat, q: list[BVec]) -> BQuat:
        """``ReachingPasses.roll_for_hinge``: rolling joint ``j``'s frame twisted about its bone, within its
        ``Twist`` limit, so that hinge ``c``'s plane holds the grandchild's stage-1 point (of the two twists
        that do, the one bent within the hinge's range, then the smaller); unchanged where that point is
        undefined or the child's bone runs along this one."""
        r = self.r
        hinge = r.limits[c].swing
        pc = rot.add(pj, rot.y_axis(frame), r.lengths[c])
        w, ok = bm.unit(rot.sub(q[r.first_child[c]], pc))
        tx, ty, tz = rot.rotate_inv(frame, w)
        ax, ay, az = hinge.a  # type: ignore[union-attr]
        big_a, big_b, big_c = ax * tx + az * tz, ax * tz - az * tx, ay * ty
        radius = np.sqrt(big_a * big_a + big_b * big_b)
        ok = ok & ~(radius < 1e-9)
        base = bm.atan2(big_b, big_a)
        ratio = -big_c / np.where(ok, radius, 1.0)
        spread = bm.acos(np.where(1.0 < ratio, 1.0, np.where(-1.0 > ratio, -1.0, ratio)))  # max(-1, min(1, r))
        keys, taus = [], []
        for theta in (base + spread, base - spread):
            c_, s_ = np.cos(theta), np.sin(theta)
            phi, on = bl._hinge_angle(hinge, (tx * c_ + tz * s_, ty, -tx * s_ + tz * c_))  # type: ignore[arg-type]
            tau = (-theta + math.pi) % (2.0 * math.pi) - math.pi
            miss = hinge.lo - phi  # type: ignore[union-attr]
            miss = np.where(phi - hinge.hi > miss, phi - hinge.hi, miss)  # type: ignore[union-attr]
            keys.append(np.where(on, np.where(0.0 > miss, 0.0, miss), 0.0))  # max(lo - phi, phi - hi, 0.0)
            taus.append(tau)
        second = (keys[1] < keys[0]) | ((keys[1] == keys[0]) & (np.abs(taus[1]) < np.abs(taus[0])))
        lo, hi = r.limits[j].twist  # type: ignore[misc]
        chosen = bl.clamp_angle(np.where(second, taus[1], taus[0]), lo, hi)
        return bm.pick(ok, rot.mul(frame, bm.axis_angle(rot.Y_AXIS, chosen)), frame)  # type: ignore[return-value]

    def misfit(self, c: int, g: int, pj: BVec, f: BQuat, target: BVec) -> np.ndarray:
        """How far hinge ``c`` must correct its bone toward ``target`` (its child ``g``'s point)
        when its parent's frame is ``f`` (0 where the direction is undefined)."""
        r = self.r
        pc = rot.add(pj, rot.y_axis(f), r.lengths[c])
        d, ok = bm.unit(rot.sub(target, pc))
        local = rot.rotate_inv(f, d)
        allowed = bl.project(r.limits[c].swing, local, None)
        dx, dy, dz = (a - b for a, b in zip(local, allowed))
        return np.where(ok, np.sqrt(dx * dx + dy * dy + dz * dz), 0.0)

    def swivel_for_hinge(
        self, j: int, c: int, fp: BQuat, pj: BVec, frame: BQuat, q: list[BVec], previous: BVec | None
    ) -> BQuat:
        """``passes.ReachingPasses.swivel_for_hinge`` on the problems whose hinge needs it."""
        r = self.r
        g = r.first_child[c]
        m = len(frame[3])
        axis, ok = bm.unit(rot.sub(q[g], pj))
        need = np.flatnonzero(ok & (self.misfit(c, g, pj, frame, q[g]) >= SWIVEL_MISFIT))
        if not len(need):
            return frame
        at = (take(fp, need), take(pj, need), take(axis, need), take(q[g], need), take(q[c], need))
        prev = None if previous is None else take(previous, need)
        # The first of the coarse turns (k = 1, 2, ...; + before -) that lets the hinge bend: all
        # twelve tried at once on the problems repeated, one block per turn.
        step = 2.0 * math.pi / SWIVELS
        count = len(need)
        turns = [(k, sign) for k in range(1, SWIVELS // 2 + 1) for sign in (1.0, -1.0)]
        rep = np.tile(np.arange(count), len(turns))
        angles = np.repeat([sign * k * step for k, sign in turns], count)
        tried, fits = self.swivelled(
            j, c, g, tuple(take(x, rep) for x in at), None if prev is None else take(prev, rep), angles
        )
        fits = fits.reshape(len(turns), count)
        found = fits.any(axis=0)
        first = fits.argmax(axis=0)  # the first turn that fits (0 where none does)
        pick = first * count + np.arange(count)
        best = bm.pick(found, take(tried, pick), take(frame, need))
        k_of = np.array([k for k, _ in turns], dtype=float)[first]
        sign_of = np.array([sign for _, sign in turns])[first]
        idx = np.flatnonzero(found)
        if len(idx):  # then halve the last interval toward the smallest turn that does
            at_i = tuple(take(x, idx) for x in at)
            prev_i = None if prev is None else take(prev, idx)
            f = take(best, idx)
            sign, kk = sign_of[idx], k_of[idx]
            lo, hi = (kk - 1.0) * step, kk * step
            for _ in range(SWIVEL_REFINE):
                mid = 0.5 * (lo + hi)
                h, fits = self.swivelled(j, c, g, at_i, prev_i, sign * mid)
                hi = np.where(fits, mid, hi)
                lo = np.where(fits, lo, mid)
                f = bm.pick(fits, h, f)
            best = put(best, idx, f, count)
        return put(frame, need, best, m)

    def swivelled(
        self, j: int, c: int, g: int, at: tuple, previous: BVec | None, angle: Any
    ) -> tuple[BQuat, np.ndarray]:
        """``j``'s frame with its aim turned by ``angle`` about the line to grandchild ``g``, and
        where that lets hinge ``c`` bend (``at``: parent frame, ``j``'s point, the line's unit
        axis, ``g``'s and ``c``'s stage-1 points)."""
        fp, pj, axis, target, qc = at
        aim, ok = bm.unit(rot.rotate(bm.axis_angle(axis, angle), rot.sub(qc, pj)))
        f = self.aim_frame(j, fp, aim, previous)
        return f, ok & (self.misfit(c, g, pj, f, target) < SWIVEL_MISFIT)
