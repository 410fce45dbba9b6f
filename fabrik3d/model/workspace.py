"""The space a skeleton works in: its length scale and how far from the origin its targets and floor
may lie (scene units).

``skeleton_size`` is the diagonal of the rest pose's bounding box; a front end refuses targets, and
every caller a floor, farther than ``WORKSPACE_SIZES`` of those from the origin (``workspace``): a floor
a million units under a two-metre body lifts every joint that far and leaves nothing to drag.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model.skeleton import Skeleton

# Targets and floors farther than this many skeleton sizes from the origin are refused.
WORKSPACE_SIZES = 100.0


def skeleton_size(skeleton: Skeleton) -> float:
    """A length scale of the skeleton: the diagonal of its rest pose's bounding box (scene units, > 0)."""
    rest = skeleton.rest_positions
    diagonal = float(np.linalg.norm(rest.max(axis=0) - rest.min(axis=0)))
    return max(diagonal, float(skeleton.bone_lengths.max()), 1e-6)


def workspace(skeleton: Skeleton) -> float:
    """How far from the origin (scene units, in each coordinate) the skeleton's targets and floor may lie."""
    return WORKSPACE_SIZES * skeleton_size(skeleton)


def check_floor(
    value: Any, skeleton: Skeleton, name: str = "floor", expected: str = "a finite height or None"
) -> float | None:
    """A floor's height (scene units) or None: a finite number within ``workspace(skeleton)`` of 0;
    ``ValueError`` naming ``name`` (and what was ``expected``) otherwise."""
    if value is None:
        return None
    height = checks.number(value, name, expected)
    limit = workspace(skeleton)
    if abs(height) > limit:
        raise ValueError(
            f"{name}: must be within ±{limit:.4g} scene units ({WORKSPACE_SIZES:g} skeleton sizes), got {height:g}"
        )
    return height
