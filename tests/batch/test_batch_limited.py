"""Vectorised constrained batch solves (``fabrik3d.solve_batch`` on skeletons with joint limits).

Positions-only targets on constrained skeletons run the constrained solver vectorised
(``fabrik3d.batch.constrained.solve``); what it does not vectorise (warm retries, restarts from starts that
differ per problem, the last few problems of a batch) goes on in ``fabrik3d.solve``. Issue 6:
every problem equals ``solve`` on that problem as docs/batch.md states (positions, rotations,
iterations and convergence exactly; errors within one or two units in the last place), and the caller's arrays
are never modified. Every returned
pose also holds the constrained solve's guarantees (limits, bone lengths, no NaN), measured by
``helpers.limits``.

``solve_batch`` sends batches smaller than ``batch_limited.MIN_BATCH`` (256) to ``solve`` one by
one (the loop is faster there); to test the vectorised code on batches of 20 to 64 problems, a
fixture lowers that threshold to 1 for every test here except
``test_a_batch_of_min_batch_problems_as_given``, and records each run of ``batch_limited.solve``
(wrapped, not replaced): ``check`` asserts that the vectorised code solved the batch.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers.batch import assert_equals_solve, random_poses, vectorisable
from helpers.constrained import (
    chain_reach,
    constrained_skeleton,
    mixed_targets,
    random_targets,
    reachable_targets,
    some_of,
)
from helpers.limits import arbitrary_pose, assert_valid, random_pose

from fabrik3d import BatchResult, Posing, Skeleton, Target, solve_batch
from fabrik3d.batch.constrained import attempt as batch_attempt
from fabrik3d.batch.constrained import solve as batch_limited
from fabrik3d.model import presets
from fabrik3d.solver.rig import pose_frames, rig

VALIDATED = 12  # problems per batch measured against the limits

# Per run of ``batch_limited.solve`` in the current test: (problems, problems handed back to ``solve``).
RUNS: list[tuple[int, int]] = []


def record_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrap ``batch_limited.solve`` to append to ``RUNS`` (cleared here)."""
    RUNS.clear()
    inner = batch_limited.solve

    def counting(*args: Any, **kwargs: Any) -> Any:
        out = inner(*args, **kwargs)
        RUNS.append((len(out[2]), int(out[3].sum())))
        return out

    monkeypatch.setattr(batch_limited, "solve", counting)


