"""The damped least-squares steps and the residuals of the constrained solve
(``fabrik3d.solver.constrained.damped``, ``LimitedSolve.residuals``), vectorised over a batch.

Values are batch tuples as in ``fabrik3d.batch.constrained.passes``. The residuals are the
targets' distances, then, per orientation target while it is in force (its yield
share per problem), its bone's misdirection and its twist beyond the effector's
Twist limit; a damped step's rows are the same, problems with the same rows solved
together (``damped.joint_turns``, the scalar step's linear algebra on the scalar
step's matrix). The expressions are the scalar ones in the same order, so each
problem's floats are the scalar solve's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch import limits as bl
from fabrik3d.batch import math as bm
from fabrik3d.batch.constrained.passes import BQuat, BVec
from fabrik3d.batch.constrained.subsets import full
from fabrik3d.solver.constrained.damped import ORIENTATION_IN_FORCE, TWIST_NEAR, WORLD_AXES, joint_turns

if TYPE_CHECKING:
    from fabrik3d.batch.compiled_passes import CompiledPasses
    from fabrik3d.solver.constrained.plan import LimitedPlan
    from fabrik3d.solver.rig import Rig


class BatchDampedSteps:
    """Mixin of ``BatchLimited``: errors, ranks, forward kinematics and damped steps.

    The host provides ``r``, ``plan``, ``goal_positions``, ``goal_orientations``, ``yield_share``,
    ``tol``, the damped plan (``cols``, ``mask``, ``starts``, ``above``), ``effector_frame``,
    ``limit_frame`` and ``compiled`` (the compiled passes, whose ``turn`` a step's turn takes where set).
    """

    r: Rig
    plan: LimitedPlan
    goal_positions: dict[int, BVec]
    goal_orientations: dict[int, tuple[BQuat, float]]
    yield_share: Any
    tol: float
    cols: list[int]
    mask: np.ndarray
    starts: np.ndarray
    above: list[np.ndarray]
    compiled: CompiledPasses | None

    if TYPE_CHECKING:

        def effector_frame(self, j: int, fp: BQuat) -> BQuat: ...

        def limit_frame(self, j: int, fp: BQuat, frame: BQuat) -> BQuat: ...

    # -- errors ---------------------------------------------------------------------------------
    def errors(self, pose: list[BVec], frames: list[BQuat], yield_share: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Per problem, the largest residual and the sum of their squares (``LimitedSolve.residuals``,
        ``largest_error`` and ``squared_errors``) with the yield shares ``yield_share`` (default
        ``self.yield_share``): the targets' distances, then, while an orientation target is in force,
        its bone's misdirection and its twist beyond the effector's Twist limit."""
        r = self.r
        largest: Any = None
        score: Any = 0
        for e, t in self.goal_positions.items():
            d = dist(pose[e], t)
            largest = d if largest is None else np.maximum(largest, d)
            score = score + d * d
        if not self.goal_orientations:
            return largest, score
        yield_share = self.yield_share if yield_share is None else yield_share
        force = np.asarray(yield_share > ORIENTATION_IN_FORCE)
        for e, (q, w) in self.goal_orientations.items():
            length = r.lengths[e]
            bone = rot.sub(pose[e], pose[r.parents[e]])
            wanted = rot.rotate(q, self.plan.offset_dir[e])
            rows = [dist(rot.add((0.0, 0.0, 0.0), bone, 1.0 / length), wanted) * length * w]
            if r.limits[e].twist is not None:
                rows.append(np.abs(self.twist_excess(e, q, frames[r.parents[e]])[0]) * length * w)
            for v in rows:
                v = np.where(force, v, 0.0)  # (adding 0 to the sum, or taking a max with 0: no change)
                largest = np.maximum(largest, v)
                score = score + v * v
        return largest, score

    def largest_error(self, pose: list[BVec], frames: list[BQuat]) -> np.ndarray:
        """Per problem, ``LimitedSolve.largest_error`` with orientation targets in full force."""
        return self.errors(pose, frames, 1.0)[0]

    def position_error(self, pose: list[BVec]) -> np.ndarray:
        """Per problem, ``LimitedSolve.position_error``: the largest distance from a target."""
        largest: Any = None
        for e, t in self.goal_positions.items():
            d = dist(pose[e], t)
            largest = d if largest is None else np.maximum(largest, d)
        return largest

    def rank(self, err: np.ndarray, pose: list[BVec]) -> tuple[np.ndarray, np.ndarray]:
        """``LimitedSolve.rank`` per problem: ``(short, value)``, compared by ``_ranks_below``."""
        off = self.position_error(pose)
        short = off > self.tol
        return short, np.where(short, off, err)

    def twist_excess(self, e: int, q: BQuat, fp: BQuat) -> tuple[np.ndarray, BVec]:
        """``DampedSteps.twist_excess`` for effector ``e`` (which has a Twist limit) and its
        orientation target ``q``: the twist beyond the limit (radians) and its world axis."""
        r = self.r
        base = rot.mul(fp, r.rest_local[e])
        tau = bm.twist_angle(rot.mul(rot.conj(base), q), rot.Y_AXIS)
        return tau - bl.clamp_angle(tau, *r.limits[e].twist), rot.y_axis(base)  # type: ignore[misc]

    # -- damped least-squares steps ------------------------------------------------------------
    def forward(
        self, pose: list[BVec], frames: list[BQuat], turned: dict[int, tuple[BQuat, np.ndarray]]
    ) -> tuple[list[BVec], list[BQuat]]:
        """``DampedSteps.forward``; ``turned`` maps a joint to its new local rotation and the
        problems where it applies."""
        r = self.r
        parents, children = r.parents, r.children
        new_pose, new_frames = list(pose), list(frames)
        moved: dict[int, BQuat] = {}
        for x in self.plan.up:
            p = parents[x]
            got = turned.get(x)
            if p < 0:
                new_frames[x] = frames[x] if got is None else bm.pick(got[1], got[0], frames[x])
                moved[x] = rot.mul(new_frames[x], rot.conj(frames[x]))
                continue
            turn = moved[p]
            kept = rot.mul(turn, frames[x])
            new_frames[x] = kept if got is None else bm.pick(got[1], rot.mul(new_frames[p], got[0]), kept)
            if not children[x]:
                if x in self.goal_positions:
                    new_frames[x] = self.effector_frame(x, new_frames[p])
            else:
                moved[x] = turn if got is None else bm.pick(got[1], rot.mul(new_frames[x], rot.conj(frames[x])), turn)
            new_pose[x] = rot.add(new_pose[p], rot.rotate(turn, rot.sub(pose[x], pose[p])))
        return new_pose, new_frames

    def column_points(self, pose: list[BVec], columns: np.ndarray, k: int) -> np.ndarray:
        """Coordinate ``k`` of the joints of ``columns``: ``(m, len(columns))``."""
        return np.stack([pose[self.cols[c]][k] for c in columns], axis=1)

    def turning_axes(self, frames: list[BQuat]) -> list[BVec]:
        """``DampedSteps.turning_axes``, column by column."""
        r = self.r
        axes: list[BVec] = []
        for j in self.plan.turnable:
            if r.rigid[j]:
                axes += WORLD_AXES
            elif self.plan.hinged[j]:
                p = r.parents[j]
                axes.append(rot.rotate(frames[p] if p >= 0 else rot.IDENTITY, r.limits[j].swing.a))  # type: ignore[union-attr]
            else:
                bx, by, bz = rot.y_axis(frames[j])
                ax, ay, az = np.abs(bx), np.abs(by), np.abs(bz)
                first = (ax <= ay) & (ax <= az)
                second = ~first & (ay <= az)
                zero = np.zeros_like(bx)
                v = bm.pick(first, (zero, bz, -by), bm.pick(second, (-bz, zero, bx), (by, -bx, zero)))
                n = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                vx, vy, vz = v[0] / n, v[1] / n, v[2] / n
                axes += ((vx, vy, vz), (by * vz - bz * vy, bz * vx - bx * vz, bx * vy - by * vx))
        return axes

    def frame_spins(self, frames: list[BQuat], axes: list[BVec]) -> list[BVec]:
        """``DampedSteps.frame_spins``, column by column."""
        r = self.r
        spins: list[BVec] = []
        for j, w in zip(self.cols, axes):
            if r.rigid[j]:
                spins.append(w)
                continue
            p = r.parents[j]
            bone = rot.y_axis(frames[j])
            rest = rot.rotate(frames[p] if p >= 0 else rot.IDENTITY, r.rest_dir[j])
            near = 1.0 + rest[0] * bone[0] + rest[1] * bone[1] + rest[2] * bone[2]
            with np.errstate(all="ignore"):
                k = np.where(near > 1e-9, (rest[0] * w[0] + rest[1] * w[1] + rest[2] * w[2]) / near, 0.0)
            spins.append(rot.add(w, bone, -k))
        return spins

    def position_rows(
        self, pose: list[BVec], frames: list[BQuat], m: int
    ) -> tuple[list[BVec], np.ndarray, np.ndarray, np.ndarray]:
        """``damped_step``'s turning axes (batch vectors, and ``u`` ``(m, columns, 3)``), its Jacobian's rows of
        the target positions ``(m, 3 goals, columns)`` and their residuals ``(m, 3 goals)``, for ``m``
        problems (``CompiledPasses.rows`` computes the same floats, compiled)."""
        cols, goals = self.cols, list(self.goal_positions)
        axes = self.turning_axes(frames)
        u = np.stack([np.stack(np.broadcast_arrays(*full(a, m)), axis=-1) for a in axes], axis=1)
        # Rows u × (P_e − P_j) for the columns above each effector e (+0.0 elsewhere, as in the scalar
        # step): (m, 3 goals, columns).
        jac = np.zeros((m, 3 * len(goals), len(cols)))
        for k, e in enumerate(goals):
            above = self.above[k]
            if not len(above):
                continue
            ex, ey, ez = pose[e]
            mx = ex[:, None] - self.column_points(pose, above, 0)
            my = ey[:, None] - self.column_points(pose, above, 1)
            mz = ez[:, None] - self.column_points(pose, above, 2)
            ux, uy, uz = u[:, above, 0], u[:, above, 1], u[:, above, 2]
            jac[:, 3 * k, above] = uy * mz - uz * my
            jac[:, 3 * k + 1, above] = uz * mx - ux * mz
            jac[:, 3 * k + 2, above] = ux * my - uy * mx
        err = np.stack([c for e in goals for c in rot.sub(self.goal_positions[e], pose[e])], axis=1)  # (m, rows)
        return axes, u, jac, err

    def damped_step(self, pose: list[BVec], frames: list[BQuat], damping: np.ndarray) -> tuple[list[BVec], list[BQuat]]:
        """``DampedSteps.damped_step``: the rows of the effectors' positions, then, where an
        orientation target is in force, its bone's direction and (once every position is near) its
        twist beyond the Twist limit. Problems with the same rows solve together, so each gets
        the scalar step's linear algebra on the scalar step's matrix."""
        r = self.r
        cols, starts = self.cols, self.starts
        if not cols:
            return self.forward(pose, frames, {})
        m = len(damping)
        goals = list(self.goal_positions)
        stacked = None
        if self.compiled is not None:
            u, jac, err, stacked = self.compiled.rows(self, pose, frames)
            axes = [(u[:, c, 0], u[:, c, 1], u[:, c, 2]) for c in range(len(cols))] if self.goal_orientations else []
        else:
            axes, u, jac, err = self.position_rows(pose, frames, m)
        # Optional blocks of rows (orientation targets), each with the problems that have it.
        blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows, errors, where)
        if self.goal_orientations:
            blocks = self.orientation_rows(pose, frames, u, axes, goals)
        if not blocks:
            spin = joint_turns(jac, err, damping, starts, u)
        else:
            spin = np.empty((m, len(starts), 3))
            pattern = np.stack([where for _, _, where in blocks], axis=1)  # (m, blocks)
            kinds, of = np.unique(pattern, axis=0, return_inverse=True)
            for g, kind in enumerate(kinds):
                idx = np.flatnonzero(of.reshape(-1) == g)
                jg = np.concatenate([jac[idx]] + [rows[idx] for (rows, _, _), on in zip(blocks, kind) if on], axis=1)
                eg = np.concatenate([err[idx]] + [e[idx] for (_, e, _), on in zip(blocks, kind) if on], axis=1)
                spin[idx] = joint_turns(jg, eg, damping[idx], starts, u[idx])
        if self.compiled is not None:
            return self.compiled.turn(self, spin, pose, frames, stacked)
        turned: dict[int, tuple[BQuat, np.ndarray]] = {}
        parents, limits = r.parents, r.limits
        with np.errstate(all="ignore"):
            for t, j in enumerate(self.plan.turnable):
                wx, wy, wz = spin[:, t, 0], spin[:, t, 1], spin[:, t, 2]
                angle = np.sqrt(wx * wx + wy * wy + wz * wz)
                turns = angle >= 1e-15
                if not turns.any():
                    continue
                safe = np.where(turns, angle, 1.0)
                kx, ky, kz = wx / safe, wy / safe, wz / safe
                angle = np.minimum(angle, 0.5)
                p = parents[j]
                fp = frames[p] if p >= 0 else rot.IDENTITY
                if r.rigid[j]:
                    turn = bm.axis_angle((kx, ky, kz), angle)
                    local = rot.mul(rot.conj(fp), self.limit_frame(j, fp, rot.mul(turn, frames[j])))
                    turned[j] = (local, turns)
                    continue
                bx, by, bz = rot.y_axis(frames[j])
                c, s = np.cos(angle), np.sin(angle)
                kb = (kx * bx + ky * by + kz * bz) * (1.0 - c)
                local = rot.rotate_inv(
                    fp,
                    (
                        c * bx + s * (ky * bz - kz * by) + kb * kx,
                        c * by + s * (kz * bx - kx * bz) + kb * ky,
                        c * bz + s * (kx * by - ky * bx) + kb * kz,
                    ),
                )
                limit = limits[j].swing
                if limit is not None:
                    local = bl.project(limit, local, rot.rotate_inv(fp, (bx, by, bz)) if self.plan.hinged[j] else None)
                swung = bm.swing(r.rest_dir[j], local, r.rest_x[j])
                if r.rolls[j]:  # a rolling joint keeps its roll (the step turns its bone only)
                    motion = rot.mul(rot.mul(rot.conj(fp), frames[j]), rot.conj(r.rest_local[j]))
                    swung = rot.mul(swung, bm.axis_angle(r.rest_dir[j], bm.twist_angle(motion, r.rest_dir[j])))
                turned[j] = (rot.mul(swung, r.rest_local[j]), turns)
        return self.forward(pose, frames, turned)

    def orientation_rows(
        self, pose: list[BVec], frames: list[BQuat], u: np.ndarray, axes: list[BVec], goals: list[int]
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The damped step's rows of the orientation targets (``DampedSteps.damped_step``), as
        blocks ``(rows (m, k, columns), residuals (m, k), where (m,))``: per target in force with a
        bone, its direction's three rows; with a Twist limit on its effector, once every position
        is within ``TWIST_NEAR`` tolerances, its twist's row."""
        r = self.r
        m = len(u)
        yield_share = np.broadcast_to(self.yield_share, (m,))
        force = yield_share > ORIENTATION_IN_FORCE
        largest = self.position_error(pose)
        near = largest <= TWIST_NEAR * self.tol
        spins: Any = None
        blocks = []
        ux, uy, uz = u[..., 0], u[..., 1], u[..., 2]
        for k, e in enumerate(goals):
            aim = self.goal_orientations.get(e)
            if aim is None:
                continue
            q, w = aim
            bone, ok = bm.unit(rot.sub(pose[e], pose[r.parents[e]]))
            scale = (w * yield_share * r.lengths[e])[:, None]
            mask = self.mask[k][None, :]
            bx, by, bz = (b[:, None] for b in full(bone, m))
            rows = np.stack(
                (
                    scale * (uy * bz - uz * by) * mask,
                    scale * (uz * bx - ux * bz) * mask,
                    scale * (ux * by - uy * bx) * mask,
                ),
                axis=1,
            )
            wanted = rot.rotate(q, self.plan.offset_dir[e])
            errs = np.stack([scale[:, 0] * c for c in rot.sub(wanted, bone)], axis=1)
            blocks.append((rows, errs, force & ok))
            if r.limits[e].twist is not None:
                excess, axis = self.twist_excess(e, q, frames[r.parents[e]])
                if spins is None:
                    spins = [full(v, m) for v in self.frame_spins(frames, axes)]
                sx = np.stack([v[0] for v in spins], axis=1)
                sy = np.stack([v[1] for v in spins], axis=1)
                sz = np.stack([v[2] for v in spins], axis=1)
                along = sx * axis[0][:, None] + sy * axis[1][:, None] + sz * axis[2][:, None]
                blocks.append(
                    ((-scale * along * mask)[:, None, :], (-scale[:, 0] * excess)[:, None], force & ok & near)
                )
        return blocks


def dist(a: BVec, b: BVec) -> np.ndarray:
    """``rotations.dist`` per problem."""
    dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
    return np.sqrt(dx * dx + dy * dy + dz * dz)
