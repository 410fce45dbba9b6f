"""The CLI's orientation and look options (issue 29, item 6): ``--turn NAME=RX,RY,RZ`` turns a
targeted effector from its rest orientation (Blender's XYZ Euler, degrees, world axes), ``--look
X,Y,Z`` turns the head toward a point; on presets, scene files and a character's own file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import node_world, write_character
from helpers.cli import assert_one_line_error, run

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.io.character import load_character
from fabrik3d.model import presets

BODY = presets.get("humanoid")


def angle_deg(a, b) -> float:
    return math.degrees(rot.angle_between(tuple(np.asarray(a, float)), tuple(np.asarray(b, float))))


def test_solve_turns_the_hand_and_the_head_looks(tmp_path: Path) -> None:
    out = tmp_path / "pose.json"
    proc = run(
        "solve", "humanoid", "--target", "hand_l=0.3,1.15,0.3", "--turn", "hand_l=0,0,30", "--look", "1,1.7,2",
        "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "turned" in proc.stdout
    pose = json.loads(out.read_text())
    q = np.array(pose["rotations"])
    h = BODY.index("hand_l")
    wanted = rot.mul(rot.from_euler_xyz((0.0, 0.0, 30.0)), tuple(BODY.rest_frames[h].tolist()))
    assert angle_deg(q[h], wanted) <= 1.0
    assert np.linalg.norm(np.array(pose["positions"])[h] - [0.3, 1.15, 0.3]) <= 1e-3
    head = np.array(pose["positions"])[BODY.index("head")]
    aim = (np.array([1.0, 1.7, 2.0]) - head) / np.linalg.norm(np.array([1.0, 1.7, 2.0]) - head)
    assert math.degrees(math.acos(min(1.0, float(fabrik3d.face_axis(BODY, q) @ aim)))) < 2.0
    # the same as the library's solve
    same = fabrik3d.solve(
        BODY, {"hand_l": fabrik3d.Target([0.3, 1.15, 0.3], wanted)}, look_at={"head": [1.0, 1.7, 2.0]}
    )
    np.testing.assert_allclose(q, same.rotations, atol=1e-12)


def test_export_writes_the_turned_hand_into_a_character_s_file(tmp_path: Path) -> None:
    hero = write_character(tmp_path, "hero", "mixamo", armature=True)
    model = load_character(hero)
    hand = model.effectors["hand_l"]
    sk = model.skeleton
    outs = {}
    for name, extra in (("turned", ["--turn", "hand_l=0,0,25"]), ("plain", [])):
        outs[name] = tmp_path / f"{name}.glb"
        proc = run("export", str(hero), "--target", "hand_l=0.3,1.3,0.35", *extra, "-o", str(outs[name]))
        assert proc.returncode == 0, proc.stderr
    wanted = rot.mul(rot.from_euler_xyz((0.0, 0.0, 25.0)), tuple(sk.rest_frames[sk.index(hand)].tolist()))
    result = fabrik3d.solve(sk, {hand: fabrik3d.Target([0.3, 1.3, 0.35], wanted)})
    frames = {}
    for name, out in outs.items():
        nodes = load_character(out).document["nodes"]
        k = next(i for i, node in enumerate(nodes) if node.get("name") == hand)
        frames[name] = node_world(nodes, k)[:3, :3]
        assert np.linalg.norm(node_world(nodes, k)[:3, 3] - [0.3, 1.3, 0.35]) <= 1.5e-3  # (on its target)
    turn = frames["turned"] @ frames["plain"].T  # (the file carries a turn of the hand)
    assert math.degrees(math.acos(min(1.0, (np.trace(turn) - 1.0) / 2.0))) > 5.0
    # and it is the solver's turn: the node's world frame is the solver's frame times the bone's fixed
    # bind offset (a rotation and the armature's scale), so the two files differ by the solves' turn
    plain = fabrik3d.solve(sk, {hand: [0.3, 1.3, 0.35]})
    j = sk.index(hand)
    solved = rot.quat_to_matrix(result.rotations[j]) @ rot.quat_to_matrix(plain.rotations[j]).T
    turn = turn / np.cbrt(np.linalg.det(turn))  # (the scale squared divided out)
    assert math.degrees(math.acos(min(1.0, (np.trace(turn @ solved.T) - 1.0) / 2.0))) < 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--turn", "hand_l=0,0,30"], "--turn hand_l: give hand_l a --target too"),
        (["--target", "hand_l=0.3,1.2,0.3", "--turn", "hand_l=0,0"], r"--turn 'hand_l=0,0': expected NAME=RX,RY,RZ"),
        (["--target", "hand_l=0.3,1.2,0.3", "--turn", "hand_l=0,0,400"], "each within ±360"),
        (["--target", "hand_l=0.3,1.2,0.3", "--turn", "wing=0,0,1"], "--turn 'wing': not a joint"),
        (["--look", "1,2"], r"--look '1,2': expected X,Y,Z"),
        (["--look", "1,nan,2"], r"--look '1,nan,2': expected X,Y,Z"),
    ],
)
def test_bad_turns_and_looks_are_one_line(args: list[str], message: str) -> None:
    assert_one_line_error(run("solve", "humanoid", *args), message)


def test_a_look_on_a_skeleton_without_a_head_is_named() -> None:
    assert_one_line_error(run("solve", "robot_arm", "--look", "1,1,1"), "no joint 'head'")
