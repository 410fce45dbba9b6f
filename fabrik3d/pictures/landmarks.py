"""The points of a posed humanoid that OpenPose marks and no joint stands for: the face, the feet, the hands.

Each landmark is placed once on the rest pose and then moves rigidly with the joint that carries it
(``carry``: ``R_j · R0_j⁻¹`` about the rest joint, onto the posed joint, as the mannequin's parts move,
``fabrik3d.model.skinning.pose_deltas``). Rest conventions: the body faces +Z, its left is +X, +Y up.
Sizes are the mannequin's (``fabrik3d.model.mannequin``: metres for a 1.75 m body, times the body's
height over 1.75 m).

**Face** (``face_points``): the skull is the mannequin's head, an ellipsoid of half-widths ``HEAD``
(across, up, front to back). Where the head joint is the crown (the preset: more than ``CROWN`` above
the neck) the skull's centre is the mannequin's, 0.55 of the way from the neck to the head, and the
neck's frame carries it, as it carries the mannequin's head; where the head joint is the skull's base
(a rig's ``Head``) the centre lies ``SKULL_RISE`` above it and the head's frame carries it. On it: the
nose at the tip of the mannequin's nose, the eyes on the face's surface ``EYE`` across and up from the
centre, the ears on the sides, standing out of them (``EAR``). The face's forward is then the skull carrier's +Z at rest
(``fabrik3d.solver.look.face_axis`` of the head: the same axis while the head keeps the neck's frame).

**Feet** (``foot_points``, BODY_25's): the mannequin's sole from the ankle to the ball (the toe joint),
``fabrik3d.model.mass.SOLE``'s heel and tip: the heel at the sole's back (carried by the ankle), the big
toe at its tip on the inner side, the small toe behind the tip on the outer side (carried by the toe).

**Hands** (``hand_points``, OpenPose's 21): the wrist, then per finger (thumb, index, middle, ring,
little) its ``_01``, ``_02``, ``_03`` joints and its tip (``fabrik3d.solver.hand_pose.fingertip``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import mass
from fabrik3d.model.fingers import FINGERS
from fabrik3d.model.mannequin import HEAD, WIDTHS
from fabrik3d.solver.hand_pose import finger_joints, fingertip, wrist_joint

# A head joint this far above the neck (metres at 1.75 m) is the crown (the preset's), not the skull's base.
CROWN = 0.18
# The skull's centre above a head joint at the skull's base (metres at 1.75 m).
SKULL_RISE = 0.09
# The face on the skull, from its centre (metres at 1.75 m; across toward the body's left, up, front):
NOSE = (0.0, -0.01, HEAD[2] + 0.02)  # the mannequin's nose tip
EYE = (0.032, 0.02)  # the left eye; on the face's surface
EAR = (-0.005, -0.01, 0.012)  # up, front and out of the skull's side of the ears (they stand out)
# The foot: big toe inward and small toe outward of the sole's axis (shares of the foot's half-width),
# the small toe behind the tip (share of the ankle-to-ball length past the ball); heights above the ground.
BIG_TOE_IN, SMALL_TOE_OUT, SMALL_TOE_AT = 0.45, 0.75, 0.15
TOE_HEIGHT, HEEL_HEIGHT = 0.015, 0.01
FACE = ("nose", "eye_r", "eye_l", "ear_r", "ear_l")
FOOT = ("big_toe", "small_toe", "heel")


def body_scale(skeleton: Any) -> float:
    """The body's height over 1.75 m, as the mannequin's (its head joint's height above the ground)."""
    rest = np.asarray(skeleton.rest_positions, dtype=float)
    at = mass.humanoid_roles(skeleton)
    top = rest[at["head"], 1] if "head" in at else rest[:, 1].max()
    return max(0.05, float(top - rest[:, 1].min() + mass.REST_CLEARANCE) / 1.75)


def carry(skeleton: Any, positions: np.ndarray, rotations: np.ndarray, joint: int, rest_point: Any) -> np.ndarray:
    """``(3,)`` where ``rest_point`` (rigid with ``joint`` in the rest pose) lies in the pose."""
    turn = rot.quat_to_matrix(np.asarray(rotations[joint], dtype=float)[None])[0]
    turn = turn @ rot.quat_to_matrix(np.asarray(skeleton.rest_frames[joint], dtype=float)[None])[0].T
    rest = np.asarray(skeleton.rest_positions[joint], dtype=float)
    return positions[joint] + turn @ (np.asarray(rest_point, dtype=float) - rest)


def _skull(skeleton: Any) -> tuple[int, np.ndarray, float] | None:
    """``(carrier joint, rest centre, scale)`` of the skull, or None without a head role."""
    at = mass.humanoid_roles(skeleton)
    if "head" not in at:
        return None
    rest = np.asarray(skeleton.rest_positions, dtype=float)
    head = at["head"]
    neck = at.get("neck", int(skeleton.parents[head]))
    scale = body_scale(skeleton)
    if neck >= 0 and float(np.linalg.norm(rest[head] - rest[neck])) > CROWN * scale:
        return neck, rest[neck] + 0.55 * (rest[head] - rest[neck]), scale
    return head, rest[head] + np.array([0.0, SKULL_RISE * scale, 0.0]), scale


def face_rest(skeleton: Any) -> tuple[int, dict[str, np.ndarray]] | None:
    """``(carrier joint, name -> rest point)`` of ``FACE`` (module docstring), or None without a head."""
    skull = _skull(skeleton)
    if skull is None:
        return None
    carrier, centre, scale = skull
    a, b, c = HEAD

    def front(x: float, y: float) -> float:
        return c * float(np.sqrt(max(0.0, 1.0 - (x / a) ** 2 - (y / b) ** 2)))

    def side(y: float, z: float) -> float:
        return a * float(np.sqrt(max(0.0, 1.0 - (y / b) ** 2 - (z / c) ** 2)))

    local = {
        "nose": NOSE,
        "eye_l": (EYE[0], EYE[1], front(*EYE)),
        "eye_r": (-EYE[0], EYE[1], front(*EYE)),
        "ear_l": (side(*EAR[:2]) + EAR[2], *EAR[:2]),
        "ear_r": (-side(*EAR[:2]) - EAR[2], *EAR[:2]),
    }
    return carrier, {k: centre + scale * np.array(v) for k, v in local.items()}


def face_points(skeleton: Any, positions: np.ndarray, rotations: np.ndarray) -> dict[str, np.ndarray]:
    """name -> ``(3,)`` of ``FACE`` in the pose; empty without a head role."""
    made = skeleton.__dict__.get("_pictures_face")
    if made is None:
        made = skeleton.__dict__["_pictures_face"] = face_rest(skeleton) or (-1, {})
    carrier, rest = made
    return {k: carry(skeleton, positions, rotations, carrier, v) for k, v in rest.items()}


def foot_rest(skeleton: Any, side: str) -> dict[str, tuple[int, np.ndarray]]:
    """name -> ``(carrier joint, rest point)`` of ``FOOT`` on ``side`` (``"l"``/``"r"``); empty without an
    ankle and a toe role there."""
    at = mass.humanoid_roles(skeleton)
    ankle, toe = at.get(f"ankle_{side}"), at.get(f"toe_{side}")
    if ankle is None or toe is None:
        return {}
    rest = np.asarray(skeleton.rest_positions, dtype=float)
    length = float(np.linalg.norm(rest[toe] - rest[ankle]))
    if length <= 0.0:
        return {}
    along = (rest[toe] - rest[ankle]) / length
    flat = np.array([along[0], 0.0, along[2]])
    flat = flat / np.linalg.norm(flat) if np.linalg.norm(flat) > 1e-9 else np.array([0.0, 0.0, 1.0])
    outward = np.cross([0.0, 1.0, 0.0], flat) * (1.0 if side == "l" else -1.0)  # (the left foot's outside: +X)
    scale, ground = body_scale(skeleton), mass.rest_ground(skeleton)
    across = scale * WIDTHS["toe"][0]
    heel = rest[ankle] - mass.SOLE["heel"] * length * along
    tip = rest[toe] + mass.SOLE["tip"] * length * along
    big = tip - BIG_TOE_IN * across * outward
    small = rest[toe] + SMALL_TOE_AT * length * along + SMALL_TOE_OUT * across * outward
    heel[1], big[1], small[1] = ground + HEEL_HEIGHT * scale, ground + TOE_HEIGHT * scale, ground + TOE_HEIGHT * scale
    return {"big_toe": (toe, big), "small_toe": (toe, small), "heel": (ankle, heel)}


def foot_points(skeleton: Any, positions: np.ndarray, rotations: np.ndarray, side: str) -> dict[str, np.ndarray]:
    """name -> ``(3,)`` of ``FOOT`` on ``side`` in the pose; empty without the foot's roles."""
    return {k: carry(skeleton, positions, rotations, j, v) for k, (j, v) in foot_rest(skeleton, side).items()}


def hand_points(
    skeleton: Any, positions: np.ndarray, rotations: np.ndarray, side: str
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, ...]]]:
    """``(points (21, 3), present (21,) bool, joints)`` of the hand on ``side`` in OpenPose's order (module
    docstring); ``joints[k]`` the joints a point is (or lies past): empty for a missing one."""
    points, present = np.zeros((21, 3)), np.zeros(21, dtype=bool)
    joints: list[tuple[int, ...]] = [()] * 21
    fingers = finger_joints(skeleton, side)
    at = mass.humanoid_roles(skeleton)
    bases = {f: j[0] for f, j in fingers.items()}
    wrist = wrist_joint(skeleton, side, None, bases) if bases else at.get(f"wrist_{side}", -1)
    if wrist >= 0:
        points[0], present[0], joints[0] = positions[wrist], True, (wrist,)
    for k, finger in enumerate(FINGERS):
        if finger not in fingers:
            continue
        chain = fingers[finger]
        end = skeleton.first_child(chain[2])
        for i, j in enumerate(chain):
            points[1 + 4 * k + i], joints[1 + 4 * k + i] = positions[j], (j,)
        points[4 + 4 * k] = fingertip(skeleton, positions, rotations, chain)
        joints[4 + 4 * k] = (end,) if end >= 0 else (chain[2],)
        present[1 + 4 * k : 5 + 4 * k] = True
    return points, present, joints
