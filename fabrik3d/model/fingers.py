"""Fingers: their roles, the axes of a hand read from its rest pose, and their joint limits.

A finger has three joints, ``_01`` (the base knuckle), ``_02`` and ``_03``, named by role
``{finger}_{01|02|03}_{side}`` (``index_02_l``; side ``l`` or ``r``), as the humanoid preset's joints
are (``fabrik3d.model.presets``); a rig's finger bones map onto these roles (``fabrik3d.model.rig_map``).

A hand's axes, from the wrist (the fingers' parent) and the base knuckles: *along* the palm (wrist to
the middle knuckle), *across* it (little finger to index), and *palm*, the side the fingers close to
(``along × across`` for a left hand, ``across × along`` for a right one). A finger's joint *flexes*
about ``bone × closing`` (``closing`` the palm side, for the thumb tilted toward the little finger),
its base knuckle *spreads* about the palm's normal. The limits (degrees): base knuckles an elliptical
cone (flexion 90, extension 25, spread 15 each way; the thumb's: 50, 20, 30) with a small twist, the
other two hinges about the flexion axis (flexion 110 and 90; the thumb's 60 and 80): ``FINGER_RANGE``,
``THUMB_RANGE``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fabrik3d.model.constraints import Constraint, EllipticalCone, Twist, hinge_from_straight, rest_bend

FINGERS: tuple[str, ...] = ("thumb", "index", "middle", "ring", "pinky")
KNUCKLES: tuple[str, ...] = ("01", "02", "03")
# The thumb's range (degrees, from straight), as its limits (``finger_limits``) allow: its three
# joints' flexion (extension negative), its base knuckle's spread (each way) and twist.
THUMB_RANGE: tuple[tuple[float, float], ...] = ((-20, 50), (-10, 60), (-10, 80), (-30, 30), (-30, 30))
# Flexed fingers converge toward a line this far palm-side of the middle finger's knuckle, in widths of
# the hand across its base knuckles (``closing``; the preset's hand: 0.051 m wide, the line 0.1 m off):
# a bigger or smaller hand closes alike.
CONVERGE = 2.0
# The same for the other four fingers.
FINGER_RANGE: tuple[tuple[float, float], ...] = ((-25, 90), (-5, 110), (-5, 90), (-15, 15), (-10, 10))


def finger_role(finger: str, knuckle: str, side: str) -> str:
    """The role of a finger joint: ``index_02_l``."""
    return f"{finger}_{knuckle}_{side}"


def is_finger_role(role: str) -> bool:
    """Whether ``role`` names a finger joint (``thumb_01_l``; the ends ``thumb_end_l`` too)."""
    parts = role.split("_")
    return len(parts) == 3 and parts[0] in FINGERS and parts[1] in (*KNUCKLES, "end") and parts[2] in ("l", "r")


def hand_axes(
    points: np.ndarray, wrist: int, knuckles: Mapping[str, int], side: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(along, across, palm)`` unit vectors of the hand at ``points`` ``(n, 3)`` (module docstring);
    ``knuckles`` maps fingers to their base joints' indices (the middle one, or any, required)."""
    middle = knuckles.get("middle", next(iter(knuckles.values())))
    along = _unit(points[middle] - points[wrist])
    first, last = knuckles.get("index", middle), knuckles.get("pinky", knuckles.get("ring", middle))
    if first != last:
        across = _unit(points[first] - points[last])
    else:  # (one finger: the world's up as the palm's normal)
        across = _unit(np.cross((0.0, 1.0, 0.0), along) * (1.0 if side == "l" else -1.0))
    palm = _unit(np.cross(along, across) * (1.0 if side == "l" else -1.0))
    across = _unit(np.cross(palm, along) * (1.0 if side == "l" else -1.0))
    return along, across, palm


