"""A pose carried onto a body of other proportions, keeping its joint angles.

``repose(old, new, positions, rotations)``: ``old`` and ``new`` are skeletons with the same joints
(names and parents: a humanoid and ``presets.humanoid(height=..., arm=...)``, say) and any rest
positions. Each joint's turn (``fabrik3d.solver.fk.joint_turn``: its rotation from its rest pose in
its own rest frame) is read on ``old`` and applied on ``new`` by forward kinematics, so the new
pose's turns are the old pose's (within rounding: 1e-9 degrees). The root keeps its offset from its
rest position, scaled by the root's rest height above the body's lowest rest joint (``new`` over
``old``: a pelvis lowered 20 cm in a crouch of a 1.75 m body is lowered 17 cm on a 1.5 m one, and
the feet stay on the ground). Joint limits are not applied: the turns were within the old body's,
and a body of other proportions has the same limits.

``repose_key(old, new, key, pose)`` carries a timeline key the same way: its pose, and its targets,
root target and poles to where its joints went.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model.key_poses import KeyPose
from fabrik3d.model.keys import Key
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import _pose, _turn_of
from fabrik3d.solver.rig import check_skeleton, rig


def repose(old: Skeleton, new: Skeleton, positions: Any, rotations: Any) -> tuple[np.ndarray, np.ndarray]:
    """The pose of ``old`` (``positions (n, 3)``, world frames ``rotations (n, 4)``, as
    ``SolveResult``) on ``new``, with the same joint turns (module docstring).

    Returns:
        ``(positions (n, 3), rotations (n, 4))`` of ``new``.

    Raises:
        ValueError: for skeletons of other joints or parents, or a pose of the wrong shape or not finite.
    """
    ro, rn = rig(check_skeleton(old)), rig(check_skeleton(new))
    if old.names != new.names or not np.array_equal(old.parents, new.parents):
        raise ValueError("new: expected a skeleton of the same joints and parents as old")
    p, q = _pose(old, positions, rotations)
    frames: list[rot.Quat] = [tuple(v) for v in q.tolist()]  # type: ignore[misc]
    out_p = np.empty_like(p)
    out_q: list[rot.Quat] = [rot.IDENTITY] * len(frames)
    root = old.root
    scale = _root_height(new) / _root_height(old)
    out_p[root] = new.rest_positions[root] + scale * (p[root] - old.rest_positions[root])
    for j in old.order:
        turn = _turn_of(ro, frames, j)
        parent = rn.parents[j]
        fp = out_q[parent] if parent >= 0 else rot.IDENTITY
        f = rot.normalize_quat(rot.mul(fp, rot.mul(rn.rest_local[j], turn)))
        same_sign = f[0] * frames[j][0] + f[1] * frames[j][1] + f[2] * frames[j][2] + f[3] * frames[j][3] >= 0.0
        out_q[j] = f if same_sign else (-f[0], -f[1], -f[2], -f[3])  # (q and -q: one frame; keep old's sign)
        if parent >= 0:
            out_p[j] = out_p[parent] + rot.rotate(rot.mul(fp, rot.conj(rn.rest_frames[parent])), _rest_offset(new, j))
    return out_p, np.array(out_q)


def repose_key(old: Skeleton, new: Skeleton, key: Key, pose: Any) -> Key:
    """``key`` (a ``fabrik3d.model.keys.Key`` of ``old``) on ``new``: ``pose`` is the key's pose on ``old``
    (its ``key.pose``, or the pose baked at its frame for a key that holds none; anything with
    ``positions (n, 3)`` and ``rotations (n, 4)``), carried by ``repose``; each target and the root target
    moved to where its joint went, its orientation and weight kept; the poles moved with the root. The
    key holds the carried pose if it held one."""
    p, q = repose(old, new, pose.positions, pose.rotations)
    shift = p[new.root] - np.asarray(pose.positions, dtype=float)[old.root]
    targets = {name: dataclasses.replace(t, position=p[new.index(name)].copy()) for name, t in key.targets.items()}
    root = None if key.root_target is None else dataclasses.replace(key.root_target, position=p[new.root].copy())
    poles = {name: v + shift for name, v in key.poles.items()}
    return Key(key.frame, targets, root, poles, None if key.pose is None else KeyPose(p, q))


def _rest_offset(sk: Skeleton, j: int) -> rot.Vec:
    v = sk.rest_positions[j] - sk.rest_positions[sk.parents[j]]
    return (float(v[0]), float(v[1]), float(v[2]))


def _root_height(sk: Skeleton) -> float:
    """The root's rest height above the lowest rest joint (1 where it is lowest)."""
    h = float(sk.rest_positions[sk.root][1] - sk.rest_positions[:, 1].min())
    return h if h > 1e-9 else 1.0
