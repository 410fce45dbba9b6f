"""The swivel of a limb: its hinge (elbow, knee) turned about the line from the limb's root to its
end toward a direction (a pole's, or the posing's ``Swivel``), which moves no target.

``Swivelling`` is a part of ``fabrik3d.solver.natural.NaturalSolve``. Positions are ``(x, y, z)``
and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``); angles in radians.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model.posing import Swivel, hinge_above
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.rig import Rig

# A swivel's ``toward`` turns fade out as the effector comes nearer its limb's root than this share
# of the limb's length (there the line to it turns fast: the bend would too).
NEAR_ROOT = 0.5
# A swivel turn smaller than this (radians) is not made.
MIN_SWIVEL = 0.005
# The shares of the swivel turn tried, in this order, until one ends within SWIVEL_CLOSE (radians)
# of the bend direction or no smaller one can end nearer (the limits may forbid all of it).
SWIVEL_SHARES = (1.0, 0.75, 0.5, 0.25)
SWIVEL_CLOSE = 0.1
# The swivel turn is whole once the hinge sits this share of the limb's length off the line from
# the limb's root to its end (less: in proportion).
SWIVEL_BENT = 0.1
# Iterations the solve from a swivelled limb gets (it moved no target: if the limits let it stay,
# a few settle it).
SWIVEL_ITERATIONS = 6
# A swivel turn moves the hinge at most this many times the distance of the farthest target from its
# effector at the start of the solve: in a drag, the hinge comes round to its direction gradually.
SWIVEL_RATE = 2.0
# A swivel may leave an orientation target this far off (radians), or as far as it was.
ORIENTATION_SLACK = 1e-3
# A bone below a hinge's child that leaves it by less than this angle at rest (cosine of 45 deg)
# belongs to the limb that swivels (a hand does, a foot does not).
LIMB_COS = 0.7071


class Swivelling:
    """The swivel steps of a natural solve (its ``r``, ``sk``, ``goals``, ``poles``, ``swivels``,
    ``tol`` and ``run_sub``)."""

    r: Rig
    sk: Skeleton
    goals: dict[int, Goal]
    poles: dict[int, rot.Vec]
    swivels: dict[int, tuple[int, Swivel]]
    tol: float
    step: float
    hinges: dict[int, int | None]
    limbs: dict[int, tuple[int, list[int], int] | None]

    def run_sub(
        self,
        sub: Skeleton,
        goals: dict[int, Goal],
        weights: Any,
        start: list[rot.Vec],
        max_it: int | None = None,
        start_frames: list[rot.Quat] | None = None,
        jump: float | None = None,
        twist_from: list[rot.Quat] | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        raise NotImplementedError

    def twisted(self, frames: list[rot.Quat]) -> list[rot.Quat] | None:
        raise NotImplementedError

    def bend(
        self, e: int, fp: rot.Quat, origin: rot.Vec, pose: list[rot.Vec], frames: list[rot.Quat]
    ) -> rot.Vec | None:
        """The world direction effector ``e``'s hinge bends toward: to its pole, or its swivel's."""
        h = self.hinge_of(e)
        if h is None:
            return None
        if e in self.poles:
            return _sub(self.poles[e], pose[self.r.parents[h]])
        if e not in self.swivels:
            return None
        j, swivel = self.swivels[e]
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
        below it whose rest bone continues the hinge's child bone within ``LIMB_COS``, the limb's
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
        gradual: bool = False,
        prior: float | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Turn ``e``'s limb (``limb``) about the line from its hinge's parent to the limb's end
        toward ``bend`` (local coordinates): a move that keeps the joint angles and leaves the
        limb's end and everything else where it is; kept if the limits let every target stay
        reached and the solve from it ends nearer the bend (shares of the turn are tried, largest
        first: after one whose turn stood at least as far as the next would turn, no more; after one
        the limits gave back, only those whose half turn is within what stood of it). ``gradual``
        (an arm, not poled): the turn moves the hinge at most ``SWIVEL_RATE`` times ``step``, the
        farthest target's distance from its effector at the start of the solve (scene units), beyond
        what brings the limb back to ``prior``, if given (its angle from the bend at the start of the
        solve, ``miss``): a solve that drifted the hinge away from its bend does not keep the drift (a
        held wrist, whose arm's solve lets the elbow ride up as the hand comes in)."""
        got = self.limb(e)
        if got is None or got[0] not in at or got[2] not in at:
            return pose, frames
        a, end = at[got[0]], at[got[2]]
        limb = [at[j] for j in got[1]]
        m = limb[0]
        turned = _limb_turn(pose[a], pose[m], pose[end], bend)
        if turned is None:
            return pose, frames
        angle, axis, v = turned
        # (a limb near straight has no bend to turn: its hinge's side flips with any small move, so
        # the turn fades in as the hinge leaves the line)
        aside = math.sqrt(max(0.0, rot.dot(v, v) - rot.dot(v, axis) ** 2))
        turn = angle * min(1.0, aside / (SWIVEL_BENT * self.reach_of(e)))
        if gradual and abs(turn) * aside > SWIVEL_RATE * self.step:
            # (a drag's hinge turns gradually: by the rate, and back by as much as it drifted since the start)
            cap = SWIVEL_RATE * self.step / aside
            drift = 0.0 if prior is None else abs(angle) - max(0.0, prior - cap)
            turn = math.copysign(min(abs(turn), max(cap, drift)), turn)
        if abs(turn) < MIN_SWIVEL:
            return pose, frames
        before = max(rot.dist(pose[k], g.position) for k, g in goals.items())
        # (the orientation targets given, not a foot's hint, which gives way)
        given = {at[j] for j in self.goals if j in at and self.goals[j].orientation is not None}
        oriented = {k: g for k, g in goals.items() if k in given}
        turned_before = self.orientation_misses(oriented, frames)
        best = (abs(angle), pose, frames)
        most = abs(turn)  # (how much turn the limits let stand: less once a share was given back)
        for k_share, share in enumerate(SWIVEL_SHARES):
            if 0.5 * share * abs(turn) > most:
                continue  # (a larger share was given back short of half of this one: so would it be)
            turned = list(pose)
            spin = rot.axis_angle(axis, share * turn)
            for k in limb:
                turned[k] = _add(pose[a], rot.rotate(spin, _sub(pose[k], pose[a])))
            solved, solved_frames = self.run_sub(
                sub, goals, weights, turned, SWIVEL_ITERATIONS, twist_from=self.twisted(frames)
            )
            if max(rot.dist(solved[k], g.position) for k, g in goals.items()) > max(self.tol, before):
                continue
            if any(
                m > max(b, ORIENTATION_SLACK)
                for m, b in zip(self.orientation_misses(oriented, solved_frames), turned_before)
            ):
                continue  # (an orientation target the swivel would cost)
            # (the limits may send the re-solve elsewhere: kept only if it ends nearer the bend)
            line = rot.unit(_sub(solved[end], solved[a]))
            off_now = None if line is None else _across(_sub(solved[m], solved[a]), line)
            want_now = None if line is None else _across(bend, line)
            if off_now is None or want_now is None:
                continue
            miss = float(np.arccos(max(-1.0, min(1.0, rot.dot(off_now, want_now)))))
            # (kept only if the limits let at least half the turn stand: a re-solve that gave the
            # turn back moved other joints instead, which is no swivel)
            stood = abs(angle) - miss
            if stood < 0.5 * share * abs(turn):
                most = min(most, max(0.0, stood))
            elif miss < best[0]:
                best = (miss, solved, solved_frames)
                smaller = SWIVEL_SHARES[k_share + 1 :]
                if not smaller or stood >= smaller[0] * abs(turn):
                    break  # (no smaller share turns as far as this one stood: none ends nearer)
            if miss <= SWIVEL_CLOSE:
                break
        return best[1], best[2]

    def miss(self, e: int, pose: list[rot.Vec], bend: rot.Vec) -> float | None:
        """How far (radians) effector ``e``'s limb in ``pose`` is turned from ``bend`` about the line from
        its hinge's parent to its end (both in one frame); ``None`` for a straight limb or no limb."""
        got = self.limb(e)
        turned = None if got is None else _limb_turn(pose[got[0]], pose[got[1][0]], pose[got[2]], bend)
        return None if turned is None else abs(turned[0])

    def straightening(self, pose: list[rot.Vec]) -> tuple[float, set[int]]:
        """How far (scene units) reaching the targets from ``pose`` forces a limb's hinge toward the line
        from its parent to the limb's end (``limb``), the limb's bend below the hinge kept, as the end
        follows its effector's step, and the hinges so forced: a bent arm pulled to its full length
        swings its elbow in several times as far as the hand's step, whatever else joins. Only a limb
        whose end moves away from its root, and whose target moved (by more than the tolerance: a
        pinned hand's limb is not pulled): one folding up (a hand brought past its own shoulder) draws
        its hinge in too, but there the body's other joints can spare the swing (the shoulder moves
        instead). The joints below the hinge move less than it (they lie toward the end, which follows
        the step), so only the hinges are returned."""
        most, hinges = 0.0, set()
        for e, g in self.goals.items():
            got = self.limb(e)
            if got is None or rot.dist(pose[e], g.position) <= self.tol:
                continue
            a_at, m_at, end_at = pose[got[0]], pose[got[1][0]], pose[got[2]]
            a, b = rot.dist(m_at, a_at), rot.dist(end_at, m_at)
            moved_end = _add(end_at, _sub(g.position, pose[e]))
            d_before, d_after = rot.dist(end_at, a_at), rot.dist(moved_end, a_at)
            drawn = _hinge_offset(a, b, d_before) - _hinge_offset(a, b, d_after) if d_after > d_before else 0.0
            if drawn > 0.0:
                most = max(most, drawn)
                hinges.add(got[1][0])
        return most, hinges

    @staticmethod
    def orientation_misses(goals: dict[int, Goal], frames: list[rot.Quat]) -> list[float]:
        """Per goal with an orientation, the angle (radians) between it and the effector's frame."""
        return [rot.angle_between(frames[k], g.orientation) for k, g in goals.items() if g.orientation is not None]


