"""The fist and the pinch, solved for the hand at hand: each finger's angles by a small least-squares
solve (``fabrik3d.solver.thumb.least_squares``) toward where its tip belongs, within its range.

* **Fist.** Each of the four fingers takes its tip to its place on the palm (``fist_tips``: beside
  the palm's centre, the four side by side) with its angles as near ``FIST`` as that allows; then the
  thumb closes over the curled index and middle fingers: its tip on ``thumb_contact`` (over their
  middle phalanges, on their far side from the palm), its two phalanges clear of the other fingers.
* **Pinch.** The index bends as ``PINCH`` has it, and the thumb's tip meets the index's.

Angles are ``fabrik3d.solver.hand_pose.Angles`` (degrees); they are solved on the rest pose and cached
on the skeleton, so a shape costs one solve per skeleton and hand (about a second). A hand that mirrors
the other, once that one's are solved, takes them mirrored (``mirrored``: the flexions and spreads, the
twists negated), checked on its pose, instead of solving again. Units: metres, degrees.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fabrik3d.model.fingers import FINGER_RANGE, THUMB_RANGE
from fabrik3d.model.mirror import reflect
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.hand_pose import (
    FINGER_HALF_THICKNESS,
    Angles,
    Axes,
    finger_axes,
    finger_bones,
    finger_joints,
    fingertip,
    palm_center,
    palm_frame,
    turn_fingers,
)
from fabrik3d.solver.thumb import clearance, contact_point, least_squares

# The fist's angles (``Angles``) before they are fitted to the hand: where a finger's solve starts
# and what it holds to.
FIST: dict[str, Angles] = {
    "thumb": (40.0, 50.0, 45.0, 0.0, 0.0), "index": (90.0, 100.0, 80.0, -10.0, 0.0),
    "middle": (90.0, 100.0, 80.0, 0.0, 0.0), "ring": (90.0, 100.0, 80.0, -5.0, 0.0),
    "pinky": (95.0, 100.0, 80.0, -14.0, 0.0),
}  # fmt: skip
# The pinch's: the index's as they are; the thumb's where its solve starts.
PINCH: dict[str, Angles] = {
    "thumb": (45.0, 20.0, 20.0, 0.0, 0.0), "index": (45.0, 50.0, 25.0, 0.0, 0.0),
    "middle": (30.0, 40.0, 20.0, 0.0, 0.0), "ring": (35.0, 45.0, 20.0, 0.0, 0.0),
    "pinky": (40.0, 45.0, 20.0, 0.0, 0.0),
}  # fmt: skip
# A fist's fingertips lie side by side across the palm this far apart (m, ``fist_tips``).
TIP_SPACING = 0.013
# How much a solved finger holds to its starting angles: metres of distance traded for a degree
# (0.1 mm a degree), so that of the angles that reach, the nearest to ``FIST`` are taken.
STAY = 1e-4
# A solve may flex a joint this far (degrees) past its range: a rig's finger joint without limits (a
# Mixamo middle knuckle, which is its hand) goes there; ``turn_joint`` clamps a limited one.
BEYOND = 30.0
# A hand takes the other hand's angles mirrored (``mirrored``) when, posed with them on the rest pose,
# each of its finger joints and tips lies this near (m) the reflection of the other hand's.
MIRROR_TOLERANCE = 1e-6
# The hand across the body from a side (``"l"``/``"r"``).
OTHER_SIDE = {"l": "r", "r": "l"}


def fist_angles(
    skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], side: str, rig_map: Any = None
) -> dict[str, Angles]:
    """finger -> its ``Angles`` in the fist of ``side`` (module docstring; cached per skeleton): the four
    fingers solved one by one, middle, ring, index, little, each tip kept
    ``fabrik3d.solver.thumb.CLEARANCE`` from the last two bones of those already placed."""
    cache = skeleton.__dict__.setdefault("_fist", {})
    key = (side, tuple(sorted(fingers.items())))
    if key in cache:
        return cache[key]  # type: ignore[no-any-return]
    other = OTHER_SIDE.get(side)
    if other is not None:
        theirs = finger_joints(skeleton, other, rig_map)
        done = cache.get((other, tuple(sorted(theirs.items()))))
        mine = None if done is None else mirrored(skeleton, fingers, side, theirs, done)
        if mine is not None:
            cache[key] = mine
            return mine
    rest_p, rest_q = np.array(skeleton.rest_positions), np.array(skeleton.rest_frames)
    targets = fist_tips(skeleton, rest_p, side, rig_map)  # (the fingers' turns leave the palm as it is)
    axes = finger_axes(skeleton, fingers, side)
    out = {f: FIST[f] for f in fingers}
    p, q, placed = rest_p, rest_q, []  # (the fingers solved so far, as posed, and their last two bones)
    for finger in sorted(targets, key=("middle", "ring", "index", "pinky").index):
        one = {finger: fingers[finger]}

        def residual(x: np.ndarray, finger: str = finger, one: dict = one, at: tuple = (p, q, placed)) -> np.ndarray:
            pp, qq = turn_fingers(skeleton, at[0].copy(), at[1].copy(), one, axes, {finger: _angles(x)})
            last = finger_bones(skeleton, pp, qq, one[finger])[2]
            return np.concatenate([last[1] - targets[finger], clearance(last, at[2])])

        out[finger] = _solve(residual, FIST[finger], FINGER_RANGE)
        p, q = turn_fingers(skeleton, p, q, one, axes, {finger: out[finger]})
        placed = placed + finger_bones(skeleton, p, q, one[finger])[1:]
    if {"thumb", "index", "middle"} <= set(fingers):
        out["thumb"] = _fist_thumb(skeleton, fingers, side, rig_map, axes, out)
    cache[key] = out
    return out


def fist_tips(skeleton: Skeleton, positions: Any, side: str, rig_map: Any = None) -> dict[str, np.ndarray]:
    """finger -> ``(3,)`` where the tip of each of the four fingers of ``side`` rests in a fist, in the
    pose ``positions`` ``(n, 3)``: ``FINGER_HALF_THICKNESS`` off the palm's surface beside its centre
    (``palm_center``), the four side by side across the palm ``TIP_SPACING`` apart in the order of
    their knuckles, centred on it."""
    p = np.asarray(positions, dtype=float)
    fingers = finger_joints(skeleton, side, rig_map)
    four = [f for f in ("index", "middle", "ring", "pinky") if f in fingers]
    if not four:
        return {}
    _, _, across, palm = palm_frame(skeleton, p, side, rig_map)
    centre = palm_center(skeleton, p, side, rig_map) + FINGER_HALF_THICKNESS * palm
    four.sort(key=lambda f: float(p[fingers[f][0]] @ across))
    return {f: centre + (k - 0.5 * (len(four) - 1)) * TIP_SPACING * across for k, f in enumerate(four)}


def thumb_contact(
    skeleton: Skeleton, positions: Any, side: str, rig_map: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(contact, midpoint, outward)``, ``(3,)`` each, of the thumb of ``side`` in the pose ``positions``
    ``(n, 3)``: where its tip rests in a fist, over the index's and middle finger's middle phalanges
    (``fabrik3d.solver.thumb.contact_point``: their midpoint, and the unit vector away from the palm).
    Raises ``KeyError`` for a hand without an index or a middle finger."""
    p = np.asarray(positions, dtype=float)
    fingers = finger_joints(skeleton, side, rig_map)
    palm = palm_frame(skeleton, p, side, rig_map)[3]
    index, middle = fingers["index"], fingers["middle"]
    return contact_point((p[index[1]], p[index[2]]), (p[middle[1]], p[middle[2]]), palm)