def closing(finger: str, across: np.ndarray, palm: np.ndarray, offset: float = 0.0) -> np.ndarray:
    """The direction a finger closes toward: the palm side, tilted toward the line ``CONVERGE`` hand
    widths palm-side of the middle finger's knuckle, ``offset`` (hand widths: ``knuckle_offset``) being
    the finger's knuckle's from the middle one's along ``across`` (flexed fingers converge, as a hand's
    do); the thumb's tilted toward the little finger."""
    return _unit(palm - 0.7 * across) if finger == "thumb" else _unit(CONVERGE * palm - offset * across)


def knuckle_offset(points: np.ndarray, bases: Mapping[str, int], finger: str, across: np.ndarray) -> float:
    """How far (along ``across``, in widths of the hand: the span of its base knuckles along ``across``)
    the base knuckle of ``finger`` lies from the middle finger's (``bases``: finger -> base joint
    index); 0 without a middle finger or a width."""
    if finger not in bases or "middle" not in bases:
        return 0.0
    along = [float(points[j] @ across) for j in bases.values()]
    width = max(along) - min(along)
    return 0.0 if width <= 1e-12 else float((points[bases[finger]] - points[bases["middle"]]) @ across) / width


def flexion_axis(bone: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """The unit axis a joint with ``bone`` (its direction) flexes about toward ``toward``."""
    return _unit(np.cross(bone, toward))


def finger_limits(
    bone: np.ndarray, finger: str, knuckle: str, toward: np.ndarray, above: np.ndarray | None = None
) -> list[Constraint]:
    """The joint limits of a finger joint (module docstring) whose rest bone points along ``bone``; a
    middle or last knuckle's flexion counts from its finger straight, ``above`` (the finger's bone
    into the knuckle) giving the rest curl (``rest_bend``)."""
    axis = tuple(flexion_axis(bone, toward).tolist())
    ranges = THUMB_RANGE if finger == "thumb" else FINGER_RANGE
    (back, flex), spread = ranges[0], ranges[3][1]
    if knuckle == "01":
        return [EllipticalCone(spread, spread, flex, -back, axis), Twist(*ranges[4])]
    low, most = ranges[int(knuckle) - 1]
    bend = 0.0 if above is None else rest_bend(above, bone, axis)
    return [hinge_from_straight(axis, low, most, bend)]


def rig_finger_limits(
    names: list[str] | tuple[str, ...], parents: Any, rest: np.ndarray, roles: Mapping[str, str]
) -> dict[str, list[Constraint]]:
    """Joint limits (by joint name) for the fingers of a skeleton given as ``names``, ``parents``
    ``(n,)`` and ``rest`` ``(n, 3)``, its finger roles mapped to joints by ``roles`` (role -> name);
    a finger joint without a child (Rigify's last knuckles) and joints holding another role (a rig's
    middle knuckle is its hand) have none."""
    index = {n: k for k, n in enumerate(names)}
    others = {bone for role, bone in roles.items() if not is_finger_role(role)}
    first_child: dict[int, int] = {}
    for k, p in enumerate(parents):
        if p >= 0 and int(p) not in first_child:
            first_child[int(p)] = k
    out: dict[str, list[Constraint]] = {}
    for side in ("l", "r"):
        bases = {
            f: index[roles[finger_role(f, "01", side)]]
            for f in FINGERS
            if roles.get(finger_role(f, "01", side)) in index
        }
        if not bases:
            continue
        wrist = int(parents[bases.get("middle", next(iter(bases.values())))])
        if wrist < 0:
            continue
        _, across, palm = hand_axes(rest, wrist, bases, side)
        for finger in FINGERS:
            for knuckle in KNUCKLES:
                name = roles.get(finger_role(finger, knuckle, side))
                if name not in index or name in others:
                    continue
                j = index[name]
                c = first_child.get(j, -1)
                if c < 0 or np.linalg.norm(rest[c] - rest[j]) < 1e-12:  # (a leaf has no bone to limit)
                    continue
                bone = rest[c] - rest[j]
                above = rest[j] - rest[int(parents[j])] if knuckle != "01" else None
                toward = closing(finger, across, palm, knuckle_offset(rest, bases, finger, across))
                out[name] = finger_limits(_unit(bone), finger, knuckle, toward, above)
    return out


def _unit(v: Any) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / float(np.linalg.norm(a))
