"""The compiled kernels' runners (internal to ``fabrik3d.batch.backends``), built once per process.

Each kernel source (``kernels.build``: a chain; ``kernels_tree.build_tree``: several targets;
``kernels_frames.build_frames``: the frames; ``kernels_passes.build_passes``, ``kernels_turns.build_rows``
and ``build_turns``: the constrained solve's reaching passes and its damped steps' rows and turns, CPU
only) defines a block function ``block(k, lo, hi, *args)`` that solves problems ``lo`` to ``hi - 1`` in
block ``k``'s lanes. ``cpu(kind)`` compiles it with ``numba.njit`` and runs the blocks in parallel over
the CPU cores (``prange``); ``cuda(kind)`` compiles it as a device function and runs it on as many GPU
threads as the GPU holds, one lane each (block ``t`` is thread ``t``), which take the problems one at a
time from a shared queue (``from_queue``; the CPU's blocks take theirs in order, ``kernels.in_order``).
numba is imported inside these functions (the backends check it first); the core needs numpy only.
"""

from __future__ import annotations

import functools
from typing import Any

from fabrik3d.batch.kernels import build
from fabrik3d.batch.kernels_frames import build_frames
from fabrik3d.batch.kernels_passes import build_passes
from fabrik3d.batch.kernels_rigid import build_fit_finish, build_fit_matrix
from fabrik3d.batch.kernels_tree import build_tree
from fabrik3d.batch.kernels_turns import build_rows, build_turns

BUILDS = {
    "chain": build,
    "tree": build_tree,
    "frames": build_frames,
    "passes": build_passes,
    "rows": build_rows,
    "turns": build_turns,
    "fit_matrix": build_fit_matrix,
    "fit_finish": build_fit_finish,
}

# numba.cuda once a cuda kernel is built: a module global, as numba's CUDA simulator (which the tests
# run the cuda path on without a GPU) swaps only globals that name numba.cuda for its thread-local API.
_CUDA: Any = None


@functools.cache
def _cpu_jit() -> Any:
    """The CPU target's ``jit``, one per process, so that the kernels' shared functions
    (``kernels_limits.build_limits``, built once per ``jit``) compile once."""
    import numba

    return numba.njit(fastmath=False, error_model="numpy")


@functools.cache
def cpu(kind: str) -> Any:
    """``run(blocks, bsize, args)``: ``kind``'s block function over ``bsize`` problems cut into
    ``blocks`` blocks, in parallel. Compiled without fast-math (no reassociation, no fused
    multiply-adds) and with numpy's error model (a lane's quotient by zero is an inf, not an
    exception, so the lanes' loops carry no branch and compile to vector instructions)."""
    import numba

    block = BUILDS[kind](_cpu_jit())

    @numba.njit(parallel=True)
    def run(blocks, bsize, args):  # type: ignore[no-untyped-def]
        for k in numba.prange(blocks):
            block(k, bsize * k // blocks, bsize * (k + 1) // blocks, *args)

    return run


def from_queue(queue, nxt):  # type: ignore[no-untyped-def]
    """The next problem a GPU thread takes: the queue's, which it moves on by one (atomically); ``nxt``
    unused. (``kernels.in_order``'s twin for the GPU.)"""
    return _CUDA.atomic.add(queue, 0, 1)


@functools.cache
def cuda(kind: str) -> Any:
    """``run[grid, threads](bsize, args)``: ``kind``'s block function on every GPU thread, one lane each,
    the problems taken from the queue (``args[0]``) one at a time until none is left: a thread whose
    problem stops takes the next, so a warp is not held up by its slowest problem. (On an H200 at
    B = 10^7, one thread a problem took 8.05 ns a chain problem and 116.6 ns a humanoid one: a warp
    stepped 26 and 100 iterations where its problems needed 8.7 and 62 on average. From the queue:
    2.78 and 81.3 ns.)"""
    global _CUDA
    from numba import cuda as numba_cuda

    _CUDA = numba_cuda
    device = numba_cuda.jit(device=True)
    block = BUILDS[kind](device, from_queue)

    @numba_cuda.jit
    def run(bsize, args):  # type: ignore[no-untyped-def]
        block(_CUDA.grid(1), 0, bsize, *args)  # (lane state: a block of one lane a thread)

    return run