@pytest.fixture(autouse=True)
def vectorised(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch runs the vectorised code (``MIN_BATCH`` 1), its runs recorded in ``RUNS``."""
    record_runs(monkeypatch)
    if "as_given" not in request.node.name:
        monkeypatch.setattr(batch_limited, "MIN_BATCH", 1)


# -- helpers ---------------------------------------------------------------------------------------------


def check(s: Skeleton, targets: dict, **kwargs: Any) -> BatchResult:
    """``solve_batch`` equals ``solve`` problem by problem, no NaN anywhere, and the poses of a dozen
    problems spread over the batch hold every guarantee of ``helpers.limits.assert_valid`` (limits,
    bone lengths, frames; measuring every problem would take most of the file's time)."""
    runs = len(RUNS)
    result = solve_batch(s, targets, **kwargs)
    assert len(RUNS) == runs + 1 and RUNS[-1][0] == len(result.iterations), "not solved by batch_limited"
    assert_equals_solve(s, targets, result, **kwargs)
    assert np.isfinite(result.positions).all() and np.isfinite(result.rotations).all()
    count = len(result.iterations)
    twisted = tuple(result.orientation_errors)  # (effectors with orientation targets)
    for b in np.unique(np.linspace(0, count - 1, min(count, VALIDATED)).astype(int)):
        assert_valid(s, SimpleNamespace(positions=result.positions[b], rotations=result.rotations[b]), twisted)
    return result


COUNT = {"humanoid": 40, "robot_arm": 64, "octopus": 32}
# Iteration cap for batches with random targets (mostly out of reach, they run long); reachable
# targets keep the default 100.
LONG = 40


# -- presets -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", presets.names())
def test_presets_cold_all_and_some_effectors(name: str) -> None:
    s = vectorisable(name)
    rng = np.random.default_rng(10 + len(name))
    count = COUNT[name]
    everything = list(s.end_effectors)
    result = check(s, reachable_targets(s, everything, count, rng))
    assert result.converged.mean() > 0.5
    result = check(s, random_targets(s, everything, count, rng), max_iterations=12)
    assert not result.converged.all()
    check(s, mixed_targets(s, some_of(s.end_effectors, rng), count, rng), max_iterations=LONG)


def test_the_humanoid_preset_with_a_plain_posing_runs_vectorised_rolls_and_all() -> None:
    """The whole preset (fingers carried, shoulders and hips rolling their elbows' and knees' hinges onto
    the targets: ``roll_for_hinge``) with a plain posing: solved by the vectorised constrained solve, each
    problem ``solve``'s."""
    s = presets.get("humanoid")
    assert any(rig(s.core).rolls)
    rng = np.random.default_rng(77)
    goal = mixed_targets(s.core, ["head", "hand_l", "hand_r", "toe_l"], 24, rng)
    result = check(s, goal, posing=Posing(), max_iterations=LONG)
    assert RUNS[-1][1] < 24 and result.converged.any()


@pytest.mark.parametrize("name", presets.names())
def test_presets_warm_from_start_poses_within_and_outside_the_limits(name: str) -> None:
    s = vectorisable(name)
    rng = np.random.default_rng(20 + len(name))
    count = COUNT[name]
    goal = mixed_targets(s, some_of(s.end_effectors, rng), count, rng)
    starts = np.array([random_pose(s, rng) for _ in range(count)])  # within the limits
    starts[1::3] = [arbitrary_pose(s, rng) for _ in range(len(starts[1::3]))]  # random bone directions
    starts[2::3] = random_poses(s, len(starts[2::3]), rng)  # random directions and lengths
    check(s, goal, positions=starts, max_iterations=LONG)
    check(s, goal, positions=arbitrary_pose(s, rng), max_iterations=20)  # one (n, 3) start for all, off the limits
    check(s, goal, positions=random_pose(s, rng), max_iterations=20)  # one start within the limits


@pytest.mark.parametrize("name", presets.names())
def test_presets_with_root_targets_and_weights(name: str) -> None:
    s = vectorisable(name)
    rng = np.random.default_rng(30 + len(name))
    count = COUNT[name]
    chosen = some_of(s.end_effectors, rng) if len(s.end_effectors) > 2 else list(s.end_effectors)
    goal = mixed_targets(s, chosen, count, rng)
    root = s.rest_positions[s.root]
    weights = {e: float(rng.uniform(0.2, 5.0)) for e in chosen}
    cap = 30  # half the problems have random targets, which run long
    check(s, goal, root_target=root + rng.normal(scale=0.1, size=(count, 3)), max_iterations=cap)
    check(s, goal, root_target=root + np.array([0.05, -0.1, 0.02]), weights=weights, max_iterations=cap)
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    moved = root + rng.normal(scale=0.1, size=(count, 3))
    check(s, goal, positions=starts, root_target=moved, weights=weights, max_iterations=cap)


@pytest.mark.parametrize("name", presets.names())
def test_presets_stopped_by_the_iteration_cap(name: str) -> None:
    """A tiny tolerance and three iterations: most problems stop on the cap, cold and warm."""
    s = vectorisable(name)
    rng = np.random.default_rng(40 + len(name))
    count = COUNT[name]
    goal = mixed_targets(s, list(s.end_effectors), count, rng)
    result = check(s, goal, tolerance=1e-7, max_iterations=3)
    assert (result.iterations == 3).mean() > 0.5 and (result.iterations <= 3).all()
    starts = np.array([arbitrary_pose(s, rng) for _ in range(count)])
    result = check(s, goal, positions=starts, tolerance=1e-7, max_iterations=3)
    assert (result.iterations == 3).mean() > 0.5
    result = check(s, goal, positions=starts, max_iterations=1)
    assert (result.iterations == 1).all()


def test_hard_targets_go_partly_through_the_scalar_solve() -> None:
    """Reachable humanoid targets far from rest: ``batch_limited`` finishes most problems and hands the
    last few of an attempt (``TAIL``) back to ``solve``. The batch must contain both kinds and still
    equal ``solve`` everywhere."""
    s = vectorisable("humanoid")
    rng = np.random.default_rng(2)
    count = 48
    goal = reachable_targets(s, list(s.end_effectors), count, rng)  # valid poses, widely swung
    result = check(s, goal)
    assert 0 < RUNS[-1][1] < count, RUNS
    assert result.converged.mean() > 0.8
    check(s, goal, positions=np.array([random_pose(s, rng) for _ in range(count)]))  # warm, within the limits
    assert 0 < RUNS[-1][1] < count, RUNS


@pytest.mark.parametrize("name", ["humanoid", "robot_arm"])
def test_restarts_and_warm_retries_run_vectorised(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no tail handed back (``TAIL`` 0), nothing goes to ``solve``: a cold batch's restarts and a
    warm batch's retries from the rest pose run in ``batch_limited`` (each called, on several problems)
    and still equal ``solve`` everywhere."""
    monkeypatch.setattr(batch_attempt, "TAIL", 0)
    calls: dict[str, list[int]] = {"restarts": [], "warm_retries": []}
    for call, seen in calls.items():
        inner = getattr(batch_limited, call)

        def counting(batch: Any, idx: np.ndarray, *args: Any, _inner: Any = inner, _seen: list = seen) -> Any:
            _seen.append(len(idx))
            return _inner(batch, idx, *args)

        monkeypatch.setattr(batch_limited, call, counting)
    s = vectorisable(name)
    rng = np.random.default_rng(2)
    count = 48
    goal = reachable_targets(s, list(s.end_effectors), count, rng)
    check(s, goal)
    assert RUNS[-1][1] == 0 and calls["restarts"] and calls["restarts"][0] >= 2, (RUNS, calls)
    check(s, goal, positions=np.array([random_pose(s, rng) for _ in range(count)]))
    assert RUNS[-1][1] == 0, RUNS
    if name == "humanoid":  # (the arm reaches every target warm on its first attempt)
        assert calls["warm_retries"] and calls["warm_retries"][0] >= 2, calls


# -- orientation targets and a root orientation ----------------------------------------------------------


def random_turns(count: int, rng: np.random.Generator) -> np.ndarray:
    """``(count, 4)`` random unit quaternions (x, y, z, w), as given: unit within about 1e-12."""
    q = rng.normal(size=(count, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def oriented_targets(s: Skeleton, names: list[str], count: int, rng: np.random.Generator) -> dict:
    """Mixed target points (``mixed_targets``) for every effector, the first two of ``names`` with
    orientations (weights 1 and 0.6): the effector's frame in a pose within the limits for the even
    problems (reachable together with the point), a random one for the odd problems."""
    goal = mixed_targets(s, list(s.end_effectors), count, rng)
    poses = np.array([random_pose(s, rng) for _ in range(count)])
    for name in goal:
        goal[name][0::2] = poses[0::2, s.index(name)]
    for k, name in enumerate(names[:2]):
        e = s.index(name)
        turns = random_turns(count, rng)
        turns[0::2] = [pose_frames(s, pose)[e] for pose in poses[0::2]]
        goal[name] = (goal[name], turns, 1.0 if k == 0 else 0.6)
    return goal


ORIENTED = {"humanoid": ["hand_l", "toe_r"], "robot_arm": ["tool"], "octopus": ["tentacle_1_8", "tentacle_5_8"]}


@pytest.mark.parametrize("name", presets.names())
def test_orientation_targets_cold_and_warm(name: str) -> None:
    """Orientation targets (per problem, with weights; and one ``Target`` shared by all) run in
    ``batch_limited`` too, cold and warm, and equal ``solve`` with their orientation errors."""
    s = vectorisable(name)
    rng = np.random.default_rng(90 + len(name))
    count = COUNT[name] // 2
    names = ORIENTED[name]
    goal = oriented_targets(s, names, count, rng)
    result = check(s, goal, max_iterations=LONG)
    assert set(result.orientation_errors) == set(names[:2])
    for v in result.orientation_errors.values():
        assert v.shape == (count,) and ((v >= 0.0) & (v <= 180.0)).all()
    assert (result.orientation_errors[names[0]][0::2] < 1.0).mean() > 0.5  # the reachable ones reached
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    starts[1::2] = [arbitrary_pose(s, rng) for _ in range(len(starts[1::2]))]
    check(s, goal, positions=starts, max_iterations=LONG)
    shared = {**goal, names[0]: Target(goal[names[0]][0][0], goal[names[0]][1][0], 0.8)}
    check(s, shared, positions=starts, max_iterations=20)


@pytest.mark.parametrize("name", ["humanoid", "robot_arm"])
def test_a_root_orientation_with_and_without_orientation_targets(name: str) -> None:
    """A root target with an orientation (a ``Target`` for all problems) turns every start pose about
    the root, in ``batch_limited`` as in ``solve``."""
    s = vectorisable(name)
    rng = np.random.default_rng(100 + len(name))
    count = COUNT[name] // 2
    root = Target(s.rest_positions[s.root] + [0.03, -0.02, 0.01], random_turns(1, rng)[0])
    goal = mixed_targets(s, list(s.end_effectors), count, rng)
    check(s, goal, root_target=root, max_iterations=LONG)
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    check(s, oriented_targets(s, ORIENTED[name], count, rng), positions=starts, root_target=root, max_iterations=20)


def test_a_skeleton_without_limits_with_orientation_targets_or_a_root_orientation() -> None:
    """Without joint limits, orientation targets and a root orientation still take the constrained
    solve (as in ``solve``): vectorised, equal to ``solve``."""
    base = vectorisable("humanoid")
    s = Skeleton(base.names, base.parents, base.rest_positions)
    rng = np.random.default_rng(110)
    count = 24
    check(s, oriented_targets(s, ["hand_r", "head"], count, rng), max_iterations=LONG)
    root = Target(s.rest_positions[s.root], random_turns(1, rng)[0])
    check(s, reachable_targets(s, ["hand_l", "toe_l"], count, rng), root_target=root)


def test_orientation_targets_with_restarts_and_retries_vectorised(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no tail handed back (``TAIL`` 0), a cold batch's restarts (ranked by positions, then
    every target in full force) and a warm batch's retries run with orientation targets in
    ``batch_limited``, and equal ``solve``."""
    monkeypatch.setattr(batch_attempt, "TAIL", 0)
    s = vectorisable("humanoid")
    rng = np.random.default_rng(120)
    count = 32
    goal = oriented_targets(s, ["hand_r", "toe_l"], count, rng)
    check(s, goal, max_iterations=LONG)
    assert RUNS[-1][1] == 0, RUNS
    check(s, goal, positions=np.array([arbitrary_pose(s, rng) for _ in range(count)]), max_iterations=LONG)
    assert RUNS[-1][1] == 0, RUNS


# -- poles -------------------------------------------------------------------------------------------------

POLED = {"humanoid": ["hand_l", "toe_r"], "robot_arm": ["tool"], "octopus": ["tentacle_2_8", "tentacle_7_8"]}


def pole_points(s: Skeleton, names: list[str], count: int, rng: np.random.Generator) -> dict:
    """``(count, 3)`` pole points per named effector: about its chain's length from the rest root."""
    root = s.rest_positions[s.root]
    return {e: root + rng.normal(size=(count, 3)) * chain_reach(s, e) for e in names}


def changed_problems(before: list, after: list) -> int:
    """How many problems of a batch pose (per joint a tuple of ``(m,)`` arrays, or None) differ."""
    moved = [(np.stack(p) != np.stack(q)).any(axis=0) for p, q in zip(before, after) if p is not None]
    return int(np.logical_or.reduce(moved).sum())


@pytest.mark.parametrize("name", presets.names())
def test_poles_cold_and_warm(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Poles on targeted effectors (per problem, and one point shared by all) run in
    ``batch_limited`` (``TAIL`` 0: every problem): the turns before each stage 1, their yielding,
    the final turn (with the whole-chain swings of a cold solve), and equal ``solve``. The final
    turn changes some problems of the humanoid and the octopus (counted here)."""
    monkeypatch.setattr(batch_attempt, "TAIL", 0)
    finals: list[int] = []
    inner = batch_limited.BatchLimited.final_poles

    def counting(self: Any, pose: list, *args: Any) -> Any:
        out = inner(self, pose, *args)
        finals.append(changed_problems(pose, out[0]))
        return out

    monkeypatch.setattr(batch_attempt.BatchLimited, "final_poles", counting)
    s = vectorisable(name)
    rng = np.random.default_rng(130 + len(name))
    count = COUNT[name] // 2
    names = POLED[name]
    goal = mixed_targets(s, list(s.end_effectors), count, rng)
    poles = pole_points(s, names, count, rng)
    check(s, goal, poles=poles, max_iterations=LONG)
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    starts[1::2] = [arbitrary_pose(s, rng) for _ in range(len(starts[1::2]))]
    check(s, goal, positions=starts, poles=poles, max_iterations=LONG)
    shared = {names[0]: poles[names[0]][0]}
    check(s, oriented_targets(s, ORIENTED[name], count, rng), positions=starts, poles=shared, max_iterations=20)
    assert RUNS[-1][1] == 0 and len(finals) == 3, (RUNS, finals)
    if name != "robot_arm":  # (the arm's final turns change nothing: its joints turn toward the pole as they go)
        assert sum(finals) > 0, finals


def test_poles_with_restarts_and_warm_retries_vectorised(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no tail handed back (``TAIL`` 0), a cold batch's restarts and a warm batch's retries
    (from the start without the poles, then from the rest pose) run with poles in
    ``batch_limited``, and equal ``solve``."""
    monkeypatch.setattr(batch_attempt, "TAIL", 0)
    seen: list[int] = []
    inner = batch_limited.warm_retries

    def counting(batch: Any, idx: np.ndarray, *args: Any) -> Any:
        seen.append(len(idx))
        return inner(batch, idx, *args)

    monkeypatch.setattr(batch_limited, "warm_retries", counting)
    s = vectorisable("humanoid")
    rng = np.random.default_rng(140)
    count = 32
    goal = reachable_targets(s, list(s.end_effectors), count, rng)
    poles = pole_points(s, ["hand_l", "hand_r", "toe_l"], count, rng)
    check(s, goal, poles=poles, max_iterations=LONG)
    assert RUNS[-1][1] == 0, RUNS
    check(s, goal, positions=np.array([arbitrary_pose(s, rng) for _ in range(count)]), poles=poles)
    assert RUNS[-1][1] == 0 and seen and seen[0] >= 2, (RUNS, seen)


def test_a_pole_on_an_untargeted_effector_goes_to_solve_per_problem() -> None:
    """A pole on an effector without a target is not vectorised (its chain is not solved):
    ``solve`` per problem, with the same results."""
    s = vectorisable("humanoid")
    rng = np.random.default_rng(150)
    count = 20
    goal = reachable_targets(s, ["head", "hand_l"], count, rng)
    poles = pole_points(s, ["hand_r"], count, rng)
    result = solve_batch(s, goal, poles=poles, max_iterations=LONG)
    assert not RUNS
    assert_equals_solve(s, goal, result, poles=poles, max_iterations=LONG)


def test_final_pole_turn_on_a_chain_under_a_rigid_joint_with_root_targets() -> None:
    """Regression: the poles' final turn runs stage 2, which also places a rigid joint's untargeted
    children (the humanoid's pelvis and chest carry the legs); the batch's final turn took them for
    joints of the pose and failed (``TypeError`` in ``put_all``). The head's orientation target and
    pole, hand targets and per-problem root targets, as in the lead's reproduction."""
    s = vectorisable("humanoid")
    rng = np.random.default_rng(5)
    count = 40
    rest = s.rest_positions
    goal = {e: rest[s.index(e)] + rng.normal(0.0, 0.12, (count, 3)) for e in ("head", "hand_l", "hand_r")}
    goal["head"] = (goal["head"], random_turns(count, rng))
    poles = {"head": rest[s.index("head")] + np.array([0.2, -0.3, 0.4])}
    root = rest[s.root] + rng.normal(0.0, 0.05, (count, 3))
    check(s, goal, poles=poles, root_target=root)


# -- random constrained chains and trees ------------------------------------------------------------------


# Seeds 1 and 31 once differed from ``solve`` by 3.5e-9 and 4e-8: an ulp of numpy's arctan2 (or of
# Eberly's bisection, or of hypot) magnified a millionfold by stalled solves damped with a small
# lambda; since then every batch function takes the scalar floats (fabrik3d/batch_math.py).
# Seeds 6 and 8 (chains with a swing limit on the root) once crashed in a cold batch's restarts: the
# random aim of the root, drawn once for every problem, reached the limit's projection as plain floats.
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 8, 31])
def test_random_constrained_chains_and_trees(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    tree = seed % 2 == 1
    s = constrained_skeleton(int(rng.integers(3, 10)), tree, rng)
    count = 48
    chosen = some_of(s.end_effectors, rng) if seed % 4 == 3 else list(s.end_effectors)
    goal = mixed_targets(s, chosen, count, rng)
    check(s, goal)
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    starts[1::2] = [arbitrary_pose(s, rng) for _ in range(len(starts[1::2]))]
    weights = {e: float(rng.uniform(0.2, 5.0)) for e in chosen}
    check(s, goal, positions=starts, weights=weights)
    root = s.rest_positions[s.root]
    check(s, goal, root_target=root + rng.normal(scale=0.2, size=(count, 3)), tolerance=1e-6, max_iterations=5)
    check(s, goal, positions=arbitrary_pose(s, rng), root_target=root + np.array([0.1, 0.0, -0.1]))


# -- the boundary ------------------------------------------------------------------------------------------


def test_the_callers_arrays_are_never_modified() -> None:
    """Read-only inputs (a write would raise) through the vectorised path and the scalar fallback give
    the results of writable copies, and stay as they were; the results share no memory with them."""
    rng = np.random.default_rng(50)
    s = vectorisable("humanoid")
    count = 32
    goal = mixed_targets(s, ["head", "hand_l", "toe_r"], count, rng)
    poses = np.array([arbitrary_pose(s, rng) for _ in range(count)])
    root = s.rest_positions[s.root] + rng.normal(scale=0.1, size=(count, 3))
    weights = {"head": 2.0, "toe_r": 0.5}
    arrays = [*goal.values(), poses, root]
    before = [a.copy() for a in arrays]
    for a in arrays:
        a.setflags(write=False)
    copies = {e: t.copy() for e, t in goal.items()}
    calls = [
        (
            {"positions": poses, "root_target": root, "weights": weights},
            {"positions": before[-2], "root_target": before[-1]},
        ),
        ({}, {}),  # cold: targets within reach not reached by the first attempt go to ``solve``
        ({"positions": poses[0]}, {"positions": before[-2][0]}),
    ]
    for given, fresh in calls:
        result = solve_batch(s, goal, max_iterations=20, **given)
        again = solve_batch(s, copies, max_iterations=20, **{**given, **fresh})
        np.testing.assert_array_equal(result.positions, again.positions)
        np.testing.assert_array_equal(result.iterations, again.iterations)
        assert RUNS[-2][1] > 0, RUNS  # some problems of the read-only run went on in ``solve``
        for a, b in zip(arrays, before):
            np.testing.assert_array_equal(a, b)
        assert not any(np.shares_memory(r, a) for r in (result.positions, result.rotations) for a in arrays)
        assert result.positions.flags.writeable and result.rotations.flags.writeable
    assert weights == {"head": 2.0, "toe_r": 0.5}


def assert_same_problem(many: BatchResult, one: BatchResult) -> None:
    """Every problem of ``many`` equals the single problem of ``one`` exactly."""
    count = len(many.iterations)
    np.testing.assert_array_equal(many.positions, np.repeat(one.positions, count, axis=0))
    np.testing.assert_array_equal(many.rotations, np.repeat(one.rotations, count, axis=0))
    assert (many.iterations == one.iterations[0]).all() and (many.converged == one.converged[0]).all()
    for name, e in one.errors.items():
        np.testing.assert_array_equal(many.errors[name], np.repeat(e, count))


def test_a_batch_of_one_and_a_batch_of_identical_problems() -> None:
    """Batches of one equal ``solve``; a batch of the same problem repeated (given per problem, or
    shared) equals the batch of one in every problem."""
    rng = np.random.default_rng(60)
    s = vectorisable("humanoid")
    goal = reachable_targets(s, list(s.end_effectors), 1, rng)
    goal["hand_l"] = goal["hand_l"] + [0.3, 0.2, 0.4]  # one target off the limits' reach
    cap = {"max_iterations": 15}
    one = check(s, goal, **cap)
    start = arbitrary_pose(s, rng)[None]
    one_warm = check(s, goal, positions=start, **cap)
    count = 20  # more than batch_limited.TAIL (16), so the vectorised loop runs
    same = {e: np.repeat(t, count, axis=0) for e, t in goal.items()}
    starts = np.repeat(start, count, axis=0)
    assert_same_problem(solve_batch(s, same, **cap), one)
    assert_same_problem(solve_batch(s, same, positions=starts, **cap), one_warm)
    assert_same_problem(solve_batch(s, goal, positions=starts, **cap), one_warm)  # (1, 3) targets shared
    assert_same_problem(solve_batch(s, same, positions=start[0], **cap), one_warm)  # an (n, 3) start shared


def test_a_batch_of_min_batch_problems_as_given() -> None:
    """At the real threshold (not lowered here): ``MIN_BATCH`` problems run vectorised and equal
    ``solve``; one problem fewer runs the per-problem loop, and gives the same results."""
    s = vectorisable("robot_arm")
    rng = np.random.default_rng(80)
    count = batch_limited.MIN_BATCH
    goal = mixed_targets(s, ["tool"], count, rng)
    result = check(s, goal, max_iterations=30)
    fewer = solve_batch(s, {e: t[1:] for e, t in goal.items()}, max_iterations=30)
    assert len(RUNS) == 1  # the loop, not batch_limited
    np.testing.assert_array_equal(fewer.positions, result.positions[1:])
    np.testing.assert_array_equal(fewer.iterations, result.iterations[1:])


def test_shared_targets_with_per_problem_start_poses_and_bone_lengths_kept() -> None:
    """(3,) targets shared by all and (B, n, 3) starts: positions only, so the vectorised path runs."""
    rng = np.random.default_rng(70)
    s = vectorisable("robot_arm")
    count = 60
    tool = s.rest_positions[s.index("tool")]
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    result = check(s, {"tool": tool + np.array([0.1, -0.2, 0.15])}, positions=starts)
    lengths = np.linalg.norm(result.positions[:, 1:] - result.positions[:, s.parents[1:]], axis=2)
    np.testing.assert_allclose(lengths, np.broadcast_to(s.bone_lengths[1:], lengths.shape), rtol=1e-9)
