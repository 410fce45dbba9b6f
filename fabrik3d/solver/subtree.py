"""A subtree of a skeleton as a skeleton of its own, and forward kinematics of local rotations:
the pieces the natural solve (``fabrik3d.solver.natural``) works with.

Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fabrik3d import rotations as rot
from fabrik3d.model.constraints import EllipticalCone, Hinge
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.rig import Rig


def local(r: Rig, frames: list[rot.Quat], j: int) -> rot.Quat:
    """Joint ``j``'s frame relative to its parent's."""
    p = r.parents[j]
    return frames[j] if p < 0 else rot.mul(rot.conj(frames[p]), frames[j])


def forward(
    r: Rig, pose: list[rot.Vec], frames: list[rot.Quat], turned: dict[int, rot.Quat]
) -> tuple[list[rot.Vec], list[rot.Quat]]:
    """Forward kinematics: the joints of ``turned`` take those local rotations, the others keep
    theirs, and every joint below a changed frame follows (``pos_j = pos_p + R_p·offset_j``)."""
    if not turned:
        return pose, frames
    pose, frames = list(pose), list(frames)
    moved = [False] * len(pose)
    old = frames[:]
    for j in r.order:
        p = r.parents[j]
        if p < 0 or not (j in turned or moved[p]):
            continue
        frames[j] = rot.mul(frames[p], turned[j] if j in turned else rot.mul(rot.conj(old[p]), old[j]))
        pose[j] = _add(pose[p], rot.rotate(frames[p], r.offset[j]))
        moved[j] = True
    return pose, frames


def sub_skeleton(skeleton: Skeleton, r: Rig, top: int) -> tuple[Skeleton, list[int]]:
    """The subtree of joint ``top`` as a skeleton in its parent's rest frame (the parent at the
    origin; axes of limits turned with it), and its joints' indices in ``skeleton``; the root's
    subtree is ``skeleton`` itself without its posing. Cached on the rig."""

    def make() -> tuple[Skeleton, list[int]]:
        p = r.parents[top]
        if p < 0:
            return skeleton.with_posing(None), list(range(len(skeleton)))
        idx = r.subtree(top)
        at = {j: k for k, j in enumerate(idx)}
        fp = r.rest_frames[p]
        rest = skeleton.rest_positions
        names = [skeleton.names[j] for j in idx]
        positions = [rot.rotate_inv(fp, _sub(tuple(rest[j]), tuple(rest[p]))) for j in idx]
        parents = [-1 if j == top else at[r.parents[j]] for j in idx]
        frames = {skeleton.names[j]: rot.mul(rot.conj(fp), r.rest_frames[j]) for j in idx}
        limits = {}
        for j in idx:
            items = skeleton.constraints.get(skeleton.names[j])
            if items:
                limits[skeleton.names[j]] = [_turned(c, fp) for c in items]
        return Skeleton(names, parents, positions, limits, frames), list(idx)

    return r.cached(("natural-subtree", top), make)


def _turned(c: Any, fp: rot.Quat) -> Any:
    """Constraint ``c`` with its world axes expressed in the frame ``fp``."""
    if isinstance(c, Hinge):
        return dataclasses.replace(c, axis=rot.rotate_inv(fp, c.axis))
    if isinstance(c, EllipticalCone):
        return dataclasses.replace(c, right_axis=rot.rotate_inv(fp, c.right_axis))
    return c
