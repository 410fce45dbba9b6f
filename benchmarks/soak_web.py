"""Web soak (issue 33, item 10): a scripted session of drags, scrubs, keys and undos against a real
``fabrik3d serve`` driven by headless Chromium; the server's resident memory sampled every few seconds
and its slope after the first minute fitted (MB a minute; aim <= 0.5).

    python benchmarks/soak_web.py               # 10 minutes
    python benchmarks/soak_web.py --minutes 3   # a quicker look
    python benchmarks/soak_web.py --minutes 20 --pages 2 --library   # issue 53's soak

With ``--pages 2`` two pages on the server take turns (a round each); with ``--library`` each round also
saves the pose shown into a pose library of its own (a database in a temporary folder, growing by a
pose a round: the server must not hold it all in memory) and applies a saved one. The slope is fitted
after ``--settle`` minutes (default 1).

Each round: a hand dragged in a circle (both hands in turn), a key set, the timeline scrubbed through
its frames and stepped with the arrow keys, an undo and a redo, a hand shape, now and then the keys
deleted (the history and the baked frames replaced, not grown). Prints the samples as a table and the
fitted slope; exit status 1 when the slope misses the aim.
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile
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


def library_round(page, k: int) -> None:
    """Save the pose shown as a new library pose, apply an earlier one (``--library``)."""
    wh.trigger(page, "save_library_pose", [f"soak {k:05d}"])
    if k:
        wh.trigger(page, "apply_library_pose", [f"soak {k // 2:05d}", True, None])


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
    parser.add_argument("--pages", type=int, default=1, choices=(1, 2), help="pages taking turns (default 1)")
    parser.add_argument("--library", action="store_true", help="each round saves a pose to a library too")
    parser.add_argument("--settle", type=float, default=1.0, help="minutes before the slope is fitted")
    args = parser.parse_args()
    samples: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, wh.WebServer() as server, wh.browser() as b:
        pages = [wh.open_page(b, server.url) for _ in range(args.pages)]
        if args.library:
            wh.trigger(pages[0], "set_pose_library", [str(Path(tmp) / "soak.db")])
        t0 = time.perf_counter()
        next_sample, k = 0.0, 0
        while (elapsed := time.perf_counter() - t0) < 60.0 * args.minutes:
            if elapsed >= next_sample:
                samples.append((elapsed / 60.0, rss_mb(server.proc.pid)))
                next_sample += SAMPLE_EVERY_S
            page = pages[k % len(pages)]
            session_round(page, k)
            if args.library:
                library_round(page, k)
            k += 1
        samples.append(((time.perf_counter() - t0) / 60.0, rss_mb(server.proc.pid)))
        problem = wh.get_state(pages[0], "error_message")
    what = f"{args.pages} page(s)" + (", a library save a round" if args.library else "")
    print(f"web soak: {k} rounds in {args.minutes:g} min, {what}; server RSS every {SAMPLE_EVERY_S:g} s")
    if problem:
        print(f"last message in the page: {problem}")
    print(f"{'minute':>8} {'RSS MB':>8}")
    for minute, mb in samples[:: max(1, len(samples) // 20)]:
        print(f"{minute:8.2f} {mb:8.1f}")
    later = np.array([s for s in samples if s[0] >= args.settle])
    if len(later) < 3:
        print("too short to fit a slope after the first minute")
        return 0
    slope = float(np.polyfit(later[:, 0], later[:, 1], 1)[0])
    ok = slope <= SLOPE_AIM_MB_PER_MIN
    print(
        f"{'ok  ' if ok else 'MISS'} : RSS slope after minute {args.settle:g} {slope:.2f} MB/min "
        f"(aim <= {SLOPE_AIM_MB_PER_MIN})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
