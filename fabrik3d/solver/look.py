"""Look-at: turn the head (and the neck with it) so that the face points at a point.

The face's forward axis is the direction the skeleton faces at rest (world +Z, the glTF convention
the presets and characters share) carried by the head's frame: ``forward = R_head · R0_head⁻¹ · Z``.
The eye is the head joint's position. ``look_at`` turns the joints that share the look (by default
the head and its parent, the neck) by forward kinematics (``fabrik3d.solver.fk.turn_joint``: each
within its own limits, nothing above them moving, the chest included), in rounds: in each, from the
top, a joint takes its share of the swing from the face's axis to the point (the neck half, the head
the rest), until the face points at the point within ``LOOK_TOLERANCE`` or the limits stop it.

Shapes: ``positions (n, 3)`` scene units, ``rotations (n, 4)`` world frames (x, y, z, w); the point
``(3,)`` scene units.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import turn_joint
from fabrik3d.solver.rig import check_skeleton, rig

# The skeleton's forward at rest, world (+Z: glTF's and the presets' front).
FORWARD = (0.0, 0.0, 1.0)
# The face points at its point when within this angle of it (radians), or after LOOK_ROUNDS rounds.
LOOK_TOLERANCE = math.radians(0.05)
LOOK_ROUNDS = 24


def look_joints(skeleton: Skeleton, head: str = "head") -> tuple[str, ...]:
    """The joints that share a look at by default: ``head``'s parent (the neck) and ``head``; the
    head alone when it is the root. ``ValueError`` naming ``head`` if the skeleton has no such joint."""
    if head not in skeleton.names:
        raise ValueError(f"look_at: the skeleton has no joint {checks.quoted(head)} (name the head with head=)")
    parent = int(skeleton.parents[skeleton.index(head)])
    return (head,) if parent < 0 else (skeleton.names[parent], head)


def face_axis(skeleton: Skeleton, rotations: Any, head: str = "head") -> np.ndarray:
    """The face's forward axis ``(3,)`` (a unit vector, world) in the pose's frames (module docstring)."""
    j = skeleton.index(head)
    q = checks.frames(rotations, len(skeleton), "rotations")
    local = rot.rotate_inv(tuple(skeleton.rest_frames[j].tolist()), FORWARD)  # type: ignore[arg-type]
    return np.array(rot.rotate(tuple(q[j].tolist()), local))  # type: ignore[arg-type]


def look_at(
    skeleton: Skeleton,
    positions: Any,
    rotations: Any,
    point: Any,
    *,
    head: str = "head",
    joints: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The pose with the face turned toward ``point`` (module docstring).

    Args:
        skeleton: the skeleton (``n`` joints).
        positions: ``(n, 3)`` the pose's joint positions, scene units.
        rotations: ``(n, 4)`` its world frames (``SolveResult.rotations``).
        point: ``(3,)`` what to look at, scene units.
        head: the joint whose frame carries the face (default ``"head"``).
        joints: the joints that turn, from the top down, each below the one before (default:
            ``look_joints``: the neck and the head); only ``head`` and the joints above it.

    Returns:
        ``(positions (n, 3), rotations (n, 4))``: the joints above the first of ``joints`` and beside
        them keep their very floats; the face points at ``point`` as nearly as the limits allow.

    Raises:
        ValueError: naming the argument, for an unknown joint, a joint that is not ``head`` or above
            it, bad shapes, NaN or inf, or a point at the eye.
    """
    r = rig(check_skeleton(skeleton))
    names = tuple(look_joints(skeleton, head) if joints is None else joints)
    h = skeleton.index(head)
    for name in names:
        if not isinstance(name, str) or name not in skeleton.names or not r.within(skeleton.index(name), h):
            raise ValueError(f"look_at: joints: {str(name)[:60]!r} is not {head!r} or a joint above it")
    target = checks.point(point, "point")
    p, q = np.array(checks.points(positions, "positions")), checks.frames(rotations, len(skeleton), "rotations")
    if p.shape != (len(skeleton), 3):
        raise ValueError(f"positions: expected shape ({len(skeleton)}, 3), got {p.shape}")
    if rot.unit(tuple((target - p[h]).tolist())) is None:  # type: ignore[arg-type]
        raise ValueError("look_at: point: the point is at the eye (the head joint); nothing to look at")
    local_forward = rot.rotate_inv(tuple(skeleton.rest_frames[h].tolist()), FORWARD)  # type: ignore[arg-type]
    rest_local = r.rest_local
    for _ in range(LOOK_ROUNDS):
        for k, name in enumerate(names):
            j = skeleton.index(name)
            face = rot.rotate(tuple(q[h].tolist()), local_forward)  # type: ignore[arg-type]
            aim = rot.unit(tuple((target - p[h]).tolist()))  # type: ignore[arg-type]
            if aim is None or _angle(face, aim) <= LOOK_TOLERANCE:
                return p, q
            share = 1.0 / (len(names) - k)  # (the neck half the way, the head the rest)
            delta = rot.slerp(rot.IDENTITY, rot.swing(face, aim, rot.X_AXIS), share)
            frame = rot.mul(delta, tuple(q[j].tolist()))  # type: ignore[arg-type]
            parent = int(skeleton.parents[j])
            local = frame if parent < 0 else rot.mul(rot.conj(tuple(q[parent].tolist())), frame)  # type: ignore[arg-type]
            p, q = turn_joint(skeleton, p, q, name, rot.mul(rot.conj(rest_local[j]), local))
    return p, q


def look_goal(
    skeleton: Skeleton, value: Any, check: Callable[[Any, str], np.ndarray] = checks.point
) -> tuple[str, np.ndarray]:
    """``solve``'s ``look_at`` (``{head: point}``) checked: ``(head, check(point, name))``
    (``solve_batch`` checks ``(B, 3)`` points)."""
    if not isinstance(value, Mapping) or len(value) != 1:
        raise ValueError(f"look_at: expected {{head joint: [x, y, z]}}, got {str(value)[:60]!r}")
    ((head, point),) = value.items()
    look_joints(skeleton, head)  # (a skeleton without that joint is named before the solve)
    return head, check(point, f"look_at[{head!r}]")


def looking(
    skeleton: Skeleton,
    goals: Mapping[int, Any],
    look: tuple[str, np.ndarray] | None,
    pose: list[rot.Vec],
    frames: list[rot.Quat],
) -> tuple[list[rot.Vec], list[rot.Quat]]:
    """The solved pose (lists of tuples) with the face turned toward the point of ``look``
    (``look_goal``), the head alone where ``goals`` (by joint index) target it. The neck and the head
    look from their rest turns, so that every solve splits the look between them alike (from the last
    solve's turns, the neck relaxed toward rest would leave the head a larger share each frame)."""
    if look is None:
        return pose, frames
    head, point = look
    joints = (head,) if skeleton.index(head) in goals else None
    p, q = np.array(pose), np.array(frames)
    for name in look_joints(skeleton, head) if joints is None else ():
        p, q = turn_joint(skeleton, p, q, name, rot.IDENTITY)
    p, q = look_at(skeleton, p, q, point, head=head, joints=joints)
    return [tuple(v) for v in p.tolist()], [tuple(v) for v in q.tolist()]  # type: ignore[misc]


def _angle(a: rot.Vec, b: rot.Vec) -> float:
    """The angle between unit vectors (radians), precise near 0."""
    return 2.0 * math.asin(min(1.0, 0.5 * rot.dist(a, b)))
