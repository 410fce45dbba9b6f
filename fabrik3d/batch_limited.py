"""The constrained solve (``fabrik3d.limited``), vectorised over a batch of problems.

Values are batch tuples as in ``fabrik3d.batch_passes``: per joint, three (or four)
``(m,)`` arrays, one element per live problem. Every problem runs the scalar
solve's attempts (``LimitedSolve.attempt``: FABRIK passes with limits, damped
least-squares steps where they are slow, the stall and yield rules), a cold solve's
restarts and a warm solve's retry from the rest pose, written on batch values with
the same expressions in the same order; problems leave the arrays as they stop
(compacted each iteration). The last ``TAIL`` problems of an attempt go to
``fabrik3d.solve``, from the start. Targets only: poles and orientation targets run
``solve`` per problem (``fabrik3d.batch``).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from fabrik3d import batch_math as bm
from fabrik3d import rotations as rot
from fabrik3d import targets as tg
from fabrik3d.batch_passes import BatchPasses, BQuat, BVec, full, put, take
from fabrik3d.damped import ORIENTATION_IN_FORCE, WORLD_AXES, joint_turns
from fabrik3d.frames import Rig
from fabrik3d.limited import (
    DAMPED_STEPS,
    FABRIK_GAIN,
    FALLBACK_ITERATIONS,
    LIMITED_STALL,
    MAX_DAMPING,
    MAX_RESTARTS,
    MIN_DAMPING,
    RESTART_GAIN,
    RESTART_RUN,
    RESTART_SEED,
    SLOW_GAIN,
    STALL_RUN,
    START_DAMPING,
    YIELD_AFTER,
    LimitedSolve,
)

# Once this many problems (or fewer) of an attempt are left (a restart's too), they go to the
# scalar solve, from the start: one batch iteration costs more than their scalar solves.
TAIL = 16
# Smaller batches run the scalar solve per problem: numpy's per-call cost exceeds the loop's
# (the humanoid breaks even at about 100 problems, the octopus, 8 tentacles, at a few hundred).
MIN_BATCH = 256


class BatchLimited(BatchPasses):
    """The damped steps and the attempt loop of ``LimitedSolve`` on batch values."""

    def __init__(self, r: Rig, solver: LimitedSolve, goal: dict[int, BVec], tol: float) -> None:
        super().__init__(r, solver.plan, goal)
        self.cols, mask, self.owner = solver.damped_plan()
        self.above = [np.flatnonzero(row > 0.0) for row in mask]  # per goal, the columns above it
        self.tol = tol

    # -- errors ---------------------------------------------------------------------------------
    def errors(self, pose: list[BVec]) -> tuple[np.ndarray, np.ndarray]:
        """Per problem, the largest distance of a targeted effector from its target and the sum
        of their squares (``LimitedSolve.largest_error`` and ``squared_errors``)."""
        largest: Any = None
        score: Any = 0
        for e, t in self.goal.items():
            p = pose[e]
            dx, dy, dz = p[0] - t[0], p[1] - t[1], p[2] - t[2]
            d = np.sqrt(dx * dx + dy * dy + dz * dz)
            largest = d if largest is None else np.maximum(largest, d)
            score = score + d * d
        return largest, score

    def largest_error(self, pose: list[BVec], frames: list[BQuat]) -> np.ndarray:
        """Per problem, ``LimitedSolve.largest_error`` with orientation targets in full force."""
        return self.errors(pose)[0]

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
                if x in self.goal:
                    new_frames[x] = rot.mul(new_frames[p], r.rest_local[x])
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

    def damped_step(self, pose: list[BVec], frames: list[BQuat], damping: np.ndarray) -> tuple[list[BVec], list[BQuat]]:
        """``DampedSteps.damped_step`` for positions only (no orientation targets)."""
        r = self.r
        cols, owner = self.cols, self.owner
        if not cols:
            return self.forward(pose, frames, {})
        m = len(damping)
        u = np.stack([np.stack(np.broadcast_arrays(*full(a, m)), axis=-1) for a in self.turning_axes(frames)], axis=1)
        goals = list(self.goal)
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
        err = np.stack([c for e in goals for c in rot.sub(self.goal[e], pose[e])], axis=1)  # (m, rows)
        spin = joint_turns(jac, err, damping, owner, u)
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
                    local = bm.project(limit, local, rot.rotate_inv(fp, (bx, by, bz)) if self.plan.hinged[j] else None)
                turned[j] = (rot.mul(bm.swing(r.rest_dir[j], local, r.rest_x[j]), r.rest_local[j]), turns)
        return self.forward(pose, frames, turned)

    # -- the attempt ----------------------------------------------------------------------------
    def attempt(
        self,
        pose: list[Any],
        frames: list[Any],
        start: list[Any],
        it: np.ndarray,
        max_it: np.ndarray | int,
        patience: np.ndarray,
        gain: np.ndarray,
        damping: np.ndarray,
    ) -> tuple[np.ndarray, list[Any], list[Any], np.ndarray, np.ndarray, np.ndarray]:
        """``LimitedSolve.attempt`` from ``pose`` for every problem (no poles, no orientation
        targets), with per-problem iterations so far ``it``, ``patience``, ``gain`` and damping.
        Returns per problem the largest error of the best pose, that pose and its frames (active
        joints; others ``None``), the iterations, the damping left, and a mask of the problems
        handed back unfinished: once ``TAIL`` or fewer are left, each batch iteration costs
        more than their scalar solves would. ``self.goal`` is as given after."""
        tol = self.tol
        plan = self.plan
        active = [j for j in range(len(pose)) if plan.active[j]]
        m = len(patience)
        out_err = np.empty(m)
        handed = np.zeros(m, dtype=bool)
        out_it = np.zeros(m, dtype=np.int64)
        out_damping = np.empty(m)
        out_pose: list[Any] = [None] * len(pose)
        out_frames: list[Any] = [None] * len(pose)
        for j in active:
            out_pose[j] = tuple(np.zeros(m) for _ in range(3))
            out_frames[j] = tuple(np.zeros(m) for _ in range(4))
        given = self.goal
        err, score = self.errors(pose)
        limit = np.broadcast_to(np.asarray(max_it), (m,))
        s = _State(pose, frames, start, self.goal, err, score, active, it, limit, patience, gain, damping)
        eps = LIMITED_STALL * tol
        gain2, slow2 = FABRIK_GAIN**2, (1.0 - SLOW_GAIN) ** 2
        while True:
            going = (s.err > tol) & (s.it < s.max_it) & (s.stalls < s.patience)
            done = ~going
            if done.any():
                ids = s.ids[done]
                out_err[ids], out_it[ids], out_damping[ids] = s.best_err[done], s.it[done], s.damping[done]
                for j in active:
                    for a, b in zip(out_pose[j], s.best_pose[j]):
                        a[ids] = b[done]
                    for a, b in zip(out_frames[j], s.best_frames[j]):
                        a[ids] = b[done]
                if not going.any():
                    break
                s.keep(going)
            if len(s.ids) <= TAIL:  # the last few: cheaper in scalar code, from the start
                handed[s.ids] = True
                break
            self.goal = s.goal
            s.it += 1
            weak = s.weak
            q = self.stage1(s.pose, s.frames)[0]
            new_pose, new_frames = self.stage2(q, s.frames, s.start, plan.active, plan.up, plan.kids)
            new_score = self.errors(new_pose)[1]
            if weak.any():
                new_pose = [None if p is None else bm.pick(weak, a, p) for a, p in zip(s.pose, new_pose)]
                new_frames = [None if f is None else bm.pick(weak, a, f) for a, f in zip(s.frames, new_frames)]
                new_score = np.where(weak, s.score, new_score)
            destructive = weak | (new_score > s.score)
            weak = np.zeros(len(weak), dtype=bool)
            if plan.turns:
                stepping = (s.stalls == 0) & (new_score > gain2 * s.score)
                for _ in range(DAMPED_STEPS):
                    idx = np.flatnonzero(stepping)
                    if not len(idx):
                        break
                    sub = [None if p is None else take(p, idx) for p in new_pose]
                    sub_f = [None if f is None else take(f, idx) for f in new_frames]
                    self.goal = {e: take(t, idx) for e, t in s.goal.items()}
                    step_pose, step_frames = self.damped_step(sub, sub_f, s.damping[idx])
                    step_score = self.errors(step_pose)[1]
                    self.goal = s.goal
                    better = step_score < new_score[idx]
                    good = idx[better]
                    weak[good] = destructive[good] & (step_score[better] < slow2 * s.score[good])
                    if len(good):
                        kept, live = np.flatnonzero(better), len(s.ids)
                        for j in active:
                            new_pose[j] = put(new_pose[j], good, take(step_pose[j], kept), live)
                            new_frames[j] = put(new_frames[j], good, take(step_frames[j], kept), live)
                    new_score[good] = step_score[better]
                    s.damping[good] = np.maximum(s.damping[good] * 0.5, MIN_DAMPING)
                    bad = idx[~better]
                    s.damping[bad] = np.minimum(s.damping[bad] * 4.0, MAX_DAMPING)
                    stepping[bad] = False
                    stepping[good] = new_score[good] > tol * tol
            s.weak = weak
            s.pose, s.frames = new_pose, new_frames
            s.err, s.score = self.errors(s.pose)
            low = np.sqrt(s.best_score)
            gained = low - np.sqrt(s.score)
            s.stalls = np.where(gained < np.maximum(eps, s.gain * low), s.stalls + 1, 0)
            yielding = (s.stalls >= YIELD_AFTER) & (s.yield_share > ORIENTATION_IN_FORCE)
            if yielding.any():
                s.yield_share = np.where(yielding, s.yield_share * 0.25, s.yield_share)
                fresh = yielding & (s.yield_share <= ORIENTATION_IN_FORCE)
                s.stalls = np.where(fresh, 0, s.stalls)
                s.remember(fresh)
            s.remember(~s.ran | (s.score < s.best_score) | (s.err <= tol))
            s.ran[:] = True
        self.goal = given
        return out_err, out_pose, out_frames, out_it, out_damping, handed


class _State:
    """The live problems of an attempt: their poses, errors, best poses and counters."""

    def __init__(
        self,
        pose: list[Any],
        frames: list[Any],
        start: list[Any],
        goal: dict[int, BVec],
        err: np.ndarray,
        score: np.ndarray,
        active: list[int],
        it: np.ndarray,
        max_it: np.ndarray,
        patience: np.ndarray,
        gain: np.ndarray,
        damping: np.ndarray,
    ) -> None:
        m = len(patience)
        self.active = active
        self.pose, self.frames, self.start, self.goal = list(pose), list(frames), list(start), dict(goal)
        self.err, self.score = err, score
        self.best_err, self.best_score = err, score
        self.best_pose, self.best_frames = list(pose), list(frames)
        self.patience, self.gain = patience, gain
        self.ids = np.arange(m)
        self.it, self.max_it = it.copy(), max_it.copy()
        self.stalls = np.zeros(m, dtype=np.int64)
        self.ran = np.zeros(m, dtype=bool)
        self.weak = np.zeros(m, dtype=bool)
        self.damping = damping.copy()
        self.yield_share = np.ones(m)

    def remember(self, mask: np.ndarray) -> None:
        """The current pose becomes the best one where ``mask``."""
        if not mask.any():
            return
        self.best_err = np.where(mask, self.err, self.best_err)
        self.best_score = np.where(mask, self.score, self.best_score)
        for j in self.active:
            self.best_pose[j] = bm.pick(mask, self.pose[j], self.best_pose[j])
            self.best_frames[j] = bm.pick(mask, self.frames[j], self.best_frames[j])

    def keep(self, mask: np.ndarray) -> None:
        """Only the problems of ``mask`` stay live."""
        idx = np.flatnonzero(mask)
        for name in (
            "err",
            "score",
            "best_err",
            "best_score",
            "patience",
            "gain",
            "ids",
            "it",
            "max_it",
            "stalls",
            "ran",
            "weak",
            "damping",
            "yield_share",
        ):
            setattr(self, name, getattr(self, name)[idx])
        for seq in (self.pose, self.frames, self.start, self.best_pose, self.best_frames):
            for j, v in enumerate(seq):
                if v is not None:
                    seq[j] = take(v, idx)
        self.goal = {e: take(t, idx) for e, t in self.goal.items()}


def solve(
    r: Rig,
    goals: dict[int, tg.Goal],
    weights: dict[int, float] | None,
    targets: dict[int, np.ndarray],
    first: np.ndarray,
    tol: float,
    max_it: int,
    cold: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Constrained solves of ``m`` problems without poles or orientation targets.

    Args:
        r: the skeleton's rig (``n`` joints).
        goals: the first problem's goals (they fix the plan: effectors and weights).
        weights: effector index -> centroid weight, or ``None``.
        targets: effector index -> ``(m, 3)`` target points.
        first: the start poses, ``(n, 3, m)`` or ``(n, 3, 1)`` for all (``batch_tree.start_pose``).
        tol, max_it, cold: as in ``LimitedSolve.run`` (``cold``: from the rest pose).

    Returns:
        ``(m, n, 3)`` positions, ``(m, n, 4)`` frames, ``(m,)`` iterations, and an ``(m,)`` mask
        of the problems left to the scalar solve (the last ``TAIL`` of an attempt; their rows
        are not filled).
    """
    n = len(r.parents)
    m = len(next(iter(targets.values())))
    solver = LimitedSolve(r, goals, weights, {}, None)
    plan = solver.plan
    # The start projected onto the limits (the scalar solve's first step): one stage 2 of every
    # joint toward itself, once if every problem starts alike.
    goal = _columns(targets)
    batch = BatchLimited(r, solver, goal, tol)
    count = first.shape[2]
    given = [tuple(np.array(first[j, k]) for k in range(3)) for j in range(n)]
    every = [True] * n
    all_kids = [[(c, 1.0) for c in r.children[j]] for j in range(n)]
    start, start_frames = batch.stage2(given, batch.pose_frames(given), given, every, r.order, all_kids)
    if count < m:  # one start for all
        start, start_frames = [full(v, m) for v in start], [full(v, m) for v in start_frames]
    # Within reach: every target within its chain's length of the root (``LimitedSolve.within_reach``).
    root = start[r.order[0]]
    within = np.ones(m, dtype=bool)
    for e, t in goal.items():
        length, j = 0.0, e
        while r.parents[j] >= 0:
            length, j = length + r.lengths[j], r.parents[j]
        dx, dy, dz = root[0] - t[0], root[1] - t[1], root[2] - t[2]
        within &= ~(np.sqrt(dx * dx + dy * dy + dz * dz) > length)
    restarting = within if cold else np.zeros(m, dtype=bool)
    patience = np.where(restarting, RESTART_RUN, STALL_RUN)
    gain = np.where(restarting, RESTART_GAIN, 0.0)
    pose = [start[j] if plan.active[j] else None for j in range(n)]
    frames = [start_frames[j] if plan.active[j] else None for j in range(n)]
    damping = np.full(m, START_DAMPING)
    got = batch.attempt(pose, frames, start, np.zeros(m, dtype=np.int64), max_it, patience, gain, damping)
    err, pose, frames, it, damping, scalar = got
    retry = within & ~scalar & (err > tol) & (it < max_it)
    if retry.any():
        state = (err, pose, frames, it, damping, scalar)
        if cold:
            restarts(batch, np.flatnonzero(retry), start, start_frames, state, max_it)
        else:
            warm_retries(batch, np.flatnonzero(retry), start, state, max_it)
    place_untargeted(r, plan, pose, frames, start, start_frames)
    out = np.stack([np.stack(v, axis=-1) for v in pose], axis=1)
    rotations = np.stack([np.stack(v, axis=-1) for v in frames], axis=1)
    return out, rotations, it, scalar


