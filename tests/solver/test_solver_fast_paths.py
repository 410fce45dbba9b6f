"""The single-solve fast paths give what the plain paths give.

``checks.vec`` / ``checks.columns`` read common inputs without numpy's round trip
and must accept, reject and convert exactly as ``checks.point`` / ``checks.points``;
``Rig.swing_frame`` writes the rotation helpers out in one function and must give
their floats; the solver's per-target-set plans are cached on the skeleton's rig and
must not change any result, however the cache fills and empties; a start within the limits
given with its frames is taken as it is, and must give what projecting it first gives.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers.limits import violations
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik3d import Hinge, Skeleton, checks, solve, solve_batch, solve_chain
from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.model.targets import Goal
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.natural import NaturalSolve
from fabrik3d.solver.rig import Rig, pose_frames, rig
from fabrik3d.solver.tree import solve_pose

BIG = checks.MAX_COORD


def bare(name: str) -> Skeleton:
    s = presets.get(name).core
    return Skeleton(s.names, s.parents, s.rest_positions)


def outcome(check: Callable[[Any, str], Any], value: object) -> tuple:
    """``check(value)`` as a tuple of floats, or the error message."""
    try:
        out = check(value, "arg")
    except ValueError as exc:
        return ("error", str(exc))
    if isinstance(out, np.ndarray):
        return tuple(out.tolist())
    return tuple(out)


POINTS = [
    [0.5, -1.0, 2.0],
    (0.5, -1.0, 2.0),
    [0, 1, 2],
    [0.0, 1, 2.0],
    [True, 0.0, 1.0],
    [np.float64(1.0), 2.0, 3.0],
    [BIG, -BIG, 0.0],
    [math.nextafter(BIG, math.inf), 0.0, 0.0],
    [0.0, -math.nextafter(BIG, math.inf), 0.0],
    [10**400, 0.0, 0.0],
    [10**9, -(10**9), 0],
    [math.nan, 0.0, 0.0],
    [0.0, math.inf, 0.0],
    [0.0, 0.0, -math.inf],
    [0.0, 1.0],
    [0.0, 1.0, 2.0, 3.0],
    [[0.0, 1.0, 2.0]],
    "abc",
    None,
    ["a", 0.0, 0.0],
    np.array([0.5, -1.0, 2.0]),
    np.array([0.5, -1.0, 2.0], dtype=np.float32),
    np.array([1, 2, 3]),
    np.array([0.5, -1.0, 2.0], dtype=">f8"),
    np.array([0.0, math.nan, 0.0]),
    np.array([0.0, 0.0, 2e9]),
    np.array([[0.5, -1.0, 2.0]]),
    np.array(1.0),
    np.array([1.0, 2.0, 3.0, 4.0])[::1][1:],
    np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])[::2],
    np.array([1.0, 2.0, 3.0], dtype=object),
]


@pytest.mark.parametrize("value", POINTS, ids=range(len(POINTS)))
def test_vec_accepts_rejects_and_converts_as_point(value: object) -> None:
    assert outcome(checks.vec, value) == outcome(checks.point, value)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.floats(), st.floats(-2e9, 2e9), st.integers(-(10**10), 10**10), st.booleans()),
        min_size=2,
        max_size=4,
    ),
    st.sampled_from(["list", "tuple", "array"]),
)
def test_vec_agrees_with_point_on_random_values(values: list, form: str) -> None:
    value = {"list": values, "tuple": tuple(values), "array": np.array(values, dtype=float)}[form]
    assert outcome(checks.vec, value) == outcome(checks.point, value)


def _columns_outcome(check: Callable[[Any, str], Any], value: object) -> tuple:
    try:
        out = check(value, "arg")
    except ValueError as exc:
        return ("error", str(exc))
    if isinstance(out, np.ndarray):
        return tuple(map(tuple, out.T.tolist()))
    return tuple(map(tuple, out))


ROWS = [
    np.arange(12.0).reshape(4, 3),
    np.arange(12.0).reshape(4, 3).T.copy().T,  # Fortran order
    np.arange(24.0).reshape(4, 6)[:, ::2],  # not contiguous
    np.arange(12, dtype=np.float32).reshape(4, 3),
    np.arange(12).reshape(4, 3),
    np.arange(12.0).reshape(4, 3).astype(">f8"),
    np.zeros((0, 3)),
    np.full((3, 3), 3e8),  # sum of squares beyond 1e18, every coordinate within bounds
    np.array([[0.0, 0.0, 0.0], [0.0, 2e9, 0.0]]),
    np.array([[0.0, 0.0, 0.0], [0.0, math.nan, 0.0]]),
    np.array([[0.0, 0.0, 0.0], [math.inf, 0.0, 0.0]]),
    np.array([[0.0, 0.0, 0.0], [1e300, 1e300, 0.0]]),
    np.zeros((3, 2)),
    np.zeros(3),
    [[0, 0, 0], [0, 1, 0]],
    [[0.0, 0.0, 0.0], [0.0, 10**400, 0.0]],
    [["a", 0, 0], [0, 1, 0]],
    "abc",
]


@pytest.mark.parametrize("value", ROWS, ids=range(len(ROWS)))
def test_columns_accepts_rejects_and_converts_as_points(value: object) -> None:
    assert _columns_outcome(checks.columns, value) == _columns_outcome(checks.points, value)


def _composed_swing_frame(r: Rig, j: int, parent_frame: rot.Quat, direction: rot.Vec) -> rot.Quat:
    local = rot.rotate(rot.conj(parent_frame), direction)
    s = rot.swing(r.rest_dir[j], local, r.rest_x[j])
    return rot.mul(parent_frame, rot.mul(s, r.rest_local[j]))


def test_swing_frame_gives_the_rotation_helpers_floats() -> None:
    rng = np.random.default_rng(11)
    s = bare("humanoid")
    r = rig(s)
    for _ in range(400):
        j = int(rng.integers(len(s)))
        parent_frame = rot.normalize_quat(tuple(rng.normal(size=4).tolist()))
        kind = rng.integers(4)
        if kind == 0:  # a random direction
            direction = rot.unit(tuple(rng.normal(size=3).tolist()))
        else:  # along, opposite or nearly opposite the rest direction, in world axes
            local = r.rest_dir[j] if kind == 1 else tuple(-v for v in r.rest_dir[j])
            if kind == 3:
                local = rot.unit(tuple(v + 1e-9 * e for v, e in zip(local, rng.normal(size=3))))
            direction = rot.rotate(parent_frame, local)
        assert direction is not None
        assert r.swing_frame(j, parent_frame, direction) == _composed_swing_frame(r, j, parent_frame, direction)


def test_cached_plans_do_not_change_results() -> None:
    """255 target subsets of the octopus churn the plan cache (it holds 64); every result equals
    a solve on a fresh skeleton with an empty cache, bit for bit."""
    cached = bare("octopus")
    effectors = cached.end_effectors
    rng = np.random.default_rng(3)
    problems = []
    for mask in range(1, 2 ** len(effectors)):
        chosen = [e for k, e in enumerate(effectors) if mask >> k & 1]
        targets = {e: cached.rest_positions[cached.index(e)] + rng.normal(size=3) * 0.2 for e in chosen}
        weights = {e: float(rng.uniform(0.5, 2.0)) for e in chosen} if mask % 7 == 0 else None
        problems.append((targets, weights))
    for targets, weights in problems + problems[::-3]:
        got = solve(cached, targets, weights=weights, max_iterations=3)
        fresh = solve(
            Skeleton(cached.names, cached.parents, cached.rest_positions), targets, weights=weights, max_iterations=3
        )
        assert got.positions.tobytes() == fresh.positions.tobytes()
        assert got.rotations.tobytes() == fresh.rotations.tobytes()
        assert (got.iterations, got.errors) == (fresh.iterations, fresh.errors)
    assert len(rig(cached).plans) <= 64


def test_results_are_fresh_arrays() -> None:
    """Changing a result (or the cached rest pose's copy) never leaks into the next solve."""
    s = bare("humanoid")
    first = solve(s, {})
    first.positions[:] = 7.0
    first.rotations[:] = 0.0
    again = solve(s, {})
    np.testing.assert_allclose(again.positions, s.rest_positions, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(again.rotations, axis=1), 1.0)
    hand = solve(s, {"hand_l": s.rest_positions[s.index("hand_l")] + [0.1, 0.0, 0.1]})
    np.testing.assert_allclose(solve(s, {}).positions, s.rest_positions, atol=1e-12)
    assert not np.allclose(hand.positions, s.rest_positions)


def test_skeleton_state_the_caches_rely_on_is_read_only() -> None:
    s = bare("humanoid")
    for arr in (s.parents, s.rest_positions, s.bone_lengths, s.rest_frames):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 0
    assert isinstance(s.names, tuple) and isinstance(s.order, tuple) and isinstance(s.end_effectors, tuple)
    limited = presets.get("humanoid")
    assert limited.constraints  # the preset has joint limits
    with pytest.raises(TypeError):
        limited.constraints["head"] = ()  # type: ignore[index]
    with pytest.raises(TypeError):
        s.constraints["head"] = ()  # type: ignore[index]


def test_degenerate_steps_at_the_base_match_the_vectorised_chain() -> None:
    """A chain whose stage-1 pass puts joint 1 exactly on the base, in every axis-aligned
    orientation: the base's stage-1 point, worked out only for such a step, must be the one
    the batch solver's vectorised chain (written independently, with numpy) uses."""
    folded = np.array([[0.0, 0.0, 0.0], [0.0, -1.0, 0.0], [1.0, -1.0, 0.0]])
    target = np.array([0.0, 1.0, 0.0])
    names = ["a", "b", "c"]
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            pts, t = folded[:, perm] * signs, target[list(perm)] * signs
            one = solve_chain(pts, t)
            assert np.isfinite(one.positions).all() and one.reached
            s = Skeleton(names, [-1, 0, 1], pts)
            many = solve_batch(s, {"c": np.repeat(t[None], 32, axis=0)}, positions=pts)
            np.testing.assert_allclose(many.positions, np.broadcast_to(one.positions, many.positions.shape), atol=1e-9)
            assert (many.iterations == one.iterations).all()


def test_plans_with_other_weights_are_other_plans() -> None:
    """The same targets with other centroid weights (or none, or an empty mapping, which weighs
    each proposal by its targeted effectors) on one skeleton give what fresh skeletons give."""
    cached = bare("humanoid")
    targets = {
        name: cached.rest_positions[cached.index(name)] + offset
        for name, offset in (("head", [0.0, -0.1, 0.2]), ("hand_l", [0.3, 0.4, 0.2]), ("hand_r", [-0.2, 0.5, 0.3]))
    }
    results = []
    for weights in (None, {"hand_l": 4.0}, {"hand_l": 0.25}, {}, {"toe_l": 3.0}, None, {"hand_l": 4.0}):
        got = solve(cached, targets, weights=weights)
        fresh = solve(bare("humanoid"), targets, weights=weights)
        assert got.positions.tobytes() == fresh.positions.tobytes()
        assert got.rotations.tobytes() == fresh.rotations.tobytes()
        results.append(got.positions)
    assert not np.allclose(results[1], results[2])  # the weights do matter


@pytest.mark.parametrize(
    ("positions", "pattern"),
    [
        (np.zeros((3, 3)), r"^positions: expected shape \(25, 3\)"),
        (np.zeros((25, 2)), r"^positions"),
        (np.full((25, 3), math.nan), r"^positions.*finite"),
        ("abc", r"^positions"),
    ],
)
def test_pose_frames_names_bad_positions(positions: object, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        pose_frames(bare("humanoid"), positions)  # type: ignore[arg-type]


def test_pose_frames_of_a_solved_pose_are_the_solves_frames() -> None:
    s = bare("humanoid")
    res = solve(s, {"hand_l": s.rest_positions[s.index("hand_l")] + [0.2, 0.3, 0.1], "head": [0.05, 1.6, 0.1]})
    np.testing.assert_allclose(pose_frames(s, res.positions), res.rotations, atol=1e-12)
    np.testing.assert_array_equal(pose_frames(s, res.positions.tolist()), pose_frames(s, res.positions))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["humanoid", "robot_arm", "octopus"]))
