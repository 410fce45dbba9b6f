"""A hand's fingers as forward kinematics works them: which joints they are, the axes they turn about,
turning them to given angles, and the points the hand shapes measure (fingertips, the palm's centre).

A hand is found by its finger roles (``fabrik3d.model.fingers``: ``{finger}_01_{side}``, ``_02``,
``_03``; the humanoid preset's joint names, or a rig's finger bones): a finger's joints *flex* about
``bone × closing`` (toward the palm; the thumb across it toward the little finger), its base knuckle
*spreads* about the palm's normal, away from the middle finger, and *twists* about its own bone (the
finger's flexion plane turned: the thumb's opposition, a finger's tip rolled toward its neighbour).
Axes come from the rest pose (``fabrik3d.model.fingers.hand_axes``), so they hold on any rig.

A finger's ``Angles``: ``(flexion 01, flexion 02, flexion 03, spread, twist)``, degrees, the flexions
counted from the finger straight. Units: scene units (metres for the preset and characters), degrees.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import rig_map as rigs
from fabrik3d.model.constraints import rest_bend
from fabrik3d.model.fingers import (
    FINGERS,
    KNUCKLES,
    closing,
    finger_role,
    flexion_axis,
    hand_axes,
    is_finger_role,
    knuckle_offset,
)
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import joint_turn, turn_joint

Angles = tuple[float, float, float, float, float]
# Per joint of a finger: (flexion axis, spread axis, twist axis) in the joint's rest frame, rest curl (deg).
Axes = dict[str, list[tuple[rot.Vec, rot.Vec, rot.Vec, float]]]
# The palm's surface lies this far from its bones (m): ``palm_center``.
PALM_HALF_THICKNESS = 0.012
# A finger without an end joint: its tip this share of its last bone past its last knuckle.
TIP_SHARE = 0.8
# A finger's half thickness (m): a fist's tips lie this far off the palm, the grip's fingers this far
# from the cylinder.
FINGER_HALF_THICKNESS = 0.009


def finger_joints(skeleton: Skeleton, side: str, rig_map: Any = None) -> dict[str, tuple[int, int, int]]:
    """finger -> the indices of its ``_01``, ``_02``, ``_03`` joints on ``side`` (``"l"``/``"r"``), for
    the fingers the skeleton has: joints named by finger role (``index_02_l``), or the bones of a
    rig's finger roles (``rig_map``, role -> joint name; default the one its names give,
    ``fabrik3d.model.rig_map.guess_rig_map``)."""
    roles = rig_map if rig_map is not None else finger_map(skeleton)
    out = {}
    for finger in FINGERS:
        names = [roles.get(finger_role(finger, k, side)) for k in KNUCKLES]
        if all(isinstance(n, str) and n in skeleton for n in names):
            out[finger] = tuple(skeleton.index(n) for n in names)  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def finger_map(skeleton: Skeleton) -> dict[str, str]:
    """role -> joint name of a skeleton's finger joints, from its names (cached on the skeleton)."""
    made = skeleton.__dict__.get("_finger_map")
    if made is None:
        made = {role: role for role in skeleton.names if is_finger_role(role)}
        if not made:
            made = {r: b for r, b in rigs.guess_rig_map(skeleton.names)[1].items() if is_finger_role(r)}
        skeleton.__dict__["_finger_map"] = made
    return made


def wrist_joint(skeleton: Skeleton, side: str, rig_map: Any, bases: dict[str, int]) -> int:
    """The wrist of a hand whose fingers' base knuckles are ``bases``: the joint of the ``wrist_{side}``
    role (``rig_map``, else the skeleton's names) where it lies above the fingers (a Rigify hand: above
    its palm bones), else the middle finger's parent."""
    parent = int(skeleton.parents[bases.get("middle", next(iter(bases.values())))])
    wrists = skeleton.__dict__.get("_wrists")
    if wrists is None:
        named = {r: r for r in (f"wrist_{s}" for s in "lr") if r in skeleton}
        wrists = named or {r: b for r, b in rigs.guess_rig_map(skeleton.names)[1].items() if r.startswith("wrist_")}
        skeleton.__dict__["_wrists"] = wrists
    name = (rig_map if rig_map is not None else wrists).get(f"wrist_{side}")
    k = parent
    while isinstance(name, str) and name in skeleton and k >= 0:
        if skeleton.names[k] == name:
            return k
        k = int(skeleton.parents[k])
    return parent


