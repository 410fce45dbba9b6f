"""Shared helpers for the benchmark scripts: command line, machine, timing, tables, workloads.

Every ``bench_*.py`` script in this folder imports this module (the folder is on
``sys.path`` when a script runs) and follows the same pattern:

1. ``args = parse_args(__doc__)`` (``--quick`` for a tiny workload, ``--repeats``,
   ``--profile``);
2. ``print_header(title, args)`` prints the machine;
3. ``run_cases`` times each solve alone with ``time.perf_counter_ns`` (``timed``),
   after untimed warm-up solves, in passes that go round the cases of a table
   several times; each solve's time is the fastest of its passes;
4. ``summarize`` turns the per-call times into ``Stats`` and ``format_table``
   prints an aligned table with a ratio against a baseline run in the same
   process (``ratio``);
5. aims are printed with ``aim_line``; correctness checks with ``check_line``,
   and a failed check makes the script exit with status 1 (timings never do).

The reference solvers (``plain_fabrik``, ``plain_tree_fabrik``) are textbook
FABRIK on Python floats, written here so that every table can state its speed
against them. They follow fabrik3d's stopping rules (tolerance, iteration limit,
the stall rule) so that iteration counts compare, and nothing else.

Times are in nanoseconds internally; tables show microseconds (us) or milliseconds.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import math
import os
import platform
import pstats
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The test suite's independent helpers (helpers.limits: poses within limits, limit measurement;
# helpers.web: the server and browser) serve the scripts too.
sys.path.insert(0, str(ROOT / "tests"))
# fabrik3d.chain.STALL, restated so the references do not import the library's internals.
STALL = 1e-3


# -- command line and machine -----------------------------------------------------------------
def parse_args(
    description: str | None, argv: Sequence[str] | None = None, budget_s: float = 2.0, repeats: int = 3
) -> argparse.Namespace:
    """The options every benchmark script takes.

    ``--repeats`` defaults to ``repeats`` (1 with ``--quick``).
    ``--budget`` (seconds, default ``budget_s``, 0.3 with ``--quick``) bounds one
    timed pass of one case (see ``run_cases``), so that a slow solver cannot make
    a script run for minutes.
    """
    parser = argparse.ArgumentParser(description=(description or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny workload (smoke test), timings meaningless")
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed passes per case; each solve's fastest time is kept"
    )
    parser.add_argument("--budget", type=float, default=None, help="seconds at most per timed pass of one case")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of the main fabrik3d call")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else repeats
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.budget is None:
        args.budget = 0.3 if args.quick else budget_s
    if not args.budget > 0:
        parser.error("--budget must be positive")
    return args


def machine_lines() -> list[str]:
    """Platform, CPU, Python, numpy and fabrik3d versions (and the git commit, when known)."""
    import fabrik3d

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    load = ", load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    return [
        f"machine : {platform.platform()}, {cpu}, {_cores()} cores{load}",
        f"python  : {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}",
        f"fabrik3d: {fabrik3d.__version__}" + (f" (git {commit})" if commit else ""),
    ]


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def print_header(title: str, args: argparse.Namespace) -> None:
    """Title, machine lines and the run mode."""
    print(title)
    print("=" * len(title))
    for line in machine_lines():
        print(line)
    mode = "QUICK (smoke test: timings are not meaningful)" if args.quick else "full"
    budget = f", at most {args.budget:g} s per pass" if hasattr(args, "budget") else ""
    print(f"mode    : {mode}; {args.repeats} timed pass(es) per case, each solve's fastest kept{budget}")
    print()


# -- timing -----------------------------------------------------------------------------------
def timed(call: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    """``call(*args)`` and its wall time in nanoseconds (``time.perf_counter_ns``)."""
    t0 = time.perf_counter_ns()
    out = call(*args)
    return out, time.perf_counter_ns() - t0


@dataclass(frozen=True)
class Stats:
    """Summary of per-call times, in nanoseconds."""

    count: int
    mean: float
    median: float
    p95: float
    max: float

    def us(self, field: str) -> float:
        """A field in microseconds."""
        return getattr(self, field) / 1e3

    def ms(self, field: str) -> float:
        """A field in milliseconds."""
        return getattr(self, field) / 1e6


def summarize(ns: Sequence[int]) -> Stats:
    """``Stats`` of per-call times ``ns`` (nanoseconds, at least one)."""
    a = np.asarray(ns, dtype=float)
    return Stats(len(a), float(a.mean()), float(np.median(a)), float(np.percentile(a, 95)), float(a.max()))


def ratio(value: float, baseline: float) -> str:
    """``value / baseline`` as ``"1.23x"``."""
    return f"{value / baseline:.2f}x" if baseline > 0 else "n/a"


def profile(call: Callable[[], Any], count: int, top: int = 18) -> str:
    """cProfile of ``count`` calls of ``call``: the ``top`` functions by own time."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(count):
        call()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()


