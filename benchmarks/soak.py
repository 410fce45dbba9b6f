"""Soak: many random solves; reports NaNs (must be 0), bone-length drift and limit violations.

Random trees (chains and branching, with and without joint limits), random start poses
(including degenerate ones: all joints on one point, straight lines), reachable and
unreachable targets; constrained solves now and then with a pole and an orientation
target. Unconstrained problems run through ``fabrik3d.solve_batch`` (many at once);
constrained ones through ``fabrik3d.solve``, one by one (a different skeleton each, with
poles and orientation targets now and then; they cost milliseconds each, so they are a
share of the total, ``--limited-share``), and, once every ``LIMITED_BATCH_EVERY`` batches,
``LIMITED_BATCH`` constrained problems on one random skeleton through ``solve_batch``
(its vectorised constrained solve; per-problem poles and orientation targets half the time).

    python benchmarks/soak.py                # 10^6 solves (about 3 to 4 minutes on this machine)
    python benchmarks/soak.py --count 20000  # a quick look

Exit status 1 if any pose holds a NaN or inf, or a bone length drifts by more than 1e-9
(relative), or a limit is exceeded by more than 1e-6 degrees.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

import common  # noqa: F401  (puts tests/ on sys.path)
import numpy as np
from helpers.limits import violations

import fabrik3d
from fabrik3d import Cone, EllipticalCone, Hinge, Rigid, Skeleton, Twist

# Once every this many batches, this many constrained problems on one skeleton go through solve_batch.
LIMITED_BATCH_EVERY = 20
LIMITED_BATCH = 256


def random_tree(rng: np.random.Generator, limited: bool) -> Skeleton:
    """A random chain or tree of 2 to 12 joints, bones 0.05 to 1 long, with random limits if ``limited``."""
    n = int(rng.integers(2, 13))
    branching = rng.random() < 0.5
    parents = [-1] + [int(rng.integers(0, j)) if branching else j - 1 for j in range(1, n)]
    rest = np.zeros((n, 3))
    for j in range(1, n):
        d = rng.normal(size=3)
        rest[j] = rest[parents[j]] + d / np.linalg.norm(d) * rng.uniform(0.05, 1.0)
    limits: dict[str, list] = {}
    if limited:
        kids = [[c for c in range(n) if parents[c] == j] for j in range(n)]
        for j in range(n):
            items: list = []
            if len(kids[j]) >= 2 and rng.random() < 0.5:
                items.append(Rigid())
            if kids[j] and (len(kids[j]) == 1 or items) and rng.random() < 0.8:
                items.append(_swing_limit(rng, rest[kids[j][0]] - rest[j]))
            if rng.random() < 0.3:
                lo = rng.uniform(-90, 0)
                items.append(Twist(lo, rng.uniform(0, 90)))
            if items:
                limits[f"j{j}"] = items
    return Skeleton([f"j{j}" for j in range(n)], parents, rest, limits)


def _swing_limit(rng: np.random.Generator, bone: np.ndarray):
    kind = rng.integers(0, 3)
    if kind == 0:
        return Cone(rng.uniform(0, 170))
    if kind == 1:
        return EllipticalCone(*rng.uniform(0, 120, size=4))
    axis = np.cross(bone, rng.normal(size=3))
    lo = rng.uniform(-170, 0)
    return Hinge(tuple(axis / np.linalg.norm(axis)), lo, rng.uniform(0, 170))


def start_pose(rng: np.random.Generator, s: Skeleton) -> np.ndarray | None:
    """Rest (None), a random pose, all joints on one point, or everything on one line."""
    kind = rng.integers(0, 4)
    n = len(s)
    if kind == 0:
        return None
    if kind == 1:
        return rng.normal(size=(n, 3))
    if kind == 2:
        return np.zeros((n, 3))
    return np.outer(np.arange(n), rng.normal(size=3))


def targets_for(rng: np.random.Generator, s: Skeleton) -> dict[str, np.ndarray]:
    """Some effectors, each at a random point within (and now and then far beyond) its reach."""
    out = {}
    reach = float(sum(s.bone_lengths))
    for name in s.end_effectors:
        if rng.random() < 0.7:
            d = rng.normal(size=3)
            out[name] = s.rest_positions[s.root] + d / np.linalg.norm(d) * reach * rng.uniform(0.0, 1.5)
    return out or {s.end_effectors[0]: s.rest_positions[s.root]}


def extras_for(
    rng: np.random.Generator, s: Skeleton, targets: dict[str, np.ndarray]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Now and then a pole for a targeted effector (anywhere near the skeleton) and an orientation
    (a random unit quaternion, random weight) on one target."""
    goals: dict[str, Any] = dict(targets)
    poles = {}
    names = sorted(targets)
    reach = float(sum(s.bone_lengths))
    if rng.random() < 0.3:
        poles[names[int(rng.integers(len(names)))]] = s.rest_positions[s.root] + rng.normal(size=3) * reach
    if rng.random() < 0.3:
        name = names[int(rng.integers(len(names)))]
        q = rng.normal(size=4)
        goals[name] = fabrik3d.Target(targets[name], q / np.linalg.norm(q), weight=float(rng.uniform(0.1, 1.0)))
    return goals, poles


