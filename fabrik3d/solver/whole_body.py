"""The natural solve of the whole body: what ``solve`` does with a skeleton that has a ``Posing``.

One solve runs these steps, each in its own module:

1. **Settled** (``WholeBody.settled``): a warm start that already meets every target, its stiff
   joints relaxed to the pose the user built and no pole asking for a bend, is the answer as it
   is. The least motion that meets the targets is none: pinning an effector where it is, a
   re-solve with the same targets, or a look-at (which turns only the neck and head afterwards)
   moves nothing else.
2. **Hip hinge** (``fabrik3d.solver.hinge``): a low reach in front tilts the pelvis first.
3. **Levels** (``fabrik3d.solver.natural``): the limbs reach, the stiffer joints join only as much as
   reaching needs, relaxing toward the pose the user built with its trunk turned toward a hand
   driven beyond its arm (``fabrik3d.solver.follow``).
4. **Hang** (``fabrik3d.solver.hang``): a free limb of ``Posing.hang`` hangs under gravity, unless
   the pose the user built has it posed otherwise.

A frame of a drag shares one allowance of work among the levels' solves of steps 2 and 3
(``fabrik3d.solver.effort``): once it is spent the searches stop, and where the best pose found then
is no gain on the start, the reaching passes move the start on (``WholeBody.reached_plainly``).

Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabrik3d import rotations as rot
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.effort import Effort
from fabrik3d.solver.follow import follow_turns
from fabrik3d.solver.hang import hung, posed_limbs
from fabrik3d.solver.hinge import hinge
from fabrik3d.solver.natural import RETRY_JUMP, NaturalSolve, reference_frames
from fabrik3d.solver.rig import Rig
from fabrik3d.solver.subtree import forward, local

# A warm start whose orientation targets are all within this angle (radians) of the effectors'
# frames, and whose stiff joints are within it of the relaxed pose's, is settled: a turn in place of
# a tenth of a degree still turns the hand.
SETTLED_ANGLE = 1e-3
# The reaching passes' iterations of a drag frame whose allowance ran out short of any gain
# (``WholeBody.reached_plainly``).
PLAIN_ITERATIONS = 10

Pose = tuple[list[rot.Vec], list[rot.Quat]]


class WholeBody:
    """One natural solve of ``skeleton`` (its rig ``r``) for ``goals`` (effector index -> ``Goal``),
    ``weights`` and ``poles`` (effector index -> point) with ``posing``; ``solve_pose`` is
    ``fabrik3d.solver.tree.solve_pose`` (each chain's solve); ``effort``: ``solve``'s."""

    def __init__(
        self,
        skeleton: Skeleton,
        r: Rig,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        poles: dict[int, rot.Vec],
        posing: Posing,
        tol: float,
        max_it: int,
        solve_pose: Callable[..., Any],
        effort: float | None = None,
    ) -> None:
        self.sk, self.r, self.goals, self.weights, self.poles, self.posing = skeleton, r, goals, weights, poles, posing
        self.tol, self.max_it = tol, max_it
        self.solve_pose = solve_pose
        # (a pole on a free effector bends its limb where the effector is: it is pinned there)
        self.pinned = dict(goals)
        self.busy: set[int] = set()  # (the effectors that do not hang: ``run``)
        self.looked: set[int] = set()  # (the joints a look-at turns after the solve: not settled by it)
        self.stiff = [posing.stiffness.get(name, 0.0) for name in skeleton.names]
        self.reference: list[rot.Quat] = []  # (the relaxed pose's frames: ``run``)
        self.relax: list[rot.Vec] | None = None  # (``run``'s: the pose the body relaxes to, its frames, a warm start)
        self.relax_twist: list[rot.Quat] | None = None
        self.warm = False
        # (the frame's work, shared by its levels' solves; None: set by the first, ``NaturalSolve.run``)
        self.effort: Effort | None = None if effort is None else Effort(effort)

    def run(
        self,
        start: list[rot.Vec],
        twist: list[rot.Quat] | None,
        relax: list[rot.Vec] | None,
        relax_twist: list[rot.Quat] | None,
        warm: bool,
        root_goal: Goal | None,
        moved: Callable[[Goal], tuple[list[rot.Vec], list[rot.Quat] | None]],
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """The natural pose from ``start`` (its frames' turns about the bones from ``twist``), relaxing
        toward ``relax`` (``relax_twist``; None: the rest pose); ``warm``: a pose given (a drag's
        frame), not the rest pose; ``root_goal``: the root's goal, the start moved with it (a start so
        moved is no pose the solve may keep for want of a nearer one: ``nearer``); ``moved(goal)``: the
        start pose and its turns moved with a root goal (the hinge's). Returns (pose, frames, iterations)."""
        self.relax, self.relax_twist, self.warm = relax, relax_twist, warm
        self.pinned.update({e: Goal(start[e], None, 1.0) for e in self.poles if e not in self.goals})
        self.reference = reference_frames(self.r, relax, relax_twist)
        built = None if relax is None else self.reference
        self.busy = set(self.pinned) | posed_limbs(self.sk, self.r, self.posing, built)
        projected = self.projected(start, twist) if warm else None
        if projected is not None:
            kept = self.settled(*projected)
            if kept is not None:
                return (*self.hung(*kept), 0)
        pose, frames, iterations = self.solved(start, twist, root_goal, moved)
        if projected is not None and root_goal is None and not self.nearer(projected, (pose, frames)):
            if self.spent:  # (the allowance ran out short of any gain: the reaching passes from the start)
                plain = self.reached_plainly(*projected)
                if self.nearer(projected, plain) and self.steady(projected, plain):
                    return (*self.hung(*plain), PLAIN_ITERATIONS)
            return (*self.hung(*projected), 0)  # (no nearer the targets: the start stays, as settled)
        return (*self.hung(pose, frames), iterations)

    def solved(
        self,
        start: list[rot.Vec],
        twist: list[rot.Quat] | None,
        root_goal: Goal | None,
        moved: Callable[[Goal], tuple[list[rot.Vec], list[rot.Quat] | None]],
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """Steps 2 and 3 (module docstring): the hinge, then the levels (``run``'s arguments)."""
        hinged = None
        kept = None  # (the feet keep their frames from before the hinge tilted the body: flat stays flat)
        for counter in (True, False) if root_goal is None else ():  # (the hips stepping back; not, for a far reach)
            hinged = hinge(self.sk, self.r, self.goals, start, self.posing, self.relax, counter)
            if hinged is None:
                break
            # (the pelvis tilted for a low reach, or back upright)
            if kept is None:
                kept = self.frames(start, twist)
            got = self.levels(hinged[1], *moved(hinged[0]), kept)
            if all(rot.dist(got[0][e], g.position) <= self.tol for e, g in self.goals.items()) or self.spent:
                return got  # (reached; or the frame's work is spent: the best found so far)
        if hinged is not None:
            start, twist = moved(hinged[2])  # (else as without a hinge, upright where it stands)
        return self.levels(self.posing, start, twist, kept)

    def levels(
        self,
        posing: Posing,
        start: list[rot.Vec],
        twist: list[rot.Quat] | None,
        kept: list[rot.Quat] | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """The levels' solve (``fabrik3d.solver.natural``) with ``posing`` from ``start`` (``twist``),
        relaxing toward ``run``'s ``relax`` with its trunk turned toward a far hand
        (``fabrik3d.solver.follow``); ``kept``: ``NaturalSolve.run``'s."""
        r, relax, relax_twist = self.r, self.relax, self.relax_twist
        relaxed = list(r.rest_start if relax is None else relax)
        turned = follow_turns(self.sk, r, posing, self.goals, relaxed, self.reference)
        if turned:
            relax, relax_twist = forward(r, relaxed, self.reference, turned)
        solver = NaturalSolve(
            self.sk, r, self.pinned, self.weights, self.poles, posing, self.solve_pose, self.warm, self.effort
        )
        got = solver.run(list(start), relax, self.tol, self.max_it, twist, relax_twist, kept)
        self.effort = solver.effort  # (the first levels' solve sets the frame's: the others share it)
        return got

    @property
    def spent(self) -> bool:
        """Whether the frame's work is spent (``fabrik3d.solver.effort``)."""
        return self.effort is not None and self.effort.spent

    def reached_plainly(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> Pose:
        """The whole body's constrained solve from ``pose`` (within the limits, its ``frames``) toward the
        targets, in ``PLAIN_ITERATIONS`` at most, no search: where a drag frame's allowance ran out short of
        any gain (``fabrik3d.solver.effort``), the drag still follows (unless that jumps: ``steady``), and
        the natural rules take over again at the next frame that has the work to spare."""
        whole = LimitedSolve(self.r, self.pinned, self.weights, {}, None)
        got = whole.run(pose, self.tol, PLAIN_ITERATIONS, False, frames)
        return got[0], got[1]

    def hung(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> Pose:
        """The free limbs of ``Posing.hang`` hung (``fabrik3d.solver.hang``)."""
        return hung(self.sk, self.r, self.posing, self.busy, pose, frames)

    def projected(self, start: list[rot.Vec], twist: list[rot.Quat] | None) -> Pose | None:
        """The warm start projected onto the limits (its turns about the bones from ``twist``); None with
        a pole (a pole asks for a bend: the start is never the answer as it is)."""
        return None if self.poles else self.project(start, twist)

    def frames(self, start: list[rot.Vec], twist: list[rot.Quat] | None) -> list[rot.Quat]:
        """The world frames of ``start`` projected onto the limits (``project``)."""
        return self.project(start, twist)[1]

    def project(self, start: list[rot.Vec], twist: list[rot.Quat] | None) -> Pose:
        """``start`` projected onto the limits, its turns about the bones from ``twist``."""
        whole = LimitedSolve(self.r, self.goals, self.weights, {}, None)
        if twist is not None:
            whole.carry(twist)
        return whole.project(start, self.r.pose_frames(start, (whole.twists, whole.leaves)))

    def misses(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> tuple[float, float]:
        """How far ``pose`` misses its targets: (the largest distance, the largest orientation angle)."""
        far = max((rot.dist(pose[e], g.position) for e, g in self.goals.items()), default=0.0)
        turned = [rot.angle_between(frames[e], g.orientation) for e, g in self.goals.items() if g.orientation]
        return far, max(turned, default=0.0)

    def nearer(self, start: Pose, got: Pose) -> bool:
        """Whether the solved pose ``got`` is better than the warm ``start``: meeting the targets where the
        start does not; nearer a target out of reach by more than the tolerance, no joint moving more
        than ``RETRY_JUMP`` times that gain (or an orientation nearer by ``SETTLED_ANGLE``); or, where the
        start meets them, meeting them too with its stiff joints nearer the relaxed pose (by more than
        ``SETTLED_ANGLE`` in all: ``unrelaxed``). Else there is nothing to gain, and the least motion is
        none: a re-solve with the same targets moves nothing, within reach or out of it."""
        (far, turned), (far2, turned2) = self.misses(*start), self.misses(*got)
        if far <= self.tol and turned <= SETTLED_ANGLE:
            met = far2 <= self.tol and turned2 <= max(turned, SETTLED_ANGLE)
            return met and self.unrelaxed(start[1]) - self.unrelaxed(got[1]) > SETTLED_ANGLE
        if far2 <= self.tol:
            return True
        # (a target out of reach: taken for a real gain, each joint moving at most RETRY_JUMP times it)
        return (far - far2 > self.tol and self.steady(start, got)) or turned2 < turned - SETTLED_ANGLE

    def steady(self, start: Pose, got: Pose) -> bool:
        """Whether ``got`` moves no joint from ``start`` more than ``RETRY_JUMP`` times as far as it brings
        the farthest target nearer (a drag's bar on a jump)."""
        gain = self.misses(*start)[0] - self.misses(*got)[0]
        return max(rot.dist(a, b) for a, b in zip(start[0], got[0], strict=True)) <= RETRY_JUMP * gain

    def unrelaxed(self, frames: list[rot.Quat]) -> float:
        """How far the stiff joints of the pose of world ``frames`` are from the relaxed pose (the sum of
        their angles, radians), but the joints a look turns and the held ones (``settled``)."""
        r, stiff, reference = self.r, self.stiff, self.reference
        total = 0.0
        for j in r.order[1:]:
            p = r.parents[j]
            held = r.parents[p] >= 0 and stiff[p] <= 0.0  # (below a free joint: it relaxes only as targets move)
            if stiff[j] > 0.0 and not held and j not in self.looked:
                total += rot.angle_between(local(r, frames, j), local(r, reference, j))
        return total

    def settled(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> Pose | None:
        """The projected warm start ``pose``, ``frames`` when it already meets every target (positions
        within the tolerance, orientations within ``SETTLED_ANGLE``) and its stiff joints are relaxed
        already (within ``SETTLED_ANGLE`` in all of their rotations in the relaxed pose: ``unrelaxed``;
        not the joints a look turns, ``looked``, nor a held joint below a free one, a wrist, which
        relaxes only as far as its target moves: ``natural.HOLD_RATE``); else None (module docstring)."""
        for e, g in self.goals.items():
            if rot.dist(pose[e], g.position) > self.tol:
                return None
            if g.orientation is not None and rot.angle_between(frames[e], g.orientation) > SETTLED_ANGLE:
                return None
        return (pose, frames) if self.unrelaxed(frames) <= SETTLED_ANGLE else None
