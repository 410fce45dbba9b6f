"""A picture to take away (issue 31 item 5), without a browser: the app's ``export_picture`` renders the
view's scene off screen with real VTK. At the view's aspect ratio the picture is the view scaled (the
mannequin's silhouette and the joints' projections where the view puts them, within 2 px of the
picture); a lens moves the camera along its line of sight and keeps the framing at the focal point;
orthographic, light presets, a background colour or transparency; sticks, handles and the floor only
when asked (the sticks when there is no body); the view itself unchanged; bad settings named."""

from __future__ import annotations

import asyncio
import io
import math

import numpy as np
import pytest
from fabrik3d_web.view.picture import PictureSettings, picture_camera, picture_settings, render_picture
from PIL import Image
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkRenderingCore import vtkCoordinate, vtkRenderer, vtkRenderWindow, vtkWindowToImageFilter

W, H = 480, 360  # the view's size in these tests, pixels


@pytest.fixture(scope="module")
def app():
    from fabrik3d_web.app import WebApp
    from trame.app import get_server

    app = WebApp(server=get_server("fabrik3d-test-picture", client_type="vue3"))
    app.state.ready()
    app.scene.render_window.SetSize(W, H)
    app.controller.move_target("hand_l", app.controller.result.positions[app.controller.scene.skeleton.index("hand_l")]
                               + [-0.2, 0.35, 0.25])  # fmt: skip
    app._publish()
    return app


def picture(app, **settings) -> np.ndarray:
    """The app's picture as an array ``(h, w, 3 or 4)`` (through its trigger's own steps)."""
    s = picture_settings(settings)
    png = render_picture(app.pictures.picture_props(s), app.scene.renderer, s)
    return np.array(Image.open(io.BytesIO(png)))


def view_image(app) -> np.ndarray:
    window = app.scene.render_window
    window.Render()
    grab = vtkWindowToImageFilter()
    grab.SetInput(window)
    grab.ReadFrontBufferOff()
    grab.Update()
    image = grab.GetOutput()
    w, h, _ = image.GetDimensions()
    return vtk_to_numpy(image.GetPointData().GetScalars()).reshape(h, w, -1)[::-1]


def view_silhouette(app) -> np.ndarray:
    """The mannequin's pixels in the view itself, everything else hidden for a moment."""
    renderers = [app.scene.renderer, app.body.overlay]
    hidden = []
    for r in renderers:
        props = r.GetViewProps()
        for k in range(props.GetNumberOfItems()):
            p = props.GetItemAsObject(k)
            if p is not app.body.mannequin and p.GetVisibility():
                p.VisibilityOff()
                hidden.append(p)
    marker = app.scene.marker.GetEnabled()
    app.scene.marker.SetEnabled(0)
    r = app.scene.renderer
    was = (r.GetGradientBackground(), r.GetBackground(), r.GetUseFXAA())
    r.GradientBackgroundOff()
    r.SetBackground(0.0, 0.0, 0.0)
    # (without FXAA, as the view draws while moving: its smoothing bleeds faint pixels past the mesh's
    # edge, a pixel or more where a thin part stands beside the background, such as a hanging hand's)
    r.UseFXAAOff()
    try:
        return view_image(app).sum(axis=2) > 0
    finally:
        for p in hidden:
            p.VisibilityOn()
        app.scene.marker.SetEnabled(marker)
        r.SetGradientBackground(was[0])
        r.SetBackground(*was[1])
        r.SetUseFXAA(was[2])


def grown(mask: np.ndarray) -> np.ndarray:
    """``mask`` grown by one pixel (its 8 neighbours)."""
    out = mask.copy()
    padded = np.pad(mask, 1)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            out |= padded[dy : dy + mask.shape[0], dx : dx + mask.shape[1]]
    return out


