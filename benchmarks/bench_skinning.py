"""Skinning benchmark: ``fabrik3d.model.skinning.Skinner`` (linear blend skinning, numpy) against the
textbook numpy form (``skin_naive``: each influence's 4x4 matrix gathered, then summed) in the same process.

Workload: a mesh of ``v`` vertices (5k, 30k, 100k; 500 and 3000 with ``--quick``) bound to a skin of 65
joints (a Mixamo-sized rig), ``k`` = 4 or 8 influences per vertex (joints drawn at random, weights
random and summing to 1, ``numpy.random.default_rng(0)``); each frame skins the mesh with new joint
matrices (random rotations, scales and translations). ``Skinner`` rows: ``dense`` blends the matrices
with one ``(v, 65) @ (65, 12)`` product, ``gathered`` (what ``Skinner`` picks for such a rig) gathers them
per influence slot. A frame is positions only (``Skinner.positions``), as a viewer needs each frame.

``its pick`` marks the blend ``Skinner`` chooses for the rig (the dense one for rigs of at most 4 joints
per influence). Columns: ``ms/frame`` is the mean over the frames of each frame's fastest time over the passes; ``vs
naive`` divides the textbook form's time by it (how many times faster). Aim: 30k vertices, 4 influences,
at most 5 ms a frame. Check: every method's vertices equal the textbook form's within 1e-4.

Run: ``python benchmarks/bench_skinning.py [--quick] [--repeats N] [--profile]``.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable

import common
import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import skinning
from fabrik3d.model.skinning import Skinner, skin_naive

JOINTS = 65
FRAMES = 8
HEADERS = ["vertices", "influences", "method", "ms/frame", "vs naive"]


def mesh(v: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(positions (v, 3), joints (v, k), weights (v, k))``."""
    p = rng.normal(size=(v, 3))
    j = np.stack([rng.permutation(JOINTS)[:k] for _ in range(min(v, 256))])[rng.integers(0, min(v, 256), v)]
    w = rng.random((v, k)) + 0.05
    return p, j, w / w.sum(axis=1, keepdims=True)


def matrices(rng: np.random.Generator) -> np.ndarray:
    """``(FRAMES, JOINTS, 4, 4)`` joint matrices."""
    m = np.tile(np.eye(4), (FRAMES, JOINTS, 1, 1))
    q = rng.normal(size=(FRAMES, JOINTS, 4))
    m[..., :3, :3] = rot.quat_to_matrix(q / np.linalg.norm(q, axis=-1, keepdims=True)) * rng.uniform(0.5, 2.0)
    m[..., :3, 3] = rng.normal(size=(FRAMES, JOINTS, 3))
    return m


def time_frames(
    call: Callable[[np.ndarray], np.ndarray], frames: np.ndarray, repeats: int
) -> tuple[float, list[np.ndarray]]:
    """Mean over frames of each frame's fastest time (ms), and the last pass's outputs."""
    best = [float("inf")] * len(frames)
    out: list[np.ndarray] = []
    call(frames[0])  # warm-up
    for _ in range(repeats):
        out = []
        for f, m in enumerate(frames):
            t0 = time.perf_counter_ns()
            out.append(call(m))
            best[f] = min(best[f], (time.perf_counter_ns() - t0) / 1e6)
    return float(np.mean(best)), out


def main() -> int:
    args = common.parse_args(__doc__, repeats=3)
    common.print_header("Linear blend skinning: ms per frame", args)
    checks = common.Checks()
    sizes = (500, 3000) if args.quick else (5000, 30000, 100000)
    rows, lines, aim = [], [], None
    for v in sizes:
        for k in (4, 8):
            rng = np.random.default_rng(0)
            p, j, w = mesh(v, k, rng)
            frames = matrices(rng)
            naive = functools.partial(skin_naive, p, j, w)
            naive_ms, expected = time_frames(naive, frames, 1 if v > 30000 else args.repeats)
            rows.append([v, k, "textbook numpy (naive)", naive_ms, "1.00x"])
            for method, limit in (("dense", JOINTS), ("gathered", 0)):  # forced, whatever the rule picks
                old = skinning.DENSE_MAX_JOINTS
                skinning.DENSE_MAX_JOINTS = limit
                try:
                    skinner = Skinner(p, j, w, JOINTS)
                finally:
                    skinning.DENSE_MAX_JOINTS = old
                if skinner.dense != (method == "dense"):
                    continue  # too large for the dense weights
                ms, got = time_frames(skinner.positions, frames, args.repeats)
                default = Skinner(p[:1], j[:1], w[:1], JOINTS).dense == (method == "dense")
                label = f"fabrik3d Skinner ({method}{', its pick' if default else ''})"
                rows.append([v, k, label, ms, common.ratio(naive_ms, ms)])
                error = max(float(np.abs(a - b).max()) for a, b in zip(got, expected))
                lines.append(
                    checks.line(f"{v} vertices, {k} influences, {method}", error < 1e-4, f"max error {error:.2e}")
                )
                if v == 30000 and k == 4 and default:
                    aim = ms
    print(common.format_table(HEADERS, rows))
    print()
    if aim is not None:
        print(common.aim_line("30k vertices, 4 influences, Skinner's pick: ms per frame", aim, 5.0, " ms"))
    for line in lines:
        print(line)
    if args.profile:
        rng = np.random.default_rng(0)
        p, j, w = mesh(30000, 4, rng)
        skinner, frames = Skinner(p, j, w, JOINTS), matrices(rng)
        print(common.profile(lambda: skinner.positions(frames[0]), 200))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
