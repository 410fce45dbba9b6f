"""Batch solving: ``solve_batch`` poses one skeleton for ``B`` independent problems at once.

Each problem ``b`` is what ``fabrik3d.solve`` would solve with ``targets[name][b]``,
``positions[b]``, ``root_target[b]`` and ``poles[name][b]`` (an argument given
without the batch axis is shared by every problem), and its result equals that
solve's as docs/batch.md states (the equality contract: positions, frames, iterations and
convergence bit for bit; errors within a unit or two in the last place).

* Skeletons without joint constraints, solved without poles and orientation
  targets (the plain path of ``solve``), run vectorised over the batch with numpy:
  one numpy operation per joint and step for all live problems, in place on
  preallocated arrays, problems dropping out as they converge or stop. One target
  runs the chain kernel on its root path (``fabrik3d.batch.chain``), several the
  tree solve (``fabrik3d.batch.tree``); then branches and frames
  (``fabrik3d.batch.frames``).
* Skeletons with joint limits, and solves with orientation targets, a root
  orientation or poles on targeted effectors (the constrained path of ``solve``),
  run vectorised too (``fabrik3d.batch.constrained.solve``): the constrained solver's
  attempts, damped steps, pole turns, restarts and warm retries on batch values,
  with the same expressions as ``fabrik3d.solver.constrained.solve``. The last few problems of an
  attempt go to ``solve`` (not on a compiled backend, whose passes run compiled), as do batches
  smaller than ``batch.constrained.solve.MIN_BATCH`` (256), where the loop is faster.
* A pole on an effector without a target (whose limb keeps its start pose) is not
  vectorised: ``solve`` runs once per problem, with the same inputs and results, as for a
  natural posing, given frames or a look. On a compiled backend those problems are shared among
  worker processes (``fabrik3d.batch.workers``), the same results.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.batch import backends, inputs, workers
from fabrik3d.batch import chain as batch_chain
from fabrik3d.batch import frames as batch_frames
from fabrik3d.batch import tree as batch_tree
from fabrik3d.batch.constrained import solve as batch_limited
from fabrik3d.batch.riders import riding
from fabrik3d.model import targets as tg
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.solver.look import look_goal
from fabrik3d.solver.rig import rig
from fabrik3d.solver.tree import check_posing


@dataclass(frozen=True)
class BatchResult:
    """Outcome of ``solve_batch`` for ``B`` problems on a skeleton of ``n`` joints.

    Attributes:
        positions: ``(B, n, 3)`` joint positions, scene units.
        rotations: ``(B, n, 4)`` world frames, unit quaternions (x, y, z, w), as in ``SolveResult``.
        iterations: ``(B,)`` iterations run per problem.
        errors: targeted effector name -> ``(B,)`` distances to its targets, scene units.
        converged: ``(B,)`` whether every error of the problem is within the tolerance.
        orientation_errors: effector name -> ``(B,)`` angles in degrees, for targets with orientations.
    """

    positions: np.ndarray
    rotations: np.ndarray
    iterations: np.ndarray
    errors: dict[str, np.ndarray]
    converged: np.ndarray
    orientation_errors: dict[str, np.ndarray] = field(default_factory=dict)


def solve_batch(
    skeleton: Skeleton,
    targets: Mapping[str, Any],
    *,
    positions: Any = None,
    root_target: Any = None,
    poles: Mapping[str, Any] | None = None,
    weights: Mapping[str, float] | None = None,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
    posing: Posing | None = None,
    relax_to: Any = None,
    rotations: Any = None,
    relax_rotations: Any = None,
    look_at: Any = None,
    backend: str = "numpy",
) -> BatchResult:
    """Solve ``B`` independent problems on ``skeleton`` (see the module docstring).

    Args:
        skeleton: the skeleton to pose (``n`` joints).
        targets: end-effector name -> ``(B, 3)`` target points (or ``(3,)``, shared by all
            problems); for a target with an orientation, a tuple ``(positions (B, 3),
            orientations (B, 4)[, weight])`` or a ``fabrik3d.Target`` shared by all.
        positions: start poses, ``(B, n, 3)`` or ``(n, 3)`` for all (default: the rest pose).
        root_target: new root positions, ``(B, 3)`` or ``(3,)``, or a ``fabrik3d.Target`` for all.
        poles: effector name -> pole points, ``(B, 3)`` or ``(3,)``.
        weights: effector name -> weight > 0 for the sub-base centroids, as in ``solve``.
        tolerance: distance (scene units, > 0) at which a target counts as reached.
        max_iterations: upper bound on iterations per problem (>= 1).
        posing: chain reach, stiffness and swivel, as in ``solve`` (default the skeleton's own);
            with one (the humanoid preset's), each problem is solved by ``solve`` (the natural
            solve is not vectorised yet).
        relax_to: the poses stiff joints relax to, ``(B, n, 3)`` or ``(n, 3)``, as in ``solve``.
        rotations, relax_rotations: the frames of ``positions`` and ``relax_to``, ``(B, n, 4)`` or
            ``(n, 4)``, as in ``solve`` (each joint keeps its turn about its bone from them); with
            them, each problem is solved by ``solve`` (not vectorised yet).
        look_at: ``{head: points}``, the points the face turns toward, ``(B, 3)`` or ``(3,)``, as in
            ``solve`` (each problem then by ``solve``).
        backend: ``"numpy"`` (the default), ``"cpu"`` or ``"cuda"`` (numba, the extra ``fabrik3d[fast]``):
            where the plain solve and the frames run compiled, and with joint limits the constrained
            solve's passes and damped turns (on the CPU for both; docs/batch.md, "Compiled backends").
            The results are the same whatever the backend.

    Returns:
        ``BatchResult``; problem ``b`` equals ``solve`` on problem ``b`` (docs/batch.md).

    Raises:
        ValueError: naming the argument, for unknown names (listing the valid ones),
            wrong shapes, batch sizes that disagree between arguments, NaN or inf
            values, non-unit quaternions, weights <= 0, a non-positive tolerance
            or ``max_iterations < 1``, an unknown ``backend``. The caller's arrays are never modified.
        RuntimeError: ``backends.BackendError``, naming what a compiled backend lacks here
            (numba, a GPU).
    """
    backends.check_backend(backend)
    if check_skeleton(skeleton).riders:  # (the core solved, the fingers carried: fabrik3d.solver.riders)
        core_options = dict(root_target=root_target, poles=poles, weights=weights, tolerance=tolerance)
        core_options.update(max_iterations=max_iterations, posing=posing, look_at=look_at, backend=backend)
        return riding(solve_batch, skeleton, targets, positions, rotations, relax_to, relax_rotations, core_options)
    tol, max_it = checks.settings(tolerance, max_iterations)
    w = tg.effector_weights(skeleton, weights)
    points, turns = inputs.batch_targets(skeleton, targets)
    pole_points = inputs.named_points(skeleton, poles, "poles")
    n = len(skeleton)
    natural = skeleton.posing if posing is None else check_posing(posing, skeleton)
    start = None if positions is None else inputs.batch_array(positions, "positions", (n, 3))
    relax = None if relax_to is None else inputs.batch_array(relax_to, "relax_to", (n, 3))
    frames = None if rotations is None else inputs.batch_array(rotations, "rotations", (n, 4))
    relax_frames = None if relax_rotations is None else inputs.batch_array(relax_rotations, "relax_rotations", (n, 4))
    root_goal = root_target if isinstance(root_target, tg.Target) else None
    root = (
        None if root_target is None or root_goal is not None else inputs.batch_array(root_target, "root_target", (3,))
    )
    if root_goal is not None:
        root = root_goal.position[None]
    sizes = [(f"targets[{skeleton.names[e]!r}]", a) for e, a in points.items()]
    sizes += [(f"poles[{skeleton.names[e]!r}]", a) for e, a in pole_points.items()]
    sizes += [("positions", start), ("root_target", root), ("relax_to", relax)]
    look = None if look_at is None else _look_points(skeleton, look_at)
    sizes += [("rotations", frames), ("relax_rotations", relax_frames)]
    sizes += [(f"look_at[{skeleton.names[j]!r}]", a) for j, a in (look or {}).items()]
    bsize = inputs.batch_size(sizes)
    for e, (q, _, _) in turns.items():
        if q.shape[0] not in (1, bsize):
            raise ValueError(f"targets[{skeleton.names[e]!r}]: {q.shape[0]} orientations for {bsize} problems")
    if bsize == 0:
        names = skeleton.names
        return BatchResult(
            np.empty((0, n, 3)),
            np.empty((0, n, 4)),
            np.zeros(0, dtype=np.int64),
            {names[e]: np.empty(0) for e in points},
            np.zeros(0, dtype=bool),
            {names[e]: np.empty(0) for e in turns},
        )
    root_frame = None if root_goal is None else root_goal.orientation
    given = workers.Inputs(points, turns, start, root_goal, root, pole_points, relax, (frames, relax_frames, look))
    if natural or frames is not None or relax_frames is not None or look is not None:
        return BatchResult(*workers.one_by_one(skeleton, bsize, given, weights, tol, max_it, natural, backend))
    if not (skeleton.constraints or pole_points or turns or root_frame is not None):
        return _vectorised(skeleton, bsize, points, start, root, w, tol, max_it, backend)
    one_by_one = not points or not set(pole_points) <= set(points) or bsize < batch_limited.MIN_BATCH
    if one_by_one:
        return BatchResult(*workers.one_by_one(skeleton, bsize, given, weights, tol, max_it, natural, backend))
    return _limited(
        skeleton, bsize, points, turns, start, root_goal, root, pole_points, w, weights, tol, max_it, backend
    )


def _look_points(skeleton: Skeleton, value: Any) -> dict[int, np.ndarray]:
    """``look_at`` checked: ``{head index: (B|1, 3) points}`` (``solve``'s, per problem)."""
    head, points = look_goal(skeleton, value, lambda v, name: inputs.batch_array(v, name, (3,)))
    return {skeleton.index(head): points}


def _vectorised(
    skeleton: Skeleton,
    bsize: int,
    points: dict[int, np.ndarray],
    start: np.ndarray | None,
    root: np.ndarray | None,
    weights: dict[int, float] | None,
    tol: float,
    max_it: int,
    backend: str,
) -> BatchResult:
    """The plain solve, vectorised over the batch (its chain or tree solve compiled on the compiled ``backend``s);
    positions are filled as ``(n, 3, B)`` views of the result."""
    r = rig(skeleton)
    n = len(skeleton)
    pts = skeleton.rest_positions[None] if start is None else start
    first = batch_tree.start_pose(r, skeleton.rest_positions, pts, root)  # (n, 3, 1 or B)
    out = np.empty((bsize, n, 3))
    pose = out.transpose(1, 2, 0)  # (n, 3, B): joint, coordinate, problem
    goal = {e: np.broadcast_to(a, (bsize, 3)) for e, a in points.items()}
    chains = batch_chain.solve_chains if backend == "numpy" else functools.partial(backends.solve_chains, backend)
    trees = batch_tree.solve_tree if backend == "numpy" else functools.partial(backends.solve_trees, backend)
    kept: dict[str, Any] = {}  # (a compiled solve of every joint: its poses, on a GPU left there for the frames)
    keep = {} if backend == "numpy" else {"kept": kept}
    if not goal:
        pose[...] = first
        active, iterations = [False] * n, np.zeros(bsize, dtype=np.int64)
    elif len(goal) == 1:
        ((e, t),) = goal.items()
        path = list(skeleton.path_to_root(e))
        lengths = [r.lengths[j] for j in path[1:]]
        if path == list(range(n)):  # a plain chain: its results are the positions
            iterations = chains(first, lengths, np.ascontiguousarray(t.T), tol, max_it, out, **keep)
        else:
            pose[...] = first
            res = np.empty((bsize, len(path), 3))
            iterations = chains(first[path], lengths, np.ascontiguousarray(t.T), tol, max_it, res)
            out[:, path] = res
        on_path = set(path)
        active = [j in on_path for j in range(n)]
    else:
        pose[...] = first
        active = [False] * n
        for e in goal:
            for j in skeleton.path_to_root(e):
                active[j] = True
        iterations = trees(skeleton, r, first, goal, weights, active, tol, max_it, out, **keep)
    if backend != "numpy" and all(active):  # (nothing carried, no start rotation kept: compiled)
        rotations = backends.frames(backend, r, out, kept)
    else:
        frames = batch_frames.finish(skeleton, r, pose, first, active)
        rotations = np.empty((bsize, n, 4))
        for j, frame in enumerate(frames):
            for k in range(4):
                rotations[:, j, k] = frame[k]
    return BatchResult(out, rotations, iterations, *_errors(skeleton, out, goal, tol))


def _limited(
    skeleton: Skeleton,
    bsize: int,
    points: dict[int, np.ndarray],
    turns: dict[int, inputs.Turn],
    start: np.ndarray | None,
    root_goal: tg.Target | None,
    root: np.ndarray | None,
    poles: dict[int, np.ndarray],
    w: dict[int, float] | None,
    weights: Mapping[str, float] | None,
    tol: float,
    max_it: int,
    backend: str,
) -> BatchResult:
    """The constrained solve (joint limits, orientation targets, a root orientation, poles on
    targeted effectors): ``fabrik3d.batch.constrained.solve`` (its reaching passes compiled on a compiled
    ``backend``), then ``solve`` for the problems it hands back."""
    r = rig(skeleton)
    first = batch_tree.start_pose(
        r, skeleton.rest_positions, skeleton.rest_positions[None] if start is None else start, root
    )
    goals = {e: tg.Goal(tuple(p[0].tolist()), None, 1.0) for e, p in points.items()}
    targets = {e: np.broadcast_to(p, (bsize, 3)) for e, p in points.items()}
    root_frame = None if root_goal is None else root_goal.orientation
    out, rotations, iterations, scalar = batch_limited.solve(
        r, goals, w, targets, first, tol, max_it, start is None, inputs.unit_turns(turns), root_frame, poles, backend
    )
    if scalar.any():
        idx = np.flatnonzero(scalar)

        def some(a: Any) -> Any:
            return a if a is None or a.shape[0] == 1 else a[idx]

        subset = workers.Inputs(
            {e: some(p) for e, p in points.items()},
            {e: (some(q), weight, source) for e, (q, weight, source) in turns.items()},
            some(start),
            root_goal,
            some(root),
            {e: some(p) for e, p in poles.items()},
        )
        posed = workers.one_by_one(skeleton, len(idx), subset, weights, tol, max_it, Posing(), backend)
        out[idx], rotations[idx], iterations[idx] = posed[:3]
    turned = {}
    for e, (q, _) in inputs.unit_turns(turns).items():
        a = rotations[:, e]
        d = np.abs(a[:, 0] * q[:, 0] + a[:, 1] * q[:, 1] + a[:, 2] * q[:, 2] + a[:, 3] * q[:, 3])
        turned[skeleton.names[e]] = np.degrees(2.0 * np.arccos(np.minimum(1.0, d)))  # (tg.degrees_between)
    return BatchResult(out, rotations, iterations, *_errors(skeleton, out, targets, tol), turned)


def _errors(
    skeleton: Skeleton, out: np.ndarray, targets: dict[int, np.ndarray], tol: float
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per targeted effector, the ``(B,)`` distances of the poses ``out`` ``(B, n, 3)`` to its
    ``(B, 3)`` targets, and where every one is within ``tol``."""
    errors = {}
    converged = np.ones(len(out), dtype=bool)
    for e, t in targets.items():
        d = out[:, e] - t
        errors[skeleton.names[e]] = v = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
        converged &= v <= tol
    return errors, converged
