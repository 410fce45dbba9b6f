"""Running the ``fabrik3d`` command line in tests: a subprocess, and the one-line error check."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabrik3d.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], pattern: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("fabrik3d"), lines[0]
    assert re.search(pattern, lines[0]), lines[0]
