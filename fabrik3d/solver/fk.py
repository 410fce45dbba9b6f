"""Forward kinematics: turn one joint within its own limits, the joints below it following rigidly.

A joint's **turn** is its rotation from its rest pose, in its own rest frame (+Y along its bone to
its first child, as ``SolveResult.rotations``): ``turn = conj(L0) * L`` with ``L`` the joint's
frame relative to its parent's and ``L0`` the same at rest (for the root: its world frame and its
rest frame). So the rest pose has every turn ``(0, 0, 0, 1)``, a turn about +Y twists the bone,
about +X or +Z bends it (Blender's pose-bone rotation). ``fabrik3d.rotations.euler_xyz`` and
``from_euler_xyz`` give a turn as Euler angles in degrees.

Turning a joint changes that joint only: the joints above and beside it keep their very floats, the
joint stays where it is, the joints below turn with it about it as one rigid body (their rotations
relative to their parents kept), and the turn is clamped to the joint's own limits
(``limited_turn``), never to those of other joints. Turning a joint by the turn ``joint_turn`` reads
back changes nothing.

Shapes: ``positions (n, 3)`` scene units, ``rotations (n, 4)`` world frames (x, y, z, w), in
skeleton order; a turn is ``(4,)`` (x, y, z, w).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import unit_quaternion
from fabrik3d.solver.limits import JointLimits, _BoundHinge, limit_motion
from fabrik3d.solver.rig import Rig, check_skeleton, rig
from fabrik3d.solver.subtree import local


def _pose(skeleton: Skeleton, positions: Any, rotations: Any) -> tuple[np.ndarray, np.ndarray]:
    n = len(skeleton)
    p = checks.points(positions, "positions")
    if p.shape != (n, 3):
        raise ValueError(f"positions: expected shape ({n}, 3), got {p.shape}")
    return p, checks.frames(rotations, n, "rotations")


def _joint(skeleton: Skeleton, joint: Any) -> int:
    j = skeleton.index(joint) if isinstance(joint, str) else -1
    if j < 0:
        raise ValueError(f"joint: expected the name of a joint of the skeleton, got {checks.quoted(joint)}")
    return j


def _canonical(q: rot.Quat) -> rot.Quat:
    """``q`` with ``w >= 0`` (``q`` and ``-q`` are one rotation; the same floats otherwise)."""
    return q if q[3] >= 0.0 else (-q[0], -q[1], -q[2], -q[3])


def _turn_of(r: Rig, frames: list[rot.Quat], j: int) -> rot.Quat:
    """Joint ``j``'s turn (module docstring) in the pose of world ``frames``."""
    return _canonical(rot.normalize_quat(rot.mul(rot.conj(r.rest_local[j]), local(r, frames, j))))


def clamped_turn(r: Rig, j: int, turn: rot.Quat) -> rot.Quat:
    """``turn`` of joint ``j`` within the joint's own limits (``limited_turn``)."""
    lim = r.limits[j]
    swing = lim.swing if r.first_child[j] >= 0 else None  # (a leaf has no bone to swing)
    twist = lim.twist
    if twist is None and isinstance(swing, _BoundHinge):
        twist = (0.0, 0.0)  # a hinge without a Twist turns about its axis only
    if swing is None and twist is None:
        return turn
    l0 = r.rest_local[j]
    motion = rot.mul(rot.mul(l0, turn), rot.conj(l0))  # the turn in the parent's frame
    motion = limit_motion(JointLimits(swing, twist), r.rest_dir[j], r.rest_x[j], motion)
    return rot.normalize_quat(rot.mul(rot.mul(rot.conj(l0), motion), l0))


def joint_turn(skeleton: Skeleton, rotations: Any, joint: str) -> np.ndarray:
    """The ``(4,)`` turn of ``joint`` (module docstring; the root's too) in the pose whose world
    frames are ``rotations`` ``(n, 4)``, with ``w >= 0``."""
    r = rig(check_skeleton(skeleton))
    j = _joint(skeleton, joint)
    q = np.asarray(rotations, dtype=float)
    if q.shape != (len(skeleton), 4):
        raise ValueError(f"rotations: expected shape ({len(skeleton)}, 4), got {q.shape}")
    return np.array(_turn_of(r, [tuple(v) for v in q.tolist()], j))  # type: ignore[misc]


