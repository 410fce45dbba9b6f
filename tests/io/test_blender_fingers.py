"""Blender reads the fingers fabrik3d exports (issue 30's bar): a character with a fist and a pointing
hand, written by ``fabrik3d export``, imported by Blender's own glTF importer (``blender -b``): every
finger bone's head within 1 mm of where the library put it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, require_executable
from helpers.character_asset import write_character
from helpers.cli import run

import fabrik3d
from fabrik3d.io.character import load_character
from fabrik3d.solver.hands import finger_joints

SCRIPT = ROOT / "tests" / "blender" / "pose_bone_heads.py"


@pytest.mark.blender
@pytest.mark.parametrize("convention", ["mixamo", "blender"])
def test_blender_puts_every_finger_bone_where_the_library_did(convention: str, tmp_path: Path) -> None:
    blender = require_executable("blender", "apt-get install blender python3-numpy")
    model = write_character(tmp_path, "hero", convention, fingers=True)
    out = tmp_path / "hands.glb"
    proc = run("export", str(model), "--hand", "l=fist", "--hand", "r=point", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    heads = tmp_path / "heads.json"
    done = subprocess.run(
        [blender, "-b", "--python", str(SCRIPT), "--", str(out), str(heads)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and heads.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    read = json.loads(heads.read_text())
    sk = load_character(model).skeleton
    rest = fabrik3d.solve(sk, {})
    p, q = fabrik3d.shape_hand(sk, rest.positions, rest.rotations, "l", "fist")
    p, _ = fabrik3d.shape_hand(sk, p, q, "r", "point")
    checked = 0
    for side in ("l", "r"):
        for joints in finger_joints(sk, side).values():
            for j in joints:
                assert np.linalg.norm(np.array(read[sk.names[j]]) - p[j]) <= 1e-3, sk.names[j]
                checked += 1
    assert checked == 30
