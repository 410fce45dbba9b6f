"""Hand shapes: the fingers of one hand turned by forward kinematics into a fist, a point, a grip...

A hand is found by its finger roles and turned about axes read from its rest pose
(``fabrik3d.solver.hand_pose``), so a shape holds on the humanoid preset and on any rig whose finger
roles are known. A shape is ``Angles`` per finger: a flexion per joint, the base knuckle's spread and
twist, in degrees; each joint's turn (``fabrik3d.solver.fk``) is then clamped to its own limits by
``turn_joint``, which moves nothing but the finger below the joint.

Shapes (``SHAPES``): ``open`` (straight), ``relaxed``, ``fist`` (each fingertip on the palm beside its
centre, the thumb closed over the index's and middle finger's middle phalanges: solved for the hand,
``fabrik3d.solver.fist``), ``point`` (the index straight, the others as in the fist), ``spread``
(straight and spread), ``grip`` (wrapped round a cylinder of ``diameter`` across the palm), ``pinch``
(the thumb's tip on the index's, solved for the hand).

Shapes: ``positions (n, 3)`` scene units (metres for the preset), ``rotations (n, 4)`` world frames
(x, y, z, w), as ``SolveResult``'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.solver.fist import PINCH, fist_angles, fist_tips, pinching_thumb, thumb_contact
from fabrik3d.solver.hand_pose import (
    FINGER_HALF_THICKNESS,
    PALM_HALF_THICKNESS,
    TIP_SHARE,
    Angles,
    finger_axes,
    finger_joints,
    finger_map,
    fingertip,
    palm_center,
    turn_fingers,
)

__all__ = [
    "FINGER_HALF_THICKNESS", "PALM_HALF_THICKNESS", "SHAPES", "TIP_SHARE", "finger_joints", "finger_map",
    "fingertip", "fist_tips", "palm_center", "shape_hand", "thumb_contact",
]  # fmt: skip

SHAPES: tuple[str, ...] = ("open", "relaxed", "fist", "point", "spread", "grip", "pinch")
# Flexion of each finger's three joints (degrees) in the relaxed hand.
_RELAXED = {"thumb": (10.0, 10.0, 10.0), "index": (15.0, 20.0, 10.0), "middle": (20.0, 25.0, 12.0),
            "ring": (25.0, 30.0, 15.0), "pinky": (30.0, 35.0, 15.0)}  # fmt: skip
# Spread of each finger's base knuckle (degrees, away from the middle finger) in the spread hand.
_SPREAD = {"thumb": 25.0, "index": 12.0, "middle": 0.0, "ring": 10.0, "pinky": 15.0}


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
    fist = fist_angles(skeleton, fingers, s, rig_map)
    wanted = _shape_angles(skeleton, fingers, shape, size, fist)
    for finger, value in _checked_curls(curls, fingers).items():
        f1, f2, f3, _, twist = fist[finger]
        wanted[finger] = (value * f1, value * f2, value * f3, wanted[finger][3], value * twist)
    if spread is not None:
        degrees = checks.number(spread, "spread")
        for finger in fingers:
            w = wanted[finger]
            wanted[finger] = (w[0], w[1], w[2], degrees * _SPREAD[finger] / _SPREAD["index"], w[4])
    if shape == "pinch" and "thumb" in fingers and "index" in fingers:
        wanted["thumb"] = pinching_thumb(skeleton, fingers, s, wanted["index"])
    p, q = np.array(positions, dtype=float), np.array(rotations, dtype=float)
    return turn_fingers(skeleton, p, q, fingers, finger_axes(skeleton, fingers, s), wanted, amount)


def _shape_angles(
    skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], shape: str, diameter: float, fist: dict[str, Angles]
) -> dict[str, Angles]:
    """finger -> its ``Angles`` for ``shape`` (``fist``: ``fabrik3d.solver.fist.fist_angles``')."""
    out: dict[str, Angles] = {}
    for finger, joints in fingers.items():
        if shape in ("open", "spread") or (shape == "point" and finger == "index"):
            out[finger] = (0.0, 0.0, 0.0, _SPREAD[finger] if shape == "spread" else 0.0, 0.0)
        elif shape == "relaxed":
            out[finger] = (*_RELAXED[finger], 0.0, 0.0)
        elif shape == "pinch":
            out[finger] = PINCH[finger]
        elif shape in ("fist", "point"):
            out[finger] = fist[finger]
        elif finger == "thumb":  # grip
            out[finger] = (30.0, 30.0, 30.0, 0.0, 0.0)
        else:  # grip: the bones chords of a circle round the cylinder, tangent to the palm at the knuckle
            radius = 0.5 * diameter + FINGER_HALF_THICKNESS
            lengths = [float(skeleton.bone_lengths[skeleton.first_child(j)] if skeleton.first_child(j) >= 0 else
                             skeleton.bone_lengths[j]) for j in joints]  # fmt: skip
            arcs = [2.0 * math.degrees(math.asin(min(1.0, length / (2.0 * radius)))) for length in lengths]
            out[finger] = (0.5 * arcs[0], 0.5 * (arcs[0] + arcs[1]), 0.5 * (arcs[1] + arcs[2]), 0.0, 0.0)
    return out


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
