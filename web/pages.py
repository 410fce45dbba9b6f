"""Pages that leave: a tab closed (or crashed, or its network gone) ends what it left in progress.

trame calls ``on_client_exited`` from the page's ``beforeunload`` only, which a closed or crashed tab
need not run; wslink calls ``onClose`` of each link protocol when a page's connection closes, always.
``watch_closed_pages`` registers one that calls back on the server's loop (issue 33 item 8: a tab
closed mid-drag while another page is open left that page with no images: the drag held the stream).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from wslink.websocket import LinkProtocol

log = logging.getLogger("fabrik3d_web")


class ClosedPages(LinkProtocol):  # type: ignore[misc]
    """A wslink link protocol without RPCs: ``closed()`` after a page's connection closed."""

    def __init__(self, closed: Callable[[], None]) -> None:
        super().__init__()
        self.closed = closed

    def onClose(self, client_id: Any) -> None:  # noqa: N802 (wslink's name)
        try:
            asyncio.get_running_loop().call_soon(self._call)
        except RuntimeError:
            self._call()

    def _call(self) -> None:
        try:
            self.closed()
        except Exception:  # (a page's leaving never stops the server)
            log.exception("ending what a closed page left in progress failed")


def watch_closed_pages(server: Any, closed: Callable[[], None]) -> None:
    """Call ``closed()`` whenever a page's connection to ``server`` closes."""
    server.add_protocol_to_configure(lambda protocol: protocol.registerLinkProtocol(ClosedPages(closed)))
