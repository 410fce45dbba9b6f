"""The local server refuses other web sites (issue 15): a random secret per launch, the page's own
origin only, bounded messages. A raw websocket client and a real page served from another local
port try what an attacker's page would."""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from conftest import require_executable
from helpers import web as wh

aiohttp = pytest.importorskip("aiohttp")


@pytest.fixture(scope="module")
def server() -> Iterator[wh.WebServer]:
    with wh.WebServer() as s:
        yield s


def frame(message: dict[str, Any], declared: int | None = None) -> bytes:
    """One wslink binary frame: a 12-byte chunk header (id, offset, total size) and msgpack."""
    body = msgpack.packb(message)
    size = len(body) if declared is None else declared
    return (7).to_bytes(4, "little") + (0).to_bytes(4, "little") + size.to_bytes(4, "little") + body


def hello(secret: str | None) -> bytes:
    args = [{"secret": secret}] if secret is not None else [{}]
    return frame({"wslink": "1.0", "id": "system:c0:0", "method": "wslink.hello", "args": args, "kwargs": {}})


STATE_CALL = frame({"wslink": "1.0", "id": "rpc:c0:1", "method": "trame.state.get", "args": [], "kwargs": {}})


async def exchange(url: str, frames: list[bytes], origin: str | None = None) -> list[dict[str, Any]]:
    """Send ``frames`` on a websocket to the app; every reply the server sent within a second."""
    headers = {"Origin": origin} if origin else {}
    replies: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers=headers) as ws:
            for data in frames:
                await ws.send_bytes(data)
            try:
                while True:
                    msg = await asyncio.wait_for(ws.receive(), 1.0)
                    if msg.type != aiohttp.WSMsgType.BINARY:
                        break
                    replies.append(msgpack.unpackb(msg.data[12:]))
            except asyncio.TimeoutError:
                pass
    return replies


def ws_url(server: wh.WebServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


def test_the_url_carries_a_random_secret_per_launch(server: wh.WebServer) -> None:
    assert len(server.secret) >= 30 and server.url.endswith(f"/?secret={server.secret}")
    with wh.WebServer() as other:
        assert other.secret != server.secret


@pytest.mark.parametrize("origin", ["http://127.0.0.1:9", "http://evil.example", "null"])
def test_a_foreign_origin_is_refused_before_any_message(server: wh.WebServer, origin: str) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as err:
        asyncio.run(exchange(ws_url(server), [hello(server.secret)], origin=origin))
    assert err.value.status == 403


@pytest.mark.parametrize("secret", [None, "", "wslink-secret", "wrong"], ids=["none", "empty", "default", "wrong"])
def test_no_state_without_the_secret(server: wh.WebServer, secret: str | None) -> None:
    replies = asyncio.run(exchange(ws_url(server), [hello(secret), STATE_CALL]))
    assert replies, "the server answers (with errors)"
    assert all("error" in r for r in replies), replies
    assert "joint_names" not in repr(replies) and "pose" not in repr(replies)


def test_the_secret_logs_in(server: wh.WebServer) -> None:
    own = f"http://127.0.0.1:{server.port}"
    replies = asyncio.run(exchange(ws_url(server), [hello(server.secret), STATE_CALL], origin=own))
    assert replies[0].get("result", {}).get("clientID"), replies
    assert "joint_names" in repr(replies)  # the state arrives only now


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_a_message_declaring_a_gigabyte_allocates_nothing(server: wh.WebServer) -> None:
    before = _rss_mb(server.proc.pid)
    huge = frame({"wslink": "1.0", "id": "rpc:c0:2", "method": "x", "args": [], "kwargs": {}}, declared=1 << 30)
    try:
        asyncio.run(exchange(ws_url(server), [hello(server.secret), huge]))
    except aiohttp.ClientError:
        pass  # the server may close the connection
    assert _rss_mb(server.proc.pid) - before < 100
    assert server.alive


def test_a_page_from_another_local_port_cannot_connect_or_change_the_state(server: wh.WebServer, tmp_path) -> None:
    require_executable("chromium", "apt-get install chromium")
    (tmp_path / "evil.html").write_text(
        """<!doctype html><script>
        window.result = new Promise((done) => {
          const ws = new WebSocket("ws://127.0.0.1:PORT/ws");
          ws.binaryType = "arraybuffer";
          ws.onopen = () => done("open");
          ws.onerror = () => done("error");
          ws.onclose = () => done("closed");
          setTimeout(() => done("timeout"), 5000);
        });
        </script>""".replace("PORT", str(server.port))
    )
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **k)  # noqa: E731
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        with wh.browser() as b:
            page = wh.open_page(b, server.url)
            pose = wh.get_state(page, "pose")
            attacker = b.new_page()
            attacker.goto(f"http://127.0.0.1:{evil.server_address[1]}/evil.html")
            assert attacker.evaluate("window.result") in ("error", "closed")
            assert wh.get_state(page, "pose") == pose
    finally:
        evil.shutdown()


