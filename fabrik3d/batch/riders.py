"""Riders through a batch solve: the twin of ``fabrik3d.solver.riders`` (the same ``carry``, on
``(B, n, ·)`` arrays)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.batch import inputs
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.riders import carried, fitted_frames


def riding(
    solve_batch: Callable[..., Any],
    skeleton: Skeleton,
    targets: Any,
    positions: Any,
    rotations: Any,
    relax_to: Any,
    relax_rotations: Any,
    options: Any,
) -> Any:
    """``solve_batch`` (given, ``fabrik3d.batch.solve``) on a skeleton with riders: its core solved, the
    riders carried (``fabrik3d.solver.riders.carried``); the arguments as ``solve_batch``'s, ``options``
    the others."""
    n, keep = len(skeleton), skeleton.core_joints
    start = None if positions is None else inputs.batch_array(positions, "positions", (n, 3))
    frames = None if rotations is None else inputs.batch_array(rotations, "rotations", (n, 4))
    relax = None if relax_to is None else inputs.batch_array(relax_to, "relax_to", (n, 3))
    relax_frames = None if relax_rotations is None else inputs.batch_array(relax_rotations, "relax_rotations", (n, 4))
    if frames is not None:
        before_q = frames
    elif start is None:
        before_q = np.array(skeleton.rest_frames)[None]
    else:
        before_q = np.array([fitted_frames(skeleton, p) for p in start])
    got = solve_batch(
        skeleton.core,
        targets,
        positions=None if start is None else start[:, keep],
        rotations=None if frames is None else frames[:, keep],
        relax_to=None if relax is None else relax[:, keep],
        relax_rotations=None if relax_frames is None else relax_frames[:, keep],
        **options,
    )
    return carried(skeleton, got, before_q)
