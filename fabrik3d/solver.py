"""Multi-end-effector FABRIK on a skeleton (the paper's section 3).

``solve(skeleton, targets)`` moves the targeted end effectors onto their
targets. One iteration is

* **Stage 1**, from every targeted effector inward: the effector goes onto its
  target; every other *active* joint (one on a path from the root to a targeted
  effector) takes the point proposed by each of its active children, the point
  at the child's bone length from the child's new position on the line to the
  joint's old position. A sub-base with several proposals takes their centroid:
  the plain mean, as in the paper, or, with ``weights``, each proposal weighted
  by the sum of the weights of the targeted effectors beneath it.
* **Stage 2**, from the root outward: the root stays where it is (at
  ``root_target`` if given) and each active joint goes on the line to its
  stage-1 point at its bone's length from its parent.

The solve stops when every targeted effector is within ``tolerance``, after
``max_iterations``, or when an iteration changes the largest error by less
than ``STALL * tolerance`` (``fabrik3d.chain.STALL``): the pose has settled.
An iteration that makes the largest error worse is kept (with an unreachable
target, the first iterations trade its error for the others'), so a
reachable target is never frozen by an unreachable one. Work is done in
skeleton order, so the result does not depend on the order of ``targets``.

With one targeted effector, the path from the root to it is solved by the
single-chain algorithm of ``fabrik3d.chain`` (so an unreachable target
straightens the path in one step, and a straight path is bent once).

Branches without a target do not pull: they keep their shape and move rigidly
with the frame of the joint they hang from (``fabrik3d.frames``), keeping their
local rotations; a branch hanging from the root moves with the root's position.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d import targets as tg
from fabrik3d.chain import STALL, run_chain
from fabrik3d.frames import Rig, bone_direction, rig
from fabrik3d.limited import LimitedSolve
from fabrik3d.skeleton import Skeleton

_TINY2 = 1e-24


@dataclass(frozen=True)
class SolveResult:
    """Outcome of ``solve``.

    Attributes:
        positions: ``(n, 3)`` joint positions in skeleton order, scene units.
        rotations: ``(n, 4)`` world frames as unit quaternions (x, y, z, w); each
            frame's +Y points along the bone to the joint's first child.
        iterations: iterations run (0 when every target was already reached).
        errors: targeted effector name -> distance to its target, scene units.
        converged: whether every error is within the tolerance.
        orientation_errors: effector name -> angle in degrees between its frame and
            its target's orientation, for targets given with an orientation.
    """

    positions: np.ndarray
    rotations: np.ndarray
    iterations: int
    errors: dict[str, float]
    converged: bool
    orientation_errors: dict[str, float] = field(default_factory=dict)


def solve(
    skeleton: Skeleton,
    targets: Mapping[str, Any],
    *,
    positions: np.ndarray | None = None,
    root_target: Any = None,
    poles: Mapping[str, Any] | None = None,
    weights: Mapping[str, float] | None = None,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
) -> SolveResult:
    """Pose ``skeleton`` so its targeted end effectors reach their targets.

    Skeletons with joint constraints, and solves with poles or orientation
    targets, run the constrained solver of ``fabrik3d.limited``; the others the
    plain tree solve described in this module.

    Args:
        skeleton: the skeleton to pose.
        targets: end-effector name -> ``(3,)`` target point or ``fabrik3d.Target``.
        positions: ``(n, 3)`` start pose (default: the rest pose); interactive
            callers pass the previous result's positions. Bone directions are taken
            from it and lengths from the skeleton. Not modified.
        root_target: ``(3,)`` new root position, or a ``Target`` (with an optional
            orientation for the root's frame): the whole start pose first moves
            with the root, then FABRIK runs with the root fixed there.
        poles: effector name -> ``(3,)`` pole point that the chain's inner joints
            bend toward (elbows, knees).
        weights: effector name -> weight > 0 for the sub-base centroids.
        tolerance: distance (scene units, > 0) at which a target counts as reached.
        max_iterations: upper bound on iterations (>= 1).

    Raises:
        ValueError: naming the argument, for unknown or non-effector target names
            (listing the valid ones), wrong shapes, NaN or inf values, non-unit
            quaternions, weights <= 0, a non-positive tolerance or
            ``max_iterations < 1``.
    """
    r = rig(skeleton)
    goals = tg.goals(skeleton, targets)
    w = tg.effector_weights(skeleton, weights)
    pole_points = tg.pole_points(skeleton, poles)
    root_goal = None if root_target is None else tg.goal(root_target, "root_target")
    tolerance, max_iterations = checks.settings(tolerance, max_iterations)
    start = _start_pose(skeleton, r, positions, root_goal)
    constrained = bool(skeleton.constraints or pole_points) or any(g.orientation is not None for g in goals.values())
    if constrained or (root_goal is not None and root_goal.orientation is not None):
        root_frame = None if root_goal is None else root_goal.orientation
        solver = LimitedSolve(r, goals, w, pole_points, root_frame)
        pose, frames, iterations = solver.run(start, tolerance, max_iterations, cold=positions is None)
    else:
        pose, frames, iterations = _solve_plain(skeleton, r, start, goals, w, tolerance, max_iterations)
    names = skeleton.names
    errors = {names[e]: math.dist(pose[e], g.position) for e, g in goals.items()}
    turned = {names[e]: tg.degrees_between(frames[e], g.orientation) for e, g in goals.items() if g.orientation}
    return SolveResult(
        positions=np.array(pose, dtype=float).reshape(len(pose), 3),
        rotations=np.array(frames, dtype=float),
        iterations=iterations,
        errors=errors,
        converged=all(v <= tolerance for v in errors.values()),
        orientation_errors=turned,
    )


def _solve_plain(
    skeleton: Skeleton,
    r: Rig,
    start: list[rot.Vec],
    goals: dict[int, tg.Goal],
    weights: dict[int, float] | None,
    tol: float,
    max_it: int,
) -> tuple[list[rot.Vec], list[rot.Quat], int]:
    """The unconstrained solve: one path by the chain algorithm, or the tree."""
    xs, ys, zs = [p[0] for p in start], [p[1] for p in start], [p[2] for p in start]
    goal = {e: g.position for e, g in goals.items()}
    if not goal:
        active, iterations = [False] * len(xs), 0
    elif len(goal) == 1:
        ((e, t),) = goal.items()
        active, iterations = _solve_path(skeleton, xs, ys, zs, e, t, tol, max_it)
    else:
        active = _active(skeleton, goal)
        iterations = _solve_tree(skeleton, r, xs, ys, zs, goal, weights, active, tol, max_it)
    pose = list(zip(xs, ys, zs))
    frames = _finish(skeleton, r, pose, start, active)
    return pose, frames, iterations


def _start_pose(skeleton: Skeleton, r: Rig, positions: Any, root: tg.Goal | None) -> list[rot.Vec]:
    """The start pose with the skeleton's bone lengths, moved (and turned) with the root's goal."""
    if positions is None:
        pts = skeleton.rest_positions.tolist()
    else:
        arr = checks.points(positions, "positions")
        if arr.shape[0] != len(skeleton):
            raise ValueError(f"positions: expected shape ({len(skeleton)}, 3), got {arr.shape}")
        pts = arr.tolist()
    rest = skeleton.rest_positions.tolist()
    lengths = r.lengths
    top = r.order[0]
    out: list[rot.Vec] = [(0.0, 0.0, 0.0)] * len(pts)
    out[top] = tuple(pts[top]) if root is None else root.position  # type: ignore[assignment]
    for j in r.order[1:]:
        p = r.parents[j]
        d = bone_direction(pts[p], pts[j]) or bone_direction(rest[p], rest[j])
        assert d is not None
        q, k = out[p], lengths[j]
        out[j] = (q[0] + d[0] * k, q[1] + d[1] * k, q[2] + d[2] * k)
    if root is not None and root.orientation is not None:
        turn = rot.mul(root.orientation, rot.conj(r.pose_frames(out)[top]))
        c = out[top]
        for j in r.order[1:]:
            v = rot.rotate(turn, (out[j][0] - c[0], out[j][1] - c[1], out[j][2] - c[2]))
            out[j] = (c[0] + v[0], c[1] + v[1], c[2] + v[2])
    return out


def _solve_path(
    skeleton: Skeleton,
    xs: list[float],
    ys: list[float],
    zs: list[float],
    effector: int,
    target: tuple[float, float, float],
    tol: float,
    max_it: int,
) -> tuple[list[bool], int]:
    """One target: the single-chain algorithm on the path from the root."""
    path = skeleton.path_to_root(effector)
    px, py, pz = [xs[j] for j in path], [ys[j] for j in path], [zs[j] for j in path]
    lengths = skeleton.bone_lengths
    ds = [float(lengths[j]) for j in path[1:]]
    iterations, _ = run_chain(px, py, pz, ds, list(target), tol, max_it)
    active = [False] * len(xs)
    for k, j in enumerate(path):
        xs[j], ys[j], zs[j] = px[k], py[k], pz[k]
        active[j] = True
    return active, iterations


def _active(skeleton: Skeleton, goal: Mapping[int, Any]) -> list[bool]:
    active = [False] * len(skeleton)
    for e in goal:
        for j in skeleton.path_to_root(e):
            active[j] = True
    return active


def _solve_tree(
    skeleton: Skeleton,
    r: Rig,
    xs: list[float],
    ys: list[float],
    zs: list[float],
    goal: dict[int, tuple[float, float, float]],
    weights: dict[int, float] | None,
    active: list[bool],
    tol: float,
    max_it: int,
) -> int:
    """Several targets: stage 1 with sub-base centroids, stage 2 outward; in place."""
    n = len(xs)
    d = skeleton.bone_lengths.tolist()
    parents = r.parents
    rest = skeleton.rest_positions.tolist()
    up, down, kids = tree_plan(skeleton, r, goal, weights, active)
    qx, qy, qz = [0.0] * n, [0.0] * n, [0.0] * n
    sqrt = math.sqrt
    eps = STALL * tol

    def largest_error() -> float:
        return max(sqrt((xs[e] - t[0]) ** 2 + (ys[e] - t[1]) ** 2 + (zs[e] - t[2]) ** 2) for e, t in goal.items())

    err = largest_error()
    it = 0
    while err > tol and it < max_it:
        it += 1
        # Stage 1: effectors onto targets, then inward with centroids at sub-bases.
        for j in down:
            t = goal.get(j)
            if t is not None:
                qx[j], qy[j], qz[j] = t
                continue
            sx = sy = sz = sw = 0.0
            for c, wc in kids[j]:
                dx, dy, dz = xs[j] - qx[c], ys[j] - qy[c], zs[j] - qz[c]
                l2 = dx * dx + dy * dy + dz * dz
                if l2 < _TINY2:  # keep the old bone's direction
                    dx, dy, dz = xs[j] - xs[c], ys[j] - ys[c], zs[j] - zs[c]
                    l2 = dx * dx + dy * dy + dz * dz
                s = d[c] / sqrt(l2)
                sx += wc * (qx[c] + dx * s)
                sy += wc * (qy[c] + dy * s)
                sz += wc * (qz[c] + dz * s)
                sw += wc
            qx[j], qy[j], qz[j] = sx / sw, sy / sw, sz / sw
        # Stage 2: the root stays; every active joint back at its length from its parent.
        for j in up:
            p = parents[j]
            px, py, pz = xs[p], ys[p], zs[p]
            dx, dy, dz = qx[j] - px, qy[j] - py, qz[j] - pz
            l2 = dx * dx + dy * dy + dz * dz
            if l2 < _TINY2:  # keep the stage-1 bone, or else the rest bone, direction
                dx, dy, dz = qx[j] - qx[p], qy[j] - qy[p], qz[j] - qz[p]
                l2 = dx * dx + dy * dy + dz * dz
                if l2 < _TINY2:
                    dx, dy, dz = (rest[j][k] - rest[p][k] for k in range(3))
                    l2 = dx * dx + dy * dy + dz * dz
            s = d[j] / sqrt(l2)
            xs[j], ys[j], zs[j] = px + dx * s, py + dy * s, pz + dz * s
        new = largest_error()
        if abs(err - new) < eps:  # settled (an unreachable target keeps the others' compromise)
            break
        err = new
    return it


def tree_plan(
    skeleton: Skeleton, r: Rig, goal: Mapping[int, Any], weights: dict[int, float] | None, active: list[bool]
) -> tuple[list[int], list[int], list[list[tuple[int, float]]]]:
    """The tree solve's orders and centroid weights.

    Returns ``up`` (active joints but the root, parents first: stage 2), ``down``
    (active joints, children first: stage 1) and, per joint, its active children
    with their proposal weights (1, or with ``weights`` the sum of the weights of
    the targeted effectors beneath the child).
    """
    n = len(active)
    up = [j for j in r.order[1:] if active[j]]
    down = [j for j in reversed(r.order) if active[j]]
    beneath = [0.0] * n
    for e in goal:
        for j in skeleton.path_to_root(e):
            beneath[j] += 1.0 if weights is None else weights.get(e, 1.0)
    kids: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for j in up:
        kids[r.parents[j]].append((j, 1.0 if weights is None else beneath[j]))
    return up, down, kids


def _finish(
    skeleton: Skeleton, r: Rig, pose: list[rot.Vec], start: list[rot.Vec], active: list[bool]
) -> list[rot.Quat]:
    """Place the untargeted branches and compute every frame; ``pose`` is updated in place.

    Frames follow the swing rule of ``fabrik3d.frames``. An active joint whose
    first child has no target keeps its start local rotation (the root: its start
    frame); each untargeted branch then moves rigidly with the frame of the joint
    it hangs from (with the position only, for the root).
    """
    start_frames = r.pose_frames(start)
    frames: list[rot.Quat] = [rot.IDENTITY] * len(pose)
    for j in r.order:
        p = r.parents[j]
        parent_frame = frames[p] if p >= 0 else rot.IDENTITY
        c = r.first_child[j]
        if c < 0:
            frames[j] = rot.mul(parent_frame, r.rest_local[j])
        elif active[j] and not active[c]:
            if p < 0:
                frames[j] = start_frames[j]
            else:
                frames[j] = rot.mul(parent_frame, rot.mul(rot.conj(start_frames[p]), start_frames[j]))
        else:
            direction = bone_direction(pose[j], pose[c])
            assert direction is not None
            frames[j] = r.swing_frame(j, parent_frame, direction)
        if not active[j]:
            continue
        turn = rot.IDENTITY if p < 0 else rot.mul(frames[j], rot.conj(start_frames[j]))
        pj, sj = pose[j], start[j]
        for c in skeleton.children(j):
            if active[c]:
                continue
            for x in r.subtree(c):
                v = rot.rotate(turn, (start[x][0] - sj[0], start[x][1] - sj[1], start[x][2] - sj[2]))
                pose[x] = (pj[0] + v[0], pj[1] + v[1], pj[2] + v[2])
    return frames
