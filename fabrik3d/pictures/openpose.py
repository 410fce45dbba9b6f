"""OpenPose's keypoints of a posed humanoid, seen by a camera.

Orders (OpenPose's ``poseParameters.hpp``): ``COCO_18`` (nose, neck, right shoulder, elbow, wrist, left
shoulder, elbow, wrist, right hip, knee, ankle, left hip, knee, ankle, right eye, left eye, right ear,
left ear) and ``BODY_25`` (the same with the mid-hip at 8 and the feet last: left big toe, small toe,
heel, right big toe, small toe, heel); a hand's 21 (``HAND_21``: the wrist, then thumb, index, middle,
ring and little finger, four each from the base to the tip).

OpenPose's right is the person's right (the humanoid's ``_r`` roles), whichever way the figure faces
the camera. Joints are found by role (``fabrik3d.model.mass.humanoid_roles``: the preset's names, or a
Mixamo, VRM, Rigify, Unreal rig's). Shoulders, elbows, wrists, hips, knees and ankles are those joints,
projected (``fabrik3d.pictures.camera.project``); the neck is the midpoint of the two shoulders and the
mid-hip that of the two hips, in the picture, as OpenPose's training data defines them (COCO has
neither: the neck is the shoulders' mean, as DWPose's conversion to OpenPose's order writes it); the
face, feet and fingertips are the landmarks of ``fabrik3d.pictures.landmarks``.

A keypoint's confidence is 1 when it lies inside the canvas (``0 <= x < width``, ``0 <= y < height``),
in front of a perspective camera and, with ``occlusion``, not hidden behind the body
(``fabrik3d.pictures.occlusion``); else 0, with ``x = y = 0`` as OpenPose writes a missing keypoint. A
keypoint the skeleton has no joint for (a rig without fingers) is missing too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model import mass
from fabrik3d.model import rig_map as rigs
from fabrik3d.model.skeleton import check_skeleton
from fabrik3d.pictures import landmarks
from fabrik3d.pictures.camera import _flag, check_camera, project
from fabrik3d.pictures.occlusion import hidden

COCO_18: tuple[str, ...] = (
    "nose", "neck", "shoulder_r", "elbow_r", "wrist_r", "shoulder_l", "elbow_l", "wrist_l", "hip_r", "knee_r",
    "ankle_r", "hip_l", "knee_l", "ankle_l", "eye_r", "eye_l", "ear_r", "ear_l",
)  # fmt: skip
BODY_25: tuple[str, ...] = (
    *COCO_18[:8], "mid_hip", *COCO_18[8:],
    "big_toe_l", "small_toe_l", "heel_l", "big_toe_r", "small_toe_r", "heel_r",
)  # fmt: skip
HAND_21: tuple[str, ...] = ("wrist", *(f"{f}_{k}" for f in ("thumb", "index", "middle", "ring", "pinky")
                                       for k in ("01", "02", "03", "tip")))  # fmt: skip
# Keypoints in the middle of two others (in the picture).
MIDDLES = {"neck": ("shoulder_l", "shoulder_r"), "mid_hip": ("hip_l", "hip_r")}
# The torso's roles: a middle keypoint lies inside the torso, which never hides it.
TORSO = ("pelvis", "spine_01", "spine_02", "spine_03", "chest", "neck", "clavicle_l", "clavicle_r")


def openpose_keypoints(
    skeleton: Any,
    positions: Any,
    rotations: Any,
    camera: Any,
    *,
    hands: bool = True,
    feet: bool = False,
    occlusion: bool = False,
) -> dict[str, np.ndarray]:
    """One person's OpenPose keypoints in ``camera``'s picture (module docstring).

    Args:
        skeleton: a humanoid ``Skeleton`` (the preset, or a rig whose names give its roles).
        positions: ``(n, 3)`` the pose, scene units; rotations: ``(n, 4)`` its world frames (x, y, z, w).
        camera: a ``fabrik3d.pictures.Camera`` (its size is the canvas).
        hands: the 21 keypoints of each hand; without, ``hand_left`` and ``hand_right`` are ``(0, 3)``.
        feet: BODY_25's 25 keypoints (the mid-hip and the feet) instead of COCO's 18.
        occlusion: confidence 0 for keypoints hidden behind the body (the mannequin's parts).

    Returns:
        ``{"pose": (18 or 25, 3), "hand_left": (21, 3), "hand_right": (21, 3)}``: x, y (pixels, y down,
        pixel centres at +0.5) and confidence (1 or 0) per keypoint.

    Raises:
        ValueError: naming the argument: a skeleton without humanoid roles, bad arrays, a bad camera,
            flags that are not booleans.
    """
    sk = check_skeleton(skeleton)
    cam = check_camera(camera)
    n = len(sk)
    p = checks.points(positions, "positions")
    if p.shape != (n, 3):
        raise ValueError(f"positions: expected shape ({n}, 3), got {p.shape}")
    q = checks.frames(rotations, n, "rotations")
    hands, feet, occlusion = _flag(hands, "hands"), _flag(feet, "feet"), _flag(occlusion, "occlusion")
    at = mass.humanoid_roles(sk)
    if len(at) < rigs.MIN_ROLES:
        raise ValueError(
            f"skeleton: openpose keypoints need a humanoid (joints named by role, or a known rig's names); "
            f"{len(at)} roles found"
        )
    names = BODY_25 if feet else COCO_18
    face = landmarks.face_points(sk, p, q)
    foot = {f"{k}_{s}": (v, s) for s in "lr" for k, v in landmarks.foot_points(sk, p, q, s).items()}
    points, present, owners = [], [], []

    def joint_owners(j: int) -> tuple[int, ...]:
        return (j, int(sk.parents[j]))

    for name in names:
        point, ok, own = np.zeros(3), True, ()
        if name in MIDDLES:
            a, b = MIDDLES[name]
            ok = a in at and b in at
            if ok:
                point = 0.5 * (p[at[a]] + p[at[b]])
                own = (*{at[r] for r in TORSO if r in at}, *joint_owners(at[a]), *joint_owners(at[b]))
        elif name in face:
            point = face[name]
        elif name in foot:
            point, s = foot[name]
            own = tuple(at[r] for r in (f"ankle_{s}", f"toe_{s}") if r in at)
        elif name in at:
            point, own = p[at[name]], joint_owners(at[name])
        else:
            ok = False
        points.append(point)
        present.append(ok)
        owners.append(own)
    hand_parts = []
    for s in ("l", "r"):
        if hands:
            h, ok, joints = landmarks.hand_points(sk, p, q, s)
            hand_parts.append((h, ok, [tuple({*j, *(int(sk.parents[k]) for k in j)}) for j in joints]))
    all_points = np.concatenate([np.array(points), *(h for h, _, _ in hand_parts)]) if hand_parts else np.array(points)
    all_present = np.concatenate([np.array(present, dtype=bool), *(ok for _, ok, _ in hand_parts)])
    all_owners = [*owners, *(o for _, _, parts in hand_parts for o in parts)]
    pixels, depth = project(cam, all_points)
    for k, name in enumerate(names):  # (the middles: between the two keypoints in the picture)
        if name in MIDDLES and all_present[k]:
            a, b = (names.index(r) for r in MIDDLES[name])
            pixels[k] = 0.5 * (pixels[a] + pixels[b])
    seen = all_present & np.isfinite(pixels).all(axis=1)
    seen &= (pixels[:, 0] >= 0) & (pixels[:, 0] < cam.width) & (pixels[:, 1] >= 0) & (pixels[:, 1] < cam.height)
    if not cam.parallel:
        seen &= depth > 0.0
    if occlusion and seen.any():
        check = np.flatnonzero(seen)
        behind = hidden(sk, p, q, cam, all_points[check], [all_owners[k] for k in check])
        seen[check[behind]] = False
    out = np.zeros((len(all_points), 3))
    out[seen, :2] = pixels[seen]
    out[seen, 2] = 1.0
    m = len(names)
    empty = np.zeros((0, 3))
    return {
        "pose": out[:m],
        "hand_left": out[m : m + 21] if hands else empty,
        "hand_right": out[m + 21 : m + 42] if hands else empty.copy(),
    }
