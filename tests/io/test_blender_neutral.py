"""A character as Blender exports it, ``neutral_bone`` included, round trip through Blender (issue 32 item 9's
bar): an A-posed armature with Mixamo's names skinning a mesh with a material and a triangle without
weights, built and exported by Blender (``tests/blender/export_rigs.py``), loads (the neutral bone fixed, not
a joint to pose), poses, exports with ``fabrik3d export``, and Blender's importer reads the export with the
same bones (the neutral bone too), meshes and materials as the file it made, the posed hand where the
library put it (1 mm)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.blender import exported_rigs, imported
from helpers.cli import run

import fabrik3d
from fabrik3d.io.character import load_character

HAND = "mixamorig:LeftHandMiddle1"


@pytest.mark.blender
def test_blender_reads_back_a_posed_character_that_has_its_neutral_bone(tmp_path: Path) -> None:
    model = exported_rigs(tmp_path) / "mixamo.glb"
    c = load_character(model)
    assert "neutral_bone" in c.bones and "neutral_bone" not in c.skeleton.names
    assert c.driver[c.bones.index("neutral_bone")] == -1  # (fixed where the file puts it)
    assert any("neutral bone" in note for note in c.notes)
    sk = c.skeleton
    target = fabrik3d.solve(sk, {}).positions[sk.index(HAND)] + np.array([-0.15, 0.25, 0.2])
    out = tmp_path / "posed.glb"
    proc = run("export", str(model), "--target", "hand_l=" + ",".join(f"{v:.6f}" for v in target), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    before, after = imported(model, tmp_path), imported(out, tmp_path)
    assert "neutral_bone" in after["bones"]
    assert after["bones"] == before["bones"] and after["meshes"] == before["meshes"]
    assert after["materials"] == before["materials"] and "mixamo_skin" in after["materials"]
    posed = fabrik3d.solve(sk, {HAND: target})
    assert np.linalg.norm(np.array(after["heads"][HAND]) - posed.positions[sk.index(HAND)]) < 1e-3
    assert np.linalg.norm(np.array(after["heads"][HAND]) - np.array(before["heads"][HAND])) > 0.2  # (it moved)
    np.testing.assert_allclose(after["heads"]["neutral_bone"], before["heads"]["neutral_bone"], atol=1e-6)
