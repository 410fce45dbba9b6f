"""Pole targets for the constrained solver (``fabrik3d.limited``).

A pole acts on the joints strictly between its effector and the nearest
sub-base or root: before each stage 1 each of them, on the far side of the
line through its neighbours, turns about that line into the half-plane that
holds the pole. A pole within 1e-9 of the root–target line is ignored; limits
win over poles.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub

if TYPE_CHECKING:
    from fabrik3d.frames import Rig
    from fabrik3d.targets import Goal


class PoleTurns:
    """Mixin of ``LimitedSolve``: turning chains toward their poles."""

    r: Rig
    goals: dict[int, Goal]
    poles: dict[int, rot.Vec]
    pole_turned: set[int]
    pole_blocked: set[int]
    active: list[bool]
    up: list[int]
    kids: list[list[tuple[int, float]]]

    def apply_poles(self, pose: list[rot.Vec]) -> list[rot.Vec]:
        """Turn the inner joints of each poled chain about their neighbours' line toward the pole.

        Each joint on the far side of its neighbours' line, from the chain's start
        outward, turns into the half-plane through that line that holds the pole.
        Limits win over poles: a joint turned in one iteration and found on the far
        side again in the next (its limits sent it back) is left alone for the rest
        of the solve.
        """
        r = self.r
        pose = list(pose)
        turned_before, self.pole_turned = self.pole_turned, set()
        for e, pole in self.poles.items():
            chain = [e]
            while r.parents[chain[-1]] >= 0 and len(r.children[r.parents[chain[-1]]]) == 1:
                chain.append(r.parents[chain[-1]])
            if r.parents[chain[-1]] >= 0:
                chain.append(r.parents[chain[-1]])
            chain.reverse()  # chain start (sub-base or root) ... effector
            g = self.goals.get(e)
            end = g.position if g is not None else pose[e]
            line = rot.unit(_sub(end, pose[chain[0]]))
            if line is None or _distance_to_line(pole, pose[chain[0]], line) <= 1e-9:
                continue
            for k in range(1, len(chain) - 1):
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

    def final_poles(
        self, pose: list[rot.Vec], frames: list[rot.Quat], start: list[rot.Vec], tol: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The poles' last turn after the last iteration (it moves no effector), projected onto
        the limits; kept only if no target falls out of reach by it (limits win)."""
        turned = self.apply_poles(pose)
        if not self.pole_turned:
            return pose, frames
        new_pose, new_frames = self.stage2(turned, frames, start, frames, self.active, self.up, self.kids)
        before = self.largest_error(pose, frames)
        after = self.largest_error(new_pose, new_frames)
        if after <= max(tol, before):
            return new_pose, new_frames
        return pose, frames


def _distance_to_line(p: rot.Vec, origin: rot.Vec, direction: rot.Vec) -> float:
    v = _sub(p, origin)
    k = sum(v[i] * direction[i] for i in range(3))
    return math.dist(v, tuple(k * direction[i] for i in range(3)))
