"""Drags that flipped an elbow or swung the head (issue 29's held wrists brought them back into the
chained drags of issue 14's bar): each replayed from the pose the drags had reached when the reach
began (tests/solver/data/drag_states.json), with the fix switched off too (the test can fail). Each
frame is solved without a drag frame's allowance (``effort=math.inf``, ``nt.unbounded``): these test
the rules themselves; tests/solver/test_effort.py tests the allowance."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import naturalness as nt
from helpers.limits import violations

import fabrik3d
from fabrik3d.model.targets import Goal
from fabrik3d.solver import levels, natural, steady
from fabrik3d.solver.constrained import solve as constrained
from fabrik3d.solver.natural import NaturalSolve
from fabrik3d.solver.rig import rig

STATES = json.loads((Path(__file__).parent / "data" / "drag_states.json").read_text())["states"]


@pytest.fixture(scope="module")
def sk() -> fabrik3d.Skeleton:
    return nt.humanoid()


def replay(sk: fabrik3d.Skeleton, name: str) -> list[float]:
    """The drag of state ``name``: each frame's largest move of another joint over the hand's step."""
    state = STATES[name]
    placed = {h: np.array(v) for h, v in state["placed"].items()}
    _, ok, ratios = nt.one_drag(
        nt.unbounded, sk, np.array(state["pose"]), placed, state["hand"], np.array(state["target"])
    )
    assert ok
    return ratios


def unguarded(monkeypatch) -> None:
    """The natural solve without the later rules that catch most of the jumps below as well: its last
    guard (``fabrik3d.solver.steady``) and the least-motion steps' kinked columns and secants
    (``NumericSteps.numeric_step``). Each test switches its own fix off with them."""
    monkeypatch.setattr(natural, "steadied", lambda solve, start, got, bar: got)
    monkeypatch.setattr(constrained.LimitedSolve, "kinked", lambda self, j, frames, ahead, back: False)
    monkeypatch.setattr(constrained.LimitedSolve, "secants", lambda self, pose, frames, cols, axes, jac, e, d: jac)


def test_an_arm_against_its_shoulder_limit_keeps_its_elbow_when_the_torso_joins(sk, monkeypatch) -> None:
    """Seed 7, reach 206: the right hand from beside the hip to above the head, the elbow pressed
    against the shoulder's backward limit. The arm and the clavicle cannot follow without a flip, so
    the torso's chain (the last level) joins: it takes least-motion steps too, its rigid chest turning
    within its limit. Before, that chain had no such rule (and least motion refused a rigid body): the
    elbow flipped 46 cm for a 1.5 cm hand step (30x)."""
    assert max(replay(sk, "seed 7, reach 206")) <= 3.0
    least_motion = constrained.LimitedSolve.least_motion

    def refusing_rigid(self, start, frames, tol, bound):  # (the old rule)
        return None if any(self.r.rigid[j] for j in self.turnable) else least_motion(self, start, frames, tol, bound)

    monkeypatch.setattr(constrained.LimitedSolve, "least_motion", refusing_rigid)
    unguarded(monkeypatch)
    assert max(replay(sk, "seed 7, reach 206")) > 20.0


def test_a_torso_bending_for_the_hand_counts_the_head_it_swings(sk, monkeypatch) -> None:
    """Seed 7, reach 208, frame 4: only the torso can follow without flipping the arm 34 cm. Its
    chain's solve swung the head, which no target pulls, 5.3 cm for a 1.54 cm hand step (3.5x), and
    the least-motion rule did not see it: the branches no target pulls were placed after the
    measure. They count now (``LimitedSolve.placed``)."""
    assert max(replay(sk, "seed 7, reach 208")[:10]) <= 3.0
    unplaced = lambda self, pose, frames, start, start_frames: (pose, frames)  # noqa: E731 (the old measure)
    monkeypatch.setattr(constrained.LimitedSolve, "placed", unplaced)
    unguarded(monkeypatch)
    assert max(replay(sk, "seed 7, reach 208")[:10]) > 3.3


def test_a_hand_brought_past_its_own_shoulder_does_not_swing_the_folded_arm(sk) -> None:
    """Seed 8's first ten reaches: the tenth drags the right hand within 8% of the arm's length of
    its shoulder, the arm folded at its elbow's stop. Folding, the limb draws its elbow in fast, and
    the straightening allowance (meant for an arm pulled to its full length) let that count as no
    jump: the folded arm swung its elbow 11 cm a frame (7x the hand's step) instead of the shoulder
    moving."""
    _, ratios = nt.chained_drags(nt.unbounded, sk, nt.arm_reaches(sk, seed=8, count=10))
    assert max(ratios) <= 3.0, max(ratios)


def test_the_straightening_allowance_is_for_a_limb_that_opens(sk) -> None:
    """``Swivelling.straightening``: an open arm whose hand moves 2 cm away from its shoulder forces
    its elbow toward the shoulder-hand line (> 0); a folded arm whose hand moves 2 cm toward the
    shoulder draws its elbow in too, but gets no allowance (the shoulder can move instead), nor does
    an arm whose hand stays pinned; the allowance is the elbow's alone (the wrist, toward the hand,
    moves less)."""
    core = sk.core
    r = rig(core)
    hand, shoulder, elbow, wrist = (core.index(f"{n}_l") for n in ("hand", "shoulder", "elbow", "wrist"))

    def allowance(hand_at: list[float], way: float) -> float:
        bent = np.array(core.rest_positions)
        bent[elbow] = bent[shoulder] + [0.25, 0.0, -0.12]
        bent[hand] = bent[shoulder] + hand_at
        bent[wrist] = bent[hand] + (bent[elbow] - bent[hand]) * 0.25
        out = (bent[hand] - bent[shoulder]) / np.linalg.norm(bent[hand] - bent[shoulder])
        goals = {hand: Goal(tuple(bent[hand] + way * 0.02 * out), None, 1.0)}
        solve = NaturalSolve(core, r, goals, None, {}, sk.posing, None)
        solve.tol = 1e-3
        forced, hinges = solve.straightening([tuple(p) for p in bent])
        assert hinges == ({elbow} if forced > 0.0 else set())  # (the hinge alone: the wrist moves less)
        return forced

    assert allowance([0.5, 0.0, 0.05], 1.0) > 0.005  # (opening toward full length)
    assert allowance([0.06, 0.0, 0.22], -1.0) == 0.0  # (folding: its hinge offset shrinks too)
    assert allowance([0.5, 0.0, 0.05], 0.0) == 0.0  # (a pinned hand: its target did not move)


def test_least_motion_steps_follow_a_limb_along_its_limit(sk, monkeypatch) -> None:
    """Seed 10's first 65 reaches: an arm pressed against a limit creeps along it, and least-motion
    steps (``LEAST_MOTION_STEPS``, ``LEAST_MOTION_PATIENCE``) follow it where FABRIK's passes slide it
    round. With six steps and a patience of two they stopped short, and an elbow flipped (18.9x the
    hand's step; 8x since the levels bound a hinge's straightening swing more tightly). The drags
    once moved the other shoulder 3.1x the hand's step in one frame (now 2.96x: the last guard takes
    the effector's own step), so the bar here is no flip."""

    def worst() -> float:
        return max(nt.chained_drags(nt.unbounded, sk, nt.arm_reaches(sk, seed=10, count=65))[1])

    assert worst() <= 3.5
    monkeypatch.setattr(constrained, "LEAST_MOTION_STEPS", 6)
    monkeypatch.setattr(constrained, "LEAST_MOTION_PATIENCE", 2)
    unguarded(monkeypatch)
    assert worst() > 5.0


