"""Reachability map of the robot arm: which points of a grid its tool reaches within its joint limits.

One ``fabrik3d.solve_batch`` call solves every grid point of a vertical slice in
front of the arm (the plane ``z = --depth``, metres), from rest, with the
``robot_arm`` preset's hinge limits; a point counts as reached when the tool ends
within ``--tolerance`` of it. Prints a summary and the slice as ASCII art (``#``
reached, ``.`` not, ``+`` the base's column).

``--backend cpu`` solves the grid with the joint limits compiled (numba, the extra ``fabrik3d[fast]``; the
same map, faster on a large grid once compiled; grids of fewer than 256 points are solved one by one).

Run: ``python examples/reachability_map.py [--columns 13] [--rows 9] [--depth 0.4] [--tolerance 0.01]
[--backend numpy|cpu|cuda]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import fabrik3d
from fabrik3d.model import presets


def grid(columns: int, rows: int, depth: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows * columns, 3)`` points of the slice (x in [-1, 1] m, y in [0, 1.5] m, z = depth), with the axes."""
    xs = np.linspace(-1.0, 1.0, columns)
    ys = np.linspace(0.0, 1.5, rows)
    gx, gy = np.meshgrid(xs, ys)
    return np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, depth)]), xs, ys


def ascii_slice(reached: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> list[str]:
    """The slice, top row first: ``#`` reached, ``.`` not; ``+`` marks unreached points on the base's column."""
    mid = int(np.argmin(np.abs(xs)))
    lines = []
    for r in range(len(ys) - 1, -1, -1):
        cells = ["#" if reached[r, c] else ("+" if c == mid else ".") for c in range(len(xs))]
        lines.append(f"y={ys[r]:5.2f} m  " + " ".join(cells))
    lines.append(f"{'':10}x from {xs[0]:g} to {xs[-1]:g} m")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--columns", type=int, default=13, help="grid points along x")
    parser.add_argument("--rows", type=int, default=9, help="grid points along y")
    parser.add_argument("--depth", type=float, default=0.4, help="z of the slice, metres")
    parser.add_argument("--tolerance", type=float, default=0.01, help="metres")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "cpu", "cuda"), help="solve_batch's backend")
    args = parser.parse_args(argv)
    if args.columns < 2 or args.rows < 2:
        parser.error("--columns and --rows must be at least 2")
    arm = presets.get("robot_arm")
    points, xs, ys = grid(args.columns, args.rows, args.depth)
    t0 = time.perf_counter()
    try:
        result = fabrik3d.solve_batch(
            arm, {"tool": points}, tolerance=args.tolerance, max_iterations=50, backend=args.backend
        )
    except RuntimeError as exc:  # (a compiled backend that cannot run here says what is missing)
        parser.error(str(exc))
    seconds = time.perf_counter() - t0
    reached = result.converged.reshape(len(ys), len(xs))
    print(f"robot_arm: {len(points)} grid points in the plane z = {args.depth:g} m, tolerance {args.tolerance:g} m")
    print(
        f"reached {int(reached.sum())} of {reached.size} ({100 * reached.mean():.0f}%), "
        f"mean iterations {result.iterations.mean():.1f}, {seconds:.2f} s "
        f"({1e3 * seconds / len(points):.1f} ms per point"
        + ("; with the compiling of the kernels, on first use)" if args.backend != "numpy" else ")")
    )
    far = result.errors["tool"][~result.converged]
    if far.size:
        print(f"unreached points: tool stops {far.min():.3f} to {far.max():.3f} m short")
    print()
    for line in ascii_slice(reached, xs, ys):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