def limited_turn(skeleton: Skeleton, joint: str, turn: Any) -> np.ndarray:
    """The ``(4,)`` turn (x, y, z, w; module docstring) that ``turn_joint`` applies to ``joint`` for
    ``turn``: the nearest the joint's own limits allow (``fabrik3d.solver.limits.limit_motion``).

    The turn splits into a swing of the joint's bone away from its rest direction and a twist about
    the rest direction. A swing limit (``Cone``, ``EllipticalCone``, ``Hinge``) projects the bone's
    direction (a hinge keeps it in its plane; beyond its range it goes to the nearer stop, as a
    typed value past a stop asks); a ``Twist`` clamps
    the twist, and a ``Hinge`` without a ``Twist`` holds the twist at 0. A leaf has no bone: its
    turn is its frame's (an effector's orientation), only its ``Twist`` bounds it. A ``Rigid`` joint
    is clamped by the swing and twist limits it has; a joint without limits keeps any turn, exactly.

    Args:
        skeleton: the skeleton.
        joint: a joint's name (the root's too).
        turn: ``(4,)`` the wanted turn, a unit quaternion.

    Returns:
        ``(4,)`` the turn within the joint's limits, ``w >= 0`` (``turn`` itself, its sign so set, where
        no limit changes it).

    Raises:
        ValueError: naming the argument, for an unknown joint, a wrong shape, NaN or a quaternion that
            is not of unit length.
    """
    r = rig(check_skeleton(skeleton))
    j = _joint(skeleton, joint)
    q = tuple(unit_quaternion(turn, "turn").tolist())
    return np.array(_canonical(clamped_turn(r, j, q)))  # type: ignore[arg-type]


def turn_joint(
    skeleton: Skeleton, positions: Any, rotations: Any, joint: str, turn: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The pose with ``joint`` turned to ``limited_turn(skeleton, joint, turn)``: the joints above and
    beside it keep their very floats, the joint stays, the joints below turn with it about it rigidly
    (for the root: the whole skeleton about the root).

    Args:
        skeleton: the skeleton (``n`` joints).
        positions: ``(n, 3)`` the pose, scene units.
        rotations: ``(n, 4)`` its world frames (``SolveResult.rotations``).
        joint: a joint's name (the root's too).
        turn: ``(4,)`` the joint's new turn from its rest pose.

    Returns:
        ``(positions (n, 3), rotations (n, 4))``.

    Raises:
        ValueError: naming the argument, for an unknown joint, wrong shapes, NaN or a quaternion that
            is not of unit length.
    """
    r = rig(check_skeleton(skeleton))
    j = _joint(skeleton, joint)
    p, q = _pose(skeleton, positions, rotations)
    wanted = tuple(unit_quaternion(turn, "turn").tolist())
    frames: list[rot.Quat] = [tuple(v) for v in q.tolist()]  # type: ignore[misc]
    applied = clamped_turn(r, j, wanted)  # type: ignore[arg-type]
    parent = r.parents[j]
    fp = frames[parent] if parent >= 0 else rot.IDENTITY
    frame = rot.normalize_quat(rot.mul(fp, rot.mul(r.rest_local[j], applied)))
    carry = rot.normalize_quat(rot.mul(frame, rot.conj(frames[j])))  # the world turn of the subtree
    pivot: rot.Vec = tuple(p[j].tolist())  # type: ignore[assignment]
    q[j] = frame
    for k in r.subtree(j)[1:]:
        v = rot.rotate(carry, tuple((p[k] - p[j]).tolist()))  # type: ignore[arg-type]
        p[k] = (pivot[0] + v[0], pivot[1] + v[1], pivot[2] + v[2])
        q[k] = rot.normalize_quat(rot.mul(carry, frames[k]))
    return p, q
