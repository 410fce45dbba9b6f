"""The command line's ``bake``: one scene into one file, or several into a folder, in this process or
on a ``dask.distributed`` cluster (``fabrik3d.io.bake_many``; docs/scale.md)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import Any

from fabrik3d import checks
from fabrik3d.io.bake_many import Baked, bake_many, bake_scene_file, outputs_for

# The exit status says how many scenes failed, up to this.
MAX_FAILED_STATUS = 100
# The scenes not baked that the summary line names (the errors above it name each).
MAX_LISTED = 20


def cmd_bake(args: argparse.Namespace) -> int:
    """``fabrik3d bake SCENE... -o OUT [--workers N | --scheduler ADDRESS]``: the whole plan of outputs is
    checked before anything is written or started (``outputs_for``); the report lists each scene not
    baked, and the exit status counts them (up to ``MAX_FAILED_STATUS``)."""
    many = len(args.scene) > 1 or args.workers is not None or args.scheduler is not None
    if not many:
        baked = bake_scene_file(args.scene[0], args.output, args.frames, args.method, args.fps, args.backend)
        _said(baked)
        return 0
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("bake: --workers starts a local cluster, --scheduler uses one: give one of them")
    outputs_for(args.scene, args.output, f".{args.kind}")
    if args.workers is not None:
        args.workers = worker_count(args.workers)
    client, cluster = _client(args)
    t0, frames = time.perf_counter(), 0

    def progress(done: int, total: int, baked: Baked) -> None:
        nonlocal frames
        frames += baked.frames
        rate = frames / max(time.perf_counter() - t0, 1e-9)
        bar = "#" * (20 * done // total)
        print(f"\r[{bar:<20}] {done}/{total} scenes, {rate:,.0f} frames/s", end="", file=sys.stderr, flush=True)

    try:
        results = bake_many(args.scene, args.output, client, suffix=f".{args.kind}", frames=args.frames,
                            method=args.method, fps=args.fps, progress=progress, backend=args.backend)  # fmt: skip
    finally:
        print(file=sys.stderr)
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    failed = [r for r in results if r.error is not None]
    for r in results:
        if r.error is None:
            _said(r)
    for r in failed:
        print(f"fabrik3d: error: {r.error}", file=sys.stderr)
    summary = f"baked {len(results) - len(failed)} of {len(results)} scenes into {checks.cut(str(args.output))}"
    if failed:
        shown = [checks.cut(r.scene) for r in failed[:MAX_LISTED]]
        more = f" and {len(failed) - MAX_LISTED} more" if len(failed) > MAX_LISTED else ""
        summary += f"; not baked: {', '.join(shown)}{more}"
    print(summary)
    return min(len(failed), MAX_FAILED_STATUS)


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worker_count(asked: int, cores: int | None = None) -> int:
    """``--workers N`` for a local cluster: at least 1 (``ValueError`` else), at most the machine's
    ``cores`` (default ``machine_cores``): a larger N is lowered to it, with a warning on stderr. A
    worker process holds about 78 MB and bakes on one core, so more workers than cores only cost memory;
    ``--scheduler`` bakes on a cluster's own workers, however many."""
    cores = machine_cores() if cores is None else cores
    if asked < 1:
        raise ValueError(f"--workers: expected at least 1 worker process, got {asked}")
    if asked > cores:
        print(
            f"fabrik3d: warning: --workers {asked} lowered to {cores}, the cores of this machine (one worker "
            "process each); use --scheduler to bake on a larger cluster",
            file=sys.stderr,
        )
        return cores
    return asked


def _said(baked: Baked) -> None:
    print(
        f"wrote {baked.output}: frames {baked.first}..{baked.first + baked.frames - 1} at {baked.fps:g} fps "
        f"({baked.frames} poses of {baked.joints} joints, baked in {baked.seconds * 1e3:.0f} ms)"
    )


def _client(args: argparse.Namespace) -> tuple[Any, Any]:
    """``(client, cluster)``: none without --workers or --scheduler; a local cluster of worker processes;
    or the scheduler at an address."""
    if args.workers is None and args.scheduler is None:
        return None, None
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ValueError(
            "bake: --workers and --scheduler need the extra fabrik3d[scale]: pip install 'fabrik3d[scale]'"
        ) from None
    # (the client's own log of a lost scheduler is a traceback: what it lost is said in the report)
    for name in [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if args.scheduler is not None:
        try:
            return Client(args.scheduler, timeout="10s"), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise ValueError(f"--scheduler {checks.cut(args.scheduler)}: cannot connect ({exc})") from None
    # One core a worker: its compiled kernels, and the solves that go one by one (fabrik3d.batch.workers), on one.
    one_core = {"NUMBA_NUM_THREADS": "1"}
    cluster = LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, env=one_core
    )
    return Client(cluster), cluster


def add_bake_parser(sub: Any, frames: Any, output_name: Any, methods: Any) -> None:
    """The ``bake`` command's arguments."""
    p = sub.add_parser("bake", help="solve every frame of scenes' keys and write the animations")
    p.add_argument("scene", nargs="+", metavar="SCENE.json", help="scene file(s) with keys (version 3)")
    p.add_argument(
        "-o", "--output", type=output_name, required=True, metavar="OUT",
        help="output .glb, .gltf or take .json; with several scenes (or --workers, --scheduler) a folder",
    )  # fmt: skip
    p.add_argument("--frames", type=frames, metavar="A:B", help="frames to bake, inclusive (default the range)")
    p.add_argument("--fps", type=float, help="frames per second (default the scene's)")
    p.add_argument("--method", choices=methods, default="warm", help="warm: frame by frame; batch: all at once")
    p.add_argument(
        "--backend", choices=("numpy", "cpu", "cuda"), default="numpy",
        help="solve_batch's backend for --method batch (cpu, cuda: the extra fabrik3d[fast])",
    )  # fmt: skip
    p.add_argument("--as", dest="kind", choices=("glb", "gltf", "json"), default="glb", help="the files of a folder")
    p.add_argument(
        "--workers", type=int, metavar="N",
        help="bake on a local cluster of N worker processes (dask; at most one a core: more are lowered)",
    )  # fmt: skip
    p.add_argument("--scheduler", metavar="ADDRESS", help="bake on a dask scheduler's workers (tcp://host:8786)")
    p.set_defaults(func=cmd_bake)
