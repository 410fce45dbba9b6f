"""Chain benchmark: fabrik3d on a 10-bone chain against a plain pure-Python FABRIK in the same process.

The core issue's workload (``common.chain_workload``): ten bones of length 1 along
+Y from the origin, 1000 targets uniform in the ball of radius 9 and 200
unreachable ones at radius 12 to 15, tolerance 1e-3, at most 100 iterations.
Each target set is solved twice per solver: warm (each solve starts from the
previous solution) and from rest. A third set, ``drag``, is 1000 small steps along
a smooth path (``common.chain_drag_path``), solved warm, as an interactive drag is.

Rows: ``fabrik3d.solve_chain``; ``fabrik3d.solve`` on the same chain as a
``Skeleton`` with one target; constrained chains (cone of 30 degrees on every
joint, hinges on every joint) once ``fabrik3d.constraints`` provides them; and
the reference ``plain_fabrik`` (``common.py``), whose mean gives the ratio column.

Run: ``python benchmarks/bench_chain.py [--quick] [--repeats N] [--budget S] [--profile]``.
"""

from __future__ import annotations

import sys
from typing import Any

import common
import numpy as np

import fabrik3d

TOL = 1e-3
MAX_IT = 100
PLAIN = "plain Python FABRIK"
CHAIN = common.SOLVE_CHAIN
TREE = "fabrik3d.solve (Skeleton)"
# Unconstrained rows: an unreachable target straightens the chain in exactly one iteration.
ONE_STEP = (CHAIN, TREE)


def make_cases(rest: np.ndarray) -> tuple[list[common.Case], list[str]]:
    """The solvers to compare, and notes on rows not available in this version."""
    n = len(rest)
    names = [f"j{i}" for i in range(n)]
    effector = names[-1]
    lengths = np.linalg.norm(np.diff(rest, axis=0), axis=1).tolist()
    cases = [
        common.solve_chain_case(rest, TOL, MAX_IT),
        _skeleton_case(TREE, fabrik3d.Skeleton(names, list(range(-1, n - 1)), rest), effector),
    ]
    notes = []
    for label, make in (("cones 30 deg", _cones), ("hinges +-90 deg", _hinges)):
        try:
            skeleton = fabrik3d.Skeleton(names, list(range(-1, n - 1)), rest, constraints=make(names))
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            reason = str(exc).split(" (")[0]
            notes.append(f"row not available yet: fabrik3d.solve, {label} ({type(exc).__name__}: {reason})")
            continue
        cases.append(_skeleton_case(f"fabrik3d.solve, {label}", skeleton, effector))
    cases.append(
        common.Case(
            PLAIN,
            [tuple(p) for p in rest.tolist()],
            lambda pos, t: common.plain_fabrik(pos, lengths, t, TOL, MAX_IT),
            lambda r: r,
            target_form=lambda t: tuple(t.tolist()),
        )
    )
    return cases, notes


def _skeleton_case(label: str, skeleton: fabrik3d.Skeleton, effector: str) -> common.Case:
    return common.Case(
        label,
        skeleton.rest_positions,
        lambda pos, t: fabrik3d.solve(skeleton, {effector: t}, positions=pos, tolerance=TOL, max_iterations=MAX_IT),
        lambda r: (r.positions, r.iterations, r.errors[effector]),
    )


def _cones(names: list[str]) -> dict[str, Any]:
    from fabrik3d.model.constraints import Cone  # type: ignore[attr-defined]

    return {name: Cone(30.0) for name in names[:-1]}


def _hinges(names: list[str]) -> dict[str, Any]:
    from fabrik3d.model.constraints import Hinge  # type: ignore[attr-defined]

    # Axes alternate between world X and Z (both perpendicular to the rest bones along +Y).
    return {
        name: Hinge((1.0, 0.0, 0.0) if i % 2 == 0 else (0.0, 0.0, 1.0), -90.0, 90.0)
        for i, name in enumerate(names[:-1])
    }


