"""``solve_batch``'s backends: ``"numpy"`` (the default, vectorised numpy) and the compiled ones.

* ``"cpu"``: the kernels of ``fabrik3d.batch.kernels`` (a chain) and ``kernels_tree`` (several
  targets) compiled with numba's ``njit(parallel=True)``, one loop per problem, the problems shared
  among the CPU cores (``prange`` over blocks of problems; ``numba.set_num_threads`` or
  ``NUMBA_NUM_THREADS`` sets how many cores).
* ``"cuda"``: the same kernel sources compiled with ``numba.cuda.jit``, on as many GPU threads as the GPU
  holds, each taking problems one at a time from a queue they share.

numba is the optional extra ``fabrik3d[fast]``; it is imported here inside functions only, so the
core stays importable with numpy alone. Each kernel compiles once per process, on first use (about
a second or two), then runs at compiled speed. A backend that cannot run says what is missing
(``BackendError``, a ``RuntimeError``); an unknown name is a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from fabrik3d.batch import compiled
from fabrik3d.batch import tree as batch_tree
from fabrik3d.batch.kernels import arc_table
from fabrik3d.batch.kernels_frames import frame_arrays
from fabrik3d.batch.kernels_tree import plan_arrays
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


class Launch(NamedTuple):
    """One call of a compiled kernel: its ``kind`` (``compiled.BUILDS``), its arguments before the lane
    state (``head``), which of them it writes (``outputs``, host arrays; the first has a row per
    problem), ``state(blocks, lanes)``, the lane state it takes after them, and which outputs it
    writes whole without reading them (``fresh``: on a GPU they are made there, not copied over)."""

    kind: str
    head: tuple
    outputs: tuple[int, ...]
    state: Callable[[int, int], tuple]
    fresh: tuple[int, ...] = ()


def solve_chains(
    backend: str,
    start: np.ndarray,
    lengths: list[float],
    target: np.ndarray,
    tol: float,
    max_it: int,
    out: np.ndarray,
    kept: dict[str, Any] | None = None,
) -> np.ndarray:
    """``fabrik3d.batch.chain.solve_chains`` (the same arguments and results) on a compiled backend;
    ``kept``: on "cuda", where its ``"pose"`` is set to the solved poses still on the GPU (for ``frames``)."""
    pose = _writable(out)
    launch = chain_launch(start, lengths, target, tol, max_it, pose)
    _run(backend, launch, kept)
    if pose is not out:
        out[...] = pose
    return launch.head[-1]


def chain_launch(
    start: np.ndarray, lengths: list[float], target: np.ndarray, tol: float, max_it: int, pose: np.ndarray
) -> Launch:
    """The chain kernel's call (``solve_chains``' arguments; ``pose`` ``(B, L, 3)`` C-ordered float64, its
    results); its last argument is the ``(B,)`` iterations it writes."""
    starts = np.ascontiguousarray(start.transpose(2, 0, 1), dtype=np.float64)  # (S, L, 3)
    goals = np.ascontiguousarray(target.T, dtype=np.float64)  # (B, 3)
    bones = np.array(lengths, dtype=np.float64)
    reach = float(sum(lengths))  # (run_chain's sum, in order)
    iterations = np.zeros(goals.shape[0], dtype=np.int64)
    head = (_queue(), starts, bones, arc_table(len(lengths)), reach, goals, float(tol), int(max_it), pose, iterations)
    return Launch("chain", head, (8, 9), lambda blocks, lanes: _lane_state(blocks, lanes, starts.shape[1]), (8, 9))


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
    kept: dict[str, Any] | None = None,
) -> np.ndarray:
    """``fabrik3d.batch.tree.solve_tree`` (the same arguments and results) on a compiled backend;
    ``kept`` as in ``solve_chains``."""
    pose = _writable(out)
    launch = tree_launch(batch_tree.TreePlan(skeleton, r, goal, weights, active), start, goal, tol, max_it, pose)
    _run(backend, launch, kept)
    if pose is not out:
        out[...] = pose
    return launch.head[-1]


def tree_launch(
    plan: batch_tree.TreePlan, start: np.ndarray, goal: dict[int, np.ndarray], tol: float, max_it: int, pose: np.ndarray
) -> Launch:
    """The tree kernel's call (``solve_tree``'s arguments, its ``plan`` made; ``pose`` ``(B, n, 3)``
    C-ordered float64 holding the start poses, its results); its last argument is the ``(B,)``
    iterations it writes."""
    arrays = plan_arrays(plan)
    starts = np.ascontiguousarray(start.transpose(2, 0, 1), dtype=np.float64)  # (S, n, 3)
    goals = np.ascontiguousarray(np.stack(list(goal.values()), axis=1), dtype=np.float64)  # (B, T, 3)
    iterations = np.zeros(pose.shape[0], dtype=np.int64)
    head = (_queue(), starts, *arrays, goals, float(tol), int(max_it), pose, iterations)
    rows = len(arrays[0])
    return Launch(
        "tree",
        head,
        (len(head) - 2, len(head) - 1),
        lambda blocks, lanes: _lane_state(blocks, lanes, rows, False),
        (len(head) - 1,),  # (the poses hold the start poses: read)
    )


def frames(backend: str, r: Rig, pose: np.ndarray, kept: dict[str, Any] | None = None) -> np.ndarray:
    """``fabrik3d.batch.frames.finish``'s frames where every joint moved (no branch carried, no start
    rotation kept), on a compiled backend: ``(B, n, 4)`` from ``(B, n, 3)`` solved poses. ``kept``: a
    solve's (``solve_chains``, ``solve_trees``), whose poses, where they are still on the GPU, the
    frames read there rather than sending ``pose`` over again."""
    out = np.empty((*pose.shape[:2], 4))
    launch = frames_launch(r, pose, out)
    on_gpu = (kept or {}).get("pose")
    if backend == "cuda" and on_gpu is not None:
        launch = launch._replace(head=(launch.head[0], on_gpu, *launch.head[2:]))
    _run(backend, launch)
    return out


def frames_launch(r: Rig, pose: np.ndarray, out: np.ndarray) -> Launch:
    """The frames kernel's call: ``(B, n, 3)`` solved poses, their ``(B, n, 4)`` frames written to ``out``
    (C-ordered float64)."""
    steps, rest = frame_arrays(r)
    n = pose.shape[1]

    def state(blocks: int, lanes: int) -> tuple[np.ndarray, ...]:  # the lanes' joints and frames
        return np.zeros((blocks, n, 3, lanes)), np.zeros((blocks, n, 4, lanes))

    return Launch(
        "frames", (_queue(), np.ascontiguousarray(pose, dtype=np.float64), steps, rest, out), (4,), state, (4,)
    )


def _queue() -> np.ndarray:
    """A kernel's first argument, ``(1,)`` int64 zero: the next problem a GPU thread takes (all threads
    share the problems, ``compiled.cuda``); unused on the CPU, whose blocks take theirs in order."""
    return np.zeros(1, dtype=np.int64)


def _writable(out: np.ndarray) -> np.ndarray:
    """``out`` if a kernel can write it in place (C order, float64), else a copy to write."""
    return out if out.flags.c_contiguous and out.dtype == np.float64 else np.array(out, dtype=np.float64)


def _run(backend: str, launch: Launch, kept: dict[str, Any] | None = None) -> None:
    """``launch`` over its problems: one GPU thread a block of one lane (the arrays go over, its
    ``outputs`` come back into their host arrays), or ``LANES`` lanes a block on the CPU threads.
    ``kept``: on the GPU, its ``"pose"`` is set to the first output there (the poses a solve wrote)."""
    kind, head, outputs, state = launch.kind, launch.head, launch.outputs, launch.state
    bsize = head[outputs[0]].shape[0]
    if backend == "cuda":
        threads = cuda_threads(bsize)
        try:
            args = cuda_arguments(launch, threads)
            compiled.cuda(kind)[threads // CUDA_THREADS, CUDA_THREADS](bsize, args)
            for i in outputs:
                args[i].copy_to_host(head[i])
            if kept is not None:
                kept["pose"] = args[outputs[0]]
        except Exception as exc:  # (numba's CUDA target at odds with this numpy, the GPU's memory full, ...)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise BackendError(
                f"backend='cuda' failed on this machine's GPU or numba's CUDA target ({type(exc).__name__}: "
                f"{first}); backend='cpu' runs the same kernels on the CPU cores"
            ) from exc
        return
    blocks = _cpu_blocks(bsize)
    compiled.cpu(kind)(blocks, bsize, (*head, *state(blocks, LANES)))


def cuda_threads(bsize: int) -> int:
    """GPU threads for ``bsize`` problems: as many as the GPU holds at once (its multiprocessors times
    the threads each holds), fewer for fewer problems; a multiple of ``CUDA_THREADS``. Each thread takes
    problems from the shared queue until none is left, so more would only start once it is empty."""
    cuda = _cuda()
    device = getattr(cuda, "get_current_device", lambda: None)()
    sms = getattr(device, "MULTIPROCESSOR_COUNT", 0)  # (0 on numba's CUDA simulator: its threads are Python's)
    per = getattr(device, "MAX_THREADS_PER_MULTIPROCESSOR", 0)  # (numba-cuda's name; numba's own below)
    most = sms * (per or getattr(device, "MAX_THREADS_PER_MULTI_PROCESSOR", 2048)) or CUDA_THREADS
    return -(-max(1, min(bsize, most)) // CUDA_THREADS) * CUDA_THREADS


def cuda_arguments(launch: Launch, threads: int) -> tuple:
    """``launch``'s arguments on the GPU for ``threads`` threads of one lane each: its ``head`` copied over
    (the queue's zero too), but for the ``fresh`` outputs, made there; its lane state made there, not
    filled (a block of one lane sets a lane before it reads it, and never steps an empty one), with the
    thread as the fastest index (Fortran order: the 32 threads of a warp read and write 32 neighbouring
    floats, one memory transaction, where C order would scatter them a pose apart)."""
    cuda = _cuda()
    head = tuple(
        (cuda.device_array_like(a) if i in launch.fresh else cuda.to_device(a)) if isinstance(a, np.ndarray) else a
        for i, a in enumerate(launch.head)
    )
    state = tuple(cuda.device_array(a.shape, a.dtype, order="F") for a in launch.state(threads, 1))
    return (*head, *state)


def _cpu_blocks(bsize: int) -> int:
    """How many blocks of ``LANES`` lanes the CPU threads share ``bsize`` problems in."""
    return max(1, min(-(-bsize // LANES), _numba("cpu").get_num_threads() * BLOCKS_PER_THREAD))


def _lane_state(blocks: int, lanes: int, joints: int, bends: bool = True) -> tuple[np.ndarray, ...]:
    """The kernels' per-lane state for ``blocks`` blocks of ``lanes`` lanes: poses and stage-1 points
    ``(blocks, joints, 3, lanes)`` (zeros: an empty lane steps along on finite numbers), problems,
    errors, iterations and (``bends``: the chain kernel's, ``fabrik3d.batch.kernels.block``) bends
    ``(blocks, lanes)``."""
    x, q = np.zeros((blocks, joints, 3, lanes)), np.zeros((blocks, joints, 3, lanes))
    ints = [np.zeros((blocks, lanes), dtype=np.int64) for _ in range(3 if bends else 2)]
    return x, q, ints[0], np.empty((blocks, lanes)), *ints[1:]
