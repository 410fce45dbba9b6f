"""The mannequin body (issue 31, item 1): its mesh, its glTF export (the Khronos validator, three.js and
Blender read it skinned where fabrik3d skins it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, ROOT, require_executable, require_node_modules
from helpers.cli import assert_one_line_error, run

import fabrik3d
from fabrik3d.io.character import load_character
from fabrik3d.model.mannequin import mannequin_mesh

BODY = fabrik3d.presets.get("humanoid")


@pytest.fixture(scope="module")
def posed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, fabrik3d.SolveResult]:
    out = tmp_path_factory.mktemp("mannequin") / "mannequin.glb"
    proc = run(
        "export", "humanoid", "--target", "hand_l=0.3,1.2,0.4", "--hand", "l=fist", "--mannequin", "-o", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    r = fabrik3d.solve(BODY, {"hand_l": [0.3, 1.2, 0.4]})
    p, q = fabrik3d.shape_hand(BODY, r.positions, r.rotations, "l", "fist")
    return out, fabrik3d.SolveResult(p, q, 0, {}, True)


def test_the_mesh_is_a_closed_body_standing_on_the_ground() -> None:
    positions, normals, joints, weights, triangles = mannequin_mesh(BODY)
    assert 5_000 <= len(positions) <= 30_000
    assert np.all(weights == 1.0) and joints.max() < len(BODY)
    assert triangles.max() < len(positions)
    assert abs(float(positions[:, 1].min())) <= 0.005  # (the soles on the rest ground, y = 0)
    assert float(positions[:, 1].max()) == pytest.approx(float(BODY.rest_positions[:, 1].max()), abs=0.03)
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-5)
    # each triangle's face turns the way its vertices' normals do (outward)
    face = np.cross(
        positions[triangles[:, 1]] - positions[triangles[:, 0]], positions[triangles[:, 2]] - positions[triangles[:, 0]]
    )
    assert np.all(np.einsum("ij,ij->i", face, normals[triangles].sum(axis=1)) >= 0)
    octopus = fabrik3d.presets.get("octopus")
    assert len(mannequin_mesh(octopus)[0]) > 0  # (any skeleton: round segments)


@pytest.mark.node
def test_the_khronos_validator_and_three_js_read_the_mannequin(posed) -> None:
    path, pose = posed
    node = require_node_modules("gltf-validator", "three")
    report = json.loads(subprocess.run([node, "validate.mjs", str(path)], cwd=JS_DIR, capture_output=True, text=True,
                                       timeout=300, check=True).stdout)[str(path)]  # fmt: skip
    assert report["errors"] == 0 and report["warnings"] == 0, report["messages"]
    skinned = json.loads(subprocess.run([node, "skinned_check.mjs", json.dumps([{"file": str(path)}])], cwd=JS_DIR,
                                        capture_output=True, text=True, timeout=300, check=True).stdout)[0]  # fmt: skip
    mine = load_character(path).skin(pose)[0][0]
    got = np.array(skinned["meshes"][0]["skinned"]).reshape(-1, 3)
    np.testing.assert_allclose(got, mine, atol=1e-4)


@pytest.mark.blender
def test_blender_imports_the_mannequin_skinned(posed, tmp_path: Path) -> None:
    path, pose = posed
    blender = require_executable("blender", "apt-get install blender python3-numpy")
    out = tmp_path / "vertices.json"
    script = ROOT / "tests" / "blender" / "skinned_vertices.py"
    done = subprocess.run([blender, "-b", "--python", str(script), "--", str(path), str(out)], capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    (mesh,) = json.loads(out.read_text()).values()
    assert mesh["armature"]  # (skinned: an armature deforms it)
    blender_points = np.array(mesh["vertices"])
    mine = load_character(path).skin(pose)[0][0]
    nearest = np.concatenate(
        [
            np.linalg.norm(chunk[:, None, :] - mine[None], axis=2).min(axis=1)
            for chunk in np.array_split(blender_points, 8)
        ]
    )
    assert len(blender_points) == len(mine) and nearest.max() <= 1e-4


def test_mannequin_goes_with_a_scene_not_a_character_or_a_take(tmp_path: Path) -> None:
    proc = run("export", "--take", "t.json", "--mannequin", "-o", str(tmp_path / "a.glb"))
    assert_one_line_error(proc, "--mannequin dresses a scene or preset's pose")