# -- cases: solvers timed side by side -------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One solver in a table.

    ``call(start, target)`` is the timed call: ``start`` a pose in the case's own
    form (``rest`` for the first), ``target`` one step of the workload as made by
    ``target_form``. ``read`` maps its result to ``(pose for the next warm start,
    iterations, error)`` (for several targets the largest error) and ``as_array``
    a pose to ``(n, 3)``.
    """

    label: str
    rest: Any
    call: Callable[[Any, Any], Any]
    read: Callable[[Any], tuple[Any, int, float]]
    as_array: Callable[[Any], np.ndarray] = np.asarray
    target_form: Callable[[np.ndarray], Any] = lambda t: t


SOLVE_CHAIN = "fabrik3d.solve_chain"


def solve_chain_case(rest: np.ndarray, tolerance: float, max_iterations: int) -> Case:
    """The ``fabrik3d.solve_chain`` row of a chain table (label ``SOLVE_CHAIN``)."""
    import fabrik3d

    return Case(
        SOLVE_CHAIN,
        rest,
        lambda pos, t: fabrik3d.solve_chain(pos, t, tolerance=tolerance, max_iterations=max_iterations),
        lambda r: (r.positions, r.iterations, r.error),
    )


@dataclass(frozen=True)
class Run:
    """Per-step results of one case over one workload: times (ns), iterations, errors, poses."""

    ns: list[int]
    iterations: np.ndarray
    errors: np.ndarray
    poses: np.ndarray  # (steps, n, 3)


def run_cases(
    cases: Sequence[Case], targets: Sequence[Any], warm: bool, repeats: int, budget_s: float = math.inf
) -> dict[str, Run]:
    """Solve the steps ``targets`` in turn with every case.

    Warm: each solve starts from the case's previous solution (the first from
    rest); else every solve starts from rest. Each case first makes a few untimed
    warm-up solves; then the passes (one case over every step) go round the cases
    ``repeats`` times (A B A B ...), so that a drift of the machine hits all cases
    alike. The passes make the same solves with the same results, so each solve's
    time is the fastest of its passes: the work, without most of the preemptions
    of a busy machine. A pass stops after the step that takes it past ``budget_s`` seconds;
    a case whose pass was cut short is not repeated, and its ``Run`` covers only
    the first steps (``len(run.ns) < len(targets)``: tables show the count).
    """
    forms = {c.label: [c.target_form(t) for t in targets] for c in cases}
    for c in cases:
        _one_pass(c, forms[c.label][: min(50, len(targets))], warm, budget_s / 5)
    passes: dict[str, list[Run]] = {c.label: [] for c in cases}
    for _ in range(repeats):
        for c in cases:
            if passes[c.label] and len(passes[c.label][0].ns) < len(targets):
                continue
            passes[c.label].append(_one_pass(c, forms[c.label], warm, budget_s))
    out = {}
    for label, runs in passes.items():
        first = runs[0]
        if len(runs) > 1:  # the same solves in every pass: keep each one's fastest time
            # (over the steps every pass made: a later pass the budget cut shorter cuts the run there)
            k = min(len(r.ns) for r in runs)
            ns = [min(times) for times in zip(*(r.ns[:k] for r in runs))]
            first = Run(ns, first.iterations[:k], first.errors[:k], first.poses[:k])
        out[label] = first
    return out


def _one_pass(case: Case, steps: Sequence[Any], warm: bool, budget_s: float) -> Run:
    """One timed pass of ``case`` over ``steps``, cut short after ``budget_s`` seconds.

    Only per-step numbers and each pose as a float array are kept: holding every
    result object would grow the heap that Python's garbage collector walks, and
    charge ever longer collections to the solves being timed.
    """
    ns: list[int] = []
    iterations: list[int] = []
    errors: list[float] = []
    poses: list[np.ndarray] = []
    pose = case.rest
    gc.collect()
    end = time.perf_counter() + budget_s
    for step in steps:
        result, dt = timed(case.call, pose if warm else case.rest, step)
        pose, it, err = case.read(result)
        ns.append(dt)
        iterations.append(it)
        errors.append(err)
        poses.append(np.asarray(case.as_array(pose), dtype=float))
        if time.perf_counter() > end:
            break
    return Run(ns, np.array(iterations, dtype=int), np.array(errors, dtype=float), np.array(poses))


def cut_notes(runs: dict[str, Run], steps: int, budget_s: float, what: str = "") -> list[str]:
    """A note per run cut short by the time budget of ``run_cases``."""
    where = f" ({what})" if what else ""
    return [
        f"note : {label}{where}: cut at {len(run.ns)} of {steps} solves by the {budget_s:g} s budget per pass"
        for label, run in runs.items()
        if len(run.ns) < steps
    ]


# -- output -----------------------------------------------------------------------------------
def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An aligned plain-text table: text columns left-aligned, numbers right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(_is_number(row[i]) for row in rows) if rows else False for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(list(headers)), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _is_number(value: Any) -> bool:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and (value.endswith("x") or value.endswith("%") or value in ("-", "n/a"))


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v == 0 or 0.01 <= abs(v) < 1e9:
            return f"{v:.2f}" if abs(v) < 100 else f"{v:.1f}" if abs(v) < 1e4 else f"{v:.0f}"
        return f"{v:.2e}"
    return str(value)


def percent(part: int, whole: int) -> str:
    """``part / whole`` as ``"99.9%"``."""
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def aim_line(what: str, value: float, limit: float, unit: str) -> str:
    """``aim: WHAT <= LIMIT UNIT: VALUE UNIT  met|MISSED`` (an aim, never a failure)."""
    verdict = "met" if value <= limit else "MISSED"
    return f"aim  : {what} <= {limit:g}{unit}: {value:.2f}{unit}  {verdict}"


class Checks:
    """Correctness checks of a benchmark run; ``exit_code()`` is 1 when one failed."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    def line(self, what: str, ok: bool, detail: str) -> str:
        """``check: WHAT: DETAIL  ok|FAILED``, remembering failures."""
        if not ok:
            self.failed.append(what)
        return f"check: {what}: {detail}  {'ok' if ok else 'FAILED'}"

    def exit_code(self) -> int:
        """0 if every check passed, else 1 (after printing which failed)."""
        if self.failed:
            print(f"FAILED checks: {', '.join(self.failed)}", file=sys.stderr)
            return 1
        return 0


