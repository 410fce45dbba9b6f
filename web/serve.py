"""Start the web UI: ``serve`` (what ``fabrik3d serve`` calls) and ``python -m fabrik3d_web.serve``."""

from __future__ import annotations

import argparse
import dataclasses
import faulthandler
import signal
import sys
import webbrowser
from collections.abc import Sequence
from typing import Any

from fabrik3d.io.character import load_character, scene_character
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.io.stage import stage_file
from fabrik3d.model import presets

from . import memory, security
from .app import WebApp


def serve(
    preset: str | None = None,
    scene: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8080,
    open_browser: bool = True,
    character: str | None = None,
    rig_map: str | None = None,
) -> None:
    """Start the web UI on ``host:port`` and block until it stops.

    Each launch has its own secret (``fabrik3d_web.security``): the URL printed (and opened) carries
    it, and a page without it cannot log in.

    Args:
        preset: a preset name (default ``humanoid`` when no scene is given).
        scene: a scene file (JSON) to open instead of a preset.
        character: a rigged character (``.glb``/``.gltf``, ``fabrik3d.io.character``) to open instead (a
            scene file that names one opens it too).
        rig_map: a rig map JSON file (role -> bone name) for the character.
        host, port: where to listen (127.0.0.1 unless told otherwise).
        open_browser: open the page in the system's browser.

    Raises:
        ValueError: for an unknown preset or a bad scene or character file, before the server starts.
    """

    memory.settle_allocator()  # (before the app's first threads: web/memory.py)
    if character is not None:
        model = load_character(character, rig_map)
        app = WebApp(scene=Scene(model.skeleton), source=_short(character), character=model)
    elif scene is not None and (several := stage_file(scene)) is not None:  # figures and props: the document's
        app = WebApp(scene=several.figures[0].scene, source=_short(scene))
        app.document.load_stage(several, _short(scene), undoable=False)
        app.figures.refresh()
    else:
        source = scene if scene is not None else (preset or "humanoid")
        opened = scene_or_preset(source)
        model = None if scene is None else scene_character(opened, scene)
        name = source if scene is None else _short(scene) if model is None else opened.character["file"]
        if model is not None:
            opened = dataclasses.replace(opened, skeleton=model.skeleton)
        app = WebApp(scene=opened, source=name, character=model)
    _stacks_on_signal()
    secret = security.new_secret()
    security.guard(app.server, secret)
    url = security.page_url(host, port, secret)
    app.server.controller.on_server_ready.add(lambda **_: _announce(url, open_browser))
    app.server.controller.on_server_ready.add(lambda **_: setattr(app, "_trimming", memory.keep_trimmed()))
    _own_options_only(app.server)
    app.server.start(host=host, port=port, open_browser=False, timeout=0, show_connection_info=False)


def _stacks_on_signal() -> None:
    """``kill -USR1 PID`` writes every thread's Python stack to the server's stderr (a server that stops
    answering says where it waits; the tests' ``WebServer.stacks``). Not on systems without SIGUSR1."""
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def _own_options_only(server: Any) -> None:
    """The framework reads more options when it starts (from ``sys.argv``, ``--trame-args`` and the
    ``TRAME_ARGS`` variable): it gets none of them, only what ``serve`` passes and the defaults set here."""
    parse = server.cli.parse_known_args
    server.cli.parse_known_args = lambda args=None, namespace=None: parse([] if args is None else args, namespace)


def _announce(url: str, open_browser: bool) -> None:
    """Once the server listens: the page's URL with its secret, printed and (if asked) opened."""
    print(f"fabrik3d: the web UI is at {url}", flush=True)
    if open_browser:
        webbrowser.open(url)


def _short(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fabrik3d_web.serve [--preset NAME | --scene FILE | --character MODEL.glb] [--host H] [--port P]
    [--no-browser]``."""
    parser = argparse.ArgumentParser(prog="fabrik3d_web", description="fabrik3d's web UI")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--preset", choices=presets.names())
    group.add_argument("--scene", metavar="FILE")
    group.add_argument("--character", metavar="MODEL.glb")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    try:
        serve(args.preset, args.scene, args.host, args.port, not args.no_browser, character=args.character)
    except ValueError as exc:
        print(f"fabrik3d_web: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
