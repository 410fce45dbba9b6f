"""Control images for image generators (issue 54): the ``openpose``, ``depth``, ``normal`` and ``outline``
passes of the posed scene, as arrays, PNG and OpenPose JSON files, from the view's camera or a framing of
the figures.

The core library never imports VTK, so the passes live here, in the web package; Python callers use
``render_passes(skeleton, result, ...)`` (or ``render_figures`` for several figures) and get arrays back,
without a web app; the command line's ``fabrik3d render`` (``fabrik3d.cli_render``) renders sequences
through ``render_frames``; the Picture panel gets ``passes_job(props, view, settings, passes, figures)``,
``picture_job``'s twin (the copies taken now, the render on a worker thread), and ``Passes.zip``.

* depth, normal and outline come from one off-screen draw of the surfaces (``fabrik3d_web.view.pass_render``:
  the mannequin or a character's meshes, props; coloured by their camera-space normals, lighting off) and
  its z-buffer; their conventions, with sources, are in ``fabrik3d_web.view.pass_images`` and
  docs/control-images.md.
* openpose comes from ``fabrik3d.pictures`` (keypoints projected by the same camera, drawn as OpenPose
  draws them; one person a figure in the JSON), no render.

A sequence (``render_frames``) keeps one camera for every frame (framing all of them) and one window.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from vtkmodules.vtkRenderingCore import vtkCamera, vtkRenderer, vtkRenderWindow

from fabrik3d.model.mannequin import Mannequin
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.workspace import skeleton_size

from .pass_images import depth_image, depth_levels, eye_normals, outline_image, png_bytes, view_depth
from .pass_render import PassRenderer, Surface, surfaces_of
from .picture import MAX_SIDE, MIN_SIDE, PictureSettings, frozen, picture_camera
from .vtk_parts import VIEWS, frame_camera

PASSES = ("openpose", "depth", "normal", "outline")
# The passes drawn from the surfaces (one render); openpose needs none.
DRAWN = ("depth", "normal", "outline")


def check_passes(passes: Any) -> tuple[str, ...]:
    """``passes`` (names of ``PASSES``, a sequence or a comma-separated string) in ``PASSES``' order, each
    once; ``ValueError`` naming the unknown one, or for none."""
    names = [p.strip() for p in passes.split(",")] if isinstance(passes, str) else list(passes)
    for name in names:
        if name not in PASSES:
            raise ValueError(f"passes: unknown pass {str(name)[:40]!r}: expected some of {', '.join(PASSES)}")
    if not names:
        raise ValueError(f"passes: expected some of {', '.join(PASSES)}, got none")
    return tuple(p for p in PASSES if p in names)


@dataclass(frozen=True)
class Figure:
    """A posed figure: its ``skeleton`` and pose, ``positions`` ``(n, 3)`` scene units and ``rotations``
    ``(n, 4)`` quaternions (a ``SolveResult``'s); shown as its mannequin, or as ``character``'s skinned
    meshes (a ``fabrik3d.io.character.Character`` of this skeleton)."""

    skeleton: Skeleton
    positions: np.ndarray
    rotations: np.ndarray
    character: Any = None

    def meshes(self, mannequin: Mannequin | None) -> list[tuple[np.ndarray, np.ndarray | None, np.ndarray]]:
        """``(points, normals or None, triangles)`` of each mesh of the figure in its pose."""
        if self.character is not None:
            skinned = self.character.skin((self.positions, self.rotations), normals=True)
            return [(p, n, np.asarray(m.indices)) for (p, n), m in zip(skinned, self.character.meshes)]
        assert mannequin is not None
        return [(*mannequin.skinned(self.positions, self.rotations), mannequin.triangles)]

    @classmethod
    def of(cls, skeleton: Skeleton, result: Any) -> Figure:
        """The figure of ``skeleton`` in ``result``: a ``SolveResult`` or ``(positions, rotations)``."""
        if hasattr(result, "positions"):
            return cls(skeleton, np.asarray(result.positions, float), np.asarray(result.rotations, float))
        positions, rotations = result
        return cls(skeleton, np.asarray(positions, float), np.asarray(rotations, float))


@dataclass(frozen=True)
class Passes:
    """The passes of one picture, ``width`` x ``height`` pixels, rows from the top (absent ones None):
    ``depth`` ``(h, w)`` float32 0..1 (near 1, background 0); ``normal`` ``(h, w, 3)`` uint8; ``outline``
    ``(h, w)`` uint8 (255 on the lines); ``openpose`` ``(h, w, 3)`` uint8 and ``keypoints`` its OpenPose
    JSON (a dict)."""

    width: int
    height: int
    depth: np.ndarray | None = None
    normal: np.ndarray | None = None
    outline: np.ndarray | None = None
    openpose: np.ndarray | None = None
    keypoints: dict[str, Any] | None = field(default=None)

    def files(self, depth_bits: int = 8) -> dict[str, bytes]:
        """The passes as files, name -> bytes: ``openpose.png``, ``openpose.json``, ``depth.png`` (8 or 16
        bits, ``depth_bits``), ``normal.png``, ``outline.png`` (those made)."""
        out: dict[str, bytes] = {}
        if self.openpose is not None:
            out["openpose.png"] = png_bytes(self.openpose)
        if self.keypoints is not None:
            out["openpose.json"] = (json.dumps(self.keypoints) + "\n").encode()
        if self.depth is not None:
            out["depth.png"] = png_bytes(depth_levels(self.depth, depth_bits))
        if self.normal is not None:
            out["normal.png"] = png_bytes(self.normal)
        if self.outline is not None:
            out["outline.png"] = png_bytes(self.outline)
        return out

    def zip(self, stem: str = "fabrik3d", depth_bits: int = 8) -> bytes:
        """All the passes' files in one ZIP, named ``<stem>_<pass>.<ext>`` (the panel's "All passes .zip")."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:  # (PNGs are compressed already)
            for name, data in self.files(depth_bits).items():
                archive.writestr(f"{stem}_{name}", data)
        return buffer.getvalue()


