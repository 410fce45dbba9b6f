"""Blender in the tests: run one of ``tests/blender``'s scripts headless (``blender -b``); skips (fails on
CI) without Blender."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from conftest import ROOT, require_executable

SCRIPTS = ROOT / "tests" / "blender"


def run_script(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``blender -b --python tests/blender/SCRIPT -- ARGS``; an assertion error with its output if it fails."""
    blender = require_executable("blender", "apt-get install blender python3-numpy")
    done = subprocess.run(
        [blender, "-b", "--python", str(SCRIPTS / script), "--", *args],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def exported_rigs(folder: Path) -> Path:
    """Rigify's metarig and a Mixamo-named armature, built and exported by Blender into ``folder``
    (``export_rigs.py``: ``rigify.glb``, ``mixamo.glb``)."""
    run_script("export_rigs.py", str(folder))
    assert (folder / "rigify.glb").exists() and (folder / "mixamo.glb").exists()
    return folder


def imported(path: Path, work: Path) -> dict[str, Any]:
    """What Blender's importer makes of the glTF ``path`` (``scene_contents.py``)."""
    out = work / (path.stem + "-contents.json")
    run_script("scene_contents.py", str(path), str(out))
    return json.loads(out.read_text())
