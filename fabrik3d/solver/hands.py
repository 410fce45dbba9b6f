"""Hand shapes: the fingers of one hand turned by forward kinematics into a fist, a point, a grip...

A hand is found by its finger roles (``fabrik3d.model.fingers``: ``{finger}_01_{side}``, ``_02``,
``_03``; the humanoid preset's joint names, or a rig's finger bones): a finger's joints *flex* about
``bone × closing`` (toward the palm; the thumb across it toward the little finger), its base knuckle
*spreads* about the palm's normal, away from the middle finger. Axes come from the rest pose
(``fabrik3d.model.fingers.hand_axes``), so they hold on any rig. A shape is a flexion per joint
and a spread per finger, in degrees; each joint's turn (``fabrik3d.solver.fk``) is then clamped to
its own limits by ``turn_joint``, which moves nothing but the finger below the joint.

Shapes (``SHAPES``): ``open`` (straight), ``relaxed``, ``fist``, ``point`` (the index straight, the
others as in the fist), ``spread`` (straight and spread), ``grip`` (wrapped round a cylinder of
``diameter`` across the palm), ``pinch`` (thumb and index tips together).

Shapes: ``positions (n, 3)`` scene units (metres for the preset), ``rotations (n, 4)`` world frames
(x, y, z, w), as ``SolveResult``'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model import rig_map as rigs
from fabrik3d.model.constraints import rest_bend
from fabrik3d.model.fingers import FINGERS, KNUCKLES, closing, finger_role, flexion_axis, hand_axes, is_finger_role
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.solver.fk import joint_turn, turn_joint

SHAPES: tuple[str, ...] = ("open", "relaxed", "fist", "point", "spread", "grip", "pinch")
# Flexion of each finger's three joints (degrees) in a fist, and in the relaxed hand.
_FIST = {"thumb": (40.0, 50.0, 45.0), "index": (90.0, 100.0, 80.0), "middle": (90.0, 100.0, 80.0),
         "ring": (90.0, 100.0, 80.0), "pinky": (95.0, 100.0, 80.0)}  # fmt: skip
_RELAXED = {"thumb": (10.0, 10.0, 10.0), "index": (15.0, 20.0, 10.0), "middle": (20.0, 25.0, 12.0),
            "ring": (25.0, 30.0, 15.0), "pinky": (30.0, 35.0, 15.0)}  # fmt: skip
_PINCH = {"thumb": (45.0, 20.0, 20.0), "index": (45.0, 50.0, 25.0), "middle": (30.0, 40.0, 20.0),
          "ring": (35.0, 45.0, 20.0), "pinky": (40.0, 45.0, 20.0)}  # fmt: skip
# Spread of each finger's base knuckle (degrees, away from the middle finger) in the spread hand
# and in a fist (the fingers close in).
_SPREAD = {"thumb": 25.0, "index": 12.0, "middle": 0.0, "ring": 10.0, "pinky": 15.0}
_FIST_SPREAD = {"thumb": 0.0, "index": -10.0, "middle": 0.0, "ring": -5.0, "pinky": -14.0}
# A fist closes a finger further (``_fist``) while its tip lies farther than this from the palm's
# centre (m).
FIST_TIP = 0.025
# The palm's surface lies this far from its bones (m): ``palm_center``.
PALM_HALF_THICKNESS = 0.012
# A finger without an end joint: its tip this share of its last bone past its last knuckle.
TIP_SHARE = 0.8
# The grip's fingers lie round the cylinder this far from its surface (their half thickness, m).
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


def shape_hand(
    skeleton: Skeleton,
    positions: Any,
    rotations: Any,
    side: str,
    shape: str,
    amount: float = 1.0,
    curls: dict[str, float] | None = None,
    spread: float | None = None,
    diameter: float = 0.04,
    rig_map: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The pose with the fingers of one hand turned toward ``shape`` (module docstring).

    Args:
        skeleton: a skeleton with fingers (the humanoid preset's names).
        positions: ``(n, 3)`` the pose; rotations: ``(n, 4)`` its world frames.
        side: ``"l"`` or ``"r"`` (or ``"left"``, ``"right"``).
        shape: one of ``SHAPES``.
        amount: 0..1, how far from the current fingers to the shape (each joint's turn slerped).
        curls: finger -> 0..1, overriding the shape's flexion of that finger: 0 straight, 1 as in
            the fist.
        spread: degrees, overriding the shape's spread (the index and the little finger the most).
        diameter: the grip's cylinder, scene units (> 0).
        rig_map: role -> joint name for a rig's fingers (``finger_joints``; default from its names).

    Returns:
        ``(positions (n, 3), rotations (n, 4))``: only the fingers of that hand moved; every
        finger joint within its limits.

    Raises:
        ValueError: naming the argument: an unknown side or shape, a skeleton without fingers on
            that side, an amount outside 0..1, bad curls, spread or diameter, bad arrays.
    """
    check_skeleton(skeleton)
    s = {"l": "l", "r": "r", "left": "l", "right": "r"}.get(side) if isinstance(side, str) else None
    if s is None:
        raise ValueError(f"side: expected 'l' or 'r', got {str(side)[:80]!r}")
    if shape not in SHAPES:
        raise ValueError(f"shape: expected one of {', '.join(SHAPES)}, got {str(shape)[:80]!r}")
    fingers = finger_joints(skeleton, s, rig_map)
    if not fingers:
        raise ValueError(f"side {s!r}: the skeleton has no fingers there (joints such as index_01_{s})")
    amount = _fraction(amount, "amount")
    size = checks.positive(diameter, "diameter")
    fist = _fist(skeleton, fingers, s, rig_map)
    wanted = _shape_angles(skeleton, fingers, shape, size, fist)
    for finger, value in _checked_curls(curls, fingers).items():
        wanted[finger] = (tuple(value * a for a in fist[finger][0]), wanted[finger][1])
    if spread is not None:
        degrees = checks.number(spread, "spread")
        for finger in fingers:
            wanted[finger] = (wanted[finger][0], degrees * _SPREAD[finger] / _SPREAD["index"])
    if shape == "pinch" and "thumb" in fingers and "index" in fingers:
        wanted["thumb"] = _pinching_thumb(skeleton, fingers, s, wanted["index"])
    p, q = np.array(positions, dtype=float), np.array(rotations, dtype=float)
    return _turn_fingers(skeleton, p, q, fingers, _hand_axes(skeleton, fingers, s), wanted, amount)


