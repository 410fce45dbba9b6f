"""Multi-end-effector FABRIK on a skeleton (the paper's section 3).

``solve(skeleton, targets)`` moves the targeted end effectors onto their
targets. One iteration is

* **Stage 1**, from every targeted effector inward: the effector goes onto its
  target; every other *active* joint (one on a path from the root to a targeted
  effector) takes the point proposed by each of its active children, the point
  at the child's bone length from the child's new position on the line to the
  joint's old position. A sub-base with several proposals takes their centroid:
  the plain mean, as in the paper, or, with ``weights``, each proposal weighted
  by the sum of the weights of the targeted effectors beneath it.
* **Stage 2**, from the root outward: the root stays where it is (at
  ``root_target`` if given) and each active joint goes on the line to its
  stage-1 point at its bone's length from its parent.

The solve stops when every targeted effector is within ``tolerance``, after
``max_iterations``, or when an iteration changes the largest error by less
than ``STALL * tolerance`` (``fabrik3d.solver.chain.settled``): the pose has settled.
An iteration that makes the largest error worse is kept (with an unreachable
target, the first iterations trade its error for the others'), so a
reachable target is never frozen by an unreachable one. Work is done in
skeleton order, so the result does not depend on the order of ``targets``.

With one targeted effector, the path from the root to it is solved by the
single-chain algorithm of ``fabrik3d.chain`` (so an unreachable target
straightens the path in one step, and a straight path is bent once).

Branches without a target do not pull: they keep their shape and move rigidly
with the frame of the joint they hang from (``fabrik3d.frames``), keeping their
local rotations; a branch hanging from the root moves with the root's position.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model import targets as tg
from fabrik3d.model.posing import Posing, check_posing
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.solver.chain import run_chain, settled
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.effort import Effort, allowed
from fabrik3d.solver.ground import grounded
from fabrik3d.solver.look import look_goal, look_joints, looking
from fabrik3d.solver.plan import LEAF, SWING, PlainPlan, plain_plan
from fabrik3d.solver.result import SolveResult, result
from fabrik3d.solver.riders import solve_riding
from fabrik3d.solver.rig import Rig, given_frames, rig
from fabrik3d.solver.whole_body import WholeBody


def solve(
    skeleton: Skeleton,
    targets: Mapping[str, Any],
    *,
    positions: np.ndarray | None = None,
    root_target: Any = None,
    poles: Mapping[str, Any] | None = None,
    weights: Mapping[str, float] | None = None,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
    posing: Posing | None = None,
    relax_to: np.ndarray | None = None,
    rotations: np.ndarray | None = None,
    relax_rotations: np.ndarray | None = None,
    look_at: Any = None,
    floor: float | None = None,
    balance: bool = False,
    effort: float | None = None,
) -> SolveResult:
    """Pose ``skeleton`` so its targeted end effectors reach their targets.

    Skeletons with joint constraints, and solves with poles or orientation targets, run the
    constrained solver of ``fabrik3d.solver.constrained.solve``; the others this module's plain solve.

    Args:
        skeleton: the skeleton to pose.
        targets: end-effector name -> ``(3,)`` target point or ``fabrik3d.Target``.
        positions: ``(n, 3)`` start pose (default: the rest pose; interactive callers pass the
            previous result's). Bone directions are taken from it, lengths from the skeleton.
        root_target: ``(3,)`` new root position, or a ``Target`` (with an optional orientation for
            the root's frame): the start pose first moves with the root, which then stays there.
        poles: effector name -> ``(3,)`` point the chain's inner joints bend toward (elbows, knees).
        weights: effector name -> weight > 0 for the sub-base centroids.
        tolerance: distance (scene units, > 0) at which a target counts as reached.
        max_iterations: upper bound on iterations (>= 1).
        posing: chain reach, stiffness and swivel (``fabrik3d.Posing``); default the skeleton's
            own (``skeleton.posing``: the presets pose naturally); ``Posing()`` solves the plain
            full-body chain. With one, the solve runs as ``fabrik3d.solver.natural`` describes.
        relax_to: ``(n, 3)`` the pose the user built, that stiff joints not needed for reaching
            go back to (default: the rest pose); only used with a posing.
        rotations: ``(n, 4)`` the world frames of ``positions`` (x, y, z, w; the previous
            result's ``rotations``, or a pose turned by ``fabrik3d.solver.fk``): each joint keeps
            its turn about its bone from them (a twisted forearm stays twisted) where its limits
            allow; without them a start pose's frames have no turn about their bones.
        relax_rotations: ``(n, 4)`` the world frames of ``relax_to``, likewise (a turned head
            stays turned).
        look_at: ``{head: (3,) point}``: once the targets are reached, the face turns toward the
            point, the joint ``head`` (the preset's ``"head"``, a character's head bone) and its
            parent within their limits (``fabrik3d.solver.look.look_at``; the head alone where it
            has a target, so that it stays on it).
        floor: a floor's height (scene units): no joint goes below it, a foot that meets it lies on
            it; balance: the root shifts so the centre of mass stays over the feet on the ground
            (both ``fabrik3d.solver.ground``).
        effort: the work (``fabrik3d.solver.effort``'s units, >= 0) the solve's searches may do before
            the best pose found so far stands; default None: a frame of a drag (a warm solve whose
            targets moved a small step, ``fabrik3d.solver.steady.drag_frame``) gets ``FRAME_EFFORT``,
            about 20 ms here, and any other solve is unbounded; ``math.inf``: unbounded (a bake's
            frames). With a posing; a plain constrained solve is unbounded unless given one.

    Raises:
        TypeError: naming ``skeleton`` when it is not a ``Skeleton`` (``NotASkeletonError``).
        ValueError: naming the argument, for unknown or non-effector target names (listing the
            valid ones), wrong shapes, NaN or inf values, complex numbers, booleans or strings as
            coordinates, non-unit quaternions, weights <= 0, a bad tolerance, max_iterations or effort.
    """
    options = {k: v for k, v in locals().items() if k not in ("skeleton", "targets", "floor", "balance")}
    allowance = allowed(effort)
    if floor is not None or balance is not False:  # (fabrik3d.solver.ground)
        return grounded(skeleton, targets, solve, floor, balance, options)
    if check_skeleton(skeleton).riders:  # (the core solved, the fingers carried: fabrik3d.solver.riders)
        return solve_riding(skeleton, solve, targets, **options)
    r = rig(skeleton)
    goals = tg.goals(skeleton, targets)
    w = tg.effector_weights(skeleton, weights)
    pole_points = tg.pole_points(skeleton, poles)
    root_goal = None if root_target is None else tg.goal(root_target, "root_target")
    tolerance, max_iterations = checks.settings(tolerance, max_iterations)
    start = _start_pose(skeleton, r, positions, root_goal)
    twist = given_frames(skeleton, rotations, "rotations", positions, root_goal)
    look = None if look_at is None else look_goal(skeleton, look_at)
    relax_twist = given_frames(skeleton, relax_rotations, "relax_rotations", relax_to)
    natural = skeleton.posing if posing is None else check_posing(posing, skeleton)
    if natural:
        relax = None if relax_to is None else list(_start_pose(skeleton, r, relax_to, None, "relax_to"))

        def moved(root: tg.Goal) -> tuple[list[rot.Vec], list[rot.Quat] | None]:
            """The start pose and its frames moved with the root's goal ``root``."""
            turns = given_frames(skeleton, rotations, "rotations", positions, root)
            return _start_pose(skeleton, r, positions, root), turns

        body = WholeBody(skeleton, r, goals, w, pole_points, natural, tolerance, max_iterations, solve_pose, allowance)
        body.looked = set() if look is None else {skeleton.index(n) for n in look_joints(skeleton, look[0])}
        pose, frames, iterations = body.run(start, twist, relax, relax_twist, positions is not None, root_goal, moved)
        return result(skeleton, goals, *looking(skeleton, goals, look, pose, frames), iterations, tolerance)
    root_frame = None if root_goal is None else root_goal.orientation
    pose, frames, iterations = solve_pose(
        skeleton,
        r,
        goals,
        w,
        pole_points,
        root_frame,
        start,
        tolerance,
        max_iterations,
        cold=positions is None,
        twist_from=twist,
        effort=None if allowance is None else Effort(allowance),
    )
    return result(skeleton, goals, *looking(skeleton, goals, look, pose, frames), iterations, tolerance)


def solve_pose(
    skeleton: Skeleton,
    r: Rig,
    goals: dict[int, tg.Goal],
    weights: dict[int, float] | None,
    poles: dict[int, rot.Vec],
    root_frame: rot.Quat | None,
    start: list[rot.Vec],
    tol: float,
    max_it: int,
    cold: bool = False,
    frames: list[rot.Quat] | None = None,
    jump: float | None = None,
    twist_from: list[rot.Quat] | None = None,
    effort: Effort | None = None,
) -> tuple[list[rot.Vec], list[rot.Quat], int]:
    """``solve`` on checked inputs (goals by effector index, the start pose with the bone lengths,
    ``root_frame`` the root's orientation target): the constrained solve or the plain one; returns
    (pose, frames, iterations). ``frames``: the start pose's frames, when it is within the limits
    already (the constrained solve then does not project it again); ``jump``: the natural solve's
    bound on a warm constrained solve's moves, in multiples of its targets' distance
    (``LimitedSolve.run``: the retry from rest within it, least-motion steps beyond it);
    ``twist_from``: frames whose turns about the bones the start's frames keep (``solve``'s
    ``rotations``); ``effort``: the work the constrained solve may do (``fabrik3d.solver.effort``,
    unbounded by default)."""
    constrained = bool(skeleton.constraints or poles) or any(g.orientation is not None for g in goals.values())
    if constrained or root_frame is not None:
        solver = LimitedSolve(r, goals, weights, poles, root_frame, effort)
        return solver.run(start, tol, max_it, cold, frames, jump, twist_from)
    pose, frames, iterations = _solve_plain(skeleton, r, start, goals, weights, tol, max_it)
    return pose, (frames if twist_from is None else r.pose_frames(pose, r.carried_turns(twist_from))), iterations


def _solve_plain(
    skeleton: Skeleton,
    r: Rig,
    start: list[rot.Vec],
    goals: dict[int, tg.Goal],
    weights: dict[int, float] | None,
    tol: float,
    max_it: int,
) -> tuple[list[rot.Vec], list[rot.Quat], int]:
    """The unconstrained solve: one path by the chain algorithm, or the tree."""
    xs, ys, zs = (list(v) for v in zip(*start))
    plan = plain_plan(skeleton, r, tuple(goals), weights)
    if not goals:
        iterations = 0
    elif len(goals) == 1:
        (g,) = goals.values()
        iterations = _solve_path(plan, xs, ys, zs, g.position, tol, max_it)
    else:
        goal = {e: g.position for e, g in goals.items()}
        iterations = _solve_tree(plan, xs, ys, zs, goal, r.rest_rows, tol, max_it)
    pose = list(zip(xs, ys, zs))
    frames = _finish(r, plan, pose, start)
    return pose, frames, iterations


def _start_pose(
    skeleton: Skeleton, r: Rig, positions: Any, root: tg.Goal | None, name: str = "positions"
) -> list[rot.Vec]:
    """The start pose with the skeleton's bone lengths, moved (and turned) with the root's goal."""
    if positions is None:
        if root is None:
            return list(r.rest_start)
        xs, ys, zs = (list(v) for v in zip(*r.rest_rows))
    else:
        xs, ys, zs = checks.columns(positions, name)
        if len(xs) != len(skeleton):
            raise ValueError(f"{name}: expected shape ({len(skeleton)}, 3), got {np.shape(positions)}")
    if root is None:
        return r.bone_pose(xs, ys, zs)
    return r.bone_pose(xs, ys, zs, root.position, root.orientation)


def _solve_path(
    plan: PlainPlan,
    xs: list[float],
    ys: list[float],
    zs: list[float],
    target: tuple[float, float, float],
    tol: float,
    max_it: int,
) -> int:
    """One target: the single-chain algorithm on the path from the root, in place."""
    path = plan.path
    if plan.whole:  # the skeleton is this chain, in index order
        iterations, _ = run_chain(xs, ys, zs, plan.lengths, target, tol, max_it)
        return iterations
    px, py, pz = [xs[j] for j in path], [ys[j] for j in path], [zs[j] for j in path]
    iterations, _ = run_chain(px, py, pz, plan.lengths, target, tol, max_it)
    for k, j in enumerate(path):
        xs[j], ys[j], zs[j] = px[k], py[k], pz[k]
    return iterations


def _solve_tree(
    plan: PlainPlan,
    xs: list[float],
    ys: list[float],
    zs: list[float],
    goal: dict[int, tuple[float, float, float]],
    rest: list[rot.Vec],
    tol: float,
    max_it: int,
) -> int:
    """Several targets: stage 1 with sub-base centroids, stage 2 outward; in place.

    ``rest`` is the rest pose, for a bone whose direction is lost in both stages.
    """
    n = len(xs)
    inward, outward = plan.inward, plan.outward
    qx, qy, qz = [0.0] * n, [0.0] * n, [0.0] * n
    for e, (tx, ty, tz) in goal.items():  # stage 1 puts every effector onto its target
        qx[e], qy[e], qz[e] = tx, ty, tz
    aims = [(e, tx, ty, tz) for e, (tx, ty, tz) in goal.items()]
    sqrt = math.sqrt
    tiny = rot.TINY2
    err = math.inf
    it = 0
    while True:
        new = 0.0  # the largest error
        for e, tx, ty, tz in aims:
            v = sqrt((xs[e] - tx) * (xs[e] - tx) + (ys[e] - ty) * (ys[e] - ty) + (zs[e] - tz) * (zs[e] - tz))
            if v > new:
                new = v
        if it and settled(err, new, tol):  # settled (an unreachable target keeps the others' compromise)
            break
        err = new
        if not (err > tol and it < max_it):
            break
        it += 1
        # Stage 1: effectors on their targets (set above), then inward with centroids at sub-bases.
        for k, run, many in inward:
            if many is None:  # along a chain: each joint at its child's bone length from the child
                px, py, pz = qx[k], qy[k], qz[k]
                for j, c, dc in run:
                    x = xs[j]
                    y = ys[j]
                    z = zs[j]
                    dx = x - px
                    dy = y - py
                    dz = z - pz
                    l2 = dx * dx + dy * dy + dz * dz
                    if l2 < tiny:  # keep the old bone's direction
                        dx, dy, dz = x - xs[c], y - ys[c], z - zs[c]
                        l2 = dx * dx + dy * dy + dz * dz
                    s = dc / sqrt(l2)
                    px += dx * s
                    py += dy * s
                    pz += dz * s
                    qx[j] = px
                    qy[j] = py
                    qz[j] = pz
                continue
            sx = sy = sz = sw = 0.0
            for c, wc, dc in many:
                dx, dy, dz = xs[k] - qx[c], ys[k] - qy[c], zs[k] - qz[c]
                l2 = dx * dx + dy * dy + dz * dz
                if l2 < tiny:  # keep the old bone's direction
                    dx, dy, dz = xs[k] - xs[c], ys[k] - ys[c], zs[k] - zs[c]
                    l2 = dx * dx + dy * dy + dz * dz
                s = dc / sqrt(l2)
                sx += wc * (qx[c] + dx * s)
                sy += wc * (qy[c] + dy * s)
                sz += wc * (qz[c] + dz * s)
                sw += wc
            qx[k], qy[k], qz[k] = sx / sw, sy / sw, sz / sw
        # Stage 2: the root stays; every active joint back at its length from its parent.
        for k, run2 in outward:
            px, py, pz = xs[k], ys[k], zs[k]
            for j, p, dj in run2:
                cx = qx[j]
                cy = qy[j]
                cz = qz[j]
                dx = cx - px
                dy = cy - py
                dz = cz - pz
                l2 = dx * dx + dy * dy + dz * dz
                if l2 < tiny:  # keep the stage-1 bone, or else the rest bone, direction
                    dx, dy, dz = cx - qx[p], cy - qy[p], cz - qz[p]
                    l2 = dx * dx + dy * dy + dz * dz
                    if l2 < tiny:
                        dx, dy, dz = (rest[j][i] - rest[p][i] for i in range(3))
                        l2 = dx * dx + dy * dy + dz * dz
                s = dj / sqrt(l2)
                px += dx * s
                py += dy * s
                pz += dz * s
                xs[j] = px
                ys[j] = py
                zs[j] = pz
    return it


def _finish(r: Rig, plan: PlainPlan, pose: list[rot.Vec], start: list[rot.Vec]) -> list[rot.Quat]:
    """Place the untargeted branches and compute every frame; ``pose`` is updated in place.

    Frames follow the swing rule of ``fabrik3d.frames``. An active joint whose
    first child has no target keeps its start local rotation (the root: its start
    frame); each untargeted branch then moves rigidly with the frame of the joint
    it hangs from (with the position only, for the root).
    """
    start_frames = r.pose_frames(start) if plan.start_frames else []
    rest_local = r.rest_local
    swing_frame = r.swing_frame
    sqrt = math.sqrt
    identity = rot.IDENTITY
    frames: list[rot.Quat] = [identity] * len(pose)
    for j, p, c, how, carried in plan.finish:
        parent_frame = frames[p] if p >= 0 else identity
        if how == SWING:
            # bone_direction(pose[j], pose[c]): bones keep their lengths (>= 1e-9), so it exists
            (ax, ay, az), (bx, by, bz) = pose[j], pose[c]
            vx, vy, vz = bx - ax, by - ay, bz - az
            n = sqrt(vx * vx + vy * vy + vz * vz)
            frames[j] = swing_frame(j, parent_frame, (vx / n, vy / n, vz / n))
        elif how == LEAF:
            frames[j] = rot.mul(parent_frame, rest_local[j])
        elif p < 0:  # KEEP at the root: its start frame
            frames[j] = start_frames[j]
        else:  # KEEP: the start local rotation
            frames[j] = rot.mul(parent_frame, rot.mul(rot.conj(start_frames[p]), start_frames[j]))
        if carried:
            turn = identity if p < 0 else rot.mul(frames[j], rot.conj(start_frames[j]))
            pj, sj = pose[j], start[j]
            for x in carried:
                v = rot.rotate(turn, (start[x][0] - sj[0], start[x][1] - sj[1], start[x][2] - sj[2]))
                pose[x] = (pj[0] + v[0], pj[1] + v[1], pj[2] + v[2])
    return frames
