"""The constrained solve's attempt (``fabrik3d.solver.constrained.attempt``), vectorised over a batch.

``BatchLimited`` holds the batch twins of ``LimitedSolve``'s parts (the passes, the damped steps
and residuals, the pole turns) and runs ``Attempts.attempt`` on every live problem at once: the
FABRIK passes with limits, the damped least-squares steps where they are slow, the stall and
yield rules, written on batch values with the same expressions in the same order; problems leave
the arrays as they stop (compacted each iteration), and the last ``TAIL`` go back to
``fabrik3d.solve``. Values are batch tuples as in ``fabrik3d.batch.constrained.passes``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fabrik3d.batch import math as bm
from fabrik3d.batch.constrained.damped import BatchDampedSteps
from fabrik3d.batch.constrained.passes import BatchPasses, BQuat, BVec
from fabrik3d.batch.constrained.poles import BatchPoleTurns, PoleMarks
from fabrik3d.batch.constrained.subsets import put_all, take, take_all
from fabrik3d.solver.constrained.attempt import (
    DAMPED_STEPS,
    FABRIK_GAIN,
    LIMITED_STALL,
    MAX_DAMPING,
    MIN_DAMPING,
    SLOW_GAIN,
    START_DAMPING,
    YIELD_AFTER,
    slowed,
)
from fabrik3d.solver.constrained.damped import ORIENTATION_IN_FORCE
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.rig import Rig

# Once this many problems (or fewer) of an attempt are left (a restart's too), they go to the
# scalar solve, from the start: one batch iteration costs more than their scalar solves.
TAIL = 16


def stalled(low: np.ndarray, now: np.ndarray, gain: np.ndarray, tol: float) -> np.ndarray:
    """``solver.constrained.solve.stalled`` per problem (``(m,)`` arrays; an ``(m,)`` mask)."""
    return low - now < np.maximum(LIMITED_STALL * tol, gain * low)


class BatchLimited(BatchPasses, BatchDampedSteps, BatchPoleTurns):
    """The damped steps and the attempt loop of ``LimitedSolve`` on batch values (its targets:
    ``goal_positions``, ``goal_orientations`` and ``poles`` of the live problems, ``aims``)."""

    def __init__(
        self,
        r: Rig,
        solver: LimitedSolve,
        goal_positions: dict[int, BVec],
        tol: float,
        goal_orientations: dict[int, tuple[BQuat, float]] | None = None,
        poles: dict[int, BVec] | None = None,
    ) -> None:
        super().__init__(r, solver.plan, goal_positions, goal_orientations, solver.root_frame)
        self.poles = poles or {}
        self.cols, self.mask, self.starts = solver.damped_plan()
        self.above = [np.flatnonzero(row > 0.0) for row in self.mask]  # per goal, the columns above it
        self.tol = tol

    @property
    def aims(self) -> Aims:
        return Aims(self.goal_positions, self.goal_orientations, self.poles)

    def aim(self, aims: Aims, yield_share: Any = 1.0) -> None:
        """The live problems' targets, and their orientation targets' yield shares (``(m,)``)."""
        self.goal_positions, self.goal_orientations = aims.goal_positions, aims.goal_orientations
        self.poles = aims.poles
        self.yield_share = yield_share

    @contextmanager
    def narrowed(self, idx: np.ndarray) -> Iterator[None]:
        """The targets and yield shares of the problems ``idx`` only, for the block."""
        aims, yield_share = self.aims, self.yield_share
        self.aim(aims.take(idx), yield_share[idx] if np.ndim(yield_share) else yield_share)
        try:
            yield
        finally:
            self.aim(aims, yield_share)

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
        carry: Carry,
    ) -> tuple[np.ndarray, list[Any], list[Any], np.ndarray, Carry, np.ndarray]:
        """``LimitedSolve.attempt`` from ``pose`` for every problem, with per-problem iterations so
        far ``it``, ``patience``, ``gain`` and the solve's state carried from attempt to attempt
        (``carry``: damping, poles yielded, pole marks). Before each stage 1, the poles turn the
        chains of the problems whose poles have not yielded. Returns per problem the largest
        error of the pose kept (orientation targets in full force), that pose and its frames
        (active joints; others ``None``), the iterations, the carried state after, and a mask of
        the problems handed back unfinished: once ``TAIL`` or fewer are left, each batch
        iteration costs more than their scalar solves would (with the passes ``compiled``, none:
        their batch iterations cost less). The pose kept is the best iterated one, or with
        orientation targets the best by ``rank``, the given pose included. The targets (``aims``)
        are as given after."""
        tol = self.tol
        plan = self.plan
        active = [j for j in range(len(pose)) if plan.active[j]]
        m = len(patience)
        oriented = bool(self.goal_orientations)
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
        self.yield_share = np.ones(m)
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
            if len(s.ids) <= (TAIL if self.compiled is None else 0):  # the last few: cheaper in scalar code
                handed[s.ids] = True
                break
            self.aim(s.aims, s.yield_share)
            s.it += 1
            weak = s.weak
            new_pose, new_frames = self.reach(self.turn_to_poles(s, weak), s.frames, s.start)
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
                s.lift(ranks_below((short, value), s.top[:2]), short, value, full_err)
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
        aims: Aims,
        err: np.ndarray,
        score: np.ndarray,
        active: list[int],
        it: np.ndarray,
        max_it: np.ndarray,
        patience: np.ndarray,
        gain: np.ndarray,
        carry: Carry,
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


class Aims:
    """The targets of some problems: ``goal_positions`` (effector -> point), ``goal_orientations`` (effector ->
    (orientation, weight)), ``poles`` (effector -> pole point); batch tuples."""

    def __init__(
        self,
        goal_positions: dict[int, BVec],
        goal_orientations: dict[int, tuple[BQuat, float]],
        poles: dict[int, BVec],
    ) -> None:
        self.goal_positions, self.goal_orientations, self.poles = goal_positions, goal_orientations, poles

    def take(self, idx: np.ndarray) -> Aims:
        """The problems ``idx``."""
        return Aims(
            {e: take(t, idx) for e, t in self.goal_positions.items()},
            {e: (take(q, idx), w) for e, (q, w) in self.goal_orientations.items()},
            {e: take(p, idx) for e, p in self.poles.items()},
        )


class Carry:
    """What a solve carries from attempt to attempt, per problem: the damped steps' damping
    ``(m,)``, whether its poles have yielded ``(m,)`` and its pole marks (``PoleMarks``, or
    None without poles)."""

    def __init__(self, damping: np.ndarray, yielded: np.ndarray, marks: PoleMarks | None) -> None:
        self.damping, self.yielded, self.marks = damping, yielded, marks

    @classmethod
    def fresh(cls, m: int, n: int, poled: bool) -> Carry:
        """A solve's start: ``START_DAMPING``, no pole yielded, no marks."""
        return cls(np.full(m, START_DAMPING), np.zeros(m, dtype=bool), PoleMarks.empty(m, n) if poled else None)

    def copy(self) -> Carry:
        return Carry(self.damping.copy(), self.yielded.copy(), None if self.marks is None else self.marks.copy())

    def take(self, idx: np.ndarray) -> Carry:
        """The problems ``idx`` (an index array or a mask; new arrays)."""
        return Carry(self.damping[idx], self.yielded[idx], None if self.marks is None else self.marks.take(idx))

    def put(self, idx: np.ndarray, other: Carry) -> None:
        """Write ``other`` (the problems ``idx``) back, in place."""
        self.damping[idx], self.yielded[idx] = other.damping, other.yielded
        if self.marks is not None and other.marks is not None:
            self.marks.put(idx, other.marks)


def ranks_below(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per problem, whether the rank ``a`` (a tuple ``(short, error)``) is below ``b``: Python's
    tuple order, elementwise."""
    return (~a[0] & b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
