"""Web UI benchmark: drag latency, frame rate and server CPU in headless chromium over loopback.

Starts ``fabrik3d serve`` (humanoid) on 127.0.0.1 and Debian's chromium (playwright,
``/usr/bin/chromium``, 1280 x 800), and drags with the real mouse in the 3D view:

* latency: the time from a mouse move (the page's ``mousemove`` event) to the first
  new image of the view after it (the ``load`` event of the view's ``<img>``). Each
  measured move follows an unsent "primer" move 40 ms before it (vtk.js sends a move
  only when it follows another within 200 ms) and is followed by 350 ms of rest, so
  that every image counted is the one the move produced;
* frames per second while the mouse moves continuously (a move every ~15 ms on a
  circle), and the server's CPU time (all threads, from /proc) per frame delivered.

Rows: orbiting the camera (the baseline: trame's remote rendering alone, no solve)
and dragging the left hand's handle (solve warm-started on every move, scene and
state updated); the ratio column is p50 latency against the baseline's.
Aims (issue 5): p50 latency at most 60 ms, at least 20 frames per second.

Run: ``python benchmarks/bench_web.py [--quick] [--repeats N]``.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Any

import common
import numpy as np

sys.path.insert(0, str(common.ROOT / "tests"))
import web_helpers as wh

PRIMER = 0.04  # seconds between the unsent primer move and the measured move
REST = 0.35  # seconds of rest after each measured move


def step_latencies(page: Any, start: tuple[float, float], step: tuple[float, float], count: int) -> list[float]:
    """Milliseconds from each of ``count`` measured moves to the next image, pressing the mouse at ``start``."""
    page.mouse.move(*start)
    page.mouse.down()
    time.sleep(REST)
    x, y = start
    out = []
    try:
        for _ in range(count):
            page.mouse.move(x + 0.3 * step[0], y + 0.3 * step[1])  # primer
            time.sleep(PRIMER)
            x, y = x + step[0], y + step[1]
            page.mouse.move(x, y)
            moved = page.evaluate("window.__fabrik.moves.at(-1)")
            wh.wait_until(page, "(t) => window.__fabrik.frames.some((f) => f > t)", timeout=5.0, arg=moved)
            first = page.evaluate("(t) => window.__fabrik.frames.find((f) => f > t)", moved)
            out.append(first - moved)
            time.sleep(REST)
    finally:
        page.mouse.up()
    time.sleep(REST)
    return out


def continuous(
    page: Any, server: wh.WebServer, start: tuple[float, float], center: tuple[float, float], seconds: float
) -> tuple[float, float, int]:
    """Frames per second and server CPU ms per frame during a continuous circular drag from ``start``."""
    page.mouse.move(*start)
    page.mouse.down()
    radius = math.dist(start, center)
    angle0 = math.atan2(start[1] - center[1], start[0] - center[0])
    try:
        time.sleep(0.1)
        frames0, cpu0, t0 = wh.frame_count(page), server.cpu_seconds(), time.perf_counter()
        k = 0
        while time.perf_counter() - t0 < seconds:
            k += 1
            a = angle0 + 0.05 * k
            page.mouse.move(center[0] + radius * math.cos(a), center[1] + radius * math.sin(a))
            time.sleep(0.015)
        elapsed = time.perf_counter() - t0
        frames, cpu = wh.frame_count(page) - frames0, server.cpu_seconds() - cpu0
    finally:
        page.mouse.up()
    time.sleep(REST)
    return frames / elapsed, 1e3 * cpu / max(frames, 1), k


def main() -> int:
    args = common.parse_args(__doc__)
    common.print_header("Web UI: drag latency and frame rate (headless chromium, loopback)", args)
    checks = common.Checks()
    count = 6 if args.quick else 25
    seconds = 1.5 if args.quick else 4.0
    results: dict[str, dict[str, list[float]]] = {}
    with wh.WebServer() as server, wh.browser() as browser:
        page = wh.open_page(browser, server.url)
        box = wh.view_box(page)
        names = wh.get_state(page, "joint_names")
        hand = names.index("hand_l")
        rest_hand = np.array(wh.get_state(page, "pose")[hand])
        empty = (box["x"] + 0.85 * box["width"], box["y"] + 0.2 * box["height"])  # sky: the camera orbits
        for _ in range(args.repeats):
            for label in ("camera", "hand"):
                if label == "camera":
                    start, step = empty, (-3.0, 1.5)
                else:
                    wh.trigger(page, "reset_pose")
                    start, step = wh.handle_point(page, "hand_l"), (-3.0, 4.0)  # inward: the hand is at full reach
                lat = step_latencies(page, start, step, count)
                if label == "hand":
                    start = wh.handle_point(page, "hand_l")
                center = (start[0] - 40.0, start[1] + 30.0)
                fps, cpu, moves = continuous(page, server, start, center, seconds)
                row = results.setdefault(label, {"lat": [], "fps": [], "cpu": [], "moves": []})
                row["lat"] += lat
                row["fps"].append(fps)
                row["cpu"].append(cpu)
                row["moves"].append(moves / seconds)
            wh.trigger(page, "reset_camera")
        moved = np.array(wh.get_state(page, "pose")[hand])
        solve_ms = wh.get_state(page, "solve_ms")
        checks_line = checks.line(
            "the drag moved the hand", float(np.linalg.norm(moved - rest_hand)) > 0.05, f"{moved.round(3).tolist()}"
        )
        alive = checks.line("the server still answers", server.alive, server.url)

    labels = {
        "camera": "orbit camera (baseline: remote rendering only)",
        "hand": "drag hand_l handle (solve + scene + state)",
    }
    base = float(np.percentile(results["camera"]["lat"], 50))
    rows = []
    for key, label in labels.items():
        r = results[key]
        p50, p95 = float(np.percentile(r["lat"], 50)), float(np.percentile(r["lat"], 95))
        rows.append(
            [
                label,
                len(r["lat"]),
                p50,
                p95,
                statistics.median(r["fps"]),
                statistics.median(r["cpu"]),
                statistics.median(r["moves"]),
                common.ratio(p50, base),
            ]
        )
    headers = ["case", "moves", "p50 ms", "p95 ms", "fps", "server CPU ms/frame", "mouse moves/s", "p50 vs baseline"]
    print(common.format_table(headers, rows))
    print()
    hand_row = rows[1]
    print(f"last solve on the server: {solve_ms:.3f} ms")
    print(common.aim_line("p50 latency, mouse move to changed image (hand drag)", hand_row[2], 60.0, " ms"))
    verdict = "met" if hand_row[4] >= 20.0 else "MISSED"
    print(f"aim  : frames per second during a continuous hand drag >= 20: {hand_row[4]:.2f}  {verdict}")
    print(checks_line)
    print(alive)
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
