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

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.batch import backends
from fabrik3d.batch.solve import solve_batch
from fabrik3d.io.take import Take
from fabrik3d.model.key_poses import KeyPose, PoseCurve
from fabrik3d.model.keys import Animation, Goals, frame_number
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.rig import check_skeleton
from fabrik3d.solver.tree import SolveResult, solve

METHODS = ("warm", "batch")
# The most frames one bake solves (docs/animation.md, "Limits"): 55 minutes at 30 frames per second.
MAX_BAKE_FRAMES = 100_000
# Frames whose goals are worked out at once: what a bake holds besides its output is bounded by this.
CHUNK = 1024


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
    ``relax`` if given. A bake is not a drag: its frames' searches are unbounded (``solve``'s
    ``effort``)."""
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
        effort=math.inf,
    )


def frame_range(animation: Animation, frames: Any = None) -> range:
    """The frames to bake: ``frames`` as ``(first, last)`` inclusive, or the animation's range; at
    most ``MAX_BAKE_FRAMES`` of them (``ValueError`` else, before any work)."""
    if frames is None:
        span, where = animation.frames, "animation: frames"
    else:
        try:
            first, last = frames
        except (TypeError, ValueError):
            raise ValueError(f"frames: expected (first, last), got {str(frames)[:80]!r}") from None
        first, last = frame_number(first, "frames[0]"), frame_number(last, "frames[1]")
        if last < first:
            raise ValueError(f"frames: the last frame {last} is before the first {first}")
        span, where = range(first, last + 1), "frames"
    if len(span) > MAX_BAKE_FRAMES:
        raise ValueError(
            f"{where} {span.start}..{span.stop - 1}: {len(span):,} frames, more than the {MAX_BAKE_FRAMES:,} "
            "baked in one go; bake the range in parts"
        )
    return span


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
    backend: str = "numpy",
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
        backend: ``solve_batch``'s backend for ``"batch"`` (``"numpy"``, ``"cpu"`` or ``"cuda"``: the
            compiled ones need the extra ``fabrik3d[fast]``; they solve what they compile, numpy the rest,
            with the same results); ``"warm"`` solves on numpy only.

    Returns:
        A take of ``last - first + 1`` frames; frame ``f`` at ``(f - first) / fps`` seconds.

    Raises:
        ValueError: for names that are not end effectors, a bad range or method, or the
            solver's own checks. Nothing is returned half-baked.
    """
    span, parts = bake_chunks(
        skeleton,
        animation,
        frames=frames,
        method=method,
        positions=positions,
        weights=weights,
        tolerance=tolerance,
        max_iterations=max_iterations,
        posing=posing,
        on_frame=on_frame,
        backend=backend,
    )
    chunks = list(parts)
    times = (np.arange(len(span), dtype=float)) / animation.fps
    return Take(skeleton, times, np.concatenate([p for p, _ in chunks]), np.concatenate([r for _, r in chunks]))


def check_backend(method: str, backend: str) -> None:
    """``backend`` checked (``backends.check_backend``: known, and able to run here) for ``method``: only
    ``"batch"`` solves on a compiled one."""
    backends.check_backend(backend)
    if backend != "numpy" and method != "batch":
        raise ValueError(f"backend={backend!r} solves method='batch'; method={method!r} solves frame by frame on numpy")


def bake_chunks(
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
    chunk: int | None = None,
    backend: str = "numpy",
) -> tuple[range, Iterator[tuple[np.ndarray, np.ndarray]]]:
    """``bake``'s poses, ``chunk`` frames at a time (default ``CHUNK``): ``(span, chunks)``, the frames
    baked and an iterator of ``(positions (c, n, 3), rotations (c, n, 4))`` in frame order. Everything is
    checked here, before the first frame is solved (``bake``'s errors); the iterator solves as it is
    read, so a writer that streams the chunks (``fabrik3d.io.bake_file``) holds no more than one chunk."""
    check_skeleton(skeleton)
    if not isinstance(animation, Animation):
        raise TypeError(f"animation: expected an Animation, got {type(animation).__name__}")
    animation.check(skeleton)
    if method not in METHODS:
        raise ValueError(f"method: expected one of {checks.names_list(METHODS)}, got {checks.quoted(str(method))}")
    check_backend(method, backend)
    span = frame_range(animation, frames)
    chunk = CHUNK if chunk is None else max(1, int(chunk))
    settings = {"weights": weights, "tolerance": tolerance, "max_iterations": max_iterations, "posing": posing}
    if method == "batch":
        if any(k.pose is not None for k in animation.keys):
            raise ValueError("method='batch': keys that hold a pose (turned joints) bake 'warm'")
        return span, _batch_chunks(skeleton, animation, span, chunk, positions, {**settings, "backend": backend})
    return span, _warm_chunks(skeleton, animation, span, chunk, positions, settings, on_frame)


