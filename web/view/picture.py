"""A picture to take away: the 3D view rendered as a PNG at a chosen size, with a lens, a projection,
a light and a background of the user's choosing (issue 31 item 5).

The picture is rendered off screen in its own render window and renderer, which show copies of the
scene's actors taken at once (``frozen``: their geometry, colours and textures; the view is left as
it was, and a drag meanwhile changes neither): the mannequin or the character's mesh, and only if
asked the sticks (always when the skeleton has no body to show), the handles and the floor grid.
The copies share nothing with the view, so the render may run on a worker thread (VTK lets go of
Python's lock while it renders): ``picture_job`` takes the copies and returns the render to run.
Memory: a transparent picture takes multisampling (``MSAA_SAMPLES``) up to ``MSAA_PIXELS`` pixels;
larger, the samples would cost over a gigabyte at 4096 x 4096, so it renders without them (at that
size an edge's steps are a quarter of a pixel of a 1024 picture).

The picture's camera is the view's: the same position, focal point and view up, so that at the
view's aspect ratio every point lands where the view puts it, scaled to the picture's size. A lens
(``lens_mm``: a focal length on a 36 mm wide sensor fitted to the picture's longer side, as Blender's
cameras) keeps what the view frames at its focal point: the camera moves along its line of sight
(a longer lens from farther away, flatter; a shorter one nearer, with more perspective). An
orthographic picture frames the same height at the focal point.

``picture_settings(values)`` checks the page's values (one-line errors naming the field);
``picture_job(props, view, settings)`` copies what the picture shows and returns a function making
the PNG's bytes; ``render_picture(props, view, settings)`` runs it at once.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkRenderingCore import (
    vtkActor,
    vtkCamera,
    vtkLight,
    vtkLightKit,
    vtkProp,
    vtkPropCollection,
    vtkProperty,
    vtkRenderer,
    vtkRenderWindow,
    vtkTexture,
    vtkWindowToImageFilter,
)

from fabrik3d import checks

# A picture's sides, pixels.
MIN_SIDE, MAX_SIDE = 16, 4096
# A transparent picture's multisamples (an opaque one smooths its edges with FXAA), up to this many
# pixels: 8 samples of 4096 x 4096 took 1.1 GB more, none 0.74 GB.
MSAA_SAMPLES = 8
MSAA_PIXELS = 2048 * 2048
# The picture worker's niceness (Linux, ``picture_worker``): its renders, and the software rasterizer's
# threads they start (which inherit it), leave the cores to the event loop's drags and still images.
WORKER_NICENESS = 10
# The lenses offered, millimetres (0: the view's own); the sensor's width fitted to the longer side.
MIN_LENS_MM, MAX_LENS_MM = 8.0, 600.0
SENSOR_MM = 36.0
PROJECTIONS = ("view", "perspective", "orthographic")
# Light presets: the view's soft studio kit; a flat light from the camera; a key light from above
# (and a little in front) with a dim fill from the camera; a key light from the picture's left side.
LIGHTS = ("studio", "front", "top", "side")
_COLOUR = re.compile(r"#?([0-9a-fA-F]{6})")


@dataclass(frozen=True)
class PictureSettings:
    """What a picture shows and how (the module docstring): ``width``, ``height`` pixels; ``lens_mm``
    (0: the view's lens); ``projection`` one of ``PROJECTIONS``; ``light`` one of ``LIGHTS``;
    ``background`` ``(r, g, b)`` in 0..1 or None (transparent); the overlays ``sticks``, ``handles``
    and ``floor`` (off by default)."""

    width: int = 1920
    height: int = 1080
    lens_mm: float = 0.0
    projection: str = "view"
    light: str = "studio"
    background: tuple[float, float, float] | None = (1.0, 1.0, 1.0)
    sticks: bool = False
    handles: bool = False
    floor: bool = False


def _side(value: Any, name: str) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an int beyond float range)
        number = math.nan
    if not math.isfinite(number) or number != int(number) or not MIN_SIDE <= number <= MAX_SIDE:
        raise ValueError(f"picture {name}: expected a whole number of pixels from {MIN_SIDE} to {MAX_SIDE}, "
                         f"got {checks.quoted(value)}")  # fmt: skip
    return int(number)


def _choice(value: Any, name: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"picture {name}: expected one of {', '.join(options)}, got {str(value)[:40]!r}")
    return value


def picture_settings(values: Mapping[str, Any]) -> PictureSettings:
    """``PictureSettings`` from the page's values (keys as its fields; ``background`` ``"#rrggbb"`` or
    ``"transparent"``; missing keys take the defaults). ``ValueError`` naming the field otherwise."""
    if not isinstance(values, Mapping):
        raise ValueError("picture: expected the picture's settings as an object")
    d = PictureSettings()
    lens = values.get("lens_mm", d.lens_mm)
    try:
        lens_mm = float(lens)
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an int beyond float range)
        lens_mm = math.nan
    if not (lens_mm == 0.0 or MIN_LENS_MM <= lens_mm <= MAX_LENS_MM):
        raise ValueError(f"picture lens: expected a focal length from {MIN_LENS_MM:g} to {MAX_LENS_MM:g} mm "
                         f"(0: the view's), got {checks.quoted(lens)}")  # fmt: skip
    background = values.get("background", "#ffffff")
    if background == "transparent":
        colour = None
    else:
        match = _COLOUR.fullmatch(background) if isinstance(background, str) else None
        if match is None:
            got = str(background)[:40]
            raise ValueError(f"picture background: expected a colour #rrggbb or transparent, got {got!r}")
        colour = tuple(int(match.group(1)[k : k + 2], 16) / 255.0 for k in (0, 2, 4))
    flags = {}
    for name in ("sticks", "handles", "floor"):
        flag = values.get(name, False)
        if not isinstance(flag, bool):
            raise ValueError(f"picture {name}: expected true or false, got {str(flag)[:40]!r}")
        flags[name] = flag
    return PictureSettings(
        width=_side(values.get("width", d.width), "width"),
        height=_side(values.get("height", d.height), "height"),
        lens_mm=lens_mm,
        projection=_choice(values.get("projection", d.projection), "projection", PROJECTIONS),
        light=_choice(values.get("light", d.light), "light", LIGHTS),
        background=colour,  # type: ignore[arg-type]
        **flags,
    )


def view_angle_deg(lens_mm: float, width: int, height: int) -> float:
    """The vertical view angle (degrees) of a ``lens_mm`` lens on a ``SENSOR_MM`` sensor fitted to the
    longer side of a ``width`` x ``height`` picture."""
    sensor_height = SENSOR_MM * min(1.0, height / width)
    return math.degrees(2.0 * math.atan(sensor_height / (2.0 * lens_mm)))


def picture_camera(view: Any, settings: PictureSettings) -> vtkCamera:
    """The picture's camera from the view's ``view`` (a ``vtkCamera``): the same, or with the lens and
    projection of ``settings``, framing the same height at the view's focal point."""
    camera = vtkCamera()
    camera.DeepCopy(view)
    distance = camera.GetDistance()
    if view.GetParallelProjection():
        half = view.GetParallelScale()
    else:
        half = distance * math.tan(math.radians(view.GetViewAngle()) / 2.0)
    angle = view.GetViewAngle()
    if settings.lens_mm:
        angle = view_angle_deg(settings.lens_mm, settings.width, settings.height)
    parallel = view.GetParallelProjection() if settings.projection == "view" else settings.projection == "orthographic"
    camera.SetParallelProjection(parallel)
    if parallel:
        camera.SetParallelScale(half)
    if settings.lens_mm or (not parallel and view.GetParallelProjection()):
        camera.SetViewAngle(angle)
        along = half / math.tan(math.radians(angle) / 2.0) / distance  # (along the line of sight)
        focal, position = camera.GetFocalPoint(), camera.GetPosition()
        camera.SetPosition(*[f + along * (p - f) for f, p in zip(focal, position, strict=True)])
    return camera