def main(argv: list[str] | None = None) -> int:
    args = common.parse_args(__doc__, argv, budget_s=1.0, repeats=5)
    common.print_header("fabrik3d chain benchmark: 10 bones of length 1", args)
    rest, reachable, unreachable = common.chain_workload(args.quick)
    cases, notes = make_cases(rest)
    sets = {"reachable": reachable, "unreachable": unreachable, "drag": common.chain_drag_path(args.quick)}
    print(
        f"workload: {len(reachable)} targets in the ball of radius 9, {len(unreachable)} at radius 12-15 "
        f"(default_rng(0)); drag: {len(sets['drag'])} steps of ~0.05 along a smooth path (warm only);\n"
        f"          tolerance {TOL:g}, at most {MAX_IT} iterations; us = microseconds per solve; "
        "vs plain = mean / plain reference's mean"
    )
    print()
    runs = {
        (s, start): common.run_cases(cases, sets[s], start == "warm", args.repeats, args.budget)
        for s in sets
        for start in START
        if s != "drag" or start == "warm"
    }
    print(common.format_table(HEADERS, [row for key, by_case in runs.items() for row in table_rows(key, by_case)]))
    print()
    for note in notes:
        print(note)
    for (s, start), by_case in runs.items():
        for line in common.cut_notes(by_case, len(sets[s]), args.budget, f"{s}, {start}"):
            print(line)
    checks = common.Checks()
    for line in check_lines(cases, runs, rest, checks):
        print(line)
    warm = common.summarize(runs[("reachable", "warm")][CHAIN].ns)
    plain = common.summarize(runs[("reachable", "warm")][PLAIN].ns)
    print(common.aim_line("solve_chain warm mean (reachable)", warm.us("mean"), 25.0, " us"))
    print(common.aim_line("solve_chain warm mean (reachable), issue 6", warm.us("mean"), 15.0, " us"))
    print(common.aim_line("solve_chain warm mean / plain reference", warm.mean / plain.mean, 1.5, "x"))
    drag = common.summarize(runs[("drag", "warm")][CHAIN].ns)
    print(f"info : solve_chain warm mean on the drag path (interactive use): {drag.us('mean'):.2f} us")
    one_step = {label: common.summarize(runs[("unreachable", "warm")][label].ns).mean for label in ONE_STEP}
    print(
        f"info : solve on the chain costs {(one_step[TREE] - one_step[CHAIN]) / 1e3:.1f} us per call more than "
        "solve_chain (unreachable targets, one iteration: target parsing, the start pose, frames, the result)"
    )
    if args.profile:
        print()
        print("profile: fabrik3d.solve_chain, warm, reachable targets (by own time)")
        print(_profile(cases[0], reachable))
    return checks.exit_code()


START = ("warm", "rest")
HEADERS = [
    "targets",
    "start",
    "solves",
    "solver",
    "reached",
    "it mean",
    "it med",
    "it max",
    "us mean",
    "us med",
    "us p95",
    "vs plain",
]


def table_rows(key: tuple[str, str], runs: dict[str, common.Run]) -> list[list[Any]]:
    """Table rows of one (target set, start) pair, one per case; the ratio is to the plain reference's mean."""
    set_name, start = key
    plain_mean = common.summarize(runs[PLAIN].ns).mean
    rows = []
    for label, run in runs.items():
        s = common.summarize(run.ns)
        it = run.iterations
        count = len(run.ns)
        rows.append(
            [
                set_name,
                start,
                count,
                label,
                common.percent(int(np.sum(run.errors <= TOL)), count),
                float(it.mean()),
                float(np.median(it)),
                int(it.max()),
                s.us("mean"),
                s.us("median"),
                s.us("p95"),
                common.ratio(s.mean, plain_mean),
            ]
        )
    return rows


def check_lines(
    cases: list[common.Case],
    runs: dict[tuple[str, str], dict[str, common.Run]],
    rest: np.ndarray,
    checks: common.Checks,
) -> list[str]:
    """Correctness of the measured solves (not timings): finite poses with their bone lengths,
    unreachable targets in one iteration, ``solve`` equal to ``solve_chain`` from rest."""
    lengths = np.linalg.norm(np.diff(rest, axis=0), axis=1)
    lines = []
    for c in cases:
        if c.label == PLAIN:
            continue
        poses = np.concatenate([by_case[c.label].poses for by_case in runs.values()])
        finite = bool(np.isfinite(poses).all())
        drift = float(np.abs(np.linalg.norm(np.diff(poses, axis=1), axis=2) / lengths - 1).max()) if finite else np.inf
        lines.append(
            checks.line(
                f"{c.label}: every pose finite, bone lengths kept",
                finite and drift <= 1e-9,
                f"{len(poses)} poses, largest relative bone-length drift {drift:.1e}",
            )
        )
        if c.label in ONE_STEP:
            its = np.concatenate([runs[("unreachable", start)][c.label].iterations for start in START])
            ones = int(np.sum(its == 1))
            lines.append(
                checks.line(
                    f"{c.label}: unreachable targets in exactly one iteration",
                    ones == len(its),
                    f"{ones}/{len(its)} solves (warm and rest)",
                )
            )
    gap = max(_gap(runs[(s, "rest")][TREE], runs[(s, "rest")][CHAIN]) for s in ("reachable", "unreachable"))
    lines.append(
        checks.line("solve gives solve_chain's pose (from rest, 1e-9)", gap <= 1e-9, f"largest difference {gap:.1e}")
    )
    gap = max(_gap(by_case[CHAIN], by_case[PLAIN]) for by_case in runs.values())
    lines.append(f"info : solve_chain vs plain reference, all runs: largest joint difference {gap:.1e}")
    return lines


def _gap(a: common.Run, b: common.Run) -> float:
    """Largest joint difference between two runs' poses, over the steps both made."""
    m = min(len(a.ns), len(b.ns))
    return float(np.abs(a.poses[:m] - b.poses[:m]).max())


def _profile(case: common.Case, targets: np.ndarray) -> str:
    forms = [case.target_form(t) for t in targets]
    state = [case.rest]
    it = iter(range(10**9))

    def one() -> None:
        k = next(it) % len(forms)
        state[0] = case.read(case.call(state[0], forms[k]))[0]

    return common.profile(one, 5 * len(forms))


if __name__ == "__main__":
    sys.exit(main())
