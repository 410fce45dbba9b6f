"""The batch pole turns (``fabrik3d.batch.constrained.poles``) equal the scalar ``PoleTurns`` bit for bit.

Every method runs on a batch of problems and, problem by problem, on a real
``LimitedSolve`` with that problem's goals, poles and marks: the poses must be equal
as floats (``==``, not within a tolerance: a stalled solve magnifies one ulp a
millionfold) and the marks equal the scalar sets. The problems are poses within the
limits, poses that ignore them and solved poses of the presets, with random pole
points, random marks and degenerate cases mixed in (a pole on the root–target line, a
target on the chain's start, a pole on a joint's neighbours' line, a joint on it, two
joints at one point, a straight chain).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from helpers.batch import vectorisable
from helpers.limits import arbitrary_pose, random_pose

import fabrik3d
from fabrik3d.batch.constrained.attempt import BatchLimited
from fabrik3d.batch.constrained.poles import PoleMarks
from fabrik3d.model.targets import Goal
from fabrik3d.solver.constrained.solve import LimitedSolve
from fabrik3d.solver.rig import rig

Pose = list[tuple[float, float, float]]
OCTOPUS_ENDS = tuple(f"tentacle_{k}_8" for k in range(1, 9))
# preset -> (targeted effectors, poled effectors)
CASES = {
    "humanoid": (("head", "hand_l", "hand_r", "toe_l", "toe_r"), ("hand_l", "hand_r", "toe_l", "toe_r")),
    "humanoid_untargeted_pole": (("head", "hand_l", "hand_r", "toe_l"), ("hand_l", "toe_l", "toe_r")),
    "robot_arm": (("tool",), ("tool",)),
    "octopus": (OCTOPUS_ENDS, OCTOPUS_ENDS[::2]),
}
MARKS = ("turned", "blocked", "swung", "swing_blocked")
SCALAR_MARKS = ("pole_turned", "pole_blocked", "swung", "swing_blocked")


class Problems:
    """``m`` problems on one preset: per problem a pose, targets and poles (floats), their
    batch form, and a host of the batch."""

    def __init__(self, case: str, poses: list[Pose], targets: list[dict[int, tuple]], poles: list[dict[int, tuple]]):
        name = case.split("_untargeted")[0]
        self.skeleton = vectorisable(name)
        self.r = rig(self.skeleton)
        self.poses, self.targets, self.poles = poses, targets, poles
        self.n, self.m = len(poses[0]), len(poses)
        self.pose = stack(poses)
        goal = {e: stack([[t[e]] for t in targets])[0] for e in targets[0]}
        self.host = BatchLimited(self.r, self.scalar(0), goal, 1e-3)
        self.host.poles = {e: stack([[p[e]] for p in poles])[0] for e in poles[0]}

    def scalar(self, b: int, marks: PoleMarks | None = None) -> LimitedSolve:
        """A ``LimitedSolve`` of problem ``b`` (positions-only goals), with its marks set."""
        goals = {e: Goal(t, None, 1.0) for e, t in self.targets[b].items()}
        solver = LimitedSolve(self.r, goals, None, dict(self.poles[b]), None)
        solver.tol = 1e-3
        if marks is not None:
            for ours, theirs in zip(MARKS, SCALAR_MARKS):
                setattr(solver, theirs, set(np.flatnonzero(getattr(marks, ours)[b]).tolist()))
        return solver


def stack(poses: list[Pose]) -> list[tuple[np.ndarray, ...]]:
    """Per joint, the batch tuple of the problems' float tuples."""
    return [tuple(np.array([p[j][k] for p in poses]) for k in range(len(poses[0][j]))) for j in range(len(poses[0]))]


def row(batch: list[Any], b: int) -> list[tuple[float, ...] | None]:
    """Problem ``b`` of a batch pose (or frames) as float tuples."""
    return [None if v is None else tuple(float(x[b]) for x in v) for v in batch]