def box(mask: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(mask)
    return np.array([cols.min(), rows.min(), cols.max() + 1, rows.max() + 1], dtype=float)


def project(camera, size: tuple[int, int], point: np.ndarray) -> np.ndarray:
    """``point``'s pixel (x right, y down) through ``camera`` in a picture of ``size``."""
    window = vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.SetSize(*size)
    renderer = vtkRenderer()
    window.AddRenderer(renderer)
    renderer.SetActiveCamera(camera)
    c = vtkCoordinate()
    c.SetCoordinateSystemToWorld()
    c.SetValue(*point)
    x, y = c.GetComputedDoubleDisplayValue(renderer)
    window.Finalize()
    return np.array([x, size[1] - y])


def test_at_the_views_aspect_the_picture_is_the_view_scaled(app) -> None:
    view = view_silhouette(app)
    big = picture(app, width=2 * W, height=2 * H, background="transparent")
    assert big.shape == (2 * H, 2 * W, 4)
    mask = big[..., 3] > 127
    # the silhouette's extremes (fingertips, the head, the feet) within 2 px of the picture's scale
    assert np.abs(box(mask) - 2 * box(view)).max() <= 2.0, (box(mask), 2 * box(view))
    # and every pixel of either silhouette within one view pixel (two of the picture's) of the other
    small = mask.reshape(H, 2, W, 2).mean(axis=(1, 3)) > 0.5
    assert not (small & ~grown(view)).any() and not (view & ~grown(small)).any()
    # every joint projects where the view projects it, scaled
    camera = picture_camera(app.scene.renderer.GetActiveCamera(), PictureSettings(width=2 * W, height=2 * H))
    sk, positions = app.controller.scene.skeleton, app.controller.result.positions
    for name in ("head", "hand_l", "hand_r", "toe_l", "pelvis"):
        p = positions[sk.index(name)]
        in_view = project(app.scene.renderer.GetActiveCamera(), (W, H), p)
        assert np.abs(project(camera, (2 * W, 2 * H), p) - 2 * in_view).max() <= 2.0, name


@pytest.mark.parametrize("lens", [24.0, 85.0])
def test_a_lens_keeps_the_framing_at_the_focal_point(app, lens: float) -> None:
    view = app.scene.renderer.GetActiveCamera()
    s = PictureSettings(width=W, height=H, lens_mm=lens)
    camera = picture_camera(view, s)
    assert camera.GetFocalPoint() == pytest.approx(view.GetFocalPoint())
    assert camera.GetDirectionOfProjection() == pytest.approx(view.GetDirectionOfProjection())
    assert camera.GetViewAngle() == pytest.approx(2 * math.degrees(math.atan(36.0 * H / W / 2 / lens)))
    half = camera.GetDistance() * math.tan(math.radians(camera.GetViewAngle()) / 2)
    assert half == pytest.approx(view.GetDistance() * math.tan(math.radians(view.GetViewAngle()) / 2))
    plain = box(picture(app, width=W, height=H, background="transparent")[..., 3] > 127)
    lensed = box(picture(app, width=W, height=H, lens_mm=lens, background="transparent")[..., 3] > 127)
    assert abs((lensed[3] - lensed[1]) / (plain[3] - plain[1]) - 1.0) < 0.2  # (about as tall)


def test_orthographic_lights_and_backgrounds(app) -> None:
    camera = picture_camera(app.scene.renderer.GetActiveCamera(), PictureSettings(projection="orthographic"))
    assert camera.GetParallelProjection()
    images = {light: picture(app, width=W, height=H, light=light) for light in ("studio", "front", "top", "side")}
    for a in images:
        for b in images:
            if a < b:
                assert np.abs(images[a].astype(int) - images[b]).mean() > 0.5, (a, b)  # each lights it its own way
    dark = picture(app, width=W, height=H, background="#203040", projection="orthographic")
    assert dark.shape == (H, W, 3) and tuple(dark[0, 0]) == (0x20, 0x30, 0x40)
    clear = picture(app, width=W, height=H, background="transparent")
    assert clear[0, 0, 3] == 0 and (clear[..., 3] == 255).sum() > 1000


def test_overlays_only_when_asked_and_the_view_unchanged(app) -> None:
    before = view_image(app)
    plain = picture(app, width=W, height=H, background="#000000")
    for overlay in ("floor", "handles"):
        more = picture(app, width=W, height=H, background="#000000", **{overlay: True})
        assert (more.sum(axis=2) > 0).sum() > (plain.sum(axis=2) > 0).sum() + 200, overlay
    s = picture_settings({})
    assert app.scene.bone_actor not in app.pictures.picture_props(s)  # (the sticks hide in the body)
    assert app.scene.bone_actor in app.pictures.picture_props(picture_settings({"sticks": True}))
    app.state.show_mannequin = False
    app.state.flush()
    try:
        assert app.scene.bone_actor in app.pictures.picture_props(s)  # (no body: the sticks are the figure)
    finally:
        app.state.show_mannequin = True
        app.state.flush()
    np.testing.assert_array_equal(view_image(app), before)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"width": 5000}, "picture width"),
        ({"height": "tall"}, "picture height"),
        ({"width": 12.5}, "picture width"),
        ({"lens_mm": 3}, "picture lens"),
        ({"lens_mm": float("nan")}, "picture lens"),
        ({"projection": "fisheye"}, "picture projection"),
        ({"light": "moon"}, "picture light"),
        ({"background": "red"}, "picture background"),
        ({"floor": "yes"}, "picture floor"),
    ],
)
def test_bad_settings_are_named_and_nothing_is_made(app, settings, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        picture_settings(settings)
    app.state.error_message = ""
    assert asyncio.run(app.pictures.export_picture(settings)) is None
    assert message in app.state.error_message
    asyncio.run(app.pictures.export_picture())  # (a call without the settings is named too)
    assert "export_picture" in app.state.error_message
