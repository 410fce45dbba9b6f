"""Joint limits compiled (``solve_batch(..., backend="cpu")`` on constrained skeletons): the constrained solve's
reaching passes, its damped steps' rows and turns and the limits' projections run as numba kernels
(``fabrik3d.batch.kernels_passes``, ``kernels_turns``, ``kernels_joints``, ``kernels_limits``, driven by
``fabrik3d.batch.compiled_passes``), and every result is the numpy backend's bit for bit: positions,
rotations, iterations and convergence.

The kernel sources run as plain Python (no numba needed) are checked against the scalar solver's own
functions; with numba, ``solve_batch`` on the CPU backend against the numpy backend, on the presets and on
random constrained chains and trees (``MIN_BATCH`` lowered so that small batches run vectorised), where the
compiled passes are counted to show they ran. Without numba the compiled tests skip (fail under ``CI=true``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.batch import needs_numba, vectorisable
from helpers.constrained import constrained_skeleton, mixed_targets, reachable_targets, some_of
from helpers.limits import arbitrary_pose, random_pose, unit
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d import Cone, EllipticalCone, Hinge, Target, solve_batch
from fabrik3d import rotations as rot
from fabrik3d.batch import compiled_passes, kernels_joints, kernels_limits, kernels_passes, kernels_rigid, kernels_turns
from fabrik3d.batch.constrained import solve as batch_limited
from fabrik3d.model import presets
from fabrik3d.model.targets import Goal
from fabrik3d.solver import limits as lm
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.rig import rig

PLAIN = lambda f: f  # noqa: E731  (the kernel sources' jit as plain Python)


@pytest.fixture(scope="module")
def numba() -> object:
    return needs_numba()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every batch runs vectorised (``MIN_BATCH`` 1); the compiled driver's calls are counted by kind."""
    monkeypatch.setattr(batch_limited, "MIN_BATCH", 1)
    calls = {"reach": 0, "project": 0, "rows": 0, "turn": 0}
    for name in calls:
        inner = getattr(compiled_passes.CompiledPasses, name)

        def counting(self: Any, *args: Any, _inner: Any = inner, _name: str = name) -> Any:
            calls[_name] += 1
            return _inner(self, *args)

        monkeypatch.setattr(compiled_passes.CompiledPasses, name, counting)
    return calls


def same(s: fabrik3d.Skeleton, targets: dict, **kwargs: Any) -> fabrik3d.BatchResult:
    """``solve_batch`` on the CPU backend gives the numpy backend's results bit for bit."""
    want = solve_batch(s, targets, **kwargs)
    got = solve_batch(s, targets, backend="cpu", **kwargs)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.converged, want.converged)
    assert np.array_equal(got.positions, want.positions)
    assert np.array_equal(got.rotations, want.rotations)
    return got


# -- the kernel sources as plain Python ------------------------------------------------------------------


def random_limit(rng: np.random.Generator) -> lm.SwingLimit:
    d0, x = unit(rng.normal(size=3)), unit(rng.normal(size=3))
    d0t, xt = tuple(d0.tolist()), tuple(x.tolist())
    kind = int(rng.integers(0, 3))
    angle = lambda: float(rng.choice([0.0, 1e-13, 0.5, 5.0, 30.0, 90.0, 150.0, 179.9]))  # noqa: E731
    if kind == 0:
        return lm._BoundCone(Cone(max(angle(), 1e-3)), d0t, lm._perp(xt, d0t))
    if kind == 1:
        return lm._BoundEllipse(EllipticalCone(*(angle() for _ in range(4))), d0t, xt)
    return lm._BoundHinge(Hinge((1.0, 0.0, 0.0), -float(rng.uniform(0, 180)), float(rng.uniform(0, 180))), d0t, xt)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_limits_kernel_source_is_the_scalar_projection(seed: int) -> None:
    """``build_limits``' ``project`` (plain Python) gives ``SwingLimit.project``'s floats: cones (narrow ones
    measured by the angle), elliptical cones (zero semi-axes: segments), hinges with and without the
    previous direction, directions along and opposite the rest bone and the hinge's axis."""
    rng = np.random.default_rng(seed)
    limit = random_limit(rng)
    kind, row = kernels_limits.limit_row(limit)
    project = kernels_limits.build_limits(PLAIN)["project"]
    d0 = np.array(limit.d0)
    special = [d0, -d0, unit(np.cross(d0, [0.3, 0.5, 0.1]))]
    for k in range(40):
        d = special[k] if k < len(special) else unit(rng.normal(size=3))
        prev = None if k % 3 == 0 else tuple(unit(rng.normal(size=3)).tolist())
        dt = tuple(d.tolist())
        got = project(kind, row, dt, prev is not None, prev if prev is not None else dt)
        assert tuple(float(x) for x in got) == tuple(limit.project(dt, prev)), (kind, dt, prev)


