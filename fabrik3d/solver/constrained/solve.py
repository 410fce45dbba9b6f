"""FABRIK with joint limits, orientation frames, rigid sub-bases, poles and orientation targets.

The paper's section 4, on the tree of section 3. Every joint carries a world
frame ``F_j`` (``fabrik3d.model.frames``) through both passes. This module holds the
solve's entry (``LimitedSolve.run``: the start, restarts, warm retries, the untargeted
branches); its plan is in ``fabrik3d.solver.constrained.plan``, the attempt loop in
``fabrik3d.solver.constrained.attempt``, the passes in ``fabrik3d.solver.constrained.passes``,
the damped least-squares steps in ``fabrik3d.solver.constrained.damped``, the pole turns in
``fabrik3d.solver.constrained.poles``.

* **Start**: the start pose is projected onto the limits by one stage-2 pass
  toward itself (so even a solve with no iteration returns a valid pose).
* **Poles** (before each stage 1, and once more after the last iteration;
  ``fabrik3d.solver.constrained.poles``): each joint strictly between a poled effector and the
  nearest sub-base or root turns about the line through its neighbours toward
  the pole (stage 2 projects it onto the limits); after ``YIELD_AFTER`` slow
  iterations the poles stop for the rest of the solve (targets win).
* **Stage 1** (effectors inward): a targeted effector goes onto its target (with
  an orientation, its parent's bone direction blends toward the orientation by
  the target's weight). A joint with one active child ``c`` takes the point at
  ``c``'s bone length on the line to its old position, its frame turned by the
  bone's minimal rotation; then ``c``'s limit is applied *inverted*: the joint's
  frame turns by the least rotation that puts ``c``'s bone inside ``c``'s limit,
  which moves the joint. A non-rigid sub-base takes the centroid of its
  children's proposals (as in ``fabrik3d.solver``); a ``Rigid`` joint takes the
  best rigid fit of its rest child offsets to its children's stage-1 positions
  (one proposer: the minimal rotation; two: the minimal rotation of the line
  between them; three or more: weighted Horn fit).
* **Stage 2** (root outward): each joint's frame is computed in its parent's
  fresh frame, aiming its bone at its child's stage-1 position, then limited
  (swing, then twist); its child goes along the frame's +Y at the bone's length.
  A ``Rigid`` joint turns about its position to best fit its children's stage-1
  positions (same rules), is limited, and places all its children rigidly. An
  effector's frame takes the twist toward its orientation target, within its
  ``Twist`` limit.

A hinge bends one way only, and FABRIK, which keeps bends on the side where
they were, can fold it the wrong way, where its limit straightens it: stage 2
then swivels the hinge's parent bone about the line to the grandchild by the
smallest turn that lets the hinge bend (``swivel_for_hinge``).

Where the reaching passes fight the limits, FABRIK's progress slows to a crawl.
An iteration whose FABRIK passes leave more than ``FABRIK_GAIN`` of the error
adds ``DAMPED_STEPS`` damped least-squares steps (``fabrik3d.solver.constrained.damped``) on the joints' turns (the
Jacobian ``u × (P_e − P_j)`` of each effector for each turning axis above it,
each joint's new rotation limited, the pose rebuilt by forward kinematics;
Levenberg-Marquardt style damping); a step is kept only if it lowers the error
(one that does not ends the iteration's steps, and the next is damped harder).
Where the FABRIK passes made the pose worse than it was and the damped steps then
bettered it by at least ``SLOW_GAIN`` of the error, the next iteration makes the
damped steps alone (no poles, no FABRIK passes), until they slow down.

Orientation targets: the effector's frame takes the twist toward its target
within its ``Twist`` limit; the twist asked beyond it joins the residuals and,
once every position is nearly reached, the damped steps (which turn the parent's
frame through the joints above). Orientations yield to positions while stuck.

The root stays put, its frame too (unless ``root_target`` carries an
orientation). Progress is judged by the root of the sum of squared errors, so
one unreachable target does not freeze the others. Stopping: every error within
tolerance, ``max_iterations``, or 10 consecutive iterations that each fail to
better the best error by ``LIMITED_STALL * tolerance``; the best pose seen is
returned. A cold solve (from the rest pose) that stalls short of reachable
targets restarts from random poses within the limits; a warm one makes one
attempt from the rest pose, kept only if it reaches (see ``run``; with a ``jump``
bound, the natural solve's chains, a stalled or jumping warm solve takes ``least_motion``'s steps
instead, and the attempt from rest only within the bound). Untargeted
branches keep their (projected) start-pose local rotations relative to the
joint they hang from, so every constraint holds after every solve.
"""

from __future__ import annotations

import math
import random

