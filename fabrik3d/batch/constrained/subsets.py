"""Per-problem subsets of the constrained batch solve's values (``fabrik3d.batch.constrained``): a batch
tuple (three or four ``(m,)`` arrays, or constants that broadcast) or a list of them (a pose, its frames;
``None`` for a joint the solve does not move), taken for some problems and written back."""

from __future__ import annotations

from typing import Any

import numpy as np

# A batch vector and quaternion: tuples of ``(m,)`` arrays (or constants).
BVec = tuple[Any, Any, Any]
BQuat = tuple[Any, Any, Any, Any]


def take(v: tuple, idx: np.ndarray) -> tuple:
    """The problems ``idx`` of a batch tuple (constants stay)."""
    return tuple(x[idx] if isinstance(x, np.ndarray) else x for x in v)


def full(v: tuple, m: int) -> tuple:
    """A batch tuple of ``m`` problems (constants broadcast into fresh arrays)."""
    return tuple(x if isinstance(x, np.ndarray) and x.shape == (m,) else np.full(m, x, dtype=float) for x in v)


def put(v: tuple, idx: np.ndarray, w: tuple, m: int) -> tuple:
    """``v`` (``m`` problems) with the problems ``idx`` replaced by ``w``."""
    out = tuple(np.array(x, dtype=float) for x in full(v, m))
    for x, y in zip(out, w):
        x[idx] = y
    return out


def take_all(seq: list, idx: np.ndarray) -> list:
    """The problems ``idx`` of a list of batch tuples (a pose or its frames; ``None`` stays)."""
    return [None if v is None else take(v, idx) for v in seq]


def put_all(seq: list, idx: np.ndarray, got: list, m: int) -> None:
    """In place: ``seq``'s batch tuples (``m`` problems) with problems ``idx`` from ``got`` (where not ``None``)."""
    for j, v in enumerate(got):
        if v is not None:
            seq[j] = put(seq[j], idx, v, m)
