"""Baking many scenes (issue 34, item 1): in process and on a local dask cluster, outputs byte-identical
to ``fabrik3d bake`` one scene at a time, a failing scene reported by name while the others complete,
the exit status the number that failed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import missing_tool
from helpers.cli import run

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.cli import main
from fabrik3d.io.bake_many import bake_many, outputs_for
from fabrik3d.io.scene import Scene, save_scene

BODY = fabrik3d.presets.get("humanoid")
HAND = BODY.rest_positions[BODY.index("hand_l")]


def keyed(folder: Path, name: str, reach: float) -> Path:
    anim = Animation((Key(0, {"hand_l": HAND}), Key(8, {"hand_l": HAND + np.array([-0.2, -reach, 0.3])})), fps=24)
    path = folder / f"{name}.json"
    save_scene(Scene(BODY, animation=anim), path)
    return path


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    folder = tmp_path_factory.mktemp("scenes")
    good = [keyed(folder, f"walk{k}", 0.1 * k) for k in range(3)]
    bad = folder / "broken.json"
    bad.write_text('{"format": "fabrik3d.scene", "version": 3, "joints": []}')
    garbage = folder / "garbage.json"  # (not JSON at all)
    garbage.write_text("walk cycle, take 3 {")
    serial = folder / "serial"
    serial.mkdir()
    for scene in good:
        proc = run("bake", str(scene), "-o", str(serial / f"{scene.stem}.glb"))
        assert proc.returncode == 0, proc.stderr
    return [*good, bad, garbage], serial


def test_in_process_the_outputs_are_the_serial_bakes_and_a_failure_is_named(scenes, tmp_path: Path) -> None:
    paths, serial = scenes
    seen = []
    results = bake_many([str(p) for p in paths], tmp_path / "out", progress=lambda d, t, b: seen.append((d, t)))
    assert seen == [(k, len(paths)) for k in range(1, len(paths) + 1)]
    for scene, baked in zip(paths, results):
        if scene.stem in ("broken", "garbage"):
            assert baked.output is None and baked.error.startswith(str(scene)[:20]) and "\n" not in baked.error
            assert not (tmp_path / "out" / f"{scene.stem}.glb").exists()
        else:
            assert (tmp_path / "out" / f"{scene.stem}.glb").read_bytes() == (serial / f"{scene.stem}.glb").read_bytes()
    with pytest.raises(ValueError, match=r"would both write a\.glb"):
        outputs_for(["x/a.json", "y/a.json"], tmp_path)


def test_on_a_local_dask_cluster_from_the_command_line(scenes, tmp_path: Path) -> None:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        missing_tool("dask is not installed (pip install 'fabrik3d[scale]')")
    paths, serial = scenes
    out = tmp_path / "cluster"
    proc = run("bake", *map(str, paths), "-o", str(out), "--workers", "2")
    assert proc.returncode == 2, proc.stderr  # (two scenes failed)
    assert "3 of 5 scenes" in proc.stdout and "scenes," in proc.stderr and "frames/s" in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("fabrik3d: error:")]
    assert len(errors) == 2 and "broken.json" in errors[0] + errors[1] and "garbage.json" in errors[0] + errors[1]
    for scene in paths[:3]:
        assert (out / f"{scene.stem}.glb").read_bytes() == (serial / f"{scene.stem}.glb").read_bytes()
    assert not list(out.glob("*.tmp*")) and not list(out.glob(".*"))


def test_without_dask_the_message_names_the_extra(scenes, tmp_path: Path, monkeypatch, capsys) -> None:
    paths, _ = scenes
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    status = main(["bake", str(paths[0]), "-o", str(tmp_path / "o"), "--workers", "2"])
    assert status == 2 and "pip install 'fabrik3d[scale]'" in capsys.readouterr().err
    assert main(["bake", str(paths[0]), "-o", str(tmp_path / "o"), "--workers", "0"]) == 2


def test_the_command_lines_local_cluster_gives_each_worker_one_core() -> None:
    """``--workers N``: N worker processes of one thread, whose compiled kernels and one-by-one solves
    (``fabrik3d.batch.workers``) run on one core each (``NUMBA_NUM_THREADS=1``), not N times every core."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        missing_tool("dask is not installed (pip install 'fabrik3d[scale]')")
    import argparse
    import os

    from fabrik3d.cli_bake import _client

    client, cluster = _client(argparse.Namespace(workers=2, scheduler=None))
    try:
        assert list(client.run(lambda: os.environ.get("NUMBA_NUM_THREADS")).values()) == ["1", "1"]
        assert client.nthreads() and set(client.nthreads().values()) == {1}
    finally:
        client.close()
        cluster.close()


