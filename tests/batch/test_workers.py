"""The problems ``solve_batch`` solves one at a time, shared among worker processes
(``fabrik3d.batch.workers``): real worker processes, results bit for bit the calling process's loop."""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.batch import needs_numba

from fabrik3d import Posing, Skeleton, Swivel, presets, solve, solve_batch
from fabrik3d.batch import workers
from fabrik3d.model import skeleton as skeleton_module


def _humanoid_batch(bsize: int, seed: int = 0) -> tuple[Skeleton, dict[str, np.ndarray]]:
    sk = presets.get("humanoid")
    rng = np.random.default_rng(seed)
    return sk, {e: sk.rest_positions[sk.index(e)] + rng.normal(0.0, 0.05, (bsize, 3)) for e in sk.end_effectors}


class _Spawned:
    """``subprocess.Popen`` as the workers call it, the processes it started kept."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.popen = subprocess.Popen

    def __call__(self, *args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        proc = self.popen(*args, **kwargs)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> _Spawned:
    spy = _Spawned()
    monkeypatch.setattr(workers.subprocess, "Popen", spy)
    return spy


def _same(a: object, b: object) -> None:
    for field in ("positions", "rotations", "iterations", "converged"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    for field in ("errors", "orientation_errors"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.keys() == y.keys()
        for name in x:
            np.testing.assert_array_equal(x[name], y[name], err_msg=f"{field}[{name}]")


def test_a_pickled_skeleton_keeps_its_joints_limits_frames_and_posing_not_its_caches() -> None:
    sk = presets.get("humanoid")
    solve(sk, {"hand_l": sk.rest_positions[sk.index("hand_l")] + 0.1})  # (caches the rig and plans on it)
    assert "_rig" in sk.__dict__
    copy = pickle.loads(pickle.dumps(sk))
    built = set(Skeleton(["a", "b"], [-1, 0], [[0, 0, 0], [0, 1, 0]]).__dict__)  # (what __init__ sets)
    assert set(copy.__dict__) == built == set(skeleton_module._BUILT)
    for name in ("parents", "rest_positions", "bone_lengths", "rest_frames"):
        np.testing.assert_array_equal(getattr(copy, name), getattr(sk, name))
        assert not getattr(copy, name).flags.writeable, name
    assert dict(copy.constraints) == dict(sk.constraints) and type(copy.constraints) is type(sk.constraints)
    assert copy.posing == sk.posing and copy.riders == sk.riders and copy.names == sk.names
    with pytest.raises(TypeError):
        copy.constraints["hip_l"] = ()  # type: ignore[index]
    swivel = Posing(stiffness={"spine": 0.5}, reach={"hand_l": "chest"}, swivel={"hand_l": Swivel("chest", (0, 0, 1))})
    assert pickle.loads(pickle.dumps(swivel)) == swivel


def test_dealt_problems_equal_the_loop_bit_for_bit_whatever_the_workers(
    monkeypatch: pytest.MonkeyPatch, spawned: _Spawned
) -> None:
    """1, 2, 3 or more workers than problems, in one round or in rounds of 2 problems a worker (the workers
    started once, the rounds sent to them in turn): the loop's results, and every worker ends when done."""
    sk, targets = _humanoid_batch(7, seed=1)
    problems = [{"targets": {e: t[b] for e, t in targets.items()}, "posing": sk.posing} for b in range(7)]
    loop = [solve(sk, **p) for p in problems]
    for count, rounds in ((1, 256), (2, 256), (3, 256), (9, 256), (3, 2), (2, 1)):
        monkeypatch.setattr(workers, "ROUND", rounds)
        dealt = list(workers.deal(sk, problems, count))
        assert len(spawned.procs) == min(count, 7) - 1  # (this process solves the first share)
        assert all(p.returncode == 0 for p in spawned.procs)  # (their input ended: they returned)
        for a, b in zip(loop, dealt):
            np.testing.assert_array_equal(a.positions, b.positions)
            np.testing.assert_array_equal(a.rotations, b.rotations)
            assert (a.iterations, a.converged, a.errors) == (b.iterations, b.converged, b.errors)
        spawned.procs.clear()
    assert list(workers.deal(sk, [], 4)) == []