from fabrik3d import rotations as rot
from fabrik3d.model.targets import Goal
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.constrained.attempt import MAX_DAMPING, MIN_DAMPING, STALL_RUN, START_DAMPING, Attempts
from fabrik3d.solver.constrained.numeric import NumericSteps
from fabrik3d.solver.constrained.passes import ReachingPasses
from fabrik3d.solver.constrained.plan import limited_plan
from fabrik3d.solver.constrained.poles import PoleTurns
from fabrik3d.solver.effort import SOLVE, Effort
from fabrik3d.solver.rig import Rig

# Restarts from random poses within the limits draw from this fixed seed (deterministic).
RESTART_SEED = 20110101
# A restart is abandoned after RESTART_RUN iterations in a row each improving by < RESTART_GAIN.
RESTART_RUN = 5
RESTART_GAIN = 0.01
MAX_RESTARTS = 10
# A warm solve stuck short of targets within reach makes one attempt from the rest pose, this long.
FALLBACK_ITERATIONS = 6
# ``least_motion``: its steps, their starting damping (metres) and patience.
# (a limb pressed against a limit creeps along it: six steps and a patience of two left it short
# and the warm solve's jump stood, an elbow swung over 40 cm for a hand's 1.5 cm step)
LEAST_MOTION_STEPS = 30
LEAST_MOTION_DAMPING = 0.01
LEAST_MOTION_PATIENCE = 5  # (steps in a row that fail to lower the error end them: a limit holds it)
# (steps crawling this many tolerances or more from the targets end them once LEAST_MOTION_HOPE times
# the last step's gain, over the steps left, would not reach: ``least_motion``)
LEAST_MOTION_FAR = 5.0
LEAST_MOTION_HOPE = 4.0


