"""The constrained solve (issue 3): frames, start-pose projection, rigid sub-bases, untargeted
branches, poles, orientation targets, root orientation and continuity along smooth paths.

Angles and frames are measured from the returned positions and rotations by ``helpers.limits``
(numpy matrices, independent of fabrik3d's rotation helpers).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.limits import (
    arbitrary_pose,
    assert_valid,
    axis_rot,
    fk_frames,
    frame_matrices,
    limited_chain,
    local_rotations,
    mat_quat,
    qmat,
    random_pose,
    rest_frames,
    rotation_angle_deg,
    smooth_pose,
    unit,
    violations,
)
from helpers.naturalness import followed

from fabrik3d import Cone, EllipticalCone, Hinge, Posing, Rigid, Skeleton, Target, Twist, solve
from fabrik3d.model import presets
from fabrik3d.solver.rig import pose_frames

TOL = 1e-3
Y = np.array([0.0, 1.0, 0.0])


def twisted(q: np.ndarray, deg: float) -> np.ndarray:
    """The frame ``q`` turned by ``deg`` about its own +Y."""
    return mat_quat(qmat(np.asarray(q)) @ axis_rot(Y, math.radians(deg)))


def same_rotation(a: np.ndarray, b: np.ndarray, deg: float = 1e-7) -> bool:
    return rotation_angle_deg(qmat(np.asarray(a)), qmat(np.asarray(b))) <= deg


def zigzag(n: int, limit=None) -> Skeleton:
    """``n`` bones of about 0.1 zig-zagging up +Y (a bent rest pose), ``limit`` on every non-leaf."""
    names = [f"j{i}" for i in range(n + 1)]
    rest = [[0.02 * (i % 2), 0.1 * i, 0.0] for i in range(n + 1)]
    return Skeleton(names, [-1, *range(n)], rest, {m: limit for m in names[:-1]} if limit else None)


# -- rest frames -----------------------------------------------------------------------------------


def test_rest_frames_of_a_chain_along_y_are_the_identity() -> None:
    s = limited_chain(5, lambda i: Cone(30))
    np.testing.assert_allclose(np.abs(s.rest_frames[:, 3]), 1.0, atol=1e-15)
    np.testing.assert_allclose(s.rest_frames[:, :3], 0.0, atol=1e-15)


def test_a_bone_along_minus_y_turns_a_half_turn_about_world_x() -> None:
    s = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, -1, 0], [0, -2, 0]])
    for j in (0, 1, 2):  # the leaf copies its parent
        assert same_rotation(s.rest_frames[j], np.array([1.0, 0.0, 0.0, 0.0]), 1e-12), s.rest_frames[j]


def test_rest_frames_are_the_minimal_rotation_onto_the_first_child_and_leaves_copy_their_parent() -> None:
    for name in presets.names():
        s = presets.get(name)
        want = rest_frames(s)
        for j in range(len(s)):
            assert rotation_angle_deg(qmat(s.rest_frames[j]), want[j]) <= 1e-9, (name, s.names[j])
            if s.first_child(j) < 0:
                np.testing.assert_array_equal(s.rest_frames[j], s.rest_frames[s.parents[j]])


@pytest.mark.parametrize("tilt", [1e-6, 1e-7])
def test_rest_frames_of_bones_close_to_minus_y_are_exact(tilt: float) -> None:
    d = unit(np.array([tilt, -1.0, 0.0]))
    rest = [[0.0, 0.0, 0.0], d, 2 * d]
    s = Skeleton(["a", "b", "c"], [-1, 0, 1], rest, {"a": Cone(30), "b": Cone(30)})
    for j in (0, 1):
        assert float(qmat(s.rest_frames[j])[:, 1] @ d) >= 1.0 - 1e-15
    for target in ([-3.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 3.0]):
        assert_valid(s, solve(s, {"c": target}))
    axis = unit(np.cross(d, [0.0, 0.0, 1.0]))  # perpendicular to the bone to 1e-22
    Skeleton(["a", "b", "c"], [-1, 0, 1], rest, {"a": Hinge(tuple(axis), -10, 10)})


def test_a_bone_opposite_its_rest_direction_swings_a_half_turn_about_its_rest_x() -> None:
    # a - b - c along +Y, the bone b->c folded back to -Y: b turns a half turn about its rest +X
    s = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], {"c": Twist(-10, 10)})
    folded = np.array([[0.0, 0, 0], [0, 1, 0], [0, 0, 0]])
    half_x = np.array([1.0, 0.0, 0.0, 0.0])
    assert same_rotation(pose_frames(s, folded)[1], half_x, 1e-9)
    r = solve(s, {}, positions=folded)
    np.testing.assert_allclose(r.positions, folded, atol=1e-12)
    assert same_rotation(r.rotations[1], half_x, 1e-9) and same_rotation(r.rotations[2], half_x, 1e-9)
    # the same with a turned parent: the half turn is about the parent's own rest +X, turned with it
    s = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [1, 0, 0], [2, 0, 0]], {"c": Twist(-10, 10)})
    folded = np.array([[0.0, 0, 0], [1, 0, 0], [0, 0, 0]])
    r = solve(s, {}, positions=folded)
    rest_local = qmat(s.rest_frames[0]).T @ qmat(s.rest_frames[1])  # b's rest frame in a's
    want = qmat(r.rotations[0]) @ axis_rot(rest_local[:, 0], math.pi) @ rest_local
    assert rotation_angle_deg(qmat(r.rotations[1]), want) <= 1e-7
    assert_valid(s, r)


# -- frames and limits after solves ----------------------------------------------------------------


@pytest.mark.parametrize("name", presets.names())
def test_preset_solves_give_valid_frames_and_hold_every_limit(name: str) -> None:
    s = presets.get(name)
    rng = np.random.default_rng(1)
    for k in range(6):
        pose = random_pose(s, rng)
        effectors = [e for e in s.end_effectors if rng.random() < 0.6] or [s.end_effectors[0]]
        targets = {e: pose[s.index(e)] + (rng.normal(size=3) * 0.2 if k % 2 else 0.0) for e in effectors}
        start = None if k < 2 else (random_pose(s, rng) if k < 4 else arbitrary_pose(s, rng))
        r = solve(s, targets, positions=start)
        assert_valid(s, r)
        assert set(r.errors) == set(effectors)
        for e, t in targets.items():
            assert r.errors[e] == pytest.approx(float(np.linalg.norm(r.positions[s.index(e)] - t)), abs=1e-12)


def test_frames_do_not_depend_on_the_solve_history() -> None:
    s = followed(presets.get("humanoid"))  # (hanging limbs: tests/solver/test_hang.py)
    rng = np.random.default_rng(2)
    pose = random_pose(s, rng)
    a = solve(s, {"hand_l": pose[s.index("hand_l")]})
    b = solve(s, {}, positions=a.positions)
    np.testing.assert_allclose(b.positions, a.positions, atol=1e-12)
    for j in range(len(s)):
        assert same_rotation(a.rotations[j], b.rotations[j], 1e-7), s.names[j]
    for j, q in enumerate(fk_frames(s, a.positions)):
        assert same_rotation(q, a.rotations[j], 1e-7), s.names[j]


# -- the start pose is projected onto the limits ---------------------------------------------------


@pytest.mark.parametrize("name", presets.names())
def test_a_valid_start_pose_with_reached_targets_is_returned_unchanged(name: str) -> None:
    """The plain solve (``posing=Posing()``): the natural one relaxes stiff joints toward the rest
    pose by design (tests/solver/test_naturalness.py holds its guarantees)."""
    s = presets.get(name)
    pose = random_pose(s, np.random.default_rng(3))
    r = solve(s, {e: pose[s.index(e)] for e in s.end_effectors}, positions=pose, posing=Posing())
    assert r.iterations == 0 and r.converged
    np.testing.assert_allclose(r.positions, pose, atol=1e-12)
    for j, q in enumerate(fk_frames(s, pose)):
        assert same_rotation(q, r.rotations[j], 1e-7), s.names[j]


CHAINS = {
    "cone": lambda: limited_chain(6, lambda i: Cone(30)),
    "ellipse": lambda: limited_chain(6, lambda i: EllipticalCone(10, 40, 25, 5)),
    "hinge": lambda: limited_chain(6, lambda i: Hinge((1, 0, 0) if i % 2 else (0, 0, 1), -60, 20)),
    "twist": lambda: limited_chain(6, lambda i: [Cone(50), Twist(-5, 5)], leaf=Twist(-5, 5)),
}


@pytest.mark.parametrize("name", [*CHAINS, *presets.names()])
@pytest.mark.parametrize("how", ["no targets", "targets at the start pose", "max_iterations=1"])
def test_a_start_pose_outside_the_limits_is_projected_even_without_iterations(name: str, how: str) -> None:
    s = CHAINS[name]() if name in CHAINS else presets.get(name)
    rng = np.random.default_rng(4)
    for _ in range(3):
        start = arbitrary_pose(s, rng)
        before = violations(s, start, fk_frames(s, start))
        assert max(before.values()) > 1.0  # the start pose really is outside
        if how == "no targets":
            r = solve(s, {}, positions=start)
            assert r.iterations == 0
        elif how == "targets at the start pose":
            r = solve(s, {e: start[s.index(e)] for e in s.end_effectors}, positions=start)
        else:
            r = solve(
                s, {s.end_effectors[0]: start[s.index(s.end_effectors[0])] + 0.05}, positions=start, max_iterations=1
            )
            assert r.iterations <= 1
        assert_valid(s, r)


def test_root_limits_of_a_rigid_root_hold_from_a_turned_start_pose() -> None:
    """A rigid root with its own limits, started from a body turned outside them."""
    s = Skeleton(
        ["a", "b", "c", "d"],
        [-1, 0, 1, 0],
        [[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0]],
        {"a": [Rigid(), Cone(10), Twist(-10, 10)]},
    )
    start = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [0, -1, 0]])  # turned 90 degrees about -Z
    for targets in ({}, {"c": [2.0, 0.0, 0.0]}, {"c": [0.5, 1.8, 0.0]}):
        assert_valid(s, solve(s, targets, positions=start))


def test_root_limits_move_with_the_root_target_translation() -> None:
    s = limited_chain(6, lambda i: Cone(20))
    rng = np.random.default_rng(17)
    root = np.array([1.0, 2.0, 3.0])
    for start in (None, arbitrary_pose(s, rng)):
        for target in (np.array([0.5, 0.3, 0.0]), root + np.array([0.1, 0.5, 0.0]), root + np.array([5.0, 0.0, 0.0])):
            r = solve(s, {"j6": target}, root_target=root, positions=start)
            assert_valid(s, r)
            np.testing.assert_array_equal(r.positions[0], root)


def test_with_limits_an_unreachable_target_stops_only_after_ten_stalled_iterations() -> None:
    s = limited_chain(6, lambda i: Cone(20))
    for start in (None, s.rest_positions):
        r = solve(s, {"j6": [5.0, 0.0, 0.0]}, positions=start)
        assert not r.converged and 10 <= r.iterations < 100
        assert_valid(s, r)
        # the bones lean toward the target as far as the cones let them: no worse than the rest pose
        assert r.errors["j6"] < float(np.linalg.norm(s.rest_positions[6] - [5.0, 0.0, 0.0]))


# -- rigid sub-bases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "effectors"),
    [
        ("humanoid", ["hand_l"]),
        ("humanoid", ["hand_l", "hand_r", "head"]),
        ("humanoid", ["hand_l", "hand_r", "head", "toe_l", "toe_r"]),
        ("octopus", ["tentacle_1_8"]),
        ("octopus", ["tentacle_1_8", "tentacle_5_8", "mantle"]),
    ],
)
def test_rigid_guarantee_holds_after_every_solve(name: str, effectors: list[str]) -> None:
    s = presets.get(name)
    rng = np.random.default_rng(5)
    for k in range(4):
        pose = random_pose(s, rng)
        targets = {e: pose[s.index(e)] + rng.normal(size=3) * (0.3 if k % 2 else 0.01) for e in effectors}
        start = arbitrary_pose(s, rng) if k >= 2 else None
        for max_iterations in (1, 100):
            assert_valid(s, solve(s, targets, positions=start, max_iterations=max_iterations))


@pytest.mark.parametrize("name", presets.names())
def test_a_preset_pose_has_rotation_only_local_transforms_below_the_root(name: str) -> None:
    """Each joint sits at its rest offset in its parent's frame: P_j − P_p = R_p·R0_p⁻¹·(rest_j − rest_p)."""
    s = presets.get(name)
    rng = np.random.default_rng(14)
    pose = random_pose(s, rng)
    targets = {e: pose[s.index(e)] + rng.normal(size=3) * 0.05 for e in s.end_effectors[:3]}
    r = solve(s, targets)
    r0 = rest_frames(s)
    frames = frame_matrices(r.rotations)
    rest = s.rest_positions
    for j in s.order[1:]:
        p = int(s.parents[j])
        got = frames[p].T @ (r.positions[j] - r.positions[p])
        np.testing.assert_allclose(got, r0[p].T @ (rest[j] - rest[p]), atol=1e-9, err_msg=s.names[j])


