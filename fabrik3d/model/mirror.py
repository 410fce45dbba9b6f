"""Mirroring a pose from one side of a skeleton to the other.

Sides are read from joint names, in the conventions of the common rigs: a ``_l``/``_r`` or
``.L``/``.R`` suffix (this project, Unreal, Blender and Rigify: ``hand_l``, ``upper_arm.L``), a
``Left``/``Right`` word (Mixamo, VRM: ``mixamorig:LeftHand``, ``leftHand``), and the same in other
cases (``_L``, ``.l``). The mirror plane is the skeleton's left-right plane: through the root's
rest position, normal to X (the scene convention: Y up, the skeleton faces +Z, its left is +X).

Points are ``(3,)`` or ``(n, 3)`` arrays in scene units.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

# A side suffix (``_l``, ``.R``) and its swap; a side word (``Left``, ``right``) and its swap.
_SUFFIX = re.compile(r"[._]([lLrR])$")
_SUFFIX_SWAP = {"l": "r", "L": "R", "r": "l", "R": "L"}
_WORD = re.compile(r"Left|Right|left|right|LEFT|RIGHT")
_WORD_SWAP = {"Left": "Right", "Right": "Left", "left": "right", "right": "left", "LEFT": "RIGHT", "RIGHT": "LEFT"}
SIDES = ("left", "right")


def side_of(name: str) -> str | None:
    """``"left"``, ``"right"`` or ``None`` (a joint on the middle line) from a joint's name."""
    m = _SUFFIX.search(name)
    if m:
        return "left" if m.group(1) in "lL" else "right"
    m = _WORD.search(name)
    if m:
        return m.group(0).lower()
    return None


def mirror_name(name: str) -> str | None:
    """The name of the joint on the other side (``hand_l`` -> ``hand_r``), ``None`` for a name
    without a side."""
    m = _SUFFIX.search(name)
    if m:
        return name[: m.start(1)] + _SUFFIX_SWAP[m.group(1)]
    m = _WORD.search(name)
    if m:
        return name[: m.start()] + _WORD_SWAP[m.group(0)] + name[m.end() :]
    return None


def mirror_pairs(skeleton: Any) -> dict[str, str]:
    """Every joint with a counterpart in ``skeleton`` -> that counterpart (both directions)."""
    out = {}
    for name in skeleton.names:
        other = mirror_name(name)
        if other is not None and other != name and other in skeleton:
            out[name] = other
    return out


def reflect(skeleton: Any, points: Any) -> np.ndarray:
    """``points`` reflected in the skeleton's left-right plane (X -> 2·x_root - X)."""
    p = np.array(points, dtype=float)
    p[..., 0] = 2.0 * float(skeleton.rest_positions[skeleton.root][0]) - p[..., 0]
    return p


def mirror_positions(skeleton: Any, positions: Any, source: str = "left") -> np.ndarray:
    """``(n, 3)`` ``positions`` with every joint on the other side of ``source`` put at its
    counterpart's reflection: the mirrored limbs' configuration, a start for the solve."""
    pos = np.array(positions, dtype=float)
    for name, other in mirror_pairs(skeleton).items():
        if side_of(name) == source:
            pos[skeleton.index(other)] = reflect(skeleton, pos[skeleton.index(name)])
    return pos


def mirror_goals(
    skeleton: Any,
    targets: Mapping[str, Any],
    positions: Any,
    poles: Mapping[str, Any] | None = None,
    source: str = "left",
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Targets and poles that make the other side the mirror image of the ``source`` side.

    Each end effector on the ``source`` side gives its counterpart a target at its own target
    reflected, or, free, leaves its counterpart free too (start the solve from the pose mirrored,
    ``mirror_positions``: the free limb is mirrored where it hangs); its pole, reflected, becomes
    the counterpart's (a counterpart without one keeps none). Effectors on the middle line and on
    the source side keep theirs. Returns new ``(targets, poles)`` dicts.

    Args:
        skeleton: the skeleton.
        targets: effector name -> ``(3,)`` target (scene units).
        positions: ``(n, 3)`` the current pose (kept for callers: a free effector's counterpart is
            freed, not placed).
        poles: effector name -> ``(3,)`` pole point.
        source: ``"left"`` (left to right) or ``"right"``.

    Raises:
        ValueError: for a ``source`` other than ``"left"`` or ``"right"``, or a skeleton whose
            effectors have no counterparts.
    """
    if source not in SIDES:
        raise ValueError(f"mirror: source must be 'left' or 'right', got {str(source)[:40]!r}")
    pairs = mirror_pairs(skeleton)
    movers = [e for e in skeleton.end_effectors if side_of(e) == source and pairs.get(e) in skeleton.end_effectors]
    if not movers:
        raise ValueError("mirror: no end effector of this skeleton has a counterpart on the other side")
    new_targets = {k: np.asarray(v, dtype=float) for k, v in targets.items()}
    new_poles = {k: np.asarray(v, dtype=float) for k, v in (poles or {}).items()}
    for e in movers:
        other = pairs[e]
        if e in targets:
            new_targets[other] = reflect(skeleton, targets[e])
        else:  # (a free effector's counterpart stays free)
            new_targets.pop(other, None)
        new_poles.pop(other, None)
        if e in new_poles:
            new_poles[other] = reflect(skeleton, new_poles[e])
    return new_targets, new_poles
