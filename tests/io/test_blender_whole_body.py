"""The body as a whole on characters as Blender exports them (issue 50): Rigify's human metarig and an
A-posed armature with Mixamo's names, built and written by Blender (``tests/blender/export_rigs.py``).
Their free arms hang on low reaches (the arm within 30 deg of straight down, p95), and a starter pose
applied and then pinned effector by effector, or solved again, moves no joint more than 1 mm."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers.blender import exported_rigs

import fabrik3d
from fabrik3d.io.character import Character, load_character

DOWN = np.array([0.0, -1.0, 0.0])


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return exported_rigs(tmp_path_factory.mktemp("blender_rigs"))


def down_deg(c: Character, p: np.ndarray, a: str, b: str) -> float:
    sk, m = c.skeleton, c.rig_map
    v = p[sk.index(m[b])] - p[sk.index(m[a])]
    return math.degrees(math.acos(float(np.clip(v @ DOWN / np.linalg.norm(v), -1.0, 1.0))))


@pytest.mark.blender
@pytest.mark.parametrize("rig", ["rigify", "mixamo"])
def test_a_characters_free_arm_hangs_on_low_reaches(exported: Path, rig: str) -> None:
    c = load_character(exported / f"{rig}.glb")
    sk, m = c.skeleton, c.rig_map
    assert sk.posing.hang == {c.effectors["hand_l"], c.effectors["hand_r"]}
    rest = fabrik3d.solve(sk, {})
    for side in "lr":  # (the character opens on a relaxed stance too)
        assert down_deg(c, rest.positions, f"shoulder_{side}", f"elbow_{side}") <= 15.0
    toes = {c.effectors[t]: rest.positions[sk.index(c.effectors[t])] for t in ("foot_l", "foot_r")}
    scale = float(rest.positions[sk.index(m["head"])][1] - min(v[1] for v in toes.values())) / 1.7
    toe_z = max(v[2] for v in toes.values())
    rng = np.random.default_rng(50)
    angles = []
    for _ in range(8):
        target = np.array([rng.uniform(-0.05, 0.3), rng.uniform(0.1, 0.55), toe_z + rng.uniform(0.25, 0.55)]) * scale
        r = fabrik3d.solve(sk, {**toes, c.effectors["hand_l"]: target})
        angles += [down_deg(c, r.positions, "shoulder_r", "elbow_r"), down_deg(c, r.positions, "elbow_r", "wrist_r")]
        shoulder, hand = r.positions[sk.index(m["shoulder_r"])], r.positions[sk.index(c.effectors["hand_r"])]
        assert shoulder[1] - hand[1] > 0.4 * 0.6 * scale  # (the hand well below the shoulder)
    assert np.percentile(angles, 95) <= 30.0, angles


@pytest.mark.blender
@pytest.mark.parametrize("rig", ["rigify", "mixamo"])
def test_a_characters_starter_pose_pinned_or_solved_again_moves_nothing(exported: Path, rig: str) -> None:
    c = load_character(exported / f"{rig}.glb")
    sk = c.skeleton
    rest = fabrik3d.solve(sk, {})
    moved = {}
    for name, pose in fabrik3d.starter_poses().items():
        p, q = fabrik3d.apply_pose(sk, rest.positions, rest.rotations, pose, rig_map=c.rig_map)
        built = {"relax_to": p, "relax_rotations": q}
        worst = 0.0
        for e in sk.end_effectors:
            r = fabrik3d.solve(sk, fabrik3d.pin({}, sk, p, e), positions=p, rotations=q, **built)
            worst = max(worst, float(np.linalg.norm(r.positions - p, axis=1).max()))
        pinned = {e: p[sk.index(e)] for e in sk.end_effectors}
        r = fabrik3d.solve(sk, pinned, positions=p, rotations=q, **built)
        for _ in range(3):
            r = fabrik3d.solve(sk, pinned, positions=r.positions, rotations=r.rotations, **built)
        moved[name] = max(worst, float(np.linalg.norm(r.positions - p, axis=1).max()))
    assert max(moved.values()) <= 1e-3, moved