def scalar_problem(s: fabrik3d.Skeleton, rng: np.random.Generator) -> tuple[LimitedSolve, list, list, list]:
    """A scalar constrained solve of ``s`` toward some of its effectors (targets from a random valid
    pose, some of them moved), and a start pose anywhere with its frames."""
    r = rig(s)
    names = some_of(s.end_effectors, rng)
    pose = random_pose(s, rng)
    goals = {}
    for e in names:  # (about half with an orientation target, of a random weight)
        aim = tuple(unit(rng.normal(size=4)).tolist()) if rng.random() < 0.5 else None
        position = tuple((pose[s.index(e)] + rng.normal(scale=0.2, size=3)).tolist())
        goals[s.index(e)] = Goal(position, aim, float(rng.choice([1.0, 0.5, 3.0])) if aim else 1.0)
    solver = LimitedSolve(r, goals, None, {}, None)
    solver.yield_share = float(rng.choice([1.0, 0.25, 1.0 / 64.0]))  # (a stalled solve's share yields)
    start = [tuple(p) for p in arbitrary_pose(s, rng).tolist()]
    frames = r.pose_frames(start, None)
    return solver, start, frames, names


def aims_of(solver: LimitedSolve) -> tuple[np.ndarray, ...]:
    """The kernels' ``aims`` of one problem: ``solver``'s orientation targets ``(t, 4, 1)``, where they are,
    their weights and the yield share ``(1,)`` (``CompiledPasses.aims``)."""
    goals = list(solver.goals.values())
    turns = np.array([g.orientation or (0.0, 0.0, 0.0, 0.0) for g in goals], dtype=float)[:, :, None]
    aimed = np.array([g.orientation is not None for g in goals])
    return turns, aimed, np.array([g.weight for g in goals]), np.array([solver.yield_share])


