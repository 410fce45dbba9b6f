"""Old import path, kept working: ``fabrik3d.constraints`` is now ``fabrik3d.model.constraints`` (the
declarations) and ``fabrik3d.solver.limits`` (the projections)."""

from fabrik3d.model.constraints import (
    Cone,
    Constraint,
    EllipticalCone,
    Hinge,
    JointLimitError,
    Rigid,
    Twist,
    check_axes,
    check_constraints,
    constraint_from_dict,
    parent_axis,
)
from fabrik3d.solver.limits import (
    ELLIPSE_STEPS,
    JointLimits,
    SwingLimit,
    bind,
    clamp_angle,
    ellipse_root,
    nearest_on_ellipse,
)

__all__ = [
    "ELLIPSE_STEPS",
    "Cone",
    "Constraint",
    "EllipticalCone",
    "Hinge",
    "JointLimitError",
    "JointLimits",
    "Rigid",
    "SwingLimit",
    "Twist",
    "bind",
    "check_axes",
    "check_constraints",
    "clamp_angle",
    "constraint_from_dict",
    "ellipse_root",
    "nearest_on_ellipse",
    "parent_axis",
]