def test_a_start_within_the_limits_is_taken_as_it_is(seed: int, name: str) -> None:
    """The constrained solve from a pose already within the limits, given with its frames (as the
    natural solve gives its chains'), ends where the solve that projects the pose first ends."""
    sk = presets.get(name).core  # (the solver internals pose the solved joints)
    r = rig(sk)
    rng = np.random.default_rng(seed)
    shaken = sk.rest_positions + rng.normal(0.0, 0.15, sk.rest_positions.shape)
    start = r.bone_pose(*(list(v) for v in shaken.T))
    legal, frames = LimitedSolve(r, {}, None, {}, None).project(start, r.pose_frames(start))
    e = sk.index(sk.end_effectors[int(rng.integers(len(sk.end_effectors)))])
    goals = {e: Goal(tuple(np.asarray(legal[e]) + rng.normal(0.0, 0.1, 3)), None, 1.0)}
    args = (sk, r, goals, None, {}, None, legal, 1e-3, 40)
    projected, taken = solve_pose(*args), solve_pose(*args, frames=frames)
    assert taken[2] == projected[2]
    np.testing.assert_allclose(np.array(taken[0]), np.array(projected[0]), atol=1e-9)
    a, b = np.array(taken[1]), np.array(projected[1])
    assert np.minimum(np.abs(a - b).max(axis=1), np.abs(a + b).max(axis=1)).max() < 1e-9  # (q and -q alike)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["humanoid", "robot_arm", "octopus"]), st.floats(0.002, 0.03))
