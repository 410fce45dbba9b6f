"""Property tests of the FABRIK guarantees over random trees, poses and targets (hypothesis)."""

from __future__ import annotations

import copy
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabrik3d import Skeleton, solve, solve_chain

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

coord = st.floats(-10.0, 10.0, allow_nan=False)


@st.composite
def unit_vectors(draw: st.DrawFn) -> np.ndarray:
    v = np.array(draw(st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1))))
    n = np.linalg.norm(v)
    if n < 0.1:  # too short to normalise well: pick an axis instead
        v, n = np.eye(3)[draw(st.integers(0, 2))], 1.0
    return v / n


@st.composite
def skeletons(draw: st.DrawFn, max_joints: int = 10) -> Skeleton:
    """A random tree: random parent array, relabelled so the root can be any index, bones 0.05 to 3 long."""
    n = draw(st.integers(2, max_joints))
    parents = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    pos = np.empty((n, 3))
    pos[0] = draw(st.tuples(coord, coord, coord))
    for i in range(1, n):
        pos[i] = pos[parents[i]] + draw(unit_vectors()) * draw(st.floats(0.05, 3.0))
    perm = draw(st.permutations(range(n)))  # old index i -> new index perm[i]
    new_parents = [0] * n
    new_pos = np.empty_like(pos)
    for i in range(n):
        new_parents[perm[i]] = -1 if parents[i] < 0 else perm[parents[i]]
        new_pos[perm[i]] = pos[i]
    return Skeleton([f"j{k}" for k in range(n)], new_parents, new_pos)


def forward(s: Skeleton, root: np.ndarray, directions: list[np.ndarray]) -> np.ndarray:
    """A pose with the skeleton's bone lengths: bone j along directions[j]."""
    pos = np.empty((len(s), 3))
    pos[s.root] = root
    for j in s.order[1:]:
        pos[j] = pos[s.parents[j]] + directions[j] * s.bone_lengths[j]
    return pos


@st.composite
def start_poses(draw: st.DrawFn, s: Skeleton) -> np.ndarray | None:
    kind = draw(st.sampled_from(["rest", "random", "straight", "collapsed"]))
    if kind == "rest":
        return None
    root = np.array(draw(st.tuples(coord, coord, coord)))
    if kind == "collapsed":  # every joint on one point: directions must come from the rest pose
        return np.tile(root, (len(s), 1))
    if kind == "straight":  # every bone along one direction
        u = draw(unit_vectors())
        return forward(s, root, [u] * len(s))
    return forward(s, root, [draw(unit_vectors()) for _ in range(len(s))])


@st.composite
def problems(draw: st.DrawFn) -> dict:
    """A skeleton, a start pose and targets, including degenerate ones."""
    s = draw(skeletons())
    start = draw(start_poses(s))
    pose = s.rest_positions if start is None else start
    chosen = draw(st.lists(st.sampled_from(s.end_effectors), min_size=1, unique=True))
    shared = np.array(draw(st.tuples(coord, coord, coord)))
    targets = {}
    for name in chosen:
        kind = draw(st.sampled_from(["point", "root", "inner", "same", "shared", "away"]))
        e = s.index(name)
        if kind == "point":
            t = np.array(draw(st.tuples(coord, coord, coord)))
        elif kind == "root":
            t = pose[s.root].copy()
        elif kind == "inner":
            t = pose[draw(st.sampled_from(s.path_to_root(e)))].copy()
        elif kind == "same":  # the target did not move
            t = pose[e].copy()
        elif kind == "shared":  # several targets on one point
            t = shared.copy()
        else:  # behind the root, on the line from the effector through the root
            t = pose[s.root] + (pose[s.root] - pose[e]) * draw(st.floats(0.0, 2.0))
        targets[name] = t
    root_target = draw(st.none() | st.tuples(coord, coord, coord).map(np.array))
    weights = draw(st.none() | st.fixed_dictionaries({n: st.floats(0.1, 10.0) for n in chosen}))
    return {"skeleton": s, "targets": targets, "positions": start, "root_target": root_target, "weights": weights}


