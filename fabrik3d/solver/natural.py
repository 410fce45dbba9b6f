"""Natural posing: chain reach, stiffness, swivel and relaxing, around the solve of ``fabrik3d.solver.tree``.

A solve of a skeleton with a ``Posing`` (``fabrik3d.model.posing``) runs in four steps:

1. **Relax.** Every stiff joint (stiffness > 0) takes its local rotation from the reference
   pose (the rest pose, or ``relax_to``), the joints below following rigidly: what reaching does
   not need goes back to the pose the user built, so drags do not pile up.
2. **Tiers.** Stiffness levels from the freest up. At a level, each targeted effector's chain
   runs up from its parent through the joints no stiffer than the level, to its reach joint at
   most; stiffer joints below the chain's first free one are held (a stiff wrist keeps its bend
   from the forearm while the arm reaches: locked at its rotation, ``Rig.locked``, relaxing toward
   the reference by at most ``HOLD_RATE`` times the step a solve; free where its target has an
   orientation, or lies near the limb's full length or its root: ``StiffLevels.loosen``). The
   chain's top joint keeps its position and its parent's frame, and the subtree below it is solved
   as a skeleton of its own in that parent's frame (``sub_skeleton``). Chains with the same top are
   solved together, the tops nearest the root first.
3. **Only as much as needed** (``fabrik3d.solver.levels``). When a level leaves a target unreached, or reaches
   it only by a jump (a joint moving more than ``RETRY_JUMP`` times the target's step from where it was: the
   drag's last pose), the next level's joints are freed: the whole next level is solved, and then the share of
   their turn (from the relaxed pose) is bisected: the least share with which the freer joints reach without a
   jump (if every pose that reaches jumps, the one that moves the least). A level whose chains are too short for
   a target is passed over (its joints count as free at the next), and a chain too short at the first level is
   not solved there (the share solves it again). A probe whose chain would be pulled nearly straight gets few
   iterations (slow to converge there: a larger share is probed if they do not reach), any other probe a bounded
   number, and the first probe leaves a margin. A chain does not jump (``RETRY_JUMP``): stuck or jumping, it
   takes the least motion that reaches, else a stiffer level joins (or, at the last, the jump stands). A pose
   that still jumps gets two more tries, the body's least motion and the levels unrelaxed
   (``fabrik3d.solver.steady``), the one moving least kept; else it goes part of the way (``steady.partway``):
   the limb swings round over the next frames, off its target meanwhile. A frame of a drag does these searches
   (the share's probes and retries, the least motion, the guard) only while its allowance of work lasts
   (``fabrik3d.solver.effort``); then the best pose found stands.
4. **Swivel.** A limb with a swivel (or a pole) turns its hinge's joint (elbow, knee) about the
   line from the hinge's parent to its child toward the swivel's direction, which moves no
   target; the turn is kept when the joint limits let the targets stay reached. A limb that
   falls short of its target runs straight at it and is not swivelled. An arm's swivel (a limb
   whose chain a stiffer level lengthens) is gradual: its hinge moves at most ``SWIVEL_RATE``
   times the target's step per solve, so a drag brings the elbow round without a jump; where a
   level's pose jumps, it is solved once more unswivelled, kept if that does not jump.

Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from fabrik3d import rotations as rot
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.effort import FRAME_EFFORT, Effort
from fabrik3d.solver.levels import ORIENTATION_STIFFNESS, StiffLevels
from fabrik3d.solver.rig import Rig, rig
from fabrik3d.solver.steady import drag_frame, steadied
from fabrik3d.solver.subtree import forward, local, sub_skeleton
from fabrik3d.solver.swivel import Swivelling

# Iterations a foot's orientation hint gets before the foot gives way to the limits.
HINT_ITERATIONS = 12
# A chain whose solve moves a joint more than this many times the target's distance from its effector,
# or stalls, takes the least-motion steps' pose if it reaches; it retries from the rest pose only within
# this bound (``LimitedSolve.run``'s ``jump``); the last level's chains too (an arm at its shoulder's
# limit flipped its elbow 40 cm for a hand's 1.5 cm step). A level's pose that moves a joint more than
# this many times the farthest target's distance from its effector at the start (its step in a drag)
# counts as a jump: a stiffer level joins (``far``; not with poles: the user drags them to turn a limb).
RETRY_JUMP = 3.0
# A held joint (a wrist: ``NaturalSolve.held``) relaxes toward the pose the user built by at most the
# turn that moves its effector this many times its step in a drag per solve (the arm need not jump).
HOLD_RATE = 1.0

Solver = Callable[..., Any]
T = TypeVar("T")


class NaturalSolve(StiffLevels, Swivelling):
    """One natural solve (module docstring) on rig ``r`` of ``skeleton``; ``solve`` is the
    plain solve (``fabrik3d.solver.tree.solve``) used for each chain's subtree."""

    def __init__(
        self,
        skeleton: Skeleton,
        r: Rig,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        poles: dict[int, rot.Vec],
        posing: Posing,
        solve: Solver,
        warm: bool = True,
        effort: Effort | None = None,
    ) -> None:
        self.sk, self.r, self.goals, self.weights, self.poles, self.posing = skeleton, r, goals, weights, poles, posing
        self.solve = solve
        # (from a pose given, a frame of a drag, where a jump may be spread over frames: ``steady.partway``;
        # else from the rest pose, a placement, which reaches whatever moves)
        self.warm = warm
        self.effort = effort  # (the frame's work, shared by its solves; None: ``run`` sets it)
        names = skeleton.names
        self.stiffness = [posing.stiffness.get(name, 0.0) for name in names]
        root = r.order[0]
        self.stop = {e: skeleton.index(posing.reach[names[e]]) if names[e] in posing.reach else root for e in goals}
        self.swivels = {
            e: (skeleton.index(posing.swivel[names[e]].frame), posing.swivel[names[e]])
            for e in goals
            if names[e] in posing.swivel
        }
        self.hinges: dict[int, int | None] = {}
        self.limbs: dict[int, tuple[int, list[int], int] | None] = {}
        self.stiffened()
        self.swivelling = True  # (off: the limbs keep the side their solve left them on)
        self.carrying = False  # (whether this solve keeps the turns about the bones it was given: ``run``)
        self.iterations = 0
        self.kept: list[rot.Quat] = []  # (``run``'s)
        # (top, effectors) -> the parent's frame and position, and the targets, of its last solve
        self.done: dict[tuple[int, tuple[int, ...]], Any] = {}
        self.solves: dict[tuple[Any, ...], Any] = {}  # (each chain's solve by its inputs: ``run_sub``)
        self.deferred: set[int] = set()  # (effectors whose chains the first level left unsolved)
        self.sub_rig: Rig = r  # (the rig of the subtree being solved, its held joints locked: ``solve_below``)

    # -- the steps ---------------------------------------------------------------------------
    def run(
        self,
        start: list[rot.Vec],
        relax: list[rot.Vec] | None,
        tol: float,
        max_it: int,
        twist: list[rot.Quat] | None = None,
        relax_twist: list[rot.Quat] | None = None,
        kept: list[rot.Quat] | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat], int]:
        """The natural pose from ``start`` (relaxing toward ``relax``, ``None``: the rest pose);
        ``twist`` and ``relax_twist``: frames whose turns about the bones the start's and the
        relaxed pose's frames keep (``Rig.carried_turns``); ``kept``: the world frames the feet keep
        (None: the start's; the hinge's are from before its tilt); returns (pose, frames, iterations).
        Without an effort given, a drag's frame (``steady.drag_frame``) gets ``FRAME_EFFORT``, else none."""
        r = self.r
        self.tol, self.max_it = tol, max_it
        whole = LimitedSolve(r, self.goals, self.weights, {}, None)  # (its projection onto the limits)
        if twist is not None:
            whole.carry(twist)
        relaxed_turns = relax_twist is not None and any(r.carried_turns(relax_twist))
        self.carrying = bool(whole.twists or whole.leaves) or relaxed_turns  # (no turns: the plain solve)
        reference = reference_frames(r, relax, relax_twist)
        pose, frames = whole.project(start, r.pose_frames(start, (whole.twists, whole.leaves)))
        self.start_pose, self.start_frames = pose, frames
        self.kept = frames if kept is None else kept
        self.step = self.error(pose)
        # (less the tolerance at either end, the effector's own step may fall short of the target's by
        # as much; but at least half the step: a step of a few tolerances moves the limb that much)
        # (and, for the hinge of a limb pulled straight, the swing that forces across it: ``straightening``,
        # ``StiffLevels.jumps``; the body's other joints get the step's bar alone)
        self.forced, self.forced_joints = self.straightening(pose)
        self.far = (
            math.inf if RETRY_JUMP is None or self.poles else RETRY_JUMP * max(self.step - 2.0 * tol, 0.5 * self.step)
        )
        self.bar = (
            math.inf if math.isinf(self.far) else RETRY_JUMP * self.step + self.forced
        )  # (the whole step: ``share``)
        self.loosen(pose)
        if self.effort is None:
            self.effort = Effort(FRAME_EFFORT if drag_frame(self) else math.inf)
        self.turning = self.step <= tol and any(g.orientation is not None for g in self.goals.values())
        start = pose, frames
        pose, frames = self.levelled(*start, reference)
        misturned = [] if self.effort.spent else self.misturned(pose, frames)
        if misturned:  # (a held wrist kept the elbow from its side: once more, the wrist free)
            for j in misturned:
                self.stiffness[j] = 0.0
            self.stiffened()
            self.done = {}
            pose, frames = self.levelled(*start, reference)
        pose, frames = steadied(self, start, (pose, frames), RETRY_JUMP)
        return pose, frames, self.iterations

    def levelled(
        self, pose: list[rot.Vec], frames: list[rot.Quat], reference: list[rot.Quat]
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Steps 1 to 3 (module docstring) from the projected start ``pose`` and ``frames``."""
        r, tol = self.r, self.tol
        stiff = {j: local(r, reference, j) for j in r.order[1:] if self.stiffness[j] > 0.0}
        for j, e in self.holding.items():  # (a held joint relaxes gradually: its effector moves at most the step)
            now, rate = local(r, frames, j), HOLD_RATE * self.step / max(rot.dist(pose[j], pose[e]), tol)
            angle = rot.angle_between(now, stiff[j])
            stiff[j] = stiff[j] if angle <= rate else rot.slerp(now, stiff[j], rate / angle)
        relaxed = forward(r, pose, frames, stiff)
        self.deferred = self.beyond_first_level(relaxed[0])
        pose, frames = self.tier(*relaxed, self.levels[0], skip=self.deferred)
        if self.reached(pose, frames) and self.jumps(pose) and not self.effort.spent:  # (a jump: again, unswivelled)
            still = self.unswivelled(lambda: self.tier(*relaxed, self.levels[0], skip=self.deferred))
            if self.reached(*still) and not self.jumps(still[0]):
                pose, frames = still
        for below, level in zip(self.levels, self.levels[1:]):
            if (self.reached(pose, frames) and not self.jumps(pose)) or self.effort.spent:
                break
            if self.turning and level > ORIENTATION_STIFFNESS and self.reached(pose):
                break  # (a turn in place recruits no torso: the limb turns the hand as far as it can)
            if level != self.levels[-1] and not self.within_length(pose, level):
                continue  # (too short at this level: its joints join the next one's, wholly free)
            pose, frames = self.share(pose, frames, below, level)
        # (every frame is by the solver's rules, limits held: the start projected, the stiff joints
        # turned to the projected reference's rotations, each chain's subtree solved by the
        # constrained solve, the rest carried rigidly; a last projection moved nothing, 1e-12)
        return pose, frames

    def tier(
        self,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        level: float,
        within: set[int] | None = None,
        max_it: int | None = None,
        skip: set[int] | None = None,
        only: set[int] | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Solve each chain of the joints no stiffer than ``level`` (those with a joint ``within``,
        if given: the others are solved already), tops nearest the root first (each in ``max_it``
        iterations at most, if given); not the chains whose effectors are all in ``skip``, and
        with ``only``, only those whose effectors are all in it."""
        groups: dict[int, list[int]] = {}
        held: dict[int, set[int]] = {}
        for e in self.goals:
            chain = self.chain(e, lambda j: self.stiffness[j] <= level)
            if chain and (within is None or not within.isdisjoint(chain)):
                groups.setdefault(chain[-1], []).append(e)
                held.setdefault(chain[-1], set()).update(self.held(chain, level))
        pose, frames = list(pose), list(frames)
        for top in sorted(groups, key=self.r.position_in_order):
            if (skip and skip.issuperset(groups[top])) or (only is not None and not only.issuperset(groups[top])):
                continue
            self.solve_below(top, groups[top], pose, frames, max_it, held[top])
        return pose, frames

    def chain(self, e: int, free: Callable[[int], bool]) -> list[int]:
        """The joints of effector ``e``'s chain: up from its parent, to its reach joint at most, through
        the joints that are ``free`` and, below the first of them, those that are not (held: a wrist
        keeps its bend while the arm reaches, ``held``); empty if none is free."""
        out: list[int] = []
        j, turns = self.r.parents[e], False
        while j >= 0:
            if free(j):
                turns = True
            elif turns:
                break
            out.append(j)
            if j == self.stop[e]:
                break
            j = self.r.parents[j]
        return out if turns else []

    def held(self, chain: list[int], level: float) -> list[int]:
        """The joints of ``chain`` stiffer than ``level``: held as they are while the others turn."""
        return [j for j in chain if self.stiffness[j] > level]

    def unswivelled(self, solve: Callable[[], T]) -> T:
        """``solve()`` with no limb swivelled."""
        self.swivelling = False
        try:
            return solve()
        finally:
            self.swivelling = True

    def solve_below(
        self,
        top: int,
        effectors: list[int],
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        max_it: int | None = None,
        held: set[int] | None = None,
    ) -> None:
        """Solve the subtree of ``top`` for ``effectors`` in its parent's frame (in ``max_it``
        iterations at most, if given), the joints ``held`` kept at their rotations relative to their
        parents, then swivel; in place. A subtree solved before for the same effectors, whose
        parent and held joints have not moved since, is left."""
        r = self.r
        p = r.parents[top]
        fp, origin = (rot.IDENTITY, (0.0, 0.0, 0.0)) if p < 0 else (frames[p], pose[p])
        key = (top, tuple(effectors))
        locks = {j: local(r, frames, j) for j in sorted(held or ())}
        if self.done.get(key) == (fp, origin, tuple(pose[e] for e in effectors), locks):
            return
        sub, idx = sub_skeleton(self.sk, r, top)
        at = {j: k for k, j in enumerate(idx)}
        self.sub_rig = rig(sub).locked({at[j]: q for j, q in locks.items()})
        # (the pose and its frames in the parent's frame: within the limits, as every pose here is,
        # so the constrained solve starts from them as they are, without projecting them again)
        start = [rot.rotate_inv(fp, _sub(pose[j], origin)) for j in idx]
        to_local = rot.conj(fp)
        start_frames = [rot.mul(to_local, frames[j]) for j in idx]
        goals, hinted = {}, {}
        for e in effectors:
            g = self.goals[e]
            turn = None if g.orientation is None else rot.mul(rot.conj(fp), g.orientation)
            goals[at[e]] = Goal(rot.rotate_inv(fp, _sub(g.position, origin)), turn, g.weight)
            limb = self.limb(e)
            if g.orientation is None and limb is not None and limb[2] != e:
                # a foot keeps the orientation it had (flat on the floor, say) where the limits let it
                hinted[at[e]] = goals[at[e]]._replace(orientation=rot.mul(rot.conj(fp), self.kept[e]))
        weights = None if self.weights is None else {at[e]: self.weights.get(e, 1.0) for e in effectors}
        local_pose, local_frames = (None, None)
        if hinted:
            local_pose, local_frames = self.run_sub(
                sub,
                {**goals, **hinted},
                weights,
                start,
                HINT_ITERATIONS,
                start_frames,
                twist_from=self.twisted(start_frames),
            )
            if max(rot.dist(local_pose[k], g.position) for k, g in goals.items()) > self.tol:
                # (the limits forbid it: the feet give way, from where the hint left them)
                start, start_frames, local_pose = local_pose, local_frames, None
        if local_pose is None:  # (a chain must not jump: RETRY_JUMP)
            jump = RETRY_JUMP if p >= 0 else None
            local_pose, local_frames = self.run_sub(
                sub, goals, weights, start, max_it, start_frames, jump, self.twisted(start_frames)
            )
        goals = {**goals, **hinted}
        for e in effectors:
            if rot.dist(local_pose[at[e]], goals[at[e]].position) > self.tol:
                continue  # (a limb that falls short runs straight at its target: no swivel to choose)
            bend = self.bend(e, fp, origin, pose, frames) if self.swivelling else None
            if bend is not None:
                gradual = e in self.gradual
                # (a limb with a held joint swivels back from the drift of its solve: ``swivel``'s ``prior``)
                prior = self.miss(e, self.start_pose, bend) if gradual and e in self.holding.values() else None
                local_pose, local_frames = self.swivel(
                    sub, goals, weights, at, e, rot.rotate_inv(fp, bend), local_pose, local_frames, gradual, prior
                )
        if hinted:  # (a hint aims a foot's bone; its frame keeps the swing rule: no twist from it)
            sr = self.sub_rig
            local_frames = list(local_frames)
            for k in hinted:
                local_frames[k] = rot.mul(local_frames[sr.parents[k]], sr.rest_local[k])
        for k, j in enumerate(idx):
            pose[j] = _add(origin, rot.rotate(fp, local_pose[k]))
            frames[j] = rot.mul(fp, local_frames[k])
        self.done[key] = (fp, origin, tuple(pose[e] for e in effectors), locks)

    def twisted(self, frames: list[rot.Quat]) -> list[rot.Quat] | None:
        """``frames``, whose turns about the bones a sub-solve keeps, when this solve carries them
        (it was given rotations); else None (every frame by the swing rule)."""
        return frames if self.carrying else None

    def run_sub(
        self,
        sub: Skeleton,
        goals: dict[int, Goal],
        weights: dict[int, float] | None,
        start: list[rot.Vec],
        max_it: int | None = None,
        start_frames: list[rot.Quat] | None = None,
        jump: float | None = None,
        twist_from: list[rot.Quat] | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The plain solve of a subtree's skeleton from ``start`` (its bone lengths kept), or from
        ``start`` with its frames ``start_frames`` as they are (a pose within the limits with the
        bone lengths: the natural solve's own poses are), on the rig ``solve_below`` made for it
        (its held joints locked); ``jump`` and ``twist_from``: ``LimitedSolve.run``'s."""
        sr = self.sub_rig
        if start_frames is None:
            xs, ys, zs = (list(v) for v in zip(*start))
            start = sr.bone_pose(xs, ys, zs)
        max_it = min(max_it or self.max_it, self.max_it)
        # (a solve asked again from the same start, as a level's retries and the guard's ask: the same pose)
        key = (sr, tuple(goals.items()), None if weights is None else tuple(weights.items()), tuple(start), max_it)
        key += (jump, None if start_frames is None else tuple(start_frames), twist_from and tuple(twist_from))
        got = self.solves.get(key)
        if got is None:
            args = (sub, sr, goals, weights, {}, None, start, self.tol, max_it, False, start_frames, jump)
            args += (twist_from, self.effort)
            got = self.solves[key] = self.solve(*args)
        self.iterations = max(self.iterations, got[2])  # (each chain's solve is bounded alike)
        return list(got[0]), list(got[1])


def reference_frames(r: Rig, relax: list[rot.Vec] | None, twist: list[rot.Quat] | None = None) -> list[rot.Quat]:
    """The frames of the pose ``relax`` projected onto the limits (``None``: the rest pose's,
    made once per rig), keeping the turns about the bones of ``twist`` where given. The last
    pose's are kept on the rig: a drag relaxes toward the same pose the user built, frame after
    frame."""
    if relax is None:
        return r.cached(("natural-rest-frames",), lambda: reference_frames(r, r.rest_start))
    slot = r.cached(("natural-relax-frames",), lambda: [((), [])])
    key, frames = slot[0]  # (one item read and written whole: a bake's thread may solve meanwhile)
    wanted = (tuple(relax), None if twist is None else tuple(twist))
    if key != wanted:
        projection = LimitedSolve(r, {}, None, {}, None)
        if twist is None:
            frames = projection.project(relax, r.pose_frames(relax))[1]
        else:
            projection.carry(twist)
            frames = projection.project(relax, r.pose_frames(relax, (projection.twists, projection.leaves)))[1]
        slot[0] = (wanted, frames)
    return frames