def test_the_humanoid_preset_on_the_cpu_backend_is_shared_among_workers_and_equals_numpy(
    monkeypatch: pytest.MonkeyPatch, spawned: _Spawned
) -> None:
    numba = needs_numba()
    monkeypatch.setattr(workers, "WORTH", 0.0)  # (deal out even this small batch)
    monkeypatch.setattr(workers, "backend_workers", lambda backend: 1 if backend == "numpy" else 3)
    sk, targets = _humanoid_batch(8)
    numpy_result = solve_batch(sk, targets)
    assert spawned.procs == []
    cpu_result = solve_batch(sk, targets, backend="cpu")
    assert len(spawned.procs) == 2 and all(p.returncode == 0 for p in spawned.procs)
    _same(numpy_result, cpu_result)
    # Given start frames (each problem by solve whatever the posing), and the real count of workers.
    monkeypatch.undo()
    monkeypatch.setattr(workers, "WORTH", 0.0)
    monkeypatch.setattr(workers.subprocess, "Popen", spawned)
    spawned.procs.clear()
    start = solve_batch(sk, targets)
    given = dict(positions=start.positions, rotations=start.rotations, posing=Posing())
    moved = {e: t + 0.02 for e, t in targets.items()}
    _same(solve_batch(sk, moved, **given), solve_batch(sk, moved, backend="cpu", **given))
    assert len(spawned.procs) == min(numba.get_num_threads(), 6) - 1  # (the first two solved before dealing)


def test_a_cheap_batch_stays_in_this_process(spawned: _Spawned) -> None:
    sk, targets = _humanoid_batch(5, seed=2)
    problems = [{"targets": {e: t[b] for e, t in targets.items()}} for b in range(5)]
    results = list(workers.solve_each(sk, 5, problems.__getitem__, workers=4))  # (5 plain solves: milliseconds)
    assert spawned.procs == []
    assert [r.iterations for r in results] == [solve(sk, **p).iterations for p in problems]


def test_the_first_error_in_batch_order_is_raised_as_solve_raised_it(spawned: _Spawned) -> None:
    sk, targets = _humanoid_batch(5, seed=3)
    problems = [{"targets": {e: t[b] for e, t in targets.items()}} for b in range(5)]
    problems[3] = {"targets": {"nope3": (0, 0, 0)}}
    problems[1] = {"targets": {"nope1": (0, 0, 0)}}  # (worker 1's; this process's share has none)
    with pytest.raises(ValueError) as in_process:
        for p in problems:
            solve(sk, **p)
    with pytest.raises(ValueError) as dealt:
        list(workers.deal(sk, problems, 2))
    assert str(dealt.value) == str(in_process.value) and "nope1" in str(dealt.value)
    problems[1] = problems[0]
    problems[2] = {"targets": {"nope2": (0, 0, 0)}}  # (this process's share)
    with pytest.raises(ValueError, match="nope2"):
        list(workers.deal(sk, problems, 2))
    assert spawned.procs and all(p.poll() is not None for p in spawned.procs)


def test_a_worker_killed_is_an_error_naming_it_and_none_outlives_the_call(
    monkeypatch: pytest.MonkeyPatch, spawned: _Spawned
) -> None:
    sk, targets = _humanoid_batch(4, seed=4)
    problems = [{"targets": {e: t[b] for e, t in targets.items()}} for b in range(4)]
    monkeypatch.setattr(workers, "BOOT", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    with pytest.raises(RuntimeError, match=r"worker process [12] failed \(exit status -9\)"):
        list(workers.deal(sk, problems, 3))
    assert len(spawned.procs) == 2 and all(p.poll() is not None for p in spawned.procs)
    monkeypatch.setattr(workers, "BOOT", "import sys; sys.stderr.write('no fabrik3d here'); sys.exit(3)")
    with pytest.raises(RuntimeError, match=r"exit status 3\): no fabrik3d here"):
        list(workers.deal(sk, problems, 2))


def test_a_worker_whose_caller_is_killed_outright_stops(tmp_path: Path) -> None:
    """The caller SIGKILLed mid-batch (no ``finally`` runs): its worker stops before its next problem rather
    than solving its whole share for no one."""
    script = tmp_path / "caller.py"
    script.write_text(
        "import subprocess, sys\n"
        "import numpy as np\n"
        "from fabrik3d import presets\n"
        "from fabrik3d.batch import workers\n"
        "popen = subprocess.Popen\n"
        "def told(*a, **k):\n"
        "    p = popen(*a, **k)\n"
        "    print(p.pid, flush=True)\n"
        "    return p\n"
        "workers.subprocess.Popen = told\n"
        "sk = presets.get('humanoid')\n"
        "rng = np.random.default_rng(5)\n"
        "rest = {e: sk.rest_positions[sk.index(e)] for e in sk.end_effectors}\n"
        "problems = [{'targets': {e: p + rng.normal(0, 0.05, 3) for e, p in rest.items()}} for _ in range(4000)]\n"
        "list(workers.deal(sk, problems, 2))\n"
    )
    caller = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(caller.stdout.readline())  # type: ignore[union-attr]
        time.sleep(1.0)  # (the worker at its problems)
        assert _running(worker)
    finally:
        caller.kill()
        caller.wait()
    deadline = time.monotonic() + 30
    while _running(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(worker), "the worker outlived its caller"


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
