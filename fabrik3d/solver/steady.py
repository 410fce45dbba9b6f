"""The natural solve's last guard against a jump (``fabrik3d.solver.natural.NaturalSolve.run``).

The stiffness levels (``fabrik3d.solver.levels``) keep each chain's solve from jumping, but the
pose they end with is solved from the relaxed start (the stiff joints put back to the pose the user
built), and where a torso pressed against its limits or an arm pressed against its shoulder's has
to take another way round, that pose can still move a joint many times the target's step: in a
chained drag, the head swung 60 cm, or an elbow 37 cm, for a hand's 1.5 cm. Where the pose moves
a joint more than ``RETRY_JUMP`` times the step it takes (the hinge of a limb pulled straight, with
the swing that forces: ``StiffLevels.jumps``), two more poses are tried from the drag's
last pose as it stands, and the one that moves the joints least is kept among those that reach:

1. the least motion of the whole body (``LimitedSolve.least_motion``, the root held: a root turned
   there would never be turned back, since relaxing leaves the root as it is);
2. if that still jumps, the levels again from the start unrelaxed (the stiff joints as they are).

Positions are ``(x, y, z)`` tuples (scene units), frames ``(x, y, z, w)`` unit quaternions.
"""

from __future__ import annotations

from typing import Any, Protocol

from fabrik3d import rotations as rot
from fabrik3d.model.targets import Goal
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.rig import Rig

Posed = tuple[list[rot.Vec], list[rot.Quat]]


class Solving(Protocol):
    """What the guard uses of ``fabrik3d.solver.natural.NaturalSolve`` (which imports this module)."""

    r: Rig
    goals: dict[int, Goal]
    weights: dict[int, float] | None
    tol: float
    step: float
    start_pose: list[rot.Vec]
    far: float
    done: dict[Any, Any]

    def jumps(self, pose: list[rot.Vec], far: float | None = None) -> bool: ...
    def moved(self, pose: list[rot.Vec]) -> float: ...
    def reached(self, pose: list[rot.Vec], frames: list[rot.Quat] | None = None) -> bool: ...
    def levelled(self, pose: list[rot.Vec], frames: list[rot.Quat], reference: list[rot.Quat]) -> Posed: ...


def jumping(solve: Solving, pose: list[rot.Vec], bar: float) -> bool:
    """Whether ``pose`` moves a joint more than ``bar`` times the step from the start (the hinge of a
    limb pulled straight: that with the straightening allowance, ``levels.hinge_far``): ``False``
    where jumps are allowed (a solve with poles, which the user drags to turn a limb at once) or the
    targets did not move. The step is the one ``pose`` takes (``step_taken``)."""
    if not (solve.step > solve.tol and solve.far < float("inf")):
        return False
    return solve.jumps(pose, bar * step_taken(solve, pose))


def step_taken(solve: Solving, pose: list[rot.Vec]) -> float:
    """The step (scene units) that ``pose`` takes: the targets' (``solve.step``), or, where shorter, the
    farthest any targeted effector moved from the start (an effector that ends its tolerance short of
    a target it was as far behind: each joint's move is measured against the effector's own)."""
    start = solve.start_pose
    return min(solve.step, max((rot.dist(pose[e], start[e]) for e in solve.goals), default=solve.step))


def steadied(solve: Solving, start: Posed, got: Posed, bar: float) -> Posed:
    """``got`` (the natural solve's pose and frames from ``start``, the drag's last pose projected
    onto the limits) or, where it jumps (``jumping``), the pose of the two above that reaches every
    target and moves the joints least, if it moves them less than ``got``."""
    if not jumping(solve, got[0], bar):
        return got
    best, least = got, solve.moved(got[0])
    root = solve.r.order[0]
    whole = LimitedSolve(solve.r.locked({root: start[1][root]}), solve.goals, solve.weights, {}, None)
    moved = whole.least_motion(*start, solve.tol, least)
    if moved is not None:
        best, least = kept(solve, whole.placed(*moved, *start), best, least)
    if jumping(solve, best[0], bar):
        solve.done = {}  # (the chains' last solves are not this start's)
        best, least = kept(solve, solve.levelled(*start, start[1]), best, least)
    return best


def kept(solve: Solving, pose: Posed, best: Posed, least: float) -> tuple[Posed, float]:
    """``pose`` and how far it moves a joint if it reaches every target moving less than ``least``,
    else ``best`` and ``least``."""
    moves = solve.moved(pose[0])
    return (pose, moves) if moves < least and solve.reached(*pose) else (best, least)