# -- untargeted branches ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "effector"), [("humanoid", "hand_l"), ("humanoid", "head"), ("octopus", "tentacle_3_8")]
)
def test_untargeted_branches_keep_their_start_local_rotations(name: str, effector: str) -> None:
    s = followed(presets.get(name))  # (a free limb of ``Posing.hang`` hangs instead: tests/solver/test_hang.py)
    rng = np.random.default_rng(6)
    active = set(s.path_to_root(s.index(effector)))
    for _ in range(3):
        start = random_pose(s, rng)
        target = start[s.index(effector)] + np.array([0.08, 0.05, -0.04])
        # (a natural posing relaxes toward the pose the user built: here, the start)
        r = solve(s, {effector: target}, positions=start, relax_to=start)
        assert_valid(s, r)
        before = local_rotations(s, fk_frames(s, start))
        after = local_rotations(s, r.rotations)
        for j in range(len(s)):
            if j not in active:
                assert rotation_angle_deg(before[j], after[j]) <= 1e-7, s.names[j]


# -- poles -----------------------------------------------------------------------------------------


def pole_side(positions: np.ndarray, joints, a: np.ndarray, t: np.ndarray, pole: np.ndarray) -> np.ndarray:
    """Signed distance of each joint from the line a->t, toward the pole (positive: the pole's side)."""
    u = unit(t - a)
    w = unit((pole - a) - ((pole - a) @ u) * u)
    out = []
    for j in joints:
        v = positions[j] - a
        out.append(float((v - (v @ u) * u) @ w))
    return np.array(out)


