"""``solve_batch``'s backends: ``"numpy"`` (the default, vectorised numpy) and the compiled ones.

* ``"cpu"``: the kernels of ``fabrik3d.batch.kernels`` (a chain) and ``kernels_tree`` (several
  targets) compiled with numba's ``njit(parallel=True)``, one loop per problem, the problems shared
  among the CPU cores (``prange`` over blocks of problems; ``numba.set_num_threads`` or
  ``NUMBA_NUM_THREADS`` sets how many cores).
* ``"cuda"``: the same kernel sources compiled with ``numba.cuda.jit``, one GPU thread per problem.

numba is the optional extra ``fabrik3d[fast]``; it is imported here inside functions only, so the
core stays importable with numpy alone. Each kernel compiles once per process, on first use (about
a second or two), then runs at compiled speed. A backend that cannot run says what is missing
(``BackendError``, a ``RuntimeError``); an unknown name is a ``ValueError``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fabrik3d.batch import tree as batch_tree
from fabrik3d.batch.kernels import arc_table, build
from fabrik3d.batch.kernels_tree import build_tree, plan_arrays
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.rig import Rig

BACKENDS = ("numpy", "cpu", "cuda")
INSTALL = "pip install 'fabrik3d[fast]'"
# Blocks of problems per CPU thread: iterations vary per problem, so smaller blocks share the work out.
BLOCKS_PER_THREAD = 8
# Problems one CPU thread solves side by side, joint by joint, in its vector registers
# (fabrik3d.batch.kernels.block): on an AVX-512 core, 16 lanes took 728 ns a chain problem, 32 took 686
# and 64 took 692 (8, one register's width, 949: the vectoriser wants two registers' worth).
LANES = 32
# GPU threads per block.
CUDA_THREADS = 128


# numba.cuda once the cuda kernel is built: a module global, as numba's CUDA simulator (which the tests
# run the cuda path on without a GPU) swaps only globals that name numba.cuda for its thread-local API.
_CUDA: Any = None


class BackendError(RuntimeError):
    """A compiled backend was asked for and cannot run here; the message names what is missing."""


def check_backend(backend: Any) -> str:
    """``backend`` checked: one of ``BACKENDS``, and able to run (numba, and for cuda a GPU)."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    if backend == "cpu":
        _numba("cpu")
    elif backend == "cuda":
        _cuda()
    return backend


def _numba(backend: str) -> Any:
    try:
        import numba
    except ImportError as exc:
        raise BackendError(
            f"backend={backend!r} needs numba, the optional extra fabrik3d[fast]: {INSTALL} ({exc})"
        ) from None
    return numba


def _cuda() -> Any:
    numba = _numba("cuda")
    need = "backend='cuda' needs an NVIDIA GPU and numba's CUDA target"
    try:
        from numba import cuda
    except ImportError as exc:
        raise BackendError(f"{need}: numba {numba.__version__} has no CUDA target ({exc})") from None
    try:
        ok = bool(cuda.is_available())
    except Exception as exc:  # (a broken driver install raises rather than answering)
        raise BackendError(f"{need}: {type(exc).__name__}: {exc}") from None
    if not ok:
        raise BackendError(
            f"{need}: no usable GPU or CUDA driver was found (numba.cuda.is_available() is False; "
            "numba.cuda.detect() says why); backend='cpu' runs the same kernel on the CPU cores"
        )
    return cuda


def solve_chains(
    backend: str, start: np.ndarray, lengths: list[float], target: np.ndarray, tol: float, max_it: int, out: np.ndarray
) -> np.ndarray:
    """``fabrik3d.batch.chain.solve_chains`` (the same arguments and results) on a compiled backend."""
    starts = np.ascontiguousarray(start.transpose(2, 0, 1), dtype=np.float64)  # (S, L, 3)
    goals = np.ascontiguousarray(target.T, dtype=np.float64)  # (B, 3)
    bones = np.array(lengths, dtype=np.float64)
    reach = float(sum(lengths))  # (run_chain's sum, in order)
    bsize = goals.shape[0]
    iterations = np.zeros(bsize, dtype=np.int64)
    pose = out if out.flags.c_contiguous and out.dtype == np.float64 else np.empty(out.shape)
    if backend == "cuda":
        _cuda_chains(starts, bones, reach, goals, tol, max_it, pose, iterations)
    else:
        state = _lane_state(_cpu_blocks(bsize), LANES, starts.shape[1])
        args = (starts, bones, arc_table(len(lengths)), reach, goals, float(tol), int(max_it), pose, iterations)
        _cpu_kernel()(*args, *state)
    if pose is not out:
        out[...] = pose
    return iterations


