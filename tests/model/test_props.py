"""Props' shapes, placements and transforms (issue 52)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik3d.model.placement import Placement, Transform, quat_mul
from fabrik3d.model.props import SHAPES, Prop, nearest_on_surface, prop_mesh, standing


@pytest.mark.parametrize("shape", [s for s in SHAPES if s != "mesh"])
def test_each_shape_is_a_closed_surface_of_its_size_facing_out(shape: str) -> None:
    prop = Prop("p", shape)
    vertices, normals, triangles = prop_mesh(prop)
    np.testing.assert_allclose(vertices.max(axis=0) - vertices.min(axis=0), prop.size, rtol=0.02)
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-9)
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    face = np.cross(b - a, c - a)
    area = np.linalg.norm(face, axis=1)
    real = area > 1e-12  # (a sphere's rows meet at its poles)
    centroid = (a + b + c) / 3
    assert np.all(np.einsum("ij,ij->i", face[real], centroid[real]) > 0), "a triangle faces inward"
    # closed: the surface's signed volume is that of the solid (so no hole and no face twice)
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6
    w, h, d = prop.size
    expected = {
        "sphere": math.pi / 6 * w * h * d,
        "cylinder": math.pi / 4 * w * d * h,
        "capsule": math.pi * (w / 2) ** 2 * (h - w) + math.pi / 6 * w**3,
    }.get(shape, w * h * d)
    assert volume == pytest.approx(expected, rel=0.05)


def test_a_standing_prop_rests_on_the_floor() -> None:
    for shape in ("box", "block", "sphere", "cylinder", "wall"):
        prop = standing("p", shape, 0.5, -0.2, floor=0.1, transform=Transform(scale=2.0))
        vertices = prop.transform.apply(prop_mesh(prop)[0])
        assert vertices[:, 1].min() == pytest.approx(0.1, abs=1e-9)
    assert standing("b", "block").transform.position[1] == pytest.approx(0.225)


quats = st.tuples(*[st.floats(-1, 1)] * 4).filter(lambda q: sum(x * x for x in q) > 0.01)
points = st.tuples(*[st.floats(-100, 100)] * 3)


@given(points, quats, st.floats(0.1, 10), points, quats, st.floats(0.1, 10), points)
@settings(max_examples=200, deadline=None)
def test_transforms_compose_and_invert(p1, q1, s1, p2, q2, s2, x) -> None:  # type: ignore[no-untyped-def]
    a, b = Transform(p1, q1, s1), Transform(p2, q2, s2)
    np.testing.assert_allclose(a.then(b).apply(x), a.apply(b.apply(x)), atol=1e-6 * (1 + s1 * s2) * 200)
    np.testing.assert_allclose(a.inverse().apply(a.apply(x)), x, atol=1e-6 * (1 + s1 + 1 / s1) * 200)
    np.testing.assert_allclose(np.abs(quat_mul(a.inverse().rotation, a.rotation)[3]), 1.0, atol=1e-9)


@given(points, st.floats(-720, 720), points)
@settings(max_examples=200, deadline=None)
def test_a_placement_puts_points_in_the_world_and_back(p, facing, x) -> None:  # type: ignore[no-untyped-def]
    place = Placement(p, facing)
    np.testing.assert_allclose(place.to_local(place.to_world(x)), x, atol=1e-9 * 300)
    turned = place.to_world(np.array([0.0, 0.0, 1.0])) - place.position  # +Z turns toward +X by `facing`
    np.testing.assert_allclose(turned, [math.sin(math.radians(facing)), 0.0, math.cos(math.radians(facing))], atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"shape": "teapot"}, "shape: expected one of"),
        ({"size": [1, -1, 1]}, "size: expected three extents"),
        ({"size": [1, 1e6, 1]}, "size: expected three extents"),
        ({"colour": [1, 2, 0]}, "colour: expected three values in 0..1"),
        ({"shape": "mesh"}, "file: a 'mesh' prop names"),
        ({"file": "x.glb"}, "file: a 'mesh' prop names"),
        ({"shape": "mesh", "file": "x.obj"}, "file: expected a .glb or .gltf"),
        ({"transform": "here"}, "transform: expected a Transform"),
    ],
)
def test_a_bad_prop_is_refused_by_name(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Prop("p", **kwargs)


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, "a\nb", 3])
def test_a_bad_name_is_refused(name: object) -> None:
    with pytest.raises(ValueError, match="name: expected a name of 1-64 printable characters"):
        Prop(name)  # type: ignore[arg-type]


def test_a_mesh_prop_is_drawn_as_its_bounding_box() -> None:
    prop = Prop("statue", "mesh", (0.5, 1.8, 0.4), file="statue.glb")
    vertices, _, _ = prop_mesh(prop)
    np.testing.assert_allclose(vertices.max(axis=0) - vertices.min(axis=0), [0.5, 1.8, 0.4])
    np.testing.assert_array_equal(vertices, prop_mesh(Prop("box", "box", (0.5, 1.8, 0.4)))[0])


def _brute_nearest(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, n: int = 120) -> float:
    """The distance from ``p`` to a dense grid of the triangle's points (barycentric), its edges included."""
    u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    keep = u + v <= 1.0
    u, v = u[keep], v[keep]
    pts = a + u[:, None] * (b - a) + v[:, None] * (c - a)
    return float(np.linalg.norm(pts - p, axis=1).min())