def limited_batch(rng: np.random.Generator, s: Skeleton, size: int) -> dict[str, Any]:
    """``solve_batch`` arguments for ``size`` problems on ``s``: random targets (``targets_for``'s
    recipe, per problem), start poses (random or degenerate, per problem), and half the time
    per-problem poles on one targeted effector and orientation targets on another."""
    names = sorted(targets_for(rng, s))
    reach = float(sum(s.bone_lengths))
    root = s.rest_positions[s.root]
    targets: dict[str, Any] = {}
    for name in names:
        d = rng.normal(size=(size, 3))
        targets[name] = root + d / np.linalg.norm(d, axis=1, keepdims=True) * reach * rng.uniform(0, 1.5, (size, 1))
    starts = np.array([p if p is not None else s.rest_positions for p in (start_pose(rng, s) for _ in range(size))])
    out: dict[str, Any] = {"targets": targets, "positions": starts}
    if rng.random() < 0.5:
        out["poles"] = {names[0]: root + rng.normal(size=(size, 3)) * reach}
    if rng.random() < 0.5:
        q = rng.normal(size=(size, 4))
        targets[names[-1]] = (targets[names[-1]], q / np.linalg.norm(q, axis=1, keepdims=True), 0.7)
    return out


def check(s: Skeleton, positions: np.ndarray, rotations: np.ndarray) -> tuple[bool, float, float]:
    """(finite, largest relative bone-length drift, largest limit excess in degrees)."""
    if not (np.all(np.isfinite(positions)) and np.all(np.isfinite(rotations))):
        return False, math.inf, math.inf
    p = s.parents
    kids = np.arange(len(s))[p >= 0]
    lengths = np.linalg.norm(positions[kids] - positions[p[kids]], axis=1)
    drift = float(np.max(np.abs(lengths - s.bone_lengths[kids]) / s.bone_lengths[kids]))
    excess = max(violations(s, positions, rotations).values(), default=0.0) if s.constraints else 0.0
    return True, drift, excess


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="number of solves")
    parser.add_argument("--limited-share", type=float, default=0.02, help="share of solves with joint limits")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--limited-batch-every",
        type=int,
        default=LIMITED_BATCH_EVERY,
        help="rounds between constrained batches through solve_batch",
    )
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error(f"--count: must be >= 1, got {args.count}")
    if not 0.0 <= args.limited_share <= 1.0:
        parser.error(f"--limited-share: must be within 0..1, got {args.limited_share:g}")
    if args.limited_batch_every < 1:
        parser.error(f"--limited-batch-every: must be >= 1, got {args.limited_batch_every}")
    rng = np.random.default_rng(args.seed)
    done = nans = 0
    drift = excess = 0.0
    t0 = time.perf_counter()
    plain = limited = limited_batched = rounds = 0
    while done < args.count:
        # A round of up to 2000 solves: its share of constrained ones (one by one), the rest as a batch.
        size = int(min(2000, args.count - done))
        singles = min(round(size * args.limited_share), size)
        batch = size - singles
        if batch:
            s = random_tree(rng, limited=False)
            targets = {}
            for name in s.end_effectors:
                d = rng.normal(size=(batch, 3))
                scale = float(sum(s.bone_lengths)) * rng.uniform(0.0, 1.5, size=(batch, 1))
                targets[name] = s.rest_positions[s.root] + d / np.linalg.norm(d, axis=1, keepdims=True) * scale
            r = fabrik3d.solve_batch(s, targets, positions=start_pose(rng, s), max_iterations=50)
            for b in range(batch):
                ok, d, _ = check(s, r.positions[b], r.rotations[b])
                nans += not ok
                drift = max(drift, d)
            done += batch
            plain += batch
        for _ in range(singles):
            s = random_tree(rng, limited=True)
            goals, poles = extras_for(rng, s, targets_for(rng, s))
            one = fabrik3d.solve(s, goals, positions=start_pose(rng, s), poles=poles, max_iterations=50)
            ok, d, e = check(s, one.positions, one.rotations)
            nans += not ok
            drift, excess = max(drift, d), max(excess, e)
            done += 1
            limited += 1
        rounds += 1
        if rounds % args.limited_batch_every == 0 and done < args.count:
            s = random_tree(rng, limited=True)
            size = int(min(LIMITED_BATCH, args.count - done))
            r = fabrik3d.solve_batch(s, **limited_batch(rng, s, size), max_iterations=30)
            for b in range(size):
                ok, d, e = check(s, r.positions[b], r.rotations[b])
                nans += not ok
                drift, excess = max(drift, d), max(excess, e)
            done += size
            limited_batched += size
    seconds = time.perf_counter() - t0
    print(
        f"solves           : {done} ({limited + limited_batched} with limits) = {limited} by solve + "
        f"{limited_batched} by solve_batch, {plain} without (solve_batch); asked: --count {args.count} "
        f"--limited-share {args.limited_share:g}"
    )
    print(f"time             : {seconds:.1f} s")
    print(f"NaN or inf poses : {nans}")
    print(f"bone-length drift: {drift:.2e} (relative, largest)")
    print(f"limit excess     : {excess:.2e} degrees (largest)")
    bad = nans > 0 or drift > 1e-9 or excess > 1e-6
    print("result           :", "FAILED" if bad else "ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