def mirrored(pole: np.ndarray, a: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The pole reflected through the line a->t."""
    u = unit(t - a)
    foot = a + ((pole - a) @ u) * u
    return 2.0 * foot - pole


def test_a_pole_on_the_elbow_side_of_a_valid_pose_keeps_the_elbow_there() -> None:
    """Humanoid: the hinged elbow bends one way and the upper arm has no twist, so only poles on a
    side a valid pose has can win; the pole is put on the side of a valid pose's elbow."""
    s = presets.get("humanoid")
    hand, elbow, chest = s.index("hand_l"), s.index("elbow_l"), s.index("chest")
    rng = np.random.default_rng(15)
    on_side = samples = 0
    while samples < 20:
        pose = random_pose(s, rng)
        target, a, e = pose[hand], pose[chest], pose[elbow]
        u = unit(target - a)
        off = (e - a) - ((e - a) @ u) * u
        if np.linalg.norm(off) < 0.05:
            continue
        samples += 1
        pole = e + 0.5 * unit(off)
        r = solve(s, {"hand_l": target}, poles={"hand_l": pole})  # validity: test_limits_win_over_poles
        on_side += r.converged and pole_side(r.positions, [elbow], r.positions[chest], target, pole)[0] > 0.0
    assert on_side >= 0.9 * samples, f"elbow on the pole's side in {on_side}/{samples}"


def pole_side_allowed(s: Skeleton, target: np.ndarray, pole: np.ndarray) -> bool:
    """For a 2-bone chain: whether some pose with the effector on ``target`` and the middle joint
    on the pole's side of the root-target line is within the limits (the middle joint's circle
    about that line, sampled every degree; limits measured with ``helpers.limits``)."""
    lengths = s.bone_lengths
    a = s.rest_positions[0]
    d = float(np.linalg.norm(target - a))
    u = unit(target - a)
    along = (lengths[1] ** 2 - lengths[2] ** 2 + d * d) / (2.0 * d)
    radius = math.sqrt(lengths[1] ** 2 - along**2)
    e1 = unit(np.cross(u, [0.0, 0.0, 1.0]))
    e2 = np.cross(u, e1)
    for angle in np.radians(np.arange(360)):
        pose = np.array([a, a + along * u + radius * (math.cos(angle) * e1 + math.sin(angle) * e2), target])
        if (
            pole_side(pose, [1], a, target, pole)[0] > 0.0
            and max(violations(s, pose, fk_frames(s, pose)).values()) <= 0
        ):
            return True
    return False


def test_a_pole_puts_every_inner_joint_of_a_chain_on_its_side() -> None:
    """Chains of 2, 5 and 8 bones, free or with cones, a bent rest pose: every target is reached and
    every inner joint ends on the pole's side of the root-target line, and on the other side with
    the pole mirrored through that line, unless the limits forbid that side (checked for 2 bones)."""
    wrong = []
    forbidden = 0
    for n in (2, 5, 8):
        for limit in (None, Cone(60)):
            s = zigzag(n, limit)
            a = s.rest_positions[0]
            reach = float(sum(s.bone_lengths))
            target = unit(np.array([0.3, 0.6, 0.2])) * 0.85 * reach
            for pole in (np.array([0.0, 0.3, 1.0]) * reach, np.array([-1.0, 0.3, 0.0]) * reach):
                for p in (pole, mirrored(pole, a, target)):
                    r = solve(s, {f"j{n}": target}, poles={f"j{n}": p})
                    assert_valid(s, r)
                    side = pole_side(r.positions, range(1, n), a, target, p)
                    if n == 2 and limit is not None and not pole_side_allowed(s, target, p):
                        forbidden += 1  # limits win: reached on the other side
                        side = -side
                    if not (r.converged and np.all(side > 0.0)):
                        wrong.append((n, limit, p.round(2).tolist(), r.converged, side.round(3).tolist()))
    assert not wrong, f"unreached or off the pole's side (bones, limit, pole, reached, offsets): {wrong}"
    assert forbidden == 1  # the sampling finds the one pole the 2-bone chain's cones forbid


def test_a_pole_the_limits_forbid_does_not_keep_a_reachable_target_from_being_reached() -> None:
    """Cone(60) on a 2-bone zigzag forbids the pole's side entirely: the target is still reached,
    on the other side (targets and limits win over poles)."""
    s = zigzag(2, Cone(60))
    target = unit(np.array([0.3, 0.6, 0.2])) * 0.85 * float(sum(s.bone_lengths))
    assert solve(s, {"j2": target}).converged
    for pole in ([-0.2, 0.06, 0.0], [-0.2, 0.06, 0.05]):
        pole = np.array(pole)
        assert not pole_side_allowed(s, target, pole)
        r = solve(s, {"j2": target}, poles={"j2": pole})
        assert_valid(s, r)
        assert r.converged, r.errors
        # and warm, from a pose bent toward the pole (as after dragging the pole there)
        bent = solve(s, {"j2": target + np.array([0.0, 0.0, 0.03])}, positions=r.positions, poles={"j2": pole})
        again = solve(s, {"j2": target}, positions=bent.positions, poles={"j2": pole})
        assert_valid(s, again)
        assert again.converged, again.errors


def test_poles_rarely_cost_reach() -> None:
    """Targets from valid poses with random poles are reached as often as without (limits win)."""
    rng = np.random.default_rng(18)
    for s, e in ((zigzag(5, Cone(60)), "j5"), (presets.get("humanoid"), "hand_l"), (presets.get("robot_arm"), "tool")):
        reached = 0
        for _ in range(20):
            target = random_pose(s, rng)[s.index(e)]
            pole = s.rest_positions[s.root] + rng.normal(size=3)
            r = solve(s, {e: target}, poles={e: pole})
            assert_valid(s, r)
            reached += r.converged
        assert reached >= 19, (e, reached)


def test_a_pole_on_the_root_target_line_is_ignored() -> None:
    for s in (limited_chain(6, lambda i: Cone(40)), zigzag(5, Cone(60)), presets.get("robot_arm")):
        effector = s.end_effectors[0]
        a = s.rest_positions[s.root]
        target = a + unit(np.array([0.4, 0.5, 0.3])) * 0.6 * float(sum(s.bone_lengths))
        plain = solve(s, {effector: target})
        for k in (0.3, 0.8, 1.5, -0.4):
            on_line = a + k * (target - a)
            nudge = np.cross(unit(target - a), [0.0, 0.0, 1.0]) * 5e-10
            for pole in (on_line, on_line + nudge):
                r = solve(s, {effector: target}, poles={effector: pole})
                np.testing.assert_array_equal(r.positions, plain.positions)
                np.testing.assert_array_equal(r.rotations, plain.rotations)


def test_limits_win_over_poles() -> None:
    rng = np.random.default_rng(16)
    skeletons = [zigzag(2, Cone(60)), zigzag(8, Cone(30)), limited_chain(6, lambda i: Hinge((1, 0, 0), -90, 0))]
    for s in skeletons:
        e = s.end_effectors[0]
        for _ in range(20):
            target = rng.normal(size=3) * 0.3
            pole = rng.normal(size=3)
            r = solve(s, {e: target}, poles={e: pole}, max_iterations=int(rng.choice([1, 3, 100])))
            assert_valid(s, r)
    h = presets.get("humanoid")
    for _ in range(5):
        pose = random_pose(h, rng)
        targets = {e: pose[h.index(e)] for e in ("hand_l", "hand_r", "toe_l")}
        poles = {e: pose[h.index(e)] + rng.normal(size=3) for e in ("hand_l", "toe_l")}
        assert_valid(h, solve(h, targets, poles=poles))


def test_poles_keep_the_rigid_guarantee() -> None:
    rest = [[0, 0, 0], [0.3, 0.05, 0.05], [0.0, -0.37, 0.25], [0.04, -0.38, 0]]
    s = Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 0], rest, {"a": Rigid()})
    for max_iterations in (1, 2, 100):
        r = solve(s, {"c": [-2.2, -0.15, 1.9]}, poles={"c": [0.13, 0.62, -0.83]}, max_iterations=max_iterations)
        assert_valid(s, r)