def _light(kind: str, renderer: vtkRenderer, camera: vtkCamera) -> None:
    """Add the preset ``kind``'s lights (``LIGHTS``) to ``renderer``, placed from ``camera``."""
    if kind == "studio":
        vtkLightKit().AddLightsToRenderer(renderer)
        return
    fill = vtkLight()
    fill.SetLightTypeToHeadlight()
    fill.SetIntensity(1.0 if kind == "front" else 0.35)
    renderer.AddLight(fill)
    if kind == "front":
        return
    focal = camera.GetFocalPoint()
    size = max(camera.GetDistance(), 1e-6)
    up = camera.GetViewUp()
    forward = [f - p for f, p in zip(focal, camera.GetPosition(), strict=True)]
    if kind == "top":  # (from above the focal point, a little toward the camera)
        offset = [u * size - 0.3 * f for u, f in zip(up, forward, strict=True)]
    else:  # (from the picture's left: the camera's up crossed with its forward)
        offset = [up[1] * forward[2] - up[2] * forward[1], up[2] * forward[0] - up[0] * forward[2],
                  up[0] * forward[1] - up[1] * forward[0]]  # fmt: skip
    key = vtkLight()
    key.SetLightTypeToSceneLight()
    key.SetPositional(False)
    key.SetFocalPoint(*focal)
    key.SetPosition(*[f + o for f, o in zip(focal, offset, strict=True)])
    key.SetIntensity(0.85)
    renderer.AddLight(key)


