"""The constrained solver's reaching passes (``fabrik3d.solver.constrained.passes``), vectorised over a batch.

Each function here is its scalar twin written on batch values: a position is a tuple of three ``(m,)``
float arrays (one per coordinate, one element per problem), a frame a tuple of four ``(x, y, z, w)``;
the rig's constants stay tuples of floats (the ``fabrik3d.rotations`` arithmetic takes both). The
expressions are the scalar ones in the same order, so each problem's floats are the scalar solve's
(``+ - * / sqrt`` are correctly rounded in both; ``numpy``'s trigonometric functions may differ from
``math``'s in the last bit). Branches become masks: both sides are computed and ``np.where`` chooses
(``fabrik3d.batch.math``). Orientation targets and a root orientation are here too; poles are in
``fabrik3d.batch.constrained.poles``. On ``backend="cpu"``, ``compiled`` runs the passes instead.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from fabrik3d import rotations as rot
from fabrik3d.batch import limits as bl
from fabrik3d.batch import math as bm
from fabrik3d.batch.constrained.hinges import BatchHinges
from fabrik3d.batch.constrained.subsets import BQuat, BVec, full

if TYPE_CHECKING:
    from fabrik3d.batch.compiled_passes import CompiledPasses
    from fabrik3d.solver.constrained.plan import LimitedPlan
    from fabrik3d.solver.rig import Rig


class BatchPasses(BatchHinges):
    """Stage 1 and stage 2 with limits on ``m`` problems of one rig and target set (``plan``).

    ``goal_positions`` maps each targeted effector to its ``(m,)``-array target position, ``goal_orientations`` each
    effector with an orientation target to its ``(m,)``-array orientation and its weight, and
    ``yield_share`` (``(m,)``) is the share of the orientation targets' weights still in force
    (``LimitedSolve.yield_share``, per problem). ``root_frame``: the root's fixed frame, or None.
    """

    def __init__(
        self,
        r: Rig,
        plan: LimitedPlan,
        goal_positions: dict[int, BVec],
        goal_orientations: dict[int, tuple[BQuat, float]] | None = None,
        root_frame: rot.Quat | None = None,
    ) -> None:
        self.r = r
        self.plan = plan
        self.goal_positions = goal_positions
        self.goal_orientations = goal_orientations or {}
        self.yield_share: Any = 1.0
        self.root_frame = root_frame
        self.compiled: CompiledPasses | None = None  # (backend="cpu", where the rig and targets are covered)

    def reach(self, pose: list[BVec], frames: list[BQuat], start: list[BVec]) -> tuple[list[BVec], list[BQuat]]:
        """An iteration's stage 1 from ``pose``, then stage 2 from ``start``; ``compiled`` where set (same floats)."""
        if self.compiled is not None:
            return self.compiled.reach(self, pose, frames, start)
        return self.stage2(self.stage1(pose, frames)[0], frames, start, self.plan.active, self.plan.up, self.plan.kids)

    # -- stage 1: effectors inward ---------------------------------------------------------------
    def stage1(self, pose: list[BVec], frames: list[BQuat]) -> tuple[list[BVec], list[BQuat]]:
        r, plan = self.r, self.plan
        q = list(pose)
        qf = list(frames)
        for j in plan.down:
            g = self.goal_positions.get(j)
            if g is not None:
                q[j] = g
                if j in self.goal_orientations:
                    qf[j] = self.goal_orientations[j][0]
                continue
            kids = plan.kids[j]
            if r.rigid[j]:
                q[j], qf[j] = self.rigid_stage1(j, pose[j], frames[j], q, kids)
            elif len(kids) == 1:
                q[j], qf[j] = self.reach_inward(j, kids[0][0], pose, frames, q, qf)
            else:
                sx = sy = sz = sw = 0.0
                for c, w in kids:
                    d = bm.unit_or(rot.sub(pose[j], q[c]), bm.unit_or(rot.sub(pose[j], pose[c]), rot.Y_AXIS))
                    p = rot.add(q[c], d, r.lengths[c])
                    sx, sy, sz, sw = sx + w * p[0], sy + w * p[1], sz + w * p[2], sw + w
                q[j] = (sx / sw, sy / sw, sz / sw)
        return q, qf

    def reach_inward(
        self, j: int, c: int, pose: list[BVec], frames: list[BQuat], q: list[BVec], qf: list[BQuat]
    ) -> tuple[BVec, BQuat]:
        r = self.r
        e_c = self.plan.offset_dir[c]
        old_bone = rot.rotate(frames[j], e_c)
        bone = bm.unit_or(rot.sub(q[c], pose[j]), old_bone)
        aim = self.goal_orientations.get(c)
        if aim is not None:
            wanted = rot.rotate(aim[0], e_c)
            w = aim[1] * self.yield_share
            bone = bm.unit_or(rot.add(tuple(x * (1.0 - w) for x in bone), wanted, w), wanted)  # type: ignore[arg-type]
        limit = r.limits[c].swing
        if limit is None and r.limits[j].swing is None:
            return rot.add(q[c], bone, -r.lengths[c]), frames[j]
        frame = rot.mul(bm.swing(old_bone, bone, rot.x_axis(frames[j])), frames[j])
        if limit is not None:
            local = rot.rotate_inv(frame, rot.y_axis(qf[c]))
            previous = rot.rotate_inv(frames[j], rot.y_axis(frames[c]))
            allowed = bl.project(limit, local, previous)
            moved = bm.changed(allowed, local)
            if moved.any():
                turned = rot.mul(frame, bm.swing(allowed, local, r.rest_x[c]))
                frame = bm.pick(moved, turned, frame)
                bone = bm.pick(moved, rot.rotate(frame, e_c), bone)
        return rot.add(q[c], bone, -r.lengths[c]), frame

    def rigid_stage1(
        self, j: int, pj: BVec, fj: BQuat, q: list[BVec], kids: list[tuple[int, float]]
    ) -> tuple[BVec, BQuat]:
        r = self.r
        turn = self.rigid_turn(pj, fj, q, kids, centred=True)
        frame = rot.mul(turn, fj) if len(kids) < 3 else turn
        sx = sy = sz = sw = 0.0
        for c, w in kids:
            p = rot.sub(q[c], rot.rotate(frame, r.offset[c]))
            sx, sy, sz, sw = sx + w * p[0], sy + w * p[1], sz + w * p[2], sw + w
        return (sx / sw, sy / sw, sz / sw), frame

    def rigid_turn(self, pj: BVec, fj: BQuat, q: list[BVec], kids: list[tuple[int, float]], centred: bool) -> BQuat:
        r = self.r
        if len(kids) <= 2:
            if len(kids) == 1:
                c = kids[0][0]
                a, a_ok = bm.unit(rot.rotate(fj, r.offset[c]))
                b, b_ok = bm.unit(rot.sub(q[c], pj))
            else:
                (c1, _), (c2, _) = kids
                a, a_ok = bm.unit(rot.rotate(fj, rot.sub(r.offset[c2], r.offset[c1])))
                b, b_ok = bm.unit(rot.sub(q[c2], q[c1]))
            return bm.pick(a_ok & b_ok, bm.swing(a, b, rot.rotate(fj, rot.X_AXIS)), rot.IDENTITY)
        ws = [w for _, w in kids]
        src: list[Any] = [r.offset[c] for c, _ in kids]
        dst: list[Any] = [rot.sub(q[c], pj) for c, _ in kids]
        if centred:
            total = sum(ws)
            ms = tuple(sum(w * s[i] for w, s in zip(ws, src)) / total for i in range(3))
            md = tuple(sum(w * d[i] for w, d in zip(ws, dst)) / total for i in range(3))
            src = [rot.sub(s, ms) for s in src]  # type: ignore[arg-type]
            dst = [rot.sub(d, md) for d in dst]  # type: ignore[arg-type]
        return bm.fit_rotation(src, dst, ws, fj)

    # -- stage 2: root outward -----------------------------------------------------------------
    def stage2(
        self,
        q: list[BVec],
        old: list[BQuat],
        start: list[BVec],
        active: list[bool],
        up: list[int],
        kids: list[list[tuple[int, float]]],
        rng: random.Random | None = None,
    ) -> tuple[list[BVec], list[BQuat]]:
        """Place active joints outward from the fixed root, limiting each frame.

        With ``rng``, every bone aims in a random direction instead (a restart): the scalar
        stage 2's draws, in its order, so the same for every problem.
        """
        r = self.r
        parents, children, first_child, lengths, hinged = (
            r.parents,
            r.children,
            r.first_child,
            r.lengths,
            self.plan.hinged,
        )
        pose = list(q)
        frames = list(old)
        root = r.order[0]
        pose[root] = start[root]
        for j in up:
            p = parents[j]
            fp = frames[p] if p >= 0 else rot.IDENTITY
            pj = pose[j]
            if not children[j]:
                frames[j] = self.effector_frame(j, fp)
                continue
            if r.rigid[j]:
                self.place_rigid(j, pose, frames, old, q, kids[j], rng)
                continue
            first = first_child[j]
            if active[first]:
                aim = bm.unit_or(rot.sub(q[first], pj), rot.y_axis(old[j]))
                if rng is not None:
                    drawn = rot.unit(tuple(rng.gauss(0.0, 1.0) for _ in range(3)))  # type: ignore[arg-type]
                    aim = aim if drawn is None else full(drawn, len(pj[0]))
                previous = None
                if hinged[j]:
                    previous = rot.rotate_inv(old[p], rot.y_axis(old[j])) if p >= 0 else rot.y_axis(old[j])
                frames[j] = self.aim_frame(j, fp, aim, previous)
                if rng is None and hinged[first] and active[first_child[first]]:
                    if r.rolls[j]:
                        frames[j] = self.roll_for_hinge(j, first, pj, frames[j], q)
                    frames[j] = self.swivel_for_hinge(j, first, fp, pj, frames[j], q, previous)
            elif p >= 0:
                frames[j] = rot.mul(fp, rot.mul(rot.conj(old[p]), old[j]))
            for c, _ in kids[j]:
                if c == first:
                    pose[c] = rot.add(pj, rot.y_axis(frames[j]), lengths[c])
                else:
                    d = bm.unit_or(rot.sub(q[c], pj), bm.unit_or(rot.sub(start[c], start[j]), rot.Y_AXIS))
                    pose[c] = rot.add(pj, d, lengths[c])
        return pose, frames

    def place_rigid(
        self,
        j: int,
        pose: list[BVec],
        frames: list[BQuat],
        old: list[BQuat],
        q: list[BVec],
        kids: list[tuple[int, float]],
        rng: random.Random | None = None,
    ) -> None:
        """Stage 2 of rigid joint ``j``, in place: its frame fitted to its ``kids``' stage-1 points ``q`` (the
        root keeps its frame), limited, and all its children placed rigidly (``ReachingPasses.stage2``'s)."""
        r = self.r
        p, pj = r.parents[j], pose[j]
        if p < 0:
            frames[j] = self.limit_frame(j, rot.IDENTITY, old[j] if self.root_frame is None else self.root_frame)
        else:
            turn = self.rigid_turn(pj, old[j], q, kids, centred=False)
            fit = rot.mul(turn, old[j]) if len(kids) < 3 else turn
            if rng is not None:
                drawn = rot.normalize_quat(tuple(rng.gauss(0.0, 1.0) for _ in range(4)))  # type: ignore[arg-type]
                fit = full(drawn, len(pj[0]))
            frames[j] = self.limit_frame(j, frames[p], fit)
        for c in r.children[j]:
            pose[c] = rot.add(pj, rot.rotate(frames[j], r.offset[c]))

    def aim_frame(self, j: int, fp: BQuat, aim: BVec, previous: BVec | None) -> BQuat:
        r = self.r
        local = rot.rotate_inv(fp, aim)
        limit = r.limits[j].swing
        if limit is not None:
            local = bl.project(limit, local, previous)
        return rot.mul(fp, rot.mul(bm.swing(r.rest_dir[j], local, r.rest_x[j]), r.rest_local[j]))

    def effector_frame(self, j: int, fp: BQuat) -> BQuat:
        """``ReachingPasses.effector_frame``: a leaf's frame, its parent's turned about the bone
        toward an orientation target (within its Twist limit)."""
        r = self.r
        base = rot.mul(fp, r.rest_local[j])
        aim = self.goal_orientations.get(j)
        if aim is None:
            return base
        tau = bm.twist_angle(rot.mul(rot.conj(base), aim[0]), rot.Y_AXIS)
        limit = r.limits[j].twist
        if limit is not None:
            tau = bl.clamp_angle(tau, *limit)
        return rot.mul(base, bm.axis_angle(rot.Y_AXIS, tau))

    def project(self, pose: list[BVec], frames: list[BQuat]) -> tuple[list[BVec], list[BQuat]]:
        """``LimitedSolve.project``: a pose projected onto the limits, one stage 2 of every joint
        toward itself."""
        if self.compiled is not None:
            return self.compiled.project(self, pose, frames)
        r = self.r
        every = [[(c, 1.0) for c in r.children[j]] for j in range(len(pose))]
        return self.stage2(pose, frames, pose, [True] * len(pose), r.order, every)

    # -- frames -----------------------------------------------------------------------------------
    def pose_frames(self, pose: list[BVec]) -> list[BQuat]:
        """``Rig.pose_frames``: every joint's frame by the swing rule, rigid joints fitted."""
        r = self.r
        out: list[BQuat] = [rot.IDENTITY] * len(pose)  # (filled parents first)
        for j in r.order:
            p = r.parents[j]
            fp = out[p] if p >= 0 else rot.IDENTITY
            kids = r.children[j]
            if r.rigid[j]:
                pj = pose[j]
                d, ok = bm.unit(rot.sub(pose[kids[0]], pj))
                swung = bm.pick(ok, self.swing_frame(j, fp, d), full(fp, len(pj[0])))
                dst = [rot.sub(pose[c], pj) for c in kids]
                out[j] = bm.fit_rotation([r.offset[c] for c in kids], dst, [1.0] * len(kids), swung)
                continue
            c = r.first_child[j]
            rested = full(rot.mul(fp, r.rest_local[j]), len(pose[j][0]))
            if c < 0:
                out[j] = rested
                continue
            d, ok = bm.unit(rot.sub(pose[c], pose[j]))
            out[j] = bm.pick(ok, self.swing_frame(j, fp, d), rested)
        return out

    def swing_frame(self, j: int, fp: BQuat, d: BVec) -> BQuat:
        """``Rig.swing_frame``: joint ``j``'s frame whose bone points along the unit ``d``."""
        r = self.r
        return rot.mul(fp, rot.mul(bm.swing(r.rest_dir[j], rot.rotate_inv(fp, d), r.rest_x[j]), r.rest_local[j]))

    def limit_frame(self, j: int, fp: BQuat, frame: BQuat) -> BQuat:
        """``frame`` with joint ``j``'s swing and twist limits applied (relative to ``fp``)."""
        r = self.r
        lim = r.limits[j]
        if lim.swing is None and lim.twist is None:
            return frame
        d0 = r.rest_dir[j]
        motion = rot.mul(rot.mul(rot.conj(fp), frame), rot.conj(r.rest_local[j]))
        tau = bm.twist_angle(motion, d0)
        d = rot.rotate(motion, d0)
        if lim.swing is not None:
            d = bl.project(lim.swing, d, None)
        if lim.twist is not None:
            tau = bl.clamp_angle(tau, *lim.twist)
        motion = rot.mul(bm.swing(d0, d, r.rest_x[j]), bm.axis_angle(d0, tau))
        return rot.mul(fp, rot.mul(motion, r.rest_local[j]))