def _limb_turn(a: rot.Vec, m: rot.Vec, end: rot.Vec, bend: rot.Vec) -> tuple[float, rot.Vec, rot.Vec] | None:
    """``(angle, axis, v)``: the signed angle (radians) about the unit ``axis`` from ``a`` (a hinge's parent)
    to ``end`` (its limb's end) that turns the hinge ``m``'s side (``v``: ``m - a``) to ``bend``; ``None``
    for a straight limb or a bend along the axis."""
    axis = rot.unit(_sub(end, a))
    if axis is None:
        return None
    v = _sub(m, a)
    off, want = _across(v, axis), _across(bend, axis)
    if off is None or want is None:
        return None
    return float(np.arctan2(rot.dot(rot.cross(off, want), axis), rot.dot(off, want))), axis, v


def _across(v: rot.Vec, axis: rot.Vec) -> rot.Vec | None:
    """The unit part of ``v`` across the unit ``axis`` (``None`` when ``v`` runs along it)."""
    return rot.unit(_add(v, axis, -rot.dot(v, axis)))


def _hinge_offset(a: float, b: float, d: float) -> float:
    """The distance of the hinge of a two-bone limb (bones ``a`` and ``b``) from the line between its
    ends, ``d`` apart (clamped to what the bones span)."""
    d = min(max(d, abs(a - b), 1e-12), a + b)
    x = (a * a - b * b + d * d) / (2.0 * d)
    return math.sqrt(max(0.0, a * a - x * x))
