"""The problems ``solve_batch`` solves one at a time, shared among worker processes on the compiled backends.

``fabrik3d.solve`` is pure Python, so a process solves one problem at a time whatever its cores. The
problems ``solve_batch`` gives it one by one (a natural posing, the humanoid preset's default; given
frames; a look; a pole on an effector without a target) run in the calling process on
``backend="numpy"``. On ``"cpu"`` and ``"cuda"`` they are shared among up to ``numba.get_num_threads()``
worker processes (the cores the compiled kernels use; ``NUMBA_NUM_THREADS`` or
``numba.set_num_threads`` sets it), once the first problems show that the batch takes longer than the
workers cost to start (``solve_each``).

A worker is a fresh interpreter (``sys.executable``, given the caller's ``sys.path``) that unpickles the
skeleton and its share of the problems from its standard input, runs ``fabrik3d.solve`` on each and
pickles the results to its standard output (``serve``): the same function on the same floats as the
loop in the calling process, so the results are that loop's bit for bit. A fresh interpreter, not
``multiprocessing``: it neither runs the caller's script again (``spawn``) nor inherits the parent's
threads' locks (``fork``). A worker that fails (killed, out of memory) is a ``RuntimeError`` naming its
exit status and the end of its error output; an error ``solve`` raises is raised as it is, the first
problem's in batch order. No worker outlives the call: an interrupt or an error kills them, and a worker
whose caller was killed outright stops before its next problem.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO, NamedTuple

import numpy as np

from fabrik3d.batch.inputs import Turn
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Target
from fabrik3d.solver.result import SolveResult
from fabrik3d.solver.tree import solve

# Seconds of solving the workers must save before they are started (a worker's start, an interpreter
# importing numpy and fabrik3d, took about 0.3 s here).
WORTH = 1.0
# What a worker runs: the caller's import path first, then ``serve``.
BOOT = (
    "import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); from fabrik3d.batch.workers import serve; serve()"
)

Problem = dict[str, Any]  # ``solve``'s arguments after the skeleton, by name
Frames = tuple[np.ndarray | None, np.ndarray | None, dict[int, np.ndarray] | None]


class Inputs(NamedTuple):
    """A batch's per-problem inputs, checked (``fabrik3d.batch.inputs``): arrays with a first axis of ``B``
    problems or of one shared by all. ``points``: effector index -> ``(B|1, 3)`` targets; ``turns``: effector
    index -> its orientations (``inputs.Turn``); ``start``: ``(B|1, n, 3)`` start poses; ``root_goal``: a
    root ``Target`` shared by all, or ``root``: ``(B|1, 3)`` root positions; ``poles``: effector index ->
    ``(B|1, 3)``; ``relax``: ``(B|1, n, 3)`` relaxed poses; ``frames``: the start's and the relaxed pose's
    frames, ``(B|1, n, 4)``, and the points looked at, head index -> ``(B|1, 3)``."""

    points: dict[int, np.ndarray]
    turns: dict[int, Turn]
    start: np.ndarray | None
    root_goal: Target | None
    root: np.ndarray | None
    poles: dict[int, np.ndarray]
    relax: np.ndarray | None = None
    frames: Frames = (None, None, None)


def one_by_one(
    skeleton: Skeleton,
    bsize: int,
    given: Inputs,
    weights: Mapping[str, float] | None,
    tol: float,
    max_it: int,
    posing: Posing,
    backend: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    """``solve`` once per problem (``solve_each``, on a compiled ``backend`` with ``backend_workers``
    workers): ``solve_batch``'s results, ``BatchResult``'s fields in order (positions ``(B, n, 3)``,
    rotations ``(B, n, 4)``, iterations, errors, converged, orientation errors)."""
    names = skeleton.names
    n = len(skeleton)
    out = np.empty((bsize, n, 3))
    rotations = np.empty((bsize, n, 4))
    iterations = np.zeros(bsize, dtype=np.int64)
    errors = {names[e]: np.empty(bsize) for e in given.points}
    turned = {names[e]: np.empty(bsize) for e in given.turns}
    converged = np.empty(bsize, dtype=bool)
    frames, relax_frames, look = given.frames

    def row(a: Any, b: int) -> Any:
        return None if a is None else a[b if a.shape[0] > 1 else 0]

    def problem(b: int) -> Problem:
        goals: dict[str, Any] = {}
        for e, p in given.points.items():
            if e in given.turns:
                q, weight, source = given.turns[e]
                goals[names[e]] = source if source is not None else Target(row(p, b), row(q, b), weight)
            else:
                goals[names[e]] = row(p, b)
        return dict(
            targets=goals,
            positions=row(given.start, b),
            root_target=given.root_goal if given.root_goal is not None else row(given.root, b),
            poles={names[e]: row(p, b) for e, p in given.poles.items()} or None,
            weights=weights,
            tolerance=tol,
            max_iterations=max_it,
            posing=posing,
            relax_to=row(given.relax, b),
            rotations=row(frames, b),
            relax_rotations=row(relax_frames, b),
            look_at=None if look is None else {names[j]: row(a, b) for j, a in look.items()},
        )

    for b, res in enumerate(solve_each(skeleton, bsize, problem, backend_workers(backend))):
        out[b], rotations[b], iterations[b], converged[b] = res.positions, res.rotations, res.iterations, res.converged
        for name, v in res.errors.items():
            errors[name][b] = v
        for name, v in res.orientation_errors.items():
            turned[name][b] = v
    return out, rotations, iterations, errors, converged, turned


def backend_workers(backend: str) -> int:
    """The worker processes ``backend`` shares one-by-one problems among: 1 (none) on ``"numpy"``, else
    ``numba.get_num_threads()``, the cores its compiled kernels use."""
    if backend == "numpy":
        return 1
    import numba

    return int(numba.get_num_threads())


def solve_each(
    skeleton: Skeleton, bsize: int, problem: Callable[[int], Problem], workers: int = 1
) -> list[SolveResult]:
    """``solve(skeleton, **problem(b))`` for ``b`` in ``range(bsize)``, in order.

    With ``workers`` > 1, the first two problems are solved here; if the second one's time, times the
    problems left, says the workers would save more than ``WORTH`` seconds, the rest are dealt out
    among them (problem ``b`` to worker ``b % workers``: a batch's hard stretch is shared evenly).
    """
    out: list[SolveResult] = []
    for b in range(bsize):
        began = time.perf_counter()
        out.append(solve(skeleton, **problem(b)))
        left = bsize - b - 1
        if b == 1 and workers > 1 and left > 1 and sys.executable:  # (no interpreter to start: all here)
            spent = time.perf_counter() - began
            share = min(workers, left)
            if spent * left * (1.0 - 1.0 / share) > WORTH:
                return out + deal(skeleton, [problem(k) for k in range(b + 1, bsize)], share)
    return out


def deal(skeleton: Skeleton, problems: Sequence[Problem], workers: int) -> list[SolveResult]:
    """``solve`` on each of ``problems``, dealt out among ``workers`` (>= 1): this process and
    ``workers - 1`` worker processes; the results in order. Raises what ``solve`` raised (the first
    problem's in order), or ``RuntimeError`` for a worker that failed."""
    if not problems:
        return []
    count = min(workers, len(problems))
    shares = [list(problems[w::count]) for w in range(count)]
    procs: list[subprocess.Popen[bytes]] = []
    pool = ThreadPoolExecutor(max(1, count - 1))
    try:
        runs = []
        for share in shares[1:]:
            pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
            procs.append(subprocess.Popen([sys.executable, "-c", BOOT], **pipes))
            runs.append(pool.submit(procs[-1].communicate, pickle.dumps(sys.path) + pickle.dumps((skeleton, share))))
        replies = [solve_share(skeleton, shares[0])]  # (this process's share, while the workers solve theirs)
        replies += [_reply(w, p, *run.result()) for w, (p, run) in enumerate(zip(procs, runs), 1)]
    finally:
        for p in procs:  # (an interrupt, a solve that raised, a worker that failed: none outlives the call)
            if p.poll() is None:
                p.kill()
        pool.shutdown(wait=True)
    results: list[SolveResult | None] = [None] * len(problems)
    failure: tuple[int, BaseException] | None = None
    for w, reply in enumerate(replies):
        for k, res in enumerate(reply["results"]):
            results[w + k * count] = res
        if reply["error"] is not None:
            at = w + len(reply["results"]) * count
            if failure is None or at < failure[0]:
                failure = (at, reply["error"])
    if failure is not None:
        raise failure[1]
    return results  # type: ignore[return-value]


def solve_share(
    skeleton: Skeleton, problems: Sequence[Problem], wanted: Callable[[], bool] = lambda: True
) -> dict[str, Any]:
    """``{"results": [solve(skeleton, **p) for p in problems], "error": None}``, the results stopping at
    the first error that ``solve`` raises, which is ``"error"``; ``SystemExit`` as soon as ``wanted()``,
    asked before each problem, is false."""
    results: list[SolveResult] = []
    try:
        for kwargs in problems:
            if not wanted():
                raise SystemExit(1)
            results.append(solve(skeleton, **kwargs))
    except Exception as exc:
        return {"results": results, "error": exc}
    return {"results": results, "error": None}


def _reply(w: int, proc: subprocess.Popen[bytes], stdout: bytes, stderr: bytes) -> dict[str, Any]:
    """Worker ``w``'s unpickled reply (``solve_share``'s), or ``RuntimeError`` naming how it failed."""
    status = proc.wait()
    try:
        if status == 0:
            return pickle.loads(stdout)
    except Exception:
        pass
    tail = stderr.decode(errors="replace").strip()[-800:] or "no error output"
    raise RuntimeError(f"solve_batch: worker process {w} failed (exit status {status}): {tail}")


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """A worker's work (after ``BOOT`` set its import path): the skeleton and problems from ``stdin``,
    ``solve_share``'s reply to ``stdout`` (an error that does not pickle sent as its type and message)."""
    parent = os.getppid()  # (a worker whose caller died, killed outright, stops at its next problem)
    skeleton, problems = pickle.load(sys.stdin.buffer if stdin is None else stdin)
    reply = solve_share(skeleton, problems, lambda: os.getppid() == parent)
    try:
        data = pickle.dumps(reply)
    except Exception:
        error = reply["error"]
        data = pickle.dumps({**reply, "error": RuntimeError(f"{type(error).__name__}: {error}")})
    sink = sys.stdout.buffer if stdout is None else stdout
    sink.write(data)
    sink.flush()
