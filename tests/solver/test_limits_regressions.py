"""Regression tests for bugs found in the constrained solver."""

from __future__ import annotations

import math

import numpy as np

import fabrik3d
from fabrik3d.model import presets
from fabrik3d.solver.limits import clamp_angle


def test_an_angle_off_its_range_by_rounding_clamps_to_the_nearer_bound() -> None:
    # phi - before is lost to rounding next to pi: the clamp must not pick the far bound
    lo, hi = math.radians(-150), 0.0
    assert clamp_angle(2.7755575615628914e-17, lo, hi, before=-5.551115123125786e-17) == hi
    assert clamp_angle(lo - 1e-17, lo, hi, before=lo + 1e-17) == lo


def test_moving_the_root_of_a_limited_body_without_targets_moves_it_rigidly() -> None:
    # found by the web UI's root handle: a warm-started root-only solve swung a forearm round
    skeleton = presets.get("humanoid")
    start = fabrik3d.solve(skeleton, {}).positions
    pose = start
    for k in range(1, 8):
        shift = np.array([0.02 * k, 0.0, 0.0])
        pose = fabrik3d.solve(skeleton, {}, positions=pose, root_target=start[skeleton.root] + shift).positions
        np.testing.assert_allclose(pose - start, np.tile(shift, (len(start), 1)), atol=1e-9)