def as_floats(a: np.ndarray) -> Pose:
    return [tuple(float(x) for x in p) for p in a]  # type: ignore[misc]


def random_marks(m: int, n: int, rng: np.random.Generator, share: float = 0.3) -> PoleMarks:
    return PoleMarks(*(rng.random((m, n)) < share for _ in MARKS))


def assert_marks(problems: Problems, b: int, marks: PoleMarks, solver: LimitedSolve) -> None:
    for ours, theirs in zip(MARKS, SCALAR_MARKS):
        got = set(np.flatnonzero(getattr(marks, ours)[b]).tolist())
        assert got == getattr(solver, theirs), f"problem {b}: {ours} {got} != {getattr(solver, theirs)}"


def degenerate(pose: Pose, chain: list[int], target: tuple, rng: np.random.Generator) -> tuple[Pose, tuple, tuple]:
    """A pose, target and pole of one chain, maybe in one of the degenerate cases of the turns."""
    pose = list(pose)
    a = np.array(pose[chain[0]])
    kind = rng.integers(0, 14)
    k = int(rng.integers(1, len(chain) - 1)) if len(chain) > 2 else 0
    reach = max(0.05, float(np.linalg.norm(np.array(pose[chain[-1]]) - a)))
    pole = tuple(float(x) for x in a + rng.normal(size=3) * reach)
    if kind == 0:  # the pole on the root–target line
        pole = tuple(float(x) for x in a + rng.uniform(-1, 2) * (np.array(target) - a))
    elif kind == 1:  # the target on the chain's start
        target = pose[chain[0]]
    elif kind == 2 and k:  # the pole on the line through a joint's neighbours
        p, q = np.array(pose[chain[k - 1]]), np.array(pose[chain[k + 1]])
        pole = tuple(float(x) for x in p + rng.uniform(-1, 2) * (q - p))
    elif kind == 3 and k:  # a joint on its neighbours' line
        p, q = np.array(pose[chain[k - 1]]), np.array(pose[chain[k + 1]])
        pose[chain[k]] = tuple(float(x) for x in p + 0.5 * (q - p))
    elif kind == 4 and k:  # a joint on its next one
        pose[chain[k + 1]] = pose[chain[k - 1]] if rng.random() < 0.5 else pose[chain[k]]
    elif kind == 5:  # a straight chain (no side for the whole swing)
        e = np.array(pose[chain[-1]])
        for t, i in enumerate(chain[1:-1], 1):
            pose[i] = tuple(float(x) for x in a + t / (len(chain) - 1) * (e - a))
    elif kind == 6:  # the pole on the chain's start
        pole = pose[chain[0]]
    elif kind == 7 and k:  # a joint just off its neighbours' line (5e-13, the threshold is 1e-12)
        p, q = np.array(pose[chain[k - 1]]), np.array(pose[chain[k + 1]])
        pose[chain[k]] = tuple(float(x) for x in p + 0.5 * (q - p) + 5e-13 * _across(q - p, rng))
    elif kind == 8:  # the pole just off the root–target line (5e-10, the threshold is 1e-9)
        d = np.array(target) - a
        pole = tuple(float(x) for x in a + rng.uniform(-1, 2) * d + 5e-10 * _across(d, rng))
    elif kind == 9:  # the effector on the chain's start (no line to turn about)
        pose[chain[-1]] = pose[chain[0]]
    return pose, target, pole  # type: ignore[return-value]


