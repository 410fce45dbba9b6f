"""The view's still image waits for the messages of the turn that asked for it (issue 53, item 13).

A page's call (a key edit, a typed coordinate) changes state and asks for a full-size still image. The
render took 40-100 ms, and it ran before the state's message was written: the page saw its new keys 100 ms
after the call's answer even with nothing else to do. ``ImageDelivery.still_soon`` now waits until wslink's
network monitor (the real one, as ``fabrik3d serve`` has it) counts no message pending, for at most
``STILL_WAIT_S``. These tests run the app's real delivery on a real event loop; what the page sees is
``benchmarks/bench_two_pages.py``'s key edit row.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from fabrik3d_web.app import WebApp
from fabrik3d_web.view import delivery as dv
from trame.app import get_server
from wslink.websocket import NetworkMonitor


@pytest.fixture
def app() -> WebApp:
    out = WebApp(server=get_server(f"fabrik3d-test-still-{np.random.randint(1 << 30)}", client_type="vue3"))
    out.server.context.network_monitor = NetworkMonitor()  # (as wslink gives a served app)
    return out


def test_the_still_image_is_rendered_after_the_turns_messages_are_sent(app: WebApp) -> None:
    monitor, order = app.server.context.network_monitor, []

    async def turn() -> None:
        monitor.on_enter()  # (a state message published by this turn, not written yet)
        app.delivery.still_soon(lambda: order.append("still"))
        app.delivery.still_soon(lambda: order.append("still, asked again"))  # (one render for the turn)
        for _ in range(5):
            await asyncio.sleep(0)
        order.append("sent")
        monitor.on_exit()
        monitor.network_call_completed()
        await asyncio.sleep(0.05)

    asyncio.run(turn())
    assert order == ["sent", "still, asked again"]


def test_a_message_never_sent_holds_the_still_image_back_no_longer_than_its_wait(app: WebApp, monkeypatch) -> None:
    monkeypatch.setattr(dv, "STILL_WAIT_S", 0.05)
    monitor, order = app.server.context.network_monitor, []

    async def turn() -> float:
        loop = asyncio.get_running_loop()
        monitor.on_enter()  # (a page that stopped reading: its message stays pending)
        t0 = loop.time()
        app.delivery.still_soon(lambda: order.append(loop.time() - t0))
        await asyncio.sleep(0.5)
        return loop.time() - t0

    asyncio.run(turn())
    assert len(order) == 1 and 0.04 <= order[0] < 0.4


def test_without_a_pending_message_the_still_image_comes_in_the_next_turns(app: WebApp) -> None:
    order = []

    async def turn() -> None:
        app.delivery.still_soon(lambda: order.append("still"))
        assert order == []  # (not in the asking turn: its answer leaves first)
        for _ in range(4):
            await asyncio.sleep(0)

    asyncio.run(turn())
    assert order == ["still"]


def test_in_process_without_a_loop_the_still_image_is_rendered_at_once(app: WebApp) -> None:
    order = []
    app.delivery.still_soon(lambda: order.append("still"))
    assert order == ["still"]