def test_a_pose_that_still_jumps_tries_the_least_motion_and_the_unrelaxed_levels(sk, monkeypatch) -> None:
    """Seed 22, reach 135: the right hand dragged while the arm and the torso press against their
    limits. Every level's pose, solved from the relaxed start, swings the right elbow: 14x the hand's
    step in one frame. The last guard (``fabrik3d.solver.steady``) tries the body's least motion
    and the levels from the unrelaxed start, and keeps what moves least: 3.3x (not yet the issue's 3x,
    docs/natural-posing.md; the bar here is no flip). Switched off with the least-motion steps'
    secants, which catch this jump as well."""
    assert max(replay(sk, "seed 22, reach 135")) <= 3.5
    monkeypatch.setattr(natural, "steadied", lambda solve, start, got, bar: got)
    monkeypatch.setattr(constrained.LimitedSolve, "secants", lambda self, pose, frames, cols, axes, jac, e, d: jac)
    assert max(replay(sk, "seed 22, reach 135")) > 10.0


def frame_ratio(sk: fabrik3d.Skeleton, name: str) -> float:
    """State ``name``'s one frame: the largest move of another joint over the hand's step."""
    state = STATES[name]
    before = np.array(state["pose"])
    got = fabrik3d.solve(sk, {h: np.array(v) for h, v in state["placed"].items()}, positions=before, effort=math.inf)
    assert got.converged
    hand = sk.index(state["hand"])
    return nt.jump_ratio(
        sk, before, got.positions, state["hand"], float(np.linalg.norm(got.positions[hand] - before[hand]))
    )


def test_a_least_motion_step_near_a_stop_is_taken_over_the_turns_the_stop_allows(sk, monkeypatch) -> None:
    """Seed 23, reach 104, frame 34: the left arm folded near its elbow's stop, the hand dragged past
    its shoulder, the torso turned far round. Every level's pose swings the elbow, so the last guard
    tries the body's least motion; its steps asked joints a fraction of a degree from their stops
    (the elbow, a wrist, both clavicles, a spine joint) to turn one or two degrees, overshot, and
    crawled to a halt 7 mm short: the elbow flipped 55 cm for a 1.5 cm hand step (34x). A step that
    fails is now taken again with those joints' columns over the turns the stops allow
    (``NumericSteps.secants``): the least motion reaches in two steps, 2.1x."""
    assert frame_ratio(sk, "seed 23, reach 104, frame 34") <= 3.0
    monkeypatch.setattr(constrained.LimitedSolve, "secants", lambda self, pose, frames, cols, axes, jac, e, d: jac)
    nt.whole_jumps(monkeypatch)
    assert frame_ratio(sk, "seed 23, reach 104, frame 34") > 10.0


