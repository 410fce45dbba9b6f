"""The command line's ``render``: control images for image generators (issue 54) of a scene's pose, or of its
keys' baked frames as numbered PNG sequences.

    fabrik3d render SCENE.json [--passes openpose,depth,normal,outline] [--size 1024x1024] -o DIR
                    [--frames A:B] [--view front|side|top|perspective] [--depth-bits 8|16] [--feet] [--occlusion]

A scene file of several figures (version 4, ``fabrik3d.io.stage``) renders every figure not hidden (a character
figure with its own skin, the others as their mannequins), its contacts kept (its props are not drawn); its keys
bake together for ``--frames``.

The pictures are rendered by the web package (``fabrik3d_web.view.passes``: VTK, off screen), which ``fabrik3d.cli``
imports only inside the command and hands to ``cmd_render``: this module imports no front end. Everything
is checked before anything is written (the size, the passes, the folder, the frames, outputs that would
replace the scene); each file is written whole or not at all (``fabrik3d.io.files.write_atomic``: a killed
run leaves complete files only). A still writes ``DIR/<pass>.png`` (and ``openpose.json``); a sequence
``DIR/<pass>_<frame>.png``, the frame numbers zero-padded to at least 4 digits.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from fabrik3d import checks
from fabrik3d.io import bake, character, files, outputs
from fabrik3d.io.scene import scene_or_preset
from fabrik3d.io.stage import stage_file
from fabrik3d.io.stage_bake import bake_stage, stage_animation
from fabrik3d.io.stage_pose import solve_stage

# As fabrik3d_web.view.picture's MIN_SIDE, MAX_SIDE and fabrik3d_web.view.passes's PASSES (tests check they agree: the
# parser checks the arguments without importing VTK).
MIN_SIDE, MAX_SIDE = 16, 4096
PASSES = ("openpose", "depth", "normal", "outline")
VIEWS = ("front", "side", "top", "perspective")
DEFAULT_SIZE = "512x512"


def parse_size(text: str) -> tuple[int, int]:
    """A ``--size`` value: ``WIDTHxHEIGHT`` or one side (a square), whole pixels ``MIN_SIDE``..``MAX_SIDE``."""
    parts = text.lower().split("x")
    sides = []
    for part in parts if len(parts) in (1, 2) else []:
        try:
            value = float(part)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value == int(value) and MIN_SIDE <= value <= MAX_SIDE):
            break
        sides.append(int(value))
    if len(sides) != len(parts) or len(parts) not in (1, 2):
        raise argparse.ArgumentTypeError(
            f"expected WIDTHxHEIGHT, whole pixels from {MIN_SIDE} to {MAX_SIDE}, got {checks.quoted(text)}"
        )
    return (sides[0], sides[-1])


def parse_passes(text: str) -> tuple[str, ...]:
    """A ``--passes`` value: names of ``PASSES``, comma-separated, in ``PASSES``' order."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in PASSES]
    if unknown or not names:
        got = f"unknown pass {checks.quoted(unknown[0])}" if unknown else "none"
        raise argparse.ArgumentTypeError(f"expected some of {','.join(PASSES)}, got {got}")
    return tuple(p for p in PASSES if p in names)


def add_render_parser(sub: Any, frames: Any, pose_options: Callable[[Any], None], run: Callable[..., int]) -> None:
    """The ``render`` command's arguments (``frames`` the ``--frames`` type, ``pose_options`` adds ``--turn``,
    ``--look``, ... as ``solve`` has them; ``run`` the command)."""
    p = sub.add_parser("render", help="control images (openpose, depth, normal, outline) of a pose or its frames")
    p.add_argument("scene", metavar="SCENE_OR_PRESET", help="scene file (with keys for --frames) or preset")
    p.add_argument(
        "--passes", type=parse_passes, default=PASSES, metavar="P,P",
        help=f"the passes, comma-separated (default all: {','.join(PASSES)})",
    )  # fmt: skip
    p.add_argument(
        "--size", type=parse_size, default=parse_size(DEFAULT_SIZE), metavar="WxH",
        help=f"picture size in pixels, {MIN_SIDE} to {MAX_SIDE} a side (default {DEFAULT_SIZE})",
    )  # fmt: skip
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for the pictures (made if missing)")
    p.add_argument("--frames", type=frames, metavar="A:B", help="render the keys' baked frames A..B, numbered PNGs")
    p.add_argument("--view", choices=VIEWS, default="front", help="the camera's framing of the figure (default front)")
    p.add_argument("--depth-bits", type=int, choices=(8, 16), default=8, help="bits of the depth PNG (default 8)")
    p.add_argument("--feet", action="store_true", help="openpose: the feet's keypoints too (BODY_25)")
    p.add_argument("--occlusion", action="store_true", help="openpose: confidence 0 for keypoints the body hides")
    p.add_argument("--target", action="append", default=[], metavar="NAME=X,Y,Z", help="target for an effector")
    pose_options(p)
    p.set_defaults(func=run)