def test_a_worker_killed_mid_run_costs_a_retry_never_an_output(tmp_path: Path) -> None:
    """A worker SIGKILLed once the first outputs appear: its scenes run again on a worker the cluster
    starts anew, and every output is there once, whole and byte-identical to baking in process."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        missing_tool("dask is not installed (pip install 'fabrik3d[scale]')")
    import os
    import signal
    import threading
    import time

    folder = tmp_path / "scenes"
    folder.mkdir()
    paths = []
    for k in range(8):
        anim = Animation((Key(0, {"hand_l": HAND}), Key(40, {"hand_l": HAND + np.array([-0.2, -0.05 * k, 0.3])})))
        paths.append(folder / f"take{k}.json")
        save_scene(Scene(BODY, animation=anim), paths[-1])
    serial = bake_many([str(p) for p in paths], tmp_path / "serial")
    assert all(b.error is None for b in serial)
    out = tmp_path / "cluster"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            pids = client.run(os.getpid)
            done: list = []
            baking = threading.Thread(target=lambda: done.append(bake_many([str(p) for p in paths], out, client)))
            baking.start()
            deadline = time.monotonic() + 120
            while not list(out.glob("*.glb")) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert list(out.glob("*.glb")), "no output appeared"
            os.kill(next(iter(pids.values())), signal.SIGKILL)
            assert len(list(out.glob("*.glb"))) < len(paths)  # (killed mid-run)
            baking.join(timeout=300)
            assert not baking.is_alive() and done
            assert set(client.run(os.getpid).values()) != set(pids.values())  # (a worker was started anew)
    results = done[0]
    assert [b.error for b in results] == [None] * len(paths)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{p.stem}.glb" for p in paths)  # (none partial or extra)
    for p in paths:
        assert (out / f"{p.stem}.glb").read_bytes() == (tmp_path / "serial" / f"{p.stem}.glb").read_bytes()


def test_batch_bakes_on_the_compiled_cpu_backend_equal_numpys(tmp_path: Path, capsys) -> None:
    """Issue 34 item 3: ``--method batch --backend cpu`` (and ``bake_many(..., backend="cpu")``) bakes on the
    compiled kernels where they apply (a body without limits: the tree and frames kernels): the same
    poses as numpy's (positions bit for bit, frames within 1e-12); a backend with the warm method, or
    one that cannot run here, is a one-line error."""
    try:
        import numba  # noqa: F401
    except ImportError:
        missing_tool("numba is not installed (pip install 'fabrik3d[fast]')")
    core = BODY.core
    body = fabrik3d.Skeleton(core.names, core.parents, core.rest_positions)  # (no limits: compiled)
    rest = {e: body.rest_positions[body.index(e)] for e in ("hand_l", "hand_r", "toe_l")}
    far = {"hand_l": rest["hand_l"] + [0.1, -0.4, 0.3], "hand_r": rest["hand_r"] + [0.0, 0.2, 0.2]}
    anim = Animation((Key(0, rest), Key(30, {**rest, **far})), fps=24)
    scene = tmp_path / "body.json"
    save_scene(Scene(body, animation=anim), scene)
    numpy_take = fabrik3d.io.bake.bake(body, anim, method="batch")
    cpu_take = fabrik3d.io.bake.bake(body, anim, method="batch", backend="cpu")
    assert np.array_equal(cpu_take.positions, numpy_take.positions)
    np.testing.assert_allclose(cpu_take.rotations, numpy_take.rotations, rtol=0, atol=1e-12)
    assert main(["bake", str(scene), "-o", str(tmp_path / "cpu.json"), "--method", "batch", "--backend", "cpu"]) == 0
    assert main(["bake", str(scene), "-o", str(tmp_path / "np.json"), "--method", "batch"]) == 0
    a, b = fabrik3d.io.take.load_take(tmp_path / "cpu.json"), fabrik3d.io.take.load_take(tmp_path / "np.json")
    assert np.array_equal(a.positions, b.positions)
    results = bake_many([str(scene)], tmp_path / "many", suffix=".json", method="batch", backend="cpu")
    assert results[0].error is None
    assert np.array_equal(fabrik3d.io.take.load_take(tmp_path / "many" / "body.json").positions, b.positions)
    capsys.readouterr()
    assert main(["bake", str(scene), "-o", str(tmp_path / "w.json"), "--backend", "cpu"]) == 2
    assert "backend='cpu' solves method='batch'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="backend='cpu' solves method='batch'"):
        bake_many([str(scene)], tmp_path / "many", backend="cpu")
    with pytest.raises(ValueError, match=r"backend: expected one of 'numpy', 'cpu', 'cuda', got 'gpu'"):
        bake_many([str(scene)], tmp_path / "many", method="batch", backend="gpu")
    with pytest.raises(SystemExit) as exit_:  # (argparse's own usage error)
        main(["bake", str(scene), "-o", str(tmp_path / "x.json"), "--method", "batch", "--backend", "gpu"])
    assert exit_.value.code == 2 and "invalid choice: 'gpu'" in capsys.readouterr().err
    from numba import cuda

    if not cuda.is_available():
        assert main(["bake", str(scene), "-o", str(tmp_path / "g.json"), "--method", "batch", "--backend", "cuda"]) == 2
        err = capsys.readouterr().err
        assert "backend='cuda' needs an NVIDIA GPU" in err and "\n" not in err.strip()
    else:  # (on a GPU: the cuda bake is numpy's, to the GPU's fused multiply-adds)
        assert main(["bake", str(scene), "-o", str(tmp_path / "g.json"), "--method", "batch", "--backend", "cuda"]) == 0
        gpu = fabrik3d.io.take.load_take(tmp_path / "g.json")
        np.testing.assert_allclose(gpu.positions, b.positions, rtol=0, atol=1e-12)
