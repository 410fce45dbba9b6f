"""How a stiffer level joins a natural solve (``fabrik3d.solver.natural``): the least share of its turn.

``StiffLevels`` is a part of ``fabrik3d.solver.natural.NaturalSolve``. When the freer joints leave a
target unreached, or reach it only by a jump (a joint moving more than ``far`` from where it was at
the start of the solve: ``fabrik3d.solver.natural.RETRY_JUMP`` times the target's step), the
next level's joints are freed: the whole level is solved, and then the share of their turn (from the
relaxed pose) is bisected, the least share with which the freer joints reach without a jump.
Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from fabrik3d import rotations as rot
from fabrik3d.model.targets import Goal
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.effort import Effort
from fabrik3d.solver.rig import Rig
from fabrik3d.solver.subtree import forward, local

# A held joint (a wrist) turns freely in a solve whose target lies nearer its limb's root (the
# shoulder) than the first share of the limb's length held at its bend, or beyond the second:
# ``StiffLevels.loosen``.
LOOSE_REACH = (0.4, 0.95)
# A solve that leaves a held limb turned more than this (radians, 60 deg) from its hinge's side is
# solved once more with its held joint free (``StiffLevels.misturned``).
MISTURNED = math.radians(60.0)
# An orientation target counts as reached within this angle (radians, 1 deg) when the levels choose
# whether a stiffer one must join.
ORIENTATION_REACHED = 0.0175
# A turn in place (the targets' positions reached at the start, an orientation asked for: the web's
# R-turn or ring) frees stiff joints up to this stiffness (the clavicles), never the torso: a hand
# turned past what its arm allows stays turned as far as the arm can, the body still (issue 29: such
# a turn bent the spine). A solve that also moves a target may still bend the torso for its
# orientation (a pose reachable only so).
ORIENTATION_STIFFNESS = 0.5
# Probes of the share of a stiffer level's turn (a first guess, then halvings).
BISECTIONS = 4
# Where every pose that reaches jumps, a stiffer level's pose is taken over the freer levels' only if
# it moves the joints less than this share as far, or within RETRY_JUMP times the whole step: an arm
# straightening onto a target at its full length moves its elbow several times the hand's step
# whatever joins, and the spine would spare little.
STIFFER_GAIN = 0.75
# A probe of a share of a stiffer level's turn that leaves an unreached target within this share of
# its chain's length from the end of the chain's reach pulls the chain nearly straight, where the
# solve converges slowly: it gets STRAINED_ITERATIONS at most (if they do not reach, a larger share
# is probed). The first probe aims at that margin.
REACH_SLACK = 0.02
STRAINED_ITERATIONS = 10
# Any other probe gets this many at most: one that crawls toward its target (the limits fight the
# reach) counts as not reaching, and a larger share is probed.
PROBE_ITERATIONS = 20


def hinge_far(far: float, forced: float) -> float:
    """How far (scene units) a hinge that straightening forces (``Swivelling.straightening``) may move
    in a solve whose other joints may move ``far``: the forced swing lies across the limb, about at a
    right angle to the move it shares with the limb's end, so the two add as sides of a right angle."""
    return math.hypot(far, forced)