# -- workloads --------------------------------------------------------------------------------
def straight_chain(bones: int, length: float = 1.0) -> np.ndarray:
    """``(bones + 1, 3)`` joints of a chain along +Y from the origin."""
    return np.column_stack([np.zeros(bones + 1), np.arange(bones + 1) * length, np.zeros(bones + 1)])


def ball_points(rng: np.random.Generator, count: int, radius: float) -> np.ndarray:
    """``(count, 3)`` points uniform in the ball of ``radius`` about the origin.

    Directions from normals, radius ``radius * u ** (1/3)`` with ``u`` uniform in [0, 1).
    """
    d = rng.standard_normal((count, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return d * (radius * rng.random(count) ** (1.0 / 3.0))[:, None]


def shell_points(rng: np.random.Generator, count: int, r_min: float, r_max: float) -> np.ndarray:
    """``(count, 3)`` points uniform in volume between radii ``r_min`` and ``r_max``."""
    d = rng.standard_normal((count, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = (r_min**3 + rng.random(count) * (r_max**3 - r_min**3)) ** (1.0 / 3.0)
    return d * r[:, None]


def chain_workload(quick: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The core issue's chain workload: ``(rest (11, 3), reachable (1000, 3), unreachable (200, 3))``.

    Ten bones of length 1 along +Y from the origin; targets from
    ``numpy.random.default_rng(0)``: 1000 uniform in the ball of radius 9, then 200
    at radius 12 to 15 (beyond the reach of 10). ``quick`` keeps the first 20 and 5.
    """
    rng = np.random.default_rng(0)
    reachable = ball_points(rng, 1000, 9.0)
    unreachable = shell_points(rng, 200, 12.0, 15.0)
    if quick:
        reachable, unreachable = reachable[:20], unreachable[:5]
    return straight_chain(10), reachable, unreachable


def chain_drag_path(quick: bool = False) -> np.ndarray:
    """``(1000, 3)`` targets along a smooth closed-form path inside the chain's reach, about 0.05 apart.

    An interactive drag (each solve warm-started from the last) for the chain of
    ``chain_workload``: ``(4.5 sin a, 2 + 4 sin(1.7 a + 0.5), 4.5 cos(1.3 a))`` for
    ``a`` in [0, 5), at most 8.8 from the base. ``quick`` keeps the first 20.
    """
    a = np.arange(20 if quick else 1000) * 0.005
    return np.column_stack([4.5 * np.sin(a), 2.0 + 4.0 * np.sin(1.7 * a + 0.5), 4.5 * np.cos(1.3 * a)])


# -- reference solvers (plain Python floats) ----------------------------------------------------
Point = tuple[float, float, float]


def plain_fabrik(
    joints: list[Point], lengths: list[float], target: Point, tol: float, max_it: int
) -> tuple[list[Point], int, float]:
    """Textbook single-chain FABRIK on tuples of floats: ``(joints, iterations, error)``.

    ``joints[0]`` is the fixed base, ``lengths[i]`` the bone from joint ``i`` to
    ``i + 1``; ``joints`` is not modified. Unreachable: straightened in one
    iteration; else forward and backward reaching until the error is within
    ``tol``, ``max_it`` iterations, or an improvement below ``STALL * tol``.
    """
    p = list(joints)
    n = len(p)
    tx, ty, tz = target
    bx, by, bz = p[0]
    if math.sqrt((tx - bx) ** 2 + (ty - by) ** 2 + (tz - bz) ** 2) > sum(lengths):
        for i in range(n - 1):
            x, y, z = p[i]
            lam = lengths[i] / math.sqrt((tx - x) ** 2 + (ty - y) ** 2 + (tz - z) ** 2)
            p[i + 1] = ((1 - lam) * x + lam * tx, (1 - lam) * y + lam * ty, (1 - lam) * z + lam * tz)
        x, y, z = p[-1]
        return p, 1, math.sqrt((tx - x) ** 2 + (ty - y) ** 2 + (tz - z) ** 2)
    x, y, z = p[-1]
    err = math.sqrt((tx - x) ** 2 + (ty - y) ** 2 + (tz - z) ** 2)
    it = 0
    while err > tol and it < max_it:
        it += 1
        p[-1] = (tx, ty, tz)  # stage 1: forward reaching
        for i in range(n - 2, -1, -1):
            x1, y1, z1 = p[i + 1]
            x, y, z = p[i]
            lam = lengths[i] / math.sqrt((x1 - x) ** 2 + (y1 - y) ** 2 + (z1 - z) ** 2)
            p[i] = ((1 - lam) * x1 + lam * x, (1 - lam) * y1 + lam * y, (1 - lam) * z1 + lam * z)
        p[0] = (bx, by, bz)  # stage 2: backward reaching
        for i in range(n - 1):
            x, y, z = p[i]
            x1, y1, z1 = p[i + 1]
            lam = lengths[i] / math.sqrt((x1 - x) ** 2 + (y1 - y) ** 2 + (z1 - z) ** 2)
            p[i + 1] = ((1 - lam) * x + lam * x1, (1 - lam) * y + lam * y1, (1 - lam) * z + lam * z1)
        x, y, z = p[-1]
        new = math.sqrt((tx - x) ** 2 + (ty - y) ** 2 + (tz - z) ** 2)
        stalled = new > tol and err - new < STALL * tol
        err = new
        if stalled:
            break
    return p, it, err


def plain_tree_fabrik(
    parents: Sequence[int],
    order: Sequence[int],
    lengths: Sequence[float],
    joints: list[Point],
    goals: dict[int, Point],
    tol: float,
    max_it: int,
) -> tuple[list[Point], int, float]:
    """Textbook multi-effector FABRIK (the paper's section 3) on tuples: ``(joints, iterations, largest error)``.

    ``order`` lists joints parents first; ``goals`` maps effector index to target.
    Only joints on a path from the root to a goal move (a reference for skeletons
    whose every leaf is targeted). Stage 1 inward with the plain centroid at
    sub-bases, stage 2 outward with the root fixed; stops as ``plain_fabrik``.
    ``joints`` is not modified.
    """
    p = list(joints)
    active = set()
    for e in goals:
        j = e
        while j >= 0 and j not in active:
            active.add(j)
            j = parents[j]
    up = [j for j in order[1:] if j in active]
    down = up[::-1]
    kids: dict[int, list[int]] = {}
    for j in up:
        kids.setdefault(parents[j], []).append(j)
    q = list(p)

    def largest() -> float:
        return max(math.dist(p[e], t) for e, t in goals.items())

    err = largest()
    it = 0
    while err > tol and it < max_it:
        it += 1
        for j in down:  # stage 1: effectors onto targets, inward, centroids at sub-bases
            if j in goals:
                q[j] = goals[j]
                continue
            sx = sy = sz = 0.0
            x, y, z = p[j]
            for c in kids[j]:
                cx, cy, cz = q[c]
                lam = lengths[c] / math.sqrt((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2)
                sx += (1 - lam) * cx + lam * x
                sy += (1 - lam) * cy + lam * y
                sz += (1 - lam) * cz + lam * z
            k = len(kids[j])
            q[j] = (sx / k, sy / k, sz / k)
        for j in up:  # stage 2: root fixed, outward
            x, y, z = p[parents[j]]
            x1, y1, z1 = q[j]
            lam = lengths[j] / math.sqrt((x1 - x) ** 2 + (y1 - y) ** 2 + (z1 - z) ** 2)
            p[j] = ((1 - lam) * x + lam * x1, (1 - lam) * y + lam * y1, (1 - lam) * z + lam * z1)
        new = largest()
        stalled = new > tol and err - new < STALL * tol
        err = new
        if stalled:
            break
    return p, it, err