# -- a logged-in page is still only a page -------------------------------------------------------------------
@pytest.fixture(scope="module")
def page(server: wh.WebServer) -> Iterator[Any]:
    require_executable("chromium", "apt-get install chromium")
    with wh.browser() as b:
        yield wh.open_page(b, server.url)


def set_state(page: Any, key: str, value: Any) -> None:
    page.evaluate("([k, v]) => window.trame.state.set(k, v)", [key, value])


def wait_for_error(page: Any, text: str) -> str:
    wh.wait_until(page, "(t) => (window.trame.state.get('error_message') || '').includes(t)", 15, arg=text)
    return wh.get_state(page, "error_message")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("pose", "garbage"),
        ("joint_names", []),
        ("iterations", -1),
        ("fps", 1e9),
        ("presets", ["x"]),
        ("character", {"name": "fake", "joints": 1}),
        ("timeline_playing", True),
    ],
)
def test_server_owned_state_is_put_back_and_reported(page: Any, key: str, value: Any) -> None:
    before = wh.get_state(page, key)
    set_state(page, key, value)
    assert f"{key}: set by the server, a page cannot change it" in wait_for_error(page, "set by the server")
    wh.wait_until(
        page, "([k, v]) => JSON.stringify(window.trame.state.get(k)) === JSON.stringify(v)", 15, [key, before]
    )
    set_state(page, "error_message", "")  # closing the banner is the user's to do
    wh.wait_until(page, "() => window.trame.state.get('error_message') === ''", 15)


def test_a_key_a_panel_sets_in_the_same_flush_is_no_page_write() -> None:
    """A panel's watcher that runs before the app's guard (a component's are registered first: issue 52) and
    sets a server-owned key (the copy chip's scope when the grabbed handle changes) is the server's doing;
    a page's write of that key is still put back and reported."""
    from fabrik3d_web.security import OwnedState
    from trame.app import get_server

    state = get_server("fabrik3d-test-owned-state", client_type="vue3").state
    state.ready()
    owned = OwnedState(state)
    owned.set({"selected_effector": "", "copy_scope": "the whole pose"})
    state.flush()
    state.change("selected_effector")(lambda selected_effector, **_: owned.set({"copy_scope": selected_effector}))
    state.change("selected_effector", "copy_scope", "error_message")(lambda **values: owned.refuse_writes(values))
    owned.set({"selected_effector": "hand_l"})
    state.flush()
    assert state.copy_scope == "hand_l" and not state.error_message
    state.copy_scope = "the left leg"  # (as a page writes it)
    state.flush()
    assert (
        state.copy_scope == "hand_l" and state.error_message == "copy_scope: set by the server, a page cannot change it"
    )


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("type_coordinate", [], "type_coordinate: missing a required argument"),
        ("type_coordinate", ["hand_l", 0, "1", 2, 3], "type_coordinate: too many positional arguments"),
        ("target_screen_position", [], "target_screen_position: missing a required argument"),
        ("undo", [1, 2, 3], "undo: too many positional arguments"),
        ("export_pose_glb", [{}], "export_pose_glb: too many positional arguments"),
        ("type_coordinate", ["hand_l", True, "1.2"], "axis: expected 0, 1 or 2, got True"),
        ("type_coordinate", ["hand_l", 0, True], "hand_l.x: expected the typed text or a number, got True"),
        ("go_to_frame", [], "go_to_frame: missing a required argument"),
        ("go_to_frame", ["abc"], "frame: expected a frame number, got 'abc'"),
        ("go_to_frame", [-3], "frame: frame -3 is outside"),
        ("export_picture", [], "export_picture: missing a required argument"),
        ("export_picture", [{"width": 1e9}], "picture width: expected a whole number of pixels from 16 to 4096"),
        ("export_picture", ["big"], "picture: expected the picture's settings as an object"),
    ],
)
def test_triggers_check_their_arguments(page: Any, name: str, args: list[Any], message: str) -> None:
    pose = wh.get_state(page, "pose")
    wh.trigger(page, name, args)
    assert message in wait_for_error(page, message)
    assert wh.get_state(page, "pose") == pose
    set_state(page, "error_message", "")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("max_iterations", "1e999", "max_iterations must be finite numbers"),
        ("max_iterations", "Infinity", "max_iterations must be finite numbers"),
        ("targets", {"hand_l": ["0.5", "1.2", "0.3"]}, "targets.hand_l"),
        ("targets", {"hand_l": [True, 1.2, 0.3]}, "targets.hand_l"),
        ("limit_joints", [f"j{i}" for i in range(100_000)], "limit_joints: only joints with limits"),
    ],
)
def test_bad_values_from_a_page_are_refused(page: Any, key: str, value: Any, message: str) -> None:
    pose = wh.get_state(page, "pose")
    set_state(page, key, value)
    assert message in wait_for_error(page, message)
    assert wh.get_state(page, "pose") == pose
    set_state(page, "error_message", "")
