"""The constrained solve (``fabrik3d.solver.constrained.solve``), vectorised over a batch of problems.

``solve`` is ``LimitedSolve.run`` on ``m`` problems: the start projected onto the limits, a first
attempt (``fabrik3d.batch.constrained.attempt``), a cold solve's restarts and a warm solve's
retries (``restarts``, ``warm_retries``) for the problems they concern, the poles' final turn,
the untargeted branches. Values are batch tuples as in ``fabrik3d.batch.constrained.passes``: per
joint, three (or four) ``(m,)`` arrays, one element per live problem. The problems an attempt
hands back (its last ``attempt.TAIL``) are left to ``fabrik3d.solve``, from the start.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch.constrained.attempt import BatchLimited, Carry, ranks_below
from fabrik3d.batch.constrained.damped import dist
from fabrik3d.batch.constrained.passes import BQuat, BVec
from fabrik3d.batch.constrained.subsets import full, put_all, take, take_all
from fabrik3d.model import targets as tg
from fabrik3d.solver.constrained.attempt import STALL_RUN
from fabrik3d.solver.constrained.solve import (
    FALLBACK_ITERATIONS,
    MAX_RESTARTS,
    RESTART_GAIN,
    RESTART_RUN,
    RESTART_SEED,
    LimitedSolve,
)
from fabrik3d.solver.rig import Rig

# Smaller batches run the scalar solve per problem: numpy's per-call cost exceeds the loop's
# (the humanoid breaks even at about 100 problems, the octopus, 8 tentacles, at a few hundred).
MIN_BATCH = 256


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
    backend: str = "numpy",
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
        backend: ``solve_batch``'s; on ``"cpu"`` and ``"cuda"`` the reaching passes run compiled for the
            CPU (``fabrik3d.batch.compiled_passes``) where the rig and targets are covered (same floats).

    Returns:
        ``(m, n, 3)`` positions, ``(m, n, 4)`` frames, ``(m,)`` iterations, and an ``(m,)`` mask
        of the problems left to the scalar solve (the last ``TAIL`` of an attempt; their rows
        are not filled).
    """
    n = len(r.parents)
    m = len(next(iter(targets.values())))
    solver = LimitedSolve(r, goals, weights, {}, root_frame)
    plan = solver.plan
    goal_positions = {e: _columns(t, m) for e, t in targets.items()}
    goal_orientations = {e: (_columns(q, m), w) for e, (q, w) in (turns or {}).items()}
    poled = {e: _columns(p, m) for e, p in (poles or {}).items()}
    batch = BatchLimited(r, solver, goal_positions, tol, goal_orientations, poled)
    if backend != "numpy":
        from fabrik3d.batch.compiled_passes import CompiledPasses

        batch.compiled = CompiledPasses.make(r, plan, list(goal_positions), root_frame)
    count = m if goal_orientations else first.shape[2]
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
    for e, t in goal_positions.items():
        length, j = 0.0, e
        while r.parents[j] >= 0:
            length, j = length + r.lengths[j], r.parents[j]
        within &= ~(dist(root, t) > length)
    restarting = within if cold else np.zeros(m, dtype=bool)
    patience = np.where(restarting, RESTART_RUN, STALL_RUN)
    gain = np.where(restarting, RESTART_GAIN, 0.0)
    pose = [start[j] if plan.active[j] else None for j in range(n)]
    frames = [start_frames[j] if plan.active[j] else None for j in range(n)]
    carry = Carry.fresh(m, n, bool(poled))
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
    state: tuple[np.ndarray, list[Any], list[Any], np.ndarray, Carry, np.ndarray],
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
        better = ranks_below(new, now) if k < MAX_RESTARTS else ~ranks_below(now, new)
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
    state: tuple[np.ndarray, list[Any], list[Any], np.ndarray, Carry, np.ndarray],
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
