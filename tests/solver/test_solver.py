"""Multi-end-effector FABRIK on skeletons (``fabrik3d.solve``)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from fabrik3d import Skeleton, solve, solve_chain
from fabrik3d.model import presets

TOL = 1e-3


def preset(name: str) -> Skeleton:
    """The preset's joints and rest pose without joint limits: issue 2's plain FABRIK."""
    s = presets.get(name)
    return Skeleton(s.names, s.parents, s.rest_positions)


def humanoid() -> Skeleton:
    return preset("humanoid")


def y_tree() -> Skeleton:
    """root - sub, then two symmetric arms of two bones along +X and -X."""
    return Skeleton(
        ["root", "sub", "a1", "a2", "b1", "b2"],
        [-1, 0, 1, 2, 1, 4],
        [[0, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0], [-1, 1, 0], [-2, 1, 0]],
    )


def qrot(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the unit quaternion ``q`` = (x, y, z, w), written out here independently of the library."""
    u, w = np.asarray(q[:3]), q[3]
    return v + 2.0 * w * np.cross(u, v) + 2.0 * np.cross(u, np.cross(u, v))


def random_pose(s: Skeleton, rng: np.random.Generator) -> np.ndarray:
    """A pose with the skeleton's bone lengths and random bone directions (root at its rest position)."""
    pos = np.empty((len(s), 3))
    pos[s.root] = s.rest_positions[s.root]
    for j in s.order[1:]:
        d = rng.normal(size=3)
        pos[j] = pos[s.parents[j]] + d / np.linalg.norm(d) * s.bone_lengths[j]
    return pos