def compute(
    renderer: PassRenderer | _NoDraw,
    surfaces: Sequence[Surface],
    figures: Sequence[Figure],
    camera: vtkCamera,
    passes: Sequence[str],
    *,
    feet: bool = False,
    occlusion: bool = False,
) -> Passes:
    """The ``passes`` of ``surfaces`` and ``figures`` seen by ``camera`` in ``renderer``'s window (its size
    is the pictures'; it draws only when a drawn pass is asked)."""
    w, h = renderer.width, renderer.height
    out: dict[str, Any] = {}
    if any(p in passes for p in DRAWN):
        rgb, zbuffer, (near, far) = renderer.draw(surfaces, camera)
        parallel = bool(camera.GetParallelProjection())
        depth = view_depth(zbuffer, near, far, parallel)
        if "depth" in passes:
            out["depth"] = depth_image(depth, parallel)
        if "normal" in passes:
            out["normal"] = rgb
        if "outline" in passes:
            if parallel:
                pixel: Any = 2.0 * camera.GetParallelScale() / h
            else:
                half = math.tan(math.radians(camera.GetViewAngle()) / 2.0)
                pixel = 2.0 * half / h * np.where(np.isfinite(depth), depth, 0.0)
            out["outline"] = outline_image(depth, eye_normals(rgb), pixel)
    if "openpose" in passes:
        out["openpose"], out["keypoints"] = openpose(figures, camera, w, h, feet=feet, occlusion=occlusion)
    return Passes(w, h, **out)


