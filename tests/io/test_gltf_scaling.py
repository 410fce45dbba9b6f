"""glTF import without inverse bind matrices is linear in the joints (issue 15): each node's world
matrix is its parent's times its own, worked out once (it walked to the root for every joint)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fabrik3d
from fabrik3d.io import gltf, gltf_import


def test_world_matrices_are_made_once_per_node(tmp_path: Path, monkeypatch) -> None:
    n = 2000
    pos = np.zeros((n, 3))
    pos[:, 1] = np.arange(n) * 0.1
    pos[:, 0] = np.sin(np.arange(n))  # bones in many directions: rotations at every node
    sk = fabrik3d.Skeleton([f"j{i}" for i in range(n)], list(range(-1, n - 1)), pos)
    path = tmp_path / "chain.gltf"
    gltf.export_pose(sk, fabrik3d.solve(sk, {}), path)
    doc = json.loads(path.read_text())
    for skin in doc["skins"]:
        skin.pop("inverseBindMatrices")
    path.write_text(json.dumps(doc))
    calls = []
    local = gltf_import._local_matrix
    monkeypatch.setattr(gltf_import, "_local_matrix", lambda node: calls.append(1) or local(node))
    again = gltf.import_skeleton(path)
    assert len(calls) == n  # once per joint node (a walk to the root per joint made n(n+1)/2)
    np.testing.assert_allclose(again.rest_positions, sk.rest_positions, atol=1e-9 * n)


def test_a_skeleton_beyond_a_skin_s_joint_indices_is_refused_before_writing(tmp_path: Path) -> None:
    n = 65537
    pos = np.zeros((n, 3))
    pos[:, 1] = np.arange(n) * 0.01
    sk = fabrik3d.Skeleton([f"j{i}" for i in range(n)], list(range(-1, n - 1)), pos)
    result = fabrik3d.solve(sk, {})
    with pytest.raises(ValueError, match=r"^skeleton: 65537 joints; a glTF skinned mesh indexes at most 65536"):
        gltf.export_pose(sk, result, tmp_path / "big.glb")
    assert list(tmp_path.iterdir()) == []