def palm_frame(
    skeleton: Skeleton, positions: Any, side: str, rig_map: Any = None
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``(wrist, along, across, palm)`` of the hand of ``side`` in the pose ``positions`` ``(n, 3)``: its
    wrist joint (``wrist_joint``) and its unit axes (``fabrik3d.model.fingers.hand_axes``)."""
    p = np.asarray(positions, dtype=float)
    bases = {f: j[0] for f, j in finger_joints(skeleton, side, rig_map).items()}
    wrist = wrist_joint(skeleton, side, rig_map, bases)
    return (wrist, *hand_axes(p, wrist, bases, side))


def palm_center(skeleton: Skeleton, positions: Any, side: str, rig_map: Any = None) -> np.ndarray:
    """``(3,)`` the centre of the palm of ``side`` in the pose ``positions`` ``(n, 3)``: halfway from
    the wrist (``wrist_joint``: the wrist role's joint, above a rig's palm bones) to the mean of the
    four base knuckles, on the palm's surface (``PALM_HALF_THICKNESS`` from the bones toward the palm)."""
    p = np.asarray(positions, dtype=float)
    fingers = finger_joints(skeleton, side, rig_map)
    knuckles = [p[fingers[f][0]] for f in ("index", "middle", "ring", "pinky") if f in fingers]
    wrist, _, _, palm = palm_frame(skeleton, p, side, rig_map)
    return 0.5 * (p[wrist] + np.mean(knuckles, axis=0)) + PALM_HALF_THICKNESS * palm


def fingertip(skeleton: Skeleton, positions: Any, rotations: Any, joints: tuple[int, int, int]) -> np.ndarray:
    """``(3,)`` the tip of the finger whose ``_01``, ``_02``, ``_03`` joints are ``joints``: its end
    joint, or where it has none (Blender writes no bone for a fingertip) a point past its last knuckle
    along that knuckle's frame (+Y), ``TIP_SHARE`` of the bone before it."""
    c = skeleton.first_child(joints[2])
    if c >= 0:
        return np.asarray(positions[c], dtype=float)
    along = rot.rotate(tuple(np.asarray(rotations[joints[2]], dtype=float).tolist()), rot.Y_AXIS)  # type: ignore[arg-type]
    return np.asarray(positions[joints[2]], dtype=float) + TIP_SHARE * float(
        skeleton.bone_lengths[joints[2]]
    ) * np.array(along)


def finger_bones(
    skeleton: Skeleton, positions: Any, rotations: Any, joints: tuple[int, int, int]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The three bones of a finger in a pose, each ``(start, end)``: knuckle to knuckle, then to its tip."""
    p = np.asarray(positions, dtype=float)
    chain = [p[joints[0]], p[joints[1]], p[joints[2]], fingertip(skeleton, p, rotations, joints)]
    return [(chain[k], chain[k + 1]) for k in range(3)]


def finger_axes(skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], side: str) -> Axes:
    """finger -> per joint (flexion axis, spread axis, twist axis, rest curl): the axes in the joint's
    own rest frame; the rest curl, degrees, how far a middle or last knuckle is flexed at rest from its
    finger straight (a Blender rig's relaxed fingers; 0 for the base knuckle), which a shape's flexions
    count from (``open`` is straight on any rig). Cached on the skeleton."""
    cache = skeleton.__dict__.setdefault("_finger_axes", {})
    key = (side, tuple(sorted(fingers.items())))
    if key in cache:
        return cache[key]  # type: ignore[no-any-return]
    rest = skeleton.rest_positions
    bases = {f: j[0] for f, j in fingers.items()}
    middle = bases.get("middle", next(iter(bases.values())))
    _, across, palm = hand_axes(rest, int(skeleton.parents[middle]), bases, side)
    out: Axes = {}
    for finger, joints in fingers.items():
        toward = closing(finger, across, palm, knuckle_offset(rest, bases, finger, across))
        away = -across if finger == "thumb" else (rest[joints[0]] - rest[middle] if finger != "middle" else across)
        axes = []
        for j in joints:
            c = skeleton.first_child(j)
            bone = _unit(rest[c] - rest[j] if c >= 0 else rest[j] - rest[int(skeleton.parents[j])])
            flex = flexion_axis(bone, toward)
            normal = _unit(toward - bone * float(bone @ toward))
            spread = normal if float(np.cross(normal, bone) @ away) > 0.0 else -normal
            to_local = rot.conj(tuple(skeleton.rest_frames[j].tolist()))  # type: ignore[arg-type]
            curl = rest_bend(rest[j] - rest[int(skeleton.parents[j])], bone, flex) if j != joints[0] else 0.0
            local = [rot.rotate(to_local, tuple(v)) for v in (flex, spread, bone)]  # type: ignore[arg-type]
            axes.append((local[0], local[1], local[2], curl))
        out[finger] = axes
    cache[key] = out
    return out


def turn_fingers(
    skeleton: Skeleton,
    p: np.ndarray,
    q: np.ndarray,
    fingers: dict[str, tuple[int, int, int]],
    axes: Axes,
    wanted: dict[str, Angles],
    amount: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The pose ``p``, ``q`` with each finger of ``fingers`` turned to ``wanted`` (``Angles``) about its
    ``axes`` (``finger_axes``), each joint clamped to its limits (``fabrik3d.solver.fk.turn_joint``);
    with ``amount`` < 1 each joint's turn slerped that far from its turn in ``q``."""
    for finger, joints in fingers.items():
        angles = wanted[finger]
        for k, j in enumerate(joints):
            flex_axis, spread_axis, twist_axis, curl = axes[finger][k]
            turn = rot.axis_angle(flex_axis, math.radians(angles[k] - curl))
            if k == 0 and angles[3]:
                turn = rot.mul(turn, rot.axis_angle(spread_axis, math.radians(angles[3])))
            if k == 0 and angles[4]:
                turn = rot.mul(turn, rot.axis_angle(twist_axis, math.radians(angles[4])))
            name = skeleton.names[j]
            if amount < 1.0:
                turn = rot.slerp(tuple(joint_turn(skeleton, q, name)), turn, amount)  # type: ignore[arg-type]
            p, q = turn_joint(skeleton, p, q, name, turn)
    return p, q


def _unit(v: Any) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / float(np.linalg.norm(a))