def _warm_chunks(
    skeleton: Skeleton,
    animation: Animation,
    span: range,
    chunk: int,
    positions: np.ndarray | None,
    settings: dict[str, Any],
    on_frame: Callable[[int, SolveResult], None] | None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    curve = PoseCurve(skeleton, animation.keys, animation.interpolation)
    start, result, before, n = positions, None, None, len(skeleton)
    tolerance = settings["tolerance"]
    for lo in range(span.start, span.stop, chunk):
        part = range(lo, min(lo + chunk, span.stop))
        goals = animation.goals(np.arange(part.start, part.stop))
        keyed = curve.at(np.arange(part.start, part.stop))
        out_p, out_r = np.empty((len(part), n, 3)), np.empty((len(part), n, 4))
        for i, (f, g, ref) in enumerate(zip(part, goals, keyed)):
            key = animation.key_at(f)
            if key is not None and key.pose is not None:  # (the pose the user keyed, as it was)
                result = _keyed_result(skeleton, g, key.pose, tolerance)
            elif ref is not None:
                result = solve_goals(
                    skeleton, g, positions=ref.positions, rotations=ref.rotations, relax=ref, **settings
                )
            elif result is None or not _same_goals(g, before):  # (a held pose is not solved again)
                result = solve_goals(skeleton, g, positions=start, **settings)
            before = g
            out_p[i], out_r[i] = result.positions, result.rotations
            start = result.positions
            if on_frame is not None:
                on_frame(f, result)
        yield out_p, out_r


def _batch_chunks(
    skeleton: Skeleton,
    animation: Animation,
    span: range,
    chunk: int,
    positions: np.ndarray | None,
    settings: dict[str, Any],
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    shares: dict[str, float] = {}  # (each orientation weight, the same over the whole range)
    for lo in range(span.start, span.stop, chunk):
        goals = animation.goals(np.arange(lo, min(lo + chunk, span.stop)))
        out = solve_batch(skeleton, positions=positions, **_batch_goals(goals, shares), **settings)
        yield out.positions, out.rotations


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


def _batch_goals(goals: list[Goals], shares: dict[str, float]) -> dict[str, Any]:
    """``solve_batch``'s ``targets``, ``root_target`` and ``poles`` for the frames' goals (every
    frame holds the same names: each curve holds its value outside its keys); ``shares``: the
    orientation weights of the chunks before, by name."""
    first = goals[0]
    targets: dict[str, Any] = {}
    for name, t in first.targets.items():
        points = np.array([g.targets[name].position for g in goals])
        if t.orientation is None:
            targets[name] = points
        else:
            share = {g.targets[name].weight for g in goals} | ({shares[name]} if name in shares else set())
            if len(share) > 1:
                raise ValueError(f"method='batch': the orientation weight of {name!r} changes; bake 'warm'")
            shares[name] = share.pop()
            targets[name] = (points, np.array([g.targets[name].orientation for g in goals]), shares[name])
    root = None
    if first.root_target is not None:
        if first.root_target.orientation is not None:
            raise ValueError("method='batch': a root target with an orientation is not batched; bake 'warm'")
        root = np.array([g.root_target.position for g in goals])  # type: ignore[union-attr]
    poles = {name: np.array([g.poles[name] for g in goals]) for name in first.poles} or None
    return {"targets": targets, "root_target": root, "poles": poles}
