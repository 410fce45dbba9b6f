"""Keys that hold what the user saw (issue 29, item 5): a key's pose (``Key.pose``) comes back at its
frame as it was keyed, turned joints and turns about the bones included; the frames between follow
the keyed poses' curve (``fabrik3d.model.key_poses``); scene files keep the poses and glTF carries
them (three.js reads the turned frames back)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_node_modules

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.animation import Animation, Key, bake
from fabrik3d.io import gltf
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.model import presets
from fabrik3d.model.key_poses import KeyPose, pose_curve
from fabrik3d.solver.fk import joint_turn, turn_joint

TURNED = ("spine_02", "neck", "elbow_l", "hand_l")


@pytest.fixture(scope="module")
def body():
    return presets.get("humanoid")


def _turned(body, result, turns: dict[str, tuple[float, float, float]]):
    p, q = result.positions, result.rotations
    for name, xyz in turns.items():
        p, q = turn_joint(body, p, q, name, rot.from_euler_xyz(xyz))
    return fabrik3d.SolveResult(p, q, 0, {}, True)


def _twist(body, rotations: np.ndarray, name: str) -> float:
    """The joint's turn about its bone from rest, degrees (Euler Y of its turn)."""
    return rot.euler_xyz(tuple(joint_turn(body, rotations, name).tolist()))[1]


@pytest.fixture(scope="module")
def keyed(body):
    """Key 0: the spine, the neck, the forearm and the hand turned about their bones by hand after a
    reach in front; key 30: another reach, from there, the neck turned the other way."""
    hand0 = np.array([0.25, 1.2, 0.3])
    first = _turned(
        body,
        fabrik3d.solve(body, {"hand_l": hand0}),
        {"spine_02": (0, 20, 0), "neck": (0, 40, 0), "elbow_l": (0, 50, 0), "hand_l": (0, 30, 0)},
    )
    hand1 = np.array([0.3, 1.15, 0.3])
    p, q = first.positions, first.rotations
    second = fabrik3d.solve(body, {"hand_l": hand1}, positions=p, rotations=q, relax_to=p, relax_rotations=q)
    second = _turned(body, second, {"neck": (0, -30, 0)})
    keys = (
        Key(0, {"hand_l": first.positions[body.index("hand_l")]}, pose=first),
        Key(30, {"hand_l": second.positions[body.index("hand_l")]}, pose=second),
    )
    return Animation(keys, end=40), first, second


def test_a_keyed_pose_comes_back_at_its_key_as_it_was(body, keyed) -> None:
    anim, first, second = keyed
    take = bake(body, anim)
    for f, pose in ((0, first), (30, second)):
        np.testing.assert_array_equal(take.positions[f], pose.positions)
        np.testing.assert_array_equal(take.rotations[f], pose.rotations)
    # (after the last key the curve holds: the pose stays the keyed one, to rounding)
    np.testing.assert_allclose(take.positions[40], second.positions, atol=1e-12)
    assert _twist(body, take.rotations[0], "neck") == pytest.approx(40.0, abs=1e-6)
    assert _twist(body, take.rotations[30], "neck") == pytest.approx(-30.0, abs=1e-6)


def test_the_frames_between_follow_the_keyed_turns(body, keyed) -> None:
    anim, _, _ = keyed
    take = bake(body, anim)
    neck = [_twist(body, take.rotations[f], "neck") for f in range(31)]
    # the neck's turn runs from 40 to -30 degrees without a jump, through 5 at the middle (smooth)
    assert neck[15] == pytest.approx(5.0, abs=0.5)
    assert max(abs(a - b) for a, b in itertools.pairwise(neck)) < 6.0
    assert all(a >= b - 1e-9 for a, b in itertools.pairwise(neck))
    # the spine's turn, the same in both keys, stays all along; the hand reaches every frame's target
    spine = [_twist(body, take.rotations[f], "spine_02") for f in range(31)]
    assert max(abs(s - 20.0) for s in spine) < 0.5
    goals = anim.goals(np.arange(31))
    misses = [
        np.linalg.norm(take.positions[f, body.index("hand_l")] - goals[f].targets["hand_l"].position) for f in range(31)
    ]
    assert max(misses) <= 1e-3 + 1e-12
    steps = np.linalg.norm(np.diff(take.positions[:31], axis=0), axis=2).max(axis=1)
    assert steps.max() < 0.08  # (no joint jumps more than 8 cm a frame over a 20 cm reach)
    lengths = np.linalg.norm(take.positions[:, 1:] - take.positions[:, body.parents[1:]], axis=2)
    np.testing.assert_allclose(lengths, np.broadcast_to(body.bone_lengths[1:], lengths.shape), rtol=1e-9)


