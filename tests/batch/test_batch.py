"""Batch solving (``fabrik3d.solve_batch``): every problem equals ``fabrik3d.solve`` on that problem.

The batches are large enough (``B`` well above ``batch_chain.TAIL``) that the
vectorised path does the work, not its scalar fallback for stragglers.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.batch import (
    TOL,
    batch_and_check,
    chain,
    needs_numba,
    plain,
    random_poses,
    random_tree,
    targets_near,
)

from fabrik3d import Skeleton, Target, solve, solve_batch
from fabrik3d.batch.chain import SMALL, TAIL
from fabrik3d.io.take import load_take
from fabrik3d.model import presets

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


# -- unconstrained: the vectorised path -------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_random_chains_from_rest_and_from_start_poses(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = chain(int(rng.integers(2, 12)), rng)
    reach = float(s.bone_lengths.sum())
    count = 80
    # Inside and beyond reach (about a fifth beyond).
    goal = {s.end_effectors[0]: rng.normal(size=(count, 3)) * reach * 0.6}
    result = batch_and_check(s, goal)
    assert 0 < result.converged.sum() < count  # both kinds present
    assert (result.iterations[~result.converged] >= 1).all()
    batch_and_check(s, goal, positions=random_poses(s, count, rng))
    batch_and_check(s, goal, positions=random_poses(s, 1, rng)[0], root_target=rng.normal(size=(count, 3)))


def test_chain_workload_of_the_core_issue() -> None:
    """Ten unit bones along +Y, targets in the ball of radius 9 (as in benchmarks/common.chain_workload)."""
    rest = np.column_stack([np.zeros(11), np.arange(11.0), np.zeros(11)])
    s = Skeleton([f"j{i}" for i in range(11)], list(range(-1, 10)), rest)
    rng = np.random.default_rng(0)
    count = SMALL + 300  # the live set shrinks through both ways of dropping stopped problems
    d = rng.standard_normal((count, 3))
    t = d / np.linalg.norm(d, axis=1, keepdims=True) * (9.0 * rng.random(count) ** (1 / 3))[:, None]
    result = batch_and_check(s, {"j10": t})
    assert result.converged.all()
    assert result.iterations.max() > result.iterations.min()  # problems stop at different iterations


@pytest.mark.parametrize("count", [TAIL - 1, 6 * TAIL])
def test_chains_reached_at_the_start_unreachable_and_reachable_in_one_batch(count: int) -> None:
    """Targets already within tolerance (0 iterations), beyond reach (1 iteration) and in between, from
    shared and per-problem start poses; a batch smaller than ``TAIL`` is solved by the scalar chain alone."""
    rng = np.random.default_rng(count)
    s = chain(6, rng)
    tip = s.rest_positions[-1]
    reach = float(s.bone_lengths.sum())
    t = s.rest_positions[0] + rng.normal(size=(count, 3)) * reach * 0.5
    t[::3] = tip + rng.normal(scale=1e-4, size=(len(t[::3]), 3))  # reached by the rest pose
    t[1::3] = s.rest_positions[0] + [0.0, 0.0, 2.0 * reach]  # beyond reach
    result = batch_and_check(s, {s.end_effectors[0]: t})
    assert (result.iterations[::3] == 0).all() and (result.iterations[1::3] == 1).all()
    starts = random_poses(s, count, rng)
    starts[::3] = s.rest_positions
    batch_and_check(s, {s.end_effectors[0]: t}, positions=starts)


def test_straight_chain_stuck_on_its_line_is_bent_as_in_solve() -> None:
    """Targets on the line of a straight chain: FABRIK alone stalls, the scalar code bends the chain."""
    rest = np.column_stack([np.zeros(7), np.arange(7.0), np.zeros(7)])
    s = Skeleton([f"j{i}" for i in range(7)], list(range(-1, 6)), rest)
    count = 4 * TAIL
    t = np.zeros((count, 3))
    t[:, 1] = np.linspace(1.0, 5.5, count)
    t[count // 2 :, 0] = 1e-3  # and some a hair off the line
    result = batch_and_check(s, {"j6": t})
    assert result.converged.mean() > 0.9


def test_degenerate_start_poses_take_the_rest_directions() -> None:
    rng = np.random.default_rng(5)
    s = plain("robot_arm")
    count = 3 * TAIL
    poses = random_poses(s, count, rng)
    poses[: count // 2] = 0.0  # every joint on one point
    goal = targets_near(s, list(s.end_effectors), count, rng, 0.3)
    batch_and_check(s, goal, positions=poses)


@pytest.mark.parametrize("name", presets.names())
def test_presets_without_limits_all_and_some_effectors(name: str) -> None:
    rng = np.random.default_rng(len(name))
    s = plain(name)
    effectors = list(s.end_effectors)
    count = 40
    everything = targets_near(s, effectors, count, rng, 0.3)
    batch_and_check(s, everything)
    some = {e: everything[e] for e in effectors[::2]}
    batch_and_check(s, some, positions=random_poses(s, count, rng) * 0.1 + s.rest_positions)
    one = {effectors[-1]: everything[effectors[-1]]}
    batch_and_check(s, one, root_target=s.rest_positions[s.root] + rng.normal(scale=0.2, size=(count, 3)))


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_root_targets_and_weights(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    s = random_tree(int(rng.integers(6, 25)), rng)
    effectors = list(s.end_effectors)
    count = 40
    chosen = [e for e in effectors if rng.random() < 0.7] or effectors[:1]
    goal = targets_near(s, chosen, count, rng, 0.8)
    weights = {e: float(rng.uniform(0.2, 5.0)) for e in chosen}
    batch_and_check(s, goal)
    batch_and_check(s, goal, weights=weights, root_target=rng.normal(scale=0.3, size=3))
    batch_and_check(s, goal, positions=random_poses(s, count, rng), root_target=rng.normal(size=(count, 3)))
    batch_and_check(s, goal, positions=random_poses(s, count, rng), tolerance=1e-6, max_iterations=7)


def test_a_large_tree_batch() -> None:
    """More problems than ``SMALL``: stopped problems leave the work arrays in both ways (refilled in
    place, then compacted); some effectors out of reach, so some problems run to the last iteration."""
    s = Skeleton(
        ["r", "j", "e1", "e2", "e3"], [-1, 0, 1, 1, 0], [[0, 0, 0], [0, 1, 0], [1, 1, 0], [-1, 1, 0], [0, -1, 0]]
    )
    rng = np.random.default_rng(12)
    goal = targets_near(s, ["e1", "e2", "e3"], 2 * SMALL, rng, 0.8)
    result = batch_and_check(s, goal, max_iterations=30, tolerance=1e-6)
    assert (result.iterations == 30).any() and (result.iterations < 30).any()


def test_no_targets_keeps_the_start_pose_and_a_shared_target_serves_all() -> None:
    rng = np.random.default_rng(9)
    s = plain("humanoid")
    poses = random_poses(s, 12, rng)
    result = batch_and_check(s, {}, positions=poses)
    assert (result.iterations == 0).all() and result.converged.all() and result.errors == {}
    shared = {"head": s.rest_positions[s.index("head")] + [0.0, 0.0, 0.05], "hand_l": rng.normal(size=(12, 3))}
    batch_and_check(s, shared)


# -- constrained (vectorised with limits; more in test_batch_limited.py) ---
@pytest.mark.parametrize("name", presets.names())
def test_constrained_presets(name: str) -> None:
    rng = np.random.default_rng(7)
    s = presets.get(name)
    effectors = list(s.end_effectors)[:3]
    count = 3
    goal = targets_near(s, effectors, count, rng, 0.1)
    batch_and_check(s, goal)
    batch_and_check(s, {effectors[0]: goal[effectors[0]]}, positions=s.rest_positions)


def test_poles_orientation_targets_and_root_target_objects() -> None:
    rng = np.random.default_rng(11)
    s = plain("humanoid")
    count = 3
    hand = s.rest_positions[s.index("hand_l")] + rng.normal(scale=0.1, size=(count, 3))
    turns = np.tile([0.0, 0.0, math.sin(0.3), math.cos(0.3)], (count, 1))
    goal = {"hand_l": (hand, turns, 0.5), "hand_r": s.rest_positions[s.index("hand_r")] + [0.1, 0.0, 0.0]}
    result = batch_and_check(s, goal, poles={"hand_l": [0.5, 1.3, -1.0]})
    assert set(result.orientation_errors) == {"hand_l"}
    batch_and_check(
        s, {"head": rng.normal(scale=0.05, size=(count, 3)) + np.array([0, 1.7, 0])}, root_target=Target([0, 1, 0])
    )


# -- the boundary --------------------------------------------------------------------------------------
def test_the_callers_arrays_are_never_modified() -> None:
    rng = np.random.default_rng(2)
    s = plain("octopus")
    count = 2 * TAIL
    goal = targets_near(s, list(s.end_effectors)[:4], count, rng, 0.4)
    poses = random_poses(s, count, rng)
    root = rng.normal(size=(count, 3))
    before = ({k: v.copy() for k, v in goal.items()}, poses.copy(), root.copy())
    for a in [*goal.values(), poses, root]:
        a.setflags(write=False)  # a write would raise
    solve_batch(s, goal, positions=poses, root_target=root)
    for k, v in goal.items():
        np.testing.assert_array_equal(v, before[0][k])
    np.testing.assert_array_equal(poses, before[1])
    np.testing.assert_array_equal(root, before[2])


def test_an_empty_batch_gives_empty_results() -> None:
    s = plain("humanoid")
    result = solve_batch(s, {"head": np.zeros((0, 3))})
    assert result.positions.shape == (0, len(s), 3) and result.rotations.shape == (0, len(s), 4)
    assert result.iterations.shape == result.converged.shape == result.errors["head"].shape == (0,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: solve_batch(s, {"nose": np.zeros((2, 3))}), "targets: 'nose' is not an end effector.*head"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 2))}), r"targets\['head'\]: expected shape"),
        (lambda s: solve_batch(s, {"head": [[0, 0, np.nan]]}), r"targets\['head'\]\[0\]: .*finite"),
        (lambda s: solve_batch(s, {"head": [[0, 0, 0], [0, 0, np.inf]]}), r"targets\['head'\]\[1\]: .*finite"),
        (lambda s: solve_batch(s, {"head": "up"}), r"targets\['head'\]: expected an array"),
        (lambda s: solve_batch(s, [1, 2]), "targets: expected a mapping"),
        (
            lambda s: solve_batch(s, {"head": np.zeros((2, 3)), "hand_l": np.zeros((3, 3))}),
            r"targets\['hand_l'\]: 3 problems, but targets\['head'\] has 2",
        ),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, positions=np.zeros((3, len(s), 3))), "positions: 3"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, positions=np.zeros((2, 4, 3))), "positions: expected"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, root_target=np.zeros((5, 3))), "root_target: 5"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, root_target=[1, 2]), "root_target: expected"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, weights={"head": 0}), r"weights\['head'\]"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, weights={"pelvis": 1}), "weights: 'pelvis'"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, poles={"knee_l": [0, 0, 1]}), "poles: 'knee_l'"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, tolerance=0), "tolerance"),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, max_iterations=0), "max_iterations"),
        (lambda s: solve_batch(s, {}), "targets: empty"),
        (
            lambda s: solve_batch(s, {"head": (np.zeros((2, 3)), np.ones((2, 4)))}),
            r"targets\['head'\] orientations\[0\]: not a unit quaternion",
        ),
        (
            lambda s: solve_batch(s, {"head": (np.zeros((2, 3)), [[0, 0, 0, 1], [0, 0, np.nan, 1]])}),
            r"targets\['head'\] orientations\[1\]: not a unit quaternion \(length nan\)",
        ),
        (lambda s: solve_batch(s, {"head": np.zeros((2, 3))}, poles={"head": np.zeros((3, 3))}), "poles.*3 problems"),
        (lambda s: solve_batch("humanoid", {}), "skeleton: expected a fabrik3d.Skeleton"),
    ],
)
def test_bad_input_is_named(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(plain("humanoid"))


def test_bones_turned_opposite_their_rest_direction_take_the_half_turn() -> None:
    """A chain along +Y pulled straight down (unreachable): its bones point exactly along -Y."""
    rest = np.column_stack([np.zeros(4), np.arange(4.0), np.zeros(4)])
    s = Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 2], rest)
    rng = np.random.default_rng(4)
    t = rng.normal(scale=2.0, size=(3 * TAIL, 3))
    t[::2] = [0.0, -5.0, 0.0]
    result = batch_and_check(s, {"d": t})
    np.testing.assert_allclose(result.positions[0, :, 1], [0.0, -1.0, -2.0, -3.0])


def test_tree_steps_onto_a_joint_keep_a_bone_direction() -> None:
    """Both arm targets where their proposals for the sub-base land exactly on the root (and the
    sub-base's exactly on itself): the degenerate steps of the tree solve, as in ``solve``."""
    s = Skeleton(["r", "j", "e1", "e2"], [-1, 0, 1, 1], [[0, 0, 0], [0, 1, 0], [1, 1, 0], [-1, 1, 0]])
    rng = np.random.default_rng(6)
    count = 12
    goal = {e: rng.normal(size=(count, 3)) for e in ("e1", "e2")}
    for e in goal:
        goal[e][::3] = [0.0, -1.0, 0.0]
        goal[e][1::3] = [0.0, 1.0, 0.0]  # on the sub-base's start position
    batch_and_check(s, goal)
    batch_and_check(s, goal, weights={"e1": 3.0, "e2": 0.5})


# -- the examples ------------------------------------------------------------------------------------
def run_example(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / args[0]), *args[1:]], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_reachability_map_example() -> None:
    out = run_example("reachability_map.py", "--columns", "5", "--rows", "4", "--depth", "0.4")
    (summary,) = [line for line in out.splitlines() if line.startswith("reached ")]
    reached = int(summary.split()[1])
    grid_lines = [line for line in out.splitlines() if line.startswith("y=")]
    assert len(grid_lines) == 4 and summary.split()[3] == "20"
    assert sum(line.count("#") for line in grid_lines) == reached
    # Right in front of the arm at shoulder height is reached; the top corners, 1.8 m away, are not.
    arm = presets.get("robot_arm")
    near = solve(arm, {"tool": [0.0, 0.5, 0.4]}, tolerance=0.01, max_iterations=50)
    top = grid_lines[0].split()[3:]
    assert near.converged and top[0] == "." and top[-1] == "."
    assert 0 < reached < 20


