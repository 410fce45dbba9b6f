"""Property tests of the joint-limit guarantees (issue 3) with hypothesis.

After every solve: every constraint within 1e-6 degrees, bone lengths kept, no NaN, unit
rotations consistent with the positions and equal to the swing-rule frames (plus the twist of
effectors with an orientation target), the rigid guarantee within 1e-9; untargeted joints keep
their local rotations. Measured by ``helpers.limits`` (numpy, independent of fabrik3d's helpers),
over random constrained chains and trees, the presets, random targets (reachable or not) and
random start poses (within the limits or not).
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
    is_rigid,
    local_rotations,
    mat_quat,
    qmat,
    random_pose,
    rotation_angle_deg,
    unit,
)
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from fabrik3d import Cone, EllipticalCone, Hinge, Rigid, Skeleton, Target, Twist, solve
from fabrik3d.model import presets
from fabrik3d.solver.limits import nearest_on_ellipse

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOLVES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRESETS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Angles of 0 or at least 1e-3 degrees: tiny positive angles are a known bug (see
# test_tiny_elliptical_cone_angles_do_not_crash), kept out of the broad properties.
angle = st.one_of(st.just(0.0), st.floats(1e-3, 179.0))
signed_low = st.one_of(st.just(0.0), st.floats(-180.0, -1e-3))
signed_high = st.one_of(st.just(0.0), st.floats(1e-3, 180.0))
semi_axis = st.one_of(st.just(0.0), st.floats(1e-3, 3.0))


@st.composite
def unit_vectors(draw: st.DrawFn) -> np.ndarray:
    v = np.array(draw(st.tuples(*[st.floats(-1.0, 1.0)] * 3)))
    if np.linalg.norm(v) < 0.1:
        v = np.eye(3)[draw(st.integers(0, 2))]
    return unit(v)


def perpendicular(draw: st.DrawFn, bone: np.ndarray) -> np.ndarray:
    v = draw(unit_vectors())
    w = v - (v @ bone) * bone
    if np.linalg.norm(w) < 0.1:
        w = np.cross(bone, [1.0, 0.0, 0.0] if abs(bone[0]) < 0.9 else [0.0, 1.0, 0.0])
    return unit(w)


@st.composite
def swing_limit(draw: st.DrawFn, bone: np.ndarray):
    """A random swing limit for a joint whose rest bone (to its first child) is ``bone`` (world)."""
    kind = draw(st.sampled_from(["cone", "ellipse", "hinge"]))
    if kind == "cone":
        return Cone(draw(angle))
    if kind == "ellipse":
        right = perpendicular(draw, bone) + draw(st.floats(-2.0, 2.0)) * bone  # not parallel to the bone
        return EllipticalCone(draw(angle), draw(angle), draw(angle), draw(angle), right_axis=tuple(right))
    return Hinge(tuple(perpendicular(draw, bone)), draw(signed_low), draw(signed_high))


@st.composite
def constrained_skeletons(draw: st.DrawFn, tree: bool) -> Skeleton:
    """A random chain (or tree) with bones 0.05 to 1 long in random directions and random limits.

    Trees get ``Rigid`` on some sub-bases (those may also take a swing limit); a sub-base
    without ``Rigid`` takes no swing limit. A rigid root takes no limits of its own (its start
    frame is not projected: see test_limits_solve's strict xfail).
    """
    n = draw(st.integers(2, 9))
    parents = [-1] + [draw(st.integers(0, j - 1)) if tree else j - 1 for j in range(1, n)]
    rest = np.zeros((n, 3))
    for j in range(1, n):
        d = draw(unit_vectors())
        if d[1] < -1.0 + 1e-6:  # rest bones within ~1e-3 rad of -Y: a known precision bug (test_limits_solve)
            d = unit(d + np.array([0.01, 0.0, 0.0]))
        rest[j] = rest[parents[j]] + d * draw(st.floats(0.05, 1.0))
    kids = [[c for c in range(n) if parents[c] == j] for j in range(n)]
    limits: dict[str, list] = {}
    for j in range(n):
        items: list = []
        rigid = len(kids[j]) >= 2 and draw(st.booleans())
        if rigid:
            items.append(Rigid())
        if kids[j] and (len(kids[j]) == 1 or (rigid and j > 0)) and draw(st.integers(0, 4)) > 0:
            items.append(draw(swing_limit(unit(rest[kids[j][0]] - rest[j]))))
        if not (rigid and j == 0) and draw(st.integers(0, 3)) == 0:
            items.append(Twist(draw(signed_low), draw(signed_high)))
        if items:
            limits[f"n{j}"] = items
    return Skeleton([f"n{j}" for j in range(n)], parents, rest, limits)


def start_pose(s: Skeleton, how: str, seed: int) -> np.ndarray | None:
    rng = np.random.default_rng(seed)
    return None if how == "rest" else random_pose(s, rng) if how == "valid" else arbitrary_pose(s, rng)


@st.composite
def targets_for(draw: st.DrawFn, s: Skeleton, orientations: bool) -> dict:
    """Targets for a random non-empty subset of the effectors: points near or far, some Targets."""
    reach = float(sum(s.bone_lengths))
    root = s.rest_positions[s.root]
    out: dict = {}
    for e in s.end_effectors:
        if not draw(st.booleans()) and (out or e != s.end_effectors[-1]):
            continue
        p = root + draw(unit_vectors()) * draw(st.floats(0.0, 1.5)) * reach
        if orientations and draw(st.booleans()):
            q = unit(np.array(draw(st.tuples(*[st.floats(-1.0, 1.0)] * 4))) + np.array([0.0, 0.0, 0.0, 1e-3]))
            out[e] = Target(p, q, draw(st.floats(0.01, 1.0)))
        else:
            out[e] = p
    return out


# -- the measurement itself ------------------------------------------------------------------------


@FAST
@given(semi_axis, semi_axis, st.floats(0.0, 4.0), st.floats(0.0, 4.0))
def test_nearest_on_ellipse_is_on_it_and_nearest(a: float, b: float, u: float, v: float) -> None:
    """For points outside (the only ones the solver and ``violations`` ask about), against dense sampling."""
    outside = (a <= 0 or b <= 0) or (u / a) ** 2 + (v / b) ** 2 > 1.0
    assume(outside and not (a <= 0 and b <= 0))
    x, y = nearest_on_ellipse(u, v, a, b)
    t = np.linspace(0.0, math.pi / 2, 20001)
    brute = np.hypot(a * np.cos(t) - u, b * np.sin(t) - v).min()
    assert 0.0 <= x <= a + 1e-12 and 0.0 <= y <= b + 1e-12
    if a > 0 and b > 0:
        assert abs((x / a) ** 2 + (y / b) ** 2 - 1.0) <= 1e-9
    assert math.hypot(x - u, y - v) <= brute + 1e-9


# -- random constrained skeletons ------------------------------------------------------------------


@SOLVES
@given(
    data=st.data(),
    tree=st.booleans(),
    how=st.sampled_from(["rest", "valid", "arbitrary"]),
    seed=st.integers(0, 2**32 - 1),
    max_iterations=st.sampled_from([1, 2, 5, 100]),
    tolerance=st.sampled_from([1e-6, 1e-3, 0.05]),
)
def test_random_constrained_skeletons_hold_every_guarantee(
    data: st.DataObject, tree: bool, how: str, seed: int, max_iterations: int, tolerance: float
) -> None:
    s = data.draw(constrained_skeletons(tree=tree))
    targets = data.draw(targets_for(s, orientations=True))
    start = start_pose(s, how, seed)
    note(f"skeleton {s.to_dict()!r}\nstart {None if start is None else start.tolist()!r}\ntargets {targets!r}")
    weights = {e: data.draw(st.floats(0.1, 10.0)) for e in targets} if data.draw(st.booleans()) else None
    r = solve(s, targets, positions=start, weights=weights, max_iterations=max_iterations, tolerance=tolerance)
    twisted = tuple(e for e, t in targets.items() if isinstance(t, Target) and t.orientation is not None)
    assert_valid(s, r, twisted=twisted)
    assert 0 <= r.iterations <= max_iterations
    assert set(r.errors) == set(targets) and set(r.orientation_errors) == set(twisted)
    assert all(math.isfinite(v) for v in [*r.errors.values(), *r.orientation_errors.values()])
    assert r.converged == all(v <= tolerance for v in r.errors.values())
    if how != "arbitrary":  # a pose within the limits is its own projection
        before = local_rotations(s, s.rest_frames if start is None else fk_frames(s, start))
        after = local_rotations(s, r.rotations)
        active = {j for e in targets for j in s.path_to_root(s.index(e))}
        for j in range(len(s)):
            if j in active or (start is not None and any(ambiguous_rigid_frame(s, a) for a in s.path_to_root(j))):
                continue  # (a local rotation below an ambiguous rigid frame is not defined either: its roll
                # about the line of its children turns every frame below it)
            # (1e-5 deg: a rigid root fitted to a degenerate-looking pose differs by 3e-8 rad, rounding)
            assert rotation_angle_deg(before[j], after[j]) <= 1e-5, s.names[j]


def ambiguous_rigid_frame(s: Skeleton, j: int) -> bool:
    """A rigid joint whose rest child offsets are collinear: its frame is not a function of the pose."""
    if j < 0 or not is_rigid(s, j):
        return False
    kids = s.children(j)
    if not is_rigid(s, j):
        return False
    offsets = np.array([s.rest_positions[c] - s.rest_positions[j] for c in kids])
    return np.linalg.matrix_rank(offsets, tol=1e-9) < 2


@SOLVES
@given(data=st.data(), how=st.sampled_from(["rest", "valid", "arbitrary"]), seed=st.integers(0, 2**32 - 1))
def test_random_constrained_skeletons_with_poles_hold_every_guarantee(data: st.DataObject, how: str, seed: int) -> None:
    s = data.draw(constrained_skeletons(tree=data.draw(st.booleans())))
    targets = data.draw(targets_for(s, orientations=False))
    poles = {e: data.draw(unit_vectors()) * data.draw(st.floats(0.1, 3.0)) for e in targets if data.draw(st.booleans())}
    start = start_pose(s, how, seed)
    note(f"skeleton {s.to_dict()!r}\nstart {None if start is None else start.tolist()!r}\ntargets {targets!r}")
    note(f"poles {poles!r}")
    assert_valid(
        s, solve(s, targets, positions=start, poles=poles, max_iterations=data.draw(st.sampled_from([1, 100])))
    )


@SOLVES
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), far=st.booleans())
def test_warm_starts_from_poses_outside_the_limits_are_projected(data: st.DataObject, seed: int, far: bool) -> None:
    """Targets already reached by a start pose that breaks the limits: the result still holds them."""
    s = data.draw(constrained_skeletons(tree=data.draw(st.booleans())))
    start = arbitrary_pose(s, np.random.default_rng(seed))
    effectors = data.draw(st.lists(st.sampled_from(s.end_effectors), min_size=1, unique=True))
    shift = 2.0 * float(sum(s.bone_lengths)) if far else 0.0
    targets = {e: start[s.index(e)] + shift for e in effectors}
    note(
        f"skeleton {s.to_dict()!r}\nstart {start.tolist()!r}\ntargets { {k: v.tolist() for k, v in targets.items()}!r}"
    )
    for max_iterations in (1, 100):
        assert_valid(s, solve(s, targets, positions=start, max_iterations=max_iterations))


# -- presets ---------------------------------------------------------------------------------------


def preset_case(name: str):
    s = presets.get(name)

    @PRESETS
    @given(
        data=st.data(),
        how=st.sampled_from(["rest", "valid", "arbitrary"]),
        seed=st.integers(0, 2**32 - 1),
        max_iterations=st.sampled_from([1, 3, 100]),
    )
    def check(data: st.DataObject, how: str, seed: int, max_iterations: int) -> None:
        rng = np.random.default_rng(seed)
        effectors = data.draw(st.lists(st.sampled_from(s.end_effectors), min_size=1, max_size=5, unique=True))
        pose = random_pose(s, rng)
        noise = data.draw(st.sampled_from([0.0, 0.01, 0.3, 3.0]))
        targets: dict = {e: pose[s.index(e)] + rng.normal(size=3) * noise for e in effectors}
        twisted: tuple[str, ...] = ()
        if data.draw(st.booleans()):
            e = effectors[0]
            turn = axis_rot(np.array([0.0, 1.0, 0.0]), math.radians(data.draw(st.floats(-180.0, 180.0))))
            q = mat_quat(qmat(fk_frames(s, pose)[s.index(e)]) @ turn)
            targets[e] = Target(targets[e], q, data.draw(st.floats(0.01, 1.0)))
            twisted = (e,)
        start = start_pose(s, how, seed + 1)
        r = solve(s, targets, positions=start, max_iterations=max_iterations)
        assert_valid(s, r, twisted=twisted)

    return check


test_humanoid_holds_every_guarantee = preset_case("humanoid")
test_robot_arm_holds_every_guarantee = preset_case("robot_arm")
test_octopus_holds_every_guarantee = preset_case("octopus")


@PRESETS
@given(seed=st.integers(0, 2**32 - 1), twist=st.floats(-180.0, 180.0))
def test_root_target_with_an_orientation_keeps_every_guarantee(seed: int, twist: float) -> None:
    """The humanoid turned by any rotation, a target from a valid pose turned with it."""
    s = presets.get("humanoid")
    rng = np.random.default_rng(seed)
    q = mat_quat(axis_rot(unit(rng.normal(size=3)), math.radians(twist)) @ qmat(s.rest_frames[s.root]))
    root = s.rest_positions[s.root] + rng.normal(size=3) * 0.2
    pose = random_pose(s, rng)
    e = s.end_effectors[int(rng.integers(0, 5))]
    turn = qmat(q) @ qmat(s.rest_frames[s.root]).T
    target = root + turn @ (pose[s.index(e)] - s.rest_positions[s.root])
    r = solve(s, {e: target}, root_target=Target(root, q))
    assert_valid(s, r)
    assert rotation_angle_deg(qmat(r.rotations[s.root]), qmat(q)) <= 1e-7
    np.testing.assert_allclose(r.positions[s.root], root, atol=1e-12)


@pytest.mark.parametrize("tiny", [1e-200, 1e-160])
def test_tiny_elliptical_cone_angles_do_not_crash(tiny: float) -> None:
    s = Skeleton(
        ["a", "b", "c"],
        [-1, 0, 1],
        [[0, 0, 0], [0, 0.1, 0], [0, 0.2, 0]],
        {"a": EllipticalCone(30, 30, tiny, 30), "b": EllipticalCone(30, 30, 30, tiny)},
    )
    assert_valid(s, solve(s, {"c": [0.1, 0.1, 0.1]}))
    assert_valid(s, solve(s, {"c": [0.1, 0.1, -0.1]}))
