"""Web soak (issue 33, item 10): a scripted session of drags, scrubs, keys and undos against a real
``fabrik3d serve`` driven by headless Chromium; the server's resident memory sampled every few seconds
and its slope after the first minute fitted (MB a minute; aim <= 0.5).

    python benchmarks/soak_web.py               # 10 minutes
    python benchmarks/soak_web.py --minutes 3   # a quicker look

Each round: a hand dragged in a circle (both hands in turn), a key set, the timeline scrubbed through
its frames and stepped with the arrow keys, an undo and a redo, a hand shape, now and then the keys
deleted (the history and the baked frames replaced, not grown). Prints the samples as a table and the
fitted slope; exit status 1 when the slope misses the aim.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from pathlib import Path

import common  # noqa: F401  (puts tests/ on sys.path)
import numpy as np
from helpers import web as wh

SLOPE_AIM_MB_PER_MIN = 0.5
SAMPLE_EVERY_S = 5.0


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` (Linux ``/proc``), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return math.nan


def session_round(page, k: int) -> None:
    """One round of what a user does (module docstring)."""
    hand = "hand_l" if k % 2 == 0 else "hand_r"
    start = wh.handle_point(page, hand)
    points = [(start[0] + 40 * math.cos(a), start[1] + 40 * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 9)]
    for a, b in itertools.pairwise(points):
        wh.drag(page, a, b, steps=4, pause=0.01)
    page.evaluate("(f) => window.trame.state.set('frame', f)", (k * 7) % 30)
    wh.trigger(page, "set_key")
    wh.trigger(page, "begin_scrub")
    for f in range(0, 30, 3):
        page.evaluate("(f) => window.trame.state.set('frame', f)", f)
        time.sleep(0.02)
    wh.trigger(page, "end_scrub")
    for _ in range(3):
        wh.trigger(page, "step_frame", [1])
    wh.trigger(page, "undo")
    wh.trigger(page, "redo")
    wh.trigger(page, "choose_hand_shape", [("fist", "open", "point", "relaxed")[k % 4]])
    if k % 10 == 9:  # (the keys deleted now and then: their history and baked frames replaced)
        for f in range(0, 30):
            page.evaluate("(f) => window.trame.state.set('frame', f)", f)
            wh.trigger(page, "delete_key")
    wh.settle(page)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="session length (default 10)")
    args = parser.parse_args()
    samples: list[tuple[float, float]] = []
    with wh.WebServer() as server, wh.browser() as b:
        page = wh.open_page(b, server.url)
        t0 = time.perf_counter()
        next_sample, k = 0.0, 0
        while (elapsed := time.perf_counter() - t0) < 60.0 * args.minutes:
            if elapsed >= next_sample:
                samples.append((elapsed / 60.0, rss_mb(server.proc.pid)))
                next_sample += SAMPLE_EVERY_S
            session_round(page, k)
            k += 1
        samples.append(((time.perf_counter() - t0) / 60.0, rss_mb(server.proc.pid)))
    print(f"web soak: {k} rounds in {args.minutes:g} min; server RSS every {SAMPLE_EVERY_S:g} s")
    print(f"{'minute':>8} {'RSS MB':>8}")
    for minute, mb in samples[:: max(1, len(samples) // 20)]:
        print(f"{minute:8.2f} {mb:8.1f}")
    later = np.array([s for s in samples if s[0] >= 1.0])
    if len(later) < 3:
        print("too short to fit a slope after the first minute")
        return 0
    slope = float(np.polyfit(later[:, 0], later[:, 1], 1)[0])
    ok = slope <= SLOPE_AIM_MB_PER_MIN
    print(
        f"{'ok  ' if ok else 'MISS'} : RSS slope after the first minute {slope:.2f} MB/min "
        f"(aim <= {SLOPE_AIM_MB_PER_MIN})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
