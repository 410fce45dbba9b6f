"""The poses keys hold: what the user saw at a key, and the curve through them.

A ``KeyPose`` is every joint's position ``(n, 3)`` (scene units) and world frame ``(n, 4)`` (unit
quaternions x, y, z, w), as ``SolveResult`` gives them. ``pose_curve`` runs through the keys that
hold one: at such a key, that very pose; between two, each joint's rotation relative to its
parent's frame slerped and each bone's offset in its parent's frame interpolated (its length kept),
put together by forward kinematics from the root's interpolated position, as Blender interpolates
pose-bone rotations; before the first and after the last, held.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model import curves


class KeyPose(NamedTuple):
    """The pose a key holds: ``positions`` ``(n, 3)`` scene units and ``rotations`` ``(n, 4)`` world
    frames (unit quaternions x, y, z, w), as ``SolveResult`` gives them."""

    positions: np.ndarray
    rotations: np.ndarray

    @classmethod
    def of(cls, value: Any, where: str) -> KeyPose:
        """A checked copy of ``value`` (a ``KeyPose``, a ``SolveResult`` or its JSON form)."""
        if isinstance(value, Mapping):
            unknown = set(value) - {"positions", "rotations"}
            if unknown or not {"positions", "rotations"} <= set(value):
                raise ValueError(f"{where}: expected {{positions, rotations}}, got the fields {sorted(value)[:4]}")
            positions, rotations = value["positions"], value["rotations"]
        else:
            positions, rotations = getattr(value, "positions", None), getattr(value, "rotations", None)
            if positions is None or rotations is None:
                raise ValueError(f"{where}: expected a pose (positions and rotations), got {type(value).__name__}")
        p = checks.points(positions, f"{where}.positions")
        return cls(p, checks.frames(rotations, len(p), f"{where}.rotations"))

    def to_dict(self) -> dict[str, Any]:
        return {"positions": self.positions.tolist(), "rotations": self.rotations.tolist()}


# How far a keyed pose's bone may be from the skeleton's length (a share of it): a pose of the
# skeleton read back from a file, not one of another skeleton.
POSE_BONE_TOLERANCE = 1e-3


def check_pose(skeleton: Any, pose: KeyPose, where: str) -> None:
    """``ValueError`` naming ``where`` when ``pose`` is not one of ``skeleton``'s."""
    names, parents = skeleton.names, np.asarray(skeleton.parents)
    if len(pose.positions) != len(names):
        raise ValueError(f"{where}: holds {len(pose.positions)} joints, the skeleton has {len(names)}")
    child = np.flatnonzero(parents >= 0)
    got = np.linalg.norm(pose.positions[child] - pose.positions[parents[child]], axis=1)
    want = np.asarray(skeleton.bone_lengths, dtype=float)[child]
    bad = np.flatnonzero(~(np.abs(got - want) <= POSE_BONE_TOLERANCE * np.maximum(want, 1e-9)))
    if len(bad):
        j, b = int(child[bad[0]]), int(bad[0])
        raise ValueError(
            f"{where}.positions[{j}] ({names[j]}): bone from {names[parents[j]]!r} is {got[b]:.6g} long, "
            f"the skeleton's is {want[b]:.6g} (a pose of another skeleton?)"
        )


def pose_curve(skeleton: Any, keys: Any, frames: Any, mode: str) -> list[KeyPose | None]:
    """The curve of the poses ``keys`` hold (``Key``s, by frame), at each of ``frames``, interpolated
    by ``mode`` (``fabrik3d.model.curves``): at a key holding a pose, that pose itself; None
    everywhere when no key holds one. ``skeleton``: the one the poses are of (``check_pose``)."""
    return PoseCurve(skeleton, keys, mode).at(frames)


class PoseCurve:
    """``pose_curve`` with the keys' tables (each joint's rotation and bone offset relative to its
    parent's frame, per keyed pose) computed once, to evaluate at any frames (a bake, chunk by chunk)."""

    def __init__(self, skeleton: Any, keys: Any, mode: str) -> None:
        held = [k for k in keys if k.pose is not None]
        self.skeleton, self.mode = skeleton, mode
        self.exact = {k.frame: k.pose for k in held}
        if not held:
            return
        parents = np.asarray(skeleton.parents)
        self.frames = np.array([k.frame for k in held], dtype=float)
        p = np.array([k.pose.positions for k in held])  # (k, n, 3)
        q = np.array([k.pose.rotations for k in held])  # (k, n, 4)
        child = np.flatnonzero(parents >= 0)
        fp = np.moveaxis(q[:, parents[child]], -1, 0)  # the parents' frames, as rot's tuples of arrays
        self.local = q.copy()  # (a root keeps its frame)
        self.local[:, child] = np.stack(rot.mul(rot.conj(fp), np.moveaxis(q[:, child], -1, 0)), axis=-1)  # type: ignore[arg-type]
        self.offset = np.zeros_like(p)
        d = np.moveaxis(p[:, child] - p[:, parents[child]], -1, 0)
        self.offset[:, child] = np.stack(rot.rotate_inv(fp, d), axis=-1)  # type: ignore[arg-type]
        self.roots = p[:, skeleton.root]

    def at(self, frames: Any) -> list[KeyPose | None]:
        """The curve at each of ``frames`` (``pose_curve``)."""
        at = np.atleast_1d(np.asarray(frames, dtype=float))
        if not self.exact:
            return [None] * len(at)
        skeleton, mode, f = self.skeleton, self.mode, self.frames
        parents, n = skeleton.parents, len(skeleton.parents)
        turns = np.stack([curves.slerp_curve(f, self.local[:, j], at, mode) for j in range(n)], axis=1)  # (m, n, 4)
        offsets = curves.interpolate(f, self.offset.reshape(len(f), -1), at, mode).reshape(len(at), n, 3)
        roots = curves.interpolate(f, self.roots, at, mode)
        lengths = skeleton.bone_lengths
        out: list[KeyPose | None] = []
        for m, a in enumerate(at):
            exact = self.exact.get(a)
            if exact is not None:
                out.append(exact)
                continue
            pos, fr = np.empty((n, 3)), np.empty((n, 4))
            for j in skeleton.order:
                par = int(parents[j])
                if par < 0:
                    pos[j], fr[j] = roots[m], turns[m, j]
                    continue
                fp = tuple(fr[par])
                fr[j] = rot.normalize_quat(rot.mul(fp, tuple(turns[m, j])))  # type: ignore[arg-type]
                d = offsets[m, j]
                norm = float(np.linalg.norm(d))
                d = d * (lengths[j] / norm) if norm > 0.0 else d
                pos[j] = pos[par] + np.array(rot.rotate(fp, tuple(d)))  # type: ignore[arg-type]
            out.append(KeyPose(pos, fr))
        return out
