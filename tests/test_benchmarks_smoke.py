"""Smoke test of the benchmark scripts: each runs with a tiny ``--quick`` workload and prints its table.

No timing is asserted here (speed is reported by the scripts, never tested);
these tests only keep the scripts runnable as the library changes. A script
exits with 1 when one of its correctness checks fails, so a zero exit also says
that the measured solves kept their bone lengths, stayed finite, and (chain)
took one iteration for unreachable targets.

Every ``benchmarks/bench_*.py`` is picked up. A script that needs an outside
tool names it on a line ``# needs: chromium`` (or mentions chromium at all): on
a machine without it the test skips, under ``CI=true`` it fails
(``conftest.require_executable``).
"""

from __future__ import annotations

import functools
import platform
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import ROOT, require_executable

BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("bench_*.py"))
TIMEOUT_S = 300


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


@functools.cache
def quick(script: str) -> subprocess.CompletedProcess[str]:
    """``script --quick``, run once per test session."""
    text = (BENCH / script).read_text()
    tools = {t.strip() for line in re.findall(r"^# needs:(.*)$", text, re.M) for t in line.split(",") if t.strip()}
    if "chromium" in text:
        tools.add("chromium")
    for tool in sorted(tools):
        require_executable(tool, f"the benchmark {script} needs it")
    return run(str(BENCH / script), "--quick")


def table(out: str) -> tuple[list[str], list[list[str]]]:
    """The first table printed: its column names and its rows split into cells."""
    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---") and set(line) <= {"-", " "})
    spans = [m.span() for m in re.finditer(r"-+", lines[rule])]

    def cells(line: str) -> list[str]:
        # Cells are aligned under the dashes; a left-aligned cell may run up to the next column.
        bounds = [start for start, _ in spans] + [len(line) + 1]
        return [line[bounds[i] : bounds[i + 1]].strip() for i in range(len(spans))]

    rows = []
    for line in lines[rule + 1 :]:
        if not line.strip():
            break
        rows.append(cells(line))
    return cells(lines[rule - 1]), rows


def test_the_benchmark_scripts_are_found() -> None:
    assert {"bench_chain.py", "bench_humanoid.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_runs_quick_and_prints_a_table(script: str) -> None:
    proc = quick(script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"python  : {platform.python_implementation()} {platform.python_version()}, numpy" in proc.stdout
    header, rows = table(proc.stdout)
    assert len(header) >= 3 and all(header), header
    assert rows, proc.stdout
    assert all(len(row) == len(header) and row[0] for row in rows), rows
    assert "FAILED" not in proc.stdout


def by_name(header: list[str], rows: list[list[str]]) -> list[dict[str, str]]:
    return [dict(zip(header, row)) for row in rows]


def test_chain_rows_and_unreachable_targets_in_one_iteration() -> None:
    proc = quick("bench_chain.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = by_name(*table(proc.stdout))
    for targets, start, solves in (("reachable", "warm", 20), ("reachable", "rest", 20), ("unreachable", "warm", 5)):
        for solver in ("fabrik3d.solve_chain", "fabrik3d.solve (Skeleton)", "plain Python FABRIK"):
            (row,) = [r for r in rows if (r["targets"], r["start"], r["solver"]) == (targets, start, solver)]
            assert int(row["solves"]) == solves, row
            if targets == "reachable":
                assert row["reached"] == "100.0%", row
            else:
                assert (row["reached"], row["it mean"], row["it max"]) == ("0.0%", "1.00", "1"), row
            assert float(row["us mean"]) > 0
    plain = [r for r in rows if r["solver"] == "plain Python FABRIK"]
    assert plain and all(r["vs plain"] == "1.00x" for r in plain)
    assert "fabrik3d.solve_chain: unreachable targets in exactly one iteration: 10/10" in proc.stdout
    assert "aim  : solve_chain warm mean (reachable) <= 25 us:" in proc.stdout
    assert "aim  : solve_chain warm mean / plain reference <= 1.5x:" in proc.stdout


def test_humanoid_rows() -> None:
    proc = quick("bench_humanoid.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {r["solver"]: r for r in by_name(*table(proc.stdout))}
    bare, plain = rows["fabrik3d.solve, no limits"], rows["plain Python tree FABRIK"]
    assert bare["frames"] == plain["frames"] == "10"
    assert bare["converged"] == "100.0%"  # the first frames move little: every target reached
    assert float(bare["ms mean"]) > 0 and plain["vs plain"] == "1.00x"
    poles = any("poles" in name for name in rows)
    assert poles or "row not available yet: fabrik3d.Target / solve(..., poles=)" in proc.stdout
    assert "aim  : fabrik3d.solve, no limits: mean <= 1 ms:" in proc.stdout


def test_run_all_runs_the_chosen_scripts() -> None:
    proc = run(str(BENCH / "run_all.py"), "--quick", "humanoid")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "### bench_humanoid.py --quick" in proc.stdout
    assert "bench_chain.py" not in proc.stdout
    assert "all 1 benchmark scripts ran" in proc.stdout
    bad = run(str(BENCH / "run_all.py"), "no_such_benchmark")
    assert bad.returncode == 2
    assert "available" in bad.stderr


def test_soak_runs_every_kind_of_solve_and_finds_no_fault() -> None:
    """A short soak (3000 solves) that reaches each of its three kinds of solve: unconstrained
    batches, constrained single solves and a constrained batch (every round here)."""
    out = run(str(BENCH / "soak.py"), "--count", "3000", "--limited-batch-every", "1", "--seed", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "NaN or inf poses : 0" in out.stdout and "result           : ok" in out.stdout, out.stdout
    limited = int(re.search(r"solves +: 3000 \((\d+) with limits\)", out.stdout).group(1))  # type: ignore[union-attr]
    assert limited > 256, out.stdout  # the constrained batch ran, besides the single solves


def test_the_soak_runs_and_prints_the_share_it_was_asked_for() -> None:
    """``--limited-share 1.0``: every solve has joint limits (it printed half of them before)."""
    out = run(str(BENCH / "soak.py"), "--count", "300", "--limited-share", "1.0", "--seed", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"solves +: 300 \(300 with limits\) = 300 by solve \+ 0 by solve_batch, 0 without", out.stdout)
    bad = run(str(BENCH / "soak.py"), "--limited-share", "1.5")
    assert bad.returncode == 2 and "--limited-share: must be within 0..1, got 1.5" in bad.stderr


def test_a_later_pass_cut_by_the_budget_cuts_the_whole_run_there() -> None:
    """``common.run_cases``: each solve's time is the fastest of its passes, so a later pass that the
    time budget cuts shorter than the first cuts the run's iterations, errors and poses too (before,
    they kept the first pass's length: bench_humanoid's poles row showed 109.7% converged)."""
    sys.path.insert(0, str(BENCH))
    import common

    calls = []

    def call(pose: object, target: float) -> float:
        calls.append(target)
        if len(calls) > 20:  # (the warm-up's 10 solves and the first pass's are quick, later ones slow)
            time.sleep(0.02)
        return target

    case = common.Case("slowing", 0.0, call, lambda r: (r, 1, 0.0), as_array=lambda p: np.zeros((2, 3)))
    run = common.run_cases([case], [float(i) for i in range(10)], warm=True, repeats=2, budget_s=0.05)["slowing"]
    assert 0 < len(run.ns) < 10  # (the second pass was cut)
    assert len(run.iterations) == len(run.errors) == len(run.poses) == len(run.ns)
