"""The ``fabrik3d`` command line.

Commands:
    fabrik3d presets
    fabrik3d solve SCENE_OR_PRESET [--target NAME=X,Y,Z ...] [-o POSE.json]
    fabrik3d serve [--preset NAME | --scene FILE | --character MODEL.glb] [--host 127.0.0.1] [--port 8080]
                   [--no-browser]
    fabrik3d export SCENE_OR_PRESET -o OUT.glb [--target NAME=X,Y,Z ...]
    fabrik3d export MODEL.glb|MODEL.gltf -o OUT [--target NAME=X,Y,Z ...] [--take TAKE.json [--name NAME]]
    fabrik3d export --take TAKE.json -o OUT.glb
    fabrik3d bake SCENE.json -o OUT.glb|OUT.gltf|TAKE.json [--frames A:B] [--fps N] [--method warm|batch]
    fabrik3d render SCENE_OR_PRESET -o DIR [--passes openpose,depth,normal,outline] [--size WxH] [--frames A:B]
                    [--view front|side|top|perspective]   (needs fabrik3d[web]; fabrik3d.cli_render)

Bad input gives a one-line message on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import ipaddress
import json
import os
import socket
import sys
import time
import urllib.parse
import warnings
from collections.abc import Iterator, Sequence
from typing import NoReturn

from fabrik3d import checks
from fabrik3d.batch.backends import BackendError
from fabrik3d.cli_bake import add_bake_parser
from fabrik3d.cli_pose import _solve_scene, apply_targets, parse_target
from fabrik3d.cli_render import add_render_parser, cmd_render
from fabrik3d.io import bake, character, character_export, files, gltf, outputs, take
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.io.stage import Stage, stage_file
from fabrik3d.io.stage_gltf import export_stage_pose
from fabrik3d.io.stage_pose import solve_stage
from fabrik3d.model import presets
from fabrik3d.solver.hands import SHAPES


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # (argparse quotes a bad value whole: each word of the message cut to 80 characters)
        words = (checks.cut(w) for w in message.split(" "))
        print(f"{self.prog}: error: {one_line(' '.join(words))}", file=sys.stderr)
        raise SystemExit(2)


# The longest message printed (each input it quotes is cut to 80 characters where it is made; this
# bounds what a message made elsewhere, argparse's say, can echo).
MAX_MESSAGE = 1000


def one_line(message: str) -> str:
    """``message`` on one line: line breaks (an argument may hold them) written as ``\\n``, at most
    ``MAX_MESSAGE`` characters."""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    return message.replace("\r", "\\r").replace("\n", "\\n")


@contextlib.contextmanager
def _about(source: str, *named: str | None) -> Iterator[None]:
    """Prefix ``source`` (the file or preset a command reads) to a ``ValueError`` raised inside, unless
    its message already names ``source`` or another file of the command (``named``)."""
    try:
        yield
    except ValueError as exc:
        text = str(exc)
        if any(f is not None and text.startswith(f"{f}:") for f in (source, *named)):
            raise
        raise ValueError(f"{source}: {text}") from None


def _output_name(text: str) -> str:
    """An ``-o`` value: a file name, not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file name, got an empty one")
    return text


