"""fabrik3d.batch.math against the scalar functions it mirrors, element by element.

Each batch result is compared with the scalar function called on that element's
floats, with the same branch taken: bit for bit where the functions are written to
give the scalar floats (all of them since atan2 calls math.atan2 and the ellipse's
root takes the scalar's Newton steps), within 1e-14 where a test says so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fabrik3d.constraints as fc
from fabrik3d import Cone, EllipticalCone, Hinge, Skeleton
from fabrik3d import rotations as rot
from fabrik3d.batch import limits as bl
from fabrik3d.batch import math as bm
from fabrik3d.solver.rig import rig

M = 3000
TOL = 1e-14


def cols(a: np.ndarray) -> tuple[np.ndarray, ...]:
    """(m, k) array -> tuple of k contiguous (m,) columns (a batch vector / quaternion)."""
    return tuple(np.ascontiguousarray(a[:, i], dtype=float) for i in range(a.shape[1]))


def rows(t: tuple, m: int | None = None) -> list[tuple[float, ...]]:
    """Batch tuple -> per-element tuples of Python floats (constants broadcast to ``m``)."""
    m = max(np.size(c) for c in t) if m is None else m
    return list(zip(*(np.broadcast_to(np.asarray(c, dtype=float), (m,)).tolist() for c in t)))


def assert_close(batch: tuple, scalar: list, tol: float = 0.0) -> None:
    """Batch tuple vs per-element scalar tuples: equal (tol 0) or within tol; all arrays (m,) float64."""
    assert all(isinstance(c, np.ndarray) and c.dtype == np.float64 and c.shape == (len(scalar),) for c in batch)
    got, want = np.stack(batch, axis=1), np.array(scalar, dtype=float).reshape(len(scalar), -1)
    bad = np.flatnonzero(np.any(np.abs(got - want) > tol, axis=1) | np.any(np.isnan(got) != np.isnan(want), axis=1))
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: {got[bad[0]].tolist()} != {want[bad[0]].tolist()}"


def directions(rng: np.random.Generator, m: int) -> np.ndarray:
    v = rng.normal(size=(m, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def unit3(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def near(d: np.ndarray, angles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors at the given angles (radians) from unit ``d`` ((3,) or (m, 3)), toward random sides."""
    side = directions(rng, len(angles))
    side = side - np.sum(side * d, axis=-1, keepdims=True) * d
    side /= np.linalg.norm(side, axis=1, keepdims=True)
    return np.cos(angles)[:, None] * d + np.sin(angles)[:, None] * side


# -- fabrik3d.rotations ----------------------------------------------------------------------------


def short_vectors(rng: np.random.Generator) -> np.ndarray:
    """Random vectors of lengths 1e-15..1e3 (many below TINY2's 1e-12), plus zeros and axes."""
    v = directions(rng, M) * 10.0 ** rng.uniform(-15, 3, (M, 1))
    extra = [[0, 0, 0], [-0.0, 0, 0], [1e-12, 0, 0], [0, 1e-12, 1e-30], [1e-13, 1e-13, 1e-13], [5e-13, 0, 0]]
    extra += [[1, 0, 0], [0, -1, 0], [0, 0, 2], [3, 4, 0], [1, 1, 1], [-1, -1, -1], [0, 1, 1], [1, 0, 1]]
    return np.vstack([v, extra])


def test_unit_and_unit_or_are_bit_identical() -> None:
    v = short_vectors(np.random.default_rng(1))
    u, ok = bm.unit(cols(v))
    want = [rot.unit(p) for p in rows(cols(v))]
    assert ok.dtype == bool and ok.tolist() == [w is not None for w in want]
    assert 0 < ok.sum() < len(v)
    assert_close(tuple(c[ok] for c in u), [w for w in want if w is not None])
    assert np.isfinite(np.stack(u)).all()
    fallback_batch = cols(directions(np.random.default_rng(2), len(v)))
    for fallback in ((0.0, 0.0, 1.0), fallback_batch):
        got = bm.unit_or(cols(v), fallback)
        assert_close(got, [rot.unit(p) or f for p, f in zip(rows(cols(v)), rows(fallback, len(v)))])