def test_least_motion_steps_keep_the_limits_and_the_bones(seed: int, name: str, step: float) -> None:
    """``LimitedSolve.least_motion`` from a pose within the limits, a target a small step (metres)
    from its effector: where it reaches, its pose (the branches no target pulls placed, as ``run``
    places them) reaches, is within every limit (1e-6 deg, the humanoid's rigid chest's too) and
    keeps every bone's length."""
    sk = presets.get(name).core
    r = rig(sk)
    rng = np.random.default_rng(seed)
    shaken = sk.rest_positions + rng.normal(0.0, 0.15, sk.rest_positions.shape)
    start = r.bone_pose(*(list(v) for v in shaken.T))
    solver = LimitedSolve(r, {}, None, {}, None)
    legal, frames = solver.project(start, r.pose_frames(start))
    e = sk.index(sk.end_effectors[int(rng.integers(len(sk.end_effectors)))])
    way = rng.normal(size=3)
    goal = Goal(tuple(np.asarray(legal[e]) + step * way / np.linalg.norm(way)), None, 1.0)
    solver = LimitedSolve(r, {e: goal}, None, {}, None)
    got = solver.least_motion(legal, frames, 1e-3)
    if got is None:
        return
    pose, turned = solver.placed(*got, legal, frames)
    assert rot.dist(pose[e], goal.position) <= 1e-3
    assert max(violations(sk, np.array(pose), np.array(turned)).values(), default=0.0) <= 1e-6
    p = np.array(pose)
    for j in range(1, len(sk)):
        q = sk.parents[j]
        if q >= 0:
            assert abs(np.linalg.norm(p[j] - p[q]) - r.lengths[j]) < 1e-9


