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
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model.constraints import EllipticalCone, Hinge
from fabrik3d.model.posing import Posing, hinge_above
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.rig import Rig, rig

# A swivel's ``toward`` turns fade out as the effector comes nearer its limb's root than this share
# of the limb's length (there the line to it turns fast: the bend would too).
NEAR_ROOT = 0.5
# Iterations a foot's orientation hint gets before the foot gives way to the limits.
HINT_ITERATIONS = 12
# Probes of the share of a stiffer level's turn (a first guess, then halvings).
BISECTIONS = 4
# A first probe at least this share of the turn takes all of it.
FULL_SHARE = 0.97
# A swivel turn smaller than this (radians) is not made.
MIN_SWIVEL = 0.005
# The shares of the swivel turn tried, in this order, until one ends within SWIVEL_CLOSE (radians)
# of the bend direction (the limits may forbid all of it).
SWIVEL_SHARES = (1.0, 0.75, 0.5, 0.25)
SWIVEL_CLOSE = 0.1
# Iterations the solve from a swivelled limb gets (it moved no target: if the limits let it stay,
# a few settle it).
SWIVEL_ITERATIONS = 6
# A swivel may leave an orientation target this far off (radians), or as far as it was.
ORIENTATION_SLACK = 1e-3
# A bone below a hinge's child that leaves it by less than this angle at rest (cosine of 45 deg)
# belongs to the limb that swivels (a hand does, a foot does not).
LIMB_COS = 0.7071

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
            e: (skeleton.index(posing.swivel[names[e]].frame), posing.swivel[names[e]])
            for e in goals
            if names[e] in posing.swivel
        }
        self.iterations = 0
        # (top, effectors) -> the parent's frame and position, and the targets, of its last solve
        self.done: dict[tuple[int, tuple[int, ...]], Any] = {}
        self.hinges: dict[int, int | None] = {}
        self.limbs: dict[int, tuple[int, list[int], int] | None] = {}

    # -- the steps ---------------------------------------------------------------------------
    def run(
        self, start: list[rot.Vec], relax: list[rot.Vec], tol: float, max_it: int
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """The natural pose from ``start`` (relaxing toward ``relax``); returns (pose, frames, iterations)."""
        r = self.r
        self.tol, self.max_it = tol, max_it
        whole = LimitedSolve(r, {}, None, {}, None)  # (its projection onto the limits)
        reference = self.reference = whole.project(relax, r.pose_frames(relax))[1]
        pose, frames = whole.project(start, r.pose_frames(start))
        stiff = {j: local(r, reference, j) for j in r.order[1:] if self.stiffness[j] > 0.0}
        pose, frames = forward(r, pose, frames, stiff)
        pose, frames = self.tier(pose, frames, self.levels[0])
        for below, level in zip(self.levels, self.levels[1:]):
            if self.reached(pose):
                break
            pose, frames = self.share(pose, frames, below, level)
        pose, frames = whole.project(pose, frames)  # (every frame by the solver's rules, limits held)
        return pose, frames, self.iterations

    def share(
        self, pose: list[rot.Vec], frames: list[rot.Quat], below: float, level: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The least share of level ``level``'s turn with which the joints up to ``below`` reach.

        The share is bisected; the first probe is where the reach's slack (the distance from each
        unreached effector's chain top to its target, beyond the chain's length) runs out if it
        shrinks linearly with the share. Only the chains below the freed joints are solved again.
        """
        r = self.r
        full_pose, full_frames = self.tier(pose, frames, level)
        if not self.reached(full_pose):
            return min(((pose, frames), (full_pose, full_frames)), key=lambda pf: self.error(pf[0]))
        freed = [j for j in r.order[1:] if below < self.stiffness[j] <= level]
        before = {j: local(r, frames, j) for j in freed}
        after = {j: local(r, full_frames, j) for j in freed}
        below_freed = {k for j in freed for k in r.subtree(j)}

        def at(t: float) -> tuple[list[rot.Vec], list[rot.Quat]]:
            turned = {j: rot.slerp(before[j], after[j], t) for j in freed}
            return self.tier(*forward(r, pose, frames, turned), below, below_freed)

        best = (full_pose, full_frames)
        lo, hi = 0.0, 1.0
        probe = self.slack_share(pose, forward(r, pose, frames, after)[0], below)
        if probe is not None and probe >= FULL_SHARE:
            return best  # (all of the turn is needed: the head's reach from the neck, say)
        for _ in range(BISECTIONS):
            mid = probe if probe is not None and lo < probe < hi else 0.5 * (lo + hi)
            probe = None
            candidate = at(mid)
            if self.reached(candidate[0]):
                hi, best = mid, candidate
            else:
                lo = mid
        return best

    def slack_share(self, zero: list[rot.Vec], one: list[rot.Vec], level: float) -> float | None:
        """Where the slack of the unreached effectors' chains (at ``level``) runs out between the
        poses ``zero`` and ``one``, if it shrinks linearly (``None`` if it does not shrink)."""
        share = None
        for e, g in self.goals.items():
            if rot.dist(zero[e], g.position) <= self.tol:
                continue
            chain = self.chain(e, lambda j: self.stiffness[j] <= level)
            top = chain[-1] if chain else e
            length = sum(self.r.lengths[j] for j in [e, *chain[:-1]])
            s0 = rot.dist(zero[top], g.position) - length
            s1 = rot.dist(one[top], g.position) - length
            if len(chain) == 1 and s0 < 0.0:  # one bone reaches its length only: too near counts
                s0, s1 = -s0, -s1
            if s0 <= 0.0 or s1 >= s0:
                return None  # (held off by limits, not by reach: no estimate)
            share = max(share or 0.0, min(1.0, s0 / (s0 - s1)))
        return share

    def tier(
        self, pose: list[rot.Vec], frames: list[rot.Quat], level: float, within: set[int] | None = None
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Solve each chain of the joints no stiffer than ``level`` (whose top is ``within``, if
        given: the others are solved already), tops nearest the root first."""
        groups: dict[int, list[int]] = {}
        for e in self.goals:
            chain = self.chain(e, lambda j: self.stiffness[j] <= level)
            if chain and (within is None or chain[-1] in within):
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
        """Solve the subtree of ``top`` for ``effectors`` in its parent's frame, then swivel; in place.
        A subtree solved before for the same effectors, whose parent has not moved since, is left."""
        r = self.r
        p = r.parents[top]
        fp, origin = (rot.IDENTITY, (0.0, 0.0, 0.0)) if p < 0 else (frames[p], pose[p])
        key = (top, tuple(effectors))
        if self.done.get(key) == (fp, origin, tuple(pose[e] for e in effectors)):
            return
        sub, idx = sub_skeleton(self.sk, r, top)
        at = {j: k for k, j in enumerate(idx)}
        start = [rot.rotate_inv(fp, _sub(pose[j], origin)) for j in idx]
        goals, hinted = {}, {}
        for e in effectors:
            g = self.goals[e]
            turn = None if g.orientation is None else rot.mul(rot.conj(fp), g.orientation)
            goals[at[e]] = Goal(rot.rotate_inv(fp, _sub(g.position, origin)), turn, g.weight)
            limb = self.limb(e)
            if g.orientation is None and limb is not None and limb[2] != e:
                # a foot keeps its orientation (flat on the floor) where the limits let it
                hinted[at[e]] = goals[at[e]]._replace(orientation=rot.mul(rot.conj(fp), self.reference[e]))
        weights = None if self.weights is None else {at[e]: self.weights.get(e, 1.0) for e in effectors}
        local_pose, local_frames = (None, None)
        if hinted:
            local_pose, local_frames = self.run_sub(sub, {**goals, **hinted}, weights, start, HINT_ITERATIONS)
            if max(rot.dist(local_pose[k], g.position) for k, g in goals.items()) > self.tol:
                start, local_pose = local_pose, None  # (the limits forbid it: the feet give way)
        if local_pose is None:
            local_pose, local_frames = self.run_sub(sub, goals, weights, start)
        goals = {**goals, **hinted}
        for e in effectors:
            bend = self.bend(e, fp, origin, pose, frames)
            if bend is not None:
                local_pose, local_frames = self.swivel(
                    sub, goals, weights, at, e, rot.rotate_inv(fp, bend), local_pose, local_frames
                )
        if hinted:  # (a hint aims a foot's bone; its frame keeps the swing rule: no twist from it)
            sr = rig(sub)
            local_frames = list(local_frames)
            for k in hinted:
                local_frames[k] = rot.mul(local_frames[sr.parents[k]], sr.rest_local[k])
        for k, j in enumerate(idx):
            pose[j] = _add(origin, rot.rotate(fp, local_pose[k]))
            frames[j] = rot.mul(fp, local_frames[k])
        self.done[key] = (fp, origin, tuple(pose[e] for e in effectors))

    def run_sub(
        self,
        sub: Skeleton,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        start: list[rot.Vec],
        max_it: int | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The plain solve of a subtree's skeleton from ``start`` (its bone lengths kept)."""
        sr = rig(sub)
        xs, ys, zs = (list(v) for v in zip(*start))
        pose, frames, iterations = self.solve(
            sub,
            sr,
            goals,
            weights,
            {},
            None,
            sr.bone_pose(xs, ys, zs),
            self.tol,
            min(max_it or self.max_it, self.max_it),
        )
        self.iterations = max(self.iterations, iterations)  # (each chain's solve is bounded alike)
        return pose, frames

    def bend(
        self, e: int, fp: rot.Quat, origin: rot.Vec, pose: list[rot.Vec], frames: list[rot.Quat]
    ) -> rot.Vec | None:
        """The world direction effector ``e``'s hinge bends toward: to its pole, or its swivel's."""
        if e in self.poles:
            return None if self.hinge_of(e) is None else _sub(self.poles[e], pose[self.r.parents[self.hinge_of(e)]])
        if e not in self.swivels:
            return None
        j, swivel = self.swivels[e]
        h = self.hinge_of(e)
        if h is None:
            return None
        carry = rot.mul(frames[j], rot.conj(self.r.rest_frames[j]))  # the frame joint's turn from rest
        v = rot.rotate_inv(carry, _sub(self.goals[e].position, pose[self.r.parents[h]]))
        fade = min(1.0, math.sqrt(rot.dot(v, v)) / (NEAR_ROOT * self.reach_of(e)))
        return rot.rotate(carry, swivel.bend(rot.unit(v) or (0.0, 0.0, 0.0), fade))

    def reach_of(self, e: int) -> float:
        """The length of effector ``e``'s limb, from its hinge's parent to ``e``."""
        r, h = self.r, self.hinge_of(e)
        j, total = e, 0.0
        while j != h and j >= 0:
            total += r.lengths[j]
            j = r.parents[j]
        return total + r.lengths[h] if h is not None else total

    def limb(self, e: int) -> tuple[int, list[int], int] | None:
        """Effector ``e``'s limb: (its hinge's parent, the joints that turn: the hinge and each joint
        below it whose rest bone continues the hinge's child bone within ``LIMB_BEND``, the limb's
        end). An arm turns its elbow and wrist about the shoulder-hand line; a leg, whose foot
        leaves the shin at a right angle, its knee alone about the hip-ankle line."""
        if e not in self.limbs:
            self.limbs[e] = None
            h = self.hinge_of(e)
            if h is not None:
                r = self.r
                path = [e]
                while path[-1] != h:
                    path.append(r.parents[path[-1]])
                path.reverse()  # h ... e
                turning, end = [h], path[1]
                along = r.rest_bone[path[1]]
                for j, nxt in itertools.pairwise(path[1:]):
                    bone = r.rest_bone[nxt]
                    if along is None or bone is None or rot.dot(along, bone) < LIMB_COS:
                        break
                    turning.append(j)
                    end = nxt
                self.limbs[e] = (r.parents[h], turning, end)
        return self.limbs[e]

    def hinge_of(self, e: int) -> int | None:
        """The joint effector ``e``'s swivel or pole bends (``fabrik3d.model.posing.hinge_above``)."""
        if e not in self.hinges:
            self.hinges[e] = hinge_above(self.sk, e)
        return self.hinges[e]

    def swivel(
        self,
        sub: Skeleton,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        at: dict[int, int],
        e: int,
        bend: rot.Vec,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Turn ``e``'s limb (``limb``) about the line from its hinge's parent to the limb's end
        toward ``bend`` (local coordinates): a move that keeps the joint angles and leaves the
        limb's end and everything else where it is; kept if the limits let every target stay
        reached and the solve from it ends nearer the bend (shares of the turn are tried)."""
        got = self.limb(e)
        if got is None or got[0] not in at or got[2] not in at:
            return pose, frames
        a, end = at[got[0]], at[got[2]]
        limb = [at[j] for j in got[1]]
        m = limb[0]
        axis = rot.unit(_sub(pose[end], pose[a]))
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
        before = max(rot.dist(pose[k], g.position) for k, g in goals.items())
        turned_before = self.orientation_misses(goals, frames)
        best = (abs(angle), pose, frames)
        for share in SWIVEL_SHARES:
            turned = list(pose)
            spin = rot.axis_angle(axis, share * angle)
            for k in limb:
                turned[k] = _add(pose[a], rot.rotate(spin, _sub(pose[k], pose[a])))
            solved, solved_frames = self.run_sub(sub, goals, weights, turned, SWIVEL_ITERATIONS)
            if max(rot.dist(solved[k], g.position) for k, g in goals.items()) > max(self.tol, before):
                continue
            if any(
                m > max(b, ORIENTATION_SLACK)
                for m, b in zip(self.orientation_misses(goals, solved_frames), turned_before)
            ):
                continue  # (an orientation target the swivel would cost)
            # (the limits may send the re-solve elsewhere: kept only if it ends nearer the bend)
            line = rot.unit(_sub(solved[end], solved[a]))
            off_now = None if line is None else _across(_sub(solved[m], solved[a]), line)
            want_now = None if line is None else _across(bend, line)
            if off_now is None or want_now is None:
                continue
            miss = float(np.arccos(max(-1.0, min(1.0, rot.dot(off_now, want_now)))))
            if miss < best[0]:
                best = (miss, solved, solved_frames)
            if miss <= SWIVEL_CLOSE:
                break
        return best[1], best[2]

    @staticmethod
    def orientation_misses(goals: dict[int, Goal], frames: list[rot.Quat]) -> list[float]:
        """Per goal with an orientation, the angle (radians) between it and the effector's frame."""
        return [rot.angle_between(frames[k], g.orientation) for k, g in goals.items() if g.orientation is not None]

    # -- measures ----------------------------------------------------------------------------
    def error(self, pose: list[rot.Vec]) -> float:
        """The largest distance of a targeted effector from its target."""
        return max((rot.dist(pose[e], g.position) for e, g in self.goals.items()), default=0.0)

    def reached(self, pose: list[rot.Vec]) -> bool:
        return self.error(pose) <= self.tol


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
