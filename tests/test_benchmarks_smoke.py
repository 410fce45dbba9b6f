"""Smoke test of the benchmark scripts: each runs with a tiny ``--quick`` workload and prints its table.

No timing is asserted here (speed is reported by the scripts, never tested);
these tests only keep the scripts runnable as the library changes. A script
exits with 1 when one of its correctness checks fails, so a zero exit also says
that the measured solves kept their bone lengths, stayed finite, and (chain)
took one iteration for unreachable targets.
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys

import pytest
from conftest import ROOT

BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("bench_*.py"))
TIMEOUT_S = 120


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def table_lines(out: str) -> list[str]:
    """The lines of the first table: header, dashed rule, rows up to the first blank line."""
    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---") and set(line) <= {"-", " "})
    rows = []
    for line in lines[rule + 1 :]:
        if not line.strip():
            break
        rows.append(line)
    return [lines[rule - 1], lines[rule], *rows]


def test_the_benchmark_scripts_are_found() -> None:
    assert "bench_chain.py" in SCRIPTS
    assert "bench_humanoid.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_runs_quick_and_prints_its_table(script: str) -> None:
    proc = run(str(BENCH / script), "--quick")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert f"python  : {platform.python_implementation()} {platform.python_version()}, numpy" in out
    header, rule, *rows = table_lines(out)
    assert "vs plain" in header
    assert len(rule.split()) == len(re.split(r"\s{2,}", header.strip()))
    assert rows, out
    assert any(row.startswith("fabrik3d.") or " fabrik3d." in row for row in rows), out
    assert any("plain" in row and row.rstrip().endswith("1.00x") for row in rows), out
    assert "FAILED" not in out


def test_chain_table_has_every_row_and_unreachable_targets_take_one_iteration() -> None:
    proc = run(str(BENCH / "bench_chain.py"), "--quick")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _, _, *rows = table_lines(proc.stdout)
    for targets, start in (
        ("reachable", "warm"),
        ("reachable", "rest"),
        ("unreachable", "warm"),
        ("unreachable", "rest"),
    ):
        for solver in ("fabrik3d.solve_chain", "fabrik3d.solve (Skeleton)", "plain Python FABRIK"):
            matching = [r for r in rows if r.startswith(targets) and f" {start} " in r and solver in r]
            assert len(matching) == 1, (targets, start, solver)
    unreachable = [r for r in rows if r.startswith("unreachable") and "fabrik3d.solve_chain" in r]
    for row in unreachable:
        # reached 0.0%, iterations mean/median/max all one
        assert row.split()[4:8] == ["0.0%", "1.00", "1.00", "1"], row
    assert "fabrik3d.solve_chain: unreachable targets in exactly one iteration: 10/10" in proc.stdout
    assert "aim  : solve_chain warm mean (reachable) <= 25 us:" in proc.stdout


def test_run_all_runs_the_chosen_scripts() -> None:
    proc = run(str(BENCH / "run_all.py"), "--quick", "humanoid")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "### bench_humanoid.py --quick" in proc.stdout
    assert "bench_chain.py" not in proc.stdout
    assert "all 1 benchmark scripts ran" in proc.stdout
    bad = run(str(BENCH / "run_all.py"), "no_such_benchmark")
    assert bad.returncode == 2
    assert "available" in bad.stderr
