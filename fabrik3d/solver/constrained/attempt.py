"""The constrained solve's attempt (``fabrik3d.solver.constrained.solve``): its iterations from one
pose, their stall and yield rules, and the residuals that judge them.

One iteration: the poles turn their chains (``fabrik3d.solver.constrained.poles``), stage 1 and
stage 2 with limits (``fabrik3d.solver.constrained.passes``); where the FABRIK passes leave more
than ``FABRIK_GAIN`` of the error, up to ``DAMPED_STEPS`` damped least-squares steps
(``fabrik3d.solver.constrained.damped``). Progress is judged by the root of the sum of squared
residuals (``residuals``: distances, and an orientation target's misdirection and twist beyond
its limit while it is in force); an attempt ends when every target is reached, at its iteration
cap, or after ``patience`` iterations in a row that each fail to better the best (``stalled``).
Positions and frames are tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.constrained.damped import ORIENTATION_IN_FORCE

if TYPE_CHECKING:
    from fabrik3d.model.targets import Goal
    from fabrik3d.solver.effort import Effort
    from fabrik3d.solver.rig import Rig

# An attempt settles after STALL_RUN iterations in a row that each fail to better its best error
# by LIMITED_STALL * tolerance (a restart's attempt sooner: ``solve.RESTART_RUN``).
STALL_RUN = 10
# With limits, progress is slower but also ends sooner in a compromise: a larger epsilon.
LIMITED_STALL = 1e-2
# An iteration whose FABRIK passes leave more than this share of the error adds damped steps.
FABRIK_GAIN = 0.5
# Damped least-squares steps per iteration (a step that does not lower the error ends them), and
# their damping (metres), adapted as they go.
DAMPED_STEPS = 2
# Orientation targets start to yield after this many stalled iterations in a row, and poles
# stop after this many slow ones in a row (each bettering the error by less than SLOW_GAIN of it).
YIELD_AFTER = 3
SLOW_GAIN = 0.1
START_DAMPING, MIN_DAMPING, MAX_DAMPING = 0.05, 1e-4, 10.0


def stalled(low: float, now: float, gain: float, tol: float) -> bool:
    """The constrained solve's stall rule: an iteration left the root of the sum of squared errors
    at ``now``, bettering the best so far, ``low``, by less than ``LIMITED_STALL * tol`` and by less
    than ``gain`` times it (scene units)."""
    return low - now < max(LIMITED_STALL * tol, gain * low)


def slowed(low: Any, now: Any) -> Any:
    """An iteration bettered the best root of the sum of squared errors ``low`` by less than
    ``SLOW_GAIN`` of it, to ``now`` (floats, or ``(m,)`` arrays: then an ``(m,)`` mask)."""
    return low - now < SLOW_GAIN * low


class Attempts:
    """Mixin of ``LimitedSolve``: the attempt loop and the residuals that judge it."""

    r: Rig
    goals: dict[int, Goal]
    poles: dict[int, rot.Vec]
    poles_yielded: bool
    yield_share: float
    oriented: bool
    turns: bool
    damping: float
    tol: float
    active: list[bool]
    up: list[int]
    kids: list[list[tuple[int, float]]]
    leaf_dir: dict[int, rot.Vec]
    effort: Effort

    if TYPE_CHECKING:

        def apply_poles(self, pose: list[rot.Vec]) -> list[rot.Vec]: ...

        def stage1(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> tuple[list[rot.Vec], list[rot.Quat]]: ...

        def stage2(
            self,
            q: list[rot.Vec],
            qf: list[rot.Quat],
            start: list[rot.Vec],
            old: list[rot.Quat],
            active: list[bool],
            up: list[int],
            kids: list[list[tuple[int, float]]],
        ) -> tuple[list[rot.Vec], list[rot.Quat]]: ...

        def damped_step(
            self, pose: list[rot.Vec], frames: list[rot.Quat], damping: float
        ) -> tuple[list[rot.Vec], list[rot.Quat]]: ...

        def twist_excess(self, e: int, g: Goal, fp: rot.Quat) -> tuple[float | None, rot.Vec]: ...

    def attempt(
        self,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        start: list[rot.Vec],
        tol: float,
        it: int,
        max_it: int,
        patience: int,
        gain: float,
    ) -> tuple[float, list[rot.Vec], list[rot.Quat], int]:
        """Iterate from one pose until reached, out of iterations, or settled.

        Progress is judged by the root of the sum of squared errors ``e`` (so one
        unreachable target does not freeze the others). Settled: ``patience``
        iterations in a row that each fail to better the best ``e`` so far by
        ``LIMITED_STALL * tol`` and by ``gain`` times it (robust to oscillation). Returns
        the largest error (orientation targets in full force, even if they yielded),
        pose and frames of the best iterated pose (the given pose if no iteration ran;
        with orientation targets, the best by ``rank``, the given pose included) and the
        iteration count. A spent ``effort`` ends the loop (``fabrik3d.solver.effort``: a drag frame's
        allowance).
        """
        self.yield_share = 1.0
        err, score = self.largest_error(pose, frames), self.squared_errors(pose, frames)
        best = (score, err, pose, frames)
        # With orientation targets, the pose returned is the best by rank (see ``rank``), the
        # given one included, so that yielding orientations never makes them worse than that.
        top = (self.rank(err, pose), err, pose, frames) if self.oriented else None
        stalls = ran = slow = 0
        weak = False
        while err > tol and it < max_it and stalls < patience and not self.effort.spent:
            it += 1
            if weak:  # FABRIK's passes made it worse last time, damped steps much better: only those
                new_pose, new_frames, new_score = pose, frames, score
            else:
                if self.poles and not self.poles_yielded:
                    pose = self.apply_poles(pose)
                q, qf = self.stage1(pose, frames)
                new_pose, new_frames = self.stage2(q, qf, start, frames, self.active, self.up, self.kids)
                new_score = self.squared_errors(new_pose, new_frames)
            destructive, weak = weak or new_score > score, False
            if self.turns and stalls == 0 and new_score > FABRIK_GAIN**2 * score:
                # FABRIK alone is slow here (limits fight the reaching passes): add damped
                # least-squares steps (not while stalled: then they did not help either).
                for _ in range(DAMPED_STEPS):
                    step_pose, step_frames = self.damped_step(new_pose, new_frames, self.damping)
                    step_score = self.squared_errors(step_pose, step_frames)
                    if step_score < new_score:
                        weak = destructive and step_score < (1.0 - SLOW_GAIN) ** 2 * score
                        new_pose, new_frames, new_score = step_pose, step_frames, step_score
                        self.damping = max(self.damping * 0.5, MIN_DAMPING)
                        if new_score <= tol * tol:  # every target reached: no need for another
                            break
                    else:  # (damped harder next time; this iteration has had its step)
                        self.damping = min(self.damping * 4.0, MAX_DAMPING)
                        break
            pose, frames = new_pose, new_frames
            err, score = self.largest_error(pose, frames), self.squared_errors(pose, frames)
            low, now = math.sqrt(best[0]), math.sqrt(score)
            stalls = stalls + 1 if stalled(low, now, gain, tol) else 0
            slow = slow + 1 if slowed(low, now) else 0
            if slow >= YIELD_AFTER:
                # A pole on a side the limits forbid can hold a reachable target off, or slow the
                # solve to a crawl: targets win, the poles stop turning joints (the final pole
                # turn still runs, if it costs no reach).
                self.poles_yielded = True
            if stalls >= YIELD_AFTER and self.yield_share > ORIENTATION_IN_FORCE:
                # Orientation targets yield to their positions while stuck; once out of force,
                # the positions alone are the goal: start the stall count afresh.
                self.yield_share *= 0.25
                if self.yield_share <= ORIENTATION_IN_FORCE:
                    err, score, stalls = self.largest_error(pose, frames), self.squared_errors(pose, frames), 0
                    best = (score, err, pose, frames)
            if not ran or score < best[0] or err <= tol:
                best, ran = (score, err, pose, frames), 1
            if top is not None:
                full = self.full_error(pose, frames)
                if self.rank(full, pose) < top[0]:
                    top = (self.rank(full, pose), full, pose, frames)
        if top is not None:
            self.yield_share = 1.0
            return top[1], top[2], top[3], it
        return best[1], best[2], best[3], it

    def full_error(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> float:
        """The largest error with orientation targets in full force (even if they yielded)."""
        share, self.yield_share = self.yield_share, 1.0
        err = self.largest_error(pose, frames)
        self.yield_share = share
        return err

    def rank(self, err: float, pose: list[rot.Vec]) -> tuple[bool, float]:
        """Order of poses with orientation targets (lower is better): positions first, then every
        target (``err``: the largest error in full force)."""
        off = self.position_error(pose)
        return (True, off) if off > self.tol else (False, err)

    def residuals(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> list[float]:
        """Per target, its distance; for an orientation target also how far its last bone's
        direction is from the orientation's, and the twist it needs beyond the effector's Twist
        limit (radians), both scaled by the bone's length (distances too), while orientations
        are in force. (Twist within the limit is the effector's own; beyond it, the joints above
        must turn the parent's frame.)"""
        r = self.r
        out = [rot.dist(pose[e], g.position) for e, g in self.goals.items()]
        if self.yield_share > ORIENTATION_IN_FORCE:
            for e, g in self.goals.items():
                if g.orientation is not None:
                    bone = _sub(pose[e], pose[r.parents[e]])
                    wanted = rot.rotate(g.orientation, self.leaf_dir[e])
                    out.append(
                        rot.dist(_add((0.0, 0.0, 0.0), bone, 1.0 / r.lengths[e]), wanted) * r.lengths[e] * g.weight
                    )
                    excess = self.twist_excess(e, g, frames[r.parents[e]])[0]
                    if excess is not None:
                        out.append(abs(excess) * r.lengths[e] * g.weight)
        return out

    def position_error(self, pose: list[rot.Vec]) -> float:
        """The largest distance of a targeted effector from its target."""
        return max((rot.dist(pose[e], g.position) for e, g in self.goals.items()), default=0.0)

    def largest_error(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> float:
        return max(self.residuals(pose, frames), default=0.0)

    def squared_errors(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> float:
        return sum(x * x for x in self.residuals(pose, frames))