def test_least_motion_gives_up_once_a_joint_moves_beyond_its_bound() -> None:
    """``least_motion(..., bound)``: the steps that reach a hand 2 cm off reach it; bounded by 1 mm of
    motion (less than the hand itself must move) they give up, ``None``, as the caller would refuse it."""
    sk = presets.get("humanoid").core
    r = rig(sk)
    legal, frames = LimitedSolve(r, {}, None, {}, None).project(list(map(tuple, sk.rest_positions)), r.rest_frames)
    e = sk.index("hand_l")
    goal = Goal(tuple(np.asarray(legal[e]) + np.array([0.0, -0.02, 0.01])), None, 1.0)
    solver = LimitedSolve(r, {e: goal}, None, {}, None)
    got = solver.least_motion(legal, frames, 1e-3)
    assert got is not None and rot.dist(got[0][e], goal.position) <= 1e-3
    assert solver.least_motion(legal, frames, 1e-3, bound=1e-3) is None


def test_the_relaxed_pose_kept_on_the_rig_changes_no_result() -> None:
    """The natural solve keeps the frames of the last ``relax_to`` pose on the rig (a drag relaxes
    toward the same built pose every frame): solves alternating between two built poses give, bit
    for bit, what each gives on a fresh skeleton (``presets.get`` makes one, with a rig of its own)."""
    kept = presets.get("humanoid")
    rest = kept.rest_positions
    placed = solve(kept, {"hand_r": rest[kept.index("hand_r")] + [0.1, -0.4, 0.2]}).positions
    target = {"hand_l": rest[kept.index("hand_l")] + [-0.2, -0.3, 0.25]}
    built = (rest, placed, rest, placed)
    got = [solve(kept, target, positions=b, relax_to=b) for b in built]
    for b, g in zip(built, got):
        fresh = solve(presets.get("humanoid"), target, positions=b, relax_to=b)
        assert g.positions.tobytes() == fresh.positions.tobytes()
        assert g.rotations.tobytes() == fresh.rotations.tobytes()
    assert not np.allclose(got[0].positions, got[1].positions)  # (the built pose does matter)