def test_the_last_guard_measures_the_moves_against_the_step_the_hand_took(sk, monkeypatch) -> None:
    """Seed 10, reach 62, frame 45: the hand's target stepped 1.51 cm, but the hand ended its
    tolerance short of it and moved 1.46 cm; the torso turning for it moved the right shoulder
    4.45 cm, within 3x the target's step but 3.05x the hand's own. The guard now measures against
    the step the pose takes (``steady.step_taken``) and keeps the body's least motion: 0.8x."""
    assert frame_ratio(sk, "seed 10, reach 62, frame 45") <= 3.0
    monkeypatch.setattr(steady, "step_taken", lambda solve, pose: solve.step)
    nt.whole_jumps(monkeypatch)
    assert frame_ratio(sk, "seed 10, reach 62, frame 45") > 3.0


def test_a_straightened_elbow_may_swing_across_its_share_of_the_step_not_on_top_of_it(sk, monkeypatch) -> None:
    """Seed 15, reach 153, frame 10: the left arm pulled toward its full length, its elbow forced in
    0.74 cm for a 0.79 cm step. The levels allowed the elbow 3x the step plus that swing and kept a
    pose that moved it 2.2 cm, 3.14x the hand's 0.70 cm. The forced swing lies across the move the
    elbow shares with the hand, so the bar is now their right-angle sum (``levels.hinge_far``)."""
    assert frame_ratio(sk, "seed 15, reach 153, frame 10") <= 3.0
    monkeypatch.setattr(levels, "hinge_far", lambda far, forced: far + forced)
    nt.whole_jumps(monkeypatch)
    assert frame_ratio(sk, "seed 15, reach 153, frame 10") > 3.0


def test_a_pinned_hands_arm_gets_no_straightening_allowance(sk, monkeypatch) -> None:
    """Seed 2, reach 113, frame 57: the left hand dragged, the right pinned. The left arm's
    straightening allowance also covered the right arm's elbow and wrist, and every arm's wrist,
    so a pose that swung the pinned arm's elbow 4.4 cm for a 1.43 cm step (3.05x) stood. Now only
    the hinge of an arm pulled toward its moved target gets it (``Swivelling.straightening``), and
    the hinge's bar is the right-angle sum (``levels.hinge_far``): either alone keeps this frame
    under 3x, so both are switched off to see it fail."""
    assert frame_ratio(sk, "seed 2, reach 113, frame 57") <= 3.0
    straightening = natural.NaturalSolve.straightening

    def every_limb(self, pose):  # (as before: every targeted limb's turning joints)
        return straightening(self, pose)[0], {j for e in self.goals if (got := self.limb(e)) for j in got[1]}

    monkeypatch.setattr(natural.NaturalSolve, "straightening", every_limb)
    nt.whole_jumps(monkeypatch)
    assert frame_ratio(sk, "seed 2, reach 113, frame 57") <= 3.0
    monkeypatch.setattr(levels, "hinge_far", lambda far, forced: far + forced)
    assert frame_ratio(sk, "seed 2, reach 113, frame 57") > 3.0


def test_an_arm_that_must_flip_swings_round_over_frames(sk, monkeypatch) -> None:
    """Seed 18, reach 31: the right hand dragged past its own shoulder (5 cm from it), its arm on the
    other branch of the natural pose and pressed against its limits. Every pose that reaches swung
    the elbow at once, 14x the hand's step. Now such a frame goes part of the way (``steady.partway``):
    the arm swings round over a few frames, the dragged hand off its target meanwhile (those solves
    do not converge), the pinned hand kept on its own, the limits held; the drag ends on its target."""
    state = STATES["seed 18, reach 31"]
    placed = {h: np.array(v) for h, v in state["placed"].items()}
    hand, other = state["hand"], "hand_l" if state["hand"] == "hand_r" else "hand_r"
    target = np.array(state["target"])
    steps = max(12, int(np.ceil(float(np.linalg.norm(target - placed[hand])) / nt.SMOOTH_STEP)))
    pose, ratios, partway = np.array(state["pose"]), [], 0
    for t in nt.drag(placed[hand], target, steps):
        before = pose
        got = fabrik3d.solve(sk, {**placed, hand: t}, positions=before, effort=math.inf)
        pose = got.positions
        step = float(np.linalg.norm(pose[sk.index(hand)] - before[sk.index(hand)]))
        ratios.append(nt.jump_ratio(sk, before, pose, hand, step))
        if not got.converged:
            partway += 1
            assert got.errors[other] <= 1e-3 and got.errors[hand] <= 0.1
            assert max(violations(sk, pose, got.rotations).values()) <= 1e-6
    assert got.converged and partway >= 2
    assert max(ratios) <= 3.0, max(ratios)
    nt.whole_jumps(monkeypatch)
    assert max(replay(sk, "seed 18, reach 31")) > 10.0