def solve_trees(
    backend: str,
    skeleton: Skeleton,
    r: Rig,
    start: np.ndarray,
    goal: dict[int, np.ndarray],
    weights: dict[int, float] | None,
    active: list[bool],
    tol: float,
    max_it: int,
    out: np.ndarray,
) -> np.ndarray:
    """``fabrik3d.batch.tree.solve_tree`` (the same arguments and results) on a compiled backend."""
    plan = plan_arrays(batch_tree.TreePlan(skeleton, r, goal, weights, active))
    starts = np.ascontiguousarray(start.transpose(2, 0, 1), dtype=np.float64)  # (S, n, 3)
    goals = np.ascontiguousarray(np.stack(list(goal.values()), axis=1), dtype=np.float64)  # (B, T, 3)
    bsize = out.shape[0]
    iterations = np.zeros(bsize, dtype=np.int64)
    pose = out if out.flags.c_contiguous and out.dtype == np.float64 else np.array(out, dtype=np.float64)
    rows = len(plan[0])
    if backend == "cuda":
        cuda, kernel = _cuda(), _cuda_tree_kernel()
        d_pose, d_its = cuda.to_device(pose), cuda.device_array(bsize, dtype=np.int64)
        state = [cuda.to_device(a) for a in _lane_state(bsize, 1, rows)[:5]]
        head = [cuda.to_device(a) for a in (starts, *plan, goals)]
        kernel[(bsize + CUDA_THREADS - 1) // CUDA_THREADS, CUDA_THREADS](
            *head, float(tol), int(max_it), d_pose, d_its, *state
        )
        d_pose.copy_to_host(pose)
        d_its.copy_to_host(iterations)
    else:
        state = _lane_state(_cpu_blocks(bsize), LANES, rows)[:5]
        _cpu_tree_kernel()(starts, *plan, goals, float(tol), int(max_it), pose, iterations, *state)
    if pose is not out:
        out[...] = pose
    return iterations