# -- orientation targets ---------------------------------------------------------------------------


def twist_chain() -> Skeleton:
    return limited_chain(6, lambda i: Cone(40), leaf=Twist(-30, 30))


def reachable_orientation(s: Skeleton, effector: str, rng: np.random.Generator, twist_deg: float):
    """Position and orientation of ``effector`` in a random valid pose, twisted within ±twist_deg."""
    pose = random_pose(s, rng)
    e = s.index(effector)
    return pose[e], twisted(fk_frames(s, pose)[e], rng.uniform(-twist_deg, twist_deg))


@pytest.mark.parametrize(
    ("make", "effector", "twist_deg"),
    [(twist_chain, "j6", 30), (lambda: presets.get("humanoid"), "hand_l", 90)],
    ids=["twist chain", "humanoid hand"],
)
def test_reachable_position_and_orientation_are_both_met(make, effector: str, twist_deg: float) -> None:
    """The orientation may need more twist than the effector's Twist limit allows from the frame
    its parent happens to have: the joints above then turn that frame (as a shoulder rolls an arm)."""
    s = make()
    rng = np.random.default_rng(7)
    met = 0
    samples = 30
    for _ in range(samples):
        position, orientation = reachable_orientation(s, effector, rng, twist_deg)
        r = solve(s, {effector: Target(position, orientation)})
        assert_valid(s, r, twisted=(effector,))
        met += r.converged and r.orientation_errors[effector] <= 2.0
    assert met >= 0.95 * samples, f"{met}/{samples} met both the position and (within 2 degrees) the orientation"


