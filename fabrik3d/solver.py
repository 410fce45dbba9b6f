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
``max_iterations``, or when an iteration improves the largest error by less
than ``STALL * tolerance`` (``fabrik3d.chain.STALL``); an iteration that makes
the largest error worse is undone. Work is done in skeleton order, so the
result does not depend on the order of ``targets``.

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.chain import STALL, run_chain
from fabrik3d.frames import Rig, bone_direction, rig
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
    """

    positions: np.ndarray
    rotations: np.ndarray
    iterations: int
    errors: dict[str, float]
    converged: bool


def solve(
    skeleton: Skeleton,
    targets: Mapping[str, Any],
    *,
    positions: np.ndarray | None = None,
    root_target: np.ndarray | None = None,
    weights: Mapping[str, float] | None = None,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
) -> SolveResult:
    """Pose ``skeleton`` so its targeted end effectors reach their targets.

    Args:
        skeleton: the skeleton to pose.
        targets: end-effector name -> ``(3,)`` target point.
        positions: ``(n, 3)`` start pose (default: the rest pose); interactive
            callers pass the previous result's positions. Bone directions are taken
            from it and lengths from the skeleton. Not modified.
        root_target: ``(3,)`` new root position: the whole start pose first moves
            with the root, then FABRIK runs with the root fixed there.
        weights: effector name -> weight > 0 for the sub-base centroids.
        tolerance: distance (scene units, > 0) at which a target counts as reached.
        max_iterations: upper bound on iterations (>= 1).

    Raises:
        ValueError: naming the argument, for unknown or non-effector target names
            (listing the valid ones), wrong shapes, NaN or inf values, weights <= 0,
            a non-positive tolerance or ``max_iterations < 1``.
    """
    r = rig(skeleton)
    goal = _check_targets(skeleton, targets)
    w = _check_weights(skeleton, weights)
    tolerance, max_iterations = checks.settings(tolerance, max_iterations)
    start = _start_pose(skeleton, r, positions, root_target)
    xs, ys, zs = [p[0] for p in start], [p[1] for p in start], [p[2] for p in start]
    if not goal:
        active, iterations = [False] * len(xs), 0
    elif len(goal) == 1:
        ((e, t),) = goal.items()
        active, iterations = _solve_path(skeleton, xs, ys, zs, e, t, tolerance, max_iterations)
    else:
        active = _active(skeleton, goal)
        iterations = _solve_tree(skeleton, r, xs, ys, zs, goal, w, active, tolerance, max_iterations)
    pose = list(zip(xs, ys, zs))
    frames = _finish(skeleton, r, pose, start, active)
    errors = {skeleton.names[e]: math.dist(pose[e], t) for e, t in goal.items()}
    return SolveResult(
        positions=np.array(pose, dtype=float).reshape(len(pose), 3),
        rotations=np.array(frames, dtype=float),
        iterations=iterations,
        errors=errors,
        converged=all(v <= tolerance for v in errors.values()),
    )


def _check_targets(skeleton: Skeleton, targets: Any) -> dict[int, tuple[float, float, float]]:
    if not isinstance(targets, Mapping):
        raise ValueError("targets: expected a mapping from end-effector names to points")
    effectors = skeleton.end_effectors
    out = {}
    for name in targets:
        if name not in effectors:
            raise ValueError(
                f"targets: {name!r} is not an end effector of this skeleton; valid names are {', '.join(effectors)}"
            )
    for name in effectors:  # skeleton order, whatever the mapping's order
        if name in targets:
            out[skeleton.index(name)] = tuple(checks.point(targets[name], f"targets[{name!r}]").tolist())
    return out


def _check_weights(skeleton: Skeleton, weights: Any) -> dict[int, float] | None:
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise ValueError("weights: expected a mapping from end-effector names to positive numbers")
    effectors = skeleton.end_effectors
    out = {}
    for name, value in weights.items():
        if name not in effectors:
            raise ValueError(f"weights: {name!r} is not an end effector; valid names are {', '.join(effectors)}")
        out[skeleton.index(name)] = checks.positive(value, f"weights[{name!r}]")
    return out


def _start_pose(skeleton: Skeleton, r: Rig, positions: Any, root_target: Any) -> list[rot.Vec]:
    """The start pose with the skeleton's bone lengths, moved with ``root_target``."""
    if positions is None:
        pts = skeleton.rest_positions.tolist()
    else:
        arr = checks.points(positions, "positions")
        if arr.shape[0] != len(skeleton):
            raise ValueError(f"positions: expected shape ({len(skeleton)}, 3), got {arr.shape}")
        pts = arr.tolist()
    rest = skeleton.rest_positions.tolist()
    lengths = skeleton.bone_lengths.tolist()
    root = r.order[0]
    shift = (0.0, 0.0, 0.0)
    if root_target is not None:
        goal = checks.point(root_target, "root_target").tolist()
        shift = (goal[0] - pts[root][0], goal[1] - pts[root][1], goal[2] - pts[root][2])
    out: list[rot.Vec] = [(0.0, 0.0, 0.0)] * len(pts)
    out[root] = (pts[root][0] + shift[0], pts[root][1] + shift[1], pts[root][2] + shift[2])
    for j in r.order[1:]:
        p = r.parents[j]
        d = bone_direction(pts[p], pts[j]) or bone_direction(rest[p], rest[j])
        assert d is not None
        q, k = out[p], lengths[j]
        out[j] = (q[0] + d[0] * k, q[1] + d[1] * k, q[2] + d[2] * k)
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
    up = [j for j in r.order[1:] if active[j]]  # stage 2 order: parents first
    down = [j for j in reversed(r.order) if active[j]]  # stage 1 order: children first
    # Per active non-effector joint: its active children with their proposal weights.
    beneath = [0.0] * n
    for e in goal:
        for j in skeleton.path_to_root(e):
            beneath[j] += 1.0 if weights is None else weights.get(e, 1.0)
    kids: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for j in up:
        kids[parents[j]].append((j, 1.0 if weights is None else beneath[j]))
    qx, qy, qz = [0.0] * n, [0.0] * n, [0.0] * n
    sqrt = math.sqrt
    eps = STALL * tol

    def largest_error() -> float:
        return max(sqrt((xs[e] - t[0]) ** 2 + (ys[e] - t[1]) ** 2 + (zs[e] - t[2]) ** 2) for e, t in goal.items())

    err = largest_error()
    it = 0
    while err > tol and it < max_it:
        it += 1
        saved = (xs[:], ys[:], zs[:])
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
        if new > err:  # worse: undo this iteration and stop
            xs[:], ys[:], zs[:] = saved
            break
        if err - new < eps:
            err = new
            break
        err = new
    return it


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
            for x in r.subtree[c]:
                v = rot.rotate(turn, (start[x][0] - sj[0], start[x][1] - sj[1], start[x][2] - sj[2]))
                pose[x] = (pj[0] + v[0], pj[1] + v[1], pj[2] + v[2])
    return frames