class StiffLevels:
    """The levels and share steps of a natural solve (its ``r``, ``goals``, ``tol``, ``stiffness``, the
    start's pose and frames, ``far``, ``bar``, ``deferred``, and its ``chain``, ``held``, ``limb``,
    ``tier``, ``reached`` and ``shortfall``): ``stiffened`` sets ``levels``, ``gradual`` and ``holding``,
    ``loosen`` frees held joints for a solve."""

    r: Rig
    goals: dict[int, Goal]
    tol: float
    stiffness: list[float]
    levels: list[float]
    start_pose: list[rot.Vec]
    start_frames: list[rot.Quat]
    far: float
    forced: float
    forced_joints: set[int]
    bar: float
    deferred: set[int]
    poles: dict[int, rot.Vec]
    stop: dict[int, int]
    gradual: set[int]
    holding: dict[int, int]
    effort: Effort  # (the frame's work left: ``fabrik3d.solver.effort``)

    # (the natural solve's own, ``fabrik3d.solver.natural.NaturalSolve``)
    chain: Callable[[int, Callable[[int], bool]], list[int]]
    held: Callable[[list[int], float], list[int]]
    limb: Callable[[int], tuple[int, list[int], int] | None]
    bend: Callable[..., rot.Vec | None]
    miss: Callable[[int, list[rot.Vec], rot.Vec], float | None]
    tier: Callable[..., tuple[list[rot.Vec], list[rot.Quat]]]
    unswivelled: Callable[[Callable[[], tuple[list[rot.Vec], list[rot.Quat]]]], tuple[list[rot.Vec], list[rot.Quat]]]

    def stiffened(self) -> None:
        """The levels, the gradual swivels and the held joints, from ``stiffness``."""
        on_chains = {j for e in self.goals for j in self.chain(e, lambda _: True)}
        self.levels = sorted({self.stiffness[j] for j in on_chains}) or [0.0]
        # (the unpoled effectors whose first level's chains a stiffer level lengthens: their swivel is gradual)
        first = self.levels[0]
        self.gradual = {
            e
            for e in self.goals
            if e not in self.poles and self.chain(e, lambda j: self.stiffness[j] <= first)[-1:] != [self.stop[e]]
        }
        # (the stiff joints of the first level's chains below their free joints, each with its effector:
        # held as they are while the freer joints reach, ``held``)
        self.holding = {
            j: e for e in self.goals for j in self.held(self.chain(e, lambda j: self.stiffness[j] <= first), first)
        }

    def loosen(self, pose: list[rot.Vec]) -> None:
        """Free for this solve the held joints whose effector's target has an orientation or whose limb has
        a pole (the user turns the hand, or the elbow, and the wrist serves), and those of
        each limb (``limb``) whose target lies nearer the hinge's parent (the shoulder) than the first of
        ``LOOSE_REACH`` times the limb's length held at its bend (hinge parent to hinge, hinge to the
        limb's end in ``pose``), or beyond the second. Near its full length a held limb's hinge swings
        several times the end's step (the elbow straightens or leaves the line); near its root the
        hinge folds to its limit. There the held joint helps (a wrist bends to touch the face), and it
        holds again, relaxing back (``HOLD_RATE``), once the target is within."""
        loose = []
        near, far = LOOSE_REACH
        for j, e in self.holding.items():
            g, got = self.goals[e], self.limb(e)
            if g.orientation is not None or e in self.poles:  # (a hand turned, an elbow poled: the wrist serves)
                loose.append(j)
            elif got is not None:
                a, m, end = (pose[k] for k in (got[0], got[1][0], got[2]))
                length = rot.dist(m, a) + rot.dist(end, m)  # (held at its bend)
                target = rot.add(end, rot.sub(g.position, pose[e]))  # (the limb's end follows the effector)
                if not near * length <= rot.dist(target, a) <= far * length:
                    loose.append(j)
        if loose:
            for j in loose:
                self.stiffness[j] = 0.0
            self.stiffened()

    def misturned(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> list[int]:
        """The held joints of the limbs that ``pose`` leaves turned more than ``MISTURNED`` from the side
        their hinge bends toward (``bend``, ``miss``) where the start left them within it, or straight:
        from a straight arm, a hand brought along the arm's own line bends the elbow up, and the held
        wrist's limits keep the swivel from bringing it down. (A drag's limb already off its side comes
        round gradually: it is left to the swivel.)"""
        out = []
        for j, e in self.holding.items():
            if e in self.poles:
                continue
            side = self.bend(e, rot.IDENTITY, (0.0, 0.0, 0.0), pose, frames)
            before = self.bend(e, rot.IDENTITY, (0.0, 0.0, 0.0), self.start_pose, self.start_frames)
            miss = None if side is None else self.miss(e, pose, side)
            was = None if before is None else self.miss(e, self.start_pose, before)
            if miss is not None and miss > MISTURNED and (was is None or was <= MISTURNED):
                out.append(j)
        return out

    def share(
        self, pose: list[rot.Vec], frames: list[rot.Quat], below: float, level: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """The least share of level ``level``'s turn with which the joints up to ``below`` reach
        without a jump (``jumps``); if every pose that reaches jumps, the one that moves the least (the
        whole level solved once more without swivelling its limbs among them), unless ``pose`` reaches
        and that one moves a joint beyond ``bar`` (``RETRY_JUMP`` times the whole step) and no less than
        ``STIFFER_GAIN`` times as far as ``pose`` does.

        The whole level is solved from the last frame's pose (again from this one's if that does not
        reach); then the share is bisected; the first probe is where the reach's slack (the distance from each
        unreached effector's chain top to its target, beyond the chain's length) runs out if it
        shrinks linearly with the share. Only the chains below the freed joints are solved again.
        The retries and probes stop once the frame's ``effort`` is spent (``fabrik3d.solver.effort``):
        the least share found so far stands.
        """
        r = self.r
        freed = [j for j in r.order[1:] if below < self.stiffness[j] <= level]
        # (the whole level solved warm: the stiff joints of its chains as they started, the others
        # relaxed, so that a drag's pose stays continuous from frame to frame)
        on_chains = {j for e in self.goals for j in self.chain(e, lambda j: self.stiffness[j] <= level)}
        below_freed = {k for j in freed if j in on_chains for k in r.subtree(j)}
        warm = {k: local(r, self.start_frames, k) for k in below_freed}
        full_pose, full_frames = self.tier(*forward(r, pose, frames, warm), level, below_freed)
        if not self.reached(full_pose, full_frames):
            if self.deferred:  # (the chains left to a stiffer level run straight at their targets)
                pose, frames = self.tier(pose, frames, self.levels[0], only=self.deferred)
                self.deferred = set()
            if self.within_length(pose, level) and not self.effort.spent:  # (stuck from the last pose: again, relaxed)
                again = self.tier(pose, frames, level, below_freed)
                full_pose, full_frames = min(((full_pose, full_frames), again), key=lambda pf: self.shortfall(*pf))
            if not self.reached(full_pose, full_frames):
                return min(((pose, frames), (full_pose, full_frames)), key=lambda pf: self.shortfall(*pf))
        self.deferred = set()  # (the full level reached: it solved them)
        before = {j: local(r, frames, j) for j in freed}
        after = {j: local(r, full_frames, j) for j in freed}

        def at(t: float) -> tuple[list[rot.Vec], list[rot.Quat]] | None:
            """The pose with share ``t`` of the turn (``None``: a target lies beyond its chain's
            length from the chain's top there, so that no solve reaches it). A probe that would
            pull a chain nearly straight (``REACH_SLACK``) gets ``STRAINED_ITERATIONS`` at most,
            any other ``PROBE_ITERATIONS``."""
            turned = forward(r, full_pose, full_frames, {j: rot.slerp(before[j], after[j], t) for j in freed})
            if not self.within_length(turned[0], below):
                return None
            strained = not self.within_length(turned[0], below, REACH_SLACK)
            # (the freer joints start as the full level left them: continuous from frame to frame)
            return self.tier(*turned, below, below_freed, STRAINED_ITERATIONS if strained else PROBE_ITERATIONS)

        best = (full_pose, full_frames)
        # (every pose that reaches, for the one that moves the least if each jumps)
        reaching = [best, (pose, frames)] if self.reached(pose, frames) else [best]
        lo, hi = 0.0, 1.0
        probe = self.slack_share(pose, forward(r, pose, frames, after)[0], below)
        for _ in range(BISECTIONS):
            if self.effort.spent:
                break  # (the frame's work is spent: the least share found so far)
            mid = probe if probe is not None and lo < probe < hi else 0.5 * (lo + hi)
            probe = None
            candidate = at(mid)
            if candidate is not None and self.reached(*candidate):
                reaching.append(candidate)
                if not self.jumps(candidate[0]):
                    hi, best = mid, candidate
                    continue
            lo = mid
        if self.jumps(best[0]):  # (every pose jumps: the whole level again from the last frame's, unswivelled)
            if not self.effort.spent:
                still = self.unswivelled(lambda: self.tier(*forward(r, pose, frames, warm), level, below_freed))
                if self.reached(*still):
                    reaching.append(still)
            least = min(reaching, key=lambda pf: self.moved(pf[0]))
            spared = self.moved(least[0])
            if self.reached(pose, frames) and spared > max(self.bar, STIFFER_GAIN * self.moved(pose)):
                return pose, frames  # (the stiffer joints would spare little: the freer levels' pose)
            return least
        return best

    def moved(self, pose: list[rot.Vec]) -> float:
        """The largest distance of a joint of ``pose`` from where it was at the start."""
        return LimitedSolve.moved(self.start_pose, pose)

    def jumps(self, pose: list[rot.Vec], far: float | None = None) -> bool:
        """Whether a joint of ``pose`` lies further from where it was at the start than ``far`` (by
        default ``self.far``; a hinge that straightening forces, ``forced_joints``: ``hinge_far`` of
        ``far`` and ``forced``, the swing forced)."""
        far = self.far if far is None else far
        start, extra = self.start_pose, hinge_far(far, self.forced)
        return any(
            rot.dist(p, q) > (extra if j in self.forced_joints else far) for j, (p, q) in enumerate(zip(start, pose))
        )

    def within_length(self, pose: list[rot.Vec], level: float, slack: float = 0.0) -> bool:
        """Whether every unreached target lies within its chain's length (at ``level``), less the
        share ``slack`` of it (``chain_span``), of the chain's top: if not, no solve at this level
        can reach it (with ``slack``: without straining the chain straight)."""
        for e, g in self.goals.items():
            if rot.dist(pose[e], g.position) <= self.tol:
                continue
            top, length, _ = self.chain_span(e, level, slack)
            if rot.dist(pose[top], g.position) > length + self.tol:
                return False
        return True

    def chain_span(self, e: int, level: float, slack: float = 0.0) -> tuple[int, float, int]:
        """Effector ``e``'s chain at ``level``: its top joint, its length from the top to ``e``
        (scene units) less the share ``slack`` of it (a chain of one bone reaches its length only,
        and gets none) and its number of joints."""
        chain = self.chain(e, lambda j: self.stiffness[j] <= level)
        top = chain[-1] if chain else e
        length = sum(self.r.lengths[j] for j in [e, *chain[:-1]])
        return top, (1.0 - slack) * length if len(chain) > 1 else length, len(chain)

    def slack_share(self, zero: list[rot.Vec], one: list[rot.Vec], level: float) -> float | None:
        """Where the slack of the unreached effectors' chains (at ``level``) runs out between the
        poses ``zero`` and ``one``, if it shrinks linearly (``None`` if it does not shrink)."""
        share = None
        for e, g in self.goals.items():
            if rot.dist(zero[e], g.position) <= self.tol:
                continue
            top, length, joints = self.chain_span(e, level, REACH_SLACK)  # (where a probe is solved: ``share``)
            s0 = rot.dist(zero[top], g.position) - length
            s1 = rot.dist(one[top], g.position) - length
            if joints == 1 and s0 < 0.0:  # one bone reaches its length only: too near counts
                s0, s1 = -s0, -s1
            if s0 <= 0.0 or s1 >= s0:
                return None  # (held off by limits, not by reach: no estimate)
            share = max(share or 0.0, min(1.0, s0 / (s0 - s1)))
        return share

    def beyond_first_level(self, pose: list[rot.Vec]) -> set[int]:
        """The effectors whose targets lie beyond their chains' length at the first level but within
        it at a stiffer one: their solve at the first level would be thrown away (a stiffer level's
        share solves their chains again from the start), so it is left to that level."""
        out: set[int] = set()
        for e, g in self.goals.items():
            top, length, _ = self.chain_span(e, self.levels[0])
            if rot.dist(pose[top], g.position) <= length + self.tol:
                continue
            for level in self.levels[1:]:
                top, length, _ = self.chain_span(e, level)
                if rot.dist(pose[top], g.position) <= length + self.tol:
                    out.add(e)
                    break
        return out

    # -- measures ----------------------------------------------------------------------------
    def error(self, pose: list[rot.Vec]) -> float:
        """The largest distance of a targeted effector from its target."""
        return max((rot.dist(pose[e], g.position) for e, g in self.goals.items()), default=0.0)

    def shortfall(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> tuple[float, float]:
        """How far a pose falls short: (the largest distance beyond the tolerance, the sum of the
        orientation targets' angles beyond ``ORIENTATION_REACHED``)."""
        turned = sum(
            max(0.0, rot.angle_between(frames[e], g.orientation) - ORIENTATION_REACHED)
            for e, g in self.goals.items()
            if g.orientation is not None
        )
        return max(0.0, self.error(pose) - self.tol), turned

    def reached(self, pose: list[rot.Vec], frames: list[rot.Quat] | None = None) -> bool:
        """Every target within the tolerance, and (with ``frames``) every orientation target within
        ``ORIENTATION_REACHED``: a stiffer level joins the reach for an orientation too (for a turn in
        place, up to ``ORIENTATION_STIFFNESS``)."""
        if self.error(pose) > self.tol:
            return False
        return frames is None or all(
            rot.angle_between(frames[e], g.orientation) <= ORIENTATION_REACHED
            for e, g in self.goals.items()
            if g.orientation is not None
        )
