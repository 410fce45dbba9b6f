"""Random constrained problems for the batch tests: skeletons with random joint limits, and targets
(reachable, random, mixed) for the named effectors."""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import Cone, EllipticalCone, Hinge, Rigid, Skeleton, Twist
from helpers.limits import random_pose, unit


def chain_reach(s: Skeleton, name: str) -> float:
    """Length of the path from the root to joint ``name`` (scene units)."""
    return float(sum(s.bone_lengths[j] for j in s.path_to_root(s.index(name))))


def reachable_targets(s: Skeleton, names: list[str], count: int, rng: np.random.Generator) -> dict:
    """``(count, 3)`` targets per named effector: its position in random poses within the limits."""
    poses = np.array([random_pose(s, rng) for _ in range(count)])
    return {e: poses[:, s.index(e)] for e in names}


def random_targets(s: Skeleton, names: list[str], count: int, rng: np.random.Generator) -> dict:
    """``(count, 3)`` targets per named effector, uniform in direction about the rest root, up to 1.3
    times the effector's chain length away (many beyond reach, or out of the limits' reach)."""
    out = {}
    root = s.rest_positions[s.root]
    for e in names:
        d = rng.normal(size=(count, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        out[e] = root + d * (rng.uniform(0.0, 1.3, size=(count, 1)) * chain_reach(s, e))
    return out


def mixed_targets(s: Skeleton, names: list[str], count: int, rng: np.random.Generator) -> dict:
    """Reachable targets for the even problems, random ones for the odd problems."""
    near, far = reachable_targets(s, names, count, rng), random_targets(s, names, count, rng)
    for e in names:
        near[e][1::2] = far[e][1::2]
    return near


def some_of(names: tuple[str, ...], rng: np.random.Generator) -> list[str]:
    """A random non-empty proper subset of ``names`` when it has several (else all of them)."""
    if len(names) == 1:
        return list(names)
    k = int(rng.integers(1, len(names)))
    return [names[i] for i in sorted(rng.choice(len(names), size=k, replace=False))]


def some_angle(rng: np.random.Generator, hi: float = 170.0) -> float:
    """0 degrees now and then, else between 2 and ``hi`` degrees."""
    return 0.0 if rng.random() < 0.1 else float(rng.uniform(2.0, hi))


def perpendicular(bone: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    v = unit(rng.normal(size=3))
    w = v - (v @ bone) * bone
    if np.linalg.norm(w) < 0.1:
        w = np.cross(bone, [1.0, 0.0, 0.0] if abs(bone[0]) < 0.9 else [0.0, 1.0, 0.0])
    return unit(w)


def swing_limit(bone: np.ndarray, rng: np.random.Generator) -> Any:
    """A random Cone, EllipticalCone or Hinge for a joint whose rest bone (world) is ``bone``."""
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return Cone(some_angle(rng))
    if kind == 1:
        right = perpendicular(bone, rng) + rng.uniform(-2.0, 2.0) * bone  # not parallel to the bone
        return EllipticalCone(*(some_angle(rng) for _ in range(4)), right_axis=tuple(right))
    return Hinge(tuple(perpendicular(bone, rng)), -some_angle(rng, 180.0), some_angle(rng, 180.0))


def constrained_skeleton(n: int, tree: bool, rng: np.random.Generator) -> Skeleton:
    """A random chain (or tree) of ``n`` joints, bones 0.05 to 1 long, with random limits: a swing limit
    on most joints with one child, ``Rigid`` (with or without a swing limit) on some joints with
    several, ``Twist`` here and there (as ``test_limits_properties.constrained_skeletons``)."""
    parents = [-1] + [int(rng.integers(0, j)) if tree else j - 1 for j in range(1, n)]
    rest = np.zeros((n, 3))
    for j in range(1, n):
        d = unit(rng.normal(size=3))
        if d[1] < -1.0 + 1e-6:  # rest bones along -Y: a known precision problem of the scalar solve
            d = unit(d + np.array([0.01, 0.0, 0.0]))
        rest[j] = rest[parents[j]] + d * rng.uniform(0.05, 1.0)
    kids = [[c for c in range(n) if parents[c] == j] for j in range(n)]
    limits: dict[str, list] = {}
    for j in range(n):
        items: list = []
        rigid = len(kids[j]) >= 2 and rng.random() < 0.6
        if rigid:
            items.append(Rigid())
        if kids[j] and (len(kids[j]) == 1 or (rigid and j > 0)) and rng.random() < 0.8:
            items.append(swing_limit(unit(rest[kids[j][0]] - rest[j]), rng))
        if not (rigid and j == 0) and rng.random() < 0.25:
            items.append(Twist(-some_angle(rng, 180.0), some_angle(rng, 180.0)))
        if items:
            limits[f"n{j}"] = items
    return Skeleton([f"n{j}" for j in range(n)], parents, rest, limits)
