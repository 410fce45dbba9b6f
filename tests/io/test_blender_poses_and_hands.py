"""Poses and hand shapes on characters as Blender builds and exports them (issue 30's bars): Rigify's
human metarig (elbows and knees bent at rest, a lumbar bone leaning forward, palms, relaxed fingers)
and an A-posed armature with Mixamo's names (``tests/blender/export_rigs.py``).

* The starter library and an asymmetric pose applied to them, plain and mirrored: each limb bone (upper arm, forearm,
  thigh, shin) and each spine segment above the pelvis within 5 deg of the humanoid's; the pelvis
  turned from its rest as the humanoid's is (the pelvis's own bone keeps the rig's lean: it is the
  body, not a segment to aim); every joint within its limits.
* Hand shapes: ``fist`` brings every finger tip within 3 cm of the palm's centre; ``open`` leaves the
  fingers' middle and last knuckles within 5 deg of straight; ``point`` the index's, the others as in
  the fist; within limits; the hand and everything above it unmoved.

Before the rig's rest was taken into account (limits counted from the rig's rest, the pelvis aimed
like a segment) the same poses missed by 10 to 30 deg and the open fingers stayed 9-14 deg bent.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from helpers.blender import exported_rigs
from helpers.limits import violations
from helpers.pose_rigs import LIMBS, asymmetric_pose, degrees, direction

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.io.character import Character, load_character
from fabrik3d.model.mirror import mirror_name
from fabrik3d.solver.hands import finger_joints, fingertip, palm_center, shape_hand

SK = fabrik3d.presets.get("humanoid")
OWN = {n: n for n in SK.names}
POSES = (
    "T", "A", "idle", "walk contact left", "run", "sit", "crouch", "kneel", "reach up", "point", "wave",
    "hands on hips", "arms crossed", "asymmetric",
)  # fmt: skip
SEGMENTS = [("spine_01", "spine_02"), ("spine_02", "chest"), ("chest", "neck"), ("neck", "head")]


@pytest.fixture(scope="module")
def rigs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Character]:
    folder = exported_rigs(tmp_path_factory.mktemp("blender_rigs"))
    return {rig: load_character(folder / f"{rig}.glb") for rig in ("rigify", "mixamo")}


def asymmetric() -> fabrik3d.Pose:
    r = asymmetric_pose()
    return fabrik3d.capture_pose(SK, r.positions, r.rotations)


def rest(skeleton: fabrik3d.Skeleton) -> tuple[np.ndarray, np.ndarray]:
    return skeleton.rest_positions.copy(), skeleton.rest_frames.copy()


def pelvis_turn(skeleton: fabrik3d.Skeleton, rotations: np.ndarray, name: str) -> rot.Quat:
    j = skeleton.index(name)
    return rot.mul(tuple(rotations[j].tolist()), rot.conj(tuple(skeleton.rest_frames[j].tolist())))  # type: ignore[arg-type]


def transfer_errors(c: Character, name: str, mirrored: bool) -> dict[str, float]:
    """Degrees between each bone of the pose on the humanoid and on ``c`` (mirrored: the other side's,
    reflected), the pelvis's turn from rest included; and the worst limit excess as ``limits``."""
    s, m = c.skeleton, c.rig_map
    pose = fabrik3d.starter_poses()[name] if name != "asymmetric" else asymmetric()
    ph, qh = fabrik3d.apply_pose(SK, *rest(SK), pose)
    p, q = fabrik3d.apply_pose(s, *rest(s), pose, rig_map=m, mirrored=mirrored)
    flip = np.array([-1.0, 1.0, 1.0]) if mirrored else np.ones(3)
    out = {}
    pairs = [(f"{a}_{side}", f"{b}_{side}") for a, b in LIMBS for side in "lr"] + SEGMENTS
    for a, b in pairs:
        a2, b2 = (mirror_name(a) or a, mirror_name(b) or b) if mirrored else (a, b)
        out[a] = degrees(direction(ph, SK, OWN, a, b), direction(p, s, m, a2, b2) * flip)
    want = pelvis_turn(SK, qh, "pelvis")
    if mirrored:  # (the reflection in x of a rotation: its axis reflected, its angle reversed)
        want = (want[0], -want[1], -want[2], want[3])
    got = pelvis_turn(s, q, m["pelvis"])
    out["pelvis"] = math.degrees(rot.angle_between(want, got))
    out["limits"] = max(violations(s, p, q).values(), default=0.0)
    return out


