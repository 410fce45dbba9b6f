"""Pole targets of the constrained solver (``fabrik3d.solver.constrained.poles``) on a batch of problems.

Values are batch tuples as in ``fabrik3d.batch.constrained.passes``: a position is three ``(m,)``
arrays, a frame four, one element per live problem; rig constants stay float tuples.
Every method mirrors its ``PoleTurns`` namesake expression for expression (``sum`` of
three products is ``0.0 + a0*b0 + a1*b1 + a2*b2``, the scalar's start included, so even
the sign of a zero agrees), with each branch a per-problem mask (``fabrik3d.batch.math.pick``):
the results equal the scalar ones bit for bit. Problems a turn does not touch keep
their arrays' values. The scalar solver's sets ``pole_turned``, ``pole_blocked``,
``swung`` and ``swing_blocked`` become the per-problem masks of ``PoleMarks``; the
methods take and return them instead of changing the host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch import math as bm
from fabrik3d.batch.constrained.passes import BVec
from fabrik3d.batch.constrained.subsets import put_all, take_all
from fabrik3d.solver.constrained.poles import FINAL_SHARES, PoleTurns

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from fabrik3d.solver.constrained.plan import LimitedPlan
    from fabrik3d.solver.rig import Rig


class PoleMarks:
    """Per problem, the scalar solve's pole sets as ``(m, n)`` bool masks (``n`` joints).

    ``turned[b, i]`` / ``blocked[b, i]``: joint ``i`` of problem ``b`` was turned toward its
    pole in the last turn / is left alone for the rest of the solve (``pole_turned`` /
    ``pole_blocked``); ``swung[b, e]`` / ``swing_blocked[b, e]``: the chain of effector ``e``
    was swung as a whole in the last turn / is no longer swung (``swung`` / ``swing_blocked``).
    """

    __slots__ = ("blocked", "swing_blocked", "swung", "turned")

    def __init__(self, turned: np.ndarray, blocked: np.ndarray, swung: np.ndarray, swing_blocked: np.ndarray) -> None:
        self.turned, self.blocked, self.swung, self.swing_blocked = turned, blocked, swung, swing_blocked

    @classmethod
    def empty(cls, m: int, n: int) -> PoleMarks:
        """No marks: ``m`` problems, ``n`` joints (the scalar solve's empty sets)."""
        return cls(*(np.zeros((m, n), dtype=bool) for _ in range(4)))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(turned, blocked, swung, swing_blocked)``."""
        return self.turned, self.blocked, self.swung, self.swing_blocked

    def copy(self) -> PoleMarks:
        """Fresh arrays with the same marks."""
        return PoleMarks(*(a.copy() for a in self.arrays()))

    def take(self, idx: np.ndarray) -> PoleMarks:
        """The problems ``idx`` (an index array or a mask; new arrays)."""
        return PoleMarks(*(a[idx] for a in self.arrays()))

    def put(self, idx: np.ndarray, other: PoleMarks) -> None:
        """Write ``other`` (the problems ``idx``, as from ``take``) back, in place."""
        for a, b in zip(self.arrays(), other.arrays()):
            a[idx] = b


def _dot(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> Any:
    """``sum(a[m] * b[m] for m in range(3))`` as the scalar code adds it (from 0)."""
    return 0.0 + a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _problems(pose: list[Any]) -> int:
    """How many problems a pose holds (its first joint present)."""
    return len(next(p for p in pose if p is not None)[0])


def _distance_to_line(p: BVec, origin: BVec, direction: BVec) -> np.ndarray:
    """``poles._distance_to_line``: per problem, how far ``p`` is from the line through
    ``origin`` along the unit ``direction``."""
    v = rot.sub(p, origin)
    k = _dot(v, direction)
    dx, dy, dz = v[0] - k * direction[0], v[1] - k * direction[1], v[2] - k * direction[2]
    return np.sqrt(dx * dx + dy * dy + dz * dz)


class BatchPoleTurns:
    """Mixin of ``BatchLimited``: ``PoleTurns`` on ``m`` problems.

    ``poles`` maps each poled effector to its ``(m,)``-array pole points (swapped to subsets
    like ``goal_positions``); the host provides ``r``, ``plan``, ``goal_positions``, ``stage2``, ``largest_error`` and
    ``narrowed`` (the targets of some problems only, for a block).
    """

    r: Rig
    plan: LimitedPlan
    goal_positions: dict[int, BVec]
    goal_orientations: dict[int, tuple[Any, float]]
    poles: dict[int, BVec]

    pole_chain = PoleTurns.pole_chain

    if TYPE_CHECKING:

        def stage2(
            self, q: list[Any], old: list[Any], start: list[Any], active: list[bool], up: list[int], kids: list[Any]
        ) -> tuple[list[Any], list[Any]]: ...

        def largest_error(self, pose: list[Any], frames: list[Any]) -> np.ndarray: ...

        def narrowed(self, idx: np.ndarray) -> AbstractContextManager[None]: ...

    @bm.quiet
    def apply_poles(
        self, pose: list[Any], marks: PoleMarks, final: bool = False, swing: float = 0.0, joints: bool = True
    ) -> tuple[list[Any], PoleMarks]:
        """``PoleTurns.apply_poles`` per problem: the turned pose (a new list) and the new marks.

        ``marks`` (``m`` problems) are the last turn's, left unchanged; as in the scalar
        solve, a ``final`` turn starts from no marks.
        """
        pose = list(pose)
        m, n = marks.turned.shape
        none = np.zeros((m, n), dtype=bool)
        if final:  # (the scalar solve's fresh sets)
            turned_before, swung_before, new = none, none, PoleMarks.empty(m, n)
        else:
            turned_before, swung_before = marks.turned, marks.swung
            new = PoleMarks(none.copy(), marks.blocked.copy(), none.copy(), marks.swing_blocked.copy())
        for e, pole in self.poles.items():
            chain = self.pole_chain(e)  # chain start (sub-base or root) ... effector
            g = self.goal_positions.get(e)
            end = g if g is not None else pose[e]
            line, ok = bm.unit(rot.sub(end, pose[chain[0]]))
            live = ok & ~(_distance_to_line(pole, pose[chain[0]], line) <= 1e-9)
            if not live.any():
                continue
            if swing:
                pose, new = self.swing_chain_to_pole(pose, chain, pole, swung_before, new, swing, live)
            for k in range(1, len(chain) - 1 if joints else 1):
                a, i, b = chain[k - 1], chain[k], chain[k + 1]
                axis, axis_ok = bm.unit(rot.sub(pose[b], pose[a]))
                v = rot.sub(pose[i], pose[a])
                w = rot.sub(pole, pose[a])
                kv = _dot(v, axis)
                kw = _dot(w, axis)
                vp = rot.add(v, axis, -kv)
                wp, wp_ok = bm.unit(rot.add(w, axis, -kw))
                radius = np.sqrt(_dot(vp, vp))
                # (no side to turn to, or already on the pole's side: left alone)
                turn = live & axis_ok & ~(~wp_ok | (radius < 1e-12) | (_dot(vp, wp) > 0.0))
                new.blocked[:, i] |= turn & turned_before[:, i]
                turn &= ~new.blocked[:, i]
                if turn.any():
                    pose[i] = bm.pick(turn, rot.add(rot.add(pose[a], axis, kv), wp, radius), pose[i])
                    new.turned[:, i] |= turn
        return pose, new

    @bm.quiet
    def swing_chain_to_pole(
        self,
        pose: list[Any],
        chain: list[int],
        pole: BVec,
        before: np.ndarray,
        marks: PoleMarks,
        share: float = 1.0,
        where: np.ndarray | None = None,
    ) -> tuple[list[Any], PoleMarks]:
        """``PoleTurns.swing_chain_to_pole`` per problem, on the problems ``where`` ((m,) mask;
        all if None): the swung pose (a new list) and the new marks (``marks``, the current
        turn's, left unchanged). ``before``: ``(m, n)``, the last turn's ``swung`` marks."""
        inner = chain[1:-1]
        e = chain[-1]
        pose = list(pose)
        marks = marks.copy()
        if not inner:
            return pose, marks
        a = pose[chain[0]]
        axis, axis_ok = bm.unit(rot.sub(pose[e], a))
        go = ~marks.swing_blocked[:, e] & axis_ok
        if where is not None:
            go &= where
        if not go.any():
            return pose, marks
        total = [0.0, 0.0, 0.0]
        for i in inner:
            total = [total[m] + pose[i][m] for m in range(3)]
        mean = tuple(total[m] / len(inner) - a[m] for m in range(3))
        k = _dot(mean, axis)
        off, off_ok = bm.unit(rot.add(mean, axis, -k))
        w = rot.sub(pole, a)
        kw = _dot(w, axis)
        want, want_ok = bm.unit(rot.add(w, axis, -kw))
        go &= ~(~off_ok | ~want_ok | (_dot(off, want) > 0.0))  # (no side, or already on the pole's side)
        marks.swing_blocked[:, e] |= go & before[:, e]  # swung last time, back on the far side: limits win
        go &= ~before[:, e]
        if not go.any():
            return pose, marks
        marks.swung[:, e] |= go
        across = rot.cross(off, want)
        angle = bm.atan2(_dot(across, axis), _dot(off, want))
        turn = bm.axis_angle(axis, share * angle)
        for i in inner:
            pose[i] = bm.pick(go, rot.add(a, rot.rotate(turn, rot.sub(pose[i], a))), pose[i])
            marks.turned[:, i] |= go
        return pose, marks

    def final_poles(
        self, pose: list[Any], frames: list[Any], start: list[Any], tol: float, whole: bool = True
    ) -> tuple[list[Any], list[Any]]:
        """``PoleTurns.final_poles`` per problem: new lists of the pose and frames.

        Each variant runs only on the problems still searching (fewer inner joints on their
        pole's side than there are), its stage 2 only where it turned a joint and gained a side.
        """
        plan = self.plan
        chains = [self.pole_chain(e) for e in self.poles]
        m = _problems(pose)
        best_pose, best_frames = list(pose), list(frames)
        best_side = self.pole_side_count(pose)
        inner = sum(len(chain) - 2 for chain in chains)
        before = self.largest_error(pose, frames)
        limit = np.where(before > tol, before, tol)  # max(tol, before)
        variants = [(0.0, True)]
        if whole:
            variants += [(1.0, True), *((share, False) for share in (1.0, *FINAL_SHARES))]
        for share, joints in variants:
            idx = np.flatnonzero(~(best_side >= inner))
            if not len(idx):
                break
            with self.narrowed(idx):
                turned, marks = self.apply_poles(
                    take_all(pose, idx), PoleMarks.empty(len(idx), len(pose)), True, share, joints
                )
                gained = marks.turned.any(axis=1) & ~(self.pole_side_count(turned) <= best_side[idx])
            ci = np.flatnonzero(gained)
            if not len(ci):
                continue
            at = idx[ci]
            with self.narrowed(at):
                q, old, here = take_all(turned, ci), take_all(frames, at), take_all(start, at)
                new_pose, new_frames = self.stage2(q, old, here, plan.active, plan.up, plan.kids)
                side = self.pole_side_count(new_pose)
                better = (side > best_side[at]) & (self.largest_error(new_pose, new_frames) <= limit[at])
            if better.any():
                kept, into = np.flatnonzero(better), at[better]
                # (the joints the pose holds: stage 2 also places a rigid joint's untargeted children,
                # which a solve's pose leaves out, ``None``, and ``place_untargeted`` places afresh)
                moved = [None if b is None else v for v, b in zip(new_pose, best_pose)]
                put_all(best_pose, into, take_all(moved, kept), m)
                put_all(best_frames, into, take_all(new_frames, kept), m)
                best_side[into] = side[better]
        return best_pose, best_frames

    @bm.quiet
    def pole_side_count(self, pose: list[Any]) -> np.ndarray:
        """``PoleTurns.pole_side_count`` per problem: ``(m,)`` ints."""
        count: Any = 0
        for e, pole in self.poles.items():
            chain = self.pole_chain(e)
            a = pose[chain[0]]
            axis, ok = bm.unit(rot.sub(pose[e], a))
            w = rot.sub(pole, a)
            want = rot.add(w, axis, -_dot(w, axis))
            for i in chain[1:-1]:
                v = rot.sub(pose[i], a)
                off = rot.add(v, axis, -_dot(v, axis))
                count = count + (ok & (_dot(off, want) > 0.0))
        return np.broadcast_to(np.asarray(count, dtype=np.int64), (_problems(pose),)).copy()
