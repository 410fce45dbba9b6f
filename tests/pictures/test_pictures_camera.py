"""``fabrik3d.pictures.Camera`` and ``project``: VTK's projection, to 0.05 px, and the camera's checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik3d.pictures import Camera, project

vtk_core = pytest.importorskip("vtkmodules.vtkRenderingCore")


class VtkView:
    """One off-screen renderer and window, set to a camera, projecting points as VTK does."""

    def __init__(self) -> None:
        self.renderer = vtk_core.vtkRenderer()
        self.window = vtk_core.vtkRenderWindow()
        self.window.SetOffScreenRendering(1)
        self.window.AddRenderer(self.renderer)

    def project(self, camera: Camera, points: np.ndarray) -> np.ndarray:
        self.window.SetSize(camera.width, camera.height)
        c = self.renderer.GetActiveCamera()
        c.SetPosition(*camera.position)
        c.SetFocalPoint(*camera.focal_point)
        c.SetViewUp(*camera.view_up)
        c.SetViewAngle(camera.view_angle)
        c.SetParallelProjection(camera.parallel)
        c.SetParallelScale(camera.parallel_scale)
        out = []
        for p in points:
            self.renderer.SetWorldPoint(*p, 1.0)
            self.renderer.WorldToDisplay()
            x, y, _ = self.renderer.GetDisplayPoint()
            out.append((x, camera.height - y))  # (y down from the top)
        return np.array(out)


@pytest.fixture(scope="module")
def vtk_view() -> VtkView:
    return VtkView()


CAMERAS = [
    Camera((0.0, 1.0, 3.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0)),
    Camera((0.4, 1.6, 2.5), (0.0, 1.0, 0.0), (0.2, 1.0, 0.3), view_angle=50.0, width=768, height=432),
    Camera((-3.0, 0.5, -1.0), (0.1, 0.9, 0.2), (0.0, 1.0, 0.0), view_angle=12.0, width=300, height=900),
    Camera((0.0, 1.0, 3.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=1.1),
    Camera((2.0, 3.0, 2.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), parallel=True, parallel_scale=0.4, width=640, height=360),
]


@pytest.mark.parametrize("camera", CAMERAS, ids=range(len(CAMERAS)))
def test_project_equals_vtks_world_to_display(vtk_view: VtkView, camera: Camera) -> None:
    points = np.random.default_rng(7).uniform(-0.8, 0.8, (40, 3)) + np.array([0.0, 1.0, 0.0])
    pixels, depth = project(camera, points)
    assert np.abs(pixels - vtk_view.project(camera, points)).max() < 0.05
    eye, focal = np.array(camera.position), np.array(camera.focal_point)
    d = (focal - eye) / np.linalg.norm(focal - eye)
    np.testing.assert_allclose(depth, (points - eye) @ d, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    eye=st.tuples(*[st.floats(-5, 5)] * 3),
    target=st.tuples(*[st.floats(-1, 1)] * 3),
    angle=st.floats(5.0, 120.0),
    parallel=st.booleans(),
    scale=st.floats(0.1, 5.0),
    width=st.integers(16, 2048),
    height=st.integers(16, 2048),
)
def test_project_equals_vtk_for_any_camera(
    vtk_view: VtkView, eye, target, angle, parallel, scale, width, height
) -> None:
    eye, target = np.array(eye), np.array(target)
    if np.linalg.norm(eye - target) < 0.5 or abs((eye - target)[1]) > 0.99 * np.linalg.norm(eye - target):
        return  # (the view up, +Y, would be along the view)
    camera = Camera(tuple(eye), tuple(target), (0.0, 1.0, 0.0), view_angle=angle, parallel=parallel,
                    parallel_scale=scale, width=width, height=height)  # fmt: skip
    points = target + np.random.default_rng(1).uniform(-0.3, 0.3, (6, 3))
    pixels, depth = project(camera, points)
    ahead = depth > 0.05 * np.linalg.norm(eye - target)
    mine, theirs = pixels[ahead], vtk_view.project(camera, points[ahead])
    # (0.05 px, or its relative share where VTK's own float rounding of far-off points grows)
    assert np.all(np.abs(mine - theirs) <= np.maximum(0.05, 1e-9 * np.abs(theirs)))


def test_pixel_centres_the_picture_centre_and_the_corners() -> None:
    camera = Camera((0.0, 0.0, 5.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), parallel=True, parallel_scale=2.0,
                    width=400, height=200)  # fmt: skip
    pixels, depth = project(camera, [[0.0, 0.0, 0.0], [-4.0, 2.0, 1.0], [4.0, -2.0, 0.0]])
    np.testing.assert_allclose(pixels, [[200.0, 100.0], [0.0, 0.0], [400.0, 200.0]], atol=1e-9)
    np.testing.assert_allclose(depth, [5.0, 4.0, 5.0])


def test_points_behind_a_perspective_eye_have_no_pixel() -> None:
    camera = Camera((0.0, 0.0, 5.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    pixels, depth = project(camera, [[0.0, 0.0, 6.0], [0.0, 0.0, 5.0], [0.0, 0.0, 4.0]])
    assert np.isnan(pixels[:2]).all() and np.isfinite(pixels[2]).all()
    np.testing.assert_allclose(depth, [-1.0, 0.0, 1.0])


GOOD = {"position": (0.0, 1.0, 3.0), "focal_point": (0.0, 1.0, 0.0), "view_up": (0.0, 1.0, 0.0)}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"width": 4097}, "width"),
        ({"width": 15}, "width"),
        ({"height": 0}, "height"),
        ({"height": 512.0}, "height"),
        ({"width": True}, "width"),
        ({"position": (0.0, math.nan, 3.0)}, "position"),
        ({"position": (0.0, 1.0)}, "position"),
        ({"focal_point": (0.0, 1.0, 3.0)}, "focal_point"),
        ({"focal_point": (0.0, math.inf, 0.0)}, "focal_point"),
        ({"view_up": (0.0, 0.0, 2.0)}, "view_up"),
        ({"view_up": (0.0, 0.0, 0.0)}, "view_up"),
        ({"view_angle": 0.0}, "view_angle"),
        ({"view_angle": 180.0}, "view_angle"),
        ({"view_angle": math.nan}, "view_angle"),
        ({"parallel_scale": 0.0}, "parallel_scale"),
        ({"parallel_scale": -1.0}, "parallel_scale"),
        ({"parallel": "yes"}, "parallel"),
    ],
)
def test_a_bad_camera_is_a_one_line_error_naming_the_argument(change: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named) as info:
        Camera(**{**GOOD, **change})
    assert "\n" not in str(info.value)


def test_bad_arguments_of_project() -> None:
    camera = Camera(**GOOD)
    for bad, named in ((np.zeros((3, 2)), "points"), ([[0.0, math.nan, 0.0]], "points"), ("abc", "points")):
        with pytest.raises(ValueError, match=named):
            project(camera, bad)
    with pytest.raises(ValueError, match="camera"):
        project({"position": (0, 0, 1)}, np.zeros((1, 3)))  # type: ignore[arg-type]


def test_the_camera_is_frozen_and_normalised() -> None:
    camera = Camera(np.array([0, 1, 3]), [0, 1, 0], (0, 2, 0), view_angle=40, width=np.int64(600))
    assert camera.position == (0.0, 1.0, 3.0) and camera.view_up == (0.0, 2.0, 0.0)
    assert isinstance(camera.width, int) and camera.view_angle == 40.0
    with pytest.raises(AttributeError):
        camera.width = 10  # type: ignore[misc]
