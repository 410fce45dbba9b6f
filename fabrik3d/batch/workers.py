"""The problems ``solve_batch`` solves one at a time, shared among worker processes on the compiled backends.

``fabrik3d.solve`` is pure Python, so a process solves one problem at a time whatever its cores. The
problems ``solve_batch`` gives it one by one (a natural posing, the humanoid preset's default; given
frames; a look; a pole on an effector without a target) run in the calling process on
``backend="numpy"``. On ``"cpu"`` and ``"cuda"`` they are shared among up to ``numba.get_num_threads()``
worker processes (the cores the compiled kernels use; ``NUMBA_NUM_THREADS`` or
``numba.set_num_threads`` sets it), once the first problems show that the batch takes longer than the
workers cost to start (``solve_each``).

A worker is a fresh interpreter (``sys.executable``, given the caller's ``sys.path``) that unpickles the
skeleton from its standard input, then round after round its share of the problems (``ROUND`` at most,
so that what the calling process holds at once is bounded), runs ``fabrik3d.solve`` on each and pickles
the results to its standard output (``serve``): the same function on the same floats as the loop in the
calling process, so the results are that loop's bit for bit. A fresh interpreter, not
``multiprocessing``: it neither runs the caller's script again (``spawn``) nor inherits the parent's
threads' locks (``fork``). A worker that fails (killed, out of memory) is a ``RuntimeError`` naming its
exit status and the end of its error output; an error ``solve`` raises is raised as it is, the first
problem's in batch order. No worker outlives the call: an interrupt or an error kills them, and a worker
whose caller was killed outright stops before its next problem.
"""

from __future__ import annotations

import itertools
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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
# Problems a worker takes at a time (a round, ``deal``): what the calling process holds at once is bounded by it.
ROUND = 256
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
            effort=math.inf,  # (a batch's problems are no drag's frames: every search to its end)
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
) -> Iterator[SolveResult]:
    """``solve(skeleton, **problem(b))`` for ``b`` in ``range(bsize)``, yielded in order.

    With ``workers`` > 1, the first two problems are solved here; if the second one's time, times the
    problems left, says the workers would save more than ``WORTH`` seconds, the rest are dealt out
    among them (``deal``).
    """
    for b in range(bsize):
        began = time.perf_counter()
        yield solve(skeleton, **problem(b))
        left = bsize - b - 1
        if b == 1 and workers > 1 and left > 1 and sys.executable:  # (no interpreter to start: all here)
            spent = time.perf_counter() - began
            share = min(workers, left)
            if spent * left * (1.0 - 1.0 / share) > WORTH:
                yield from deal(skeleton, (problem(k) for k in range(b + 1, bsize)), share)
                return


def deal(skeleton: Skeleton, problems: Iterable[Problem], workers: int) -> Iterator[SolveResult]:
    """``solve`` on each of ``problems``, dealt out among ``workers`` (>= 1): this process and ``workers - 1``
    worker processes, started once; the results yielded in order. The problems go in rounds of ``ROUND``
    a worker (problem ``b`` of a round to share ``b % workers``: a batch's hard stretch is shared evenly),
    so what this process holds at once is bounded. Raises what ``solve`` raised (the first problem's in
    order), or ``RuntimeError`` for a worker that failed."""
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Any] = []
    todo = iter(problems)
    done = False
    head = b""  # (what every worker reads first: the import path and the skeleton, pickled once)
    try:
        while batch := list(itertools.islice(todo, ROUND * workers)):
            count = min(workers, len(batch))
            shares = [batch[w::count] for w in range(count)]
            while len(procs) < count - 1:
                logs.append(tempfile.TemporaryFile())
                procs.append(subprocess.Popen([sys.executable, "-c", BOOT], **_pipes(logs[-1])))
                head = head or pickle.dumps(sys.path) + pickle.dumps(skeleton)
                _send(len(procs), procs[-1], logs[-1], head)
            for w in range(1, count):
                _send(w, procs[w - 1], logs[w - 1], pickle.dumps(shares[w]))
            replies = [solve_share(skeleton, shares[0])]  # (this process's share, while the workers solve theirs)
            replies += [_reply(w, procs[w - 1], logs[w - 1]) for w in range(1, count)]
            yield from _merged(replies, count)
        done = True
    finally:
        for p in procs:  # (done: the end of its input ends it; else killed: none outlives the call)
            p.stdin.close()  # type: ignore[union-attr]
            try:
                p.wait(timeout=10.0 if done else 0.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stdout.close()  # type: ignore[union-attr]
        for log in logs:
            log.close()


def _merged(replies: list[dict[str, Any]], count: int) -> list[SolveResult]:
    """A round's results in order from its shares' replies (share ``w`` holds problems ``w``, ``w +
    count``, ...), or the error of the first problem in order that raised one."""
    failures = [(w + len(r["results"]) * count, r["error"]) for w, r in enumerate(replies) if r["error"] is not None]
    if failures:
        raise min(failures, key=lambda f: f[0])[1]
    results: list[SolveResult] = [None] * sum(len(r["results"]) for r in replies)  # type: ignore[list-item]
    for w, reply in enumerate(replies):
        results[w::count] = reply["results"]
    return results


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


def _pipes(log: Any) -> dict[str, Any]:
    """A worker's standard streams: its input and output piped, its errors to ``log`` (a file: a pipe nobody
    reads would fill and stop it)."""
    return {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": log}


def _send(w: int, proc: subprocess.Popen[bytes], log: Any, data: bytes) -> None:
    """``data`` to worker ``w``'s input, or ``RuntimeError`` naming how it failed."""
    try:
        proc.stdin.write(data)  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
    except OSError:
        _failed(w, proc, log)


def _reply(w: int, proc: subprocess.Popen[bytes], log: Any) -> dict[str, Any]:
    """Worker ``w``'s next reply (``solve_share``'s), or ``RuntimeError`` naming how it failed."""
    try:
        return pickle.load(proc.stdout)  # type: ignore[arg-type]
    except Exception:
        _failed(w, proc, log)
        raise  # (unreached)


def _failed(w: int, proc: subprocess.Popen[bytes], log: Any) -> None:
    """``RuntimeError``: worker ``w`` failed, with its exit status and the end of its error output."""
    if proc.poll() is None:
        proc.kill()
    status = proc.wait()
    log.seek(0)
    tail = log.read().decode(errors="replace").strip()[-800:] or "no error output"
    raise RuntimeError(f"solve_batch: worker process {w} failed (exit status {status}): {tail}")


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """A worker's work (after ``BOOT`` set its import path): the skeleton from ``stdin``, then round after
    round its share of the problems, each answered on ``stdout`` with ``solve_share``'s reply (an error
    that does not pickle sent as its type and message), until its input ends."""
    parent = os.getppid()  # (a worker whose caller died, killed outright, stops at its next problem)
    source = sys.stdin.buffer if stdin is None else stdin
    sink = sys.stdout.buffer if stdout is None else stdout
    skeleton = pickle.load(source)
    while True:
        try:
            problems = pickle.load(source)
        except EOFError:
            return
        reply = solve_share(skeleton, problems, lambda: os.getppid() == parent)
        try:
            data = pickle.dumps(reply)
        except Exception:
            error = reply["error"]
            data = pickle.dumps({**reply, "error": RuntimeError(f"{type(error).__name__}: {error}")})
        sink.write(data)
        sink.flush()
