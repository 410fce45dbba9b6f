"""Forward kinematics: turn one joint, the joints below it following, within the joint limits.

A joint's **turn** is its rotation from its rest pose, in its own rest frame (+Y along its bone to
its first child, as ``SolveResult.rotations``): ``turn = conj(L0) * L`` with ``L`` the joint's
frame relative to its parent's and ``L0`` the same at rest. So the rest pose has every turn
``(0, 0, 0, 1)``, a turn about +Y twists the bone, about +X or +Z bends it (Blender's pose-bone
rotation). ``fabrik3d.rotations.euler_xyz`` and ``from_euler_xyz`` give a turn as Euler angles in
degrees.

Shapes: ``positions (n, 3)`` scene units, ``rotations (n, 4)`` world frames (x, y, z, w), in
skeleton order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import unit_quaternion
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.rig import check_skeleton, rig
from fabrik3d.solver.subtree import forward, local


def _pose(skeleton: Skeleton, positions: Any, rotations: Any) -> tuple[list[rot.Vec], list[rot.Quat]]:
    n = len(skeleton)
    p, q = checks.points(positions, "positions"), np.asarray(rotations, dtype=float)
    if p.shape != (n, 3):
        raise ValueError(f"positions: expected shape ({n}, 3), got {p.shape}")
    if q.shape != (n, 4) or not np.all(np.isfinite(q)):
        raise ValueError(f"rotations: expected ({n}, 4) finite quaternions, got shape {q.shape}")
    return [tuple(v) for v in p.tolist()], [tuple(v) for v in q.tolist()]  # type: ignore[misc]


def _joint(skeleton: Skeleton, joint: Any) -> int:
    j = skeleton.index(joint) if isinstance(joint, str) else -1
    if j < 0 or j == skeleton.root:
        raise ValueError(f"joint: expected the name of a joint that is not the root, got {joint!r}")
    return j


def joint_turn(skeleton: Skeleton, rotations: Any, joint: str) -> np.ndarray:
    """The ``(4,)`` turn of ``joint`` (module docstring) in the pose whose world frames are
    ``rotations`` ``(n, 4)``."""
    r = rig(check_skeleton(skeleton))
    j = _joint(skeleton, joint)
    q = np.asarray(rotations, dtype=float)
    if q.shape != (len(skeleton), 4):
        raise ValueError(f"rotations: expected shape ({len(skeleton)}, 4), got {q.shape}")
    frames = [tuple(v) for v in q.tolist()]
    turn = rot.mul(rot.conj(r.rest_local[j]), local(r, frames, j))  # type: ignore[arg-type]
    return np.array(rot.normalize_quat(turn if turn[3] >= 0.0 else tuple(-x for x in turn)))  # type: ignore[arg-type]


def turn_joint(
    skeleton: Skeleton, positions: Any, rotations: Any, joint: str, turn: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The pose with ``joint`` turned to ``turn`` (a ``(4,)`` unit quaternion, module docstring),
    the joints below it following rigidly, then projected onto the skeleton's joint limits (the
    turn is bounded by them; the joints above do not move).

    Args:
        skeleton: the skeleton (``n`` joints).
        positions: ``(n, 3)`` the pose, scene units.
        rotations: ``(n, 4)`` its world frames (``SolveResult.rotations``).
        joint: a joint's name (not the root: move the root with ``root_target``).
        turn: ``(4,)`` the joint's new turn from its rest pose.

    Returns:
        ``(positions (n, 3), rotations (n, 4))``.

    Raises:
        ValueError: naming the argument, for an unknown joint or the root, wrong shapes, NaN or a
            quaternion that is not of unit length.
    """
    r = rig(check_skeleton(skeleton))
    j = _joint(skeleton, joint)
    pose, frames = _pose(skeleton, positions, rotations)
    q = tuple(unit_quaternion(turn, "turn").tolist())
    pose, frames = forward(r, pose, frames, {j: rot.mul(r.rest_local[j], q)})  # type: ignore[arg-type]
    if skeleton.constraints:
        pose, frames = LimitedSolve(r, {}, None, {}, None).project(pose, frames)
    return np.array(pose), np.array(frames)
