"""Toes on the floor: a foot whose toe joint (a leaf at the ball of the foot, a humanoid's ``toe_l``,
``toe_r``) rests on the floor bends its toes there, flat on it, as a foot on tiptoe does; the
mannequin's forefoot is carried by the toe joint (``fabrik3d.model.mannequin``). The toe's frame is then
its rest frame turned about the vertical to the foot's heading (from the ankle to the toe, seen from
above). A toe so bent that a later solve takes off the floor follows its foot again; a toe turned by
hand (any other turn) is left to the solve. Frames are ``(n, 4)`` quaternions (x, y, z, w);
positions ``(n, 3)`` scene units, Y up.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import mass
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.result import SolveResult

# Within this of its clearance (scene units), a toe rests on the floor.
ON_FLOOR = mass.CONTACT
# A toe's frame this near (radians) its level frame was bent by the floor.
BENT_BY_FLOOR = 1e-6


def toe_joints(skeleton: Skeleton) -> list[tuple[int, int]]:
    """``(toe, ankle)`` indices of the humanoid toes that are leaves (the ball of the foot) under an ankle."""
    at = mass.humanoid_roles(skeleton)
    out = []
    for s in "lr":
        toe, ankle = at.get(f"toe_{s}"), at.get(f"ankle_{s}")
        if toe is not None and ankle is not None and not skeleton.children(toe) and skeleton.parents[toe] == ankle:
            out.append((toe, ankle))
    return out


def level_frame(skeleton: Skeleton, positions: np.ndarray, toe: int, ankle: int) -> rot.Quat:
    """The frame of a toe flat on the floor: its rest frame turned about +Y to the foot's heading."""
    d, d0 = positions[toe] - positions[ankle], skeleton.rest_positions[toe] - skeleton.rest_positions[ankle]
    psi = math.atan2(d0[2] * d[0] - d0[0] * d[2], d0[0] * d[0] + d0[2] * d[2])  # (zero without a heading)
    rest = tuple(float(v) for v in skeleton.rest_frames[toe])
    return rot.normalize_quat(rot.mul(rot.axis_angle((0.0, 1.0, 0.0), psi), rest))  # type: ignore[arg-type]


def _following(skeleton: Skeleton, frames: np.ndarray, toe: int, ankle: int) -> rot.Quat:
    """The toe's frame following its foot (its rest turn from the ankle)."""
    r0a, r0t = (tuple(float(v) for v in skeleton.rest_frames[j]) for j in (ankle, toe))
    local = rot.mul(rot.conj(r0a), r0t)  # type: ignore[arg-type]
    return rot.normalize_quat(rot.mul(tuple(float(v) for v in frames[ankle]), local))  # type: ignore[arg-type]


def floor_toes(
    skeleton: Skeleton, result: SolveResult, clear: np.ndarray, goals: Mapping[str, Any], start: Any = None
) -> SolveResult:
    """``result`` with each toe on the floor (within ``ON_FLOOR`` of its clearance ``clear[toe]``) flat on it,
    and each toe off it that lay flat in the solve's ``start`` (``(positions, rotations)`` or None; the turn
    the solve carried from there) following its foot; a toe whose target (in ``goals``) has an orientation
    is left as solved."""
    frames = None
    for toe, ankle in toe_joints(skeleton):
        goal = goals.get(skeleton.names[toe])
        if getattr(goal, "orientation", None) is not None:
            continue
        if result.positions[toe, 1] <= clear[toe] + ON_FLOOR:
            frame = np.array(level_frame(skeleton, result.positions, toe, ankle))
        elif _was_level(skeleton, start, toe, ankle):
            frame = np.array(_following(skeleton, result.rotations, toe, ankle))
        else:
            continue
        frames = np.array(result.rotations) if frames is None else frames
        frames[toe] = frame if float(frame @ frames[toe]) >= 0.0 else -frame
    return result if frames is None else dataclasses.replace(result, rotations=frames)


def _was_level(skeleton: Skeleton, start: Any, toe: int, ankle: int) -> bool:
    """Whether the toe lay flat (its level frame) in ``start`` ``(positions, rotations)``."""
    if start is None or start[0] is None or start[1] is None:
        return False
    p, q = np.asarray(start[0], dtype=float), np.asarray(start[1], dtype=float)
    if p.shape != (len(skeleton), 3) or q.shape != (len(skeleton), 4):
        return False
    level = level_frame(skeleton, p, toe, ankle)
    return rot.angle_between(level, tuple(float(v) for v in q[toe])) <= BENT_BY_FLOOR  # type: ignore[arg-type]
