"""Curves through keys: the values between key frames (``fabrik3d.model.keys``).

Plain functions on numpy arrays. ``frames``: ``(k,)`` key frames, strictly increasing;
``values``: ``(k, d)`` the keyed values; ``at``: ``(m,)`` the frames to evaluate (any real
numbers; before the first key the first value holds, after the last the last one). Result
``(m, d)``.

Modes (``MODES``):

* ``"linear"``: straight lines between keys.
* ``"ease"``: each segment eases out of its first key and into its next one (smoothstep):
  the motion stops at every key.
* ``"smooth"``: a cubic Hermite spline through the keys (Catmull-Rom tangents for frames
  that are not evenly spaced: the slope at a key is the slope from the key before it to the
  key after it), continuous in position and velocity; at the first and last key the velocity
  is 0, so the held values outside the keys join on smoothly.

Orientations (``(k, 4)`` unit quaternions x, y, z, w) go by ``slerp_curve``: along the shorter
arc between neighbouring keys, with the segment's parameter shaped as the mode shapes it
(``"smooth"`` as ``"ease"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot

MODES = ("linear", "ease", "smooth")


def check_mode(mode: object) -> str:
    """``mode`` if it is one of ``MODES``, else ``ValueError`` listing them."""
    if mode not in MODES:
        raise ValueError(f"interpolation: expected one of {checks.names_list(MODES)}, got {checks.quoted(mode)}")
    return mode  # type: ignore[return-value]


def _segments(frames: Any, values: Any, at: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(f, v, i, u)``: the keys' frames and values as arrays, the segment ``[f[i], f[i + 1]]`` each
    ``at`` falls in and the fraction ``u`` (0..1) of the way along it (clamped outside the keys;
    ``i`` and ``u`` are zeros with a single key)."""
    f = np.asarray(frames, dtype=float)
    v = np.asarray(values, dtype=float)
    t = np.atleast_1d(np.asarray(at, dtype=float))
    if len(f) > 4 and len(t):  # only the keys about ``at`` count: a few frames of many keys cost no more
        lo = max(0, int(np.searchsorted(f, t.min(), side="right")) - 3)
        hi = int(np.searchsorted(f, t.max(), side="right")) + 2
        f, v = f[lo:hi], v[lo:hi]
    if len(f) == 1:
        return f, v, np.zeros(len(t), dtype=np.intp), np.zeros(len(t))
    i = np.clip(np.searchsorted(f, t, side="right") - 1, 0, len(f) - 2)
    u = np.clip((t - f[i]) / (f[i + 1] - f[i]), 0.0, 1.0)
    return f, v, i, u


def interpolate(frames: np.ndarray, values: np.ndarray, at: np.ndarray, mode: str) -> np.ndarray:
    """The ``(m, d)`` values at frames ``at`` of the curve through ``values`` at ``frames`` (module
    docstring)."""
    f, v, i, u = _segments(frames, values, at)
    if len(f) == 1:
        return np.repeat(v[:1], len(i), axis=0)
    p0, p1 = v[i], v[i + 1]
    if mode == "linear":
        return p0 + u[:, None] * (p1 - p0)
    if mode == "ease":
        s = u * u * (3.0 - 2.0 * u)
        return p0 + s[:, None] * (p1 - p0)
    slopes = np.zeros_like(v)  # per frame; 0 at the ends
    slopes[1:-1] = (v[2:] - v[:-2]) / (f[2:] - f[:-2])[:, None]
    span = (f[i + 1] - f[i])[:, None]
    u = u[:, None]
    u2, u3 = u * u, u * u * u
    return (
        (2 * u3 - 3 * u2 + 1) * p0
        + (u3 - 2 * u2 + u) * span * slopes[i]
        + (-2 * u3 + 3 * u2) * p1
        + (u3 - u2) * span * slopes[i + 1]
    )


def slerp_curve(frames: np.ndarray, quats: np.ndarray, at: np.ndarray, mode: str) -> np.ndarray:
    """The ``(m, 4)`` orientations at frames ``at`` between the keyed unit quaternions ``quats``
    ``(k, 4)`` at ``frames`` (module docstring)."""
    f, q, i, u = _segments(frames, quats, at)
    if len(f) == 1:
        return np.repeat(q[:1], len(i), axis=0)
    if mode != "linear":
        u = u * u * (3.0 - 2.0 * u)
    out = [rot.slerp(tuple(q[a]), tuple(q[a + 1]), float(s)) for a, s in zip(i, u)]  # type: ignore[arg-type]
    return np.array(out, dtype=float).reshape(-1, 4)
