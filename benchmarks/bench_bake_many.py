"""Baking many scenes: ``fabrik3d.io.bake_many`` on a local dask cluster against baking them one after
another in this process (``client=None``), in the same run.

Workload: 60 keyed humanoid scenes of 300 frames each (``--quick``: 4 of 30), written to a temporary
folder. Each scene keys both hands and the head at five frames, their offsets from the rest pose drawn
by ``numpy.random.default_rng(k)`` for scene ``k`` (hands within 35 cm, the head within 8 cm), baked
warm (``fabrik3d bake``'s default) into ``.glb`` files.

Rows: serial (in process), and a ``LocalCluster`` of ``--workers`` worker processes (default 2, one
thread each) with the cluster's start and close counted in its wall time. ``vs serial``: the cluster's
wall time over the serial one (the issue's aim: at most 0.7 on 2 cores). ``same``: every output
byte-identical to its serial twin.

Run: ``python benchmarks/bench_bake_many.py [--quick] [--workers N] [--scenes N] [--frames N]``
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import common
import numpy as np

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.io.bake_many import bake_many
from fabrik3d.io.scene import Scene, save_scene

HEADERS = ["run", "workers", "scenes", "frames", "wall s", "frames/s", "vs serial", "same"]
AIM = 0.7


def write_scenes(folder: Path, count: int, frames: int) -> list[Path]:
    """``count`` keyed humanoid scenes of ``frames`` frames (module docstring)."""
    body = fabrik3d.presets.get("humanoid")
    rest = {e: body.rest_positions[body.index(e)] for e in ("hand_l", "hand_r", "head")}
    paths = []
    for k in range(count):
        rng = np.random.default_rng(k)
        keys = []
        for f in np.linspace(0, frames - 1, 5).round().astype(int):
            goals = {e: p + rng.uniform(-1, 1, 3) * (0.08 if e == "head" else 0.35) for e, p in rest.items()}
            keys.append(Key(int(f), goals))
        path = folder / f"shot{k:03d}.json"
        save_scene(Scene(body, animation=Animation(tuple(keys), fps=30)), path)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own = {"--workers": 2, "--scenes": None, "--frames": None}
    rest = []
    it = iter(argv)
    for a in it:
        if a in own:
            own[a] = int(next(it))
        else:
            rest.append(a)
    args = common.parse_args(__doc__, rest)
    common.print_header("fabrik3d bake_many: a local dask cluster against serial baking", args)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # (the serial row alone)
        Client = LocalCluster = None
    count = own["--scenes"] or (4 if args.quick else 60)
    frames = own["--frames"] or (30 if args.quick else 300)
    workers = own["--workers"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scenes = [str(p) for p in write_scenes(folder, count, frames)]
        t0 = time.perf_counter()
        serial = bake_many(scenes, folder / "serial")
        serial_s = time.perf_counter() - t0
        total = count * frames
        rows = [["serial", 0, count, total, serial_s, total / serial_s, "1.00x", ""]]
        failed = [b for b in serial if b.error is not None]
        same, ratio = not failed, None
        if LocalCluster is not None:
            t0 = time.perf_counter()
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
            try:
                spread = bake_many(scenes, folder / "cluster", client)
            finally:
                client.close()
                cluster.close()
            cluster_s = time.perf_counter() - t0
            failed += [b for b in spread if b.error is not None]
            same = not failed and all(
                (folder / "serial" / Path(s).with_suffix(".glb").name).read_bytes()
                == (folder / "cluster" / Path(s).with_suffix(".glb").name).read_bytes()
                for s in scenes
            )
            ratio = cluster_s / serial_s
            rows.append(
                [
                    "cluster",
                    workers,
                    count,
                    total,
                    cluster_s,
                    total / cluster_s,
                    f"{ratio:.2f}x",
                    "yes" if same else "NO",
                ]
            )
    print(common.format_table(HEADERS, rows))
    print()
    if ratio is None:
        print("cluster: dask is missing (pip install 'fabrik3d[scale]'): the serial row alone")
    else:
        mark = "" if ratio <= AIM else " MISSED"
        print(f"aim: the cluster's wall time (its start included) at most {AIM}x serial: {ratio:.2f}x{mark}")
    for b in failed:
        print(f"error: {b.error}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