def test_reachability_map_example_on_the_cpu_backend_draws_the_same_map() -> None:
    """A grid of 256 points (solved vectorised) with the joint limits compiled: the same map and summary."""
    needs_numba()
    grid = ("--columns", "16", "--rows", "16", "--depth", "0.3")
    numpy_map = run_example("reachability_map.py", *grid)
    cpu_map = run_example("reachability_map.py", *grid, "--backend", "cpu")

    def drawn(out: str) -> list[str]:
        return [line.split(",")[0] for line in out.splitlines() if line.startswith(("y=", "reached ", "unreached"))]

    assert drawn(cpu_map) == drawn(numpy_map) and "#" in "".join(drawn(cpu_map))


def test_reachability_map_example_names_a_bad_backend() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "reachability_map.py"), "--backend", "gpu"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "--backend: invalid choice: 'gpu'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_resolve_take_example(tmp_path: Path) -> None:
    out = run_example("resolve_take.py", "--frames", "12", "--crouch", "0.08", "--out", str(tmp_path))
    assert "frames converged: 12/12" in out
    recorded = load_take(tmp_path / "recorded.take.json")
    resolved = load_take(tmp_path / "resolved.take.json")
    s = resolved.skeleton
    np.testing.assert_allclose(resolved.times, recorded.times)
    drop = recorded.positions[:, s.root] - resolved.positions[:, s.root]
    np.testing.assert_allclose(drop, np.tile([0.0, 0.08, 0.0], (12, 1)), atol=1e-12)
    for toe in ("toe_l", "toe_r"):  # the toes stay
        j = s.index(toe)
        assert np.linalg.norm(resolved.positions[:, j] - recorded.positions[:, j], axis=1).max() <= TOL
    assert (tmp_path / "resolved.glb").read_bytes()[:4] == b"glTF"