class LimitedSolve(Attempts, ReachingPasses, NumericSteps, PoleTurns):
    """One constrained solve on a ``Rig``; positions and frames are lists of tuples. ``effort``: the
    work it may do (``fabrik3d.solver.effort``; shared with the solve it is part of), unbounded by
    default."""

    def __init__(
        self,
        r: Rig,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        poles: dict[int, rot.Vec],
        root_frame: rot.Quat | None,
        effort: Effort | None = None,
    ) -> None:
        self.r = r
        self.effort = Effort() if effort is None else effort
        self.goals = goals
        self.poles = poles
        self.root_frame = root_frame
        plan = self.plan = limited_plan(r, tuple(goals), weights)
        self.active, self.up, self.down, self.kids = plan.active, plan.up, plan.down, plan.kids
        self.hinged, self.turnable, self.offset_dir = plan.hinged, plan.turnable, plan.offset_dir
        self.effectors_beneath, self.turns = plan.effectors_beneath, plan.turns
        self.leaf_dir = {e: plan.offset_dir[e] for e in goals}
        self.pole_turned: set[int] = set()
        self.damping = START_DAMPING
        self.yield_share = 1.0  # the share of orientation targets' weights still in force
        self.poles_yielded = False  # whether poles stopped turning joints (for the rest of the solve)
        self.oriented = any(g.orientation is not None for g in goals.values())
        self.tol = 0.0
        self.pole_blocked: set[int] = set()
        self.swung: set[int] = set()  # effectors whose whole chain was swung toward the pole
        self.swing_blocked: set[int] = set()
        self.twists: dict[int, float] = {}
        self.leaves: dict[int, rot.Quat] = {}

    # -- the solve ---------------------------------------------------------------------------
    def run(
        self,
        start: list[rot.Vec],
        tol: float,
        max_it: int,
        cold: bool,
        start_frames: list[rot.Quat] | None = None,
        jump: float | None = None,
        twist_from: list[rot.Quat] | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """Project ``start``, iterate, place untargeted branches; returns (pose, frames, iterations).
        With ``start_frames`` (the frames of ``start``, a pose already within the limits with the
        rig's bone lengths: the natural solve's chains) the start is taken as it is, unprojected,
        else projected onto the limits. With ``twist_from`` (the frames of a pose near ``start``)
        every joint keeps its turn about its bone in them, a leaf its turn (``carry``); without, none.

        A ``cold`` solve (from the rest pose) with every target within its chain's
        length of the root gives up quickly on a local minimum and restarts
        (``restarts``); a warm one iterates by the stall rule and, stuck short of
        such targets, tries twice more (``warm_retries``). With ``jump`` (the natural solve's
        chains), a retry is kept only if no joint moves more than ``jump`` times as far as the
        farthest target lies from its effector at the start; a solve left short takes
        ``least_motion``'s pose instead if it reaches within that bound, and one moving a joint
        further than that if it reaches moving less (the branches no target pulls counted: they
        swing with the joints they hang from): in a drag, the limb moves the least or a stiffer
        level joins, instead of the pose jumping; a target brought back from afar still finds its
        pose.
        """
        r = self.r
        self.tol = tol
        self.effort.spend(SOLVE)
        if twist_from is not None:
            self.carry(twist_from)
        if start_frames is not None:
            pose, frames = start, start_frames
        else:
            initial = r.pose_frames(start, None if twist_from is None else (self.twists, self.leaves))
            if self.root_frame is not None:
                initial[r.order[0]] = self.root_frame
            pose, frames = self.project(start, initial)
        start, start_frames = pose, frames
        if cold and self.within_reach(start):
            err, pose, frames, it = self.restarts(pose, frames, start, start_frames, max_it)
        else:
            err, pose, frames, it = self.attempt(pose, frames, start, tol, 0, max_it, STALL_RUN, 0.0)
            far = None if jump is None else jump * self.position_error(start)  # (the most a joint may move)
            if not cold and err > tol and it < max_it and not self.effort.spent and self.within_reach(start):
                err, pose, frames, it = self.warm_retries(err, pose, frames, it, start, start_frames, max_it, far)
            if far is not None and not (self.poles or self.oriented):
                # (the branches no target pulls count: a torso's bend swings the head)
                moved = self.moved(start, self.placed(pose, frames, start, start_frames)[0])
                # (stuck, or a jump: the least motion, where it can reach)
                if (err > tol or moved > far) and not self.effort.spent and self.within_reach(start):
                    bound = far if err > tol else moved  # (stuck: taken within the bound; jumping: if it moves less)
                    got = self.least_motion(start, start_frames, tol, bound)
                    if got is not None and self.moved(start, self.placed(*got, start, start_frames)[0]) < bound:
                        (pose, frames), err = got, self.largest_error(*got)
        if self.poles:
            pose, frames = self.final_poles(pose, frames, start, tol, whole=cold)
        self.place_untargeted(pose, frames, start, start_frames)
        return pose, frames, it

    def project(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """A pose projected onto the limits: one stage-2 pass of every joint toward itself."""
        r = self.r
        every = [True] * len(pose)
        all_kids = [[(c, 1.0) for c in r.children[j]] for j in range(len(pose))]
        return self.stage2(pose, frames, pose, frames, every, r.order, all_kids)

    def restarts(
        self,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        start: list[rot.Vec],
        start_frames: list[rot.Quat],
        max_it: int,
    ) -> tuple[float, list[rot.Vec], list[rot.Quat], int]:
        """A cold solve: an attempt quick to give up on a local minimum, then up to
        ``MAX_RESTARTS`` restarts from random poses within the limits (a fixed seed, so the
        same input gives the same output), then the stall rule from the best of them. A
        restart's pose is kept if it ranks better (``rank``: it reaches the positions where
        the kept one does not, or it is nearer to them while neither does, or both reach them
        and it is nearer to every target, orientations in full force)."""
        tol = self.tol
        err, pose, frames, it = self.attempt(pose, frames, start, tol, 0, max_it, RESTART_RUN, RESTART_GAIN)
        draw = random.Random(RESTART_SEED)
        for _ in range(MAX_RESTARTS):
            if err <= tol or it >= max_it:
                break
            seed = self.stage2(start, start_frames, start, start_frames, self.active, self.up, self.kids, draw)
            got = self.attempt(*seed, start, tol, it, max_it, RESTART_RUN, RESTART_GAIN)
            it = got[3]
            if self.rank(got[0], got[1]) < self.rank(err, pose):
                err, pose, frames = got[:3]
        if err > tol and it < max_it:  # no restart reached: carry on from the best attempt
            got = self.attempt(pose, frames, start, tol, it, max_it, STALL_RUN, 0.0)
            it = got[3]
            if not self.rank(err, pose) < self.rank(got[0], got[1]):  # (unless that ranks better)
                err, pose, frames = got[:3]
        return err, pose, frames, it

    def warm_retries(
        self,
        err: float,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        it: int,
        start: list[rot.Vec],
        start_frames: list[rot.Quat],
        max_it: int,
        far: float | None = None,
    ) -> tuple[float, list[rot.Vec], list[rot.Quat], int]:
        """A warm solve stuck short of targets within reach. Poles may hold them off (targets
        win: again from the start without them), or the last pose may have led into a local
        minimum (again from the rest pose, moved with the root). Each attempt runs at most
        ``FALLBACK_ITERATIONS`` and is kept only if it reaches every target (and, with ``far``,
        moves no joint from ``start`` further than that, scene units): a warm solve never jumps to
        random poses, but reaching wins over continuity here, unless ``far`` says otherwise."""
        r = self.r
        tol = self.tol
        self.poles_yielded = True
        seeds = [(start, start_frames)] if self.poles else []
        shift = _sub(start[r.order[0]], r.rest_start[r.order[0]])
        rest = [_add(p, shift) for p in r.rest_start]
        rest_frames = list(r.rest_frames)  # (a translated rest pose has the rest frames)
        if self.root_frame is not None:
            rest_frames[r.order[0]] = self.root_frame
        seeds.append(self.project(rest, rest_frames))
        for seed_pose, seed_frames in seeds:
            if err <= tol or it >= max_it:
                break
            limit = min(max_it, it + FALLBACK_ITERATIONS)
            got = self.attempt(seed_pose, seed_frames, start, tol, it, limit, RESTART_RUN, RESTART_GAIN)
            it = got[3]
            if got[0] <= tol and (far is None or self.moved(start, got[1]) <= far):
                err, pose, frames = got[:3]
        return err, pose, frames, it

    @staticmethod
    def moved(a: list[rot.Vec], b: list[rot.Vec]) -> float:
        """The largest distance a joint moves from pose ``a`` to pose ``b`` (scene units)."""
        return max(rot.dist(p, q) for p, q in zip(a, b))

    def least_motion(
        self, start: list[rot.Vec], start_frames: list[rot.Quat], tol: float, bound: float = math.inf
    ) -> tuple[list[rot.Vec], list[rot.Quat]] | None:
        """Up to ``LEAST_MOTION_STEPS`` ``numeric_step``s from the start (a step is kept only if
        it lowers the error; the damping halves after one that does, and quadruples after one that
        does not; ``LEAST_MOTION_PATIENCE`` in a row that do not end them; the first to fail after
        one that did not is taken again over the turns the limits allow: ``numeric_step``'s
        ``beat``): the pose if it reaches
        every target, else ``None`` (as soon as a joint has moved ``bound`` from the start, scene
        units: the caller would not take it). Small steps of a drag reach this way with the joints
        moving little, where FABRIK's passes can slide a limb along a limit into another
        configuration. A ``Rigid`` body turns whole within its limit (``DampedSteps.turn``); the
        branches that no target pulls are left where they were, for ``run`` to place
        (``place_untargeted``). A spent ``effort`` ends the steps too."""
        pose, frames = start, start_frames
        score, damping = self.squared_errors(pose, frames), LEAST_MOTION_DAMPING
        failed = 0
        for k in range(LEAST_MOTION_STEPS):
            if score <= tol * tol or failed >= LEAST_MOTION_PATIENCE or self.effort.spent:
                break
            new_pose, new_frames, new_score = self.numeric_step(pose, frames, damping, score if failed == 0 else None)
            if new_score < score:
                gain = math.sqrt(score) - math.sqrt(new_score)
                pose, frames, score, failed = new_pose, new_frames, new_score, 0
                damping = max(damping * 0.5, MIN_DAMPING)
                if self.moved(start, pose) >= bound:
                    return None
                # (crawling far from the targets: LEAST_MOTION_HOPE times this step's gain over the
                # steps left would not reach them, and the caller takes only a pose that does)
                left, err = LEAST_MOTION_STEPS - k - 1, math.sqrt(score)
                if err > LEAST_MOTION_FAR * tol and LEAST_MOTION_HOPE * gain * left < err - tol:
                    return None
            else:
                damping, failed = min(damping * 4.0, MAX_DAMPING), failed + 1
        return (pose, frames) if self.largest_error(pose, frames) <= tol else None

    def within_reach(self, start: list[rot.Vec]) -> bool:
        """Whether every target is within the length of its chain from the root."""
        r = self.r
        root = start[r.order[0]]
        for e, g in self.goals.items():
            length, j = 0.0, e
            while r.parents[j] >= 0:
                length, j = length + r.lengths[j], r.parents[j]
            if rot.dist(root, g.position) > length:
                return False
        return True

    # -- untargeted branches -------------------------------------------------------------------

    def placed(
        self, pose: list[rot.Vec], frames: list[rot.Quat], start: list[rot.Vec], start_frames: list[rot.Quat]
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """A copy of ``pose`` and ``frames`` with the untargeted branches placed (``place_untargeted``)."""
        pose, frames = list(pose), list(frames)
        self.place_untargeted(pose, frames, start, start_frames)
        return pose, frames

    def place_untargeted(
        self, pose: list[rot.Vec], frames: list[rot.Quat], start: list[rot.Vec], start_frames: list[rot.Quat]
    ) -> None:
        """Untargeted branches keep their start local rotations, riding on the joint they hang from."""
        r = self.r
        for j in self.up:
            turn = rot.mul(frames[j], rot.conj(start_frames[j]))
            for c in r.children[j]:
                if self.active[c]:
                    continue
                for x in r.subtree(c):
                    pose[x] = _add(pose[j], rot.rotate(turn, _sub(start[x], start[j])))
                    frames[x] = rot.mul(turn, start_frames[x])
