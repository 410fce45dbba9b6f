"""Control images (issue 54, ``fabrik3d_web.view.passes``), rendered off screen with real VTK: depth (a hand
reaching toward the camera brighter than the chest, a figure 1 m behind darker, the background 0), normals in
ControlNet 1.1's normal-BAE convention (red left, green up, blue toward the viewer: a sphere, the mannequin's
head), the outline on the silhouette, OpenPose from the same camera, the files and the zip, bad input."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from fabrik3d_web.view import pass_images, passes
from fabrik3d_web.view.pass_render import PassRenderer, Surface, pixels, surfaces_of
from PIL import Image
from vtkmodules.vtkFiltersSources import vtkSphereSource
from vtkmodules.vtkRenderingCore import vtkActor, vtkCamera, vtkPolyDataMapper

import fabrik3d
from fabrik3d.model import presets
from fabrik3d.model.workspace import skeleton_size

N = 384  # the pictures' side in these tests, pixels


@pytest.fixture(scope="module")
def body():
    return presets.get("humanoid")


@pytest.fixture(scope="module")
def reach(body):
    """The left hand reaching 45 cm in front of the chest, toward a camera in front (+z)."""
    chest = body.rest_positions[body.index("chest")]
    feet = {n: body.rest_positions[body.index(n)] for n in ("toe_l", "toe_r")}
    return fabrik3d.solve(body, {"hand_l": chest + np.array([0.12, 0.0, 0.45]), **feet})


def front_camera(points: np.ndarray, body) -> vtkCamera:
    return passes.framed_camera(points, skeleton_size(body), "front", N, N)


def at(image: np.ndarray, xy: np.ndarray, r: int = 2) -> np.ndarray:
    x, y = (int(v) for v in xy)
    return image[y - r : y + r + 1, x - r : x + r + 1]


def test_depth_near_bright_far_dark_background_zero(body, reach) -> None:
    behind = passes.Figure(body, reach.positions + np.array([0.9, 0.0, -1.0]), reach.rotations)  # (1 m behind, aside)
    front = passes.Figure.of(body, reach)
    camera = front_camera(np.vstack([front.positions, behind.positions]), body)
    out = passes.render_figures([front, behind], passes=["depth"], size=N, camera=camera)
    assert out.normal is None and out.outline is None and out.openpose is None
    depth = out.depth
    assert depth.shape == (N, N) and depth.dtype == np.float32
    i = body.index
    hand, chest = pixels(camera, N, N, reach.positions[[i("hand_l"), i("chest")]])
    far_chest = pixels(camera, N, N, behind.positions[[i("chest")]])[0]
    hand_v, chest_v, far_v = at(depth, hand).max(), at(depth, chest).mean(), at(depth, far_chest).mean()
    assert hand_v > chest_v + 0.1, (hand_v, chest_v)
    assert chest_v > far_v + 0.2 > 0.2, (chest_v, far_v)
    assert depth.max() == pytest.approx(1.0) and depth[depth > 0].min() == pytest.approx(pass_images.DEPTH_FLOOR)
    assert depth[0, 0] == depth[-1, -1] == 0.0  # (the background)
    eight, sixteen = pass_images.depth_levels(depth, 8), pass_images.depth_levels(depth, 16)
    assert eight.dtype == np.uint8 and sixteen.dtype == np.uint16 and eight.max() == 255 and sixteen.max() == 65535
    png16 = np.array(Image.open(io.BytesIO(pass_images.png_bytes(sixteen))))
    np.testing.assert_array_equal(png16.astype(np.uint16), sixteen)  # (16 bits kept, rows from the top)


def test_perspective_depth_is_inverse_depth_and_orthographic_linear() -> None:
    zb = np.array([[0.0, 0.5, 1.0]], dtype=np.float32)
    near, far = 1.0, 3.0
    np.testing.assert_allclose(pass_images.view_depth(zb, near, far, True)[0, :2], [1.0, 2.0])
    persp = pass_images.view_depth(zb, near, far, False)
    assert persp[0, 0] == pytest.approx(1.0) and np.isinf(persp[0, 2])
    d = np.array([[1.0, 2.0, 4.0, np.inf]])
    np.testing.assert_allclose(
        pass_images.depth_image(d, False)[0], [1.0, 0.1 + 0.9 * (1 / 2 - 1 / 4) / (1 - 1 / 4), 0.1, 0]
    )
    np.testing.assert_allclose(pass_images.depth_image(d, True)[0], [1.0, 0.1 + 0.9 * 2 / 3, 0.1, 0], rtol=1e-6)


def sphere_surfaces() -> list[Surface]:
    source = vtkSphereSource()
    source.SetThetaResolution(64)
    source.SetPhiResolution(64)
    source.SetRadius(1.0)
    mapper = vtkPolyDataMapper()
    mapper.SetInputConnection(source.GetOutputPort())
    actor = vtkActor()
    actor.SetMapper(mapper)
    actor.SetPosition(0.5, 0.0, 0.0)  # (placed by its matrix)
    mapper.Update()
    return surfaces_of([actor])


@pytest.mark.parametrize("parallel", [True, False])
def test_normals_of_a_sphere_red_left_green_up_blue_front(parallel: bool) -> None:
    camera = vtkCamera()
    camera.SetFocalPoint(0.5, 0.0, 0.0)
    camera.SetPosition(0.5, 0.0, 5.0)
    camera.SetViewUp(0.0, 1.0, 0.0)
    camera.SetParallelProjection(parallel)
    camera.SetParallelScale(1.25)
    renderer = PassRenderer(N, N)
    try:
        out = passes.compute(renderer, sphere_surfaces(), [], camera, ["normal"])
    finally:
        renderer.close()
    rgb = out.normal.astype(int)
    assert tuple(rgb[0, 0]) == pass_images.NORMAL_BACKGROUND
    mask = np.any(rgb != pass_images.NORMAL_BACKGROUND, axis=2)
    rows, cols = np.nonzero(mask)
    cy, cx = N // 2, N // 2
    left = cols[rows == cy].min() + 2
    right = cols[rows == cy].max() - 2
    top = rows[cols == cx].min() + 2
    bottom = rows[cols == cx].max() - 2
    assert abs(rgb[cy, cx] - [127, 127, 255]).max() <= 3  # facing the camera: blue
    assert rgb[cy, left, 0] > 220 and abs(rgb[cy, left, 1] - 127) < 12  # pointing left: red
    assert rgb[cy, right, 0] < 35 and abs(rgb[cy, right, 1] - 127) < 12
    assert rgb[top, cx, 1] > 220 and abs(rgb[top, cx, 0] - 127) < 12  # pointing up: green
    assert rgb[bottom, cx, 1] < 35
    # every normal is a unit vector facing the camera, as coded (red = -x, green = y, blue = z)
    n = pass_images.eye_normals(out.normal)[mask]
    assert (n[:, 2] > -0.05).all()
    np.testing.assert_allclose(pass_images.normal_colours(np.array([[-1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])),
                               [[255, 127, 127], [127, 255, 127], [127, 127, 255]])  # fmt: skip


def test_normals_on_the_mannequins_head_left_edge_points_left_top_points_up(body, reach) -> None:
    camera = front_camera(reach.positions, body)
    out = passes.render_passes(body, reach, passes=["normal", "outline"], size=N, camera=camera)
    rgb = out.normal.astype(int)
    head, neck = pixels(camera, N, N, reach.positions[[body.index("head"), body.index("neck")]]).astype(int)
    x, y = (head + neck) // 2  # (the head joint is the top of the head, the neck its base: its middle)
    mask = np.any(rgb != pass_images.NORMAL_BACKGROUND, axis=2)
    top = np.nonzero(mask[:, x])[0].min() + 1
    row = np.nonzero(mask[y])[0]
    row = row[np.abs(row - x) < N // 10]  # (the head's own pixels in its row)
    left, right = row.min() + 1, row.max() - 1
    assert rgb[y, left, 0] > 200, rgb[y, left]  # the left edge's normal points left (red)
    assert rgb[y, right, 0] < 60, rgb[y, right]
    assert rgb[top, x, 1] > 200, rgb[top, x]  # the top's points up (green)
    # the outline lies on the silhouette: the head's edges, nothing on the background far from the body
    outline = out.outline
    assert outline.dtype == np.uint8 and set(np.unique(outline)) <= {0, 255}
    assert at(outline, (left, y)).max() == 255 and at(outline, (x, top)).max() == 255
    silhouette = mask & ~np.pad(mask, 1)[2:, 1:-1] | mask & ~np.pad(mask, 1)[:-2, 1:-1]
    on = outline[silhouette] == 255
    assert on.mean() > 0.9, on.mean()
    assert outline[~mask].max() == 0 or outline[~mask].mean() < 0.01
    width = pass_images.line_width(N, N)
    assert width == 1 and pass_images.line_width(512, 512) == 2 and pass_images.line_width(2048, 1024) == 3


def test_openpose_pass_matches_the_same_camera(body, reach) -> None:
    pytest.importorskip("fabrik3d.pictures")
    camera = front_camera(reach.positions, body)
    out = passes.render_passes(body, reach, passes=["openpose", "depth"], size=N, camera=camera)
    assert out.openpose.shape == (N, N, 3) and out.openpose.dtype == np.uint8 and out.openpose.any()
    person = out.keypoints["people"]
    assert len(person) == 1 and out.keypoints["canvas_width"] == N == out.keypoints["canvas_height"]
    wrist = np.reshape(person[0]["pose_keypoints_2d"], (-1, 3))[7]  # (COCO 7: the left wrist)
    expected = pixels(camera, N, N, reach.positions[[body.index("wrist_l")]])[0]
    assert np.linalg.norm(wrist[:2] - expected) < 1, (wrist, expected)
    # the camera handed to fabrik3d.pictures projects every joint where VTK's does
    from fabrik3d.pictures import project

    for view in ("front", "perspective"):
        cam = passes.framed_camera(reach.positions, skeleton_size(body), view, 300, 200)
        xy, _ = project(passes.pictures_camera(cam, 300, 200), reach.positions)
        np.testing.assert_allclose(xy, pixels(cam, 300, 200, reach.positions), atol=1e-3)


def test_files_and_zip(body, reach) -> None:
    out = passes.render_passes(body, reach, passes="depth,normal,outline", size=(160, 96))
    files = out.files(depth_bits=16)
    assert set(files) == {"depth.png", "normal.png", "outline.png"}
    depth = Image.open(io.BytesIO(files["depth.png"]))
    assert depth.size == (160, 96) and depth.mode.startswith("I")
    assert Image.open(io.BytesIO(files["normal.png"])).mode == "RGB"
    assert Image.open(io.BytesIO(files["outline.png"])).mode == "L"
    with zipfile.ZipFile(io.BytesIO(out.zip("pose"))) as archive:
        assert sorted(archive.namelist()) == ["pose_depth.png", "pose_normal.png", "pose_outline.png"]
    json.dumps(out.keypoints)  # (None: no openpose asked)


def test_the_passes_of_the_web_view_props(body, reach) -> None:
    """``passes_job`` takes the Picture panel's inputs: the view's props, its renderer and the settings."""
    from fabrik3d_web.view.picture import picture_settings
    from vtkmodules.vtkRenderingCore import vtkRenderer

    view = vtkRenderer()
    view.SetActiveCamera(front_camera(reach.positions, body))
    sphere = sphere_surfaces()[0].actor  # (any actor with a mesh: the body's, as shown)
    settings = picture_settings({"width": 200, "height": 100})
    job = passes.passes_job([sphere], view, settings, ["depth", "normal"])
    out = job()
    assert out.depth.shape == (100, 200) and out.normal.shape == (100, 200, 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: passes.check_passes("depth,colour"), "unknown pass 'colour'"),
        (lambda: passes.check_passes([]), "got none"),
        (lambda: passes.check_size(5000), "size width: .* 16 to 4096, got 5000"),
        (lambda: passes.check_size((512, 0)), "size height"),
        (lambda: passes.check_size((float("nan"), 512)), "got nan"),
        (lambda: passes.framed_camera(np.zeros((2, 3)), 1.0, "back", 64, 64), "view: expected one of"),
        (lambda: pass_images.depth_levels(np.zeros((2, 2)), 12), "depth bits"),
    ],
)
def test_bad_input_is_named(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_the_cli_checks_agree_with_the_web_package() -> None:
    from fabrik3d_web.view import picture

    from fabrik3d import cli_render

    assert cli_render.PASSES == passes.PASSES
    assert (cli_render.MIN_SIDE, cli_render.MAX_SIDE) == (picture.MIN_SIDE, picture.MAX_SIDE)
    assert set(cli_render.VIEWS) == set(passes.VIEWS)


def test_a_characters_meshes_replace_the_mannequin(tmp_path) -> None:
    from helpers.character_asset import write_character

    from fabrik3d.io.character import load_character

    model = load_character(write_character(tmp_path, "hero", "mixamo", armature=True))
    sk = model.skeleton
    pose = fabrik3d.solve(sk, {})
    figure = passes.Figure(sk, pose.positions, pose.rotations, model)
    out = passes.render_figures([figure], passes=["depth", "normal", "outline"], size=128)
    body = out.depth > 0
    assert 0.03 < body.mean() < 0.6
    coloured = np.any(out.normal != pass_images.NORMAL_BACKGROUND, axis=2)  # (a face toward the camera is not)
    assert not (coloured & ~body).any() and coloured[body].mean() > 0.9
    assert out.outline[body].any()
    mannequin = passes.render_figures([passes.Figure(sk, pose.positions, pose.rotations)], passes=["depth"], size=128)
    assert not np.array_equal(mannequin.depth > 0, body)  # (the character's own mesh, not the mannequin)
