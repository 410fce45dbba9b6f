"""The Khronos glTF validator (npm gltf-validator in tests/js) on files: ``validate(*paths)`` -> report per path
(``errors``, ``warnings``, ``messages``); skips (or fails under CI=true) without node and the package."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import JS_DIR, require_node_modules


def validate(*paths: Path) -> dict[str, dict]:
    node = require_node_modules("gltf-validator")
    cmd = [node, "validate.mjs", *map(str, paths)]
    proc = subprocess.run(cmd, cwd=JS_DIR, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)
