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

Where every pose that reaches still jumps, the pose goes only part of the way toward the one kept
(``partway``): the limb swings round over the next frames instead of at once, its effector off its
target meanwhile (that solve does not converge). In the chained drags, a hand dragged past its own
shoulder leaves its arm on the other branch of the natural pose, pressed against its limits; the
arm then had to flip, its elbow 41 cm for the hand's 1.5 cm.

Positions are ``(x, y, z)`` tuples (scene units), frames ``(x, y, z, w)`` unit quaternions.
"""

from __future__ import annotations

from typing import Any, Protocol

from fabrik3d import rotations as rot
from fabrik3d.model.targets import Goal
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.effort import Effort
from fabrik3d.solver.rig import Rig
from fabrik3d.solver.subtree import forward, local

# Halvings of the share of the way that ``partway`` takes toward a pose that jumps (the least: 1/256).
PARTWAY_BISECTIONS = 8
# A solve goes part of the way only as a frame of a drag: from a pose given (``NaturalSolve.warm``),
# its targets' step at most this share of the dragged limb's length (``Swivelling.reach_of``; that
# includes how far the effector lags after a frame part of the way: up to 10 cm of the arm's 63 in the
# chained drags). A farther target or a solve from the rest pose is a placement: reached whatever moves.
PARTWAY_STEP = 0.25

Posed = tuple[list[rot.Vec], list[rot.Quat]]


class Solving(Protocol):
    """What the guard uses of ``fabrik3d.solver.natural.NaturalSolve`` (which imports this module)."""

    r: Rig
    goals: dict[int, Goal]
    weights: dict[int, float] | None
    tol: float
    step: float
    start_pose: list[rot.Vec]
    carrying: bool
    warm: bool
    far: float
    done: dict[Any, Any]
    effort: Effort

    def jumps(self, pose: list[rot.Vec], far: float | None = None) -> bool: ...
    def moved(self, pose: list[rot.Vec]) -> float: ...
    def reached(self, pose: list[rot.Vec], frames: list[rot.Quat] | None = None) -> bool: ...
    def reach_of(self, e: int) -> float: ...
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


def dragged(solve: Solving) -> list[int]:
    """The effectors whose targets moved: more than the tolerance from where the start has them."""
    return [e for e, g in solve.goals.items() if rot.dist(solve.start_pose[e], g.position) > solve.tol]


def drag_frame(solve: Solving) -> bool:
    """Whether the solve is a frame of a drag: from a pose given (``warm``), its targets' step at most
    ``PARTWAY_STEP`` of the shortest dragged limb's length (``reach_of``). A farther step, or a solve
    from the rest pose, is a placement."""
    limbs = [solve.reach_of(e) for e in dragged(solve)]
    return solve.warm and bool(limbs) and solve.step <= PARTWAY_STEP * min(limbs)


def steadied(solve: Solving, start: Posed, got: Posed, bar: float) -> Posed:
    """``got`` (the natural solve's pose and frames from ``start``, the drag's last pose projected
    onto the limits) or, where it jumps (``jumping``), the pose of the two above that reaches every
    target and moves the joints least, if it moves them less than ``got``; each tried only while the
    solve's ``effort`` lasts (``fabrik3d.solver.effort``)."""
    if not jumping(solve, got[0], bar):
        return got
    best, least = got, solve.moved(got[0])
    root = solve.r.order[0]
    if not solve.effort.spent:
        whole = LimitedSolve(solve.r.locked({root: start[1][root]}), solve.goals, solve.weights, {}, None, solve.effort)
        moved = whole.least_motion(*start, solve.tol, least)
        if moved is not None:
            best, least = kept(solve, whole.placed(*moved, *start), best, least)
    if jumping(solve, best[0], bar) and not solve.effort.spent:
        solve.done = {}  # (the chains' last solves are not this start's)
        best, least = kept(solve, solve.levelled(*start, start[1]), best, least)
    return partway(solve, start, best, bar) if jumping(solve, best[0], bar) else best


def partway(solve: Solving, start: Posed, got: Posed, bar: float) -> Posed:
    """The pose part of the way from ``start`` to ``got``, a pose that jumps (``jumping``): each joint's
    rotation relative to its parent slerped by one share, the root as it is, projected onto the limits
    (its turns about the bones kept where the solve carries them); the largest share
    (``PARTWAY_BISECTIONS`` halvings) with which no joint moves more than ``bar`` times the least move
    of an effector whose target moved (the one dragged: its own step, at most the target's; no hinge
    gets the straightening allowance here). The effectors whose targets did not move (a pinned hand,
    the toes), if that left them off their targets, are put back by the body's least motion from
    there, the dragged ones held where they are, if that stays within the bar. ``got`` itself where
    the solve is not a drag's frame (``PARTWAY_STEP``), where it moves the root, or where no share is
    that steady."""
    r = solve.r
    root = r.order[0]
    moving = dragged(solve)
    if not drag_frame(solve):
        return got
    if start[0][root] != got[0][root] or start[1][root] != got[1][root]:
        return got
    whole = LimitedSolve(r, solve.goals, solve.weights, {}, None)
    turns = [(j, local(r, start[1], j), local(r, got[1], j)) for j in r.order[1:]]

    def within_bar(pose: Posed) -> bool:  # (no hinge gets the straightening allowance here)
        step = min((rot.dist(pose[0][e], start[0][e]) for e in moving), default=solve.step)
        return solve.moved(pose[0]) <= bar * max(min(step, solve.step), solve.tol)

    lo, hi, best = 0.0, 1.0, got
    for _ in range(PARTWAY_BISECTIONS):
        share = 0.5 * (lo + hi)
        turned = forward(r, *start, {j: rot.slerp(a, b, share) for j, a, b in turns})
        if solve.carrying:  # (the turns about the bones kept, as the solve keeps them: a turned hand's)
            whole.carry(turned[1])
        pose = whole.project(*turned)
        lo, hi, best = (share, hi, pose) if within_bar(pose) else (lo, share, best)
    if best is got or all(
        rot.dist(best[0][e], g.position) <= solve.tol for e, g in solve.goals.items() if e not in moving
    ):
        return best
    # (the targets that did not move, back on them: the body's least motion from there, the dragged
    # effectors held where they are)
    held = {e: Goal(best[0][e], None, 1.0) if e in moving else g for e, g in solve.goals.items()}
    fixer = LimitedSolve(r.locked({root: start[1][root]}), held, solve.weights, {}, None)
    moved = fixer.least_motion(*best, solve.tol)
    if moved is not None and within_bar(pinned := fixer.placed(*moved, *best)):
        return pinned
    return best


def kept(solve: Solving, pose: Posed, best: Posed, least: float) -> tuple[Posed, float]:
    """``pose`` and how far it moves a joint if it reaches every target moving less than ``least``,
    else ``best`` and ``least``."""
    moves = solve.moved(pose[0])
    return (pose, moves) if moves < least and solve.reached(*pose) else (best, least)