def as_arrays(seq: list, width: int) -> np.ndarray:
    return np.array(seq, dtype=float).reshape(len(seq), width, 1)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_passes_kernel_source_is_the_scalar_passes(seed: int, tree: bool) -> None:
    """``build_passes``' block (plain Python) gives ``ReachingPasses``' floats for one iteration (stage 1,
    then stage 2: inverted limits, swivelled hinges, rigid joints with one or two children, a rigid root)
    and for the start's projection, on random constrained chains and trees."""
    rng = np.random.default_rng(seed)
    s = constrained_skeleton(int(rng.integers(3, 9)), tree, rng)
    solver, start, frames, _ = scalar_problem(s, rng)
    r, plan = solver.r, solver.plan
    arrays = kernels_joints.rig_arrays(r, plan, None)
    n = len(s)
    if any(r.rigid[j] and r.parents[j] >= 0 and len(r.children[j]) > 2 for j in range(n)):
        return  # (Horn's fit: the driver's numpy, between the kernel's segments; tested through solve_batch)
    block = kernels_passes.build_passes(PLAIN)
    goal_of = np.full(n, -1, dtype=np.int64)
    goal_of[list(solver.goals)] = range(len(solver.goals))
    goals = np.array([g.position for g in solver.goals.values()], dtype=float)[:, :, None]
    pose, rot_frames = as_arrays(start, 3), as_arrays(frames, 4)
    every = [[(c, 1.0) for c in r.children[j]] for j in range(n)]
    for stage1, plan_of in (
        (True, (plan.up, plan.down, plan.active, plan.kids)),
        (False, (r.order, [], [True] * n, every)),
    ):
        q, qf = pose.copy(), rot_frames.copy()
        out, out_frames = np.empty_like(pose), rot_frames.copy()
        lists = kernels_passes.plan_arrays(*plan_of)
        args = (
            pose,
            rot_frames,
            pose,
            goals if stage1 else goals[:0],
            goal_of,
            *aims_of(solver),
            q,
            qf,
            out,
            out_frames,
            *lists,
            *arrays,
        )
        block(0, 0, 1, np.array([0, len(plan_of[1]), 0, 0]), *args)  # stage 1 (none for a projection)
        out[:] = q
        out[r.order[0]] = pose[r.order[0]]
        block(0, 0, 1, np.array([0, 0, 0, len(plan_of[0])]), *args)  # stage 2
        if stage1:
            want, want_frames = solver.stage2(
                *solver.stage1(start, frames), start, frames, solver.active, solver.up, solver.kids
            )
        else:
            want, want_frames = solver.project(start, frames)
        assert np.array_equal(out[:, :, 0], np.array(want)), stage1
        assert np.array_equal(out_frames[:, :, 0], np.array(want_frames)), stage1


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_turns_kernel_source_is_the_damped_steps_turn(seed: int, tree: bool) -> None:
    """``build_turns``' block (plain Python) gives ``DampedSteps.turn``'s floats: each turning joint turned
    by a world rotation vector (none, small, beyond the 0.5 rad cap), limited, the pose rebuilt."""
    rng = np.random.default_rng(seed)
    s = constrained_skeleton(int(rng.integers(3, 9)), tree, rng)
    solver, start, frames, _ = scalar_problem(s, rng)
    arrays = kernels_joints.rig_arrays(solver.r, solver.plan, None)
    if arrays is None or not solver.turnable:
        return
    n, count = len(s), len(solver.turnable)
    spin = rng.normal(scale=rng.choice([1e-16, 0.1, 1.0]), size=(count, 3))
    goal_of = np.full(n, -1, dtype=np.int64)
    goal_of[list(solver.goals)] = range(len(solver.goals))
    out, out_frames = np.empty((n, 3, 1)), np.empty((n, 4, 1))
    turnable, up = np.array(solver.turnable), np.array(solver.up)
    block = kernels_turns.build_turns(PLAIN)
    turns, aimed, _, _ = aims_of(solver)
    pose, rot_frames = as_arrays(start, 3), as_arrays(frames, 4)
    block(0, 0, 1, spin[None], pose, rot_frames, out, out_frames, turnable, up, goal_of, turns, aimed, *arrays)
    want, want_frames = solver.turn(start, frames, spin.tolist())
    assert np.array_equal(out[:, :, 0], np.array(want)) and np.array_equal(out_frames[:, :, 0], np.array(want_frames))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_rows_kernel_source_is_the_damped_steps_rows(seed: int, tree: bool) -> None:
    """``build_rows``' block (plain Python) gives ``DampedSteps.turning_axes``' floats (world axes of rigid
    joints, hinge axes, two axes across a ball joint's bone) and the scalar step's Jacobian rows of the
    target positions (``u x (P_e - P_j)`` above each effector, +0.0 elsewhere) and residuals."""
    rng = np.random.default_rng(seed)
    s = constrained_skeleton(int(rng.integers(3, 9)), tree, rng)
    solver, start, frames, _ = scalar_problem(s, rng)
    r = solver.r
    arrays = kernels_joints.rig_arrays(r, solver.plan, None)
    cols, mask, starts = solver.damped_plan()
    if arrays is None or not cols:
        return
    goals = list(solver.goals)
    above = [np.flatnonzero(row > 0.0) for row in mask]
    at = np.cumsum([0] + [len(a) for a in above])
    targets = np.array([solver.goals[e].position for e in goals], dtype=float)[:, :, None]
    u, jac, err = np.empty((1, len(cols), 3)), np.zeros((1, 3 * len(goals), len(cols))), np.empty((1, 3 * len(goals)))
    block = kernels_turns.build_rows(PLAIN)
    plan = (np.array(solver.turnable), starts, np.array(goals), at, np.concatenate(above), np.array(cols))
    block(0, 0, 1, as_arrays(start, 3), as_arrays(frames, 4), targets, *plan, u, jac, err, *arrays)
    want_u = np.array(solver.turning_axes(frames))
    assert np.array_equal(u[0], want_u)
    moving = np.array([start[e] for e in goals])[:, None, :] - np.array([start[j] for j in cols])[None, :, :]
    ux, uy, uz = want_u[:, 0], want_u[:, 1], want_u[:, 2]
    mx, my, mz = moving[..., 0], moving[..., 1], moving[..., 2]
    crossed = np.stack((uy * mz - uz * my, uz * mx - ux * mz, ux * my - uy * mx), axis=1)
    assert np.array_equal(jac[0], np.where(mask[:, None, :] > 0.0, crossed, 0.0).reshape(-1, len(cols)))
    assert np.array_equal(err[0], [g - p for e in goals for g, p in zip(solver.goals[e].position, start[e])])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 5))
