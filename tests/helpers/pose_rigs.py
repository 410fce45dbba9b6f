"""Rigs and measures for the pose library tests: an A-pose humanoid with rolled bone frames, bone
directions by role, the angle between two directions."""

from __future__ import annotations

import math

import numpy as np

import fabrik3d
from fabrik3d import presets
from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import turn_joint

# Limb bones (role, role below) per side, and the spine's segments.
LIMBS = [("shoulder", "elbow"), ("elbow", "wrist"), ("hip", "knee"), ("knee", "ankle")]
SPINE = [("pelvis", "spine_01"), ("spine_01", "spine_02"), ("spine_02", "chest"), ("chest", "neck"), ("neck", "head")]


def bones(sides: str = "lr") -> list[tuple[str, str]]:
    """The limb bones of ``sides`` and the spine's segments, as (role, role below)."""
    return [(f"{a}_{s}", f"{b}_{s}") for a, b in LIMBS for s in sides] + SPINE


def direction(positions: np.ndarray, skeleton, rig_map: dict[str, str], a: str, b: str) -> np.ndarray:
    """The unit direction from role ``a`` to role ``b`` in a pose."""
    v = positions[skeleton.index(rig_map[b])] - positions[skeleton.index(rig_map[a])]
    return v / np.linalg.norm(v)


def degrees(u: np.ndarray, v: np.ndarray) -> float:
    return math.degrees(math.acos(max(-1.0, min(1.0, float(np.dot(u, v))))))


def a_pose_humanoid() -> Skeleton:
    """The humanoid's joints with the arms 45 deg down at rest (an A-pose), every bone frame rolled about
    its bone by a different angle, no joint limits and no riders."""
    sk = presets.humanoid()
    p, q = sk.rest_positions.copy(), sk.rest_frames.copy()
    for side, sx in (("l", 1.0), ("r", -1.0)):
        local = rot.rotate_inv(tuple(sk.rest_frames[sk.index(f"shoulder_{side}")].tolist()), (0.0, 0.0, -sx))
        p, q = turn_joint(sk, p, q, f"shoulder_{side}", rot.axis_angle(local, math.radians(45.0)))
    plain = Skeleton(sk.names, sk.parents, p)
    frames = {}
    for j, name in enumerate(sk.names):
        frame = tuple(plain.rest_frames[j].tolist())
        frames[name] = rot.mul(frame, rot.axis_angle(rot.Y_AXIS, 0.7 * math.sin(3.0 * j)))
    return Skeleton(sk.names, sk.parents, p, rest_frames=frames)


def asymmetric_pose() -> fabrik3d.SolveResult:
    """An asymmetric pose of the humanoid preset: a hand up (its upper arm at its twist stop), a hand
    across, a knee up, the head turned."""
    sk = presets.humanoid()
    return fabrik3d.solve(
        sk,
        {"hand_l": (0.3, 1.9, 0.2), "hand_r": (-0.2, 1.0, 0.35), "toe_l": (0.15, 0.3, 0.4),
         "toe_r": (-0.1, 0.02, -0.1), "head": (0.1, 1.7, 0.2)},
        root_target=(0.0, 0.85, 0.05),
    )  # fmt: skip
