"""The arguments of ``solve_batch`` (``fabrik3d.batch.solve``), checked and shaped: targets and
orientation targets, poles, start poses and root targets as ``(B|1, ...)`` float arrays, and the
common batch size. Batch-only plumbing: the scalar solve checks its arguments one problem at a
time (``fabrik3d.model.targets``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model import targets as tg
from fabrik3d.model.skeleton import Skeleton

# An orientation target: ``(B|1, 4)`` quaternions as given, its weight, and the ``Target`` it came
# from when one ``Target`` serves every problem (its orientation is normalised already).
Turn = tuple[np.ndarray, float, "tg.Target | None"]


def batch_targets(skeleton: Skeleton, targets: Any) -> tuple[dict[int, np.ndarray], dict[int, Turn]]:
    """Target points ``(B|1, 3)`` and orientation targets (``Turn``) by effector index, skeleton order."""
    points, turns = {}, {}
    for e, name, value in tg.by_effector(skeleton, targets, "targets", "(B, 3) arrays of points"):
        where = f"targets[{name!r}]"
        if isinstance(value, tg.Target):
            points[e] = value.position[None]
            if value.orientation is not None:
                turns[e] = (value.orientation[None], value.weight, value)
        elif isinstance(value, tuple) and len(value) in (2, 3) and np.ndim(value[0]) == 2:
            points[e] = batch_array(value[0], f"{where} positions", (3,))
            weight = 1.0 if len(value) == 2 else checks.positive(value[2], f"{where} weight")
            if weight > 1.0:
                raise ValueError(f"{where} weight: must be in (0, 1], got {weight:g}")
            turns[e] = (quaternions(value[1], f"{where} orientations"), weight, None)
        else:
            points[e] = batch_array(value, where, (3,))
    return points, turns


def named_points(skeleton: Skeleton, value: Any, what: str) -> dict[int, np.ndarray]:
    """``(B|1, 3)`` points by effector index for ``poles``."""
    if value is None:
        return {}
    return {e: batch_array(v, f"{what}[{n!r}]", (3,)) for e, n, v in tg.by_effector(skeleton, value, what, "points")}


def batch_array(value: Any, name: str, item: tuple[int, ...]) -> np.ndarray:
    """A float copy of shape ``(B,) + item`` (``item`` alone becomes ``(1,) + item``), finite and bounded."""
    try:
        arr = checks.real_array(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected an array of numbers of shape (B, {', '.join(map(str, item))})") from None
    if arr.shape == item:
        arr = arr[None]
    if arr.ndim != len(item) + 1 or arr.shape[1:] != item:
        shape = ", ".join(map(str, item))
        raise ValueError(
            f"{name}: expected shape (B, {shape}) or ({shape}{',' if len(item) == 1 else ''}), got {arr.shape}"
        )
    bad = ~(np.abs(arr) <= checks.MAX_COORD)
    if bad.any():
        b = int(np.argwhere(bad)[0][0])
        what = "finite (no NaN or inf)" if not np.isfinite(arr).all() else f"at most {checks.MAX_COORD:g} in magnitude"
        raise ValueError(f"{name}[{b}]: coordinates must be {what}")
    return arr


def quaternions(value: Any, name: str) -> np.ndarray:
    """``(B, 4)`` unit quaternions (x, y, z, w) as given (within 1e-6 of unit length); ``ValueError``
    naming the first bad one."""
    try:
        q = checks.real_array(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected an array of quaternions of shape (B, 4)") from None
    if q.ndim != 2 or q.shape[1] != 4:
        raise ValueError(f"{name}: expected shape (B, 4), got {q.shape}")
    length = quaternion_lengths(q)
    bad = ~(np.abs(length - 1.0) <= 1e-6)
    if bad.any():
        b = int(np.argmax(bad))
        raise ValueError(f"{name}[{b}]: not a unit quaternion (length {length[b]:.6g})")
    return q


def quaternion_lengths(q: np.ndarray) -> np.ndarray:
    """Lengths of ``(B, 4)`` quaternions, written out as ``targets.unit_quaternion`` does."""
    return np.sqrt(q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1] + q[:, 2] * q[:, 2] + q[:, 3] * q[:, 3])


def unit_turns(turns: dict[int, Turn]) -> dict[int, tuple[np.ndarray, float]]:
    """The orientations normalised as ``fabrik3d.Target`` normalises them (once: a ``Target``'s
    own are already), with their weights."""
    return {e: (q if source else q / quaternion_lengths(q)[:, None], w) for e, (q, w, source) in turns.items()}


def batch_size(sizes: list[tuple[str, np.ndarray | None]]) -> int:
    """The common batch size ``B`` of the batched arguments; ``ValueError`` naming one that disagrees."""
    known: tuple[str, int] | None = None
    for name, arr in sizes:
        if arr is None or arr.shape[0] == 1:
            continue
        if known is None:
            known = (name, arr.shape[0])
        elif arr.shape[0] != known[1]:
            raise ValueError(f"{name}: {arr.shape[0]} problems, but {known[0]} has {known[1]}")
    if known is None:  # every argument is shared (or a batch of one)
        return 1 if any(arr is not None for _, arr in sizes) else no_batch()
    return known[1]


def no_batch() -> int:
    raise ValueError("targets: empty, and no other argument has a batch axis: cannot tell the number of problems")