def swing_cases(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = directions(rng, M)
    b = directions(rng, M)
    h = directions(rng, M)
    # exactly equal, exactly opposite and nearly opposite (|a x b| around the 1e-8 threshold)
    b[:200] = a[:200]
    b[200:400] = -a[200:400]
    b[400:700] = -near(a[400:700], 10.0 ** rng.uniform(-10, -6, 300), rng)
    # half-turn axis parallel to a (then a's least aligned world axis is used), with ties of |a|
    h[200:300] = a[200:300] * rng.choice([-2.0, 1.0, 0.5], (100, 1))
    axes = np.array([[1, 0, 0], [0, 1, 0], [0, 0, -1], [0.6, 0.8, 0], [0, 0.6, 0.8], [1, 1, 1], [1, 1, 0], [0, 1, 1]])
    axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
    k = len(axes)
    a[700 : 700 + 2 * k] = np.vstack([axes, -axes])
    b[700 : 700 + 2 * k] = -a[700 : 700 + 2 * k]
    h[700 : 700 + 2 * k] = a[700 : 700 + 2 * k]
    return a, b, h


def test_swing_is_bit_identical_including_the_half_turns() -> None:
    a, b, h = swing_cases(np.random.default_rng(3))
    got = bm.swing(cols(a), cols(b), cols(h))
    want = [rot.swing(*args) for args in zip(rows(cols(a)), rows(cols(b)), rows(cols(h)))]
    assert_close(got, want)
    assert sum(w[3] == 0.0 for w in want) > 300  # the half-turn branch is exercised
    assert_close(bm.swing(*(cols(x[1000:]) for x in (a, b, h))), want[1000:])  # a batch without half turns
    # constant a (a rig's rest direction) and constant half-turn axis against a batch of b
    a0, h0 = (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)
    b[:50] = (0.0, -1.0, 0.0)
    got = bm.swing(a0, cols(b), h0)
    assert_close(got, [rot.swing(a0, p, h0) for p in rows(cols(b))])
    got = bm.swing(a0, cols(b), (0.0, -3.0, 0.0))  # parallel half-turn axis: a's perpendicular
    assert_close(got, [rot.swing(a0, p, (0.0, -3.0, 0.0)) for p in rows(cols(b))])


def test_normalize_axis_angle_and_twist_angle() -> None:
    rng = np.random.default_rng(4)
    q = rng.normal(size=(M, 4)) * 10.0 ** rng.uniform(-200, 3, (M, 1))
    q[:20] = 0.0
    q[20:40, 3] = -q[20:40, 3]
    assert_close(bm.normalize_quat(cols(q)), [rot.normalize_quat(p) for p in rows(cols(q))])

    axis = directions(rng, M)
    angle = rng.uniform(-4 * math.pi, 4 * math.pi, M)
    angle[:10] = (0.0, math.pi, -math.pi, 2 * math.pi, 1e-300, -0.0, 7.0, 1e-8, -1e-8, 100.0)
    want = [rot.axis_angle(p, t) for p, t in zip(rows(cols(axis)), angle.tolist())]
    assert_close(bm.axis_angle(cols(axis), angle), want, TOL)
    assert_close(bm.axis_angle(cols(axis), 0.7), [rot.axis_angle(p, 0.7) for p in rows(cols(axis))], TOL)

    # twist of unit quaternions about unit axes: random, pure swings (t = 0, w = 0: no twist),
    # half turns about the axis (w = 0: +-pi) and twists past pi (w < 0: wrapped)
    q = rng.normal(size=(M, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    perp = np.cross(axis[:100], directions(rng, 100))
    q[:100] = np.hstack([perp / np.linalg.norm(perp, axis=1, keepdims=True), np.zeros((100, 1))])
    q[100:150] = np.hstack([axis[100:150] * rng.choice([-1.0, 1.0], (50, 1)), np.zeros((50, 1))])
    q[150:200] = np.hstack([axis[150:200] * 1e-16, -np.ones((50, 1))])
    # around the 1e-15 guard: tiny t and w
    tiny = np.array([[5e-16, 5e-15], [-5e-16, 5e-16], [5e-16, -2e-15], [2e-15, 5e-16], [0.0, 5e-15], [-5e-16, -5e-16]])
    q[200:260] = np.hstack([axis[200:260] * np.tile(tiny[:, :1], (10, 1)), np.tile(tiny[:, 1:], (10, 1))])
    want = [rot.twist_angle(p, e) for p, e in zip(rows(cols(q)), rows(cols(axis)))]
    got = bm.twist_angle(cols(q), cols(axis))
    assert got.shape == (M,) and np.all((got > -math.pi) & (got <= math.pi))
    assert_close((got,), [(w,) for w in want], TOL)
    assert ((got == 0.0) == (np.array(want) == 0.0)).all()


def horn_cases(rng: np.random.Generator, k: int, m: int) -> tuple[list, list, np.ndarray]:
    """k source vectors (rig constants), m problems whose targets are rotated sources plus noise."""
    src = [tuple(rng.normal(size=3).tolist()) for _ in range(k)]
    q = rng.normal(size=(m, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    qt = cols(q)
    dst = []
    for s in src:
        r = rot.rotate(qt, s)
        dst.append(tuple(c + 0.05 * rng.normal(size=m) for c in r))
    return src, dst, q


@pytest.mark.parametrize("k", [2, 3, 4])
def test_fit_rotation_matches_the_scalar_horn_fit(k: int) -> None:
    rng = np.random.default_rng(5 + k)
    m = 1500
    src, dst, _ = horn_cases(rng, k, m)
    weights = rng.uniform(0.5, 2.0, k).tolist()
    fallback = cols(directions(rng, m) @ np.eye(3, 4))  # any batch quaternion, told apart from fits
    # collinear points (any turn about their line fits): the fallback, per problem
    line = rng.normal(size=3)
    for i in range(k):
        scale = (i + 1.0) * rng.uniform(0.5, 2.0, 100)
        for c in range(3):
            dst[i][c][:100] = scale * line[c]
    got = bm.fit_rotation(src, dst, weights, fallback)
    want = [
        rot.fit_rotation(
            src, [tuple(float(c[i]) for c in v) for v in dst], weights, tuple(float(f[i]) for f in fallback)
        )
        for i in range(m)
    ]
    assert_close(got, want)
    fell_back = np.stack(got, axis=1)[:, 3] == 0.0
    assert fell_back[:100].all() and not fell_back[100:].any()
    # batch sources too (a pose's own offsets), unit weights
    src_b = [tuple(c * 0.9 for c in v) for v in dst[::-1]]
    got = bm.fit_rotation(src_b, dst, [1.0] * k, fallback)
    want = [
        rot.fit_rotation(
            [tuple(float(c[i]) for c in v) for v in src_b],
            [tuple(float(c[i]) for c in v) for v in dst],
            [1.0] * k,
            tuple(float(f[i]) for f in fallback),
        )
        for i in range(m)
    ]
    assert_close(got, want)


def test_batched_eigh_equals_the_per_matrix_call_sign_included() -> None:
    rng = np.random.default_rng(9)
    a = rng.normal(size=(2000, 4, 4))
    n = a + np.swapaxes(a, 1, 2)
    n[:50] = np.diag([1.0, 1.0, 2.0, 2.0])  # repeated eigenvalues
    vals, vecs = np.linalg.eigh(n)
    for i in range(len(n)):
        v1, w1 = np.linalg.eigh(np.array(n[i].tolist()))
        assert np.array_equal(vals[i], v1) and np.array_equal(vecs[i], w1), i


# -- fabrik3d.constraints --------------------------------------------------------------------------


def test_float_mod_is_pythons_modulo_bit_for_bit() -> None:
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.uniform(-20, 20, M), [0.0, -0.0, 2 * math.pi, -2 * math.pi, 1e-300, -1e-300, -1e-17]])
    two_pi = 2.0 * math.pi
    got = np.mod(x, two_pi)
    want = np.array([v % two_pi for v in x.tolist()])
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


RANGES = [(-0.5, 2.0), (0.0, 0.0), (-math.pi, math.pi), (-1.5, 0.0), (-3.0, 3.0), (0.0, 0.1)]


@pytest.mark.parametrize("lo,hi", RANGES)
def test_clamp_angle_is_bit_identical(lo: float, hi: float) -> None:
    rng = np.random.default_rng(11)
    phi = rng.uniform(-math.pi, math.pi, M)
    before = rng.uniform(-math.pi, math.pi, M)
    ulp = np.array([lo, hi, lo, hi])
    phi[:8] = [lo, hi, np.nextafter(lo, -9), np.nextafter(hi, 9), lo + math.pi, hi - math.pi, -lo, -hi]
    before[:8] = [lo, hi, lo, hi, lo, hi, lo, hi]
    before[8:12] = ulp  # phi off the range only by rounding: delta == 0.0, the nearer bound
    phi[8:12] = np.nextafter(ulp, [-9, 9, -9, 9])
    before[12:20] = phi[12:20] + math.pi  # half a turn away: the +-pi tie of delta
    before[20:40] = rng.uniform(-20, 20, 20)  # outside [lo, hi]: clipped first
    has = rng.random(M) < 0.7
    has[:20] = True
    lists = phi.tolist(), before.tolist(), has.tolist()
    assert_close((bl.clamp_angle(phi, lo, hi),), [(fc.clamp_angle(p, lo, hi),) for p in lists[0]])
    want = [(fc.clamp_angle(p, lo, hi, b),) for p, b in zip(lists[0], lists[1])]
    assert_close((bl.clamp_angle(phi, lo, hi, before),), want)
    want = [(fc.clamp_angle(p, lo, hi, b if h else None),) for p, b, h in zip(*lists)]
    assert_close((bl.clamp_angle(phi, lo, hi, before, has),), want)


def bent_chain(constraint) -> tuple[Skeleton, fc.SwingLimit]:
    """A bent chain a-b-c-d whose joint b carries ``constraint``; returns its bound swing limit."""
    rest = [[0, 0, 0], [0.2, 1, 0.1], [0.5, 1.8, -0.3], [0.6, 2.9, 0]]
    sk = Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 2], rest, {"b": constraint})
    return sk, rig(sk).limits[1].swing


BONE = unit3([0.3, 0.8, -0.4])  # b -> c in world coordinates (the hinge axis must be perpendicular)


def project_scalar(limit, d: tuple, previous: tuple | None = None, has: np.ndarray | None = None) -> list:
    prev = rows(previous) if previous is not None else [None] * len(d[0])
    if has is not None:
        prev = [p if h else None for p, h in zip(prev, has.tolist())]
    return [limit.project(v, p) for v, p in zip(rows(d), prev)]


def cone_directions(limit, rng: np.random.Generator) -> np.ndarray:
    d0 = np.array(limit.d0)
    d = directions(rng, M)
    d[:50] = d0
    d[50:100] = -d0
    spread = np.concatenate([10.0 ** rng.uniform(-12, 0, 600), limit.max_rad + rng.normal(0, 1e-9, 200)])
    d[100:900] = near(d0, spread, rng)
    return d


@pytest.mark.parametrize("max_deg", [0.0, 0.5, 1.2, 30.0, 90.0, 150.0, 179.9])
def test_cone_projection_is_bit_identical(max_deg: float) -> None:
    _, limit = bent_chain(Cone(max_deg))
    d = cols(cone_directions(limit, np.random.default_rng(12)))
    got = bl.project(limit, d)
    want = project_scalar(limit, d)
    assert_close(got, want)
    # on the boundary: the projections projected again
    assert_close(bl.project(limit, got), project_scalar(limit, got))
    assert bm.changed(got, d).tolist() == [w != v for w, v in zip(want, rows(d))]


ELLIPSES = [
    EllipticalCone(10, 20, 30, 40, right_axis=(1, 0.3, 0.2)),
    EllipticalCone(25, 25, 25, 25),
    EllipticalCone(0, 20, 30, 0),
    EllipticalCone(15, 0, 0, 5),
    EllipticalCone(0, 0, 0, 0),
    EllipticalCone(1e-11, 1e-9, 40, 1e-11),  # semi-axes below 1e-12 rad count as 0
    EllipticalCone(170, 100, 179, 5, right_axis=(0, 0, 1)),
    EllipticalCone(0.5, 0.2, 0.3, 0.01),
]


def chart_direction(limit, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Directions of the chart points (u, v) (radians toward "right" and "up")."""
    d0, r, up = (np.array(w) for w in (limit.d0, limit.r, limit.up))
    t = np.hypot(u, v)[:, None]
    return np.cos(t) * d0 + np.sinc(t / np.pi) * (u[:, None] * r + v[:, None] * up)


def boundary_directions(limit, rng: np.random.Generator) -> np.ndarray:
    """Directions inside / outside the ellipse by margins (relative 5e-13 and 2e-12 of its 1e-12 tolerance;
    1e-9 and 3e-16 / 3e-15 of a zero semi-axis's 1e-15) far above rounding, so the branch is certain."""
    phi = rng.uniform(-math.pi, math.pi, 400)
    right, left, up, down = (a if a > 1e-12 else 0.0 for a in limit.axes)
    u = np.where(np.cos(phi) >= 0, right, left) * np.cos(phi)
    v = np.where(np.sin(phi) >= 0, up, down) * np.sin(phi)
    scale = np.sqrt(1.0 + np.tile([5e-13, -5e-13, 2e-12, -2e-12], 100))
    u, v = u * scale, v * scale
    # on a zero semi-axis's side: a segment; just off it sideways, and past its end
    off = np.tile([0.0, 3e-16, -3e-16, 3e-15, -3e-15], 20)
    seg = rng.uniform(0.0, 1.0, 100) * np.array([up, down, right, left]).repeat(25)
    seg[::7] *= 1 + 1e-9
    seg[1::7] = np.array([up, down, right, left]).repeat(25)[1::7] * (1 - 1e-9)
    sign = np.tile([1.0, -1.0], 50)
    u[:100] = np.where(np.arange(100) < 50, off, sign * seg)
    v[:100] = np.where(np.arange(100) < 50, sign * seg, off)
    return chart_direction(limit, u, v)


def ellipse_directions(limit, rng: np.random.Generator) -> np.ndarray:
    d0, r, up = (np.array(v) for v in (limit.d0, limit.r, limit.up))
    d = directions(rng, M)
    d[700:1100] = boundary_directions(limit, rng)
    d[:30] = d0
    d[30:60] = -d0
    d[60:90] = unit3(d0 + 1e-17 * r)  # rho below 1e-15
    d[90:120] = -d0 + 1e-17 * up
    # along the chart's axes (u or v exactly 0) and inside
    t = rng.uniform(0.01, 3.0, (300, 1))
    d[120:420] = np.cos(t) * d0 + np.sin(t) * np.vstack([r, -r, up, -up] * 75)
    d[420:700] = near(d0, rng.uniform(0.0, 0.05, 280), rng)
    return d


@pytest.mark.parametrize("cone", ELLIPSES, ids=lambda c: f"{c.left_deg:g}-{c.right_deg:g}-{c.up_deg:g}-{c.down_deg:g}")
def test_elliptical_cone_projection_matches(cone: EllipticalCone) -> None:
    _, limit = bent_chain(cone)
    d = cols(ellipse_directions(limit, np.random.default_rng(13)))
    got = bl.project(limit, d)
    want = project_scalar(limit, d)
    assert_close(got, want, TOL)
    if min((a for a in limit.axes if a > 0.0), default=1.0) > 1e-6:  # (below, a chart coordinate is rounding noise of
        # the unit vector and a projection moves it by less than an ulp: "left alone" is not readable)
        kept = [w == v for w, v in zip(want, rows(d))]
        assert (~bm.changed(got, d)).tolist() == kept  # the same directions are left alone
    again = bl.project(limit, got)  # on the boundary
    assert_close(again, project_scalar(limit, got), TOL)


def test_nearest_on_ellipse_matches() -> None:
    rng = np.random.default_rng(14)
    m = M
    a = rng.uniform(0.0, 3.0, m)
    b = rng.uniform(0.0, 3.0, m)
    y0 = rng.uniform(0.0, 3.0, m)
    y1 = rng.uniform(0.0, 3.0, m)
    b[:100] = a[:100]  # circles
    a[100:150], b[150:200] = 0.0, 0.0  # segments
    a[200:250], b[250:300] = 1e-13, 5e-13  # tiny semi-axes: 0
    y1[300:400] = rng.uniform(0, 1e-12, 100) * b[300:400]  # y1 counts as 0
    y0[400:450] = 0.0
    y1[450:500] = 0.0
    a[500:510], b[500:510], y0[500:510], y1[500:510] = 5.0, 5.0, 3.0, 4.0  # exactly on it: g == 0
    a[510:520], b[510:520], y0[510:520], y1[510:520] = 2.0, 1.0, 2.0, 0.0
    t = rng.uniform(0.0, math.pi / 2, 300)  # on the ellipse (many exactly: g == 0)
    y0[600:900], y1[600:900] = a[600:900] * np.cos(t), b[600:900] * np.sin(t)
    y1[900:1000] = b[900:1000] * 10.0 ** rng.uniform(-13, -10, 100)  # around y1's 1e-12 b threshold
    px, py = bl.nearest_on_ellipse(y0, y1, a, b)
    want = [fc.nearest_on_ellipse(*v) for v in zip(y0.tolist(), y1.tolist(), a.tolist(), b.tolist())]
    assert_close((px, py), want)  # (the same Newton steps: the same floats)
    wide, narrow = np.maximum(a, b), np.minimum(a, b)  # after the swap: (y0, y1) against (wide, narrow)
    on = narrow > 1e-12
    z0, z1 = np.where(a < b, y1, y0)[on] / wide[on], np.where(a < b, y0, y1)[on] / narrow[on]
    on[on] = (z0 * z0 + z1 * z1 - 1.0 == 0.0) & (z1 > 1e-12)
    assert on.sum() > 50 and np.array_equal(px[on], y0[on]) and np.array_equal(py[on], y1[on])


HINGES = [
    Hinge(np.cross(BONE, [0, 0, 1]), -30, 120),
    Hinge(np.cross(BONE, [1, 0, 0]), 0, 0),
    Hinge(np.cross(BONE, [0, 1, 0]), -180, 180),
    Hinge(np.cross([0, 0, 1], BONE), -90, 0),
    Hinge(np.cross(BONE, [1, 1, 1]), -170, 170),
]


@pytest.mark.parametrize("hinge", HINGES, ids=lambda h: f"{h.min_deg:g}..{h.max_deg:g}")
def test_hinge_projection_matches(hinge: Hinge) -> None:
    _, limit = bent_chain(hinge)
    rng = np.random.default_rng(15)
    axis, d0, b = (np.array(v) for v in (limit.a, limit.d0, limit.b))
    d = directions(rng, M)
    prev = directions(rng, M)
    # along the axis (no hinge angle: the previous one, or 0), also for previous
    d[:200] = axis * rng.choice([-1.0, 1.0], (200, 1)) + 1e-11 * d0
    prev[100:150] = -axis
    # exactly at the limits, just outside, and in the plane
    angles = np.repeat([limit.lo, limit.hi], 100) + np.tile(np.repeat([0.0, 1e-15, -1e-15, 1e-3], 25), 2)
    d[200:400] = np.cos(angles)[:, None] * d0 + np.sin(angles)[:, None] * b
    t = rng.uniform(-math.pi, math.pi, (400, 1))
    d[400:800] = np.cos(t) * d0 + np.sin(t) * b
    prev[800:1000] = np.cos(t[:200]) * d0 + np.sin(t[:200]) * b
    has = rng.random(M) < 0.6
    d, prev = cols(d), cols(prev)
    assert_close(bl.project(limit, d), project_scalar(limit, d), TOL)
    assert_close(bl.project(limit, d, prev), project_scalar(limit, d, prev), TOL)
    assert_close(bl.project(limit, d, prev, has), project_scalar(limit, d, prev, has), TOL)


def test_project_rejects_other_limits() -> None:
    with pytest.raises(TypeError, match="limit"):
        bl.project(fc.SwingLimit(), cols(np.eye(3)))


def test_results_are_finite_new_arrays_and_inputs_are_untouched() -> None:
    rng = np.random.default_rng(16)
    v = cols(short_vectors(rng)[:M])
    a, b, h = (cols(x) for x in swing_cases(rng))
    q = cols(np.vstack([np.zeros((10, 4)), rng.normal(size=(M - 10, 4))]))
    phi, before, has = rng.uniform(-7, 7, M), rng.uniform(-7, 7, M), rng.random(M) < 0.5
    src, dst, _ = horn_cases(rng, 3, M)
    inputs = [*v, *a, *b, *h, *q, phi, before, has, *(c for t in dst for c in t)]
    saved = [x.copy() for x in inputs]
    outs = [
        bm.unit(v)[0],
        bm.unit_or(v, (0.0, 1.0, 0.0)),
        bm.swing(a, b, h),
        bm.normalize_quat(q),
        bm.axis_angle(a, phi),
        (bm.twist_angle(q, a),),
        bm.fit_rotation(src, dst, [1.0, 2.0, 0.5], q),
        (bl.clamp_angle(phi, -1.0, 2.0, before, has),),
        bl.nearest_on_ellipse(np.abs(phi), np.abs(before), np.abs(v[0]), np.abs(v[1])),
    ]
    for cone in (Cone(0), Cone(45), *ELLIPSES, *HINGES):
        limit = bent_chain(cone)[1]
        outs += [bl.project(limit, b), bl.project(limit, b, a, has)]
    for out in outs:
        for c in out:
            assert c.dtype == np.float64 and c.shape == (M,) and np.isfinite(c).all()
            assert not any(np.shares_memory(c, x) for x in inputs)
    assert all(np.array_equal(x, y) for x, y in zip(inputs, saved))


def test_empty_batches() -> None:
    e = np.zeros(0)
    z3, z4 = (e, e, e), (e, e, e, e)
    outs = [
        bm.unit(z3)[0],
        bm.swing(z3, z3, (1.0, 0.0, 0.0)),
        bm.normalize_quat(z4),
        (bm.twist_angle(z4, (0.0, 1.0, 0.0)),),
        bm.fit_rotation([(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)], [z3, z3], [1.0, 1.0], z4),
        (bl.clamp_angle(e, -1.0, 1.0, e, e > 0),),
    ]
    for cone in (Cone(0), ELLIPSES[0], HINGES[0]):
        outs.append(bl.project(bent_chain(cone)[1], z3, z3))
    assert all(c.shape == (0,) for out in outs for c in out)
