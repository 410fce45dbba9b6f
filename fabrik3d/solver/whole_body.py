"""The natural solve of the whole body: what ``solve`` does with a skeleton that has a ``Posing``.

One solve runs these steps, each in its own module:

1. **Settled** (``WholeBody.settled``): a warm start that already meets every target, its stiff
   joints relaxed to the pose the user built and no pole asking for a bend, is the answer as it
   is. The least motion that meets the targets is none: pinning an effector where it is, a
   re-solve with the same targets, or a look-at (which turns only the neck and head afterwards)
   moves nothing else.
2. **Hip hinge** (``fabrik3d.solver.hinge``): a low reach in front tilts the pelvis first.
3. **Levels** (``fabrik3d.solver.natural``): the limbs reach, the stiffer joints join only as much as
   reaching needs.
4. **Hang** (``fabrik3d.solver.hang``): a free limb of ``Posing.hang`` hangs under gravity.

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
from fabrik3d.solver.hang import hung
from fabrik3d.solver.hinge import hinge, reference_frame, upright_goal
from fabrik3d.solver.natural import NaturalSolve, reference_frames
from fabrik3d.solver.rig import Rig
from fabrik3d.solver.subtree import local

# A warm start whose orientation targets are all within this angle (radians) of the effectors'
# frames, and whose stiff joints are within it of the relaxed pose's, is settled: a turn in place of
# a tenth of a degree still turns the hand.
SETTLED_ANGLE = 1e-3

Pose = tuple[list[rot.Vec], list[rot.Quat]]


class WholeBody:
    """One natural solve of ``skeleton`` (its rig ``r``) for ``goals`` (effector index -> ``Goal``),
    ``weights`` and ``poles`` (effector index -> point) with ``posing``; ``solve_pose`` is
    ``fabrik3d.solver.tree.solve_pose`` (each chain's solve)."""

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
    ) -> None:
        self.sk, self.r, self.goals, self.weights, self.poles, self.posing = skeleton, r, goals, weights, poles, posing
        self.tol, self.max_it = tol, max_it
        self.solve_pose = solve_pose
        # (a pole on a free effector bends its limb where the effector is: it is pinned there)
        self.pinned = dict(goals)

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
        frame), not the rest pose; ``moved(goal)``: the start pose and its turns moved with a root goal
        (the hinge's). Returns (pose, frames, iterations)."""
        self.pinned.update({e: Goal(start[e], None, 1.0) for e in self.poles if e not in self.goals})
        if warm:
            kept = self.settled(start, twist, relax, relax_twist)
            if kept is not None:
                return (*self.hung(*kept), 0)
        hinged = None if root_goal is not None else hinge(self.sk, self.r, self.goals, start, self.posing, relax)
        if hinged is not None:  # (the pelvis tilted for a low reach, or back upright: fabrik3d.solver.hinge)
            begin, turns = moved(hinged[0])
            got = self.levels(hinged[1], begin, turns, relax, relax_twist, warm)
            if all(rot.dist(got[0][e], g.position) <= self.tol for e, g in self.goals.items()):
                return (*self.hung(got[0], got[1]), got[2])
            upright = upright_goal(self.r, start, reference_frame(self.r, relax))  # (else as without a hinge)
            if upright is not None:
                start, twist = moved(upright)
        pose, frames, iterations = self.levels(self.posing, start, twist, relax, relax_twist, warm)
        return (*self.hung(pose, frames), iterations)

    def levels(
        self,
        posing: Posing,
        start: list[rot.Vec],
        twist: list[rot.Quat] | None,
        relax: list[rot.Vec] | None,
        relax_twist: list[rot.Quat] | None,
        warm: bool,
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """The levels' solve (``fabrik3d.solver.natural``) with ``posing``."""
        solver = NaturalSolve(self.sk, self.r, self.pinned, self.weights, self.poles, posing, self.solve_pose, warm)
        return solver.run(list(start), relax, self.tol, self.max_it, twist, relax_twist)

    def hung(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> Pose:
        """The free limbs of ``Posing.hang`` hung (``fabrik3d.solver.hang``)."""
        return hung(self.sk, self.r, self.posing, set(self.pinned), pose, frames)

    def settled(
        self,
        start: list[rot.Vec],
        twist: list[rot.Quat] | None,
        relax: list[rot.Vec] | None,
        relax_twist: list[rot.Quat] | None,
    ) -> Pose | None:
        """The pose ``start`` (projected onto the limits, its turns about the bones from ``twist``)
        when it already meets every target (positions within the tolerance, orientations within
        ``SETTLED_ANGLE``), its stiff joints are relaxed already (each within ``SETTLED_ANGLE`` of its
        rotation in the pose ``relax``) and no pole asks for a bend; else None (module docstring)."""
        if self.poles or any(rot.dist(start[e], g.position) > self.tol for e, g in self.goals.items()):
            return None
        r = self.r
        whole = LimitedSolve(r, self.goals, self.weights, {}, None)
        if twist is not None:
            whole.carry(twist)
        pose, frames = whole.project(start, r.pose_frames(start, (whole.twists, whole.leaves)))
        for e, g in self.goals.items():
            if rot.dist(pose[e], g.position) > self.tol:
                return None
            if g.orientation is not None and rot.angle_between(frames[e], g.orientation) > SETTLED_ANGLE:
                return None
        reference = reference_frames(r, relax, relax_twist)
        stiffness = self.posing.stiffness
        for j in r.order[1:]:
            if stiffness.get(self.sk.names[j], 0.0) > 0.0:
                if rot.angle_between(local(r, frames, j), local(r, reference, j)) > SETTLED_ANGLE:
                    return None
        return pose, frames
