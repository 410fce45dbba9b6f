"""Scaling benchmark: how solve time grows with chain length and with the number of targeted effectors.

Workloads (all from rest, tolerance 1e-3, at most 100 iterations, ``numpy.random.default_rng(0)``):

* chains of 10, 100 and 1000 unit bones along +Y; targets uniform in the ball of
  radius 0.9 x the chain's reach (``common.ball_points``);
* trees with 2, 8, 32 and 64 targeted effectors: a spine of three unit bones up
  +Y to a sub-base from which the arms (three bones of 0.5 each) fan out evenly in
  the XZ plane; targets about each arm tip's rest position (normal, 0.3).

Each row times ``fabrik3d.solve`` (``solve_chain`` for the chains) one problem at
a time (mean over the problems) and ``fabrik3d.solve_batch`` on all of them at
once (fastest of the passes, divided by B). Since FABRIK's iterations are linear
in the number of bones, the ``per it`` columns divide by each problem's iterations
too. The growth exponent ``k`` is the least-squares slope of log(time) against
log(size): 1 is linear.

Run: ``python benchmarks/bench_scaling.py [--quick] [--repeats N]``.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import common
import numpy as np

import fabrik3d

TOL = 1e-3
MAX_IT = 100
HEADERS = [
    "workload",
    "size",
    "joints",
    "B",
    "it mean",
    "single us",
    "single us/it",
    "batch us/problem",
    "batch us/it",
    "batch vs single",
]


def chain_case(bones: int, count: int) -> tuple[fabrik3d.Skeleton, dict[str, np.ndarray]]:
    rest = common.straight_chain(bones)
    s = fabrik3d.Skeleton([f"j{i}" for i in range(bones + 1)], list(range(-1, bones)), rest)
    return s, {f"j{bones}": common.ball_points(np.random.default_rng(0), count, 0.9 * bones)}


def tree_case(arms: int, count: int) -> tuple[fabrik3d.Skeleton, dict[str, np.ndarray]]:
    names, parents, pos = ["root", "s1", "s2", "sub"], [-1, 0, 1, 2], [[0.0, float(y), 0.0] for y in range(4)]
    for a in range(arms):
        angle = 2 * math.pi * a / arms
        d = np.array([math.cos(angle), 0.0, math.sin(angle)])
        for k in range(3):
            names.append(f"a{a}_{k}")
            parents.append(3 if k == 0 else len(names) - 2)
            pos.append((np.array([0.0, 3.0, 0.0]) + 0.5 * (k + 1) * d).tolist())
    s = fabrik3d.Skeleton(names, parents, pos)
    rng = np.random.default_rng(0)
    return s, {e: s.rest_positions[s.index(e)] + rng.normal(scale=0.3, size=(count, 3)) for e in s.end_effectors}


def measure(s: fabrik3d.Skeleton, goals: dict[str, np.ndarray], singles: int, repeats: int) -> dict[str, float]:
    """Single solves (the first ``singles`` problems) and the batch: times in us, iterations."""
    (_name, targets), *_ = goals.items()
    bsize = len(targets)
    times, its = [], []
    rest = s.rest_positions
    for b in range(singles):
        if len(goals) == 1:
            t0 = time.perf_counter()
            r = fabrik3d.solve_chain(rest, targets[b], tolerance=TOL, max_iterations=MAX_IT)
        else:
            one = {e: v[b] for e, v in goals.items()}
            t0 = time.perf_counter()
            r = fabrik3d.solve(s, one, tolerance=TOL, max_iterations=MAX_IT)
        times.append(time.perf_counter() - t0)
        its.append(max(r.iterations, 1))
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = fabrik3d.solve_batch(s, goals, tolerance=TOL, max_iterations=MAX_IT)
        best = min(best, time.perf_counter() - t0)
    it_batch = float(np.maximum(res.iterations, 1).mean())
    return {
        "B": bsize,
        "it": float(np.mean(its)),
        "single": 1e6 * float(np.mean(times)),
        "single_it": 1e6 * float(np.mean(np.array(times) / np.array(its))),
        "batch": 1e6 * best / bsize,
        "batch_it": 1e6 * best / bsize / it_batch,
    }


def exponent(sizes: list[int], values: list[float]) -> float:
    """Least-squares slope of log(values) against log(sizes)."""
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def main(argv: list[str] | None = None) -> int:
    args = common.parse_args(__doc__, argv, budget_s=2.0, repeats=3)
    common.print_header("fabrik3d scaling benchmark: chain length and targeted effectors", args)
    bones = (10, 100) if args.quick else (10, 100, 1000)
    arms = (2, 8) if args.quick else (2, 8, 32, 64)
    # (batch size, single solves) per size: one batch size per workload (per-call costs weigh more in small
    # batches, so a batch size shrinking with the size would bend the fitted exponent); fewer single solves.
    chain_counts = {10: (1000, 200), 100: (1000, 20), 1000: (1000, 3)}
    tree_counts = {2: (200, 50), 8: (200, 20), 32: (200, 5), 64: (200, 3)}
    if args.quick:
        chain_counts = {10: (40, 5), 100: (20, 2)}
        tree_counts = {2: (20, 3), 8: (20, 2)}
    rows: list[list[Any]] = []
    series: dict[str, tuple[list[int], list[dict[str, float]]]] = {"chain": ([], []), "tree": ([], [])}
    for label, sizes, counts, make in (
        ("chain", bones, chain_counts, chain_case),
        ("tree", arms, tree_counts, tree_case),
    ):
        for size in sizes:
            bsize, singles = counts[size]
            s, goals = make(size, bsize)
            m = measure(s, goals, singles, args.repeats)
            series[label][0].append(size)
            series[label][1].append(m)
            what = f"{size} bones" if label == "chain" else f"{size} effectors"
            rows.append(
                [
                    label,
                    what,
                    len(s),
                    m["B"],
                    m["it"],
                    m["single"],
                    m["single_it"],
                    m["batch"],
                    m["batch_it"],
                    common.ratio(m["single"], m["batch"]),
                ]
            )
    print("time per problem (us) from rest; per it = divided by the problem's iterations")
    print()
    print(common.format_table(HEADERS, rows))
    print()
    for label, (sizes, ms) in series.items():
        k = {key: exponent(sizes, [m[key] for m in ms]) for key in ("single", "single_it", "batch", "batch_it")}
        print(
            f"growth exponent, {label}s (time ~ size^k): single k = {k['single']:.2f} "
            f"(per iteration {k['single_it']:.2f}), batch k = {k['batch']:.2f} (per iteration {k['batch_it']:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
