"""A stage's pose: its figures solved, contacts kept (``fabrik3d.solver.together``), and its props placed.

``solve_stage`` solves the figures of a ``Stage`` (``fabrik3d.io.stage``): all of them, or only those a
change touches (``changed``: the figures edited, and every figure linked to them by contacts). Each
figure solves with its own scene's targets and settings (``Scene.solve``), from its previous pose, in
its own coordinates; ``StagePose`` holds the poses and gives them, and the props, in the world.
Shapes: positions ``(n, 3)`` metres, frames ``(n, 4)`` quaternions ``(x, y, z, w)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fabrik3d.io.stage import Figure, Stage
from fabrik3d.model.placement import Transform, frame_transform
from fabrik3d.model.props import Prop
from fabrik3d.solver import together
from fabrik3d.solver.result import SolveResult

# A figure's own solve: (figure, goals added to its targets, start pose or None) -> its pose.
FigureSolve = Callable[[Figure, dict[str, np.ndarray], "SolveResult | None"], SolveResult]


def scene_solve(figure: Figure, goals: dict[str, np.ndarray], start: SolveResult | None) -> SolveResult:
    """A figure's solve with its scene's targets and settings plus ``goals``, from ``start`` (default rest)."""
    return figure.scene.solve(None if start is None else start.positions, goals)


@dataclass
class StagePose:
    """The figures' poses (each in its own coordinates, in the stage's order) and each contact's gap (metres)."""

    stage: Stage
    poses: list[SolveResult]
    gaps: dict[int, float]

    def world(self, figure: int) -> tuple[np.ndarray, np.ndarray]:
        """Figure ``figure``'s joints in the world: ``(positions (n, 3), frames (n, 4))``."""
        f, pose = self.stage.figures[figure], self.poses[figure]
        return f.placement.to_world(pose.positions), f.placement.frames_to_world(pose.rotations)

    def prop_transform(self, prop: Prop | str) -> Transform:
        """A prop's frame in the world (a held one's through its joint's pose)."""
        return prop_transform(self.stage, self.poses, prop)


def prop_transform(stage: Stage, poses: Sequence[SolveResult], prop: Prop | str) -> Transform:
    """A prop's frame in the world: its own, or, held, its joint's world frame then its transform."""
    p = stage.prop(prop) if isinstance(prop, str) else prop
    if p.parent is None:
        return p.transform
    i = figure_index(stage, p.parent.figure)
    f = stage.figures[i]
    j = f.scene.skeleton.names.index(p.parent.joint)
    joint = frame_transform(poses[i].positions[j], poses[i].rotations[j])
    return f.placement.transform.then(joint).then(p.transform)


def figure_index(stage: Stage, name: str) -> int:
    """The index of the figure named ``name`` (``ValueError`` as ``Stage.figure``)."""
    figure = stage.figure(name)
    return next(i for i, f in enumerate(stage.figures) if f is figure)


def links(stage: Stage) -> list[together.Link]:
    """The stage's contacts as links between figure indices: a prop's point becomes its holder's joint's
    point, or a fixed world point; two figures' effectors meet halfway unless the anchor's figure is
    locked."""
    out = []
    for c in stage.contacts:
        a = figure_index(stage, c.figure)
        if c.on_figure is not None:
            b = figure_index(stage, c.on_figure)
            other = stage.figures[b]
            mutual = b != a and not other.locked and c.joint in other.scene.skeleton.end_effectors
            out.append(together.Link(a, c.effector, b, c.joint, c.offset, None, mutual))
            continue
        prop = stage.prop(c.on_prop)  # type: ignore[arg-type]
        if prop.parent is None:
            out.append(together.Link(a, c.effector, point=prop.transform.apply(c.offset)))
        else:
            b = figure_index(stage, prop.parent.figure)
            out.append(together.Link(a, c.effector, b, prop.parent.joint, prop.transform.apply(c.offset)))
    return out


def members(stage: Stage, solve: FigureSolve = scene_solve) -> list[together.Member]:
    """The stage's figures as ``together.Member``s solving with ``solve``."""
    return [
        together.Member(f.scene.skeleton.names, f.placement, lambda goals, start, f=f: solve(f, goals, start))
        for f in stage.figures
    ]


def solve_stage(
    stage: Stage,
    poses: Sequence[SolveResult | None] | None = None,
    changed: Sequence[str] | None = None,
    solve: FigureSolve = scene_solve,
) -> StagePose:
    """Solve ``stage``'s figures with their contacts kept.

    Args:
        stage: the stage.
        poses: each figure's current pose (its start; None: its rest pose, solved); default none.
        changed: the names of the figures edited: those and the figures linked to them are solved, the
            others keep ``poses``; default every figure.
        solve: each figure's own solve (default its scene's targets and settings, ``scene_solve``).

    Returns:
        ``StagePose``: every figure's pose, and the gap of each contact solved (by its index in ``stage.contacts``).
    """
    n = len(stage.figures)
    starts = [None] * n if poses is None else list(poses)
    if len(starts) != n:
        raise ValueError(f"poses: expected {n} (one per figure), got {len(starts)}")
    every = links(stage)
    if changed is None:
        solving = list(range(n))
    else:
        chosen = {figure_index(stage, name) for name in changed}
        solving = sorted({i for g in together.groups(n, every) if chosen & set(g) for i in g})
    # (a figure with no pose yet starts from its own solve)
    current = [s if s is not None else solve(stage.figures[i], {}, None) for i, s in enumerate(starts)]
    out = together.solve_together(members(stage, solve), every, current, solving)
    used = [k for k, link in enumerate(every) if link.a in set(solving)]
    return StagePose(stage, out.poses, dict(zip(used, out.gaps)))