coords = st.floats(-1.0, 1.0, allow_nan=False)
vec = st.tuples(coords, coords, coords).map(np.array)


@settings(max_examples=60, deadline=None)
@given(vec, vec, vec, vec)
def test_the_nearest_point_of_a_triangle_is_on_it_and_nearest(a, b, c, p) -> None:  # type: ignore[no-untyped-def]
    """Against a dense grid of the triangle's points: never farther than the grid's nearest (within its
    spacing), never nearer than any point of the triangle can be, and on the triangle itself."""
    got = nearest_on_surface(p, np.stack([a, b, c]), np.array([[0, 1, 2]]))
    brute = _brute_nearest(p, a, b, c)
    spacing = 2.0 * max(np.linalg.norm(b - a), np.linalg.norm(c - a), np.linalg.norm(c - b)) / 119
    assert np.linalg.norm(got - p) <= brute + 1e-9
    assert np.linalg.norm(got - p) >= brute - spacing
    assert _brute_nearest(got, a, b, c, 200) <= spacing  # (on the triangle)


@pytest.mark.parametrize("shape", ["sphere", "cylinder", "capsule", "box"])
def test_the_nearest_point_of_a_shape_is_on_its_own_surface_not_its_box(shape: str) -> None:
    """A point beside a round shape's box corner lands on the round surface (a sphere's radius away from
    its centre), not on the box; a box's stays on the box's face."""
    prop = Prop("p", shape, size=(0.4, 0.4, 0.4))
    vertices, _, triangles = prop_mesh(prop, 48)
    corner = np.array([0.5, 0.5, 0.5])
    got = nearest_on_surface(corner, vertices, triangles)
    if shape == "sphere":
        assert abs(np.linalg.norm(got) - 0.2) <= 0.002  # (the faceted sphere: within its facets' depth)
        assert np.allclose(got / np.linalg.norm(got), corner / np.linalg.norm(corner), atol=0.07)  # (a facet apart)
    elif shape == "box":
        assert np.allclose(got, [0.2, 0.2, 0.2])
    else:
        assert np.linalg.norm(got) < np.linalg.norm([0.2, 0.2, 0.2]) - 0.02  # (inside the box's corner)
    inside = nearest_on_surface([0.0, 0.0, 0.01], vertices, triangles)  # (from within: out)
    assert np.linalg.norm(inside) > 0.1


def test_nearest_on_surface_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="point"):
        nearest_on_surface([0.0, float("nan"), 0.0], np.zeros((3, 3)), np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match="triangles: none"):
        nearest_on_surface([0.0, 0.0, 0.0], np.zeros((3, 3)), np.zeros((0, 3), int))