def pinching_thumb(skeleton: Skeleton, fingers: dict[str, tuple[int, int, int]], side: str, index: Angles) -> Angles:
    """The thumb's ``Angles`` that bring its tip onto the index's tip, the index at ``index``: least
    squares over the rest pose within the thumb's range (cached per skeleton)."""
    cache = skeleton.__dict__.setdefault("_pinch", {})
    key = (side, index)
    if key in cache:
        return cache[key]  # type: ignore[no-any-return]
    done = cache.get((OTHER_SIDE.get(side), (*index[:4], -index[4])))
    if done is not None:
        theirs = finger_joints(skeleton, OTHER_SIDE[side])
        both = mirrored(skeleton, fingers, side, theirs, {"thumb": done, "index": (*index[:4], -index[4])})
        if both is not None:
            cache[key] = both["thumb"]
            return cache[key]  # type: ignore[no-any-return]
    rest_p, rest_q = np.array(skeleton.rest_positions), np.array(skeleton.rest_frames)
    pair = {"thumb": fingers["thumb"], "index": fingers["index"]}
    axes = finger_axes(skeleton, fingers, side)
    p, q = turn_fingers(skeleton, rest_p, rest_q, {"index": pair["index"]}, axes, {"index": index})
    tip = fingertip(skeleton, p, q, pair["index"])
    bones = finger_bones(skeleton, p, q, pair["index"])[:2]

    def residual(x: np.ndarray) -> np.ndarray:
        pp, qq = turn_fingers(skeleton, p.copy(), q.copy(), {"thumb": pair["thumb"]}, axes, {"thumb": _angles(x)})
        chain = [pp[j] for j in pair["thumb"]] + [fingertip(skeleton, pp, qq, pair["thumb"])]
        return np.concatenate([chain[3] - tip, clearance(chain[1:], bones)])

    cache[key] = _solve(residual, PINCH["thumb"], THUMB_RANGE, starts=2)
    return cache[key]  # type: ignore[no-any-return]