def openpose(
    figures: Sequence[Figure],
    camera: vtkCamera,
    width: int,
    height: int,
    *,
    feet: bool = False,
    occlusion: bool = False,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The OpenPose picture ``(h, w, 3)`` uint8 (body and hands, the feet with ``feet``: BODY_25) and its
    JSON (one person a figure; with ``occlusion`` the keypoints the body hides get confidence 0) of
    ``figures`` seen by ``camera`` (``fabrik3d.pictures.openpose_keypoints``)."""
    from fabrik3d.pictures import draw_openpose, openpose_json, openpose_keypoints  # (issue 54's keypoints)

    cam = pictures_camera(camera, width, height)
    people = [
        openpose_keypoints(f.skeleton, f.positions, f.rotations, cam, hands=True, feet=feet, occlusion=occlusion)
        for f in figures
    ]
    return draw_openpose(people, width, height, hands=True), openpose_json(people, width, height)


def check_openpose() -> None:
    """``ValueError`` unless the OpenPose keypoints (``fabrik3d.pictures``) can be imported."""
    try:
        from fabrik3d.pictures import Camera, draw_openpose, openpose_json, openpose_keypoints  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"openpose: the keypoints library fabrik3d.pictures is missing ({exc})") from None


def pictures_camera(camera: vtkCamera, width: int, height: int) -> Any:
    """``fabrik3d.pictures.Camera`` of a ``vtkCamera`` for a ``width`` x ``height`` picture: its position,
    focal point, view up, vertical view angle, projection and parallel scale."""
    from fabrik3d.pictures import Camera

    return Camera(
        position=tuple(camera.GetPosition()),
        focal_point=tuple(camera.GetFocalPoint()),
        view_up=tuple(camera.GetViewUp()),
        view_angle=float(camera.GetViewAngle()),
        parallel=bool(camera.GetParallelProjection()),
        parallel_scale=float(camera.GetParallelScale()),
        width=int(width),
        height=int(height),
    )


def passes_job(
    props: Sequence[Any],
    view: Any,
    settings: PictureSettings,
    passes: Sequence[str] = PASSES,
    figures: Sequence[Figure] = (),
    *,
    feet: bool = False,
    occlusion: bool = False,
) -> Callable[[], Passes]:
    """``picture_job``'s twin for the passes: ``props`` (the view's, as a picture shows them) copied and the
    picture's camera taken now (on the thread that owns the view ``view``, a ``vtkRenderer``), and the
    returned function rendering ``passes`` at ``settings``' size, sharing nothing with the view. The
    picture's light, background and overlays play no part; ``figures`` give the OpenPose people."""
    chosen = check_passes(passes)
    surfaces = surfaces_of(frozen(props))
    camera = picture_camera(view.GetActiveCamera(), settings)
    people = list(figures)

    def run() -> Passes:
        renderer = PassRenderer(settings.width, settings.height)
        try:
            return compute(renderer, surfaces, people, camera, chosen, feet=feet, occlusion=occlusion)
        finally:
            renderer.close()

    return run


def check_size(size: Any) -> tuple[int, int]:
    """``size`` ``(width, height)`` (or one number: a square) in whole pixels ``MIN_SIDE``..``MAX_SIDE``."""
    w, h = (size, size) if np.ndim(size) == 0 else tuple(size)
    for name, value in (("width", w), ("height", h)):
        ok = isinstance(value, (int, np.integer, float)) and math.isfinite(value) and value == int(value)
        if not ok or not MIN_SIDE <= value <= MAX_SIDE:
            raise ValueError(
                f"size {name}: expected a whole number of pixels from {MIN_SIDE} to {MAX_SIDE}, got {value!r}"
            )
    return int(w), int(h)


def framed_camera(points: np.ndarray, size: float, view: str, width: int, height: int) -> vtkCamera:
    """A camera framing ``points`` (``(m, 3)``, scene units; ``size`` the figure's length scale) from
    ``view`` (``VIEWS``: front, side, top in parallel projection, perspective) as the web view frames
    them (``vtk_parts.frame_camera``), for a ``width`` x ``height`` picture."""
    if view not in VIEWS:
        raise ValueError(f"view: expected one of {', '.join(VIEWS)}, got {str(view)[:40]!r}")
    window = vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.SetSize(width, height)
    renderer = vtkRenderer()
    window.AddRenderer(renderer)
    frame_camera(renderer, np.asarray(points, float), size, view)
    camera = vtkCamera()
    camera.DeepCopy(renderer.GetActiveCamera())
    return camera