class _EveryChainFirst(NaturalSolve):
    """The natural solve that solves every chain at the first level, as it once did."""

    def beyond_first_level(self, pose: list[rot.Vec]) -> set[int]:
        return set()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_chains_left_to_a_stiffer_level_change_no_result(seed: int) -> None:
    """A chain whose target lies beyond its length at the first level is not solved there (a stiffer
    level's share would throw that solve away, and a share that cannot reach solves it after all):
    the poses are those of solving it first (to rounding). Targets near and beyond the arms' reach,
    out of any reach, and on every effector, cold and warm."""
    import fabrik3d.solver.whole_body as tree_module

    sk = presets.get("humanoid")
    rest = sk.rest_positions
    rng = np.random.default_rng(seed)
    names = ["hand_l", "hand_r", "head", "toe_l", "toe_r"]
    picked = [n for n in names if rng.random() < 0.6] or ["hand_l"]
    targets = {n: rest[sk.index(n)] + rng.normal(0.0, 0.35, 3) for n in picked}
    start = None if rng.random() < 0.5 else solve(sk, {"hand_r": rest[sk.index("hand_r")] + [0.2, -0.5, 0.3]}).positions
    got = solve(sk, targets, positions=start)
    kept = tree_module.NaturalSolve
    tree_module.NaturalSolve = _EveryChainFirst
    try:
        every = solve(sk, targets, positions=start)
    finally:
        tree_module.NaturalSolve = kept
    # (the same solves in another order: the same poses, to rounding; seed 600 differs by 6.7e-16)
    np.testing.assert_allclose(got.positions, every.positions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.rotations, every.rotations, rtol=0, atol=1e-12)


STOPPED_ELBOWS = [(0.0, 150.0), (-150.0, 0.0)]  # (degrees: the elbow's range, its stop at the straight arm)


def stopped_elbow_reaches(low: float, high: float) -> bool:
    """Whether ``least_motion`` bends a straight two-bone arm 20 deg at its elbow (a hinge, ``low``..
    ``high`` degrees, resting at its stop), the way its range allows, to reach a target within 1 mm."""
    rest = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 2.0, 0.0]])
    sk = Skeleton(["a", "b", "c"], [-1, 0, 1], rest, {"b": Hinge((1.0, 0.0, 0.0), low, high)})
    r = rig(sk)
    start, frames = LimitedSolve(r, {}, None, {}, None).project(list(map(tuple, rest)), r.rest_frames)
    bend = math.copysign(math.radians(20.0), high + low)  # (the way the range allows)
    goal = Goal((0.0, 1.0 + math.cos(bend), math.sin(bend)), None, 1.0)
    got = LimitedSolve(r, {2: goal}, None, {}, None).least_motion(start, frames, 1e-3)
    return got is not None and rot.dist(got[0][2], goal.position) <= 1e-3


@pytest.mark.parametrize("low, high", STOPPED_ELBOWS)
def test_least_motion_backs_a_joint_off_its_limit(low: float, high: float) -> None:
    """A straight arm whose elbow rests at its stop, a target that needs a 20 deg bend: the
    least-motion steps bend it the way its limit allows and reach."""
    assert stopped_elbow_reaches(low, high)


def test_least_motion_without_the_kinks_stalls_at_a_stop(monkeypatch) -> None:
    """The arms above with ``numeric_step``'s kinked columns unseen: a turn into the stop moves
    nothing, so a one-sided difference sees no elbow where its stop lies the way the column turns;
    the steps then turn the shoulder alone and stall (for one of the two ranges)."""
    monkeypatch.setattr(LimitedSolve, "kinked", lambda self, j, frames, ahead, back: False)
    assert not all(stopped_elbow_reaches(low, high) for low, high in STOPPED_ELBOWS)