def _columns(targets: dict[int, np.ndarray]) -> dict[int, BVec]:
    """``(m, 3)`` target points as batch tuples."""
    return {e: (t[:, 0].copy(), t[:, 1].copy(), t[:, 2].copy()) for e, t in targets.items()}


def restarts(
    batch: BatchLimited,
    idx: np.ndarray,
    start: list[BVec],
    start_frames: list[BQuat],
    state: tuple[np.ndarray, list[Any], list[Any], np.ndarray, np.ndarray, np.ndarray],
    max_it: int,
) -> None:
    """``LimitedSolve.restarts`` after the first attempt, for the problems ``idx`` of ``state``
    (updated in place; ``start``: the projected start poses and frames): up to ``MAX_RESTARTS``
    attempts from the scalar solve's random poses (one seed sequence, drawn once per joint for
    every problem), each kept where it ranks better (``(err > tol, err)``, positions only), then
    the stall rule from the best of them, kept unless it ranks worse."""
    err, pose, frames, it, damping, scalar = state
    tol, plan, goal = batch.tol, batch.plan, batch.goal
    m = len(idx)
    k_err, k_it, k_damping = err[idx], it[idx], damping[idx]
    k_pose = [None if v is None else take(v, idx) for v in pose]
    k_frames = [None if v is None else take(v, idx) for v in frames]
    k_goal = {e: take(t, idx) for e, t in goal.items()}
    k_start = [take(v, idx) for v in start]
    k_start_frames = [take(v, idx) for v in start_frames]
    gone = np.zeros(m, dtype=bool)  # handed to the scalar solve
    draw = random.Random(RESTART_SEED)
    for k in range(MAX_RESTARTS + 1):
        live = np.flatnonzero((k_err > tol) & (k_it < max_it) & ~gone)
        if not len(live):
            break
        count = len(live)
        batch.goal = {e: take(t, live) for e, t in k_goal.items()}
        if k < MAX_RESTARTS:
            here, here_frames = [take(v, live) for v in k_start], [take(v, live) for v in k_start_frames]
            sp, sf = batch.stage2(here, here_frames, here, plan.active, plan.up, plan.kids, draw)
            seed = [v if a else None for v, a in zip(sp, plan.active)]
            seed_frames = [v if a else None for v, a in zip(sf, plan.active)]
            patience, gain = RESTART_RUN, RESTART_GAIN
        else:  # no restart reached: carry on from the best attempt
            seed = [None if v is None else take(v, live) for v in k_pose]
            seed_frames = [None if v is None else take(v, live) for v in k_frames]
            patience, gain = STALL_RUN, 0.0
        got_err, got_pose, got_frames, got_it, got_damping, handed = batch.attempt(
            seed,
            seed_frames,
            [take(v, live) for v in k_start],
            k_it[live],
            max_it,
            np.full(count, patience),
            np.full(count, gain),
            k_damping[live],
        )
        k_it[live], k_damping[live] = got_it, got_damping
        gone[live[handed]] = True
        now = (k_err[live] > tol, k_err[live])
        new = (got_err > tol, got_err)
        better = _ranks_below(new, now) if k < MAX_RESTARTS else ~_ranks_below(now, new)
        better &= ~handed
        if better.any():
            kept, into = np.flatnonzero(better), live[better]
            k_err[into] = got_err[kept]
            for j, v in enumerate(got_pose):
                if v is not None:
                    k_pose[j] = put(k_pose[j], into, take(v, kept), m)
                    k_frames[j] = put(k_frames[j], into, take(got_frames[j], kept), m)
    batch.goal = goal
    err[idx], it[idx], damping[idx] = k_err, k_it, k_damping
    scalar[idx[gone]] = True
    total = len(err)
    for j, v in enumerate(k_pose):
        if v is not None:
            pose[j] = put(pose[j], idx, v, total)
            frames[j] = put(frames[j], idx, k_frames[j], total)


