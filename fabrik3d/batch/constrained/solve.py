"""The constrained solve (``fabrik3d.solver.constrained.solve``), vectorised over a batch of problems.

Values are batch tuples as in ``fabrik3d.batch.constrained.passes``: per joint, three (or four)
``(m,)`` arrays, one element per live problem. Every problem runs the scalar
solve's attempts (``LimitedSolve.attempt``: FABRIK passes with limits, damped
least-squares steps where they are slow, the stall and yield rules), a cold solve's
restarts and a warm solve's retries, the poles' turns and their final turn,
written on batch values with the same expressions in the same order; problems leave
the arrays as they stop (compacted each iteration). The damped steps and residuals
are in ``fabrik3d.batch.constrained.damped``, the passes in ``fabrik3d.batch.constrained.passes``, the pole
turns in ``fabrik3d.batch.constrained.poles``. The last ``TAIL`` problems of an attempt go to
``fabrik3d.solve``, from the start.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch import math as bm
from fabrik3d.batch.constrained.damped import BatchDampedSteps, dist
from fabrik3d.batch.constrained.passes import BatchPasses, BQuat, BVec, full, put_all, take, take_all
from fabrik3d.batch.constrained.poles import BatchPoleTurns, PoleMarks
from fabrik3d.model import targets as tg
from fabrik3d.solver.constrained.damped import ORIENTATION_IN_FORCE
from fabrik3d.solver.constrained.solve import (
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
    slowed,
)
from fabrik3d.solver.rig import Rig

# Once this many problems (or fewer) of an attempt are left (a restart's too), they go to the
# scalar solve, from the start: one batch iteration costs more than their scalar solves.
TAIL = 16
# Smaller batches run the scalar solve per problem: numpy's per-call cost exceeds the loop's
# (the humanoid breaks even at about 100 problems, the octopus, 8 tentacles, at a few hundred).
MIN_BATCH = 256


def stalled(low: np.ndarray, now: np.ndarray, gain: np.ndarray, tol: float) -> np.ndarray:
    """``solver.constrained.solve.stalled`` per problem (``(m,)`` arrays; an ``(m,)`` mask)."""
    return low - now < np.maximum(LIMITED_STALL * tol, gain * low)


class BatchLimited(BatchPasses, BatchDampedSteps, BatchPoleTurns):
    """The damped steps and the attempt loop of ``LimitedSolve`` on batch values (its targets:
    ``goal``, ``turn`` and ``poles`` of the live problems, ``aims``)."""

    def __init__(
        self,
        r: Rig,
        solver: LimitedSolve,
        goal: dict[int, BVec],
        tol: float,
        turn: dict[int, tuple[BQuat, float]] | None = None,
        poles: dict[int, BVec] | None = None,
    ) -> None:
        super().__init__(r, solver.plan, goal, turn, solver.root_frame)
        self.poles = poles or {}
        self.cols, self.mask, self.owner = solver.damped_plan()
        self.above = [np.flatnonzero(row > 0.0) for row in self.mask]  # per goal, the columns above it
        self.tol = tol

    @property
    def aims(self) -> _Aims:
        return _Aims(self.goal, self.turn, self.poles)

    def aim(self, aims: _Aims, share: Any = 1.0) -> None:
        """The live problems' targets, and their orientation targets' yield shares (``(m,)``)."""
        self.goal, self.turn, self.poles, self.share = aims.goal, aims.turn, aims.poles, share

    @contextmanager
    def narrowed(self, idx: np.ndarray) -> Iterator[None]:
        """The targets and yield shares of the problems ``idx`` only, for the block."""
        aims, share = self.aims, self.share
        self.aim(aims.take(idx), share[idx] if np.ndim(share) else share)
        try:
            yield
        finally:
            self.aim(aims, share)

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
        carry: _Carry,
    ) -> tuple[np.ndarray, list[Any], list[Any], np.ndarray, _Carry, np.ndarray]:
        """``LimitedSolve.attempt`` from ``pose`` for every problem, with per-problem iterations so
        far ``it``, ``patience``, ``gain`` and the solve's state carried from attempt to attempt
        (``carry``: damping, poles yielded, pole marks). Before each stage 1, the poles turn the
        chains of the problems whose poles have not yielded. Returns per problem the largest
        error of the pose kept (orientation targets in full force), that pose and its frames
        (active joints; others ``None``), the iterations, the carried state after, and a mask of
        the problems handed back unfinished: once ``TAIL`` or fewer are left, each batch
        iteration costs more than their scalar solves would. The pose kept is the best iterated
        one, or with orientation targets the best by ``rank``, the given pose included. The
        targets (``aims``) are as given after."""
        tol = self.tol
        plan = self.plan
        active = [j for j in range(len(pose)) if plan.active[j]]
        m = len(patience)
        oriented = bool(self.turn)
        out_err = np.empty(m)
        handed = np.zeros(m, dtype=bool)
        out_it = np.zeros(m, dtype=np.int64)
        out_carry = carry.copy()
        out_pose: list[Any] = [None] * len(pose)
        out_frames: list[Any] = [None] * len(pose)
        for j in active:
            out_pose[j] = tuple(np.zeros(m) for _ in range(3))
            out_frames[j] = tuple(np.zeros(m) for _ in range(4))
        given = self.aims
        self.share = np.ones(m)
        err, score = self.errors(pose, frames)
        limit = np.broadcast_to(np.asarray(max_it), (m,))
        s = _State(pose, frames, start, given, err, score, active, it, limit, patience, gain, carry)
        if oriented:
            s.top = (*self.rank(err, pose), err, list(pose), list(frames))
        gain2, slow2 = FABRIK_GAIN**2, (1.0 - SLOW_GAIN) ** 2
        while True:
            going = (s.err > tol) & (s.it < s.max_it) & (s.stalls < s.patience)
            done = ~going
            if done.any():
                ids = s.ids[done]
                kept = s.top[2:] if oriented else (s.best_err, s.best_pose, s.best_frames)
                out_err[ids], out_it[ids] = kept[0][done], s.it[done]
                out_carry.put(ids, s.carry.take(done))
                for j in active:
                    for a, b in zip(out_pose[j], kept[1][j]):
                        a[ids] = b[done]
                    for a, b in zip(out_frames[j], kept[2][j]):
                        a[ids] = b[done]
                if not going.any():
                    break
                s.keep(going)
            if len(s.ids) <= TAIL:  # the last few: cheaper in scalar code, from the start
                handed[s.ids] = True
                break
            self.aim(s.aims, s.yield_share)
            s.it += 1
            weak = s.weak
            q = self.stage1(self.turn_to_poles(s, weak), s.frames)[0]
            new_pose, new_frames = self.stage2(q, s.frames, s.start, plan.active, plan.up, plan.kids)
            new_score = self.errors(new_pose, new_frames)[1]
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
                    with self.narrowed(idx):
                        sub, sub_f = take_all(new_pose, idx), take_all(new_frames, idx)
                        step_pose, step_frames = self.damped_step(sub, sub_f, s.carry.damping[idx])
                        step_score = self.errors(step_pose, step_frames)[1]
                    better = step_score < new_score[idx]
                    good = idx[better]
                    weak[good] = destructive[good] & (step_score[better] < slow2 * s.score[good])
                    if len(good):
                        kept_at, live = np.flatnonzero(better), len(s.ids)
                        put_all(new_pose, good, take_all(step_pose, kept_at), live)
                        put_all(new_frames, good, take_all(step_frames, kept_at), live)
                    new_score[good] = step_score[better]
                    damping = s.carry.damping
                    damping[good] = np.maximum(damping[good] * 0.5, MIN_DAMPING)
                    bad = idx[~better]
                    damping[bad] = np.minimum(damping[bad] * 4.0, MAX_DAMPING)
                    stepping[bad] = False
                    stepping[good] = new_score[good] > tol * tol
            s.weak = weak
            s.pose, s.frames = new_pose, new_frames
            s.err, s.score = self.errors(s.pose, s.frames)
            low, now = np.sqrt(s.best_score), np.sqrt(s.score)
            s.stalls = np.where(stalled(low, now, s.gain, tol), s.stalls + 1, 0)
            if self.poles:  # poles stop turning joints after YIELD_AFTER slow iterations in a row
                s.slow = np.where(slowed(low, now), s.slow + 1, 0)
                s.carry.yielded |= s.slow >= YIELD_AFTER
            yielding = (s.stalls >= YIELD_AFTER) & (s.yield_share > ORIENTATION_IN_FORCE)
            if yielding.any():
                s.yield_share = np.where(yielding, s.yield_share * 0.25, s.yield_share)
                fresh = yielding & (s.yield_share <= ORIENTATION_IN_FORCE)
                if fresh.any():
                    err, score = self.errors(s.pose, s.frames, s.yield_share)
                    s.err, s.score = np.where(fresh, err, s.err), np.where(fresh, score, s.score)
                    s.stalls = np.where(fresh, 0, s.stalls)
                    s.remember(fresh)
            s.remember(~s.ran | (s.score < s.best_score) | (s.err <= tol))
            s.ran[:] = True
            if oriented:
                full_err = self.largest_error(s.pose, s.frames)
                short, value = self.rank(full_err, s.pose)
                s.lift(_ranks_below((short, value), s.top[:2]), short, value, full_err)
        self.aim(given)
        return out_err, out_pose, out_frames, out_it, out_carry, handed

    def turn_to_poles(self, s: _State, weak: np.ndarray) -> list[Any]:
        """The pose of ``s`` with its chains turned toward their poles (``apply_poles``) where the
        poles have not yielded and the iteration runs FABRIK's passes (not ``weak``); the marks
        updated."""
        if not self.poles:
            return s.pose
        idx = np.flatnonzero(~weak & ~s.carry.yielded)
        if not len(idx):
            return s.pose
        marks = s.carry.marks
        assert marks is not None
        with self.narrowed(idx):
            turned, got = self.apply_poles(take_all(s.pose, idx), marks.take(idx))
        marks.put(idx, got)
        pose = list(s.pose)
        put_all(pose, idx, turned, len(s.ids))
        return pose


class _State:
    """The live problems of an attempt: their poses, errors, best poses and counters (and, with
    orientation targets, ``top``: the rank, error, pose and frames of the best by rank)."""

    def __init__(
        self,
        pose: list[Any],
        frames: list[Any],
        start: list[Any],
        aims: _Aims,
        err: np.ndarray,
        score: np.ndarray,
        active: list[int],
        it: np.ndarray,
        max_it: np.ndarray,
        patience: np.ndarray,
        gain: np.ndarray,
        carry: _Carry,
    ) -> None:
        m = len(patience)
        self.active = active
        self.pose, self.frames, self.start, self.aims = list(pose), list(frames), list(start), aims
        self.err, self.score = err, score
        self.best_err, self.best_score = err, score
        self.best_pose, self.best_frames = list(pose), list(frames)
        self.patience, self.gain = patience, gain
        self.ids = np.arange(m)
        self.it, self.max_it = it.copy(), max_it.copy()
        self.stalls = np.zeros(m, dtype=np.int64)
        self.ran = np.zeros(m, dtype=bool)
        self.weak = np.zeros(m, dtype=bool)
        self.slow = np.zeros(m, dtype=np.int64)
        self.carry = carry.copy()
        self.yield_share = np.ones(m)
        self.top: Any = None

    def remember(self, mask: np.ndarray) -> None:
        """The current pose becomes the best one where ``mask``."""
        if not mask.any():
            return
        self.best_err = np.where(mask, self.err, self.best_err)
        self.best_score = np.where(mask, self.score, self.best_score)
        for j in self.active:
            self.best_pose[j] = bm.pick(mask, self.pose[j], self.best_pose[j])
            self.best_frames[j] = bm.pick(mask, self.frames[j], self.best_frames[j])

    def lift(self, mask: np.ndarray, short: np.ndarray, value: np.ndarray, err: np.ndarray) -> None:
        """The current pose becomes the best by rank where ``mask`` (rank ``(short, value)``,
        error in full force ``err``)."""
        if not mask.any():
            return
        t_short, t_value, t_err, t_pose, t_frames = self.top
        for j in self.active:
            t_pose[j] = bm.pick(mask, self.pose[j], t_pose[j])
            t_frames[j] = bm.pick(mask, self.frames[j], t_frames[j])
        self.top = (
            np.where(mask, short, t_short),
            np.where(mask, value, t_value),
            np.where(mask, err, t_err),
            t_pose,
            t_frames,
        )

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
            "slow",
            "yield_share",
        ):
            setattr(self, name, getattr(self, name)[idx])
        seqs = [self.pose, self.frames, self.start, self.best_pose, self.best_frames]
        if self.top is not None:
            seqs += [self.top[3], self.top[4]]
            self.top = (self.top[0][idx], self.top[1][idx], self.top[2][idx], self.top[3], self.top[4])
        for seq in seqs:
            for j, v in enumerate(seq):
                if v is not None:
                    seq[j] = take(v, idx)
        self.aims = self.aims.take(idx)
        self.carry = self.carry.take(idx)


class _Aims:
    """The targets of some problems: ``goal`` (effector -> point), ``turn`` (effector ->
    (orientation, weight)), ``poles`` (effector -> pole point); batch tuples."""

    def __init__(self, goal: dict[int, BVec], turn: dict[int, tuple[BQuat, float]], poles: dict[int, BVec]) -> None:
        self.goal, self.turn, self.poles = goal, turn, poles

    def take(self, idx: np.ndarray) -> _Aims:
        """The problems ``idx``."""
        return _Aims(
            {e: take(t, idx) for e, t in self.goal.items()},
            {e: (take(q, idx), w) for e, (q, w) in self.turn.items()},
            {e: take(p, idx) for e, p in self.poles.items()},
        )


class _Carry:
    """What a solve carries from attempt to attempt, per problem: the damped steps' damping
    ``(m,)``, whether its poles have yielded ``(m,)`` and its pole marks (``PoleMarks``, or
    None without poles)."""

    def __init__(self, damping: np.ndarray, yielded: np.ndarray, marks: PoleMarks | None) -> None:
        self.damping, self.yielded, self.marks = damping, yielded, marks

    @classmethod
    def fresh(cls, m: int, n: int, poled: bool) -> _Carry:
        """A solve's start: ``START_DAMPING``, no pole yielded, no marks."""
        return cls(np.full(m, START_DAMPING), np.zeros(m, dtype=bool), PoleMarks.empty(m, n) if poled else None)

    def copy(self) -> _Carry:
        return _Carry(self.damping.copy(), self.yielded.copy(), None if self.marks is None else self.marks.copy())

    def take(self, idx: np.ndarray) -> _Carry:
        """The problems ``idx`` (an index array or a mask; new arrays)."""
        return _Carry(self.damping[idx], self.yielded[idx], None if self.marks is None else self.marks.take(idx))

    def put(self, idx: np.ndarray, other: _Carry) -> None:
        """Write ``other`` (the problems ``idx``) back, in place."""
        self.damping[idx], self.yielded[idx] = other.damping, other.yielded
        if self.marks is not None and other.marks is not None:
            self.marks.put(idx, other.marks)