def assert_same_rotations(a: np.ndarray, b: np.ndarray, atol: float = 1e-12) -> None:
    """Equal as rotations: each quaternion up to its sign."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    diff = np.minimum(np.abs(a - b).max(axis=1), np.abs(a + b).max(axis=1))
    assert diff.max() <= atol, diff.max()


def check_pose(s: Skeleton, pos: np.ndarray, root: np.ndarray) -> None:
    """Finite, the root where it should be, every bone its length to 1e-9 relative."""
    assert pos.shape == (len(s), 3)
    assert np.isfinite(pos).all()
    np.testing.assert_allclose(pos[s.root], root, rtol=0, atol=1e-12)
    bones = [j for j in range(len(s)) if j != s.root]
    got = np.linalg.norm(pos[bones] - pos[s.parents[bones]], axis=1)
    np.testing.assert_allclose(got, s.bone_lengths[bones], rtol=1e-9)


def subtree(s: Skeleton, j: int) -> list[int]:
    out = [j]
    for k in out:
        out.extend(s.children(k))
    return out


def active(s: Skeleton, names: list[str]) -> set[int]:
    return {j for e in names for j in s.path_to_root(s.index(e))}


# -- reaching ----------------------------------------------------------------------------------


def test_reachable_targets_on_the_humanoid_are_reached() -> None:
    s = humanoid()
    targets = {"hand_l": [0.2, 1.0, 0.4], "hand_r": [-0.2, 1.0, 0.4], "head": [0.0, 1.6, 0.3]}
    res = solve(s, targets, tolerance=TOL, max_iterations=200)
    check_pose(s, res.positions, s.rest_positions[s.root])
    assert res.converged is True
    assert set(res.errors) == set(targets)
    for name, t in targets.items():
        measured = np.linalg.norm(res.positions[s.index(name)] - t)
        assert res.errors[name] == pytest.approx(measured, abs=1e-15)
        assert measured <= TOL
    assert 1 <= res.iterations <= 200


def test_converged_flag_and_errors_agree_when_not_reached() -> None:
    s = humanoid()
    res = solve(s, {"hand_l": [5.0, 1.4, 0.0], "toe_r": [-0.1, 0.0, 0.2]})
    assert res.converged is False
    assert res.errors["hand_l"] > 1.0
    assert res.errors["hand_l"] == pytest.approx(np.linalg.norm(res.positions[s.index("hand_l")] - [5.0, 1.4, 0.0]))


def test_no_targets_leave_the_start_pose() -> None:
    s = humanoid()
    res = solve(s, {})
    assert res.iterations == 0 and res.errors == {} and res.converged
    np.testing.assert_allclose(res.positions, s.rest_positions, atol=1e-12)
    assert_same_rotations(res.rotations, s.rest_frames)


def test_unreachable_single_target_straightens_the_path_in_one_step() -> None:
    s = humanoid()
    target = np.array([3.0, 2.5, 1.0])
    res = solve(s, {"hand_l": target})
    check_pose(s, res.positions, s.rest_positions[s.root])
    assert res.iterations == 1
    path = s.path_to_root(s.index("hand_l"))
    base = s.rest_positions[s.root]
    u = (target - base) / np.linalg.norm(target - base)
    reach = np.cumsum([0.0] + [s.bone_lengths[j] for j in path[1:]])
    np.testing.assert_allclose(res.positions[list(path)], base + reach[:, None] * u, atol=1e-12)


def test_unreachable_targets_on_a_tree_stay_finite_and_stop() -> None:
    s = humanoid()
    targets = {"hand_l": [9.0, 1.4, 0.0], "hand_r": [-9.0, 1.4, 0.0], "head": [0.0, 9.0, 0.0]}
    res = solve(s, targets, max_iterations=500)
    check_pose(s, res.positions, s.rest_positions[s.root])
    assert res.iterations < 500
    assert not res.converged


def test_straight_chain_along_the_line_to_its_target_is_bent_and_reached() -> None:
    pts = np.zeros((5, 3))
    pts[:, 1] = np.arange(5)
    s = Skeleton([f"j{k}" for k in range(5)], [-1, 0, 1, 2, 3], pts)
    res = solve(s, {"j4": [0.0, 2.5, 0.0]}, max_iterations=200)
    check_pose(s, res.positions, pts[0])
    assert res.converged
    assert np.abs(res.positions[:, [0, 2]]).max() > 1e-3  # it bent off the line


# -- degenerate targets ------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["pelvis", "chest", "spine_02", "elbow_l", "knee_r"])
def test_targets_on_the_root_or_an_inner_joint_give_a_finite_pose(where: str) -> None:
    s = humanoid()
    point = s.rest_positions[s.index(where)]
    for names in (["hand_l"], ["hand_l", "toe_r"], list(s.end_effectors)):
        res = solve(s, dict.fromkeys(names, point), max_iterations=200)
        check_pose(s, res.positions, s.rest_positions[s.root])
        assert np.isfinite(res.rotations).all()
        assert all(math.isfinite(v) for v in res.errors.values())


def test_target_on_an_inner_joint_of_its_own_path_is_reached() -> None:
    s = humanoid()
    res = solve(s, {"hand_l": s.rest_positions[s.index("elbow_l")]}, max_iterations=200)
    check_pose(s, res.positions, s.rest_positions[s.root])
    assert res.converged


def test_coincident_targets() -> None:
    s = y_tree()
    res = solve(s, {"a2": [0.0, 2.5, 0.0], "b2": [0.0, 2.5, 0.0]}, max_iterations=200)
    check_pose(s, res.positions, [0.0, 0.0, 0.0])
    assert res.converged, res.errors
    h = humanoid()
    point = [0.0, 1.2, 0.35]
    res = solve(h, dict.fromkeys(("hand_l", "hand_r", "head"), point), max_iterations=200)
    check_pose(h, res.positions, h.rest_positions[h.root])
    assert np.isfinite(res.rotations).all()


def test_start_pose_with_every_joint_on_one_point_falls_back_to_rest_directions() -> None:
    s = humanoid()
    res = solve(s, {"hand_l": [0.5, 1.2, 0.3]}, positions=np.zeros((len(s), 3)))
    check_pose(s, res.positions, [0.0, 0.0, 0.0])
    assert np.isfinite(res.rotations).all()


def test_start_pose_lengths_are_the_skeletons() -> None:
    s = humanoid()
    stretched = s.rest_positions * 2.0
    res = solve(s, {"hand_l": [0.5, 1.2, 0.3]}, positions=stretched)
    check_pose(s, res.positions, stretched[s.root])


def test_targets_that_did_not_move_cost_no_iteration() -> None:
    s = humanoid()
    targets = {"hand_l": [0.4, 1.1, 0.3], "toe_r": [-0.2, 0.1, 0.3]}
    first = solve(s, targets, tolerance=1e-4, max_iterations=200)
    assert first.converged
    again = solve(s, targets, positions=first.positions, tolerance=1e-4)
    assert again.iterations == 0
    np.testing.assert_allclose(again.positions, first.positions, atol=1e-12)
    at_rest = {e: s.rest_positions[s.index(e)] for e in s.end_effectors}
    res = solve(s, at_rest)
    assert res.iterations == 0
    np.testing.assert_allclose(res.positions, s.rest_positions, atol=1e-12)


def test_max_iterations_bounds_the_work() -> None:
    s = humanoid()
    res = solve(s, {"hand_l": [0.2, 1.0, 0.4], "head": [0.0, 1.6, 0.3]}, tolerance=1e-12, max_iterations=2)
    assert res.iterations <= 2
    check_pose(s, res.positions, s.rest_positions[s.root])


# -- determinism and independence -------------------------------------------------------------


def test_result_does_not_depend_on_the_order_of_targets_or_weights() -> None:
    s = humanoid()
    rng = np.random.default_rng(7)
    names = list(s.end_effectors)
    for _ in range(5):
        targets = {e: s.rest_positions[s.index(e)] + rng.normal(size=3) * 0.3 for e in names}
        weights = {e: float(rng.uniform(0.5, 3.0)) for e in names}
        a = solve(s, targets, weights=weights)
        shuffled = [names[k] for k in rng.permutation(len(names))]
        b = solve(s, {e: targets[e] for e in shuffled}, weights={e: weights[e] for e in reversed(shuffled)})
        assert a.positions.tobytes() == b.positions.tobytes()
        assert a.rotations.tobytes() == b.rotations.tobytes()
        assert a.iterations == b.iterations
        assert a.errors == b.errors


def test_same_input_gives_bit_identical_output() -> None:
    s = preset("octopus")
    targets = {e: s.rest_positions[s.index(e)] + [0.1, -0.2, 0.1] for e in s.end_effectors[::2]}
    a, b = solve(s, targets), solve(s, targets)
    assert a.positions.tobytes() == b.positions.tobytes()
    assert a.rotations.tobytes() == b.rotations.tobytes()


def test_callers_arrays_are_never_modified() -> None:
    s = humanoid()
    start = s.rest_positions.copy() + 0.01
    start_copy = start.copy()
    target = np.array([0.5, 1.2, 0.3])
    targets = {"hand_l": target, "toe_r": np.array([-0.1, 0.1, 0.2])}
    targets_copy = copy.deepcopy(targets)
    root = np.array([0.1, 0.9, 0.0])
    weights = {"hand_l": 2.0, "toe_r": 1.0}
    res = solve(s, targets, positions=start, root_target=root, weights=weights)
    np.testing.assert_array_equal(start, start_copy)
    for k in targets:
        np.testing.assert_array_equal(targets[k], targets_copy[k])
    np.testing.assert_array_equal(root, [0.1, 0.9, 0.0])
    assert weights == {"hand_l": 2.0, "toe_r": 1.0}
    np.testing.assert_array_equal(s.rest_positions, presets.get("humanoid").rest_positions)
    res.positions[:] = 0.0  # the result is the caller's own
    assert solve(s, targets, positions=start, root_target=root, weights=weights).positions.any()


# -- one target == the single-chain solver ------------------------------------------------------


@pytest.mark.parametrize("name", ["humanoid", "robot_arm", "octopus"])
def test_single_target_in_a_tree_is_solve_chain_on_its_path(name: str) -> None:
    s = preset(name)
    rng = np.random.default_rng(11)
    for e in s.end_effectors:
        path = list(s.path_to_root(s.index(e)))
        reach = sum(s.bone_lengths[j] for j in path[1:])
        for start in (s.rest_positions, random_pose(s, rng)):
            base = start[s.root]
            u = rng.normal(size=3)
            u /= np.linalg.norm(u)
            targets = [
                base + u * reach * 0.6,  # reachable
                base + u * reach * 1.5,  # unreachable
                start[path[1]],  # an inner joint
                start[s.root],  # the root
            ]
            for t in targets:
                res = solve(s, {e: t}, positions=start, max_iterations=200)
                ref = solve_chain(start[path], t, max_iterations=200)
                np.testing.assert_allclose(res.positions[path], ref.positions, rtol=0, atol=1e-9)
                assert res.iterations == ref.iterations
                assert res.errors[e] == pytest.approx(ref.error, abs=1e-9)
                check_pose(s, res.positions, base)


# -- untargeted branches -------------------------------------------------------------------------


CASES = [["hand_l"], ["head"], ["toe_l"], ["hand_l", "toe_r"], ["hand_l", "hand_r"], ["head", "toe_l", "toe_r"]]


@pytest.mark.parametrize("names", CASES, ids=lambda n: "+".join(n))
@pytest.mark.parametrize("moved_root", [False, True])
def test_untargeted_branches_keep_their_shape_and_move_rigidly(names: list[str], moved_root: bool) -> None:
    s = humanoid()
    rng = np.random.default_rng(3)
    start = s.rest_positions
    targets = {e: start[s.index(e)] + rng.normal(size=3) * 0.3 for e in names}
    root_target = np.array([0.3, 0.8, 0.1]) if moved_root else None
    res = solve(s, targets, root_target=root_target)
    shift = (root_target - start[s.root]) if moved_root else np.zeros(3)
    moved_start = start + shift  # the whole start pose first moves with the root
    start_frames = solve(s, {}, positions=moved_start).rotations  # frames of the start pose
    on = active(s, names)
    pos = res.positions
    checked = 0
    for j in sorted(on):
        for c in s.children(j):
            if c in on:
                continue
            branch = subtree(s, c)
            a, b = moved_start[[j, *branch]], pos[[j, *branch]]
            # Rigid: every distance inside the branch and to the joint it hangs from is kept.
            da = np.linalg.norm(a[:, None] - a[None], axis=2)
            db = np.linalg.norm(b[:, None] - b[None], axis=2)
            np.testing.assert_allclose(db, da, atol=1e-12)
            if j == s.root:
                # A branch hanging from the root moves with the root's position only.
                np.testing.assert_allclose(b - b[0], a - a[0], atol=1e-12)
            else:
                # It moves with the frame of the joint it hangs from: its offsets in that frame are unchanged.
                qa, qb = start_frames[j], res.rotations[j]
                qa_inv = np.array([-qa[0], -qa[1], -qa[2], qa[3]])
                qb_inv = np.array([-qb[0], -qb[1], -qb[2], qb[3]])
                for k in range(1, len(branch) + 1):
                    np.testing.assert_allclose(qrot(qb_inv, b[k] - b[0]), qrot(qa_inv, a[k] - a[0]), atol=1e-12)
                first = s.first_child(j)
                if first in on:
                    # ... which turns with the bone to the first child: angles to that bone are kept.
                    ua, ub = moved_start[first] - a[0], pos[first] - b[0]
                    for k in range(1, len(branch) + 1):
                        assert np.dot(ub, b[k] - b[0]) == pytest.approx(np.dot(ua, a[k] - a[0]), abs=1e-12)
            checked += 1
    assert checked >= 2


def test_branch_hanging_from_the_root_stays_put_without_root_target() -> None:
    s = humanoid()
    res = solve(s, {"hand_l": [0.6, 1.0, 0.4], "head": [0.1, 1.6, 0.2]})
    legs = subtree(s, s.index("hip_l")) + subtree(s, s.index("hip_r"))
    np.testing.assert_allclose(res.positions[legs], s.rest_positions[legs], atol=1e-12)


# -- root_target ---------------------------------------------------------------------------------


def test_root_target_without_targets_moves_the_whole_body() -> None:
    s = humanoid()
    goal = np.array([1.0, 1.2, -0.5])
    res = solve(s, {}, root_target=goal)
    np.testing.assert_allclose(res.positions, s.rest_positions + (goal - s.rest_positions[s.root]), atol=1e-12)
    assert_same_rotations(res.rotations, s.rest_frames)


def test_root_target_moves_the_root_even_when_every_target_is_within_tolerance() -> None:
    s = humanoid()
    targets = {e: s.rest_positions[s.index(e)] for e in ("hand_l", "hand_r")}
    assert solve(s, targets).iterations == 0
    goal = np.array([0.0, 1.0, 0.05])
    res = solve(s, targets, root_target=goal, max_iterations=200)
    check_pose(s, res.positions, goal)
    assert res.iterations >= 1
    assert res.converged
    # Far away: the body comes along and stretches toward the targets that stay behind.
    res = solve(s, targets, root_target=[5.0, 0.95, 0.0])
    check_pose(s, res.positions, [5.0, 0.95, 0.0])
    toe = s.index("toe_l")
    np.testing.assert_allclose(res.positions[toe], s.rest_positions[toe] + [5.0, 0.0, 0.0], atol=1e-12)


def test_root_target_with_a_start_pose() -> None:
    s = humanoid()
    start = random_pose(s, np.random.default_rng(5))
    goal = np.array([-0.3, 0.5, 0.2])
    res = solve(s, {"toe_l": [0.0, 0.0, 0.3]}, positions=start, root_target=goal)
    check_pose(s, res.positions, goal)


# -- weights -------------------------------------------------------------------------------------


def test_weights_shift_the_sub_base_toward_the_heavier_effector() -> None:
    s = y_tree()
    targets = {"a2": [1.0, 3.0, 0.0], "b2": [-1.0, 3.0, 0.0]}  # both a little beyond reach, pulling apart
    sub = s.index("sub")
    plain = solve(s, targets)
    equal = solve(s, targets, weights={"a2": 2.0, "b2": 2.0})
    heavy_a = solve(s, targets, weights={"a2": 10.0, "b2": 1.0})
    heavy_b = solve(s, targets, weights={"a2": 1.0, "b2": 10.0})
    for res in (plain, equal, heavy_a, heavy_b):
        check_pose(s, res.positions, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(equal.positions, plain.positions, atol=1e-12)  # only ratios matter
    assert abs(plain.positions[sub, 0]) < 1e-6  # symmetric without weights
    assert heavy_a.positions[sub, 0] > 0.05  # toward a2's side (+X)
    assert heavy_b.positions[sub, 0] < -0.05
    assert heavy_a.errors["a2"] < plain.errors["a2"] < heavy_b.errors["a2"]
    assert heavy_b.errors["b2"] < plain.errors["b2"] < heavy_a.errors["b2"]


def test_weights_act_when_the_targets_pull_the_sub_base_apart() -> None:
    # The weighted first iterations raise the lighter effector's (the largest) error: they must not be undone.
    s = y_tree()
    targets = {"a2": [3.5, 1.5, 0.5], "b2": [-3.5, 1.5, 0.5]}
    heavy_a = solve(s, targets, weights={"a2": 10.0, "b2": 1.0})
    heavy_b = solve(s, targets, weights={"a2": 1.0, "b2": 10.0})
    assert heavy_a.errors["a2"] < heavy_b.errors["a2"]


def test_an_unreachable_target_does_not_freeze_a_reachable_one() -> None:
    # The first iterations raise the unreachable head's error a little: undoing them froze the whole body.
    s = humanoid()
    hand = [-0.87, 1.1, 0.41]
    alone = solve(s, {"hand_r": hand})
    assert alone.converged
    at_rest = np.linalg.norm(s.rest_positions[s.index("hand_r")] - hand)
    both = solve(s, {"head": [0.1, 2.52, 0.04], "hand_r": hand})
    # The head's pull on the chest may keep the hand off its target, but the hand must come well toward it.
    assert both.errors["hand_r"] < 0.5 * at_rest, (both.errors, at_rest)


# -- rotations -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["humanoid", "robot_arm", "octopus"])
def test_rotations_are_unit_with_plus_y_along_the_bone_to_the_first_child(name: str) -> None:
    s = preset(name)
    rng = np.random.default_rng(2)
    effectors = list(s.end_effectors)
    for trial in range(8):
        chosen = [effectors[k] for k in rng.choice(len(effectors), size=1 + trial % len(effectors), replace=False)]
        targets = {e: s.rest_positions[s.index(e)] + rng.normal(size=3) * 0.4 for e in chosen}
        start = s.rest_positions if trial % 2 == 0 else random_pose(s, rng)
        res = solve(s, targets, positions=start)
        assert res.rotations.shape == (len(s), 4)
        np.testing.assert_allclose(np.linalg.norm(res.rotations, axis=1), 1.0, atol=1e-12)
        for j in range(len(s)):
            c = s.first_child(j)
            if c < 0:  # a leaf copies its parent's frame
                q, p = res.rotations[j], res.rotations[s.parents[j]]
                assert min(np.abs(q - p).max(), np.abs(q + p).max()) < 1e-12
                continue
            bone = res.positions[c] - res.positions[j]
            np.testing.assert_allclose(
                qrot(res.rotations[j], np.array([0.0, 1.0, 0.0])), bone / np.linalg.norm(bone), atol=1e-12
            )


def test_frames_of_a_chain_along_plus_y_are_the_identity_at_rest() -> None:
    pts = np.zeros((4, 3))
    pts[:, 1] = np.arange(4)
    s = Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 2], pts)
    np.testing.assert_allclose(np.abs(s.rest_frames[:, 3]), 1.0, atol=1e-15)
    res = solve(s, {"d": [0.0, 3.0, 0.0]})
    np.testing.assert_allclose(np.abs(res.rotations[:, 3]), 1.0, atol=1e-15)


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("targets", "kwargs", "pattern"),
    [
        ({"hand": [0, 1, 0]}, {}, r"^targets.*'hand'.*head, hand_l, hand_r, toe_l, toe_r"),
        ({"pelvis": [0, 1, 0]}, {}, r"^targets.*'pelvis'.*not an end effector.*head, hand_l, hand_r, toe_l, toe_r"),
        ({"elbow_l": [0, 1, 0]}, {}, r"^targets.*'elbow_l'.*valid names are head, hand_l"),
        ([("hand_l", [0, 1, 0])], {}, r"^targets"),
        ({"hand_l": [0, 1]}, {}, r"^targets\['hand_l'\].*shape"),
        ({"hand_l": [[0, 1, 0]]}, {}, r"^targets\['hand_l'\].*shape"),
        ({"hand_l": [0, math.nan, 0]}, {}, r"^targets\['hand_l'\].*finite"),
        ({"hand_l": [0, math.inf, 0]}, {}, r"^targets\['hand_l'\].*finite"),
        ({"hand_l": "up"}, {}, r"^targets\['hand_l'\]"),
        ({"hand_l": None}, {}, r"^targets\['hand_l'\]"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"hand_l": 0.0}}, r"^weights\['hand_l'\].*> 0"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"hand_l": -1.0}}, r"^weights\['hand_l'\].*> 0"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"hand_l": math.nan}}, r"^weights\['hand_l'\].*finite"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"hand_l": math.inf}}, r"^weights\['hand_l'\].*finite"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"hand_l": "2"}}, r"^weights\['hand_l'\]"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"hand_l": True}}, r"^weights\['hand_l'\]"),
        ({"hand_l": [0, 1, 0]}, {"weights": {"pelvis": 1.0}}, r"^weights.*'pelvis'.*head, hand_l"),
        ({"hand_l": [0, 1, 0]}, {"weights": [1.0]}, r"^weights"),
        ({"hand_l": [0, 1, 0]}, {"positions": np.zeros((3, 3))}, r"^positions.*\(65, 3\)"),
        ({"hand_l": [0, 1, 0]}, {"positions": np.zeros((65, 2))}, r"^positions"),
        ({"hand_l": [0, 1, 0]}, {"positions": np.full((65, 3), math.nan)}, r"^positions.*finite"),
        ({"hand_l": [0, 1, 0]}, {"root_target": [0, 1]}, r"^root_target"),
        ({"hand_l": [0, 1, 0]}, {"root_target": [0, math.nan, 1]}, r"^root_target.*finite"),
        ({"hand_l": [0, 1, 0]}, {"tolerance": 0.0}, r"^tolerance"),
        ({"hand_l": [0, 1, 0]}, {"tolerance": -1.0}, r"^tolerance"),
        ({"hand_l": [0, 1, 0]}, {"tolerance": math.nan}, r"^tolerance"),
        ({"hand_l": [0, 1, 0]}, {"tolerance": math.inf}, r"^tolerance"),
        ({"hand_l": [0, 1, 0]}, {"max_iterations": 0}, r"^max_iterations"),
        ({"hand_l": [0, 1, 0]}, {"max_iterations": 1.5}, r"^max_iterations"),
        ({"hand_l": [0, 1, 0]}, {"max_iterations": "10"}, r"^max_iterations"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_argument(targets, kwargs, pattern) -> None:
    with pytest.raises(ValueError, match=pattern):
        solve(humanoid(), targets, **kwargs)


def test_weights_for_untargeted_effectors_are_accepted_and_harmless() -> None:
    s = humanoid()
    targets = {"hand_l": [0.4, 1.1, 0.3], "hand_r": [-0.4, 1.1, 0.3]}
    a = solve(s, targets)
    b = solve(s, targets, weights={"toe_l": 5.0})
    assert a.positions.tobytes() == b.positions.tobytes()


def test_frames_of_bones_opposite_their_rest_direction() -> None:
    # The half-turn case of the swing rule: a chain at rest along +Y, posed along -Y (and a bent one reversed).
    pts = np.zeros((4, 3))
    pts[:, 1] = np.arange(4)
    s = Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 2], pts)
    for pose in (pts * [1, -1, 1], np.array([[0, 0, 0], [0, -1, 0], [0, 0, 0], [0, -1, 0]], dtype=float)):
        res = solve(s, {}, positions=pose)
        np.testing.assert_allclose(res.positions, pose, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(res.rotations, axis=1), 1.0, atol=1e-12)
        for j in range(3):
            bone = pose[j + 1] - pose[j]
            np.testing.assert_allclose(qrot(res.rotations[j], np.array([0.0, 1.0, 0.0])), bone, atol=1e-12)
