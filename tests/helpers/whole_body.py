"""The body as a whole (issue 50): the measures of its bars, shared by tests/solver/test_whole_body.py and
benchmarks/bench_whole_body.py.

* **low reaches**: toes pinned at rest, the left hand's target low in front (0.05-0.35 m high, 0.25-0.45
  m before the toes): the pelvis's forward pitch (degrees), how far it moved back (m), the hand's error,
  the centre of mass's distance inside the support area (m; negative: outside);
* **forward reaches**: toes pinned, the left hand 0.7-0.95 m before the toes, 0.9-1.4 m high, with and
  without balance: the pelvis's move back, the centre of mass's distance inside the support area.

Units: metres and degrees; the humanoid preset (Y up, facing +Z).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.model import mass

FORWARD = np.array([0.0, 0.0, 1.0])


def toes(sk: fabrik3d.Skeleton) -> dict[str, np.ndarray]:
    return {t: sk.rest_positions[sk.index(t)].copy() for t in ("toe_l", "toe_r")}


def low_reaches(sk: fabrik3d.Skeleton, seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    toe = float(sk.rest_positions[sk.index("toe_l")][2])
    return [
        np.array([rng.uniform(-0.1, 0.3), rng.uniform(0.05, 0.35), toe + rng.uniform(0.25, 0.45)]) for _ in range(count)
    ]


def forward_reaches(sk: fabrik3d.Skeleton, seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    toe = float(sk.rest_positions[sk.index("toe_l")][2])
    return [
        np.array([rng.uniform(-0.1, 0.35), rng.uniform(0.9, 1.4), toe + rng.uniform(0.7, 0.95)]) for _ in range(count)
    ]


def pelvis_pitch_deg(sk: fabrik3d.Skeleton, result: Any) -> float:
    """How far the pelvis pitched forward from rest (degrees): the angle its up axis leans toward +Z."""
    j = sk.root
    up = fabrik3d.rotations.quat_to_matrix(result.rotations[j]) @ np.linalg.inv(
        fabrik3d.rotations.quat_to_matrix(sk.rest_frames[j])
    )
    axis = up @ np.array([0.0, 1.0, 0.0])
    return math.degrees(math.atan2(float(axis @ FORWARD), float(axis[1])))


def measures(sk: fabrik3d.Skeleton, result: Any, floor: float | None = None) -> dict[str, float]:
    """The pose's measures (module docstring)."""
    back = float((sk.rest_positions[sk.root] - result.positions[sk.root]) @ FORWARD)
    poly = mass.support_area(sk, result.positions, floor)
    com = mass.center_of_mass(sk, result.positions)[[0, 2]]
    inside = mass.distance_inside(poly, com) if len(poly) >= 3 else float("nan")
    return {
        "pitch": pelvis_pitch_deg(sk, result),
        "back": back,
        "error": float(max(result.errors.values(), default=0.0)),
        "inside": float(inside),
    }


def reach(sk: fabrik3d.Skeleton, target: np.ndarray, **kw: Any) -> Any:
    """The left hand placed (cold) at ``target``, the toes pinned."""
    return fabrik3d.solve(sk, {**toes(sk), "hand_l": target}, **kw)
