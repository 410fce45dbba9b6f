"""Takes: recorded sequences of poses of one skeleton, as JSON.

Format (``"format": "fabrik3d.take"``, ``"version": 1``)::

    {
      "format": "fabrik3d.take", "version": 1,
      "skeleton": {"joints": [{"name": "pelvis", "parent": null, "position": [0, 0.95, 0]}, ...]},
      "times": [0.0, 0.04, 0.08],
      "frames": [
        {"positions": [[x, y, z], ...], "rotations": [[x, y, z, w], ...]},
        ...
      ]
    }

``skeleton`` is ``Skeleton.to_dict()``'s form; ``times`` are seconds, at least
0 and strictly increasing; frame ``k`` holds the pose at ``times[k]``: one
position (scene units) and one world frame (unit quaternion x, y, z, w, as in
``SolveResult.rotations``) per joint, in skeleton order. Other top-level keys
are ignored. Errors name the place, e.g. ``frames[3].positions: expected 25
joints, got 24``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.io import files
from fabrik3d.model.skeleton import Skeleton

FORMAT = "fabrik3d.take"
VERSION = 1
# A world frame whose length is further than this from 1 is refused (closer ones are normalised).
UNIT_TOLERANCE = 1e-3
# A bone whose length differs from the skeleton's by more than this fraction is refused.
BONE_TOLERANCE = 1e-4


@dataclass(eq=False)  # arrays: compare takes field by field
class Take:
    """A recorded sequence of ``m`` poses of a skeleton of ``n`` joints.

    Attributes:
        skeleton: the skeleton.
        times: ``(m,)`` key times in seconds, at least 0, strictly increasing.
        positions: ``(m, n, 3)`` joint positions per frame, scene units.
        rotations: ``(m, n, 4)`` world frames per frame, unit quaternions (x, y, z, w).

    The arrays are checked and copied on construction (rotations normalised);
    ``ValueError`` names the frame and joint of any problem.
    """

    skeleton: Skeleton
    times: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.skeleton, Skeleton):
            raise ValueError(f"skeleton: expected a Skeleton, got {type(self.skeleton).__name__}")
        self.times = _times(self.times)
        m, n = len(self.times), len(self.skeleton)
        self.positions = _array(self.positions, (m, n, 3), "positions")
        self.rotations = _array(self.rotations, (m, n, 4), "rotations")
        self.positions, self.rotations = check_frames(self.skeleton, self.positions, self.rotations)

    @classmethod
    def from_frames(cls, skeleton: Skeleton, frames: Iterable[Any], times: Any) -> Take:
        """A take from ``SolveResult``s (or ``(positions, rotations)`` pairs) and their ``(m,)`` times, seconds."""
        n = len(skeleton)
        positions, rotations = [], []
        for k, frame in enumerate(frames):
            if hasattr(frame, "positions") and hasattr(frame, "rotations"):
                p, r = frame.positions, frame.rotations
            elif isinstance(frame, (tuple, list)) and len(frame) == 2:
                p, r = frame
            else:
                raise ValueError(f"frames[{k}]: expected a SolveResult or a (positions, rotations) pair")
            positions.append(_array(p, (n, 3), f"frames[{k}].positions"))
            rotations.append(_array(r, (n, 4), f"frames[{k}].rotations"))
        t = _times(times)
        if len(positions) != len(t):
            raise ValueError(f"frames: {len(positions)} frames but {len(t)} times")
        return cls(skeleton, t, np.array(positions).reshape(-1, n, 3), np.array(rotations).reshape(-1, n, 4))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form described in the module docstring."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "skeleton": self.skeleton.to_dict(),
            "times": self.times.tolist(),
            "frames": [
                {"positions": p.tolist(), "rotations": r.tolist()} for p, r in zip(self.positions, self.rotations)
            ],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Take:
        """A take from its JSON form; ``ValueError`` naming the place of any problem."""
        if not isinstance(data, Mapping):
            raise ValueError("take: expected a JSON object")
        if data.get("format") != FORMAT:
            raise ValueError(f"format: expected {FORMAT!r}, got {checks.quoted(data.get('format'))}")
        if data.get("version") != VERSION:
            raise ValueError(f"version: expected {VERSION}, got {checks.quoted(data.get('version'))}")
        if not isinstance(data.get("skeleton"), Mapping):
            raise ValueError("skeleton: expected an object with a 'joints' list (Skeleton.to_dict()'s form)")
        skeleton = Skeleton.from_dict(data["skeleton"], "skeleton.")
        frames = data.get("frames")
        if not isinstance(frames, list):
            raise ValueError("frames: expected a list of {positions, rotations} objects")
        pairs = []
        for k, frame in enumerate(frames):
            if not isinstance(frame, Mapping):
                raise ValueError(f"frames[{k}]: expected an object with positions and rotations")
            pairs.append((frame.get("positions"), frame.get("rotations")))
        return cls.from_frames(skeleton, pairs, data.get("times"))


def check_pose(skeleton: Skeleton, positions: Any, rotations: Any) -> tuple[np.ndarray, np.ndarray]:
    """One pose checked as by ``check_frames``: ``(n, 3)`` positions and ``(n, 4)`` frames -> float copies."""
    n = len(skeleton)
    p = _array(positions, (n, 3), "positions")
    r = _array(rotations, (n, 4), "rotations")
    p, r = check_frames(skeleton, p[None], r[None], label="")
    return p[0], r[0]


def check_frames(
    skeleton: Skeleton, positions: np.ndarray, rotations: np.ndarray, label: str | None = None, first: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Check poses of ``skeleton``; returns ``(positions, rotations)`` with the rotations normalised.

    Args:
        skeleton: the skeleton of ``n`` joints.
        positions: ``(m, n, 3)`` joint positions, scene units: finite, at most
            ``checks.MAX_COORD`` in magnitude, bone lengths those of the skeleton
            (within the fraction ``BONE_TOLERANCE``).
        rotations: ``(m, n, 4)`` world frames, quaternions (x, y, z, w) of length
            1 within ``UNIT_TOLERANCE``.

        label: prefix of the places in messages (default ``frames[k].``).
        first: the number of the first frame, in messages (a take checked in parts).

    Raises:
        ValueError: naming the frame and joint, e.g. ``frames[2].rotations[5]``.
    """
    names = skeleton.names

    def at(k: int) -> str:
        return f"frames[{first + k}]." if label is None else label

    bad = ~np.all(np.isfinite(positions) & (np.abs(positions) <= checks.MAX_COORD), axis=2)
    if bad.any():
        k, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{at(k)}positions[{j}] ({names[j]}): coordinates must be finite and at most "
            f"{checks.MAX_COORD:g} in magnitude, got {positions[k, j].tolist()}"
        )
    length = np.linalg.norm(rotations, axis=2)
    bad = ~(np.abs(length - 1.0) <= UNIT_TOLERANCE)
    if bad.any():
        k, j = np.argwhere(bad)[0]
        raise ValueError(f"{at(k)}rotations[{j}] ({names[j]}): not a unit quaternion (length {length[k, j]:.6g})")
    child = np.array([j for j in range(len(names)) if skeleton.parents[j] >= 0], dtype=int)
    parent = skeleton.parents[child]
    lengths = np.linalg.norm(positions[:, child] - positions[:, parent], axis=2)
    rest = skeleton.bone_lengths[child]
    bad = ~(np.abs(lengths - rest) <= BONE_TOLERANCE * rest)
    if bad.any():
        k, b = np.argwhere(bad)[0]
        j = int(child[b])
        raise ValueError(
            f"{at(k)}positions[{j}] ({names[j]}): bone from {names[parent[b]]!r} is "
            f"{lengths[k, b]:.6g} long, the skeleton's is {rest[b]:.6g} (a pose of another skeleton?)"
        )
    # Normalise, leaving frames that are unit to rounding as they are (so a saved take loads back bit for bit).
    return positions, np.where(np.abs(length - 1.0)[..., None] > 1e-14, rotations / length[..., None], rotations)


