"""Capture a pose by role and apply it to any humanoid rig by forward kinematics (docs/poses.md).

A pose (``fabrik3d.model.pose_library.Pose``) holds each role's rotation from the humanoid preset's rest
(T-pose) frame, relative to the body. On a rig, a role's *canonical* frame is its rest frame swung so
that its bone points as the preset's does (an A-pose's arm swung up to the T, whatever the bone's roll),
in the rig's body axes (``fabrik3d.model.rig_map.body_turn``); the pelvis's is its rest frame (it is the
body: a Blender rig's forward-leaning lumbar bone keeps its lean, and its hips their range). Applying a
pose turns each role joint, parents first, to the pose's rotation of that canonical frame, then swings
it so that its bone to the next role points where the preset's does (a rig without a role, such as a
third spine bone, still gets its bones' directions) and rolls it about that bone so that the hinge of
the next role (an elbow, a knee) bends toward the posed bone below it (a rig whose hinge sits otherwise
than the preset's, as a bent-at-rest elbow's, still takes the pose). Every turn goes through
``fabrik3d.solver.fk.turn_joint``, so it is clamped to the joint's own limits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.model.constraints import Hinge
from fabrik3d.model.pose_library import Pose, check_parts, part_of
from fabrik3d.model.rig_map import ROLES, body_turn, guess_rig_map
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.solver.fk import _pose, joint_turn, turn_joint

Quat = rot.Quat
Vec = rot.Vec


@cache
def _preset() -> Skeleton:
    return presets.humanoid()


def _rest_dir(role: str) -> Vec:
    """The preset's rest direction of ``role``'s +Y axis (the body frame is the preset's world)."""
    sk = _preset()
    return rot.y_axis(tuple(sk.rest_frames[sk.index(role)].tolist()))  # type: ignore[arg-type]


def role_turn(role: str, direction: Vec, twist_deg: float) -> Quat:
    """A role's rotation from its canonical frame, relative to the body: the twist, then the swing of
    the rest direction onto ``direction``."""
    d = _rest_dir(role)
    return rot.mul(rot.swing(d, direction, rot.X_AXIS), rot.axis_angle(d, math.radians(twist_deg)))


def _split(role: str, q: Quat) -> tuple[Vec, float]:
    d = _rest_dir(role)
    direction = rot.rotate(q, d)
    twist = rot.mul(rot.conj(rot.swing(d, direction, rot.X_AXIS)), q)
    return direction, math.degrees(rot.twist_angle(twist, d))


class _Rig:
    """A skeleton with its roles: role -> joint, body axes, canonical frames."""

    def __init__(self, skeleton: Skeleton, rig_map: Mapping[str, str] | None) -> None:
        self.sk = check_skeleton(skeleton)
        if rig_map is None:
            own = [n for n in skeleton.names if n in ROLES]
            rig_map = {n: n for n in own} if "pelvis" in own and len(own) >= 8 else guess_rig_map(skeleton.names)[1]
        self.at = {r: skeleton.index(b) for r, b in rig_map.items() if r in ROLES and b in skeleton}
        self.role = {j: r for r, j in self.at.items()}
        rest, pre = skeleton.rest_positions, _preset()
        m = body_turn({r: pre.index(r) for r in self.at}, rest, self.at)  # preset body axes -> this rig's
        self.a: Quat = _matrix_quat(m)
        self.r0 = [tuple(q) for q in skeleton.rest_frames.tolist()]
        self.canon: dict[int, Quat] = {}  # the canonical frame (module docstring) of each role joint
        for role, j in self.at.items():
            if role == "pelvis":  # (the body itself: its rest is the body at rest, whatever its bone)
                self.canon[j] = self.r0[j]  # type: ignore[assignment]
                continue
            e = rot.y_axis(self.r0[j])  # type: ignore[arg-type]
            s = rot.swing(e, rot.rotate(self.a, _rest_dir(role)), rot.X_AXIS)
            self.canon[j] = rot.normalize_quat(rot.mul(s, self.r0[j]))  # type: ignore[arg-type]
        core = [int(j) for j in skeleton.core_joints]
        self.up = rot.rotate(self.a, rot.Y_AXIS)
        self.ground = min(float(np.dot(rest[j], self.up)) for j in core)

    def delta(self, q: np.ndarray, j: int) -> Quat:
        """Joint ``j``'s rotation from its canonical frame, in the preset's axes."""
        world = rot.mul(tuple(q[j].tolist()), rot.conj(self.canon[j]))  # type: ignore[arg-type]
        return rot.normalize_quat(rot.mul(rot.conj(self.a), rot.mul(world, self.a)))

    def height(self, p: np.ndarray) -> float:
        j = self.at["pelvis"]
        rest = float(np.dot(self.sk.rest_positions[j], self.up)) - self.ground
        return (float(np.dot(p[j], self.up)) - self.ground) / rest if rest > 1e-9 else 1.0

    def role_child(self, j: int) -> int:
        """The first role joint down ``j``'s first-child line (``-1`` for none)."""
        k = self.sk.first_child(j)
        while k >= 0 and k not in self.role:
            k = self.sk.first_child(k)
        return k


def _heading(q: Quat) -> float:
    f = rot.rotate(q, (0.0, 0.0, 1.0))
    return math.atan2(f[0], f[2]) if f[0] * f[0] + f[2] * f[2] > 1e-12 else 0.0


def capture_pose(
    skeleton: Skeleton, positions: Any, rotations: Any, rig_map: Mapping[str, str] | None = None, parts: Any = None
) -> Pose:
    """The pose of ``skeleton`` by role (module docstring), to apply on any humanoid rig.

    Args:
        skeleton: the humanoid preset, a character's skeleton or any rig whose names give roles.
        positions: ``(n, 3)`` the pose, scene units.
        rotations: ``(n, 4)`` its world frames.
        rig_map: role -> joint name (``Character.rig_map``); ``None``: the skeleton's own names when they
            are roles, else ``fabrik3d.model.rig_map.guess_rig_map``.
        parts: the parts to keep (``"arms"``, ``"legs"``, ``"spine"``, ``"hands"``); ``None``: all.

    Raises:
        ValueError: for wrong shapes, an unknown part or a rig without a pelvis role.
    """
    r = _Rig(skeleton, rig_map)
    keep = check_parts(parts)
    p, q = _pose(skeleton, positions, rotations)
    if "pelvis" not in r.at:
        raise ValueError("capture_pose: the skeleton has no pelvis role (pass its rig_map)")
    body = r.delta(q, r.at["pelvis"])
    inv = rot.conj(body)
    bones, twists = {}, {}
    for role in ROLES:
        if role in r.at and part_of(role) in keep and not role.endswith("_end"):
            direction, twist = _split(role, rot.mul(inv, r.delta(q, r.at[role])))
            bones[role], twists[role] = direction, twist
    pelvis = height = None
    if "spine" in keep:
        pelvis = rot.mul(rot.axis_angle(rot.Y_AXIS, -_heading(body)), body)
        height = r.height(p)
    return Pose(bones, twists, pelvis, height)


def apply_pose(
    skeleton: Skeleton,
    positions: Any,
    rotations: Any,
    pose: Pose,
    parts: Any = None,
    mirrored: bool = False,
    amount: float = 1.0,
    rig_map: Mapping[str, str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``pose`` applied to the current pose of ``skeleton``: ``(positions (n, 3), rotations (n, 4))``.

    Only what the pose holds of ``parts`` is applied (``None``: the whole body); the roles the skeleton
    lacks are skipped, its other joints keep their turns. The pelvis keeps its place across the floor and
    the character's heading; the pose gives its tilt and its height (``spine``).

    Args:
        skeleton, positions, rotations, rig_map: as ``capture_pose``.
        pose: the pose.
        parts: ``"arms"``, ``"legs"``, ``"spine"``, ``"hands"`` or a list of them; ``None``: all.
        mirrored: apply the pose with left and right swapped (``Pose.mirrored``).
        amount: 0..1, how far to go from the current pose (each joint's turn slerped, the height lerped).

    Raises:
        ValueError: for wrong shapes, an unknown part or an amount outside [0, 1].
    """
    if not isinstance(pose, Pose):
        raise ValueError(f"pose: expected a fabrik3d Pose, got {type(pose).__name__}")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not 0.0 <= amount <= 1.0:
        raise ValueError(f"amount: expected a number in [0, 1], got {str(amount)[:40]!r}")
    r = _Rig(skeleton, rig_map)
    pose = (pose.mirrored() if mirrored else pose).only(parts)
    p0, q0 = _pose(skeleton, positions, rotations)
    p, q = p0.copy(), q0.copy()
    sk, moved = r.sk, []
    pelvis_j = r.at.get("pelvis")
    lift = 0.0
    body = r.delta(q, pelvis_j) if pelvis_j is not None else rot.IDENTITY
    if pelvis_j is not None and pose.pelvis is not None:
        body = rot.mul(rot.axis_angle(rot.Y_AXIS, _heading(body)), pose.pelvis)
        p, q = _turn_to(r, p, q, pelvis_j, _world(r, body, pelvis_j))
        moved.append(pelvis_j)
    if pelvis_j is not None and pose.height is not None and sk.parents[pelvis_j] < 0:
        rest = float(np.dot(sk.rest_positions[pelvis_j], r.up)) - r.ground
        lift = (r.ground + pose.height * rest) - float(np.dot(p[pelvis_j], r.up))
    turns = _body_turns(r, pose, body)
    for j in sk.order:
        role = r.role.get(j)
        if role is None or role not in turns or role == "pelvis":
            continue
        frame = _world(r, turns[role], j)
        c = r.role_child(j)
        if c >= 0 and (want := _chord(r, role, r.role[c], turns)) is not None:
            e = rot.sub(tuple(sk.rest_positions[c].tolist()), tuple(sk.rest_positions[j].tolist()))  # type: ignore[arg-type]
            u = rot.unit(rot.rotate(rot.mul(frame, rot.conj(r.r0[j])), e))  # type: ignore[arg-type]
            w = rot.unit(rot.rotate(r.a, want))
            if u is not None and w is not None:
                frame = rot.normalize_quat(rot.mul(rot.swing(u, w, rot.X_AXIS), frame))
                frame = _rolled_to_hinge(r, turns, j, c, frame, w)
        p, q = _turn_to(r, p, q, j, frame)
        moved.append(j)
    up = np.array(r.up)
    if amount >= 1.0:
        return p + lift * up, q
    out_p, out_q = p0, q0
    for j in sorted(moved, key=sk.order.index):
        name = sk.names[j]
        start = tuple(joint_turn(sk, q0, name).tolist())
        end = tuple(joint_turn(sk, q, name).tolist())
        out_p, out_q = turn_joint(sk, out_p, out_q, name, rot.slerp(start, end, float(amount)))  # type: ignore[arg-type]
    return out_p + amount * lift * up, out_q


def _body_turns(r: _Rig, pose: Pose, body: Quat) -> dict[str, Quat]:
    """role -> its wanted rotation from its canonical frame (preset axes): the body's times the pose's."""
    out = {"pelvis": body}
    for role, direction in pose.bones.items():
        out[role] = rot.mul(body, role_turn(role, direction, pose.twists.get(role, 0.0)))
    return out


def _world(r: _Rig, turn: Quat, j: int) -> Quat:
    """The world frame of role joint ``j`` rotated by ``turn`` (preset axes) from its canonical frame."""
    world = rot.mul(r.a, rot.mul(turn, rot.conj(r.a)))
    return rot.normalize_quat(rot.mul(world, r.canon[j]))


def _chord(r: _Rig, role: str, child: str, turns: Mapping[str, Quat]) -> Vec | None:
    """The posed direction (preset axes) from ``role`` to ``child`` on the preset, its bones turned by
    ``turns``; ``None`` when ``child`` is not below ``role`` or a role between them is not posed."""
    pre = _preset()
    path = [pre.index(child)]
    while path[-1] != pre.index(role):
        parent = int(pre.parents[path[-1]])
        if parent < 0:
            return None
        path.append(parent)
    total = (0.0, 0.0, 0.0)
    for k in range(len(path) - 1, 0, -1):
        a, b = pre.names[path[k]], path[k - 1]
        if a not in turns:
            return None
        offset = tuple((pre.rest_positions[b] - pre.rest_positions[path[k]]).tolist())
        total = rot.add(total, rot.rotate(turns[a], offset))  # type: ignore[arg-type]
    return rot.unit(total)


def _rolled_to_hinge(r: _Rig, turns: Mapping[str, Quat], j: int, c: int, frame: Quat, bone: Vec) -> Quat:
    """``frame`` rolled about ``bone`` (its world bone to role joint ``c``) so that ``c``'s hinge (an
    elbow, a knee) bends in the plane of the posed bone below ``c``: a rig whose hinge sits otherwise
    in its canonical frame than the preset's (a Blender rig's bent elbow) still takes the pose's
    direction. Of the two rolls that do it, the one whose bend lies within the hinge's range (then the
    smaller) is taken; ``frame`` as it is when ``c`` has no hinge or the bone below is straight on."""
    hinge = next((h for h in r.sk.constraints.get(r.sk.names[c], ()) if isinstance(h, Hinge)), None)
    below = r.role_child(c)
    if hinge is None or below < 0 or (want := _chord(r, r.role[c], r.role[below], turns)) is None:
        return frame
    f = rot.rotate(r.a, want)
    if rot.dot(rot.cross(bone, f), rot.cross(bone, f)) < 1e-12:
        return frame
    a = rot.rotate(rot.mul(frame, rot.conj(r.r0[j])), hinge.axis)  # (the hinge's axis turns with c's parent)
    a_par = rot.dot(a, bone)
    a_perp = rot.add(a, bone, -a_par)
    ca, sa, c0 = rot.dot(a_perp, f), rot.dot(rot.cross(bone, a_perp), f), a_par * rot.dot(bone, f)
    radius = math.hypot(ca, sa)
    if radius < 1e-12 or abs(c0) > radius:
        return frame
    mid, half = math.atan2(sa, ca), math.acos(max(-1.0, min(1.0, -c0 / radius)))
    k = r.sk.first_child(c)
    rest_bone = rot.sub(tuple(r.sk.rest_positions[k].tolist()), tuple(r.sk.rest_positions[c].tolist()))  # type: ignore[arg-type]
    best: tuple[float, float, Quat] | None = None
    for phi in (mid + half, mid - half):
        phi = math.remainder(phi, math.tau)
        rolled = rot.normalize_quat(rot.mul(rot.axis_angle(bone, phi), frame))
        carried = rot.mul(rolled, rot.conj(r.r0[j]))  # (world turn from rest of c's parent)
        axis, zero = rot.rotate(carried, hinge.axis), rot.rotate(carried, rest_bone)
        bend = math.degrees(math.atan2(rot.dot(axis, rot.cross(zero, f)), rot.dot(zero, f)))
        over = max(hinge.min_deg - bend, bend - hinge.max_deg, 1e-6) - 1e-6  # (a bend at its stop: 0)
        if best is None or (over, abs(phi)) < best[:2]:
            best = (over, abs(phi), rolled)
    return best[2] if best is not None else frame


def _turn_to(r: _Rig, p: np.ndarray, q: np.ndarray, j: int, frame: Quat) -> tuple[np.ndarray, np.ndarray]:
    """The pose with joint ``j`` turned (within its limits) toward the world ``frame``."""
    parent = int(r.sk.parents[j])
    fp: Quat = tuple(q[parent].tolist()) if parent >= 0 else rot.IDENTITY  # type: ignore[assignment]
    rest_local = rot.mul(rot.conj(r.r0[parent]), r.r0[j]) if parent >= 0 else r.r0[j]  # type: ignore[arg-type]
    turn = rot.normalize_quat(rot.mul(rot.conj(rest_local), rot.mul(rot.conj(fp), frame)))
    return turn_joint(r.sk, p, q, r.sk.names[j], turn)


def _matrix_quat(m: np.ndarray) -> Quat:
    """The unit quaternion (x, y, z, w) of rotation matrix ``m``."""
    e = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
    return rot.fit_rotation(e, [tuple(m[:, k].tolist()) for k in range(3)], [1.0, 1.0, 1.0], rot.IDENTITY)  # type: ignore[misc]
