"""Characters' fingers are posable (issue 30, item 2): Mixamo and Blender/Rigify finger bones map onto
the finger roles, ride in the skeleton, take hand shapes, and the exported file carries them."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_node_modules
from helpers.character_asset import node_world, write_character
from helpers.cli import run

import fabrik3d
from fabrik3d.io.character import load_character
from fabrik3d.io.character_export import export_character
from fabrik3d.model import rig_map as rigs
from fabrik3d.model.fingers import FINGERS, finger_role
from fabrik3d.solver.fk import joint_turn, limited_turn
from fabrik3d.solver.hands import finger_joints, fingertip, palm_center

CONVENTIONS = ("mixamo", "blender")


@pytest.fixture(scope="module")
def characters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fingers")
    return {c: write_character(folder, f"hero_{c}", c, fingers=True) for c in CONVENTIONS}


def outside_limits_deg(skeleton: fabrik3d.Skeleton, rotations: np.ndarray, joints: list[int]) -> float:
    worst = 0.0
    for j in joints:
        t = joint_turn(skeleton, rotations, skeleton.names[j])
        lim = limited_turn(skeleton, skeleton.names[j], t)
        worst = max(worst, math.degrees(2.0 * math.acos(min(1.0, abs(float(np.dot(t, lim)))))))
    return worst


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_finger_bones_map_onto_roles_and_ride(characters, convention: str) -> None:
    c = load_character(characters[convention])
    sk = c.skeleton
    for side in ("l", "r"):
        for finger in FINGERS:
            for k in ("01", "02", "03"):
                assert finger_role(finger, k, side) in c.rig_map, (finger, k, side)
        assert set(finger_joints(sk, side)) == set(FINGERS)
    assert c.rig_map["middle_01_l"] == c.rig_map["hand_l"]  # (a rig's middle knuckle is its hand)
    assert set(c.effectors) == {"pelvis", "head", "hand_l", "hand_r", "foot_l", "foot_r"}
    assert sk.riders and all(c.rig_map[r] not in sk.riders for r in rigs.END_ROLES["hand_l"][:1])
    # a solve carries the fingers: the hand reaches, the fingers keep their place on the wrist
    hand = c.effectors["hand_l"]
    target = sk.rest_positions[sk.index(hand)] + np.array([-0.2, 0.3, 0.3])
    r = fabrik3d.solve(sk, {hand: target})
    assert r.converged


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("side", ["l", "r"])
def test_shapes_on_a_character(characters, convention: str, side: str) -> None:
    c = load_character(characters[convention])
    sk = c.skeleton
    rest = fabrik3d.solve(sk, {})
    fingers = finger_joints(sk, side)
    finger_set = {j for js in fingers.values() for j in js}
    moved_by_fingers = {k for k in range(len(sk)) if any(int(sk.parents[k]) == j for j in finger_set)}
    above = [k for k in range(len(sk)) if k not in finger_set | moved_by_fingers]
    for shape in ("fist", "open", "point", "pinch"):
        p, q = fabrik3d.shape_hand(sk, rest.positions, rest.rotations, side, shape)
        assert np.abs(p[above] - rest.positions[above]).max() <= 1e-9, shape
        assert outside_limits_deg(sk, q, sorted(finger_set)) < 1e-4, shape
        if shape == "pinch":
            tips = [fingertip(sk, p, q, fingers[f]) for f in ("thumb", "index")]
            assert np.linalg.norm(tips[0] - tips[1]) <= 0.005
        if shape == "fist":
            centre = palm_center(sk, p, side)
            for finger in ("index", "middle", "ring", "pinky"):
                tip = fingertip(sk, p, q, fingers[finger])  # (Blender writes no fingertip bone: estimated)
                assert np.linalg.norm(tip - centre) <= 0.03, (finger, np.linalg.norm(tip - centre))


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_the_exported_character_carries_the_finger_turns(characters, convention: str, tmp_path: Path) -> None:
    """``fabrik3d export MODEL --hand l=fist``: every finger bone's node, read back from the file, sits
    within 1 mm of where the library put it."""
    out = tmp_path / "fist.glb"
    proc = run("export", str(characters[convention]), "--hand", "l=fist", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    c = load_character(characters[convention])
    sk = c.skeleton
    rest = fabrik3d.solve(sk, {})
    p, _ = fabrik3d.shape_hand(sk, rest.positions, rest.rotations, "l", "fist")
    nodes = load_character(out).document["nodes"]
    at = {node.get("name"): k for k, node in enumerate(nodes)}
    fingers = finger_joints(sk, "l")
    checked = 0
    for js in fingers.values():
        for j in js:
            world = node_world(nodes, at[sk.names[j]])
            assert np.linalg.norm(world[:3, 3] - p[j]) <= 1e-3, sk.names[j]
            checked += 1
    assert checked == 15


@pytest.mark.node
def test_three_js_skins_the_exported_fist_where_fabrik3d_does(characters, tmp_path: Path) -> None:
    """A real third-party loader: three.js skins the exported character (fingers in a fist, the body
    reaching) where fabrik3d's own skinning puts every vertex."""
    out = tmp_path / "fist.glb"
    c = load_character(characters["mixamo"])
    sk = c.skeleton
    hand = c.effectors["hand_l"]
    pose = fabrik3d.solve(sk, {hand: sk.rest_positions[sk.index(hand)] + np.array([-0.2, 0.3, 0.3])})
    p, q = fabrik3d.shape_hand(sk, pose.positions, pose.rotations, "l", "fist")
    fist = fabrik3d.SolveResult(p, q, 0, {}, True)
    export_character(c, out, fist)
    node = require_node_modules("three")
    proc = subprocess.run(
        [node, "skinned_check.mjs", json.dumps([{"file": str(out)}])],
        cwd=JS_DIR, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)[0]
    mine = {prim.where: skinned for prim, (skinned, _) in zip(c.meshes, c.skin(fist))}
    rest = {prim.where: skinned for prim, (skinned, _) in zip(c.meshes, c.skin(pose))}
    fingers_moved = 0.0
    for mesh in report["meshes"]:
        where = f"meshes[{mesh['mesh']}].primitives[{mesh['primitive'] if mesh['primitive'] >= 0 else 0}]"
        got = np.array(mesh["skinned"]).reshape(-1, 3)
        np.testing.assert_allclose(got, mine[where], atol=1e-4 * c.size, err_msg=where)
        fingers_moved = max(fingers_moved, float(np.abs(mine[where] - rest[where]).max()))
    assert fingers_moved > 0.03  # (the fist moved the finger vertices)