@pytest.mark.parametrize(
    ("make", "effector", "limit", "helps"),
    [(twist_chain, "j6", 30.0, True), (lambda: presets.get("humanoid"), "hand_l", 90.0, False)],
    ids=["twist chain", "humanoid hand"],
)
def test_a_twist_limit_on_the_effector_caps_the_twist(make, effector: str, limit: float, helps: bool) -> None:
    """Twist within the limit: only the effector turns. Beyond it: the limit holds, the position is
    kept, and the joints above may turn the parent's frame toward the rest of the twist, so the
    orientation error is at most the excess (never worse than not moving them). On the twist chain
    they do take part of it; the humanoid arm, warm from this pose, keeps the excess (measured)."""
    s = make()
    e = s.index(effector)
    pose = random_pose(s, np.random.default_rng(8))
    reached = solve(s, {effector: pose[e]})
    helped = 0
    for tau in (10.0, -25.0, 40.0, -70.0, 100.0, 150.0, -179.0):
        # the orientation's +Y is the reached last bone: only its twist is asked for
        orientation = twisted(reached.rotations[e], tau)
        r = solve(s, {effector: Target(pose[e], orientation)}, positions=reached.positions)
        assert_valid(s, r, twisted=(effector,))
        assert r.converged, r.errors
        assert violations(s, r.positions, r.rotations)[effector] <= 1e-6
        excess = max(0.0, abs(tau) - limit)
        if excess == 0.0:
            np.testing.assert_allclose(r.positions, reached.positions, atol=1e-12)
            assert r.orientation_errors[effector] <= 1e-5
        else:
            assert r.orientation_errors[effector] <= excess + 1e-5, tau
            helped += r.orientation_errors[effector] < 0.5 * excess
    if helps:
        assert helped >= 1  # the joints above do take some of the excess


