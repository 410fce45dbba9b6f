"""Helpers of the batch tests: skeletons, problems, and the equality contract against ``solve``."""

from __future__ import annotations

from typing import Any

import numpy as np
from conftest import missing_tool

from fabrik3d import BatchResult, Skeleton, Target, solve, solve_batch
from fabrik3d.model import presets

TOL = 1e-3
# solve measures its errors with math.dist and math.acos, the batch with numpy (docs/batch.md): distances
# within ERROR_ULPS units in the last place, orientation errors (degrees) within ANGLE_ULPS.
ERROR_ULPS = 1
ANGLE_ULPS = 2


def needs_numba() -> Any:
    """numba, the extra ``fabrik3d[fast]`` the compiled backends need: the test skips without it (fails under
    ``CI=true``, where ``.ci/run`` installs it)."""
    try:
        import numba
    except ImportError:
        missing_tool("numba is not installed (pip install 'fabrik3d[fast]')")
    return numba


def plain(name: str) -> Skeleton:
    """A preset's joints and rest pose without its joint limits."""
    s = presets.get(name).core
    return Skeleton(s.names, s.parents, s.rest_positions)


def vectorisable(name: str) -> Skeleton:
    """A preset as the vectorised constrained solve takes it: its joints and limits (the humanoid's rolling
    upper arms and thighs included) without a posing (a natural posing is solved one problem at a time,
    by ``solve``)."""
    s = presets.get(name).core
    return Skeleton(s.names, s.parents, s.rest_positions, s.constraints)


def chain(bones: int, rng: np.random.Generator) -> Skeleton:
    """A chain with random bone lengths (0.2 to 1.5) and directions."""
    pos = np.zeros((bones + 1, 3))
    for i in range(bones):
        d = rng.normal(size=3)
        pos[i + 1] = pos[i] + d / np.linalg.norm(d) * rng.uniform(0.2, 1.5)
    return Skeleton([f"j{i}" for i in range(bones + 1)], list(range(-1, bones)), pos)


def random_tree(n: int, rng: np.random.Generator) -> Skeleton:
    """A random tree of ``n`` joints (each joint's parent among the earlier ones), random bones."""
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, n)]
    pos = np.zeros((n, 3))
    for j in range(1, n):
        d = rng.normal(size=3)
        pos[j] = pos[parents[j]] + d / np.linalg.norm(d) * rng.uniform(0.3, 1.2)
    return Skeleton([f"n{j}" for j in range(n)], parents, pos)


def random_poses(s: Skeleton, count: int, rng: np.random.Generator) -> np.ndarray:
    """``(count, n, 3)`` poses with random bone directions (any lengths: ``solve`` takes only directions)."""
    return s.rest_positions + rng.normal(scale=0.6, size=(count, len(s), 3))


def targets_near(s: Skeleton, names: list[str], count: int, rng: np.random.Generator, scale: float) -> dict:
    """``(count, 3)`` targets about each named effector's rest position (some beyond reach for large scales)."""
    return {e: s.rest_positions[s.index(e)] + rng.normal(scale=scale, size=(count, 3)) for e in names}


def problem(value: Any, b: int, batched_ndim: int) -> Any:
    """Problem ``b``'s share of an argument: a row of a batched array, or the shared value."""
    if value is None or isinstance(value, Target) or np.ndim(value) < batched_ndim:
        return value
    return np.asarray(value)[b]


def assert_equals_solve(s: Skeleton, targets: dict, result: BatchResult, **kwargs: Any) -> None:
    """Every problem of ``result`` equals ``solve`` on it as docs/batch.md states: positions, rotations,
    iterations and convergence exactly; errors and orientation errors, which the batch computes with
    numpy from those same positions and rotations, within ``ERROR_ULPS`` and ``ANGLE_ULPS`` units in the
    last place."""
    count = len(result.iterations)
    assert result.positions.shape == (count, len(s), 3)
    assert result.rotations.shape == (count, len(s), 4)
    assert result.converged.shape == (count,)
    for b in range(count):
        goals = {}
        for name, value in targets.items():
            if isinstance(value, tuple):
                goals[name] = Target(value[0][b], value[1][b], *value[2:])
            else:
                goals[name] = problem(value, b, 2)
        one = solve(
            s,
            goals,
            positions=problem(kwargs.get("positions"), b, 3),
            root_target=problem(kwargs.get("root_target"), b, 2),
            poles={k: problem(v, b, 2) for k, v in kwargs["poles"].items()} if kwargs.get("poles") else None,
            weights=kwargs.get("weights"),
            tolerance=kwargs.get("tolerance", TOL),
            max_iterations=kwargs.get("max_iterations", 100),
            posing=kwargs.get("posing"),
        )
        assert np.array_equal(result.positions[b], one.positions), f"problem {b}"
        assert np.array_equal(result.rotations[b], one.rotations), f"problem {b}"
        assert result.iterations[b] == one.iterations, f"problem {b}"
        assert bool(result.converged[b]) == one.converged, f"problem {b}"
        assert set(result.errors) == set(one.errors)
        for name, e in one.errors.items():
            np.testing.assert_array_max_ulp(result.errors[name][b], e, ERROR_ULPS)
        for name, e in one.orientation_errors.items():
            np.testing.assert_array_max_ulp(result.orientation_errors[name][b], e, ANGLE_ULPS)


def batch_and_check(s: Skeleton, targets: dict, **kwargs: Any) -> BatchResult:
    result = solve_batch(s, targets, **kwargs)
    assert_equals_solve(s, targets, result, **kwargs)
    return result
