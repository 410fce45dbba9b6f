"""three.js's reading of stage glTF files (``tests/js/stage_check.mjs``), shared by the stage reader tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from conftest import JS_DIR, require_node_modules


def three_reports(files: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """``stage_check.mjs``'s report on every file, by the file's name (``pose.glb``...)."""
    node = require_node_modules("three")
    proc = subprocess.run([node, "stage_check.mjs", *map(str, files.values())], cwd=JS_DIR, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    return {name: out[str(path)] for name, path in files.items()}


def three_node(report: dict[str, Any], name: str, under: str | None = None) -> int:
    """The index in ``report["nodes"]`` of the one node named ``name`` (below a node named ``under``)."""
    found = [
        i for i, n in enumerate(report["nodes"]) if n["name"] == name and (under is None or under in n["ancestors"])
    ]
    assert len(found) == 1, f"{len(found)} nodes named {name!r}" + (f" under {under!r}" if under else "")
    return found[0]
