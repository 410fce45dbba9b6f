"""Pole targets for the constrained solver (``fabrik3d.solver.constrained.solve``).

A pole acts on the joints strictly between its effector and the nearest
sub-base or root: before each stage 1 each of them, on the far side of the
line through its neighbours, turns about that line into the half-plane that
holds the pole. A pole within 1e-9 of the root–target line is ignored; limits
win over poles (stage 2 projects every turn onto them), and so do targets
(``fabrik3d.solver.constrained.solve`` stops the poles once the solve slows down, and a warm solve
left short of its targets tries again from its start without them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub

if TYPE_CHECKING:
    from fabrik3d.model.targets import Goal
    from fabrik3d.solver.rig import Rig


# The final whole-chain swing also tries these shares of the turn toward the pole.
FINAL_SHARES = (0.75, 0.5)


class PoleTurns:
    """Mixin of ``LimitedSolve``: turning chains toward their poles."""

    r: Rig
    goals: dict[int, Goal]
    poles: dict[int, rot.Vec]
    pole_turned: set[int]
    pole_blocked: set[int]
    swung: set[int]
    swing_blocked: set[int]
    active: list[bool]
    up: list[int]
    kids: list[list[tuple[int, float]]]

    def apply_poles(
        self, pose: list[rot.Vec], final: bool = False, swing: float = 0.0, joints: bool = True
    ) -> list[rot.Vec]:
        """Turn the inner joints of each poled chain about their neighbours' line toward the pole.

        Each joint on the far side of its neighbours' line, from the chain's start
        outward, turns into the half-plane through that line that holds the pole.
        Limits win over poles: a joint turned in one iteration and found on the far
        side again in the next (its limits sent it back) is left alone for the rest
        of the solve. The ``final`` turn after the
        last iteration is not held back (its result is checked against the limits
        and the targets instead); with ``swing`` > 0, each chain first swings as a
        whole that share of the way toward its pole; ``joints=False`` leaves out the
        joint-by-joint turns.
        """
        pose = list(pose)
        turned_before, self.pole_turned = (set(), set()) if final else (self.pole_turned, set())
        swung_before, self.swung = (set(), set()) if final else (self.swung, set())
        if final:
            self.pole_blocked, self.swing_blocked = set(), set()
        for e, pole in self.poles.items():
            chain = self.pole_chain(e)  # chain start (sub-base or root) ... effector
            g = self.goals.get(e)
            end = g.position if g is not None else pose[e]
            line = rot.unit(_sub(end, pose[chain[0]]))
            if line is None or _distance_to_line(pole, pose[chain[0]], line) <= 1e-9:
                continue
            if swing:
                self.swing_chain_to_pole(pose, chain, pole, swung_before, swing)
            for k in range(1, len(chain) - 1 if joints else 1):
                a, i, b = chain[k - 1], chain[k], chain[k + 1]
                axis = rot.unit(_sub(pose[b], pose[a]))
                if axis is None:
                    continue
                v = _sub(pose[i], pose[a])
                w = _sub(pole, pose[a])
                kv = sum(v[m] * axis[m] for m in range(3))
                kw = sum(w[m] * axis[m] for m in range(3))
                vp = _add(v, axis, -kv)
                wp = rot.unit(_add(w, axis, -kw))
                radius = math.sqrt(sum(x * x for x in vp))
                if wp is None or radius < 1e-12 or sum(vp[m] * wp[m] for m in range(3)) > 0.0:
                    continue  # no side to turn to, or already on the pole's side
                if i in turned_before:
                    self.pole_blocked.add(i)
                if i in self.pole_blocked:
                    continue
                pose[i] = _add(_add(pose[a], axis, kv), wp, radius)
                self.pole_turned.add(i)
        return pose

    def swing_chain_to_pole(
        self, pose: list[rot.Vec], chain: list[int], pole: rot.Vec, before: set[int], share: float = 1.0
    ) -> None:
        """Turn the inner joints of ``chain`` together about the line from its start to its
        effector (which moves neither) so that their mean offset from the line points at the
        pole (or ``share`` of that turn); in place. A chain whose joints were turned in the last
        iteration and swung back by its limits is left alone (limits win)."""
        inner = chain[1:-1]
        if not inner or chain[-1] in self.swing_blocked:
            return
        a = pose[chain[0]]
        axis = rot.unit(_sub(pose[chain[-1]], a))
        if axis is None:
            return
        mean = [sum(pose[i][m] for i in inner) / len(inner) - a[m] for m in range(3)]
        k = sum(mean[m] * axis[m] for m in range(3))
        off = rot.unit(_add(tuple(mean), axis, -k))  # type: ignore[arg-type]
        w = _sub(pole, a)
        kw = sum(w[m] * axis[m] for m in range(3))
        want = rot.unit(_add(w, axis, -kw))
        if off is None or want is None or sum(off[m] * want[m] for m in range(3)) > 0.0:
            return  # no side, or already on the pole's side
        if chain[-1] in before:  # swung last time, and back on the far side: its limits win
            self.swing_blocked.add(chain[-1])
            return
        self.swung.add(chain[-1])
        across = rot.cross(off, want)
        angle = math.atan2(sum(across[m] * axis[m] for m in range(3)), sum(off[m] * want[m] for m in range(3)))
        turn = rot.axis_angle(axis, share * angle)
        for i in inner:
            pose[i] = _add(a, rot.rotate(turn, _sub(pose[i], a)))
            self.pole_turned.add(i)

    def final_poles(
        self, pose: list[rot.Vec], frames: list[rot.Quat], start: list[rot.Vec], tol: float, whole: bool = True
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The poles' last turn after the last iteration (it moves no effector), projected onto
        the limits. Variants, in this order: joint by joint; and with ``whole`` (cold solves: a
        warm one keeps the side its pose comes from, so an interactive pose does not swing
        round), each chain first swung as a whole about the line from its start to its
        effector, then joint by joint; the whole swing alone, all the way and then
        ``FINAL_SHARES`` of the way toward the pole (a part of the turn may be within the
        limits where all of it is not). The variant that puts the most inner joints on their
        pole's side wins, kept only if no target falls out of reach by it (limits and targets
        win); the search ends at the first variant with all of them there."""
        best = (pose, frames)
        best_side = self.pole_side_count(pose)
        inner = sum(len(self.pole_chain(e)) - 2 for e in self.poles)
        before = self.largest_error(pose, frames)
        variants = [(0.0, True)]
        if whole:
            variants += [(1.0, True), *((share, False) for share in (1.0, *FINAL_SHARES))]
        for share, joints in variants:
            if best_side >= inner:
                break
            turned = self.apply_poles(pose, final=True, swing=share, joints=joints)
            if not self.pole_turned or self.pole_side_count(turned) <= best_side:
                continue  # (projecting it onto the limits could only lose joints from the pole's side)
            new_pose, new_frames = self.stage2(turned, frames, start, frames, self.active, self.up, self.kids)
            side = self.pole_side_count(new_pose)
            if side > best_side and self.largest_error(new_pose, new_frames) <= max(tol, before):
                best, best_side = (new_pose, new_frames), side
        return best

    def pole_side_count(self, pose: list[rot.Vec]) -> int:
        """How many inner joints of the poled chains are on their pole's side of the line from
        the chain's start to its effector."""
        count = 0
        for e, pole in self.poles.items():
            chain = self.pole_chain(e)
            a = pose[chain[0]]
            axis = rot.unit(_sub(pose[e], a))
            if axis is None:
                continue
            w = _sub(pole, a)
            want = _add(w, axis, -sum(w[m] * axis[m] for m in range(3)))
            for i in chain[1:-1]:
                v = _sub(pose[i], a)
                off = _add(v, axis, -sum(v[m] * axis[m] for m in range(3)))
                count += sum(off[m] * want[m] for m in range(3)) > 0.0
        return count

    def pole_chain(self, e: int) -> list[int]:
        """The chain of effector ``e`` from the nearest sub-base or the root to ``e``."""
        return pole_chain(self.r.parents, self.r.children, e)


def pole_chain(parents: Sequence[int], children: Sequence[Sequence[int]], e: int) -> list[int]:
    """The joints from effector ``e``'s chain start (its nearest sub-base, or the root) to ``e``,
    in that order: the joints a pole on ``e`` turns, and what the views draw its handle beside."""
    chain = [e]
    while parents[chain[-1]] >= 0 and len(children[parents[chain[-1]]]) == 1:
        chain.append(int(parents[chain[-1]]))
    if parents[chain[-1]] >= 0:
        chain.append(int(parents[chain[-1]]))
    chain.reverse()
    return chain


def _distance_to_line(p: rot.Vec, origin: rot.Vec, direction: rot.Vec) -> float:
    v = _sub(p, origin)
    k = sum(v[i] * direction[i] for i in range(3))
    return rot.dist(v, tuple(k * direction[i] for i in range(3)))  # type: ignore[arg-type]