def _fist_thumb(
    skeleton: Skeleton,
    fingers: dict[str, tuple[int, int, int]],
    side: str,
    rig_map: Any,
    axes: Axes,
    fist: dict[str, Angles],
) -> Angles:
    """The thumb's ``Angles`` in the fist, the other fingers at ``fist``: its tip on its contact
    (``thumb_contact``), its two phalanges clear of the other fingers' bones (``clearance``)."""
    others = {f: j for f, j in fingers.items() if f != "thumb"}
    rest_p, rest_q = np.array(skeleton.rest_positions), np.array(skeleton.rest_frames)
    p, q = turn_fingers(skeleton, rest_p, rest_q, others, axes, fist)
    target = thumb_contact(skeleton, p, side, rig_map)[0]
    bones = [bone for joints in others.values() for bone in finger_bones(skeleton, p, q, joints)]
    joints = fingers["thumb"]

    def residual(x: np.ndarray) -> np.ndarray:
        pp, qq = turn_fingers(skeleton, p.copy(), q.copy(), {"thumb": joints}, axes, {"thumb": _angles(x)})
        chain = [pp[joints[1]], pp[joints[2]], fingertip(skeleton, pp, qq, joints)]
        return np.concatenate([chain[2] - target, clearance(chain, bones)])

    return _solve(residual, FIST["thumb"], THUMB_RANGE, starts=2)


def mirrored(
    skeleton: Skeleton,
    fingers: dict[str, tuple[int, int, int]],
    side: str,
    theirs: dict[str, tuple[int, int, int]],
    angles: dict[str, Angles],
) -> dict[str, Angles] | None:
    """The other hand's ``angles`` (finger -> ``Angles``, its fingers ``theirs``) for the hand of ``side``
    (its ``fingers``): the same flexions and spreads, the twists negated; ``None`` unless posing each on
    the rest pose puts every finger joint and tip of this hand within ``MIRROR_TOLERANCE`` of the
    reflection of the other's (``fabrik3d.model.mirror.reflect``): the two hands mirror each other."""
    if set(angles) - set(fingers) or set(angles) - set(theirs):
        return None
    mine = {f: (*a[:4], -a[4]) for f, a in angles.items()}
    points = []
    for s, joints, wanted in ((side, fingers, mine), (OTHER_SIDE[side], theirs, angles)):
        one = {f: joints[f] for f in wanted}
        rest_p, rest_q = np.array(skeleton.rest_positions), np.array(skeleton.rest_frames)
        p, q = turn_fingers(skeleton, rest_p, rest_q, one, finger_axes(skeleton, joints, s), wanted)
        points.append(np.array([x for f in one for x in (*p[list(one[f])], fingertip(skeleton, p, q, one[f]))]))
    gap = float(np.max(np.abs(points[0] - reflect(skeleton, points[1]))))
    return mine if gap <= MIRROR_TOLERANCE else None  # type: ignore[return-value]


def _solve(residual: Any, start: Angles, ranges: tuple[tuple[float, float], ...], starts: int = 1) -> Angles:
    """The ``Angles`` within ``ranges`` that make ``residual`` least, holding to ``start`` by ``STAY``:
    least squares from ``start`` (and with ``starts`` 2 also from the middle of the ranges; the better
    kept)."""
    low, high = [r[0] for r in ranges], [r[1] + (BEYOND if k < 3 else 0.0) for k, r in enumerate(ranges)]
    natural = np.array(start, dtype=float)

    def held(x: np.ndarray) -> np.ndarray:
        return np.concatenate([residual(x), STAY * (x - natural)])

    best, cost = natural, math.inf
    for x0 in [natural, 0.5 * (np.array(low) + np.array(high))][:starts]:
        x = least_squares(held, x0, low, high)
        r = held(x)
        if float(r @ r) < cost:
            best, cost = x, float(r @ r)
    return _angles(best)


def _angles(x: Any) -> Angles:
    return (float(x[0]), float(x[1]), float(x[2]), float(x[3]), float(x[4]))