def warm_retries(
    batch: BatchLimited,
    idx: np.ndarray,
    start: list[BVec],
    state: tuple[np.ndarray, list[Any], list[Any], np.ndarray, np.ndarray, np.ndarray],
    max_it: int,
) -> None:
    """``LimitedSolve.warm_retries`` (without poles) for the problems ``idx`` of ``state`` (updated
    in place): one attempt of at most ``FALLBACK_ITERATIONS`` from the rest pose moved with the
    root (projected onto the limits), kept where it reaches every target."""
    err, pose, frames, it, damping, scalar = state
    r, tol, plan, goal = batch.r, batch.tol, batch.plan, batch.goal
    m, n = len(idx), len(pose)
    top = r.order[0]
    shift = rot.sub(take(start[top], idx), r.rest_start[top])
    rest = [rot.add(p, shift) for p in r.rest_start]
    rest_frames = [full(f, m) for f in r.rest_frames]
    every = [True] * n
    all_kids = [[(c, 1.0) for c in r.children[j]] for j in range(n)]
    batch.goal = {e: take(t, idx) for e, t in goal.items()}
    sp, sf = batch.stage2(rest, rest_frames, rest, every, r.order, all_kids)
    got_err, got_pose, got_frames, got_it, got_damping, handed = batch.attempt(
        [v if a else None for v, a in zip(sp, plan.active)],
        [v if a else None for v, a in zip(sf, plan.active)],
        [take(v, idx) for v in start],
        it[idx],
        np.minimum(max_it, it[idx] + FALLBACK_ITERATIONS),
        np.full(m, RESTART_RUN),
        np.full(m, RESTART_GAIN),
        damping[idx],
    )
    batch.goal = goal
    it[idx], damping[idx] = got_it, got_damping
    scalar[idx[handed]] = True
    reached = (got_err <= tol) & ~handed
    if reached.any():
        kept, into = np.flatnonzero(reached), idx[reached]
        err[into] = got_err[kept]
        total = len(err)
        for j, v in enumerate(got_pose):
            if v is not None:
                pose[j] = put(pose[j], into, take(v, kept), total)
                frames[j] = put(frames[j], into, take(got_frames[j], kept), total)


def _ranks_below(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per problem, whether the rank ``a`` (a tuple ``(short, error)``) is below ``b``: Python's
    tuple order, elementwise."""
    return (~a[0] & b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))


def place_untargeted(
    r: Rig, plan: Any, pose: list[Any], frames: list[Any], start: list[Any], start_frames: list[Any]
) -> None:
    """``LimitedSolve.place_untargeted``: untargeted branches keep their start local rotations."""
    for j in range(len(pose)):
        if pose[j] is None:
            pose[j], frames[j] = start[j], start_frames[j]
    for j in plan.up:
        turn = rot.mul(frames[j], rot.conj(start_frames[j]))
        for c in r.children[j]:
            if plan.active[c]:
                continue
            for x in r.subtree(c):
                pose[x] = rot.add(pose[j], rot.rotate(turn, rot.sub(start[x], start[j])))
                frames[x] = rot.mul(turn, start_frames[x])
