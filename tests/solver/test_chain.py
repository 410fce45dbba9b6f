"""Single-chain FABRIK (``fabrik3d.solve_chain``) on hand-made chains."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fabrik3d import solve_chain


def straight(n_bones: int, length: float = 1.0, axis: int = 1) -> np.ndarray:
    """``(n_bones + 1, 3)`` joints from the origin along a world axis."""
    pts = np.zeros((n_bones + 1, 3))
    pts[:, axis] = np.arange(n_bones + 1) * length
    return pts


def lengths(pts: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.diff(pts, axis=0), axis=1)


def check_pose(start: np.ndarray, result_positions: np.ndarray) -> None:
    """Finite, the base unmoved, every bone its input length."""
    assert np.isfinite(result_positions).all()
    np.testing.assert_array_equal(result_positions[0], start[0])
    np.testing.assert_allclose(lengths(result_positions), lengths(start), rtol=1e-9)


BENT = np.array([[0.0, 0.0, 0.0], [0.3, 1.0, 0.0], [0.1, 2.0, 0.2], [0.5, 2.9, 0.1], [0.2, 3.8, 0.4]])


def test_reachable_target_is_reached() -> None:
    target = np.array([1.5, 1.0, 2.0])
    res = solve_chain(BENT, target, tolerance=1e-4, max_iterations=200)
    check_pose(BENT, res.positions)
    assert res.reached is True
    assert res.error <= 1e-4
    assert res.error == pytest.approx(np.linalg.norm(res.positions[-1] - target), abs=1e-15)
    assert 1 <= res.iterations <= 200
    assert res.positions.shape == BENT.shape


def test_tighter_tolerance_costs_iterations_and_gives_smaller_errors() -> None:
    target = np.array([1.5, 1.0, 2.0])
    loose = solve_chain(BENT, target, tolerance=1e-2)
    tight = solve_chain(BENT, target, tolerance=1e-6, max_iterations=1000)
    assert loose.error <= 1e-2 and tight.error <= 1e-6
    assert tight.iterations > loose.iterations


@pytest.mark.parametrize("target", [[0.0, 10.0, 0.0], [5.0, -3.0, 2.0], [-20.0, 0.0, 0.0]])
def test_unreachable_target_straightens_the_chain_in_one_step(target: list[float]) -> None:
    t = np.array(target)
    res = solve_chain(BENT, t)
    check_pose(BENT, res.positions)
    assert res.iterations == 1
    assert res.reached is False
    u = (t - BENT[0]) / np.linalg.norm(t - BENT[0])
    cumulative = np.concatenate([[0.0], np.cumsum(lengths(BENT))])
    np.testing.assert_allclose(res.positions, BENT[0] + cumulative[:, None] * u, atol=1e-12)
    assert res.error == pytest.approx(np.linalg.norm(t - BENT[0]) - cumulative[-1], rel=1e-12)


def test_target_exactly_at_full_reach_is_reached() -> None:
    pts = straight(3)
    target = np.array([3.0, 0.0, 0.0])  # full reach, along X while the chain points along Y
    res = solve_chain(pts, target, tolerance=1e-3, max_iterations=500)
    check_pose(pts, res.positions)
    assert res.error <= 1e-3


# A chain whose first bone outweighs the rest: dead zone of radius 2 * 3 - (3 + 0.5 + 0.5) = 2 around the base.
LOPSIDED = np.array([[0.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.5, 3.0, 0.0], [1.0, 3.0, 0.0]])
DEAD_ZONE = 2.0


@pytest.mark.parametrize("target", [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.2, 0.0, 0.3], [0, -1.9, 0]])
def test_target_in_the_dead_zone_gets_as_close_as_possible(target: list[float]) -> None:
    t = np.array(target)
    res = solve_chain(LOPSIDED, t, tolerance=1e-3, max_iterations=1000)
    check_pose(LOPSIDED, res.positions)
    best = DEAD_ZONE - np.linalg.norm(t)  # the effector can come no closer than the dead zone's edge
    assert res.reached is False
    assert best - 1e-9 <= res.error <= best + 1e-3
    assert res.iterations < 1000  # stopped by the stall rule, not by the limit


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("along", [2.5, 1.5, 0.5, -2.5, -0.7])
def test_straight_chain_along_the_line_to_its_target_is_bent_and_reaches_it(axis: int, along: float) -> None:
    pts = straight(3, axis=axis)
    target = np.zeros(3)
    target[axis] = along
    res = solve_chain(pts, target, tolerance=1e-3, max_iterations=200)
    check_pose(pts, res.positions)
    assert res.reached, res.error
    off_line = np.delete(res.positions, axis, axis=1)
    assert np.abs(off_line).max() > 1e-3  # it really bent
    # Documented bend direction: toward the world axis least aligned with the chain (X before Y before Z).
    bend_axis = 1 if axis == 0 else 0
    other = 3 - axis - bend_axis
    np.testing.assert_allclose(res.positions[:, other], 0.0, atol=1e-12)


def test_straight_diagonal_chain_is_bent_too() -> None:
    pts = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]])
    res = solve_chain(pts, [1.5, 1.5, 1.5], tolerance=1e-4, max_iterations=200)
    check_pose(pts, res.positions)
    assert res.error <= 1e-4


def test_folded_chain_on_one_line_is_bent_and_reaches() -> None:
    pts = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.0], [0.0, 1.5, 0.0]])
    res = solve_chain(pts, [0.0, 1.2, 0.0], tolerance=1e-3, max_iterations=200)
    check_pose(pts, res.positions)
    assert res.reached


def test_target_at_the_base_is_reached() -> None:
    pts = straight(4)
    res = solve_chain(pts, pts[0], tolerance=1e-3, max_iterations=200)
    check_pose(pts, res.positions)
    assert res.reached


@pytest.mark.parametrize("inner", [1, 2, 3])
def test_target_on_an_inner_joint_is_reached(inner: int) -> None:
    for pts in (straight(4), BENT):
        res = solve_chain(pts, pts[inner], tolerance=1e-3, max_iterations=200)
        check_pose(pts, res.positions)
        assert res.reached, (inner, res.error)


def test_target_that_did_not_move_costs_no_iteration() -> None:
    res = solve_chain(BENT, BENT[-1].copy())
    assert res.iterations == 0
    assert res.error == 0.0 and res.reached
    np.testing.assert_array_equal(res.positions, BENT)
    # Within tolerance counts as not moved as well.
    res = solve_chain(BENT, BENT[-1] + [0.0, 5e-4, 0.0], tolerance=1e-3)
    assert res.iterations == 0
    np.testing.assert_array_equal(res.positions, BENT)


def test_warm_start_from_a_solution_needs_no_work() -> None:
    first = solve_chain(BENT, [1.0, 2.0, 1.0], tolerance=1e-4)
    again = solve_chain(first.positions, [1.0, 2.0, 1.0], tolerance=1e-4)
    assert again.iterations == 0
    np.testing.assert_array_equal(again.positions, first.positions)


def test_max_iterations_bounds_the_work() -> None:
    res = solve_chain(BENT, [1.5, 1.0, 2.0], tolerance=1e-12, max_iterations=3)
    assert res.iterations == 3
    assert res.reached is False
    check_pose(BENT, res.positions)


def test_two_joint_chain() -> None:
    pts = np.array([[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    res = solve_chain(pts, [2.0, 0.0, 0.0])
    check_pose(pts, res.positions)
    assert res.reached
    res = solve_chain(pts, [0.0, 0.5, 0.0])  # inside a single bone's reach: can't get closer than 1.5
    check_pose(pts, res.positions)
    assert res.error == pytest.approx(1.5)


def test_inputs_are_not_modified_and_output_is_deterministic() -> None:
    pts = BENT.copy()
    target = np.array([1.0, 1.0, 1.0])
    a = solve_chain(pts, target)
    b = solve_chain(pts, target)
    np.testing.assert_array_equal(pts, BENT)
    np.testing.assert_array_equal(target, [1.0, 1.0, 1.0])
    assert a.positions.tobytes() == b.positions.tobytes()
    assert (a.iterations, a.error) == (b.iterations, b.error)
    a.positions[1] = 99.0  # the result is the caller's own array
    np.testing.assert_array_equal(pts, BENT)


def test_accepts_lists_and_integer_arrays() -> None:
    res = solve_chain([[0, 0, 0], [0, 1, 0], [0, 2, 0]], [1, 1, 0])
    assert res.positions.dtype == float
    assert res.reached


@pytest.mark.parametrize(
    ("positions", "target", "kwargs", "pattern"),
    [
        (np.zeros((3, 2)), [0, 0, 0], {}, r"^positions"),
        (np.zeros(3), [0, 0, 0], {}, r"^positions"),
        ([[0, 0, 0]], [0, 0, 0], {}, r"^positions.*at least two joints"),
        ([[0, 0, 0], [0, 1, 0], [0, 1, 0]], [0, 0, 0], {}, r"^positions.*coincide"),
        ([[0, 0, 0], [0, math.nan, 0]], [0, 0, 0], {}, r"^positions.*finite"),
        ([[0, 0, 0], [0, math.inf, 0]], [0, 0, 0], {}, r"^positions.*finite"),
        ([["a", 0, 0], [0, 1, 0]], [0, 0, 0], {}, r"^positions"),
        (BENT, [0, 0], {}, r"^target"),
        (BENT, [0, 0, math.nan], {}, r"^target.*finite"),
        (BENT, [0, -math.inf, 0], {}, r"^target.*finite"),
        (BENT, "abc", {}, r"^target"),
        (BENT, [0, 1, 0], {"tolerance": 0.0}, r"^tolerance"),
        (BENT, [0, 1, 0], {"tolerance": -1e-3}, r"^tolerance"),
        (BENT, [0, 1, 0], {"tolerance": math.nan}, r"^tolerance"),
        (BENT, [0, 1, 0], {"tolerance": math.inf}, r"^tolerance"),
        (BENT, [0, 1, 0], {"tolerance": "0.1"}, r"^tolerance"),
        (BENT, [0, 1, 0], {"tolerance": None}, r"^tolerance"),
        (BENT, [0, 1, 0], {"max_iterations": 0}, r"^max_iterations"),
        (BENT, [0, 1, 0], {"max_iterations": -5}, r"^max_iterations"),
        (BENT, [0, 1, 0], {"max_iterations": 2.5}, r"^max_iterations"),
        (BENT, [0, 1, 0], {"max_iterations": True}, r"^max_iterations"),
        (BENT, [0, 1, 0], {"max_iterations": None}, r"^max_iterations"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_argument(positions, target, kwargs, pattern) -> None:
    with pytest.raises(ValueError, match=pattern):
        solve_chain(positions, target, **kwargs)


def test_absurdly_large_numbers_are_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^target"):
        solve_chain(BENT, [1e300, 0, 0])  # finite, but squared distances would overflow
    with pytest.raises(ValueError, match=r"^target"):
        solve_chain(BENT, [10**400, 0, 0])  # a Python int too large for a float
    with pytest.raises(ValueError, match=r"^positions"):
        solve_chain([[0, 0, 0], [0, 10**400, 0]], [0, 1, 0])
    with pytest.raises(ValueError, match=r"^tolerance"):
        solve_chain(BENT, [0, 1, 0], tolerance=10**400)


def test_unit_scale_does_not_matter() -> None:
    # The same problem in millimetres behaves like the one in metres.
    target = np.array([1.5, 1.0, 2.0])
    m = solve_chain(BENT, target, tolerance=1e-4, max_iterations=500)
    mm = solve_chain(BENT * 1000.0, target * 1000.0, tolerance=1e-1, max_iterations=500)
    assert m.reached and mm.reached
    np.testing.assert_allclose(mm.positions / 1000.0, m.positions, atol=1e-3)


def test_bent_chain_may_get_worse_before_it_gets_better() -> None:
    # Once bent, the first iteration's error is above the straight chain's; that is no reason to stop.
    pts = np.zeros((5, 3))
    pts[1:, 1] = np.cumsum([0.5, 1.0, 0.3, 1.0])
    res = solve_chain(pts, [0.0, -2.0, 0.0], tolerance=1e-3, max_iterations=200)
    check_pose(pts, res.positions)
    assert res.reached, (res.iterations, res.error)


def test_straight_chain_along_a_diagonal_is_bent_too() -> None:
    # One FABRIK pass amplifies rounding noise off the line (here to ~1e-6): the chain is straight all the same.
    d = np.array([1.0, 2.0, 3.0]) / math.sqrt(14.0)
    pts = np.vstack([np.zeros(3), np.cumsum([1.344, 1.346, 1.435, 1.302])[:, None] * d])
    res = solve_chain(pts, 4.1355 * d, tolerance=1e-3, max_iterations=500)
    check_pose(pts, res.positions)
    assert res.reached, (res.iterations, res.error)


@pytest.mark.parametrize("angle", [1e-9, 1e-6, 1e-3, 1e-2])
def test_nearly_straight_chain_with_its_target_nearly_on_its_line_is_reached(angle: float) -> None:
    # Folded nearly flat, FABRIK crawls too slowly for the stall rule: the chain is bent as if straight.
    pts = np.array([[0.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, -2.0, 0.0]])
    target = 0.2 * np.array([0.0, math.cos(angle), math.sin(angle)])
    res = solve_chain(pts, target, tolerance=1e-3, max_iterations=500)
    check_pose(pts, res.positions)
    assert res.reached, (res.iterations, res.error)


def test_straight_chain_that_refolds_after_the_bend_still_reaches() -> None:
    # Bent once, this chain folds flat again into a FABRIK fixed point (error 0.175 for ever): it needs another bend.
    pts = np.array([[0.0, 0.0, 0.0], [-1.75, 0.0, 0.0], [-3.75, 0.0, 0.0], [-4.25, 0.0, 0.0]])
    res = solve_chain(pts, [-0.425, 0.0, 0.0], tolerance=1e-3, max_iterations=2000)  # 0.1 of the reach, no dead zone
    check_pose(pts, res.positions)
    assert res.reached, (res.iterations, res.error)