def test_the_pose_curve_is_forward_kinematics_of_slerped_local_turns(body, keyed) -> None:
    anim, first, second = keyed
    curve = pose_curve(body, anim.keys, [0, 10, 30, 35], "linear")
    assert curve[0] is anim.keys[0].pose and curve[2] is anim.keys[1].pose
    np.testing.assert_allclose(curve[3].positions, second.positions, atol=1e-12)  # (held after the last key)
    mid = curve[1]
    neck, chest = body.index("neck"), body.index("chest")

    def local(q, j, p):
        return rot.mul(rot.conj(tuple(q[p])), tuple(q[j]))

    want = rot.slerp(local(first.rotations, neck, chest), local(second.rotations, neck, chest), 1 / 3)
    got = local(mid.rotations, neck, chest)
    assert math.degrees(rot.angle_between(got, want)) < 1e-9
    lengths = np.linalg.norm(mid.positions[1:] - mid.positions[body.parents[1:]], axis=1)
    np.testing.assert_allclose(lengths, body.bone_lengths[1:], rtol=1e-12)
    # no key holds a pose: no curve
    bare = Animation((Key(0, {"hand_l": [0.3, 1.2, 0.3]}),))
    assert bare.poses(body, [0, 5]) == [None, None]


def test_scene_files_keep_the_keyed_poses(tmp_path: Path, body, keyed) -> None:
    anim, first, _ = keyed
    path = tmp_path / "turned.json"
    save_scene(Scene(body, animation=anim), path)
    data = json.loads(path.read_text())
    assert set(data["animation"]["keys"][0]["pose"]) == {"positions", "rotations"}
    back = load_scene(path)
    assert back.animation is not None
    np.testing.assert_array_equal(back.animation.keys[0].pose.rotations, first.rotations)
    np.testing.assert_array_equal(bake(body, back.animation).positions, bake(body, anim).positions)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda pose: {**pose, "extra": 1}, r"key at frame 0: pose: expected \{positions, rotations\}"),
        (lambda pose: {"positions": pose["positions"]}, r"key at frame 0: pose: expected \{positions, rotations\}"),
        (lambda pose: {**pose, "rotations": pose["rotations"][:-1]}, r"pose\.rotations: expected \(65, 4\)"),
        (lambda pose: {**pose, "rotations": [[0, 0, 0, 2]] * 65}, r"pose\.rotations\[0\]: not a unit quaternion"),
        (lambda pose: {**pose, "positions": [[float("nan")] * 3] * 25}, r"pose\.positions"),
        (
            lambda pose: {**pose, "positions": pose["positions"][:-1], "rotations": pose["rotations"][:-1]},
            "holds 64 joints",
        ),
        (
            lambda pose: {**pose, "positions": [[2 * x for x in row] for row in pose["positions"]]},
            r"pose\.positions\[1\] \(spine_01\): bone from 'pelvis' is .* long, the skeleton's is",
        ),
    ],
)
def test_a_bad_keyed_pose_in_a_scene_file_is_named(tmp_path: Path, body, keyed, change, message) -> None:
    anim, _, _ = keyed
    path = tmp_path / "bad.json"
    save_scene(Scene(body, animation=anim), path)
    data = json.loads(path.read_text())
    data["animation"]["keys"][0]["pose"] = change(data["animation"]["keys"][0]["pose"])
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        load_scene(path)


def test_a_batch_bake_of_keyed_poses_is_refused_by_name(body, keyed) -> None:
    anim, _, _ = keyed
    with pytest.raises(ValueError, match="method='batch': keys that hold a pose"):
        bake(body, anim, method="batch")


def test_a_key_takes_a_solve_result_or_a_key_pose(body, keyed) -> None:
    _, first, _ = keyed
    a = Key(3, pose=first)
    b = Key(3, pose=KeyPose(first.positions, first.rotations))
    assert a.to_dict() == b.to_dict()
    with pytest.raises(ValueError, match="key at frame 3: pose: expected a pose"):
        Key(3, pose=[1, 2, 3])


@pytest.mark.node
def test_three_js_reads_the_keyed_turns_back_from_the_animation(tmp_path: Path, body, keyed) -> None:
    """The issue's export check: a turned hand and head (neck) exported and read back by three.js
    within 0.5 degrees, at the keys and between them."""
    anim, _, _ = keyed
    take = bake(body, anim, frames=(0, 30))
    path = tmp_path / "turned.glb"
    gltf.export_animation(body, list(zip(take.positions, take.rotations)), take.times, path)
    node = require_node_modules("three")
    proc = subprocess.run([node, "three_check.mjs", str(path)], cwd=JS_DIR, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    samples = json.loads(proc.stdout)[str(path)]["samples"]
    assert len(samples) == 31
    for k, sample in enumerate(samples):
        q = np.array(sample["quaternions"])
        for name in TURNED:
            j = body.index(name)
            a, b = q[j] / np.linalg.norm(q[j]), take.rotations[k, j]
            angle = math.degrees(4.0 * math.asin(min(1.0, min(np.linalg.norm(a - b), np.linalg.norm(a + b)) / 2.0)))
            assert angle < 0.5, f"frame {k}: {name} read back {angle:.3f} degrees off"
    assert _twist(body, take.rotations[0], "hand_l") == pytest.approx(30.0, abs=0.5)
