"""Pose library benchmark: a library of 10,000 poses as a database (``.db``, SQLite) and as a JSON file,
opened a page at a time as the web panel does (``fabrik3d.io.pose_library``, docs/poses.md).

Workload: 10,000 poses under their own names, each the starter "wave"'s arms and spine (17 roles) with a
600-byte PNG thumbnail: as a JSON file about 23 MB, the size of the 10,000-pose library issue 53 measured
(a JSON file of 10,000 whole-body poses would pass its 32 MiB cap). Rows: ``open`` is what the panel does
when it shows the library (the count and the first page of 50 names and thumbnails, each call with a new
connection: nothing cached by the library); a page far in; one pose read (an apply); a pose saved
(replaced), one deleted and a new one saved; every pose read (``load_library``); the import of the JSON
file into a new database; the first page in a new process; and the web controller's whole list
(``fabrik3d_web.document.poses``: the page plus the starter poses, as base64 data URLs). Column ``ms`` is the
best of the passes, ``first ms`` the first call. Aim (issue 53): a 10,000-pose library opens in at most
1 s. Checks: the page holds 50 rows and the count, every pose reads back.

Run: ``python benchmarks/bench_pose_library.py [--quick] [--repeats N]``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common

import fabrik3d
from fabrik3d.io import pose_library
from fabrik3d.model.pose_library import PNG_SIGNATURE, Pose

HEADERS = ["library", "operation", "poses", "ms", "first ms"]
# The first page of a library in a new process (its connection, its first read of the file), ms.
FRESH = """
import sys, time
from fabrik3d.io import pose_library
t0 = time.perf_counter()
pose_library.library_page(sys.argv[1])
print(1000.0 * (time.perf_counter() - t0))
"""


def timings(call: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """(best ms, first ms, the last result) of ``repeats`` calls."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        times.append(1000.0 * (time.perf_counter() - t0))
    return min(times), times[0], out


def make_json(path: Path, count: int) -> None:
    """A JSON library of ``count`` poses with thumbnails, written in one go (as a long-used file is)."""
    wave = fabrik3d.starter_poses()["wave"].only(["arms", "spine"])
    png = PNG_SIGNATURE + bytes(range(256)) * 2 + bytes(80)
    poses = {f"pose {i:05d}": Pose(wave.bones, wave.twists, wave.pelvis, wave.height, png) for i in range(count)}
    pose_library._write(path, poses)


def main() -> int:
    args = common.parse_args(__doc__, repeats=5)
    common.print_header("A pose library of many poses: milliseconds per call", args)
    count = 500 if args.quick else 10_000
    folder = Path(tempfile.mkdtemp(prefix="bench-poses-"))
    checks = common.Checks()
    rows: list[list[Any]] = []
    lines: list[str] = []
    opened = None
    try:
        source = folder / "poses.json"
        make_json(source, count)
        db = folder / "poses.db"
        ms, _, _ = timings(lambda: pose_library.import_library(source, db), 1)
        rows.append(["database", "import the JSON file (one transaction)", count, ms, ms])
        far = (count // 2) // pose_library.PAGE_SIZE * pose_library.PAGE_SIZE
        for kind, path in (("database", db), ("JSON file", source)):
            ms, first, page = timings(lambda path=path: pose_library.library_page(path), args.repeats)
            rows.append([kind, "open: count + first page of 50", count, ms, first])
            if kind == "database":
                opened = max(ms, first)
            ok = page.total == count and len(page.rows) == pose_library.PAGE_SIZE and page.rows[0][1] is not None
            lines.append(checks.line(f"{kind}: first page", ok, f"{len(page.rows)} rows of {page.total}"))
            ms, first, page = timings(lambda path=path: pose_library.library_page(path, far), args.repeats)
            rows.append([kind, f"page at row {far}", count, ms, first])
            name = f"pose {far + 7:05d}"
            ms, first, one = timings(lambda path=path, n=name: pose_library.load_pose(path, n), args.repeats)
            rows.append([kind, "load one pose (apply)", count, ms, first])
            saves = args.repeats if kind == "database" else min(args.repeats, 2)  # (a JSON save takes seconds)
            ms, first, _ = timings(lambda path=path, n=name, p=one: fabrik3d.save_pose(path, n, p), saves)
            rows.append([kind, "save one pose (replace)", count, ms, first])
            ms, first, _ = timings(lambda path=path: fabrik3d.delete_pose(path, "pose 00000"), 1)
            rows.append([kind, "delete a pose", count, ms, first])
            ms, first, _ = timings(lambda path=path, p=one: fabrik3d.save_pose(path, "pose 00000", p), 1)
            rows.append([kind, "save a new pose", count, ms, first])
            ms, first, every = timings(lambda path=path: fabrik3d.load_library(path), min(args.repeats, 2))
            rows.append([kind, "load_library: every pose", count, ms, first])
            lines.append(checks.line(f"{kind}: every pose", len(every) == count, f"{len(every)} poses read back"))
        child = subprocess.run(
            [sys.executable, "-c", FRESH, str(db)], capture_output=True, text=True, timeout=120, check=True
        )
        ms = float(child.stdout.strip())
        rows.append(["database", "open in a new process", count, ms, ms])
        opened = max(opened or 0.0, ms)
        from fabrik3d_web.document.controller import Controller

        c = Controller()
        c.set_library_path(str(db))
        ms, first, (listed, problem) = timings(c.library_rows, args.repeats)
        rows.append(["database", "web panel's list (page + starters)", count, ms, first])
        ok = problem == "" and c.library_total == count
        lines.append(checks.line("web panel's list", ok, f"{len(listed)} rows, {c.library_total} saved"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(common.format_table(HEADERS, rows))
    print()
    if opened is not None:
        print(common.aim_line(f"a {count:,}-pose database opens (slowest open row)", opened, 1000.0, " ms"))
    for line in lines:
        print(line)
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
