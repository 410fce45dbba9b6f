"""Helpers for the web UI's end-to-end tests and benchmark: a real server, a real headless chromium.

``WebServer`` runs ``python -m fabrik3d.cli serve --no-browser`` on a free port of
127.0.0.1 in a subprocess and always stops it; ``open_page`` loads the app in
playwright's chromium and waits (bounded) for the first rendered frame. Every wait
here has a timeout: a dead server fails a test, it never hangs it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# Flags that work for Debian's chromium in a container without a GPU or network.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1280, "height": 800}

# In-page probes: image frames of the 3D view and mouse moves, as performance.now(). A frame is an image
# drawn in the view's canvas (``fabrik-image``, fabrik3d_web.view.view_js.IMAGES_JS), or before the canvas
# took over, a load of trame-vtk's <img>.
INSTRUMENT_JS = """() => {
  if (window.__fabrik) return true;
  window.__fabrik = {frames: [], moves: []};
  const view = document.querySelector('#view3d');
  view.addEventListener('fabrik-image', () => window.__fabrik.frames.push(performance.now()));
  view.addEventListener('load', (e) => {
    const drawn = window.fabrikView && window.fabrikView.images;
    if (e.target.tagName === 'IMG' && e.target.src.startsWith('blob:') && !drawn)
      window.__fabrik.frames.push(performance.now());
  }, true);
  window.addEventListener('mousemove', () => window.__fabrik.moves.push(performance.now()), true);
  return true;
}"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class WebServer:
    """``fabrik3d serve`` in a subprocess on 127.0.0.1 (a context manager; always stopped).

    Args:
        args: extra arguments for ``fabrik3d serve`` (e.g. ``["--preset", "robot_arm"]``).
        timeout: seconds to wait for the page to answer.
    """

    def __init__(self, args: Sequence[str] = (), timeout: float = 60.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"  # until the server prints it with its secret
        self.secret = ""
        self.log = tempfile.NamedTemporaryFile(prefix="fabrik3d-serve-", suffix=".log", delete=False)
        cmd = [sys.executable, "-m", "fabrik3d.cli", "serve", "--no-browser", "--port", str(self.port), *args]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            self._wait(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait(self, timeout: float) -> None:
        """Until the server printed its page URL (with the launch's secret) and answers it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.output()}")
            found = re.search(r"the web UI is at (http://\S+/\?secret=(\S+))", self.output())
            if found is None:
                time.sleep(0.2)
                continue
            self.url, self.secret = found.group(1), found.group(2)
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(self.url, timeout=2) as reply:
                    if reply.status == 200:
                        return
            time.sleep(0.2)
        raise TimeoutError(f"server did not answer within {timeout} s:\n{self.output()}")

    @property
    def alive(self) -> bool:
        """Whether the process still runs and answers HTTP."""
        if self.proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(self.url, timeout=5) as reply:
                return reply.status == 200
        except OSError:
            return False

    def output(self, chars: int = 4000) -> str:
        """What the server printed so far (its last ``chars`` characters)."""
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-chars:]

    def stacks(self) -> str:
        """Every thread's Python stack in the server now (``SIGUSR1``: ``fabrik3d_web.serve``), with what
        it printed before (the end of it): where a server that stopped answering waits."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGUSR1)
            time.sleep(1.0)
        return self.output(20000)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far (Linux ``/proc``), seconds."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and remove its log."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)

    def __enter__(self) -> WebServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """Debian's headless chromium through playwright (never a downloaded browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True, timeout=60_000)
        try:
            yield b
        finally:
            b.close()


def open_page(b: Any, url: str, timeout: float = 60.0, viewport: dict[str, int] | None = None) -> Any:
    """A new page on the app (``viewport``: its size, default ``VIEWPORT``), after the first frame of the
    3D view arrived (bounded). ``b``: a browser, or a browser context (whose size the page takes)."""
    if hasattr(b, "new_context"):
        page = b.new_page(viewport=viewport or VIEWPORT, accept_downloads=True)
    else:
        page = b.new_page()
    page.set_default_timeout(timeout * 1000)
    page.goto(url, timeout=timeout * 1000)
    page.wait_for_function(
        "window.trame && window.trame.state && window.trame.state.get('joint_names')", timeout=timeout * 1000
    )
    page.wait_for_selector("#view3d img[src]", state="attached", timeout=timeout * 1000)
    page.evaluate(INSTRUMENT_JS)
    wait_until(page, "window.__fabrik.frames.length > 0 || document.querySelector('#view3d img').complete", timeout)
    return page


@contextlib.contextmanager
def served_page() -> Iterator[Any]:
    """A page on a fresh ``fabrik3d serve`` (humanoid) in headless chromium; the server must
    still be alive when the page is done with."""
    with WebServer() as srv, browser() as b:
        yield open_page(b, srv.url)
        assert srv.alive, srv.output()


def get_state(page: Any, key: str) -> Any:
    """``window.trame.state.get(key)``."""
    return page.evaluate("(k) => window.trame.state.get(k)", key)


def trigger(page: Any, name: str, args: Sequence[Any] = (), timeout: float = 15.0) -> Any:
    """``await window.trame.trigger(name, args)``, failing after ``timeout`` seconds."""
    return page.evaluate(
        """([name, args, ms]) => Promise.race([
             window.trame.trigger(name, args),
             new Promise((_, reject) => setTimeout(() => reject(new Error('trigger ' + name + ' timed out')), ms)),
           ])""",
        [name, list(args), int(timeout * 1000)],
    )


def wait_until(page: Any, js_condition: str, timeout: float = 15.0, arg: Any = None) -> None:
    """Poll a JS expression (or arrow function taking ``arg``) until truthy; ``TimeoutError`` after ``timeout``."""
    expr = js_condition if js_condition.lstrip().startswith(("(", "async")) else f"() => ({js_condition})"
    page.wait_for_function(expr, arg=arg, timeout=timeout * 1000, polling=50)


def view_box(page: Any) -> dict[str, float]:
    """The 3D view's bounding box in page CSS pixels (x, y, width, height)."""
    box = page.locator("#view3d").bounding_box(timeout=10_000)
    assert box is not None, "the 3D view is not on the page"
    return box


def handle_point(page: Any, name: str) -> tuple[float, float]:
    """Page coordinates (CSS pixels) of the handle of ``name``, from ``target_screen_position``."""
    box = view_box(page)
    x, y = trigger(page, "target_screen_position", [name])
    return box["x"] + x, box["y"] + y


def frame_count(page: Any) -> int:
    """How many frames of the 3D view the page received since it was instrumented."""
    return int(page.evaluate("window.__fabrik.frames.length"))


def settle(page: Any, since: float | None = None, quiet: float = 0.4, timeout: float = 10.0) -> None:
    """Wait until a frame newer than ``since`` (page ``performance.now()`` ms, if given) arrived and no
    new frame came for ``quiet`` seconds: the view shows its final, still image."""
    wait_until(
        page,
        """([since, ms]) => { const f = window.__fabrik.frames; const last = f.length ? f[f.length - 1] : 0;
             return (since === null || last > since) && performance.now() - last > ms; }""",
        timeout,
        arg=[since, quiet * 1000],
    )


def now(page: Any) -> float:
    """The page's clock, ``performance.now()`` in milliseconds."""
    return float(page.evaluate("performance.now()"))


def drag(page: Any, start: tuple[float, float], end: tuple[float, float], steps: int = 20, pause: float = 0.03) -> None:
    """A real mouse drag from ``start`` to ``end`` (page CSS pixels) in ``steps`` moves.

    Moves come ``pause`` seconds apart: vtk.js sends a move to the server only when it
    follows another within 200 ms, as a user's continuous drag does.
    """
    page.mouse.move(*start)
    page.mouse.down()
    for k in range(1, steps + 1):
        f = k / steps
        page.mouse.move(start[0] + f * (end[0] - start[0]), start[1] + f * (end[1] - start[1]))
        time.sleep(pause)
    page.mouse.up()


def behind(page: Any) -> None:
    """Wait until the server got through what the page sent so far: a short pause (the page sends the
    mouse's moves every few milliseconds, not at once), then a call's round trip (a loaded server answers
    it after the drag's events it received before it, whose state it pushed before its answer)."""
    page.wait_for_timeout(150)
    trigger(page, "joint_screen_position", ["pelvis"])


def drag_to(page: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A mouse drag from ``start`` to ``end`` (page pixels) in 20 moves, then three more a third of a pixel
    about ``end`` and the last on it, so that the server's last move is ``end`` whichever moves it missed;
    returns once the server answered a call made after the release (``behind``)."""
    page.mouse.move(*start)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(start[0] + k / 20 * (end[0] - start[0]), start[1] + k / 20 * (end[1] - start[1]))
        page.wait_for_timeout(30)
    for dx in (0.3, -0.3, 0.0):
        page.mouse.move(end[0] + dx, end[1])
        page.wait_for_timeout(30)
    page.mouse.up()
    behind(page)


# The side panel's tab (``data-tab``) and group (``data-group``, a collapsible section of a tab) that hold
# an element (fabrik3d_web.panels.drawer), and whether each is open.
_PLACE_JS = """(sel) => {
  const el = document.querySelector(sel);
  if (!el) return null;
  const tab = el.closest('[data-tab]'), group = el.closest('[data-group]');
  return {
    tab: tab ? tab.dataset.tab : null,
    tabOpen: !tab || tab.classList.contains('v-window-item--active'),
    group: group ? group.dataset.group : null,
    groupOpen: !group || group.classList.contains('v-expansion-panel--active'),
  };
}"""


def show_control(page: Any, selector: str, timeout: float = 15.0) -> Any:
    """``page.locator(selector)`` once the side panel shows it: its tab clicked, and its group (a
    collapsible section of the tab) opened, as a user would; a control outside the panel as it is."""
    wait_until(page, "(sel) => !!document.querySelector(sel)", timeout, arg=selector)
    place = page.evaluate(_PLACE_JS, selector)
    if not place["tabOpen"]:
        page.locator(f"#tab-{place['tab']}").click()
    if not place["groupOpen"]:
        page.locator(f"#group-{place['group']} .v-expansion-panel-title").click()
    shown = "(sel) => { const p = (" + _PLACE_JS + ")(sel); return p.tabOpen && p.groupOpen; }"
    wait_until(page, shown, timeout, arg=selector)
    return page.locator(selector)