def _port(text: str) -> int:
    """A ``--port`` value: an integer 1..65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer 1..65535, got {checks.quoted(text)}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected an integer 1..65535, got {port}")
    return port


def check_listen(host: str, port: int) -> None:
    """Raise ``ValueError`` unless ``host`` names an address of this machine whose ``port`` is free
    (bound once and released, so the web server's own start does not fail in its event loop)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValueError(
            f"--host {checks.quoted(host)}: unknown host ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ValueError(f"--port {port}: already in use on {host}") from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise ValueError(f"--host {checks.quoted(host)}: not an address of this machine") from None
            raise ValueError(
                f"--host {checks.quoted(host)} --port {port}: cannot listen ({exc.strerror or exc})"
            ) from None
    if not ipaddress.ip_address(address[0]).is_loopback:
        print(
            f"fabrik3d: warning: --host {host} listens beyond this machine: whoever can reach it can use the app",
            file=sys.stderr,
        )


def _cmd_presets(args: argparse.Namespace) -> int:
    for name in presets.names():
        skeleton = presets.get(name)
        print(f"{name}: {len(skeleton)} joints, effectors {', '.join(skeleton.end_effectors)}")
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    if args.output:
        outputs.check_outputs([(args.output, args.scene)], [args.scene])
    scene = scene_or_preset(args.scene)
    with _about(args.scene, args.output):
        scene = apply_targets(scene, args.target)
        if args.tolerance is not None:
            scene = dataclasses.replace(scene, tolerance=args.tolerance)
        if args.max_iterations is not None:
            scene = dataclasses.replace(scene, max_iterations=args.max_iterations)
        t0 = time.perf_counter()
        result = _solve_scene(scene, args)
    ms = (time.perf_counter() - t0) * 1e3
    print(f"iterations: {result.iterations}  converged: {result.converged}  solve: {ms:.3f} ms")
    for name, err in result.errors.items():
        turned = result.orientation_errors.get(name)
        print(f"  {name}: error {err:.6g}" + ("" if turned is None else f", turned {turned:.3g} deg from its --turn"))
    if args.output:
        pose = {
            "joint_names": list(scene.skeleton.names),
            "positions": result.positions.tolist(),
            "rotations": result.rotations.tolist(),
            "iterations": result.iterations,
            "errors": result.errors,
            "orientation_errors": result.orientation_errors,
        }
        files.write_atomic(args.output, (json.dumps(pose, indent=1) + "\n").encode())
        print(f"wrote {args.output}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    try:  # the web UI's dependencies are an extra: import them only for this command
        from fabrik3d_web.serve import serve
    except ImportError as exc:
        raise ValueError(f"the web UI needs the extra fabrik3d[web]: pip install 'fabrik3d[web]' ({exc})") from None
    if args.rig_map is not None and args.character is None:
        raise ValueError("serve: --rig-map goes with --character MODEL.glb")
    check_listen(args.host, args.port)
    serve(
        preset=args.preset,
        scene=args.scene,
        character=args.character,
        rig_map=args.rig_map,
        host=args.host,
        port=args.port,
        open_browser=not args.no_browser,
    )
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    try:  # the pictures are rendered with VTK, an extra: import it only for this command
        from fabrik3d_web.view import passes
    except ImportError as exc:
        raise ValueError(f"render needs the extra fabrik3d[web]: pip install 'fabrik3d[web]' ({exc})") from None
    return cmd_render(args, passes, _solve_scene)


def _cmd_export(args: argparse.Namespace) -> int:
    if args.scene is None and args.take is None:
        raise ValueError("export: give a scene or preset, or --take TAKE.json")
    read = [f for f in (args.scene, args.take, args.rig_map) if f is not None]
    outputs.check_outputs([(args.output, read[0])], read)
    if args.mannequin and (args.take is not None or str(args.scene).lower().endswith((".glb", ".gltf"))):
        raise ValueError("export: --mannequin dresses a scene or preset's pose (a character has its own mesh)")
    if args.scene is not None and args.scene.lower().endswith((".glb", ".gltf")):
        return _export_character(args)
    several = None if args.scene is None else stage_file(args.scene)
    if several is not None:
        return _export_stage(args, several)
    if args.scene is not None and args.take is not None:
        raise ValueError("export: give a scene or preset, or --take TAKE.json, not both")
    if args.name is not None:
        raise ValueError("export: --name names a take written into a character's file (MODEL.glb --take ...)")
    if args.rig_map is not None:
        raise ValueError("export: --rig-map goes with a character's file (MODEL.glb)")
    if args.take is not None:
        if args.target or args.turn or args.hand or args.look is not None:
            raise ValueError("export: --target, --turn, --look and --hand apply to a scene, not to --take")
        recorded = take.load_take(args.take)
        frames = zip(recorded.positions, recorded.rotations)
        gltf.export_animation(recorded.skeleton, frames, recorded.times, args.output)
        print(f"wrote {args.output}: {len(recorded.times)} frames of {len(recorded.skeleton)} joints")
        return 0
    scene = scene_or_preset(args.scene)
    with _about(args.scene, args.output):
        scene = apply_targets(scene, args.target)
        result = _solve_scene(scene, args)
    gltf.export_pose(scene.skeleton, result, args.output, mannequin=args.mannequin)
    state = "converged" if result.converged else "not converged"
    print(f"wrote {args.output}: pose of {len(scene.skeleton)} joints ({state}, {result.iterations} iterations)")
    return 0


def _export_stage(args: argparse.Namespace, several: Stage) -> int:
    """``export STAGE.json``: every figure's pose (contacts kept) and every prop in one file."""
    options = {"--take": args.take, "--target": args.target, "--turn": args.turn, "--look": args.look,
               "--hand": args.hand, "--name": args.name, "--rig-map": args.rig_map}  # fmt: skip
    given = [o for o, v in options.items() if v]
    if given:
        raise ValueError(f"export: {given[0]} applies to a scene of one figure; {args.scene} holds a stage")
    with _about(args.scene, args.output):
        pose = solve_stage(several)
        export_stage_pose(several, pose.poses, args.output, mannequin=args.mannequin)
    gap = max(pose.gaps.values(), default=0.0)
    contacts = f", contacts within {gap * 1e3:.1f} mm" if pose.gaps else ""
    print(f"wrote {args.output}: {len(several.figures)} figures and {len(several.props)} props{contacts}")
    return 0


def _export_character(args: argparse.Namespace) -> int:
    """``export MODEL.glb``: the character's own file with the solved pose and/or a take."""
    model = character.load_character(args.scene, args.rig_map)
    outputs.check_outputs([(args.output, args.scene)], [args.scene, *_files_of(model)])
    sk = model.skeleton
    with _about(args.scene, args.output, args.take, args.rig_map):
        targets, root = {}, None
        for spec in args.target:
            name, point = parse_target(spec)
            joint = model.effector(name, "--target")  # (a role, a bone of one, or a leaf)
            if joint == sk.names[sk.root]:  # the pelvis: the root moves there
                root = point
            else:
                targets[joint] = point
        turns = [f"{model.effector(n, '--turn')}={v}" for n, _, v in (t.partition("=") for t in args.turn)]
        recorded = None if args.take is None else take.load_take(args.take)
        pose = None
        if targets or root is not None or recorded is None:
            scene = Scene(sk, targets=targets, root_target=root)
            options = argparse.Namespace(turn=turns, look=args.look, hand=args.hand)
            pose = _solve_scene(scene, options, model.effectors.get("head", "head"))
        character_export.export_character(model, args.output, pose=pose, take=recorded, name=args.name or "take")
    what = [] if pose is None else [f"pose ({'converged' if pose.converged else 'not converged'})"]
    if recorded is not None:
        what.append(f"take {args.name or 'take'!r} of {len(recorded.times)} frames")
    print(f"wrote {args.output}: {' and '.join(what)} in {args.scene}'s document ({len(sk)} joints)")
    return 0


def _files_of(model: character.Character) -> list[str]:
    """The files beside a ``.gltf`` character that it reads (its buffers' and images' relative URIs)."""
    if model.base_dir is None:
        return []
    doc = model.document
    uris = [item.get("uri") for kind in ("buffers", "images") for item in doc.get(kind, []) if isinstance(item, dict)]
    return [
        os.path.join(model.base_dir, urllib.parse.unquote(u))
        for u in uris
        if isinstance(u, str) and not u.startswith("data:")
    ]


def _frames(text: str) -> tuple[int, int]:
    """A ``--frames`` value: ``A:B``, two whole frame numbers."""
    first, sep, last = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(first), int(last)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected FIRST:LAST (two whole frame numbers), got {checks.quoted(text)}"
        ) from None


def _turn_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--turn",
        action="append",
        default=[],
        metavar="NAME=RX,RY,RZ",
        help="turn a targeted effector from its rest orientation (XYZ Euler, degrees, world axes)",
    )
    p.add_argument("--look", metavar="X,Y,Z", help="a point the head looks at (neck and head turn)")
    p.add_argument(
        "--floor", metavar="Y", help="a floor's height, or none (default: the scene's; the humanoid's ground)"
    )
    p.add_argument("--balance", action="store_true", help="keep the centre of mass over the feet on the ground")
    shapes = ", ".join(SHAPES)
    p.add_argument("--hand", action="append", default=[], metavar="SIDE=SHAPE", help=f"shape a hand: l=fist ({shapes})")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command."""
    parser = _Parser(prog="fabrik3d", description="FABRIK inverse kinematics for skeletons.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("presets", help="list the preset skeletons").set_defaults(func=_cmd_presets)
    p = sub.add_parser("solve", help="solve a scene or preset and print the result")
    p.add_argument("scene", metavar="SCENE_OR_PRESET")
    p.add_argument("--target", action="append", default=[], metavar="NAME=X,Y,Z", help="target for an effector")
    _turn_options(p)
    p.add_argument("-o", "--output", type=_output_name, metavar="POSE.json", help="write the solved pose as JSON")
    p.add_argument("--tolerance", type=float, help="reach tolerance, scene units")
    p.add_argument("--max-iterations", type=int, help="iteration limit")
    p.set_defaults(func=_cmd_solve)
    p = sub.add_parser("serve", help="open the web UI (needs fabrik3d[web])")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--preset", choices=presets.names(), help="preset to open (default humanoid)")
    source.add_argument("--scene", metavar="FILE", help="scene file to open")
    source.add_argument("--character", metavar="MODEL.glb", help="rigged character (.glb or .gltf) to pose")
    p.add_argument("--rig-map", metavar="MAP.json", help="the character's bones by role (JSON: role -> bone)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8080, help="port to listen on (default 8080)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.set_defaults(func=_cmd_serve)
    p = sub.add_parser("export", help="write a solved pose, or a recorded take, as glTF 2.0 (.glb or .gltf)")
    p.add_argument(
        "scene",
        nargs="?",
        metavar="SCENE_OR_PRESET",
        help="scene file or preset to solve and export, or a rigged character (.glb/.gltf) to write posed",
    )
    p.add_argument("--take", metavar="TAKE.json", help="a recorded take to export as an animation")
    p.add_argument("--name", help="the take's animation name in a character's file (default: take)")
    p.add_argument("--rig-map", metavar="MAP.json", help="the character's bones by role (JSON: role -> bone)")
    p.add_argument("--target", action="append", default=[], metavar="NAME=X,Y,Z", help="target for an effector")
    _turn_options(p)
    p.add_argument("--mannequin", action="store_true", help="skin a mannequin's body to the pose, not the sticks")
    p.add_argument(
        "-o", "--output", type=_output_name, required=True, metavar="OUT.glb", help="output file, .glb or .gltf"
    )
    p.set_defaults(func=_cmd_export)
    add_bake_parser(sub, _frames, _output_name, bake.METHODS)
    add_render_parser(sub, _frames, _turn_options, _cmd_render)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():  # (never printed: what matters is checked and said in the error)
            warnings.simplefilter("ignore")
            return int(args.func(args))
    except (ValueError, TypeError, BackendError) as exc:  # (BackendError: --backend where numba or a GPU is missing)
        print(f"fabrik3d: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file name too long, a folder that vanished, ... (the library says ValueError)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"fabrik3d: error: {one_line(where + (exc.strerror or str(exc)))}", file=sys.stderr)
        return 2
    except MemoryError:
        print("fabrik3d: error: not enough memory for this input", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
