"""What ``fabrik3d.solve`` returns: the pose, its frames and how near each target it came."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import targets as tg
from fabrik3d.model.skeleton import Skeleton


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


def result(
    skeleton: Skeleton,
    goals: dict[int, tg.Goal],
    pose: list[rot.Vec],
    frames: list[rot.Quat],
    iterations: int,
    tolerance: float,
) -> SolveResult:
    """The ``SolveResult`` of a solved pose (lists of tuples) for the goals (by effector index)."""
    names = skeleton.names
    errors = {names[e]: math.dist(pose[e], g.position) for e, g in goals.items()}
    turned = {names[e]: tg.degrees_between(frames[e], g.orientation) for e, g in goals.items() if g.orientation}
    return SolveResult(
        positions=np.fromiter(chain.from_iterable(pose), float, 3 * len(pose)).reshape(len(pose), 3),
        rotations=np.fromiter(chain.from_iterable(frames), float, 4 * len(frames)).reshape(len(frames), 4),
        iterations=iterations,
        errors=errors,
        converged=all(v <= tolerance for v in errors.values()),
        orientation_errors=turned,
    )