def picture_worker() -> ThreadPoolExecutor:
    """The thread that renders the pictures (``picture_job``'s functions), one at a time (their memory
    bounded), at ``WORKER_NICENESS`` where the system lets a thread have its own (Linux): on two cores
    a 4096 x 4096 picture rendering at the event loop's priority put a drag's p95 at 160 ms."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="fabrik3d-picture", initializer=_yield_cores)


def _yield_cores() -> None:
    with contextlib.suppress(AttributeError, OSError):  # (no per-thread priority here: as it is)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)


def render_picture(props: Sequence[Any], view: Any, settings: PictureSettings) -> bytes:
    """A PNG (bytes, RGB, or RGBA with a transparent background) of ``props`` (VTK props of the view's
    renderer ``view``) seen by the picture's camera (``picture_camera``), at ``settings``' size."""
    return picture_job(props, view, settings)()


def picture_job(props: Sequence[Any], view: Any, settings: PictureSettings) -> Callable[[], bytes]:
    """``render_picture``'s work in two: the copies of ``props`` and the picture's camera, taken now
    (on the thread that owns the view), and the returned function, which renders them off screen
    and returns the PNG's bytes; it shares nothing with the view, so it may run on another thread."""
    copies = frozen(props)
    camera = picture_camera(view.GetActiveCamera(), settings)

    def run() -> bytes:
        return _render(copies, camera, settings)

    return run


def _render(props: Sequence[vtkProp], camera: vtkCamera, settings: PictureSettings) -> bytes:
    window = vtkRenderWindow()
    window.SetOffScreenRendering(1)
    transparent = settings.background is None
    samples = MSAA_SAMPLES if settings.width * settings.height <= MSAA_PIXELS else 0
    window.SetMultiSamples(samples if transparent else 0)  # (FXAA otherwise: it writes an opaque alpha)
    window.SetSize(settings.width, settings.height)
    window.SetAlphaBitPlanes(1 if transparent else 0)
    renderer = vtkRenderer()
    window.AddRenderer(renderer)
    try:
        renderer.SetBackground(*(settings.background or (1.0, 1.0, 1.0)))
        renderer.SetBackgroundAlpha(0.0 if transparent else 1.0)
        renderer.SetUseFXAA(not transparent)
        renderer.SetActiveCamera(camera)
        _light(settings.light, renderer, camera)
        for prop in props:
            renderer.AddViewProp(prop)
        renderer.ResetCameraClippingRange()
        window.Render()
        grab = vtkWindowToImageFilter()
        grab.SetInput(window)
        grab.ReadFrontBufferOff()
        if transparent:
            grab.SetInputBufferTypeToRGBA()
        grab.Update()
        image = grab.GetOutput()
        window.Finalize()  # (the window's memory goes before the PNG is made)
        writer = vtkPNGWriter()
        writer.WriteToMemoryOn()
        writer.SetInputData(image)
        writer.Write()
        return bytes(memoryview(writer.GetResult()))
    finally:
        window.Finalize()
        renderer.RemoveAllViewProps()


def frozen(props: Sequence[Any]) -> list[vtkProp]:
    """Copies of the actors of ``props`` (actors, or props made of actors: a handle's representation),
    as they are now: each with its own mapper over a deep copy of its geometry, its own property and
    texture; hidden ones left out."""
    out: list[vtkProp] = []
    for prop in props:
        if isinstance(prop, vtkActor):
            parts = [prop]
        else:
            found = vtkPropCollection()
            prop.GetActors(found)
            parts = [found.GetItemAsObject(k) for k in range(found.GetNumberOfItems())]
        out += [_copy(a) for a in parts if isinstance(a, vtkActor) and a.GetVisibility()]
    return out


def _copy(actor: vtkActor) -> vtkActor:
    copy = vtkActor()
    copy.ShallowCopy(actor)  # (its place, turn, scale and user matrix; the shared parts replaced below)
    prop = vtkProperty()
    prop.DeepCopy(actor.GetProperty())
    copy.SetProperty(prop)
    mapper = actor.GetMapper()
    if mapper is not None:
        mapper.Update()
        data = mapper.GetInputDataObject(0, 0)
        own = mapper.NewInstance()
        own.ShallowCopy(mapper)
        if data is not None:
            geometry = data.NewInstance()
            geometry.DeepCopy(data)
            own.SetInputDataObject(0, geometry)
        copy.SetMapper(own)
    texture = actor.GetTexture()
    if texture is not None:
        texture.Update()
        image = vtkImageData()
        image.DeepCopy(texture.GetInput())
        own_texture = vtkTexture()
        own_texture.ShallowCopy(texture)
        own_texture.SetInputData(image)
        copy.SetTexture(own_texture)
    return copy
