"""Baking an animation: the solver poses every frame of a ``fabrik3d.model.keys.Animation``.

``bake`` solves the goals the keys give at each frame of a range and returns the poses as a
``Take`` (``fabrik3d.io.take``; ``fabrik3d.io.gltf.export_animation`` writes it to glTF with every
frame keyed). ``method="warm"`` solves the frames in order, each from the pose of the frame
before (so the poses run on continuously, as a drag does; a frame whose goals are the frame
before's, a held key, keeps its pose); ``method="batch"`` solves all
frames at once with ``solve_batch``, each from the same start pose.

Where keys hold poses (``Key.pose``: what the user saw, turned joints and all), a frame on such a
key is that pose as it was keyed, and every other frame is solved from the keyed poses' curve
there (``Animation.poses``), relaxing toward it, with its frames (turns about the bones kept):
the keys hold what the user saw, and the frames between follow them. Such keys bake ``"warm"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.batch.solve import solve_batch
from fabrik3d.io.take import Take
from fabrik3d.model.key_poses import KeyPose
from fabrik3d.model.keys import Animation, Goals, frame_number
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.rig import check_skeleton
from fabrik3d.solver.tree import SolveResult, solve

METHODS = ("warm", "batch")


def solve_goals(
    skeleton: Skeleton,
    goals: Goals,
    *,
    positions: np.ndarray | None = None,
    weights: Any = None,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
    posing: Posing | None = None,
    rotations: np.ndarray | None = None,
    relax: KeyPose | None = None,
) -> SolveResult:
    """``solve`` on the goals of one frame (``Animation.goals_at``), from ``positions`` (``(n, 3)``,
    default the rest pose; its frames ``rotations``, ``(n, 4)``, if given), relaxing toward the pose
    ``relax`` if given."""
    return solve(
        skeleton,
        goals.targets,
        positions=positions,
        rotations=rotations,
        relax_to=None if relax is None else relax.positions,
        relax_rotations=None if relax is None else relax.rotations,
        root_target=goals.root_target,
        poles=goals.poles,
        weights=weights,
        tolerance=tolerance,
        max_iterations=max_iterations,
        posing=posing,
    )


def frame_range(animation: Animation, frames: Any = None) -> range:
    """The frames to bake: ``frames`` as ``(first, last)`` inclusive, or the animation's range."""
    if frames is None:
        return animation.frames
    try:
        first, last = frames
    except (TypeError, ValueError):
        raise ValueError(f"frames: expected (first, last), got {frames!r}") from None
    first, last = frame_number(first, "frames[0]"), frame_number(last, "frames[1]")
    if last < first:
        raise ValueError(f"frames: the last frame {last} is before the first {first}")
    return range(first, last + 1)


