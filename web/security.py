"""What keeps other web sites out of the local app (docs/web.md, "Threat model").

The app is for one user on their own machine. Any page that user opens in a browser can try to
talk to it on 127.0.0.1, so:

* each launch draws a random secret (``new_secret``); only the page opened with it in its URL
  (``page_url``, which ``serve`` prints and opens) can log in, as Jupyter's token does;
  wslink refuses every call before that login, so nothing of the state leaves the server;
* a websocket upgrade whose ``Origin`` is not the page's own is refused with 403 before any
  message (a browser always sends its page's origin);
* a message may declare at most ``MAX_MESSAGE_BYTES`` before anything is allocated for it (wslink
  lifts its limit to 4 GB once a client is logged in).
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Any

from aiohttp import web
from wslink import chunking

# The secret's randomness, bytes (URL-safe base64 text of about 4/3 that many characters).
SECRET_BYTES = 24
# Largest message a logged-in page may send: an uploaded scene (2 MiB) as base64, with room.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


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


def _bound_messages(limit: int) -> None:
    """Cap what a message may declare (wslink sets 4 GB after login and allocates it at once)."""
    lift = chunking.UnChunker.set_max_message_size
    if getattr(lift, "bounded_by_fabrik3d", False):
        return

    def bounded(self: chunking.UnChunker, size: int) -> None:
        lift(self, min(size, limit))

    bounded.bounded_by_fabrik3d = True  # type: ignore[attr-defined]
    chunking.UnChunker.set_max_message_size = bounded  # type: ignore[method-assign]
