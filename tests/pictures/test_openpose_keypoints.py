"""``openpose_keypoints``: joints where they project, the person's own left and right, the face, the feet,
the hands (a fist's keypoints on the hand), occlusion, rigs by role, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fabrik3d
from fabrik3d.model.mannequin import Mannequin
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.pictures import BODY_25, COCO_18, HAND_21, Camera, landmarks, openpose_keypoints, project

SK = fabrik3d.presets.get("humanoid")
JOINTS = ("shoulder_r", "elbow_r", "wrist_r", "shoulder_l", "elbow_l", "wrist_l", "hip_r", "knee_r", "ankle_r",
          "hip_l", "knee_l", "ankle_l")  # fmt: skip
FRONT = Camera((0.3, 1.1, 4.0), (0.0, 0.95, 0.0), (0.0, 1.0, 0.0), view_angle=35.0, width=512, height=640)
BEHIND = Camera((-0.3, 1.1, -4.0), (0.0, 0.95, 0.0), (0.0, 1.0, 0.0), view_angle=35.0, width=512, height=640)
SIDE = Camera((4.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=1.1)


@pytest.fixture(scope="module")
def pose() -> tuple[np.ndarray, np.ndarray]:
    r = fabrik3d.solve(SK, {"hand_l": (0.5, 1.2, 0.4), "hand_r": (-0.35, 0.9, 0.2)})
    return r.positions, r.rotations


def finger_roles(side: str) -> list[str]:
    return [f"{f}_{k}_{side}" for f in ("thumb", "index", "middle", "ring", "pinky") for k in ("01", "02", "03", "end")]


@pytest.mark.parametrize("camera", [FRONT, BEHIND, SIDE], ids=["front", "behind", "side"])
def test_keypoints_that_stand_for_joints_are_those_joints_projected(pose, camera: Camera) -> None:
    p, q = pose
    kp = openpose_keypoints(SK, p, q, camera, feet=True)
    assert kp["pose"].shape == (25, 3) and kp["hand_left"].shape == (21, 3) and kp["hand_right"].shape == (21, 3)
    for name in JOINTS:
        row = kp["pose"][BODY_25.index(name)]
        assert row[2] == 1.0
        np.testing.assert_allclose(row[:2], project(camera, p[[SK.index(name)]])[0][0], atol=1e-9)
    for side, key in (("l", "hand_left"), ("r", "hand_right")):
        names = [f"wrist_{side}", *finger_roles(side)]
        expected = project(camera, p[[SK.index(n) for n in names]])[0]
        np.testing.assert_allclose(kp[key][:, :2], expected, atol=1e-9)
        assert (kp[key][:, 2] == 1.0).all()
    body = openpose_keypoints(SK, p, q, camera)["pose"]
    assert body.shape == (18, 3)
    np.testing.assert_allclose(body, kp["pose"][[BODY_25.index(n) for n in COCO_18]])


def test_the_neck_and_mid_hip_are_the_middles_of_the_shoulders_and_hips_in_the_picture(pose) -> None:
    kp = openpose_keypoints(SK, *pose, FRONT, feet=True)["pose"]
    for middle, (a, b) in (("neck", ("shoulder_l", "shoulder_r")), ("mid_hip", ("hip_l", "hip_r"))):
        want = 0.5 * (kp[BODY_25.index(a), :2] + kp[BODY_25.index(b), :2])
        np.testing.assert_allclose(kp[BODY_25.index(middle), :2], want, atol=1e-12)


def test_left_and_right_are_the_persons_from_the_front_and_from_behind() -> None:
    p, q = SK.rest_positions, SK.rest_frames
    front = openpose_keypoints(SK, p, q, FRONT)["pose"]
    back = openpose_keypoints(SK, p, q, BEHIND)["pose"]
    for r, left in (("shoulder_r", "shoulder_l"), ("wrist_r", "wrist_l"), ("ankle_r", "ankle_l"), ("eye_r", "eye_l")):
        ir, il = COCO_18.index(r), COCO_18.index(left)
        assert front[ir, 0] < front[il, 0], r  # (facing the camera: the person's right on the picture's left)
        assert back[ir, 0] > back[il, 0], r  # (seen from behind: on the right)
    ear_r, ear_l = COCO_18.index("ear_r"), COCO_18.index("ear_l")
    assert back[ear_r, 0] > back[ear_l, 0]
    hands = openpose_keypoints(SK, p, q, BEHIND)
    assert hands["hand_right"][0, 0] > hands["hand_left"][0, 0]


def test_the_face_sits_on_the_head_facing_forward(pose) -> None:
    p, q = pose
    face = landmarks.face_points(SK, p, q)
    forward = fabrik3d.face_axis(SK, q)
    eyes = 0.5 * (face["eye_l"] + face["eye_r"])
    ears = 0.5 * (face["ear_l"] + face["ear_r"])
    assert np.dot(face["nose"] - ears, forward) > 0.08  # (the nose ahead of the ears, along the face's axis)
    assert np.dot(eyes - ears, forward) > 0.06
    assert 0.05 < np.linalg.norm(face["eye_l"] - face["eye_r"]) < 0.08
    assert 0.17 < np.linalg.norm(face["ear_l"] - face["ear_r"]) < 0.21
    kp = openpose_keypoints(SK, p, q, FRONT)["pose"]
    nose, neck = kp[COCO_18.index("nose")], kp[COCO_18.index("neck")]
    eye_r, eye_l = kp[COCO_18.index("eye_r")], kp[COCO_18.index("eye_l")]
    assert nose[1] < neck[1] and eye_r[1] < nose[1] and eye_r[0] < nose[0] < eye_l[0]


def test_the_face_is_on_the_mannequins_head() -> None:
    m = Mannequin.of(SK)
    verts, _ = m.skinned(SK.rest_positions, SK.rest_frames)
    face = landmarks.face_points(SK, SK.rest_positions, SK.rest_frames)
    for name, point in face.items():
        assert np.min(np.linalg.norm(verts - point, axis=1)) < 0.025, name


def test_occlusion_hides_the_far_side_and_the_face_from_behind() -> None:
    r = fabrik3d.solve(SK, {"hand_l": (0.3, 0.8, 0.05), "hand_r": (-0.3, 0.8, 0.05)})  # (the arms down)
    p, q = r.positions, r.rotations
    seen = openpose_keypoints(SK, p, q, SIDE)["pose"]
    hid = openpose_keypoints(SK, p, q, SIDE, occlusion=True)["pose"]
    assert (seen[:, 2] == 1.0).all()
    for name in ("shoulder_r", "hip_r", "eye_r", "ear_r"):  # (the right side, behind the body seen from its left)
        assert hid[COCO_18.index(name), 2] == 0.0 and (hid[COCO_18.index(name), :2] == 0.0).all(), name
    for name in ("shoulder_l", "elbow_l", "wrist_l", "hip_l", "knee_l", "ankle_l", "nose", "eye_l", "ear_l", "neck"):
        assert hid[COCO_18.index(name), 2] == 1.0, name
    back = openpose_keypoints(SK, p, q, BEHIND, occlusion=True)["pose"]
    for name in ("nose", "eye_r", "eye_l"):
        assert back[COCO_18.index(name), 2] == 0.0, name
    for name in ("ear_r", "ear_l", *JOINTS):
        assert back[COCO_18.index(name), 2] == 1.0, name
    front = openpose_keypoints(SK, p, q, FRONT, occlusion=True, feet=True)
    assert (front["pose"][:, 2] == 1.0).all() and front["hand_left"][0, 2] == front["hand_right"][0, 2] == 1.0
    # (the hanging hands' fingers lie one behind the other seen from the front: some hidden, the index seen)
    assert front["hand_left"][5:9, 2].all() and not front["hand_left"][13:21, 2].all()


def test_keypoints_outside_the_canvas_or_behind_the_eye_are_missing() -> None:
    p, q = SK.rest_positions, SK.rest_frames
    head = Camera((0.0, 1.65, 1.5), (0.0, 1.65, 0.0), (0.0, 1.0, 0.0), view_angle=20.0)
    kp = openpose_keypoints(SK, p, q, head)
    assert kp["pose"][COCO_18.index("nose"), 2] == 1.0
    for name in ("ankle_l", "knee_r", "wrist_l"):
        assert (kp["pose"][COCO_18.index(name)] == 0.0).all(), name
    assert (kp["hand_left"] == 0.0).all()
    inside = Camera((0.0, 1.0, 0.05), (0.0, 1.0, 2.0), (0.0, 1.0, 0.0))  # (inside the body, looking forward)
    assert (openpose_keypoints(SK, p, q, inside)["pose"][:, 2] == 0.0).all()


def test_feet_big_toe_small_toe_and_heel() -> None:
    p, q = SK.rest_positions, SK.rest_frames
    kp = openpose_keypoints(SK, p, q, SIDE, feet=True)["pose"]  # (the picture's left is the body's front)
    ankle, big, small, heel = (kp[BODY_25.index(n)] for n in ("ankle_l", "big_toe_l", "small_toe_l", "heel_l"))
    assert big[0] < small[0] < ankle[0] < heel[0]
    assert big[1] > ankle[1] and heel[1] > ankle[1]
    top = Camera((0.0, 4.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, -1.0), parallel=True, parallel_scale=0.5)
    kp = openpose_keypoints(SK, p, q, top, feet=True)["pose"]  # (from above: +X right, +Z down the picture)
    for s, outward in (("l", 1.0), ("r", -1.0)):
        big, small = kp[BODY_25.index(f"big_toe_{s}")], kp[BODY_25.index(f"small_toe_{s}")]
        assert (small[0] - big[0]) * outward > 0, s  # (the big toe inside, the small toe outside)


def test_a_fists_keypoints_lie_on_the_hand() -> None:
    r = fabrik3d.solve(SK, {"hand_l": (0.45, 1.25, 0.35), "hand_r": (-0.45, 1.25, 0.35)})
    p, q = fabrik3d.shape_hand(SK, r.positions, r.rotations, "l", "fist")
    p, q = fabrik3d.shape_hand(SK, p, q, "r", "fist")
    camera = Camera((0.0, 1.3, 1.6), (0.0, 1.25, 0.35), (0.0, 1.0, 0.0), view_angle=30.0, width=1024, height=512)
    kp = openpose_keypoints(SK, p, q, camera)
    m = Mannequin.of(SK)
    verts, _ = m.skinned(p, q)
    tri = project(camera, verts.astype(float))[0][m.triangles]
    for key in ("hand_left", "hand_right"):
        assert (kp[key][:, 2] == 1.0).all()
        for x, y, _ in kp[key]:
            assert _covered(tri, x, y), (key, x, y)  # (inside the mannequin's silhouette)
        spread = np.ptp(kp[key][:, :2], axis=0)
        assert spread.max() < 60  # (a fist: all within a hand's breadth, ~0.1 m, here ~80 px)


def _covered(tri: np.ndarray, x: float, y: float) -> bool:
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    d1 = (b[:, 0] - a[:, 0]) * (y - a[:, 1]) - (b[:, 1] - a[:, 1]) * (x - a[:, 0])
    d2 = (c[:, 0] - b[:, 0]) * (y - b[:, 1]) - (c[:, 1] - b[:, 1]) * (x - b[:, 0])
    d3 = (a[:, 0] - c[:, 0]) * (y - c[:, 1]) - (a[:, 1] - c[:, 1]) * (x - c[:, 0])
    return bool(np.any(((d1 >= 0) & (d2 >= 0) & (d3 >= 0)) | ((d1 <= 0) & (d2 <= 0) & (d3 <= 0))))


MIXAMO = {"pelvis": "Hips", "spine_01": "Spine", "spine_02": "Spine1", "chest": "Spine2", "neck": "Neck",
          "head": "Head", "clavicle": "Shoulder", "shoulder": "Arm", "elbow": "ForeArm", "wrist": "Hand",
          "hip": "UpLeg", "knee": "Leg", "ankle": "Foot", "toe": "ToeBase"}  # fmt: skip


def mixamo_name(role: str) -> str:
    base, side = (role[:-2], role[-1]) if role[-2:] in ("_l", "_r") else (role, "")
    prefix = "mixamorig:" + {"l": "Left", "r": "Right", "": ""}[side]
    if base in MIXAMO:
        return prefix + MIXAMO[base]
    parts = base.split("_")
    if parts[0] in ("thumb", "index", "middle", "ring", "pinky") and len(parts) == 2:
        k = {"01": 1, "02": 2, "03": 3, "end": 4}[parts[1]]
        return f"{prefix}Hand{parts[0].capitalize()}{k}"
    return prefix + "Extra_" + base


def test_a_mixamo_named_rig_gives_the_same_keypoints(pose) -> None:
    rig = Skeleton([mixamo_name(n) for n in SK.names], SK.parents, SK.rest_positions)
    p, q = pose
    for camera in (FRONT, BEHIND):
        mine = openpose_keypoints(SK, p, q, camera, feet=True)
        theirs = openpose_keypoints(rig, p, q, camera, feet=True)
        for key in ("pose", "hand_left", "hand_right"):
            np.testing.assert_allclose(theirs[key], mine[key], atol=1e-9, err_msg=key)


def test_hands_off_gives_empty_hands() -> None:
    kp = openpose_keypoints(SK, SK.rest_positions, SK.rest_frames, FRONT, hands=False)
    assert kp["hand_left"].shape == (0, 3) and kp["hand_right"].shape == (0, 3)
    assert len(HAND_21) == 21 and HAND_21[:5] == ("wrist", "thumb_01", "thumb_02", "thumb_03", "thumb_tip")


@pytest.mark.parametrize(
    ("args", "kwargs", "named"),
    [
        ((fabrik3d.presets.get("robot_arm"), None, None, FRONT), {}, "skeleton"),
        ((SK, np.zeros((3, 3)), SK.rest_frames, FRONT), {}, "positions"),
        ((SK, np.full((65, 3), math.nan), SK.rest_frames, FRONT), {}, "positions"),
        ((SK, SK.rest_positions, np.zeros((65, 4)), FRONT), {}, "rotations"),
        ((SK, SK.rest_positions, SK.rest_frames, "front"), {}, "camera"),
        ((SK, SK.rest_positions, SK.rest_frames, FRONT), {"hands": "yes"}, "hands"),
        ((SK, SK.rest_positions, SK.rest_frames, FRONT), {"feet": 1}, "feet"),
        ((SK, SK.rest_positions, SK.rest_frames, FRONT), {"occlusion": None}, "occlusion"),
    ],
)
def test_bad_input_is_a_one_line_error_naming_the_argument(args, kwargs, named) -> None:
    sk, p, q, cam = args
    if p is None:
        p, q = sk.rest_positions, sk.rest_frames
    with pytest.raises(ValueError, match=named) as info:
        openpose_keypoints(sk, p, q, cam, **kwargs)
    assert "\n" not in str(info.value)