def test_without_a_twist_limit_the_effector_takes_the_whole_twist() -> None:
    s = limited_chain(4, lambda i: Cone(40), leaf=None)
    pose = random_pose(s, np.random.default_rng(9))
    reached = solve(s, {"j4": pose[4]})
    for tau in (-170.0, 90.0, 179.0):
        r = solve(s, {"j4": Target(pose[4], twisted(reached.rotations[4], tau))}, positions=reached.positions)
        assert r.orientation_errors["j4"] <= 1e-5
        assert_valid(s, r, twisted=("j4",))
        # only the effector turns: its parent keeps the reached frame
        assert same_rotation(r.rotations[3], reached.rotations[3], 1e-7)


def test_a_smaller_weight_gives_the_orientation_a_smaller_share() -> None:
    s = twist_chain()
    rng = np.random.default_rng(10)
    full, small = [], []
    for _ in range(12):
        position, orientation = reachable_orientation(s, "j6", rng, 20)
        for weight, out in ((1.0, full), (0.05, small)):
            r = solve(s, {"j6": Target(position, orientation, weight=weight)})
            assert_valid(s, r, twisted=("j6",))
            out.append(r.orientation_errors["j6"])
    assert np.mean(full) < np.mean(small), (np.mean(full), np.mean(small))