def _turn_fingers(
    skeleton: Skeleton,
    p: np.ndarray,
    q: np.ndarray,
    fingers: dict[str, tuple[int, int, int]],
    axes: dict[str, list[tuple[rot.Vec, rot.Vec, float]]],
    wanted: dict[str, tuple[tuple[float, ...], float]],
    amount: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The pose ``p``, ``q`` with each finger of ``fingers`` turned to ``wanted`` (flexions, spread)
    about its ``axes`` (``_hand_axes``)."""
    for finger, joints in fingers.items():
        flex, spread_deg = wanted[finger]
        for k, j in enumerate(joints):
            flex_axis, spread_axis, curl = axes[finger][k]
            turn = rot.axis_angle(flex_axis, math.radians(flex[k] - curl))
            if k == 0 and spread_deg:
                turn = rot.mul(turn, rot.axis_angle(spread_axis, math.radians(spread_deg)))
            name = skeleton.names[j]
            if amount < 1.0:
                turn = rot.slerp(tuple(joint_turn(skeleton, q, name)), turn, amount)  # type: ignore[arg-type]
            p, q = turn_joint(skeleton, p, q, name, turn)
    return p, q


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


def _pinching_thumb(
    skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], side: str, index: tuple[tuple[float, ...], float]
) -> tuple[tuple[float, ...], float]:
    """The thumb's flexions and spread that bring its tip nearest the index's tip, the index flexed as
    ``index`` (a coordinate search over the rest pose within the thumb's limits; cached per skeleton)."""
    cache = skeleton.__dict__.setdefault("_pinch", {})
    key = (side, index)
    if key in cache:
        return cache[key]
    rest_p, rest_q = np.array(skeleton.rest_positions), np.array(skeleton.rest_frames)
    pair = {"thumb": fingers["thumb"], "index": fingers["index"]}
    axes = _hand_axes(skeleton, fingers, side)

    def gap(x: list[float]) -> float:
        wanted = {"thumb": ((x[0], x[1], x[2]), x[3]), "index": index}
        p, q = _turn_fingers(skeleton, rest_p.copy(), rest_q.copy(), pair, axes, wanted)
        return float(
            np.linalg.norm(fingertip(skeleton, p, q, pair["thumb"]) - fingertip(skeleton, p, q, pair["index"]))
        )

    x = _nearest(gap, [*_PINCH["thumb"], 0.0])
    cache[key] = ((x[0], x[1], x[2]), x[3])
    return cache[key]


def _fist(
    skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], side: str, rig_map: Any
) -> dict[str, tuple[tuple[float, ...], float]]:
    """finger -> (flexions, spread) of the fist: ``_FIST`` and ``_FIST_SPREAD``, and for a finger whose
    tip these leave farther than ``FIST_TIP`` from the palm's centre (a rig's long little finger) a
    coordinate search over its flexions and spread from there, within its limits, until its tip is
    that near or can come no nearer (cached per skeleton)."""
    cache = skeleton.__dict__.setdefault("_fist", {})
    key = (side, tuple(sorted(fingers.items())))
    if key in cache:
        return cache[key]
    rest_p, rest_q = np.array(skeleton.rest_positions), np.array(skeleton.rest_frames)
    centre = palm_center(skeleton, rest_p, side, rig_map)  # (the fingers' turns leave the palm as it is)
    axes = _hand_axes(skeleton, fingers, side)
    out = {}
    for finger, joints in fingers.items():
        one = {finger: joints}

        def gap(x: list[float], finger: str = finger, one: dict[str, tuple[int, int, int]] = one) -> float:
            wanted = {finger: ((x[0], x[1], x[2]), x[3])}
            p, q = _turn_fingers(skeleton, rest_p.copy(), rest_q.copy(), one, axes, wanted)
            return float(np.linalg.norm(fingertip(skeleton, p, q, one[finger]) - centre))

        x = [*_FIST[finger], _FIST_SPREAD[finger]]
        if finger != "thumb" and gap(x) > FIST_TIP:
            x = _nearest(gap, x, enough=FIST_TIP)
        out[finger] = ((x[0], x[1], x[2]), x[3])
    cache[key] = out
    return out


def _nearest(gap: Any, x: list[float], enough: float = 0.0) -> list[float]:
    """A coordinate search from ``x`` (degrees; steps of 8 halved down to 0.25) for the ``x`` with the
    least ``gap(x)``, stopping once it is ``enough`` or less."""
    best, step = gap(x), 8.0
    while step >= 0.25 and best > enough:
        moved = False
        for k in range(len(x)):
            for sign in (1.0, -1.0):
                y = list(x)
                y[k] += sign * step
                value = gap(y)
                if value < best - 1e-9:
                    x, best, moved = y, value, True
        if not moved:
            step *= 0.5
    return x


def palm_center(skeleton: Skeleton, positions: Any, side: str, rig_map: Any = None) -> np.ndarray:
    """``(3,)`` the centre of the palm of ``side`` in the pose ``positions`` ``(n, 3)``: halfway from
    the wrist (the fingers' parent) to the mean of the four base knuckles, on the palm's surface
    (``PALM_HALF_THICKNESS`` from the bones toward the palm)."""
    p = np.asarray(positions, dtype=float)
    fingers = finger_joints(skeleton, side, rig_map)
    bases = {f: j[0] for f, j in fingers.items()}
    knuckles = [p[bases[f]] for f in ("index", "middle", "ring", "pinky") if f in bases]
    wrist = int(skeleton.parents[bases.get("middle", next(iter(bases.values())))])
    _, _, palm = hand_axes(p, wrist, bases, side)
    return 0.5 * (p[wrist] + np.mean(knuckles, axis=0)) + PALM_HALF_THICKNESS * palm


def _shape_angles(
    skeleton: Skeleton,
    fingers: dict[str, tuple[int, int, int]],
    shape: str,
    diameter: float,
    fist: dict[str, tuple[tuple[float, ...], float]],
) -> dict[str, tuple[tuple[float, ...], float]]:
    """finger -> (flexion of its three joints, spread), degrees, for ``shape`` (``fist``: ``_fist``'s)."""
    out: dict[str, tuple[tuple[float, ...], float]] = {}
    for finger, joints in fingers.items():
        if shape == "open":
            out[finger] = ((0.0, 0.0, 0.0), 0.0)
        elif shape == "spread":
            out[finger] = ((0.0, 0.0, 0.0), _SPREAD[finger])
        elif shape == "relaxed":
            out[finger] = (_RELAXED[finger], 0.0)
        elif shape == "pinch":
            out[finger] = (_PINCH[finger], 0.0)
        elif shape == "point" and finger == "index":
            out[finger] = ((0.0, 0.0, 0.0), 0.0)
        elif shape in ("fist", "point"):
            out[finger] = fist[finger]
        else:  # grip: the bones chords of a circle round the cylinder, tangent to the palm at the knuckle
            radius = 0.5 * diameter + FINGER_HALF_THICKNESS
            lengths = [float(skeleton.bone_lengths[skeleton.first_child(j)] if skeleton.first_child(j) >= 0 else
                             skeleton.bone_lengths[j]) for j in joints]  # fmt: skip
            arcs = [2.0 * math.degrees(math.asin(min(1.0, length / (2.0 * radius)))) for length in lengths]
            if finger == "thumb":
                out[finger] = ((30.0, 30.0, 30.0), 0.0)
            else:
                out[finger] = ((0.5 * arcs[0], 0.5 * (arcs[0] + arcs[1]), 0.5 * (arcs[1] + arcs[2])), 0.0)
    return out


def _hand_axes(
    skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], side: str
) -> dict[str, list[tuple[rot.Vec, rot.Vec, float]]]:
    """finger -> per joint (flexion axis, spread axis, rest curl): the axes in the joint's own rest
    frame; the rest curl, degrees, how far a middle or last knuckle is flexed at rest from its finger
    straight (a Blender rig's relaxed fingers; 0 for the base knuckle), which a shape's flexions count
    from (``open`` is straight on any rig)."""
    rest = skeleton.rest_positions
    bases = {f: j[0] for f, j in fingers.items()}
    middle = bases.get("middle", next(iter(bases.values())))
    _, across, palm = hand_axes(rest, int(skeleton.parents[middle]), bases, side)
    out = {}
    for finger, joints in fingers.items():
        toward = closing(finger, across, palm)
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
            axes.append((rot.rotate(to_local, tuple(flex)), rot.rotate(to_local, tuple(spread)), curl))  # type: ignore[arg-type]
        out[finger] = axes
    return out


def _unit(v: Any) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / float(np.linalg.norm(a))


def _fraction(value: Any, name: str) -> float:
    v = checks.number(value, name)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name}: expected a number from 0 to 1, got {v!r}")
    return v


def _checked_curls(curls: Any, fingers: dict[str, Any]) -> dict[str, float]:
    if curls is None:
        return {}
    if not isinstance(curls, dict):
        raise ValueError("curls: expected a mapping of finger -> 0..1")
    out = {}
    for finger, value in curls.items():
        if finger not in fingers:
            raise ValueError(f"curls: unknown finger {str(finger)[:80]!r}; fingers are {', '.join(fingers)}")
        out[finger] = _fraction(value, f"curls[{finger!r}]")
    return out
