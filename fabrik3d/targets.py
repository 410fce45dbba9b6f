"""Old import path, kept working: ``fabrik3d.targets`` is now ``fabrik3d.model.targets``."""

from fabrik3d.model.targets import (
    Goal,
    Target,
    by_effector,
    degrees_between,
    effector_weights,
    goal,
    goals,
    pole_points,
    unit_quaternion,
)

__all__ = [
    "Goal",
    "Target",
    "by_effector",
    "degrees_between",
    "effector_weights",
    "goal",
    "goals",
    "pole_points",
    "unit_quaternion",
]
