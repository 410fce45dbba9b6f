"""Two pages on one server (issue 53, items 11 and 13): how long one page waits while the other works.

Starts ``fabrik3d serve`` (the humanoid) on 127.0.0.1 and two pages in Debian's headless chromium
(playwright's async API, each page its own browser context), A and B, and measures on B:

* a hand's drag, per move: the time from a mouse move (the page's ``mousemove`` event) to the view's
  next image in the page (as ``bench_web.py``: each measured move follows an unsent primer move 40 ms
  before it and 350 ms of rest after it), with A idle (the baseline) and while A renders 4096 x 4096
  transparent pictures in a loop (the trigger of the "Picture .png" button, one after another);
* a key edit: the time from the ``set_key`` call in the page to its answer there (the call's promise
  resolved and ``key_frames`` holding the frame), with A idle, and while A works in a loop: a hand
  dragged in a circle, the timeline scrubbed, a 4096 x 4096 transparent picture;
* a key edit on the page whose own picture is pending, asked as the Picture .png button asks it
  (``start_picture``, which answers at once with an id, then ``take_picture`` once the id is in
  ``pictures_done``): a page's calls reach the server over one websocket, which wslink reads one
  message at a time, so with one call for the whole picture they waited for it.

Memory: the server's resident memory (``/proc``, sampled every 50 ms, and its peak ``VmHWM`` reset
first) before the pictures and at its peak while they render. Aims (issue 53): a drag's p95 at most
150 ms while the other page renders pictures; a key edit's p95 at most 150 ms while the other page
works; at most 1 GB of extra memory for a 4096 transparent picture. Checks (exit 1): every picture
an RGBA PNG of the size asked, the drags moved the hand, the key edits made their keys, the server
still answers. ``--quick``: 1024 x 1024 pictures and a few moves and edits (timings meaningless).

Run: ``python benchmarks/bench_two_pages.py [--quick]``.
"""

# needs: chromium

from __future__ import annotations

import asyncio
import math
import os
import sys
from pathlib import Path
from typing import Any

import common
import numpy as np
from helpers import web as wh

PRIMER = 0.04  # seconds between the unsent primer move and the measured move
REST = 0.35  # seconds of rest after each measured move (and between key edits)
AIM_MS = 150.0
AIM_MB = 1024.0
HEADERS = ["action on B", "page A meanwhile", "n", "ms p50", "ms p95", "ms max", "p95 vs idle"]

# Page A's picture loop: one picture after another (each awaited, as a user clicking again) until
# ``window.__pictures.on`` is false; each answer's milliseconds and PNG header kept.
PICTURE_LOOP_JS = """(settings) => {
  const run = window.__pictures = {on: true, done: false, ms: [], headers: [], errors: []};
  (async () => {
    while (run.on) {
      const t = performance.now();
      try {
        const d = await window.trame.trigger('export_picture', [settings]);
        run.ms.push(performance.now() - t);
        run.headers.push(window.__pngHeader(d));
      } catch (e) { run.errors.push(String(e)); }
    }
    run.done = true;
  })();
  return true;
}"""
# [width, height, bit depth, colour type] of a PNG (an ArrayBuffer or a typed array), or null.
PNG_HEADER_JS = """() => {
  window.__startAndTake = async (settings) => {
    const t = window.trame, id = await t.trigger('start_picture', [settings, 'picture']);
    while (!(t.state.get('pictures_done') || []).includes(id)) await new Promise((ok) => setTimeout(ok, 50));
    return t.trigger('take_picture', [id]);
  };
  window.__pngHeader = (d) => {
    if (!d) return null;
    const u8 = d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
    const sig = [137, 80, 78, 71, 13, 10, 26, 10];
    if (u8.length < 26 || sig.some((b, k) => u8[k] !== b)) return null;
    const v = new DataView(u8.buffer, u8.byteOffset, 26);
    return [v.getUint32(16), v.getUint32(20), u8[24], u8[25]];
  };
  return true;
}"""
# A key edit: milliseconds from the call to its answer in the page.
KEY_EDIT_JS = """async (frame) => {
  const t = performance.now();
  await window.trame.trigger('set_key');
  while (frame != null && !(window.trame.state.get('key_frames') || []).includes(frame)) {
    if (performance.now() - t > 60000) throw new Error('no key at ' + frame + ' in key_frames after 60 s');
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - t;
}"""  # (a frame given: until the page's key_frames holds it, the state pushed after the call's answer)