def _cpu_blocks(bsize: int) -> int:
    """How many blocks of ``LANES`` lanes the CPU threads share ``bsize`` problems in."""
    return max(1, min(-(-bsize // LANES), _numba("cpu").get_num_threads() * BLOCKS_PER_THREAD))


@functools.cache
def _cpu_tree_kernel() -> Any:
    numba = _numba("cpu")
    block = build_tree(numba.njit(fastmath=False, error_model="numpy"))

    @numba.njit(parallel=True)
    def run(
        starts,
        moving,
        trow,
        inward,
        kid_rows,
        kids,
        totals,
        outward,
        bones,
        goals,
        tol,
        max_it,
        pose,
        iterations,
        x,
        q,
        lanes,
        errs,
        its,
    ):  # type: ignore[no-untyped-def]
        bsize = pose.shape[0]
        blocks = lanes.shape[0]
        for k in numba.prange(blocks):
            lo, hi = bsize * k // blocks, bsize * (k + 1) // blocks
            block(
                k,
                lo,
                hi,
                starts,
                moving,
                trow,
                inward,
                kid_rows,
                kids,
                totals,
                outward,
                bones,
                goals,
                tol,
                max_it,
                pose,
                iterations,
                x,
                q,
                lanes,
                errs,
                its,
            )

    return run


@functools.cache
def _cuda_tree_kernel() -> Any:
    global _CUDA
    _CUDA = cuda = _cuda()
    block = build_tree(cuda.jit(device=True))

    @cuda.jit
    def run(
        starts,
        moving,
        trow,
        inward,
        kid_rows,
        kids,
        totals,
        outward,
        bones,
        goals,
        tol,
        max_it,
        pose,
        iterations,
        x,
        q,
        lanes,
        errs,
        its,
    ):  # type: ignore[no-untyped-def]
        b = _CUDA.grid(1)  # one thread, one lane, one problem
        if b < pose.shape[0]:
            block(
                b,
                b,
                b + 1,
                starts,
                moving,
                trow,
                inward,
                kid_rows,
                kids,
                totals,
                outward,
                bones,
                goals,
                tol,
                max_it,
                pose,
                iterations,
                x,
                q,
                lanes,
                errs,
                its,
            )

    return run


@functools.cache
def _cpu_kernel() -> Any:
    numba = _numba("cpu")
    # (numpy's error model: a lane's quotient by zero is an inf, not an exception, so the lanes' loops
    # carry no branch and compile to vector instructions)
    block = build(numba.njit(fastmath=False, error_model="numpy"))

    @numba.njit(parallel=True)
    def run(starts, bones, arc, reach, goals, tol, max_it, pose, iterations, x, q, lanes, errs, its, bents):  # type: ignore[no-untyped-def]
        bsize = pose.shape[0]
        blocks = lanes.shape[0]
        for k in numba.prange(blocks):
            lo, hi = bsize * k // blocks, bsize * (k + 1) // blocks
            block(
                k,
                lo,
                hi,
                starts,
                bones,
                arc,
                reach,
                goals,
                tol,
                max_it,
                pose,
                iterations,
                x,
                q,
                lanes,
                errs,
                its,
                bents,
            )

    return run


@functools.cache
def _cuda_kernel() -> Any:
    global _CUDA
    _CUDA = cuda = _cuda()
    block = build(cuda.jit(device=True))

    @cuda.jit
    def run(starts, bones, arc, reach, goals, tol, max_it, pose, iterations, x, q, lanes, errs, its, bents):  # type: ignore[no-untyped-def]
        b = _CUDA.grid(1)  # one thread, one lane, one problem
        if b < pose.shape[0]:
            block(
                b,
                b,
                b + 1,
                starts,
                bones,
                arc,
                reach,
                goals,
                tol,
                max_it,
                pose,
                iterations,
                x,
                q,
                lanes,
                errs,
                its,
                bents,
            )

    return run


def _cuda_chains(
    starts: np.ndarray,
    bones: np.ndarray,
    reach: float,
    goals: np.ndarray,
    tol: float,
    max_it: int,
    pose: np.ndarray,
    iterations: np.ndarray,
) -> None:
    """The chain kernel on the GPU: inputs copied over, results copied back into ``pose`` and ``iterations``."""
    cuda, kernel = _cuda(), _cuda_kernel()
    bsize = pose.shape[0]
    d_pose = cuda.device_array(pose.shape, dtype=np.float64)
    d_its = cuda.device_array(bsize, dtype=np.int64)
    state = [cuda.to_device(a) for a in _lane_state(bsize, 1, pose.shape[1])]
    grid = (bsize + CUDA_THREADS - 1) // CUDA_THREADS
    arc = cuda.to_device(arc_table(len(bones)))
    args = (cuda.to_device(starts), cuda.to_device(bones), arc, reach, cuda.to_device(goals), float(tol), int(max_it))
    kernel[grid, CUDA_THREADS](*args, d_pose, d_its, *state)
    d_pose.copy_to_host(pose)
    d_its.copy_to_host(iterations)


def _lane_state(blocks: int, lanes: int, joints: int) -> tuple[np.ndarray, ...]:
    """The kernel's per-lane state for ``blocks`` blocks of ``lanes`` lanes: poses and stage-1 points
    ``(blocks, joints, 3, lanes)`` (zeros: an empty lane steps along on finite numbers), problems,
    errors, iterations, bends ``(blocks, lanes)`` (``fabrik3d.batch.kernels.block``)."""
    x, q = np.zeros((blocks, joints, 3, lanes)), np.zeros((blocks, joints, 3, lanes))
    ints = [np.zeros((blocks, lanes), dtype=np.int64) for _ in range(3)]
    return x, q, ints[0], np.empty((blocks, lanes)), ints[1], ints[2]