def _across(d: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random unit vector perpendicular to ``d`` (any unit vector if ``d`` is 0)."""
    v = rng.normal(size=3)
    n2 = float(d @ d)
    if n2 > 0.0:
        v = v - (v @ d) / n2 * d
    return v / np.linalg.norm(v)


@cache
def make(case: str, m: int, seed: int) -> Problems:
    """``m`` problems: poses within the limits, poses ignoring them, a few solved ones; targets
    near the effectors or anywhere; random and degenerate poles."""
    targeted, poled = CASES[case]
    s = vectorisable(case.split("_untargeted")[0])
    rng = np.random.default_rng(seed)
    r = rig(s)
    chains = {s.index(e): LimitedSolve(r, {}, None, {}, None).pole_chain(s.index(e)) for e in poled}
    poses, targets, poles = [], [], []
    for b in range(m):
        kind = b % 6
        if kind == 5 and case == "humanoid":
            goal = {e: s.rest_positions[s.index(e)] + rng.normal(size=3) * 0.3 for e in targeted}
            pos = fabrik3d.solve(s, goal, poles={e: rng.normal(size=3) for e in poled}, max_iterations=10).positions
        else:
            pos = arbitrary_pose(s, rng) if kind % 2 else random_pose(s, rng)
        pose = as_floats(pos)
        spread = (0.0, 1e-4, 0.05, 1.0)[b % 4]
        target = {s.index(e): tuple(float(x) for x in pos[s.index(e)] + rng.normal(size=3) * spread) for e in targeted}
        pole = {}
        for e, chain in chains.items():
            end = target.get(e, pose[e])
            pose, new_end, pole[e] = degenerate(pose, chain, end, rng)
            if e in target:
                target[e] = new_end
        poses.append(pose)
        targets.append(target)
        poles.append(pole)
    return Problems(case, poses, targets, poles)


# -- apply_poles, swing_chain_to_pole, pole_side_count ---------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("final", [False, True])
@pytest.mark.parametrize("swing", [0.0, 1.0, 0.75])
@pytest.mark.parametrize("joints", [True, False])
def test_apply_poles_equals_the_scalar_turn(case: str, final: bool, swing: float, joints: bool) -> None:
    problems = make(case, 48, 1)
    marks = random_marks(problems.m, problems.n, np.random.default_rng(int(swing * 4) + 2 * joints + final))
    given = problems.pose
    kept = [tuple(x.copy() for x in v) for v in given]
    before = marks.copy()
    turned, new = problems.host.apply_poles(given, marks, final=final, swing=swing, joints=joints)
    for b in range(problems.m):
        solver = problems.scalar(b, marks)
        assert row(turned, b) == solver.apply_poles(problems.poses[b], final=final, swing=swing, joints=joints)
        assert_marks(problems, b, new, solver)
    # the arguments are left as they were
    assert all(np.array_equal(x, y) for v, w in zip(given, kept) for x, y in zip(v, w))
    assert all(np.array_equal(x, y) for x, y in zip(marks.arrays(), before.arrays()))


def test_the_turns_run_through_their_branches() -> None:
    """The problems of the tests above turn joints, block them, swing chains and block swings."""
    problems = make("humanoid", 48, 1)
    marks = random_marks(problems.m, problems.n, np.random.default_rng(0))
    _, new = problems.host.apply_poles(problems.pose, marks, swing=1.0)
    _, again = problems.host.apply_poles(problems.pose, PoleMarks.empty(problems.m, problems.n), swing=1.0)
    for name in MARKS:
        assert getattr(new, name).any(), name
    assert not (new.turned.any(axis=1)).all()  # (and some problems are left alone)
    assert again.turned.any() and not again.blocked.any() and not again.swing_blocked.any()


@pytest.mark.parametrize("case", ["humanoid", "octopus"])
@pytest.mark.parametrize("share", [1.0, 0.5])
def test_swing_chain_to_pole_equals_the_scalar_swing(case: str, share: float) -> None:
    problems = make(case, 48, 3)
    rng = np.random.default_rng(5)
    for e, pole in problems.host.poles.items():
        chain = problems.host.pole_chain(e)
        swung_before = rng.random((problems.m, problems.n)) < 0.3
        marks = random_marks(problems.m, problems.n, rng)
        pose, new = problems.host.swing_chain_to_pole(problems.pose, chain, pole, swung_before, marks, share)
        for b in range(problems.m):
            solver = problems.scalar(b, marks)
            expected = list(problems.poses[b])
            before = set(np.flatnonzero(swung_before[b]).tolist())
            solver.swing_chain_to_pole(expected, chain, problems.poles[b][e], before, share)
            assert row(pose, b) == expected
            assert_marks(problems, b, new, solver)


@pytest.mark.parametrize("case", CASES)
def test_pole_side_count_equals_the_scalar_count(case: str) -> None:
    problems = make(case, 48, 1)
    turned, _ = problems.host.apply_poles(problems.pose, PoleMarks.empty(problems.m, problems.n), swing=0.5)
    for pose, poses in ((problems.pose, problems.poses), (turned, [row(turned, b) for b in range(problems.m)])):
        count = problems.host.pole_side_count(pose)
        assert count.shape == (problems.m,)
        assert count.tolist() == [problems.scalar(b).pole_side_count(poses[b]) for b in range(problems.m)]  # type: ignore[arg-type]


def test_a_batch_of_one_and_problems_left_alone() -> None:
    """A batch of one equals its scalar turn; problems whose poles lie on the root–target line are
    left as they were (the same values), next to problems that turn."""
    problems = make("humanoid", 48, 1)
    host = problems.host
    for b in range(6):
        one = [tuple(x[[b]] for x in v) for v in problems.pose]
        saved_goal, saved_poles = host.goal_positions, host.poles
        host.goal_positions = {e: tuple(x[[b]] for x in t) for e, t in saved_goal.items()}
        host.poles = {e: tuple(x[[b]] for x in p) for e, p in saved_poles.items()}
        try:
            turned, new = host.apply_poles(one, PoleMarks.empty(1, problems.n), swing=1.0)
        finally:
            host.goal_positions, host.poles = saved_goal, saved_poles
        solver = problems.scalar(b, PoleMarks.empty(problems.m, problems.n))
        assert row(turned, 0) == solver.apply_poles(problems.poses[b], swing=1.0)
        assert_marks(problems, 0, new, solver)
    # poles on the line from each chain's start to its target in every other problem
    on_line = {}
    for e, pole in host.poles.items():
        a, t = problems.pose[host.pole_chain(e)[0]], host.goal_positions[e]
        line = tuple(a[k] + 0.5 * (t[k] - a[k]) for k in range(3))
        on_line[e] = tuple(np.where(np.arange(problems.m) % 2 == 0, line[k], pole[k]) for k in range(3))
    saved = host.poles
    host.poles = on_line
    try:
        turned, new = host.apply_poles(
            problems.pose, random_marks(problems.m, problems.n, np.random.default_rng(1)), swing=1.0
        )
    finally:
        host.poles = saved
    still = np.arange(problems.m) % 2 == 0
    assert not new.turned[still].any() and new.turned[~still].any()
    for j, v in enumerate(turned):
        assert all(np.array_equal(x[still], y[still]) for x, y in zip(v, problems.pose[j]))


# -- final_poles ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["humanoid", "robot_arm", "octopus"])
@pytest.mark.parametrize("whole", [True, False])
def test_final_poles_equals_the_scalar_final_turn(case: str, whole: bool) -> None:
    problems = make(case, 24 if case == "octopus" else 48, 7)
    r = problems.r
    frames = stack([r.pose_frames(p) for p in problems.poses])
    start_poses = [as_floats(random_pose(problems.skeleton, np.random.default_rng(b))) for b in range(problems.m)]
    start = stack(start_poses)
    pose, new_frames = problems.host.final_poles(problems.pose, frames, start, 1e-3, whole)
    changed = 0
    for b in range(problems.m):
        solver = problems.scalar(b)
        expected = solver.final_poles(problems.poses[b], r.pose_frames(problems.poses[b]), start_poses[b], 1e-3, whole)
        assert row(pose, b) == expected[0], f"problem {b}"
        assert row(new_frames, b) == expected[1], f"problem {b}"
        changed += expected[0] != problems.poses[b]
    assert 0 < changed < problems.m  # some problems turned, some not