def status_mb(pid: int, field: str) -> float:
    """A field of ``/proc/PID/status`` (``VmRSS``, ``VmHWM``), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return math.nan


async def wait_until(page: Any, expr: str, timeout: float = 30.0, arg: Any = None) -> None:
    await page.wait_for_function(expr, arg=arg, timeout=timeout * 1000, polling=20)


async def trigger(page: Any, name: str, args: list[Any] | None = None, timeout: float = 60.0) -> Any:
    return await page.evaluate(
        """([name, args, ms]) => Promise.race([window.trame.trigger(name, args),
             new Promise((_, reject) => setTimeout(() => reject(new Error('trigger ' + name + ' timed out')), ms))])""",
        [name, args or [], int(timeout * 1000)],
    )


async def open_page(browser: Any, url: str) -> Any:
    page = await browser.new_page(viewport=wh.VIEWPORT)
    page.set_default_timeout(120_000)
    await page.goto(url)
    await wait_until(page, "window.trame && window.trame.state && window.trame.state.get('joint_names')", 60)
    await page.wait_for_selector("#view3d img[src]", state="attached")
    await page.evaluate(wh.INSTRUMENT_JS)
    await page.evaluate(PNG_HEADER_JS)
    return page


async def handle_point(page: Any, name: str) -> tuple[float, float]:
    box = await page.locator("#view3d").bounding_box()
    x, y = await trigger(page, "target_screen_position", [name])
    return box["x"] + x, box["y"] + y


async def settle(page: Any) -> None:
    await wait_until(page, "() => performance.now() - (window.__fabrik.frames.at(-1) || 0) > 400")


async def hand_point(page: Any) -> np.ndarray:
    """The left hand's joint in the page's pose."""
    names, pose = await page.evaluate("[window.trame.state.get('joint_names'), window.trame.state.get('pose')]")
    return np.array(pose[names.index("hand_l")], dtype=float)


async def stall_report(page: Any, server: Any, moved: float) -> str:
    """What a page that waited in vain for an image sees, and where the server is: whether it answers a
    call within 10 s, the page's last images, and every thread's stack in the server (``WebServer.stacks``)."""
    try:
        answer = f"answers a call: {await trigger(page, 'target_screen_position', ['hand_l'], timeout=10.0)}"
    except Exception as exc:  # (the report says what happened, whatever it was)
        answer = f"does not answer a call within 10 s ({exc})"
    frames = await page.evaluate("window.__fabrik.frames.slice(-3)")
    now = await page.evaluate("performance.now()")
    return (
        f"no image after the move at {moved:.0f} ms (page time {now:.0f} ms; last images at {frames}); "
        f"the server {answer}\n--- the server's threads and log ---\n{server.stacks()}"
    )


async def drag_latencies(page: Any, count: int, rest: np.ndarray, server: Any) -> tuple[list[float], float]:
    """Milliseconds from each of ``count`` measured moves of the left hand's handle to the next image
    (a zigzag from the rest pose: in towards the body and back, 12 moves each way), and how far the
    hand moved (scene units, the pose after the drag against ``rest``, the hand's joint at rest)."""
    await trigger(page, "reset_pose")
    await settle(page)
    x, y = await handle_point(page, "hand_l")
    await page.mouse.move(x, y)
    await page.mouse.down()
    await asyncio.sleep(REST)
    out = []
    try:
        for k in range(count):
            sign = 1.0 if (k // 12) % 2 == 0 else -1.0
            step = (-3.0 * sign, 4.0 * sign)
            await page.mouse.move(x + 0.3 * step[0], y + 0.3 * step[1])  # primer
            await asyncio.sleep(PRIMER)
            x, y = x + step[0], y + step[1]
            await page.mouse.move(x, y)
            moved = await page.evaluate("window.__fabrik.moves.at(-1)")
            try:
                await wait_until(page, "(t) => window.__fabrik.frames.some((f) => f > t)", 60.0, moved)
            except Exception:  # (playwright's timeout: where the image stayed, for the failure's message)
                raise RuntimeError(await stall_report(page, server, moved)) from None
            first = await page.evaluate("(t) => window.__fabrik.frames.find((f) => f > t)", moved)
            out.append(first - moved)
            await asyncio.sleep(REST)
    finally:
        await page.mouse.up()
    await settle(page)
    return out, float(np.linalg.norm(await hand_point(page) - rest))


async def key_latencies(page: Any, count: int, first_frame: int | None) -> list[float]:
    """Milliseconds of ``count`` key edits (``KEY_EDIT_JS``): at frames from ``first_frame`` on (each shown
    first), or at whatever frame is shown (``None``: the other page scrubs the timeline the pages share)."""
    out = []
    for k in range(count):
        frame = None if first_frame is None else first_frame + k
        if frame is not None:
            await page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
            await wait_until(page, f"() => window.trame.state.get('frame_shown') === {frame}", 60.0)
        out.append(await page.evaluate(KEY_EDIT_JS, frame))
        await asyncio.sleep(REST)
    return out


async def key_frames(page: Any) -> list[int]:
    return list(await page.evaluate("window.trame.state.get('key_frames')") or [])


async def busy_page(page: Any, settings: dict[str, Any], stop: asyncio.Event, headers: list[Any]) -> int:
    """Page A's work until ``stop``: a hand dragged in a circle, the timeline scrubbed, a picture; the
    pictures' PNG headers appended to ``headers``. Returns the rounds made."""
    rounds = 0
    while not stop.is_set():
        x, y = await handle_point(page, "hand_r")
        await page.mouse.move(x, y)
        await page.mouse.down()
        for a in np.linspace(0.0, 2.0 * math.pi, 17)[1:]:
            await page.mouse.move(x + 30.0 * math.sin(a), y + 30.0 * (1.0 - math.cos(a)))
            await asyncio.sleep(0.03)
        await page.mouse.up()
        await trigger(page, "begin_scrub")
        for frame in range(0, 61, 6):
            await page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
            await asyncio.sleep(0.03)
        await trigger(page, "end_scrub")
        data = await page.evaluate(
            "async (s) => window.__pngHeader(await window.trame.trigger('export_picture', [s]))", settings
        )
        headers.append(data)
        rounds += 1
    return rounds


async def sample_rss(pid: int, samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(status_mb(pid, "VmRSS"))
        await asyncio.sleep(0.05)


def reset_peak(pid: int) -> bool:
    """Reset the process's ``VmHWM`` to its current RSS (Linux ``clear_refs``); whether it worked."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


async def measure(args: Any) -> tuple[list[list[Any]], list[list[Any]], list[str], common.Checks]:
    from playwright.async_api import async_playwright

    side = 1024 if args.quick else 4096
    moves = 4 if args.quick else 40
    edits = 3 if args.quick else 30
    settings = {"width": side, "height": side, "background": "transparent"}
    picture = f"{side} x {side} transparent pictures"
    checks = common.Checks()
    lines: list[str] = []
    latencies: dict[tuple[str, str], list[float]] = {}
    memory: list[list[Any]] = []
    with wh.WebServer() as server:
        pid = server.proc.pid
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=wh.CHROMIUM, args=wh.CHROMIUM_FLAGS, timeout=60_000)
            try:
                a = await open_page(browser, server.url)
                b = await open_page(browser, server.url)
                await settle(b)
                rest = await hand_point(b)
                # (a) a drag on B, A idle, then A rendering pictures in a loop
                drag = "drag a hand (per move)"
                latencies[drag, "idle"], moved_idle = await drag_latencies(b, moves, rest, server)
                before = status_mb(pid, "VmRSS")
                peak_reset = reset_peak(pid)
                rss: list[float] = []
                stop = asyncio.Event()
                sampler = asyncio.ensure_future(sample_rss(pid, rss, stop))
                await a.evaluate(PICTURE_LOOP_JS, settings)
                latencies[drag, f"{picture} in a loop"], moved_busy = await drag_latencies(b, moves, rest, server)
                await a.evaluate("() => { window.__pictures.on = false; }")
                await wait_until(a, "() => window.__pictures.done", 120.0)
                stop.set()
                await sampler
                run = await a.evaluate("() => window.__pictures")
                peak = max([*rss, status_mb(pid, "VmHWM") if peak_reset else 0.0])
                memory.append([f"{len(run['ms'])} {picture}", before, peak, peak - before])
                headers = list(run["headers"])
                if run["ms"]:
                    lines.append(
                        f"page A's pictures, ms each (call to answer): p50 {np.median(run['ms']):.0f}, "
                        f"max {max(run['ms']):.0f}"
                    )
                lines.append(
                    checks.line(
                        "the drags moved the hand",
                        min(moved_idle, moved_busy) > 0.01,
                        f"{moved_idle:.3f} and {moved_busy:.3f} from rest",
                    )
                )
                # (b) a key edit on B, A idle, then A dragging, scrubbing and rendering in a loop
                key = "key edit (set_key)"
                latencies[key, "idle"] = await key_latencies(b, edits, 1)
                made_idle = set(range(1, 1 + edits)) <= set(await key_frames(b))
                stop = asyncio.Event()
                busy = asyncio.ensure_future(busy_page(a, settings, stop, headers))
                await asyncio.sleep(0.5)
                latencies[key, "drags, scrubs, pictures"] = await key_latencies(b, edits, None)
                stop.set()
                rounds = await busy
                lines.append(f"page A's rounds (a drag, a scrub, a picture) meanwhile: {rounds}")
                # the page whose own picture is pending, asked as its button asks it (start, then take)
                own = []
                for _ in range(1 if args.quick else 3):
                    await b.evaluate("(s) => { window.__own = window.__startAndTake(s); return true; }", settings)
                    own.append(await b.evaluate(KEY_EDIT_JS, None))
                    headers.append(await b.evaluate("async () => window.__pngHeader(await window.__own)"))
                latencies["key edit, own picture pending", "(page B's own picture)"] = own
                keys = await key_frames(b)
                lines.append(checks.line("the key edits made their keys", made_idle, f"keys at {keys[:8]}..."))
                expected = [side, side, 8, 6]
                good = sum(h == expected for h in headers)
                lines.append(
                    checks.line(
                        "every picture an RGBA PNG of the size asked",
                        good == len(headers) > 0 and not run["errors"],
                        f"{good} of {len(headers)} {side} x {side} x 8-bit RGBA; errors {run['errors'][:1]}",
                    )
                )
                error = await b.evaluate("window.trame.state.get('error_message')")
                lines.append(checks.line("no error shown", not error, repr(error or "")))
            finally:
                await browser.close()
        lines.append(checks.line("the server still answers", server.alive, server.url))
    rows = []
    for (action, other), ms in latencies.items():
        idle = latencies.get((action, "idle"))
        p95 = float(np.percentile(ms, 95))
        vs = common.ratio(p95, float(np.percentile(idle, 95))) if idle and action != other else "-"
        rows.append([action, other, len(ms), float(np.median(ms)), p95, float(max(ms)), vs])
    return rows, memory, lines, checks


def main() -> int:
    args = common.parse_args(__doc__, repeats=1)
    common.print_header("Two pages on one server: what one page waits while the other works", args)
    rows, memory, lines, checks = asyncio.run(measure(args))
    print(common.format_table(HEADERS, rows))
    print()
    print("server memory while page A's pictures render (MB):")
    print(common.format_table(["pictures", "RSS before", "peak", "growth"], memory))
    print()
    print(f"load average after the run : {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for line in lines:
        print(line)
    print()
    drag = next(r for r in rows if r[0].startswith("drag") and r[1] != "idle")
    key = next(r for r in rows if r[0].startswith("key edit (") and r[1] != "idle")
    print(common.aim_line(f"p95 of a drag's move to its image on B, A: {drag[1]}", drag[4], AIM_MS, " ms"))
    print(common.aim_line(f"p95 of a key edit on B, A: {key[1]}", key[4], AIM_MS, " ms"))
    print(common.aim_line(f"server RSS growth during {memory[0][0]}", memory[0][3], AIM_MB, " MB"))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
