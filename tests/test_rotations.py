"""The rotation helpers on floats (``fabrik3d.rotations``) against matrices built with numpy."""

from __future__ import annotations

import math

import numpy as np
from helpers.limits import qmat
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik3d import rotations as rot

finite = st.floats(-1e3, 1e3, allow_nan=False)
vectors = st.tuples(finite, finite, finite)
quaternions = st.tuples(finite, finite, finite, finite).filter(lambda q: sum(x * x for x in q) > 1e-6)


def unit_quat(q: tuple[float, float, float, float]) -> rot.Quat:
    n = math.sqrt(sum(x * x for x in q))
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


@settings(max_examples=300, deadline=None)
@given(quaternions, vectors)
def test_rotate_rotate_inv_and_axes_agree_with_the_matrix(q, v) -> None:
    q = unit_quat(q)
    m = qmat(np.array(q))
    scale = 1.0 + float(np.linalg.norm(v))
    np.testing.assert_allclose(rot.rotate(q, v), m @ np.array(v), atol=1e-12 * scale)
    np.testing.assert_allclose(rot.rotate_inv(q, v), m.T @ np.array(v), atol=1e-12 * scale)
    np.testing.assert_allclose(rot.x_axis(q), m[:, 0], atol=1e-12)
    np.testing.assert_allclose(rot.y_axis(q), m[:, 1], atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(quaternions, st.lists(vectors, min_size=3, max_size=6), st.lists(st.floats(0.1, 10.0), min_size=6, max_size=6))
def test_fit_rotation_recovers_a_rotation_of_points(q, points, weights) -> None:
    q = unit_quat(q)
    src = [p for p in points if np.linalg.norm(p) > 1e-3]
    dst = [rot.rotate(q, p) for p in src]
    fit = rot.fit_rotation(src, dst, weights[: len(src)], rot.IDENTITY)
    spread = np.linalg.svd(np.array(src).reshape(-1, 3), compute_uv=False) if src else np.zeros(1)
    if len(src) >= 2 and spread[1] > 1e-3 * spread[0]:  # not (nearly) on one line: the rotation is pinned
        assert rot.angle_between(fit, q) < 1e-6
    for a, b in zip(src, dst):
        if rot.angle_between(fit, q) < 1e-6:
            np.testing.assert_allclose(rot.rotate(fit, a), b, atol=1e-6 * (1.0 + np.linalg.norm(a)))


def test_fit_rotation_falls_back_when_points_lie_on_one_line() -> None:
    src = [(0.0, 1.0, 0.0), (0.0, 2.0, 0.0), (0.0, -1.0, 0.0)]
    dst = [rot.rotate(rot.axis_angle((1.0, 0.0, 0.0), 0.5), p) for p in src]
    fallback = (0.0, 0.0, 0.0, 1.0)
    assert rot.fit_rotation(src, dst, [1.0, 1.0, 1.0], fallback) == fallback