def solve(
    r: Rig,
    goals: dict[int, tg.Goal],
    weights: dict[int, float] | None,
    targets: dict[int, np.ndarray],
    first: np.ndarray,
    tol: float,
    max_it: int,
    cold: bool,
    turns: dict[int, tuple[np.ndarray, float]] | None = None,
    root_frame: rot.Quat | None = None,
    poles: dict[int, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Constrained solves of ``m`` problems (``LimitedSolve.run``).

    Args:
        r: the skeleton's rig (``n`` joints).
        goals: the first problem's goals (they fix the plan: effectors and weights).
        weights: effector index -> centroid weight, or ``None``.
        targets: effector index -> ``(m, 3)`` target points.
        first: the start poses, ``(n, 3, m)`` or ``(n, 3, 1)`` for all (``batch_tree.start_pose``,
            not yet turned to ``root_frame``).
        tol, max_it, cold: as in ``LimitedSolve.run`` (``cold``: from the rest pose).
        turns: effector index -> ``((m, 4) or (1, 4)`` unit quaternions (x, y, z, w), weight in
            (0, 1]) for the orientation targets.
        root_frame: the root's frame (a unit quaternion shared by all problems), or None.
        poles: targeted effector index -> ``(m, 3)`` or ``(1, 3)`` pole points.

    Returns:
        ``(m, n, 3)`` positions, ``(m, n, 4)`` frames, ``(m,)`` iterations, and an ``(m,)`` mask
        of the problems left to the scalar solve (the last ``TAIL`` of an attempt; their rows
        are not filled).
    """
    n = len(r.parents)
    m = len(next(iter(targets.values())))
    solver = LimitedSolve(r, goals, weights, {}, root_frame)
    plan = solver.plan
    goal = {e: _columns(t, m) for e, t in targets.items()}
    turn = {e: (_columns(q, m), w) for e, (q, w) in (turns or {}).items()}
    poled = {e: _columns(p, m) for e, p in (poles or {}).items()}
    batch = BatchLimited(r, solver, goal, tol, turn, poled)
    count = m if turn else first.shape[2]
    given = [_columns(first[j].T, count) for j in range(n)]
    top = r.order[0]
    initial = batch.pose_frames(given)
    if root_frame is not None:  # the whole start pose turns about the root to the root's frame
        spin = rot.mul(root_frame, rot.conj(initial[top]))
        c = given[top]
        for j in r.order[1:]:
            v = rot.rotate(spin, (given[j][0] - c[0], given[j][1] - c[1], given[j][2] - c[2]))
            given[j] = (c[0] + v[0], c[1] + v[1], c[2] + v[2])
        initial = batch.pose_frames(given)
        initial[top] = full(root_frame, count)
    # The start projected onto the limits (the scalar solve's first step), once if every problem
    # starts alike.
    start, start_frames = batch.project(given, initial)
    if count < m:  # one start for all
        start, start_frames = [full(v, m) for v in start], [full(v, m) for v in start_frames]
    # Within reach: every target within its chain's length of the root (``LimitedSolve.within_reach``).
    root = start[r.order[0]]
    within = np.ones(m, dtype=bool)
    for e, t in goal.items():
        length, j = 0.0, e
        while r.parents[j] >= 0:
            length, j = length + r.lengths[j], r.parents[j]
        within &= ~(dist(root, t) > length)
    restarting = within if cold else np.zeros(m, dtype=bool)
    patience = np.where(restarting, RESTART_RUN, STALL_RUN)
    gain = np.where(restarting, RESTART_GAIN, 0.0)
    pose = [start[j] if plan.active[j] else None for j in range(n)]
    frames = [start_frames[j] if plan.active[j] else None for j in range(n)]
    carry = _Carry.fresh(m, n, bool(poled))
    state = batch.attempt(pose, frames, start, np.zeros(m, dtype=np.int64), max_it, patience, gain, carry)
    err, pose, frames, it, carry, scalar = state
    retry = within & ~scalar & (err > tol) & (it < max_it)
    if retry.any():
        if cold:
            restarts(batch, np.flatnonzero(retry), start, start_frames, state, max_it)
        else:
            warm_retries(batch, np.flatnonzero(retry), start, start_frames, state, max_it)
    idx = np.flatnonzero(~scalar)
    if poled and len(idx):  # the poles' last turn (``PoleTurns.final_poles``)
        with batch.narrowed(idx):
            sub, sub_frames, sub_start = take_all(pose, idx), take_all(frames, idx), take_all(start, idx)
            got_pose, got_frames = batch.final_poles(sub, sub_frames, sub_start, tol, cold)
        put_all(pose, idx, got_pose, m)
        put_all(frames, idx, got_frames, m)
    place_untargeted(r, plan, pose, frames, start, start_frames)
    out = np.stack([np.stack(v, axis=-1) for v in pose], axis=1)
    rotations = np.stack([np.stack(v, axis=-1) for v in frames], axis=1)
    return out, rotations, it, scalar


def _columns(a: np.ndarray, m: int) -> tuple[np.ndarray, ...]:
    """``(m, k)`` or ``(1, k)`` rows as a batch tuple of ``k`` fresh ``(m,)`` arrays."""
    return tuple(np.array(np.broadcast_to(a[:, k], m)) for k in range(a.shape[1]))


def restarts(
    batch: BatchLimited,
    idx: np.ndarray,
    start: list[BVec],
    start_frames: list[BQuat],
    state: tuple[np.ndarray, list[Any], list[Any], np.ndarray, _Carry, np.ndarray],
    max_it: int,
) -> None:
    """``LimitedSolve.restarts`` after the first attempt, for the problems ``idx`` of ``state``
    (updated in place; ``start``: the projected start poses and frames): up to ``MAX_RESTARTS``
    attempts from the scalar solve's random poses (one seed sequence, drawn once per joint for
    every problem), each kept where it ranks better (``rank``), then the stall rule from the
    best of them, kept unless it ranks worse."""
    err, pose, frames, it, carry, scalar = state
    tol, plan, given = batch.tol, batch.plan, batch.aims
    m = len(idx)
    k_err, k_it, k_carry = err[idx], it[idx], carry.take(idx)
    k_pose, k_frames = take_all(pose, idx), take_all(frames, idx)
    k_aims = given.take(idx)
    k_start, k_start_frames = take_all(start, idx), take_all(start_frames, idx)
    gone = np.zeros(m, dtype=bool)  # handed to the scalar solve
    draw = random.Random(RESTART_SEED)
    for k in range(MAX_RESTARTS + 1):
        live = np.flatnonzero((k_err > tol) & (k_it < max_it) & ~gone)
        if not len(live):
            break
        count = len(live)
        batch.aim(k_aims.take(live))
        if k < MAX_RESTARTS:
            here, here_frames = take_all(k_start, live), take_all(k_start_frames, live)
            sp, sf = batch.stage2(here, here_frames, here, plan.active, plan.up, plan.kids, draw)
            seed = [v if a else None for v, a in zip(sp, plan.active)]
            seed_frames = [v if a else None for v, a in zip(sf, plan.active)]
            patience, gain = RESTART_RUN, RESTART_GAIN
        else:  # no restart reached: carry on from the best attempt
            seed, seed_frames = take_all(k_pose, live), take_all(k_frames, live)
            patience, gain = STALL_RUN, 0.0
        got_err, got_pose, got_frames, got_it, got_carry, handed = batch.attempt(
            seed,
            seed_frames,
            take_all(k_start, live),
            k_it[live],
            max_it,
            np.full(count, patience),
            np.full(count, gain),
            k_carry.take(live),
        )
        k_it[live] = got_it
        k_carry.put(live, got_carry)
        gone[live[handed]] = True
        now = batch.rank(k_err[live], take_all(k_pose, live))
        new = batch.rank(got_err, got_pose)
        better = _ranks_below(new, now) if k < MAX_RESTARTS else ~_ranks_below(now, new)
        better &= ~handed
        if better.any():
            kept, into = np.flatnonzero(better), live[better]
            k_err[into] = got_err[kept]
            put_all(k_pose, into, take_all(got_pose, kept), m)
            put_all(k_frames, into, take_all(got_frames, kept), m)
    batch.aim(given)
    err[idx], it[idx] = k_err, k_it
    carry.put(idx, k_carry)
    scalar[idx[gone]] = True
    put_all(pose, idx, k_pose, len(err))
    put_all(frames, idx, k_frames, len(err))


def warm_retries(
    batch: BatchLimited,
    idx: np.ndarray,
    start: list[BVec],
    start_frames: list[BQuat],
    state: tuple[np.ndarray, list[Any], list[Any], np.ndarray, _Carry, np.ndarray],
    max_it: int,
) -> None:
    """``LimitedSolve.warm_retries`` for the problems ``idx`` of ``state`` (updated in place): the
    poles yield; with poles, an attempt from the start without them, then (where still short)
    one from the rest pose moved with the root (projected onto the limits), each of at most
    ``FALLBACK_ITERATIONS`` and kept where it reaches every target."""
    err, pose, frames, it, carry, scalar = state
    r, tol, plan, total = batch.r, batch.tol, batch.plan, len(err)
    top = r.order[0]
    carry.yielded[idx] = True
    for from_start in [True, False] if batch.poles else [False]:
        live = idx[(err[idx] > tol) & (it[idx] < max_it) & ~scalar[idx]]
        if not len(live):
            break
        m = len(live)
        with batch.narrowed(live):
            if from_start:
                sp, sf = take_all(start, live), take_all(start_frames, live)
            else:
                shift = rot.sub(take(start[top], live), r.rest_start[top])
                rest = [rot.add(p, shift) for p in r.rest_start]
                rest_frames = [full(f, m) for f in r.rest_frames]
                if batch.root_frame is not None:
                    rest_frames[top] = full(batch.root_frame, m)
                sp, sf = batch.project(rest, rest_frames)
            got_err, got_pose, got_frames, got_it, got_carry, handed = batch.attempt(
                [v if a else None for v, a in zip(sp, plan.active)],
                [v if a else None for v, a in zip(sf, plan.active)],
                take_all(start, live),
                it[live],
                np.minimum(max_it, it[live] + FALLBACK_ITERATIONS),
                np.full(m, RESTART_RUN),
                np.full(m, RESTART_GAIN),
                carry.take(live),
            )
        it[live] = got_it
        carry.put(live, got_carry)
        scalar[live[handed]] = True
        reached = (got_err <= tol) & ~handed
        if reached.any():
            kept, into = np.flatnonzero(reached), live[reached]
            err[into] = got_err[kept]
            put_all(pose, into, take_all(got_pose, kept), total)
            put_all(frames, into, take_all(got_frames, kept), total)


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
