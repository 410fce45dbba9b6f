"""Settled parts stay (issue 50, ``fabrik3d.solver.whole_body``): a warm start that already meets every
target, its stiff joints relaxed to the pose the user built, is the solve's answer as it is. Pinning an
effector where it is, a re-solve with the same targets and a look-at move nothing else; on the
starter poses too, with the floor (an applied pose is put on the floor at once:
``ground.lifted_onto_floor``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d import presets
from fabrik3d.solver import fk, whole_body
from fabrik3d.solver.ground import lifted_onto_floor

SK = presets.get("humanoid")
REST = fabrik3d.solve(SK, {})
EFFECTORS = ("toe_l", "toe_r", "hand_l", "hand_r", "head")
STARTERS = ("sit", "kneel", "crouch", "run", "walk contact left", "idle", "T", "A")
LOWER = ("pelvis", "knee_l", "knee_r", "ankle_l", "ankle_r", "toe_l", "toe_r")


def starter(name: str, floor: float | None) -> tuple[np.ndarray, np.ndarray]:
    """A starter pose applied to the rest pose (on the floor at ``floor``, if given), as the web applies one."""
    p, q = fabrik3d.apply_pose(SK, REST.positions, REST.rotations, fabrik3d.starter_poses()[name])
    return lifted_onto_floor(SK, p, floor), q


def solved(p: np.ndarray, q: np.ndarray, targets: dict, floor: float | None, **kw) -> fabrik3d.SolveResult:
    """A warm solve from the pose ``p``, ``q`` that the user built (it relaxes toward it)."""
    return fabrik3d.solve(SK, targets, positions=p, rotations=q, relax_to=p, relax_rotations=q, floor=floor, **kw)


STIFF = [n for n, v in SK.posing.stiffness.items() if v > 0.0 and not n.startswith("wrist_")]  # (not held)


def unrelaxed_deg(r: fabrik3d.SolveResult) -> float:
    """How far the stiff joints of the pose ``r`` are turned from the rest pose, the sum of their angles."""
    turns = [fk.joint_turn(SK, r.rotations, n) for n in STIFF]
    return sum(math.degrees(2.0 * math.acos(min(1.0, abs(float(t[3]))))) for t in turns)


def moved(a: np.ndarray, b: np.ndarray, names: tuple[str, ...] | None = None) -> float:
    idx = range(len(SK)) if names is None else [SK.index(n) for n in names]
    return float(np.linalg.norm((a - b)[list(idx)], axis=1).max())


@pytest.mark.parametrize("floor", [None, 0.0], ids=["no floor", "floor"])
@pytest.mark.parametrize("name", STARTERS)
def test_pinning_each_free_effector_of_a_starter_pose_moves_nothing(name: str, floor: float | None) -> None:
    p, q = starter(name, floor)
    for e in EFFECTORS:
        r = solved(p, q, fabrik3d.pin({}, SK, p, e), floor)
        assert moved(r.positions, p) <= 1e-3, (name, e)
    pinned = {e: p[SK.index(e)] for e in EFFECTORS}
    r = solved(p, q, pinned, floor)
    assert moved(r.positions, p) <= 1e-3
    for _ in range(10):  # (ten warm re-solves with the same targets)
        r = fabrik3d.solve(
            SK, pinned, positions=r.positions, rotations=r.rotations, relax_to=p, relax_rotations=q, floor=floor
        )
    assert moved(r.positions, p) <= 1e-3


@pytest.mark.parametrize("name", STARTERS)
def test_a_look_to_the_side_moves_neither_the_hips_nor_the_legs(name: str) -> None:
    p, q = starter(name, 0.0)
    head = p[SK.index("head")]
    a = math.radians(40.0)
    r = solved(p, q, {}, 0.0, look_at={"head": head + np.array([math.sin(a), 0.0, math.cos(a)])})
    assert moved(r.positions, p, LOWER) <= 1e-3
    assert moved(r.positions, p, ("neck", "head")) > 1e-3 or name == "kneel"  # (the head did turn)


def test_without_the_rule_a_pin_moves_the_body() -> None:
    """The rule switched off (the test can fail): pinning a toe of "kneel" where it is moves the knee
    some 4 cm, as the issue found on "sit"."""
    p, q = starter("kneel", None)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(whole_body.WholeBody, "settled", lambda self, *a: None)
        m.setattr(whole_body.WholeBody, "nearer", lambda self, start, got: True)
        r = solved(p, q, fabrik3d.pin({}, SK, p, "toe_r"), None)
    assert moved(r.positions, p) > 0.01


def test_an_applied_pose_is_put_on_the_floor_at_once() -> None:
    """The starter "sit" leaves its ankles below the height a floor keeps them above (25 mm): put on the
    floor at once, the whole pose lifted straight up, and no higher than needed."""
    p, _ = fabrik3d.apply_pose(SK, REST.positions, REST.rotations, fabrik3d.starter_poses()["sit"])
    lifted = lifted_onto_floor(SK, p, 0.0)
    lift = lifted - p
    assert np.allclose(lift[:, [0, 2]], 0.0) and np.allclose(lift[:, 1], lift[0, 1]) and lift[0, 1] > 0.01
    again = lifted_onto_floor(SK, lifted, 0.0)
    np.testing.assert_array_equal(again, lifted)
    np.testing.assert_array_equal(lifted_onto_floor(SK, p, None), p)
    with pytest.raises(ValueError, match="floor"):
        lifted_onto_floor(SK, p, float("nan"))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(EFFECTORS))
def test_pinning_where_it_is_moves_nothing(seed: int, effector: str) -> None:
    """Any pose the solver made (a random reach of a random hand, warm), kept as the pose the user
    built: an effector pinned where it is, then the same targets solved again, move nothing."""
    rng = np.random.default_rng(seed)
    hand = "hand_l" if rng.random() < 0.5 else "hand_r"
    target = REST.positions[SK.index(hand)] + rng.uniform(-0.35, 0.35, 3)
    r = fabrik3d.solve(SK, {hand: target}, positions=REST.positions, rotations=REST.rotations)
    built = {"relax_to": r.positions, "relax_rotations": r.rotations}
    pinned = fabrik3d.pin({hand: r.positions[SK.index(hand)]}, SK, r.positions, effector)
    again = fabrik3d.solve(SK, pinned, positions=r.positions, rotations=r.rotations, **built)
    assert again.iterations == 0 and moved(again.positions, r.positions) <= 1e-9
    twice = fabrik3d.solve(SK, pinned, positions=again.positions, rotations=again.rotations, **built)
    assert moved(twice.positions, r.positions) <= 1e-9


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_a_re_solve_with_the_same_targets_moves_nothing(seed: int) -> None:
    """Random targets for both hands (the body relaxing toward the rest pose), solved, then ten warm
    re-solves with the same targets: where the last reached them, nothing moves but to relax the stiff
    joints further; where a target is out of reach, a re-solve moves only to reach it, or to bring it
    nearer by more than the tolerance, no joint moving more than 3 times that gain (``WholeBody.nearer``)."""
    rng = np.random.default_rng(seed)
    targets = {h: REST.positions[SK.index(h)] + rng.uniform(-0.3, 0.3, 3) for h in ("hand_l", "hand_r")}
    r = fabrik3d.solve(SK, targets)
    for _ in range(10):
        last = r
        r = fabrik3d.solve(SK, targets, positions=r.positions, rotations=r.rotations)
        core = SK.core_joints  # (the solved joints: the fingers ride on the wrists)
        move = float(np.linalg.norm((r.positions - last.positions)[core], axis=1).max())
        gain = max(last.errors.values()) - max(r.errors.values())
        if last.converged:  # (reached: it moves only to relax the stiff joints further)
            assert move <= 1e-9 or unrelaxed_deg(r) < unrelaxed_deg(last) - 1e-6
        elif move > 1e-9 and not r.converged:  # (a warm solve that reaches what the last missed is taken)
            assert gain > 1e-3 and move <= 3.0 * gain + 1e-9
