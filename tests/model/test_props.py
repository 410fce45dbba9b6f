"""Props' shapes, placements and transforms (issue 52)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik3d.model.placement import Placement, Transform, quat_mul
from fabrik3d.model.props import SHAPES, Prop, prop_mesh, standing


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
