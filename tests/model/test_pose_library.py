"""The pose library (issue 30, item 4): poses stored by role, applied to other rigs, parts, mirrored and
blended; the library file (round trip, overwrite and delete, bad files) and the starter library."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import png, write_character
from helpers.limits import violations
from helpers.pose_rigs import a_pose_humanoid, asymmetric_pose, bones, degrees, direction

import fabrik3d
from fabrik3d.io import pose_library as library
from fabrik3d.io.character import load_character
from fabrik3d.model.mirror import mirror_name
from fabrik3d.model.pose_library import Pose, part_of

SK = fabrik3d.presets.get("humanoid")
OWN = {n: n for n in SK.names}
STARTER = (
    "T", "A", "idle", "walk contact left", "walk contact right", "run", "sit", "crouch", "kneel", "reach up",
    "point", "wave", "hands on hips", "arms crossed",
)  # fmt: skip


def rest(skeleton):
    return skeleton.rest_positions.copy(), skeleton.rest_frames.copy()


@pytest.fixture(scope="module")
def posed() -> tuple[np.ndarray, np.ndarray]:
    """An asymmetric pose of the humanoid: a hand up, a hand across, a knee up, the head turned, fingers."""
    r = asymmetric_pose()
    return fabrik3d.apply_pose(SK, r.positions, r.rotations, fabrik3d.starter_poses()["hand fist"], parts=["hands"])


@pytest.fixture(scope="module")
def characters(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("characters")
    return {c: load_character(write_character(folder, c, c)) for c in ("mixamo", "blender")}


def test_the_humanoid_round_trips_exactly(posed) -> None:
    p, q = posed
    pose = fabrik3d.capture_pose(SK, p, q)
    p2, q2 = fabrik3d.apply_pose(SK, *rest(SK), pose)
    off = p[SK.root] - p2[SK.root]  # (the pose keeps the pelvis's place across the floor)
    assert abs(off[1]) < 1e-12
    assert np.abs(p2 + off - p).max() < 1e-9
    assert np.abs(np.abs(np.sum(q2 * q, axis=1)) - 1.0).max() < 1e-9


@pytest.mark.parametrize("convention", ["mixamo", "blender"])
def test_a_pose_transfers_to_mixamo_and_rigify_characters_within_5_deg(posed, characters, convention) -> None:
    p, q = posed
    pose = fabrik3d.capture_pose(SK, p, q)
    c = characters[convention]
    s, m = c.skeleton, c.rig_map
    p2, q2 = fabrik3d.apply_pose(s, *rest(s), pose, rig_map=m)
    worst = {a: degrees(direction(p, SK, OWN, a, b), direction(p2, s, m, a, b)) for a, b in bones()}
    assert max(worst.values()) < 5.0, worst
    assert max(violations(s, p2, q2).values(), default=0.0) < 1e-6
    # mirrored: each limb takes the other's direction, reflected
    p3, q3 = fabrik3d.apply_pose(s, *rest(s), pose, rig_map=m, mirrored=True)
    swapped = {}
    for a, b in bones():
        u = direction(p, SK, OWN, a, b)
        v = direction(p3, s, m, mirror_name(a) or a, mirror_name(b) or b) * (-1.0, 1.0, 1.0)
        swapped[a] = degrees(u, v)
    assert max(swapped.values()) < 5.0, swapped
    assert max(violations(s, p3, q3).values(), default=0.0) < 1e-6
    # and back: captured on the character, applied to the humanoid
    back = fabrik3d.apply_pose(SK, *rest(SK), fabrik3d.capture_pose(s, p2, q2, rig_map=m))[0]
    again = {a: degrees(direction(p, SK, OWN, a, b), direction(back, SK, OWN, a, b)) for a, b in bones()}
    assert max(again.values()) < 5.0, again


def test_a_pose_transfers_to_an_a_pose_rig_with_rolled_bone_frames(posed) -> None:
    p, q = posed
    rig = a_pose_humanoid()
    p2, _ = fabrik3d.apply_pose(rig, *rest(rig), fabrik3d.capture_pose(SK, p, q))
    worst = {a: degrees(direction(p, SK, OWN, a, b), direction(p2, rig, OWN, a, b)) for a, b in bones()}
    assert max(worst.values()) < 5.0, worst
    # and the T-pose applied to it straightens its arms out
    t = fabrik3d.apply_pose(rig, *rest(rig), fabrik3d.starter_poses()["T"])[0]
    assert degrees(direction(t, rig, OWN, "shoulder_l", "elbow_l"), np.array([1.0, 0.0, -0.07])) < 5.0


def test_mirrored_on_the_humanoid_swaps_left_and_right(posed) -> None:
    p, q = posed
    p2, q2 = fabrik3d.apply_pose(SK, *rest(SK), fabrik3d.capture_pose(SK, p, q), mirrored=True)
    for a, b in [*bones(), ("index_01_l", "index_02_l"), ("thumb_02_r", "thumb_03_r")]:
        u = direction(p, SK, OWN, a, b)
        v = direction(p2, SK, OWN, mirror_name(a) or a, mirror_name(b) or b) * (-1.0, 1.0, 1.0)
        assert degrees(u, v) < 5.0, (a, degrees(u, v))
    assert max(violations(SK, p2, q2).values()) < 1e-6


def test_a_partial_pose_applies_only_what_it_holds(posed) -> None:
    p, q = posed
    arms = fabrik3d.capture_pose(SK, p, q, parts=["arms"])
    assert arms.parts == {"arms"} and arms.pelvis is None and arms.height is None
    p0, q0 = rest(SK)
    p2, q2 = fabrik3d.apply_pose(SK, p0, q0, arms)
    for j, name in enumerate(SK.names):
        if part_of(name) in ("arms", "hands"):  # (fingers ride on the wrist)
            continue
        assert np.array_equal(p2[j], p0[j]) and np.array_equal(q2[j], q0[j]), name
    assert degrees(direction(p, SK, OWN, "elbow_l", "wrist_l"), direction(p2, SK, OWN, "elbow_l", "wrist_l")) < 5.0
    # the whole pose with parts: only the legs move
    p3, _ = fabrik3d.apply_pose(SK, p0, q0, fabrik3d.capture_pose(SK, p, q), parts=["legs"])
    moved = {SK.names[j] for j in range(len(SK)) if not np.allclose(p3[j], p0[j], atol=1e-12)}
    assert moved == {"knee_l", "ankle_l", "toe_l", "knee_r", "ankle_r", "toe_r"}
    # a hand shape moves the fingers only
    p4, _ = fabrik3d.apply_pose(SK, p0, q0, fabrik3d.starter_poses()["hand fist"])
    moved = {SK.names[j] for j in range(len(SK)) if not np.allclose(p4[j], p0[j], atol=1e-12)}
    assert moved and all(part_of(n) == "hands" for n in moved)


def test_amount_blends_from_the_current_pose(posed) -> None:
    p, q = posed
    pose = fabrik3d.capture_pose(SK, p, q)
    p0, q0 = rest(SK)
    same = fabrik3d.apply_pose(SK, p0, q0, pose, amount=0.0)
    assert np.allclose(same[0], p0, atol=1e-12)
    full = fabrik3d.apply_pose(SK, p0, q0, pose)[0]
    half = fabrik3d.apply_pose(SK, p0, q0, pose, amount=0.5)[0]
    a, b = "shoulder_l", "elbow_l"
    total = degrees(direction(p0, SK, OWN, a, b), direction(full, SK, OWN, a, b))
    part = degrees(direction(p0, SK, OWN, a, b), direction(half, SK, OWN, a, b))
    assert 0.3 * total < part < 0.7 * total
    assert abs(half[SK.root, 1] - 0.5 * (p0[SK.root, 1] + full[SK.root, 1])) < 1e-9
    with pytest.raises(ValueError, match="amount"):
        fabrik3d.apply_pose(SK, p0, q0, pose, amount=1.5)
    with pytest.raises(ValueError, match="unknown part 'tail'"):
        fabrik3d.apply_pose(SK, p0, q0, pose, parts=["tail"])


def test_the_starter_library_has_its_poses_and_each_stays_within_limits(characters) -> None:
    poses = fabrik3d.starter_poses()
    assert set(STARTER) <= set(poses)
    assert {"hand fist", "hand open", "hand point", "hand relaxed"} <= set(poses)
    for name in STARTER:
        p, q = fabrik3d.apply_pose(SK, *rest(SK), poses[name])
        assert max(violations(SK, p, q).values()) < 1e-6, name
        assert p[SK.core_joints, 1].min() > -0.01, name  # nothing under the floor
        c = characters["mixamo"]
        p2, q2 = fabrik3d.apply_pose(c.skeleton, *rest(c.skeleton), poses[name], rig_map=c.rig_map)
        assert max(violations(c.skeleton, p2, q2).values()) < 1e-6, name


def test_the_library_file_round_trips_overwrites_and_deletes(tmp_path: Path, posed) -> None:
    path = tmp_path / "poses.json"
    pose = fabrik3d.capture_pose(SK, *posed)
    fabrik3d.save_pose(path, "mine", pose, thumbnail=png())
    fabrik3d.save_pose(path, "wave", fabrik3d.starter_poses()["wave"])
    got = fabrik3d.load_library(path)
    assert list(got) == ["mine", "wave"] and got["mine"].thumbnail == png()
    for role, d in pose.bones.items():
        assert np.allclose(got["mine"].bones[role], d, atol=1e-8)
        assert abs(got["mine"].twists[role] - pose.twists[role]) < 1e-5
    again = fabrik3d.apply_pose(SK, *rest(SK), got["mine"])[0]
    assert np.abs(again - fabrik3d.apply_pose(SK, *rest(SK), pose)[0]).max() < 1e-6
    fabrik3d.save_pose(path, "mine", fabrik3d.starter_poses()["T"])  # same name: replaced, in its place
    got = fabrik3d.load_library(path)
    assert list(got) == ["mine", "wave"] and got["mine"].thumbnail is None
    with pytest.raises(ValueError, match="already has a pose 'wave'"):
        fabrik3d.save_pose(path, "wave", pose, overwrite=False)
    fabrik3d.delete_pose(path, "mine")
    assert list(fabrik3d.load_library(path)) == ["wave"]
    with pytest.raises(ValueError, match=r"poses\.json: no pose 'mine'; poses are 'wave'"):
        fabrik3d.delete_pose(path, "mine")
    assert [p.name for p in tmp_path.iterdir()] == ["poses.json"]  # no temporary left


def _library(pose: dict) -> str:
    return json.dumps({"format": "fabrik3d poses", "version": 1, "poses": {"wave": pose}})


BAD = [
    ("{", "not valid JSON"),
    ("[]", "format: expected 'fabrik3d poses', not a pose library"),
    ('{"format": "fabrik3d poses", "version": 9, "poses": {}}', "version: expected 1, got 9"),
    ('{"format": "fabrik3d poses", "version": 1, "poses": []}', "poses: expected an object of name -> pose"),
    (_library({"bones": {"elbow_l": [1, 2]}}), "poses['wave'].bones['elbow_l']: expected 3 numbers, got [1, 2]"),
    (_library({"bones": {"elbow_l": [0, 0, 0]}}), "poses['wave'].bones['elbow_l']: expected a unit direction"),
    (_library({"bones": {"tail": [0, 1, 0]}}), "poses['wave'].bones: unknown role 'tail'"),
    (_library({"twists": {"elbow_l": "x" * 200}}), "poses['wave'].twists['elbow_l']: expected a number, got 'xxx"),
    (_library({"twists": {"elbow_l": 400}}), "poses['wave'].twists['elbow_l']: expected degrees in [-180, 180]"),
    (_library({"pelvis": [0, 0, 0, 2]}), "poses['wave'].pelvis: expected a unit quaternion"),
    (_library({"height": -1}), "poses['wave'].height: expected a fraction in [0, 10], got -1"),
    (_library({"thumbnail": "@@@"}), "poses['wave'].thumbnail: not valid base64"),
    (_library({"thumbnail": "aGVsbG8="}), "poses['wave'].thumbnail: not a PNG image"),
    (_library({"bone": {}}), "poses['wave']: unknown key 'bone'"),
    (json.dumps({"format": "fabrik3d poses", "version": 1, "poses": {"": {}}}), "poses: pose name: expected 1 to"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_bad_library_file_gives_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "poses.json"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        fabrik3d.load_library(path)
    said = str(err.value)
    assert said.startswith(f"{path}: ") and message in said, said
    assert "\n" not in said and len(said) < 300, said
    with pytest.raises(ValueError):  # saving into a bad file leaves it as it was
        fabrik3d.save_pose(path, "idle", Pose())
    assert path.read_text() == text


def test_a_library_file_over_the_limit_is_refused_before_parsing(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "poses.json"
    path.write_text(" " * 2000 + _library({}))
    monkeypatch.setattr(library, "MAX_LIBRARY_BYTES", 1000)
    with pytest.raises(ValueError, match=r"poses\.json: file is too large \(over 1000 bytes\)"):
        fabrik3d.load_library(path)
    with pytest.raises(ValueError, match="not a PNG image"):
        fabrik3d.save_pose(tmp_path / "other.json", "x", Pose(), thumbnail=b"GIF89a")
    with pytest.raises(ValueError, match="pose name"):
        fabrik3d.save_pose(tmp_path / "other.json", " ", Pose())
    assert not (tmp_path / "other.json").exists()
