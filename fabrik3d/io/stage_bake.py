"""Baking a stage: every figure's keys solved frame by frame, with the contacts kept in every frame.

``bake_stage`` solves, for each frame of the range, every figure's goals at that frame (its own
``Animation``; a figure without keys holds its scene's targets) together (``fabrik3d.io.stage_pose``:
contacts between figures are kept as a drag keeps them), each frame from the frame before: the
``"warm"`` bake of ``fabrik3d.io.bake`` for several figures. It returns one ``Take`` per figure, all at
the same times; ``fabrik3d.io.stage_gltf.export_stage_animation`` writes them to one file, and
``prop_track`` gives a held prop's path. Positions in metres, frames as quaternions ``(x, y, z, w)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from fabrik3d.io.bake import frame_range, solve_goals
from fabrik3d.io.stage import Figure, Stage
from fabrik3d.io.stage_gltf import export_stage_animation
from fabrik3d.io.stage_pose import StagePose, prop_transform, solve_stage
from fabrik3d.io.take import Take
from fabrik3d.model.keys import Animation, Goals
from fabrik3d.model.props import Prop
from fabrik3d.solver.result import SolveResult


def stage_animation(stage: Stage) -> Animation:
    """The range and rate a stage bakes at: its animated figures' ranges joined, at their rate.

    Raises:
        ValueError: when no figure has keys, or two figures' keys run at different rates.
    """
    animated = [f for f in stage.figures if f.scene.animation is not None and f.scene.animation.keys]
    if not animated:
        raise ValueError("animation: no figure of the stage has keys to bake")
    rates = {f.scene.animation.fps for f in animated}  # type: ignore[union-attr]
    if len(rates) > 1:
        raise ValueError(f"animation: the figures' keys run at different rates ({sorted(rates)} fps); give them one")
    first = animated[0].scene.animation
    start = min(f.scene.animation.start for f in animated)  # type: ignore[union-attr]
    end = max(f.scene.animation.last for f in animated)  # type: ignore[union-attr]
    return replace(first, start=start, end=end)  # type: ignore[type-var]


def bake_stage(
    stage: Stage,
    *,
    frames: Any = None,
    fps: Any = None,
    on_frame: Callable[[int, StagePose], None] | None = None,
) -> list[Take]:
    """The poses of every figure of ``stage`` over a range of frames, one ``Take`` per figure.

    Args:
        stage: the stage; figures with keys follow them, the others hold their scene's targets.
        frames: ``(first, last)`` inclusive (default the figures' ranges joined: ``stage_animation``).
        fps: the rate (default the keys').
        on_frame: called with each frame number and the stage's pose there.

    Raises:
        ValueError: as ``stage_animation`` and ``fabrik3d.io.bake.frame_range``; nothing is returned half-baked.
    """
    animation = stage_animation(stage)
    if fps is not None:
        animation = replace(animation, fps=fps)
    span = frame_range(animation, frames)
    goals: dict[str, Goals] = {}

    def frame_solve(figure: Figure, extra: dict[str, np.ndarray], start: SolveResult | None) -> SolveResult:
        g, scene = goals[figure.name], figure.scene
        return solve_goals(
            scene.skeleton,
            g._replace(targets={**g.targets, **extra}) if extra else g,
            positions=None if start is None else start.positions,
            rotations=None if start is None else start.rotations,
            weights=scene.weights,
            tolerance=scene.tolerance,
            max_iterations=scene.max_iterations,
        )

    poses: list[SolveResult | None] = [None] * len(stage.figures)
    positions: list[list[np.ndarray]] = [[] for _ in stage.figures]
    rotations: list[list[np.ndarray]] = [[] for _ in stage.figures]
    for frame in span:
        for f in stage.figures:
            keys = f.scene.animation
            goals[f.name] = keys.goals_at(frame) if keys is not None and keys.keys else _held(f)
        pose = solve_stage(stage, poses, solve=frame_solve)
        poses = list(pose.poses)
        for i, p in enumerate(pose.poses):
            positions[i].append(p.positions)
            rotations[i].append(p.rotations)
        if on_frame is not None:
            on_frame(frame, pose)
    times = np.arange(len(span), dtype=float) / animation.fps
    return [Take(f.scene.skeleton, times, np.array(positions[i]), np.array(rotations[i]))
            for i, f in enumerate(stage.figures)]  # fmt: skip


def _held(figure: Figure) -> Goals:
    """The goals of a figure without keys: its scene's targets and root."""
    return Goals(dict(figure.scene.targets), figure.scene.root_target, {})


def prop_track(stage: Stage, takes: list[Take], prop: Prop | str) -> tuple[np.ndarray, np.ndarray]:
    """A prop's world frame on every frame of ``takes``: ``(positions (m, 3), rotations (m, 4))``."""
    out = [prop_transform(stage, [_Frame(t, k) for t in takes], prop) for k in range(len(takes[0].times))]
    return np.array([t.position for t in out]), np.array([t.rotation for t in out])


class _Frame:
    """Frame ``k`` of a take, as a pose (``.positions``, ``.rotations``)."""

    def __init__(self, take: Take, k: int) -> None:
        self.positions, self.rotations = take.positions[k], take.rotations[k]


def bake_stage_file(
    stage: Stage, output: str | os.PathLike[str], frames: Any = None, fps: Any = None, kind: str | None = None
) -> list[Take]:
    """``bake_stage`` written to a ``.glb`` or ``.gltf`` file (``export_stage_animation``; ``kind`` as there),
    atomically."""
    suffix = kind if kind is not None else os.path.splitext(str(output))[1].lower()
    if suffix not in (".glb", ".gltf"):
        raise ValueError(f"{output}: a stage of several figures bakes into a .glb or .gltf file, not a take's .json")
    takes = bake_stage(stage, frames=frames, fps=fps)
    export_stage_animation(stage, takes, output, kind=kind)
    return takes
