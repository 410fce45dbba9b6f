"""Cost linear in the skeleton's size (issue 15): sizes and counts here, time in benchmarks/bench_scaling.py."""

from __future__ import annotations

import tracemalloc

import numpy as np

import fabrik3d
from fabrik3d import Cone, Skeleton
from fabrik3d.solver.constrained.plan import LimitedPlan
from fabrik3d.solver.rig import rig


def limited_chain(n: int) -> Skeleton:
    pos = np.zeros((n, 3))
    pos[:, 1] = np.arange(n) * 0.1
    names = [f"j{i}" for i in range(n)]
    return Skeleton(names, list(range(-1, n - 1)), pos, constraints={name: Cone(40.0) for name in names[:-1]})


def solve_peak(n: int) -> tuple[int, LimitedPlan]:
    """Peak memory (bytes) of a constrained solve on an ``n``-joint chain that takes damped steps."""
    sk = limited_chain(n)
    target = [0.3 * n * 0.1, 0.6 * n * 0.1, 0.0]
    tracemalloc.start()
    fabrik3d.solve(sk, {f"j{n - 1}": target}, max_iterations=4)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    (plan,) = [p for p in rig(sk).plans.values() if isinstance(p, LimitedPlan)]
    return peak, plan


def test_the_constrained_solve_s_memory_grows_linearly_with_the_joints() -> None:
    small, plan = solve_peak(1000)
    assert plan.damped is not None  # the damped steps ran (they held a dense (joints x columns) matrix)
    cols, mask, starts = plan.damped
    assert len(starts) == len(plan.turnable) and mask.shape == (1, len(cols))
    large, _ = solve_peak(4000)
    assert large < 6 * small, (small, large)  # 4x the joints: 4x the memory (quadratic would be 16x)


def test_effectors_beneath_are_found_by_walking_up_once() -> None:
    sk = fabrik3d.presets.get("octopus")
    tips = [sk.index(name) for name in sk.end_effectors]
    r = rig(sk)
    plan = LimitedPlan(r, tuple(tips), None)
    for j, below in plan.effectors_beneath.items():
        assert below == [e for e in r.subtree(j) if e in tips]  # the subtree rule, in pre-order
    assert sum(len(v) for v in plan.effectors_beneath.values()) <= len(tips) * len(sk)


def test_joint_and_effector_look_ups_are_by_name() -> None:
    sk = fabrik3d.presets.get("humanoid")
    assert "hand_l" in sk and "nope" not in sk and ["unhashable"] not in sk
    assert sk.is_effector("hand_l") and not sk.is_effector("elbow_l") and not sk.is_effector({})