def take_to_json(take: Take) -> str:
    """The take as JSON text, one frame per line (numbers round-trip exactly)."""
    d = take.to_dict()
    head = {k: d[k] for k in ("format", "version", "skeleton", "times")}
    frames = ",\n  ".join(json.dumps(f, allow_nan=False, separators=(",", ":")) for f in d["frames"])
    return json.dumps(head, allow_nan=False)[:-1] + ',\n "frames": [\n  ' + frames + "\n ]\n}\n"


def parse_take(text: str | bytes, source: str = "take") -> Take:
    """A take from JSON text; errors are prefixed with ``source``."""
    return files.parse_json(text, source, Take.from_dict)


def load_take(path: str | os.PathLike[str]) -> Take:
    """Read a take file; ``ValueError`` naming the file and the place of any problem."""
    return parse_take(files.read_bytes(path), str(path))


def save_take(take: Take, path: str | os.PathLike[str]) -> None:
    """Write ``take`` as JSON, atomically (a failure leaves no half-written file)."""
    files.write_atomic(path, take_to_json(take).encode())


# Longest take, seconds (a day): beyond it a recording is no animation (and 1e300 would overflow
# glTF's float32 key times to infinity).
MAX_SECONDS = 86_400.0


def _times(value: Any) -> np.ndarray:
    t = _array(value, (None,), "times")
    if len(t) == 0:
        raise ValueError("times: expected at least one frame")
    bad = ~(np.isfinite(t) & (t >= 0.0) & (t <= MAX_SECONDS))
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"times[{k}]: must be finite and at least 0 and at most {MAX_SECONDS:g} seconds, got {t[k]!r}")
    bad = ~(np.diff(t) > 0.0)
    if bad.any():
        k = int(np.argmax(bad)) + 1
        raise ValueError(f"times[{k}]: must be greater than times[{k - 1}] ({t[k]!r} <= {t[k - 1]!r})")
    return t


def _array(value: Any, shape: tuple[int | None, ...], where: str) -> np.ndarray:
    """A float copy of ``value`` with ``shape`` (``None`` matches any length); ``ValueError`` naming ``where``."""
    want = "(" + ", ".join("m" if s is None else str(s) for s in shape) + (",)" if len(shape) == 1 else ")")
    try:
        arr = np.array(value)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise ValueError(f"{where}: expected an array of numbers of shape {want}")
    if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
        if len(shape) >= 2 and arr.ndim == len(shape) and shape[-2] != arr.shape[-2]:
            raise ValueError(f"{where}: expected {shape[-2]} joints, got {arr.shape[-2]}")
        raise ValueError(f"{where}: expected shape {want}, got {arr.shape}")
    return arr.astype(float)
