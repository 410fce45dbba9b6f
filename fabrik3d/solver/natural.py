"""Natural posing: chain reach, stiffness, swivel and relaxing, around the solve of ``fabrik3d.solver.tree``.

A solve of a skeleton with a ``Posing`` (``fabrik3d.model.posing``) runs in four steps:

1. **Relax.** Every stiff joint (stiffness > 0) takes its local rotation from the reference
   pose (the rest pose, or ``relax_to``), the joints below following rigidly: what reaching does
   not need goes back to the pose the user built, so drags do not pile up.
2. **Tiers.** Stiffness levels from the freest up. At a level, each targeted effector's chain
   runs up from its parent through the joints no stiffer than the level, to its reach joint at
   most; the chain's top joint keeps its position and its parent's frame, and the subtree below
   it is solved as a skeleton of its own in that parent's frame (``sub_skeleton``). Chains with
   the same top are solved together, the tops nearest the root first.
3. **Only as much as needed.** When a level leaves a target unreached, the next level's joints
   are freed: the whole next level is solved, and then the share of their turn (from the
   relaxed pose) is bisected: the least share with which the freer joints reach.
4. **Swivel.** A limb with a swivel (or a pole) turns its hinge's joint (elbow, knee) about the
   line from the hinge's parent to its child toward the swivel's direction, which moves no
   target; the turn is kept when the joint limits let the targets stay reached.

Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model.constraints import EllipticalCone, Hinge
from fabrik3d.model.posing import Posing, hinge_above
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal, Target
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub

if TYPE_CHECKING:
    from fabrik3d.solver.rig import Rig

# Halvings of the share of a stiffer level's turn (1/32 of the turn at the end).
BISECTIONS = 5
# A swivel turn smaller than this (radians) is not made.
MIN_SWIVEL = 1e-3

Solver = Callable[..., Any]


class NaturalSolve:
    """One natural solve (module docstring) on rig ``r`` of ``skeleton``; ``solve`` is the
    plain solve (``fabrik3d.solver.tree.solve``) used for each chain's subtree."""

    def __init__(
        self,
        skeleton: Skeleton,
        r: Rig,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        poles: dict[int, rot.Vec],
        posing: Posing,
        solve: Solver,
    ) -> None:
        self.sk, self.r, self.goals, self.weights, self.poles, self.posing = skeleton, r, goals, weights, poles, posing
        self.solve = solve
        names = skeleton.names
        self.stiffness = [posing.stiffness.get(name, 0.0) for name in names]
        root = r.order[0]
        self.stop = {e: skeleton.index(posing.reach[names[e]]) if names[e] in posing.reach else root for e in goals}
        on_chains = {j for e in goals for j in self.chain(e, lambda _: True)}
        self.levels = sorted({self.stiffness[j] for j in on_chains}) or [0.0]
        self.swivels = {
            e: (skeleton.index(posing.swivel[names[e]].frame), posing.swivel[names[e]].direction)
            for e in goals
            if names[e] in posing.swivel
        }
        self.iterations = 0
        self.hinges: dict[int, int | None] = {}

    # -- the steps ---------------------------------------------------------------------------
    def run(
        self, start: list[rot.Vec], relax: list[rot.Vec], tol: float, max_it: int
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """The natural pose from ``start`` (relaxing toward ``relax``); returns (pose, frames, iterations)."""
        r = self.r
        self.tol, self.max_it = tol, max_it
        frames = r.pose_frames(start)
        reference = r.pose_frames(relax)
        stiff = {j: local(r, reference, j) for j in r.order[1:] if self.stiffness[j] > 0.0}
        pose, frames = forward(r, start, frames, stiff)
        pose, frames = self.tier(pose, frames, self.levels[0])
        for below, level in zip(self.levels, self.levels[1:]):
            if self.reached(pose):
                break
            pose, frames = self.share(pose, frames, below, level)
        return pose, frames, self.iterations

    def share(
        self, pose: list[rot.Vec], frames: list[rot.Quat], below: float, level: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The least share of level ``level``'s turn with which the joints up to ``below`` reach."""
        r = self.r
        full_pose, full_frames = self.tier(pose, frames, level)
        freed = [j for j in r.order[1:] if below < self.stiffness[j] <= level]
        before = {j: local(r, frames, j) for j in freed}
        after = {j: local(r, full_frames, j) for j in freed}

        def at(t: float) -> tuple[list[rot.Vec], list[rot.Quat]]:
            turned = {j: rot.slerp(before[j], after[j], t) for j in freed}
            return self.tier(*forward(r, pose, frames, turned), below)

        best = at(1.0)
        if not self.reached(best[0]):
            return min((best, (full_pose, full_frames)), key=lambda pf: self.error(pf[0]))
        lo, hi = 0.0, 1.0
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            candidate = at(mid)
            if self.reached(candidate[0]):
                hi, best = mid, candidate
            else:
                lo = mid
        return best

    def tier(
        self, pose: list[rot.Vec], frames: list[rot.Quat], level: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Solve each chain of the joints no stiffer than ``level``, tops nearest the root first."""
        groups: dict[int, list[int]] = {}
        for e in self.goals:
            chain = self.chain(e, lambda j: self.stiffness[j] <= level)
            if chain:
                groups.setdefault(chain[-1], []).append(e)
        pose, frames = list(pose), list(frames)
        for top in sorted(groups, key=self.r.position_in_order):
            self.solve_below(top, groups[top], pose, frames)
        return pose, frames

    def chain(self, e: int, free: Callable[[int], bool]) -> list[int]:
        """The joints that turn for effector ``e``: up from its parent while ``free``, to its reach joint."""
        out: list[int] = []
        j = self.r.parents[e]
        while j >= 0 and free(j):
            out.append(j)
            if j == self.stop[e]:
                break
            j = self.r.parents[j]
        return out

    def solve_below(self, top: int, effectors: list[int], pose: list[rot.Vec], frames: list[rot.Quat]) -> None:
        """Solve the subtree of ``top`` for ``effectors`` in its parent's frame, then swivel; in place."""
        r, names = self.r, self.sk.names
        sub, idx = sub_skeleton(self.sk, r, top)
        p = r.parents[top]
        fp, origin = (rot.IDENTITY, (0.0, 0.0, 0.0)) if p < 0 else (frames[p], pose[p])
        start = np.array([rot.rotate_inv(fp, _sub(pose[j], origin)) for j in idx])
        targets = {}
        for e in effectors:
            g = self.goals[e]
            turn = None if g.orientation is None else rot.mul(rot.conj(fp), g.orientation)
            targets[names[e]] = Target(rot.rotate_inv(fp, _sub(g.position, origin)), turn, g.weight)
        weights = None if self.weights is None else {names[e]: self.weights.get(e, 1.0) for e in effectors}
        result = self.solve(sub, targets, positions=start, weights=weights, tolerance=self.tol, max_iterations=self.max_it)
        self.iterations += result.iterations
        local_pose = [tuple(v) for v in result.positions.tolist()]
        local_frames = [tuple(q) for q in result.rotations.tolist()]
        at = {j: k for k, j in enumerate(idx)}
        for e in effectors:
            bend = self.bend(e, fp, origin, pose, frames)
            if bend is not None:
                local_pose, local_frames = self.swivel(
                    sub, targets, weights, at, e, rot.rotate_inv(fp, bend), local_pose, local_frames
                )
        for k, j in enumerate(idx):
            pose[j] = _add(origin, rot.rotate(fp, local_pose[k]))
            frames[j] = rot.mul(fp, local_frames[k])

    def bend(
        self, e: int, fp: rot.Quat, origin: rot.Vec, pose: list[rot.Vec], frames: list[rot.Quat]
    ) -> rot.Vec | None:
        """The world direction effector ``e``'s hinge bends toward: to its pole, or its swivel's."""
        if e in self.poles:
            return None if self.hinge_of(e) is None else _sub(self.poles[e], pose[self.r.parents[self.hinge_of(e)]])
        if e not in self.swivels:
            return None
        j, direction = self.swivels[e]
        return rot.rotate(rot.mul(frames[j], rot.conj(self.r.rest_frames[j])), direction)

    def hinge_of(self, e: int) -> int | None:
        """The joint effector ``e``'s swivel or pole bends (``fabrik3d.model.posing.hinge_above``)."""
        if e not in self.hinges:
            self.hinges[e] = hinge_above(self.sk, e)
        return self.hinges[e]

    def swivel(
        self,
        sub: Skeleton,
        targets: dict[str, Target],
        weights: dict[str, float] | None,
        at: dict[int, int],
        e: int,
        bend: rot.Vec,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Turn ``e``'s hinge joint about the line from its parent to its child toward ``bend``
        (local coordinates); kept if the limits let every target stay reached (a half turn is
        tried next)."""
        r = self.r
        h = self.hinge_of(e)
        if h is None or r.parents[h] not in at or r.first_child[h] not in at:
            return pose, frames
        a, m, w = at[r.parents[h]], at[h], at[r.first_child[h]]
        axis = rot.unit(_sub(pose[w], pose[a]))
        if axis is None:
            return pose, frames
        off = _across(_sub(pose[m], pose[a]), axis)
        want = _across(bend, axis)
        if off is None or want is None:
            return pose, frames
        cross = rot.cross(off, want)
        angle = float(np.arctan2(rot.dot(cross, axis), rot.dot(off, want)))
        if abs(angle) < MIN_SWIVEL:
            return pose, frames
        before = self.error_of(sub, targets, pose)
        for share in (1.0, 0.5):
            turned = list(pose)
            turned[m] = _add(pose[a], rot.rotate(rot.axis_angle(axis, share * angle), _sub(pose[m], pose[a])))
            result = self.solve(
                sub, targets, positions=np.array(turned), weights=weights, tolerance=self.tol, max_iterations=self.max_it
            )
            self.iterations += result.iterations
            if max(result.errors.values()) <= max(self.tol, before):
                return [tuple(v) for v in result.positions.tolist()], [tuple(q) for q in result.rotations.tolist()]
        return pose, frames

    # -- measures ----------------------------------------------------------------------------
    def error(self, pose: list[rot.Vec]) -> float:
        """The largest distance of a targeted effector from its target."""
        return max((rot.dist(pose[e], g.position) for e, g in self.goals.items()), default=0.0)

    def reached(self, pose: list[rot.Vec]) -> bool:
        return self.error(pose) <= self.tol

    @staticmethod
    def error_of(sub: Skeleton, targets: dict[str, Target], pose: list[rot.Vec]) -> float:
        return max(rot.dist(pose[sub.index(name)], tuple(t.position)) for name, t in targets.items())


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


def _across(v: rot.Vec, axis: rot.Vec) -> rot.Vec | None:
    """The unit part of ``v`` across the unit ``axis`` (``None`` when ``v`` runs along it)."""
    return rot.unit(_add(v, axis, -rot.dot(v, axis)))