def bone_lengths(s: Skeleton, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bones = np.array([j for j in range(len(s)) if j != s.root])
    return np.linalg.norm(pos[bones] - pos[s.parents[bones]], axis=1), s.bone_lengths[bones]


@SETTINGS
@given(problems(), st.sampled_from([1e-4, 1e-3, 1e-2]), st.integers(1, 60))
def test_tree_solve_guarantees(problem: dict, tolerance: float, max_iterations: int) -> None:
    s = problem["skeleton"]
    kwargs = {k: problem[k] for k in ("positions", "root_target", "weights")}
    saved = copy.deepcopy((problem["targets"], kwargs))
    res = solve(s, problem["targets"], tolerance=tolerance, max_iterations=max_iterations, **kwargs)

    # Never NaN or inf; unit frames.
    assert np.isfinite(res.positions).all()
    assert np.isfinite(res.rotations).all()
    np.testing.assert_allclose(np.linalg.norm(res.rotations, axis=1), 1.0, atol=1e-12)
    # Bone lengths preserved to 1e-9 relative.
    got, want = bone_lengths(s, res.positions)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    # The root where it should be.
    if problem["root_target"] is not None:
        root = problem["root_target"]
    elif problem["positions"] is not None:
        root = problem["positions"][s.root]
    else:
        root = s.rest_positions[s.root]
    np.testing.assert_allclose(res.positions[s.root], root, rtol=0, atol=1e-12)
    # Errors are the measured distances, for exactly the targeted effectors.
    assert set(res.errors) == set(problem["targets"])
    for name, t in problem["targets"].items():
        assert math.isfinite(res.errors[name])
        assert abs(res.errors[name] - np.linalg.norm(res.positions[s.index(name)] - t)) <= 1e-12
    assert res.converged == all(v <= tolerance for v in res.errors.values())
    assert 0 <= res.iterations <= max_iterations
    # Inputs not modified; the same input gives bit-identical output.
    targets_after, kwargs_after = problem["targets"], kwargs
    for name, t in saved[0].items():
        assert np.array_equal(targets_after[name], t)
    for key, value in saved[1].items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(kwargs_after[key], value)
        else:
            assert kwargs_after[key] == value
    again = solve(s, problem["targets"], tolerance=tolerance, max_iterations=max_iterations, **kwargs)
    assert again.positions.tobytes() == res.positions.tobytes()
    assert again.rotations.tobytes() == res.rotations.tobytes()
    assert (again.iterations, again.errors) == (res.iterations, res.errors)


@SETTINGS
@given(skeletons(), st.data())
def test_single_target_in_a_tree_is_the_chain_solve_of_its_path(s: Skeleton, data: st.DataObject) -> None:
    start = data.draw(start_poses(s))
    pose = s.rest_positions if start is None else start
    e = data.draw(st.sampled_from(s.end_effectors))
    t = np.array(data.draw(st.tuples(coord, coord, coord)))
    res = solve(s, {e: t}, positions=start, max_iterations=200)
    path = list(s.path_to_root(s.index(e)))
    if start is not None and np.ptp(start, axis=0).max() == 0.0:
        return  # a collapsed pose is no valid chain for solve_chain (it takes bone lengths from its input)
    ref = solve_chain(pose[path], t, max_iterations=200)
    np.testing.assert_allclose(res.positions[path], ref.positions, rtol=0, atol=1e-9)
    assert res.iterations == ref.iterations


@st.composite
def chains(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A random chain (1 to 9 bones, 0.1 to 2 long) from a random base, in a random or a straight pose."""
    n = draw(st.integers(1, 9))
    lengths = np.array(draw(st.lists(st.floats(0.1, 2.0), min_size=n, max_size=n)))
    base = np.array(draw(st.tuples(coord, coord, coord)))
    if draw(st.booleans()):
        dirs = [draw(unit_vectors()) for _ in range(n)]
    elif draw(st.booleans()):  # straight along a world axis
        dirs = [np.eye(3)[draw(st.integers(0, 2))] * draw(st.sampled_from([-1.0, 1.0]))] * n
    else:  # straight along any direction (rounding puts the joints a hair off the line)
        dirs = [draw(unit_vectors())] * n
    pts = np.vstack([base, base + np.cumsum([d * L for d, L in zip(dirs, lengths)], axis=0)])
    return pts, lengths


@SETTINGS
@given(chains(), unit_vectors(), st.floats(0.0, 1.0), st.booleans())
def test_reachable_chain_targets_are_reached(chain, u: np.ndarray, where: float, on_line: bool) -> None:
    pts, lengths = chain
    reach = lengths.sum()
    dead = max(0.0, 2.0 * lengths.max() - reach)
    lo, hi = dead + 0.3 * reach, 0.95 * reach  # clear of the dead zone (see test_chain), inside 95 % of the reach
    if lo >= hi:
        return
    span = np.linalg.norm(pts[-1] - pts[0])
    if on_line and len(lengths) > 1 and span > 1e-6:  # on the chain's own line (which may be straight): bend needed
        u = (pts[-1] - pts[0]) / span
    target = pts[0] + u * (lo + where * (hi - lo))
    saved = pts.copy()
    res = solve_chain(pts, target, tolerance=1e-3, max_iterations=5000)
    assert np.array_equal(pts, saved)
    assert res.reached, (res.iterations, res.error)
    assert res.error <= 1e-3
    np.testing.assert_array_equal(res.positions[0], pts[0])
    np.testing.assert_allclose(np.linalg.norm(np.diff(res.positions, axis=0), axis=1), lengths, rtol=1e-9)


@SETTINGS
@given(chains(), unit_vectors(), st.floats(1.001, 10.0))
def test_unreachable_chain_targets_give_a_straight_aligned_chain(chain, u: np.ndarray, factor: float) -> None:
    pts, lengths = chain
    target = pts[0] + u * lengths.sum() * factor
    res = solve_chain(pts, target)
    assert res.iterations == 1
    assert res.reached == (res.error <= 1e-3)  # an unreachable target can still be within tolerance
    along = np.concatenate([[0.0], np.cumsum(lengths)])
    np.testing.assert_allclose(res.positions, pts[0] + along[:, None] * u, rtol=0, atol=1e-9)
    assert abs(res.error - lengths.sum() * (factor - 1.0)) <= 1e-9 * factor * lengths.sum()


@SETTINGS
@given(chains(), st.data())
def test_degenerate_chain_targets_stay_finite(chain, data: st.DataObject) -> None:
    pts, lengths = chain
    kind = data.draw(st.sampled_from(["base", "inner", "same", "behind"]))
    if kind == "base":
        t = pts[0]
    elif kind == "inner":
        t = pts[data.draw(st.integers(0, len(pts) - 1))]
    elif kind == "same":
        t = pts[-1]
    else:
        t = pts[0] - (pts[-1] - pts[0]) * data.draw(st.floats(0.0, 2.0))
    res = solve_chain(pts, t.copy(), max_iterations=300)
    assert np.isfinite(res.positions).all()
    assert math.isfinite(res.error)
    np.testing.assert_allclose(np.linalg.norm(np.diff(res.positions, axis=0), axis=1), lengths, rtol=1e-9)
    if kind == "same":  # the target did not move: the pose stays
        np.testing.assert_allclose(res.positions, pts, rtol=0, atol=1e-9)
        if np.linalg.norm(pts[-1] - pts[0]) < (1.0 - 1e-9) * lengths.sum():
            assert res.iterations == 0
            np.testing.assert_array_equal(res.positions, pts)
        else:  # fully stretched: rounding may call it unreachable, which costs the one straightening step
            assert res.iterations <= 1