@pytest.mark.parametrize(
    ("make", "effector"),
    [
        pytest.param(twist_chain, "j6", id="chain"),
        pytest.param(lambda: presets.get("humanoid"), "hand_l", id="humanoid"),
    ],
)
def test_position_wins_when_it_conflicts_with_the_orientation(make, effector: str) -> None:
    s = make()
    rng = np.random.default_rng(11)
    reached = 0
    samples = 20
    for _ in range(samples):
        pose = random_pose(s, rng)
        e = s.index(effector)
        # the last bone asked to point nearly opposite to any way of reaching the position
        orientation = mat_quat(qmat(fk_frames(s, pose)[e]) @ axis_rot(np.array([1.0, 0, 0]), 0.9 * math.pi))
        r = solve(s, {effector: Target(pose[e], orientation)})
        assert_valid(s, r, twisted=(effector,))
        assert r.errors[effector] == pytest.approx(float(np.linalg.norm(r.positions[e] - pose[e])), abs=1e-15)
        reached += r.converged
    assert reached >= 0.95 * samples, f"the position was reached in {reached}/{samples} conflicting cases"


def test_errors_stay_positional_and_plain_points_are_still_accepted() -> None:
    s = presets.get("humanoid")
    pose = random_pose(s, np.random.default_rng(12))
    hand, toe = pose[s.index("hand_l")], pose[s.index("toe_r")]
    q = fk_frames(s, pose)[s.index("hand_l")]
    r = solve(s, {"hand_l": Target(hand, q), "toe_r": toe})
    assert set(r.errors) == {"hand_l", "toe_r"} and set(r.orientation_errors) == {"hand_l"}
    for name, t in (("hand_l", hand), ("toe_r", toe)):
        assert r.errors[name] == pytest.approx(float(np.linalg.norm(r.positions[s.index(name)] - t)), abs=1e-15)
    angle = rotation_angle_deg(qmat(r.rotations[s.index("hand_l")]), qmat(q))
    assert r.orientation_errors["hand_l"] == pytest.approx(angle, abs=1e-6)
    # a Target without an orientation is a plain point
    a = solve(s, {"hand_l": Target(hand), "toe_r": Target(toe)})
    b = solve(s, {"hand_l": hand, "toe_r": tuple(toe)})
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.rotations, b.rotations)
    assert a.orientation_errors == {} and b.orientation_errors == {}


