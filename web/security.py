"""What keeps other web sites out of the local app (docs/web.md, "Threat model").

The app is for one user on their own machine. Any page that user opens in a browser can try to
talk to it on 127.0.0.1, so:

* each launch draws a random secret (``new_secret``); only the page opened with it in its URL
  (``page_url``, which ``serve`` prints and opens) can log in, as Jupyter's token does;
  wslink refuses every call before that login, so nothing of the state leaves the server;
* a websocket upgrade whose ``Origin`` is not the page's own is refused with 403 before any
  message (a browser always sends its page's origin);
* a message may declare at most ``MAX_MESSAGE_BYTES`` before anything is allocated for it (wslink
  lifts its limit to 4 GB once a client is logged in);
* the page's client asks a launcher (``POST /paraview/``) where its websocket is; ``launcher``
  answers with the server's own (``/ws`` on the page's host), which tells nothing secret;
* a logged-in page is still only a page: a trigger called with the wrong arguments answers in
  ``error_message`` (``page_trigger``), as does one whose action fails in any way (``failure``: one
  line, the server's state published again); a switch takes a boolean only (``switched``); and the
  state the server owns (``SERVER_OWNED``) is put back when a page writes it.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
import logging
import secrets
from collections.abc import Callable
from typing import Any

from aiohttp import web
from trame.decorators import trigger
from wslink import chunking

log = logging.getLogger("fabrik3d_web")

# An error message in the panel is cut to this many characters (one line).
MESSAGE_CHARS = 300

# The secret's randomness, bytes (URL-safe base64 text of about 4/3 that many characters).
SECRET_BYTES = 24
# Largest message a logged-in page may send: an uploaded scene (2 MiB) as base64, with room.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# State keys only the server writes (the page reads them): a page's write is reverted and reported.
SERVER_OWNED = (
    "figures",
    "figure_selected",
    "figure_place",
    "stage_props",
    "stage_contacts",
    "contact_anchors",
    "contact_joints",
    "prop_place",
    "key_frames",
    "key_here",
    "frame_shown",
    "frame_preview",
    "turnable_joints",
    "joint_angles",
    "joint_names",
    "pose",
    "root_target",
    "poles",
    "orientations",
    "root_orientation",
    "look_target",
    "file_stem",
    "solve_ms",
    "iterations",
    "max_error",
    "unreachable",
    "converged",
    "fps",
    "effectors",
    "reach_of",
    "hang_of",
    "selected_effector",
    "rings_on",
    "drag_depth",
    "pictures_done",
    "pictures_failed",
    "reach_options",
    "stiffness_of",
    "can_undo",
    "can_redo",
    "take_frames",
    "take_seconds",
    "has_limits",
    "limited_joints",
    "presets",
    "hand_sides",
    "hand_curls",
    "hand_spread",
    "hand_shape",
    "hand_amount",
    "clipboard_what",
    "copy_scope",
    "library_path",
    "com",
    "com_inside",
    "has_feet",
    "has_mannequin",
    "library_rows",
    "library_problem",
    "library_page",
    "character",
    "timeline_playing",
    "error_message",
)


def new_secret() -> str:
    """A fresh random secret for one launch."""
    return secrets.token_urlsafe(SECRET_BYTES)


def page_url(host: str, port: int, secret: str) -> str:
    """The URL that opens the app with its secret (a wildcard host is reached on 127.0.0.1)."""
    shown = "127.0.0.1" if host in ("", "0.0.0.0") else "[::1]" if host == "::" else host
    try:
        if ipaddress.ip_address(shown).version == 6 and not shown.startswith("["):
            shown = f"[{shown}]"
    except ValueError:  # a host name
        pass
    return f"http://{shown}:{port}/?secret={secret}"


def guard(server: Any, secret: str) -> None:
    """Before ``server`` (a trame server) starts: require ``secret`` at login, refuse foreign
    origins, bound message sizes."""
    server.cli.set_defaults(authKey=secret, authKeyFile=None)
    server.controller.on_server_bind.add(_refuse_foreign_origins)
    server.controller.on_server_bind.add(_answer_launcher)
    _bound_messages(MAX_MESSAGE_BYTES)


@web.middleware
async def same_origin(request: web.Request, handler: Any) -> web.StreamResponse:
    """A websocket upgrade from a page of another origin gets 403, before any message."""
    origin = request.headers.get("Origin")
    if origin is not None and request.headers.get("Upgrade", "").lower() == "websocket":
        if origin != f"{request.scheme}://{request.host}":
            raise web.HTTPForbidden(text="fabrik3d: connections from other web sites are refused")
    return await handler(request)


def _refuse_foreign_origins(wslink_server: Any) -> None:
    app = wslink_server.app
    if same_origin not in app.middlewares:
        app.middlewares.append(same_origin)


# What the page's client asks for first: a launcher's session (trame's client POSTs to ``paraview/``
# and, without an answer, falls back to ``/ws`` after a 405 that the browser logs as an error).
LAUNCHER_PATH = "/paraview/"


async def launcher(request: web.Request) -> web.Response:
    """``POST /paraview/``: the websocket of this server (the client puts in the page's host)."""
    scheme = "wss" if request.scheme == "https" else "ws"
    return web.json_response({"sessionURL": f"{scheme}://USE_HOST/ws"})


def _answer_launcher(wslink_server: Any) -> None:
    router = wslink_server.app.router
    if not any(getattr(r.resource, "canonical", None) == LAUNCHER_PATH for r in router.routes()):
        router.add_post(LAUNCHER_PATH, launcher)


def _bound_messages(limit: int) -> None:
    """Cap what a message may declare (wslink sets 4 GB after login and allocates it at once)."""
    lift = chunking.UnChunker.set_max_message_size
    if getattr(lift, "bounded_by_fabrik3d", False):
        return

    def bounded(self: chunking.UnChunker, size: int) -> None:
        lift(self, min(size, limit))

    bounded.bounded_by_fabrik3d = True  # type: ignore[attr-defined]
    chunking.UnChunker.set_max_message_size = bounded  # type: ignore[method-assign]


def page_trigger(name: str) -> Callable[[Callable[..., Any]], Any]:
    """trame's ``@trigger(name)``, with the page's arguments bound to the method's parameters first:
    a call with too few, too many or unknown arguments sets ``error_message`` and does nothing."""

    def register(method: Callable[..., Any]) -> Any:
        signature = inspect.signature(method)

        def bound(self: Any, args: Any, kwargs: Any) -> bool:
            try:
                signature.bind(self, *args, **kwargs)
            except TypeError as exc:
                self.report(f"{name}: {exc}")
                return False
            return True

        def failed(self: Any, exc: Exception) -> None:  # (the one place a page's call fails: the server stays up)
            self.report(failure(name, exc))
            with_state_restored(self)

        if inspect.iscoroutinefunction(method):  # (slow work awaited off the event loop: a picture)

            @functools.wraps(method)
            async def waited(self: Any, *args: Any, **kwargs: Any) -> Any:
                if not bound(self, args, kwargs):
                    return None
                try:
                    return await method(self, *args, **kwargs)
                except Exception as exc:
                    failed(self, exc)
                    return None
                finally:
                    self.state.flush()  # (what changed after the first await goes now)

            return trigger(name)(waited)

        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not bound(self, args, kwargs):
                return None
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                failed(self, exc)
                return None

        return trigger(name)(call)

    return register


def failure(name: str, exc: Exception) -> str:
    """The one line the panel shows for an action ``name`` that raised ``exc``: a ``ValueError``'s
    own message (it names the problem), anything else logged with its traceback and named as an
    internal error; at most ``MESSAGE_CHARS`` characters."""
    if isinstance(exc, ValueError):
        text = str(exc)
    elif isinstance(exc, OSError):  # (the machine's answer: a folder's permissions, a name too long)
        where = f" ({exc.filename})" if exc.filename else ""
        text = f"{name}: {exc.strerror or exc}{where}"
    else:
        log.error("action %s failed", name, exc_info=exc)
        text = f"{name}: internal error: {type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."


def with_state_restored(app: Any) -> None:
    """After a failed action, the app's state published again, so that the panel shows the server's
    values, not what the page sent (an app without ``_publish`` has nothing to restore)."""
    publish = getattr(app, "_publish", None)
    if publish is None:
        return
    try:
        publish()
    except Exception:  # (a state that cannot be shown is logged; the server stays up)
        log.exception("publishing the state after a failed action")


def switched(app: Any, name: str, value: Any, was: bool) -> bool | None:
    """A switch's new value as the page wrote it in state ``name``: ``value`` when it is a boolean;
    else the switch is put back to ``was``, the problem shown, and None (nothing to do)."""
    if isinstance(value, bool):
        return value
    app.state[name] = was
    app.report(f"{name}: expected true or false, got {str(value)[:40]!r}")
    return None


class OwnedState:
    """The values of ``SERVER_OWNED`` keys the server last set in trame's ``state``, to put back what
    a page writes over them (closing the error banner, which empties ``error_message``, is allowed)."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.values: dict[str, Any] = {}

    def set(self, values: dict[str, Any]) -> None:
        """Set server-owned keys (remembered) in the state."""
        self.values.update(values)
        self.state.update(values)

    def refuse_writes(self, state: dict[str, Any]) -> None:
        """Put back every owned key whose value in ``state`` is not the one the server set, and say so."""
        if state.get("error_message", None) == "":
            self.values["error_message"] = ""
        # (a key that a watcher run first in this flush, a panel's, set again since ``state`` was read holds
        # the server's value: no page's write)
        wrong = sorted(k for k, v in self.values.items() if state.get(k, v) != v and self.state[k] != v)
        if wrong:
            self.state.update({k: self.values[k] for k in wrong})
            self.set({"error_message": f"{', '.join(wrong)}: set by the server, a page cannot change it"})