def _mannequins(figures: Sequence[Figure]) -> list[Mannequin | None]:
    """Each figure's mannequin (one per skeleton; None for a character's)."""
    made: dict[int, Mannequin] = {}
    for f in figures:
        if f.character is None and id(f.skeleton) not in made:
            made[id(f.skeleton)] = Mannequin.of(f.skeleton)
    return [None if f.character is not None else made[id(f.skeleton)] for f in figures]


def render_figures(
    figures: Sequence[Figure],
    *,
    passes: Sequence[str] = PASSES,
    size: Any = (512, 512),
    view: str = "front",
    camera: vtkCamera | None = None,
    feet: bool = False,
    occlusion: bool = False,
) -> Passes:
    """The ``passes`` of ``figures`` (each shown as its mannequin), ``size`` ``(width, height)`` pixels, seen
    from ``view`` (a framing of all of them, ``framed_camera``) or by ``camera``; ``feet`` and ``occlusion``
    as ``openpose``'s."""
    return next(
        render_frames(
            [list(figures)], passes=passes, size=size, view=view, camera=camera, feet=feet, occlusion=occlusion
        )
    )


def render_passes(skeleton: Skeleton, result: Any, **options: Any) -> Passes:
    """The passes of one figure, ``skeleton`` posed as ``result`` (a ``SolveResult`` or ``(positions,
    rotations)``), as arrays (``Passes``); ``options`` as ``render_figures``'s. The library's way in for
    Python callers (the core ``fabrik3d`` has no VTK)::

        from fabrik3d_web.view.passes import render_passes
        passes = render_passes(skeleton, fabrik3d.solve(skeleton, targets), size=(1024, 1024))
        passes.depth, passes.normal, passes.files()["normal.png"]
    """
    return render_figures([Figure.of(skeleton, result)], **options)


def render_frames(
    frames: Sequence[Sequence[Figure]],
    *,
    passes: Sequence[str] = PASSES,
    size: Any = (512, 512),
    view: str = "front",
    camera: vtkCamera | None = None,
    feet: bool = False,
    occlusion: bool = False,
) -> Iterator[Passes]:
    """The passes of each frame of ``frames`` (the figures of each, the same skeletons every frame), one
    camera for all (``camera``, or ``view``'s framing of every frame) and one window, as they are made."""
    chosen = check_passes(passes)
    width, height = check_size(size)
    if not frames or not frames[0]:
        raise ValueError("render: expected at least one frame of at least one figure")
    bodies = _mannequins(frames[0])
    if camera is None:
        every = max(1, len(frames) // 8)
        points = [f.positions for figs in frames for f in figs]
        for figs in [*frames[::every], frames[-1]]:
            points += [m[0][::16] for f, body in zip(figs, bodies) for m in f.meshes(body)]
        scale = max(skeleton_size(f.skeleton) for f in frames[0])
        camera = framed_camera(np.vstack(points), scale, view, width, height)
    drawn = any(p in chosen for p in DRAWN)
    renderer = PassRenderer(width, height) if drawn else None
    surfaces = [[Surface(*m) for m in f.meshes(body)] for f, body in zip(frames[0], bodies)] if drawn else []
    try:
        for k, figs in enumerate(frames):
            if k and drawn:
                for own, f, body in zip(surfaces, figs, bodies):
                    for surface, (points, normals, _) in zip(own, f.meshes(body)):
                        surface.move(points, normals)
            yield compute(
                renderer or _NoDraw(width, height),
                [s for own in surfaces for s in own],
                figs,
                camera,
                chosen,
                feet=feet,
                occlusion=occlusion,
            )
    finally:
        if renderer is not None:
            renderer.close()


class _NoDraw:
    """A stand-in for ``PassRenderer`` where only openpose is asked (its size; it never draws)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