def test_the_rigid_fit_kernel_sources_are_the_scalar_fits(seed: int, kids: int) -> None:
    """``kernels_rigid``'s blocks (plain Python) around numpy's ``eigh`` give Horn's fits of a rigid joint with
    ``kids`` children as the scalar passes make them: stage 1's point and frame (``rigid_stage1``, centred),
    and stage 2's frame (the fit, then the joint's swing and twist limits) with every child placed; and the
    fallback frame where the kids' points leave the fit flat."""
    rng = np.random.default_rng(seed)
    n = 2 + kids
    rest = np.zeros((n, 3))
    rest[1] = unit(rng.normal(size=3) + np.array([0.0, 2.0, 0.0])) * rng.uniform(0.2, 1.0)
    for c in range(2, n):
        rest[c] = rest[1] + unit(rng.normal(size=3)) * rng.uniform(0.05, 0.5)
    items: list[Any] = [fabrik3d.Rigid()]
    if rng.random() < 0.7:
        items.append(Cone(float(rng.uniform(5.0, 90.0))))
    if rng.random() < 0.5:
        items.append(fabrik3d.Twist(-float(rng.uniform(0.0, 90.0)), float(rng.uniform(0.0, 90.0))))
    s = fabrik3d.Skeleton([f"n{j}" for j in range(n)], [-1, 0] + [1] * kids, rest, {"n1": items})
    r = rig(s)
    solver = LimitedSolve(r, {c: Goal((0.0, 0.0, 0.0), None, 1.0) for c in range(2, n)}, None, {}, None)
    kid_w = [(c, float(rng.uniform(0.5, 2.0))) for c in range(2, n)]
    start = [tuple(p) for p in arbitrary_pose(s, rng).tolist()]
    frames = r.pose_frames(start, None)
    flat = rng.random() < 0.2  # (every kid's point at one place: no rotation is pinned down)
    q = [start[1] if flat else tuple((np.array(start[c]) + rng.normal(scale=0.1, size=3)).tolist()) for c in range(n)]
    arrays = kernels_joints.rig_arrays(r, solver.plan, None)
    idx, w = np.array([c for c, _ in kid_w]), np.array([w for _, w in kid_w])
    fit_matrix, fit_finish = kernels_rigid.build_fit_matrix(PLAIN), kernels_rigid.build_fit_finish(PLAIN)
    pose, rot_frames, points = as_arrays(start, 3), as_arrays(frames, 4), as_arrays(q, 3)
    matrix = np.empty((1, 4, 4))
    fit_matrix(0, 0, 1, 1, True, points, pose, idx, w, matrix, *arrays)  # stage 1
    vals, vecs = np.linalg.eigh(matrix)
    got, got_frames = points.copy(), rot_frames.copy()
    fit_finish(0, 0, 1, 1, True, vals, vecs, points, rot_frames, got, got_frames, idx, w, *arrays)
    want, want_frame = solver.rigid_stage1(1, start[1], frames[1], q, kid_w)
    assert tuple(got[1, :, 0]) == want and tuple(got_frames[1, :, 0]) == want_frame
    fit_matrix(0, 0, 1, 1, False, points, pose, idx, w, matrix, *arrays)  # stage 2
    vals, vecs = np.linalg.eigh(matrix)
    got, got_frames = pose.copy(), rot_frames.copy()
    got_frames[0, :, 0] = parent = tuple(unit(rng.normal(size=4)).tolist())  # (the parent's new frame)
    fit_finish(0, 0, 1, 1, False, vals, vecs, points, rot_frames, got, got_frames, idx, w, *arrays)
    turn = solver.rigid_turn(start[1], frames[1], q, kid_w, centred=False)
    frame = solver.limit_frame(1, parent, turn)
    assert tuple(got_frames[1, :, 0]) == frame
    for c in range(2, n):
        assert tuple(got[c, :, 0]) == rot.add(start[1], rot.rotate(frame, r.offset[c]))
    if flat:
        assert turn == frames[1]  # (the fallback)


def test_what_the_kernels_do_not_cover_is_named() -> None:
    """The presets are covered (the octopus's rigid root with nine children, the humanoid's rolling shoulders
    and hips, its chest fitted by numpy between the kernel's segments), with orientation targets or without;
    a held joint's lock (the natural posing's, which ``solve`` runs) is not."""
    for name in presets.names():
        s = vectorisable(name)
        r = rig(s)
        ids = [s.index(e) for e in s.end_effectors]
        for aim in (None, (0.0, 0.0, 0.0, 1.0)):
            plan = LimitedSolve(r, {e: Goal((0.0, 0.0, 0.0), aim, 1.0) for e in ids}, None, {}, None).plan
            assert compiled_passes.CompiledPasses.make(r, plan, ids, None) is not None, name
    assert kernels_limits.limit_row(lm._BoundLock((0.0, 1.0, 0.0))) is None


