"""The Dask bake's report equals the files on disk (issue 53, item 10): a scheduler killed mid-bake leaves
exactly the outputs the report says were baked (a worker still running its task then writes no output),
the summary and the exit status name and count the others; ``--workers`` is capped at the machine's cores."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import missing_tool
from helpers.cli import run

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.cli_bake import machine_cores, worker_count
from fabrik3d.io.bake_many import Baked, _commit, bake_many
from fabrik3d.io.scene import Scene, save_scene

BODY = fabrik3d.presets.get("humanoid")
HAND = BODY.rest_positions[BODY.index("hand_l")]


def scenes(folder: Path, count: int, frames: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(count):
        far = HAND + np.array([-0.2, -0.03 * k, 0.3])
        anim = Animation((Key(0, {"hand_l": HAND}), Key(frames, {"hand_l": far})), fps=24)
        paths.append(folder / f"shot{k}.json")
        save_scene(Scene(BODY, animation=anim), paths[-1])
    return paths


def _need_dask() -> Path:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        missing_tool("dask is not installed (pip install 'fabrik3d[scale]')")
    command = Path(sys.executable).parent / "dask"
    if not command.exists():
        missing_tool("the dask command is not installed (pip install 'fabrik3d[scale]')")
    return command


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settled(folder: Path, quiet: float = 3.0, limit: float = 60.0) -> list[str]:
    """The folder's names once nothing has changed in it for ``quiet`` seconds."""
    deadline, last, since = time.monotonic() + limit, None, time.monotonic()
    while time.monotonic() < deadline:
        now = sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
        time.sleep(0.1)
    return sorted(p.name for p in folder.iterdir())


def test_a_scheduler_killed_mid_bake_reports_exactly_the_files_on_disk(tmp_path: Path) -> None:
    """A real scheduler and two real workers (processes); the scheduler is SIGKILLed once the first output
    appears. The workers finish the tasks they were running after the command has reported: those write
    no output. What the report says was written is what the folder holds, whole (the bytes of a bake in
    process), the summary names every other scene and the exit status counts them."""
    dask = _need_dask()
    paths = scenes(tmp_path / "shots", 8, 120)
    serial = bake_many([str(p) for p in paths[:1]], tmp_path / "serial")
    assert serial[0].error is None
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    scheduler = subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                  "--no-dashboard"], **quiet)  # fmt: skip
    workers = [
        subprocess.Popen([str(dask), "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard"], **quiet)
        for _ in range(2)
    ]
    out = tmp_path / "baked"
    try:
        from dask.distributed import Client

        deadline = time.monotonic() + 60
        while True:  # (the scheduler up and both workers joined)
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(2, timeout=60)
                break
            except OSError:
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.5)
        bake = subprocess.Popen(
            [sys.executable, "-m", "fabrik3d.cli", "bake", *map(str, paths), "-o", str(out), "--scheduler", address],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not (out.is_dir() and any(not p.name.startswith(".") for p in out.iterdir())):
            assert time.monotonic() < deadline and bake.poll() is None, "no output appeared"
            time.sleep(0.01)
        scheduler.kill()
        stdout, stderr = bake.communicate(timeout=120)
        names = [n for n in _settled(out) if not n.startswith(".")]  # (the workers' tasks run out meanwhile)
    finally:
        for proc in (scheduler, *workers):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    wrote = sorted(Path(line.split(":")[0].removeprefix("wrote ")).name for line in stdout.splitlines()
                   if line.startswith("wrote "))  # fmt: skip
    assert names == wrote, (stdout, stderr)
    assert 1 <= len(wrote) < len(paths), stdout  # (killed mid-bake)
    assert bake.returncode == len(paths) - len(wrote)
    summary = stdout.strip().splitlines()[-1]
    assert summary.startswith(f"baked {len(wrote)} of {len(paths)} scenes into ")
    listed = [name.rsplit("/", 1)[-1] for name in summary.split("; not baked: ")[1].split(", ")]
    assert sorted(listed + [n.replace(".glb", ".json") for n in wrote]) == sorted(p.name for p in paths)
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("fabrik3d: error:")]
    assert len(errors) == len(paths) - len(wrote)
    if "shot0.glb" in names:
        assert (out / "shot0.glb").read_bytes() == (tmp_path / "serial" / "shot0.glb").read_bytes()


def test_a_result_whose_file_this_machine_does_not_see_is_not_baked(tmp_path: Path) -> None:
    """``_commit``, what makes a task's result the disk's: a staged file that is not there (a worker wrote
    it on its own disk) reports the scene not baked and writes nothing; one that is there becomes the
    output, which keeps the mode of the file it replaces."""
    out = tmp_path / "walk.glb"
    reported = Baked("walk.json", str(tmp_path / ".walk.glb.1.x.tmp"), frames=5)
    got = _commit(reported, str(tmp_path / ".walk.glb.1.x.tmp"), out, out)
    assert got.output is None and "which this machine does not see" in got.error
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(b"old")
    out.chmod(0o600)
    staged = tmp_path / ".walk.glb.1.y.tmp"
    staged.write_bytes(b"new")
    got = _commit(reported, str(staged), out, out)
    assert got.output == str(out) and got.error is None and got.frames == 5
    assert out.read_bytes() == b"new" and (out.stat().st_mode & 0o777) == 0o600
    assert list(tmp_path.iterdir()) == [out]


def test_workers_are_capped_at_the_machines_cores(capsys) -> None:
    assert worker_count(3, cores=4) == 3 and capsys.readouterr().err == ""
    assert worker_count(256, cores=4) == 4
    err = capsys.readouterr().err
    assert err.startswith("fabrik3d: warning: --workers 256 lowered to 4, the cores of this machine")
    assert "\n" not in err.strip()
    with pytest.raises(ValueError, match="--workers: expected at least 1 worker process, got 0"):
        worker_count(0)
    assert 1 <= machine_cores() <= (os.cpu_count() or 1)


def test_the_command_line_starts_no_more_workers_than_cores(tmp_path: Path) -> None:
    """``--workers`` one more than the cores: the command says it lowered them, starts that many, and bakes."""
    _need_dask()
    paths = scenes(tmp_path / "shots", 2, 4)
    cores = machine_cores()
    proc = run("bake", *map(str, paths), "-o", str(tmp_path / "out"), "--workers", str(cores + 1))
    assert proc.returncode == 0, proc.stderr
    assert f"fabrik3d: warning: --workers {cores + 1} lowered to {cores}, the cores of this machine" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["shot0.glb", "shot1.glb"]