# -- root_target with an orientation ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["humanoid", "octopus"])
def test_root_target_orientation_turns_the_body(name: str) -> None:
    s = followed(presets.get(name))  # (hanging limbs: tests/solver/test_hang.py)
    q = unit(np.array([0.2, 0.3, -0.1, 0.9]))
    root = s.rest_positions[s.root] + np.array([0.1, -0.05, 0.2])
    r = solve(s, {}, root_target=Target(root, q))
    assert_valid(s, r)
    assert same_rotation(r.rotations[s.root], q, 1e-7)
    np.testing.assert_allclose(r.positions[s.root], root, atol=1e-15)
    # with no targets the whole rest pose turns with the root's frame
    turn = qmat(q) @ qmat(s.rest_frames[s.root]).T
    want = root + (s.rest_positions - s.rest_positions[s.root]) @ turn.T
    np.testing.assert_allclose(r.positions, want, atol=1e-9)
    # with a target, the rigid root keeps the orientation and the others follow it
    e = s.end_effectors[1]
    target = want[s.index(e)] + np.array([0.05, 0.05, 0.0])
    r = solve(s, {e: target}, root_target=Target(root, q))
    assert_valid(s, r)
    assert same_rotation(r.rotations[s.root], q, 1e-7)
    assert r.converged


# -- continuity ------------------------------------------------------------------------------------


def target_path(s: Skeleton, effectors: list[str], seed: int, steps: int, share: float = 0.7) -> list[np.ndarray]:
    """``steps`` target sets along FK of a smooth within-limit path, no target moving more than 1 mm."""
    idx = [s.index(e) for e in effectors]
    t, dt = 0.0, 0.01
    out = [smooth_pose(s, t, seed, share)[idx]]
    while len(out) < steps:
        while True:
            nxt = smooth_pose(s, t + dt, seed, share)[idx]
            step = float(np.linalg.norm(nxt - out[-1], axis=1).max())
            if step <= 1e-3:
                break
            dt *= 0.5
        t += dt
        out.append(nxt)
        if step < 0.5e-3:
            dt *= 1.5
    return out


CONTINUITY = {
    "cone chain": (lambda: limited_chain(10, lambda i: Cone(30)), 300, 0.7),
    "elliptical chain": (lambda: limited_chain(10, lambda i: EllipticalCone(20, 40, 30, 50)), 300, 0.7),
    "hinge chain": (
        lambda: limited_chain(10, lambda i: Hinge((1, 0, 0) if i % 2 == 0 else (0, 0, 1), -90, 90)),
        300,
        0.7,
    ),
    "wide cones past the rest axis": (lambda: limited_chain(4, lambda i: Cone(175)), 400, 1.0),
    # hinge X then Z: at +-90 degrees a bone lies along its parent's hinge axis
    "hinges through the parent's axis": (
        lambda: limited_chain(6, lambda i: Hinge((1, 0, 0) if i % 2 == 0 else (0, 0, 1), -120, 120)),
        400,
        0.95,
    ),
    "humanoid": (lambda: presets.get("humanoid").core, 200, 0.7),  # (the solved joints)
    "robot_arm": (lambda: presets.get("robot_arm"), 300, 0.7),
    "octopus": (lambda: presets.get("octopus"), 100, 0.7),
}


@pytest.mark.parametrize("name", CONTINUITY)
def test_one_millimetre_target_steps_never_move_a_joint_more_than_60_mm(name: str) -> None:
    make, steps, share = CONTINUITY[name]
    s = make()
    effectors = [e for e in s.end_effectors if e != "mantle"][:4]
    path = target_path(s, effectors, seed=13, steps=steps, share=share)
    previous = solve(s, dict(zip(effectors, path[0]))).positions
    worst = 0.0
    for k, targets in enumerate(path[1:], 1):
        r = solve(s, dict(zip(effectors, targets)), positions=previous)
        jump = float(np.linalg.norm(r.positions - previous, axis=1)[s.core_joints].max())  # (fingers ride)
        assert jump <= 0.06, f"step {k}: a joint moved {jump * 1e3:.1f} mm"
        worst = max(worst, jump)
        previous = r.positions
        if k % 25 == 0:
            assert_valid(s, r)
    assert_valid(s, r)