# -- solve_batch on the CPU backend --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["robot_arm", "octopus", "humanoid"])
def test_cpu_equals_numpy_on_the_presets(numba: object, counted: dict[str, int], name: str) -> None:
    """Cold (restarts from random poses), warm, with a root target and weights, cut short by the iteration
    cap, with a root orientation, with orientation targets, and with a pole: the compiled passes, projections,
    rows and turns ran, and every result is numpy's."""
    s = vectorisable(name)
    rng = np.random.default_rng(7)
    count = 48
    goal = reachable_targets(s, list(s.end_effectors), count, rng)
    same(s, goal)
    starts = np.array([random_pose(s, rng) for _ in range(count)])
    weights = {e: float(rng.uniform(0.5, 3.0)) for e in s.end_effectors}
    same(s, mixed_targets(s, some_of(s.end_effectors, rng), count, rng), positions=starts, weights=weights)
    root = s.rest_positions[s.root] + rng.normal(scale=0.05, size=(count, 3))
    same(s, goal, root_target=root, max_iterations=4)
    turned = Target(s.rest_positions[s.root], (0.0, 0.25881904510252074, 0.0, 0.9659258262890683))  # 30 deg about y
    same(s, goal, root_target=turned)  # (the octopus's rigid root takes it as its frame)
    turns = rng.normal(size=(count, 4))
    aimed = {e: (t, turns / np.linalg.norm(turns, axis=1, keepdims=True), 0.5) for e, t in goal.items()}
    same(s, aimed, positions=starts)  # (every effector with an orientation target too)
    effector = s.end_effectors[0]  # a pole: its turns before each stage 1 stay numpy's, the passes compiled
    same(
        s, goal, poles={effector: s.rest_positions[s.index(effector)] + rng.normal(size=(count, 3))}, max_iterations=30
    )
    assert counted["reach"] and counted["project"] and counted["rows"] and counted["turn"], counted


def test_cpu_equals_numpy_where_the_kernels_do_not_reach(numba: object, counted: dict[str, int]) -> None:
    """Orientation targets (compiled passes; the damped step's orientation rows stay numpy's) with the arm's root
    orientation, and the humanoid preset itself (its natural posing: ``solve`` once per problem): the CPU
    backend's results are numpy's either way."""
    arm = vectorisable("robot_arm")
    rng = np.random.default_rng(8)
    goal = reachable_targets(arm, ["tool"], 24, rng)
    same(arm, goal, root_target=Target(arm.rest_positions[0], (0.0, 0.38268343236508984, 0.0, 0.9238795325112867)))
    assert counted["reach"]
    turns = rng.normal(size=(24, 4))
    same(arm, {"tool": (goal["tool"], turns / np.linalg.norm(turns, axis=1, keepdims=True), 0.5)})
    humanoid = presets.get("humanoid")
    same(humanoid, reachable_targets(humanoid.core, ["hand_l", "toe_r"], 6, rng))


@pytest.mark.parametrize("seed", range(8))
def test_cpu_equals_numpy_on_random_constrained_chains_and_trees(
    numba: object, counted: dict[str, int], seed: int
) -> None:
    """Random limits (cones, elliptical cones, hinges, twists, rigid joints), cold and warm, weights, root
    targets and few iterations: numpy's results bit for bit."""
    rng = np.random.default_rng(2000 + seed)
    s = constrained_skeleton(int(rng.integers(3, 10)), seed % 2 == 1, rng)
    count = 40
    chosen = some_of(s.end_effectors, rng) if seed % 4 == 3 else list(s.end_effectors)
    goal = mixed_targets(s, chosen, count, rng)
    same(s, goal)
    starts = np.array([arbitrary_pose(s, rng) for _ in range(count)])
    same(s, goal, positions=starts, weights={e: float(rng.uniform(0.2, 5.0)) for e in chosen})
    root = s.rest_positions[s.root] + rng.normal(scale=0.2, size=(count, 3))
    same(s, goal, root_target=root, tolerance=1e-6, max_iterations=5)
    turns = rng.normal(size=(count, 4))
    turns /= np.linalg.norm(turns, axis=1, keepdims=True)
    weight = float(rng.choice([0.3, 0.7, 1.0]))
    aimed = {e: (goal[e], turns, weight) if k % 2 == 0 else goal[e] for k, e in enumerate(chosen)}
    same(s, aimed, positions=starts)  # (orientation targets on every other effector, yielding while stalled)