def cmd_render(args: argparse.Namespace, passes: ModuleType, solve_scene: Callable[..., Any]) -> int:
    """``fabrik3d render`` (module docstring) with the web package's ``passes`` module (``fabrik3d_web.view.passes``)
    and ``solve_scene(scene, args)`` (the CLI's pose options applied)."""
    from fabrik3d.cli_pose import apply_targets

    folder = Path(args.output)
    if not str(args.output).strip():
        raise ValueError("-o: expected a folder name, got an empty one")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"-o {checks.cut(str(folder))}: not a folder (a file is there)")
    if "openpose" in args.passes:
        passes.check_openpose()
    several = stage_file(args.scene)
    if several is not None:
        return _render(args, folder, passes, *_stage_frames(several, args, passes))
    scene = scene_or_preset(args.scene)
    model = character.scene_character(scene, args.scene)  # (its meshes in the pictures; else the mannequin)
    if args.frames is None:
        try:
            result = solve_scene(apply_targets(scene, args.target), args)
        except ValueError as exc:
            raise ValueError(f"{checks.cut(args.scene)}: {exc}") from None
        poses, numbers = [(result.positions, result.rotations)], [None]
    else:
        if args.target or args.turn or args.hand or args.look is not None:
            raise ValueError("render: --target, --turn, --look and --hand pose a still, not --frames (the keys do)")
        if scene.animation is None or not scene.animation.keys:
            raise ValueError(
                f"{checks.cut(args.scene)}: no keys to bake (a scene file of version 3 with an 'animation')"
            )
        try:
            span = bake.frame_range(scene.animation, args.frames)
            take = bake.bake(scene.skeleton, scene.animation, frames=args.frames, tolerance=scene.tolerance,
                             max_iterations=scene.max_iterations)  # fmt: skip
        except ValueError as exc:
            raise ValueError(f"{checks.cut(args.scene)}: {exc}") from None
        poses, numbers = list(zip(take.positions, take.rotations)), list(span)
    return _render(args, folder, passes, [[passes.Figure(scene.skeleton, p, q, model)] for p, q in poses], numbers)


def _stage_frames(stage: Any, args: argparse.Namespace, passes: ModuleType) -> tuple[list[list[Any]], list[Any]]:
    """A stage's figures (every one not hidden, in the world) in its pose, or in each frame of its keys baked
    together (``fabrik3d.io.stage_bake``): ``(figures per picture, frame numbers or [None])``."""
    if args.target or args.turn or args.hand or args.look is not None:
        raise ValueError(f"render: --target, --turn, --look and --hand pose one figure; {args.scene} holds a stage")
    shown = [i for i, f in enumerate(stage.figures) if not f.hidden]

    def figures(pose: Any) -> list[Any]:
        # (a character figure shown with its own skinned meshes, as a one-figure scene's character is)
        return [passes.Figure(stage.figures[i].scene.skeleton, *pose.world(i), stage.figures[i].character)
                for i in shown]  # fmt: skip

    try:
        if args.frames is None:
            return [figures(solve_stage(stage))], [None]
        frames: list[list[Any]] = []
        span = bake.frame_range(stage_animation(stage), args.frames)
        bake_stage(stage, frames=args.frames, on_frame=lambda _, pose: frames.append(figures(pose)))
    except ValueError as exc:
        raise ValueError(f"{checks.cut(args.scene)}: {exc}") from None
    return frames, list(span)


def _render(args: argparse.Namespace, folder: Path, passes: ModuleType, figures: list[list[Any]],
            numbers: list[Any]) -> int:  # fmt: skip
    """Render ``figures`` (a list of figures per picture, frames ``numbers`` or ``[None]`` for a still) into
    ``folder``, every output checked first."""
    names = _names(args.passes, numbers)
    outputs.check_outputs([(folder / n, args.scene) for frame in names for n in frame.values()], [args.scene])
    folder.mkdir(parents=True, exist_ok=True)
    made = passes.render_frames(
        figures, passes=args.passes, size=args.size, view=args.view, feet=args.feet, occlusion=args.occlusion
    )
    bar = _Progress(len(figures))
    written = 0
    try:
        for frame, rendered in zip(names, made):
            for name, data in rendered.files(args.depth_bits).items():
                files.write_atomic(folder / frame[name], data)
                written += 1
            bar.step()
    finally:
        bar.done()
    what = "a still" if numbers[0] is None else f"frames {numbers[0]}..{numbers[-1]}"
    w, h = args.size
    print(f"wrote {written} files into {checks.cut(str(folder))}: {','.join(args.passes)} of {what} at {w}x{h}")
    return 0


def _names(chosen: tuple[str, ...], numbers: list[int | None]) -> list[dict[str, str]]:
    """Each frame's file names: ``Passes.files``' name -> the name written (``<pass>_<frame>`` in a sequence)."""
    kinds = [f"{p}.png" for p in chosen] + (["openpose.json"] if "openpose" in chosen else [])
    digits = max([4] + [len(str(abs(n))) for n in numbers if n is not None])
    out = []
    for n in numbers:
        if n is None:
            out.append({k: k for k in kinds})
        else:
            out.append({k: f"{k.split('.')[0]}_{n:0{digits}d}.{k.split('.')[1]}" for k in kinds})
    return out


class _Progress:
    """A progress bar on stderr, only when it is a terminal: ``[#####     ] k/n frames, f/s``."""

    def __init__(self, total: int) -> None:
        self.total, self.count, self.t0 = total, 0, time.perf_counter()
        self.shown = sys.stderr.isatty() and total > 1

    def step(self) -> None:
        self.count += 1
        if self.shown:
            rate = self.count / max(time.perf_counter() - self.t0, 1e-9)
            bar = "#" * (20 * self.count // self.total)
            print(f"\r[{bar:<20}] {self.count}/{self.total} frames, {rate:.1f} frames/s", end="", file=sys.stderr,
                  flush=True)  # fmt: skip

    def done(self) -> None:
        if self.shown:
            print(file=sys.stderr, flush=True)
