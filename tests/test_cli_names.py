"""Names a Blender user types for a character's targets (issue 32, item 10): a role (``hand_l``), any
role that serves it (``wrist_l``) or the rig's bone of one (``hand.L``, ``mixamorig:LeftHand``) give
the same pose; a wrong name's one-line error lists the roles first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import node_world, write_character
from helpers.cli import assert_one_line_error, run

from fabrik3d.io.character import load_character


def hand_world(path: Path, bone: str) -> np.ndarray:
    nodes = load_character(path).document["nodes"]
    k = next(i for i, node in enumerate(nodes) if node.get("name") == bone)
    return node_world(nodes, k)


@pytest.mark.parametrize(
    ("convention", "names"),
    [
        ("rigify", ["hand_l", "wrist_l", "hand.L", "f_middle.01.L"]),
        ("mixamo", ["hand_l", "mixamorig:LeftHand", "mixamorig:LeftHandMiddle1"]),
    ],
)
def test_a_role_and_its_bones_give_the_same_pose(tmp_path: Path, convention: str, names: list[str]) -> None:
    hero = write_character(tmp_path, "hero", convention, armature=True)
    bone = load_character(hero).effectors["hand_l"]
    worlds = []
    for k, name in enumerate(names):
        out = tmp_path / f"posed{k}.glb"
        proc = run("export", str(hero), "--target", f"{name}=0.3,1.3,0.35", "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        worlds.append(hand_world(out, bone))
    for w in worlds[1:]:
        np.testing.assert_array_equal(w, worlds[0])


def test_a_wrong_name_lists_the_roles_first(tmp_path: Path) -> None:
    hero = write_character(tmp_path, "hero", "rigify", armature=True)
    proc = run("export", str(hero), "--target", "wing.L=0.3,1.3,0.35", "-o", str(tmp_path / "o.glb"))
    assert_one_line_error(proc, r"--target 'wing\.L': not a role .* the roles are pelvis, head, hand_l, hand_r, foot_l")
    proc = run(
        "export", str(hero), "--target", "hand_l=0.3,1.3,0.35", "--turn", "wing.L=0,0,1", "-o", str(tmp_path / "o.glb")
    )
    assert_one_line_error(proc, r"--turn 'wing\.L': not a role")