def bake(
    skeleton: Skeleton,
    animation: Animation,
    *,
    frames: Any = None,
    method: str = "warm",
    positions: np.ndarray | None = None,
    weights: Any = None,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
    posing: Posing | None = None,
    on_frame: Callable[[int, SolveResult], None] | None = None,
) -> Take:
    """The poses of ``animation`` over a range of frames, as a ``Take``.

    Args:
        skeleton: the skeleton (``n`` joints).
        animation: the keys; every name they hold must be an end effector of ``skeleton``.
        frames: ``(first, last)`` inclusive (default the animation's range).
        method: ``"warm"`` (in frame order, each frame from the one before) or ``"batch"``
            (``solve_batch`` over all frames, each from ``positions``).
        positions: ``(n, 3)`` the pose the first frame (``"warm"``) or every frame (``"batch"``)
            starts from (default the rest pose).
        weights, tolerance, max_iterations, posing: as in ``solve``.
        on_frame: called with each frame number and its ``SolveResult`` (``"warm"`` only).

    Returns:
        A take of ``last - first + 1`` frames; frame ``f`` at ``(f - first) / fps`` seconds.

    Raises:
        ValueError: for names that are not end effectors, a bad range or method, or the
            solver's own checks. Nothing is returned half-baked.
    """
    check_skeleton(skeleton)
    if not isinstance(animation, Animation):
        raise TypeError(f"animation: expected an Animation, got {type(animation).__name__}")
    animation.check(skeleton)
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")
    span = frame_range(animation, frames)
    goals = animation.goals(np.arange(span.start, span.stop))
    keyed = animation.poses(skeleton, np.arange(span.start, span.stop))
    times = (np.arange(len(span), dtype=float)) / animation.fps
    settings = {"weights": weights, "tolerance": tolerance, "max_iterations": max_iterations, "posing": posing}
    if method == "batch":
        if keyed[0] is not None:
            raise ValueError("method='batch': keys that hold a pose (turned joints) bake 'warm'")
        out = solve_batch(skeleton, positions=positions, **_batch_goals(goals), **settings)  # type: ignore[arg-type]
        return Take(skeleton, times, out.positions, out.rotations)
    poses, frames_out = [], []
    start, result, before = positions, None, None
    for f, g, ref in zip(span, goals, keyed):
        key = animation.key_at(f)
        if key is not None and key.pose is not None:  # (the pose the user keyed, as it was)
            result = _keyed_result(skeleton, g, key.pose, tolerance)
        elif ref is not None:
            result = solve_goals(skeleton, g, positions=ref.positions, rotations=ref.rotations, relax=ref, **settings)  # type: ignore[arg-type]
        elif result is None or not _same_goals(g, before):  # (a held pose is not solved again)
            result = solve_goals(skeleton, g, positions=start, **settings)  # type: ignore[arg-type]
        before = g
        poses.append(result.positions)
        frames_out.append(result.rotations)
        start = result.positions
        if on_frame is not None:
            on_frame(f, result)
    return Take(skeleton, times, np.array(poses), np.array(frames_out))


def _keyed_result(skeleton: Skeleton, goals: Goals, pose: KeyPose, tolerance: float) -> SolveResult:
    """The ``SolveResult`` of a keyed pose (no solve: the user set it), measured against the goals."""
    errors = {
        k: float(np.linalg.norm(pose.positions[skeleton.index(k)] - t.position)) for k, t in goals.targets.items()
    }
    return SolveResult(
        pose.positions.copy(), pose.rotations.copy(), 0, errors, all(e <= tolerance for e in errors.values())
    )


def _same_goals(a: Goals, b: Goals | None) -> bool:
    """Whether two frames' goals are the same (a held key: every curve flat)."""
    if b is None or a.targets.keys() != b.targets.keys() or a.poles.keys() != b.poles.keys():
        return False
    same = all(_same_target(t, b.targets[k]) for k, t in a.targets.items())
    same = same and all(np.array_equal(p, b.poles[k]) for k, p in a.poles.items())
    if (a.root_target is None) != (b.root_target is None):
        return False
    return same and (a.root_target is None or _same_target(a.root_target, b.root_target))  # type: ignore[arg-type]


def _same_target(a: Any, b: Any) -> bool:
    if not np.array_equal(a.position, b.position) or a.weight != b.weight:
        return False
    if a.orientation is None or b.orientation is None:
        return a.orientation is None and b.orientation is None
    return bool(np.array_equal(a.orientation, b.orientation))


def _batch_goals(goals: list[Goals]) -> dict[str, Any]:
    """``solve_batch``'s ``targets``, ``root_target`` and ``poles`` for the frames' goals (every
    frame holds the same names: each curve holds its value outside its keys)."""
    first = goals[0]
    targets: dict[str, Any] = {}
    for name, t in first.targets.items():
        points = np.array([g.targets[name].position for g in goals])
        if t.orientation is None:
            targets[name] = points
        else:
            shares = {g.targets[name].weight for g in goals}
            if len(shares) > 1:
                raise ValueError(f"method='batch': the orientation weight of {name!r} changes; bake 'warm'")
            targets[name] = (points, np.array([g.targets[name].orientation for g in goals]), shares.pop())
    root = None
    if first.root_target is not None:
        if first.root_target.orientation is not None:
            raise ValueError("method='batch': a root target with an orientation is not batched; bake 'warm'")
        root = np.array([g.root_target.position for g in goals])  # type: ignore[union-attr]
    poles = {name: np.array([g.poles[name] for g in goals]) for name in first.poles} or None
    return {"targets": targets, "root_target": root, "poles": poles}
