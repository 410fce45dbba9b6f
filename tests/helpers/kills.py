"""Writers killed with SIGKILL at random moments (issue 33), and the files a kill may leave.

``kill_at_random(script, args, cwd, rng, within)`` runs ``python -c script ARGS``: the script prints
``ready`` once it has imported and loaded what it needs, then writes in a loop; the test kills it at a
random moment ``0..within`` seconds after ``ready`` and waits for it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# The temporary name of fabrik3d.io.files.temp_name: .NAME.PID.RANDOM.tmp
TEMP = re.compile(r"\..+\.(\d+)\.[0-9a-f]+\.tmp")


def kill_at_random(script: str, args: list[str], cwd: Path, rng: np.random.Generator, within: float) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.strip() == "ready", proc.communicate(timeout=60)[1][-3000:]
        time.sleep(float(rng.uniform(0.0, within)))
        assert proc.poll() is None, proc.communicate(timeout=60)[1][-3000:]  # (still writing: killed mid-loop)
    finally:
        proc.kill()
        proc.wait(timeout=60)


def temporaries(folder: Path) -> list[str]:
    """The names in ``folder`` that look like temporaries (a leading dot, or ``tmp`` in the name)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or "tmp" in p.name.lower())


def stale_ones_only(folder: Path) -> None:
    """Every temporary in ``folder`` is one the next write cleans: ``temp_name``'s form, its writer dead."""
    for name in temporaries(folder):
        match = TEMP.fullmatch(name)
        assert match, name
        assert not Path(f"/proc/{match.group(1)}").exists(), name