@pytest.mark.blender
@pytest.mark.parametrize("rig", ["rigify", "mixamo"])
def test_starter_poses_transfer_to_blender_rigs_within_5_deg(rigs: dict[str, Character], rig: str) -> None:
    c = rigs[rig]
    worst: dict[tuple[str, bool], tuple[str, float]] = {}
    for name in POSES:
        for mirrored in (False, True):
            errors = transfer_errors(c, name, mirrored)
            assert errors.pop("limits") < 1e-6, (name, mirrored)
            bone = max(errors, key=errors.__getitem__)
            worst[(name, mirrored)] = (bone, round(errors[bone], 2))
    assert max(v for _, v in worst.values()) < 5.0, {k: v for k, v in worst.items() if v[1] >= 1.0}


@pytest.mark.blender
@pytest.mark.parametrize("rig", ["rigify", "mixamo"])
@pytest.mark.parametrize("side", ["l", "r"])
def test_hand_shapes_on_blender_rigs_meet_the_bars(rigs: dict[str, Character], rig: str, side: str) -> None:
    c = rigs[rig]
    s, m = c.skeleton, c.rig_map
    fingers = finger_joints(s, side, m)
    moved = {k for joints in fingers.values() for j in joints for k in (j, *_below(s, j))}
    still = [j for j in range(len(s)) if j not in moved]
    p0, q0 = rest(s)
    shaped = {shape: shape_hand(s, p0, q0, side, shape, rig_map=m) for shape in ("fist", "open", "point")}
    for shape, (p, q) in shaped.items():
        assert np.abs(p[still] - p0[still]).max() <= 1e-9, shape
        assert np.abs(q[still] - q0[still]).max() <= 1e-9, shape
        assert max(violations(s, p, q).values(), default=0.0) < 1e-6, shape
    p, q = shaped["fist"]
    tips = {f: float(np.linalg.norm(fingertip(s, p, q, j) - palm_center(s, p, side, m))) for f, j in fingers.items()}
    assert max(v for f, v in tips.items() if f != "thumb") <= 0.03, tips
    p, q = shaped["open"]
    bent = {f: knuckle_bends(s, p, q, j) for f, j in fingers.items() if f != "thumb"}
    assert max(max(v) for v in bent.values()) <= 5.0, bent
    p, q = shaped["point"]
    if "index" in fingers:
        assert max(knuckle_bends(s, p, q, fingers["index"])) <= 5.0
    fist_p = shaped["fist"][0]
    for f in set(fingers) - {"index", "thumb"}:
        assert np.abs(p[list(fingers[f])] - fist_p[list(fingers[f])]).max() <= 1e-9, f


def knuckle_bends(s: fabrik3d.Skeleton, p: np.ndarray, q: np.ndarray, joints: tuple[int, int, int]) -> list[float]:
    """Degrees each of a finger's middle and last knuckles is bent from straight (between the bone
    into it and the bone out of it; the tip where the rig has no end bone)."""
    points = [p[joints[0]], p[joints[1]], p[joints[2]], fingertip(s, p, q, joints)]
    bones = [b - a for a, b in itertools.pairwise(points)]
    return [degrees(u / np.linalg.norm(u), v / np.linalg.norm(v)) for u, v in itertools.pairwise(bones)]


def _below(s: fabrik3d.Skeleton, j: int) -> list[int]:
    out, todo = [], list(s.children(j))
    while todo:
        k = todo.pop()
        out.append(k)
        todo.extend(s.children(k))
    return out
