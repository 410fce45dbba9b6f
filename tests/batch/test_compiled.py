"""The compiled backends (``solve_batch(..., backend="cpu" | "cuda")``, ``fabrik3d.batch.backends``):
results equal to the numpy backend's (iterations; positions within 1e-12, in fact bit for bit on the
CPU), and the errors for a bad name, a missing numba and a missing GPU.

numba is the extra ``fabrik3d[fast]``: without it the kernel tests skip (fail under ``CI=true``); the
kernel source itself (``kernels.build`` run as plain Python) is checked against ``run_chain`` always.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT
from helpers.batch import needs_numba
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.batch import backends, kernels, kernels_frames, kernels_tree
from fabrik3d.batch import frames as batch_frames
from fabrik3d.batch import tree as batch_tree
from fabrik3d.solver.chain import run_chain
from fabrik3d.solver.rig import rig

TOL = 1e-3
# How far a GPU's positions may be from numpy's on badly conditioned chains (folded bones, far targets):
# over three runs of hypothesis's chains on an H200, positions 2e-7 m apart and the frames' quaternion
# components 1.3e-6 (a bone nearly folded onto its neighbour turns fast with its joints); within 1e-12 on
# the chain workload. Not a bound: the worse a chain's conditioning, the further apart.
GPU_ILL_CONDITIONED = 1e-4


@pytest.fixture(scope="module")
def numba() -> object:
    return needs_numba()


@pytest.fixture(params=["cpu", "cuda"])
def backend(request: pytest.FixtureRequest, numba: object) -> str:
    """A compiled backend; "cuda" skips where numba sees no NVIDIA GPU (CI has none)."""
    if request.param == "cuda":
        from numba import cuda

        if not cuda.is_available():
            pytest.skip("no NVIDIA GPU here (numba.cuda.is_available() is False)")
    return request.param


def chain_skeleton(rest: np.ndarray) -> fabrik3d.Skeleton:
    n = len(rest)
    return fabrik3d.Skeleton([f"j{i}" for i in range(n)], list(range(-1, n - 1)), rest)


@st.composite
def chain_problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A chain (its rest pose), ``(B, 3)`` targets of every kind, and start poses (or None: rest)."""
    n = draw(st.integers(2, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    straight = draw(st.booleans())
    if straight:  # bones along one line (some folded back), targets on it too
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        steps = rng.uniform(0.2, 2.0, n - 1) * rng.choice([1.0, 1.0, 1.0, -1.0], n - 1)
    else:
        steps = rng.uniform(0.2, 2.0, n - 1)[:, None] * rng.normal(size=(n - 1, 3))
        steps = np.where(np.linalg.norm(steps, axis=1, keepdims=True) < 1e-3, 1.0, steps)
    base = rng.uniform(-3, 3, 3)
    rest = np.vstack([base, base + np.cumsum(steps[:, None] * u if straight else steps, axis=0)])
    reach = float(np.linalg.norm(np.diff(rest, axis=0), axis=1).sum())
    b = draw(st.integers(1, 48))
    kinds = rng.integers(0, 4, b)
    d = rng.normal(size=(b, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    if straight:
        d = np.where(rng.random((b, 1)) < 0.5, u, -u)
    radius = np.where(kinds == 0, rng.uniform(0, 1, b) * reach, rng.uniform(1.01, 2.0, b) * reach)
    targets = base + d * radius[:, None]
    targets[kinds == 2] = rest[-1]  # already solved
    targets[kinds == 3] = rest[-1] + rng.normal(size=(int((kinds == 3).sum()), 3)) * TOL * 0.3
    starts = None
    if draw(st.booleans()):
        starts = rest + rng.normal(size=(b, n, 3)) * draw(st.sampled_from([0.0, 0.1, 1.0]))
    return rest, targets, starts


def assert_same(a: fabrik3d.BatchResult, b: fabrik3d.BatchResult, atol: float = 1e-12) -> None:
    np.testing.assert_array_equal(a.iterations, b.iterations)
    np.testing.assert_allclose(b.positions, a.positions, rtol=0, atol=atol)
    np.testing.assert_allclose(b.rotations, a.rotations, rtol=0, atol=atol)
    np.testing.assert_array_equal(a.converged, b.converged)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(chain_problems())
def test_a_compiled_backend_equals_numpy_on_random_chains(backend: str, problem: tuple) -> None:
    rest, targets, starts = problem
    sk = chain_skeleton(rest)
    effector = sk.names[-1]
    want = fabrik3d.solve_batch(sk, {effector: targets}, positions=starts, tolerance=TOL)
    got = fabrik3d.solve_batch(sk, {effector: targets}, positions=starts, tolerance=TOL, backend=backend)
    if backend == "cpu":
        assert np.array_equal(want.positions, got.positions)  # (bit for bit on the CPU, in fact)
        assert_same(want, got)
        return
    # On a GPU the same iterations; the floats differ in the last place per operation (the compiler fuses
    # multiply-adds), which a badly conditioned chain carries over its iterations (GPU_ILL_CONDITIONED).
    # A target at the chain's full reach, to rounding, is on the edge of run_chain's first test (reachable
    # or not: 0 iterations or 1, the same pose to 1e-15): there a fused multiply-add tips it either way
    # (hypothesis's find on an H200: one bone, the target on its end).
    base = rest[0] if starts is None else starts[:, 0]
    reach = np.linalg.norm(np.diff(rest, axis=0), axis=1).sum()
    inside = np.abs(np.linalg.norm(targets - base, axis=1) - reach) > 1e-12 * max(reach, 1.0)
    np.testing.assert_array_equal(want.iterations[inside], got.iterations[inside])
    np.testing.assert_array_equal(want.converged[inside], got.converged[inside])
    np.testing.assert_allclose(got.positions, want.positions, rtol=0, atol=GPU_ILL_CONDITIONED)
    np.testing.assert_allclose(got.rotations, want.rotations, rtol=0, atol=GPU_ILL_CONDITIONED)


def test_a_compiled_backend_equals_numpy_on_the_chain_workload_with_a_root_target_and_few_iterations(
    backend: str,
) -> None:
    rest = np.array([[0.0, float(i), 0.0] for i in range(11)])
    sk = chain_skeleton(rest)
    rng = np.random.default_rng(0)
    targets = rng.normal(size=(3000, 3)) * 5
    for options in ({}, {"root_target": rng.normal(size=(3000, 3))}, {"max_iterations": 3}):
        want = fabrik3d.solve_batch(sk, {"j10": targets}, **options)
        assert_same(want, fabrik3d.solve_batch(sk, {"j10": targets}, backend=backend, **options))


@st.composite
def tree_problems(draw: st.DrawFn) -> tuple[fabrik3d.Skeleton, dict, dict]:
    """A random tree, ``(B, 3)`` targets for 2 to 4 of its end effectors (reachable, far, on the rest effector,
    on another joint), and options: start poses, a root target, weights."""
    n = draw(st.integers(3, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, n)]
    if sum(j not in parents for j in range(n)) < 2:  # a chain: its end joint hangs from the root instead
        parents[-1] = 0
    rest = np.zeros((n, 3))
    for j in range(1, n):
        rest[j] = rest[parents[j]] + rng.uniform(0.2, 1.5) * rng.normal(size=3)
    sk = fabrik3d.Skeleton([f"j{i}" for i in range(n)], parents, rest)
    leaves = [j for j in range(n) if j not in parents]
    joints = rng.permutation(leaves)[: draw(st.integers(2, min(4, len(leaves))))]
    b = draw(st.integers(1, 40))
    targets = {}
    for e in joints:
        t = rest[e] + rng.normal(size=(b, 3)) * draw(st.sampled_from([0.0, 0.05, 0.5, 3.0]))
        t[rng.random(b) < 0.2] = rest[rng.integers(0, n)]  # on a joint of the rest pose
        targets[f"j{e}"] = t
    options: dict = {}
    if draw(st.booleans()):
        options["positions"] = rest + rng.normal(size=(b, n, 3)) * draw(st.sampled_from([0.0, 0.1, 1.0]))
    if draw(st.booleans()):
        options["root_target"] = rng.normal(size=(b, 3)) * 0.3
    if draw(st.booleans()):
        options["weights"] = {name: float(rng.uniform(0.2, 3.0)) for name in targets}
    options["max_iterations"] = draw(st.sampled_from([3, 100]))
    return sk, targets, options


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(tree_problems())
def test_a_compiled_backend_equals_numpy_on_random_trees(backend: str, problem: tuple) -> None:
    sk, targets, options = problem
    want = fabrik3d.solve_batch(sk, targets, **options)
    got = fabrik3d.solve_batch(sk, targets, backend=backend, **options)
    if backend == "cpu":
        assert np.array_equal(want.positions, got.positions)  # (bit for bit on the CPU, in fact)
    assert_same(want, got, atol=1e-12 if backend == "cpu" else GPU_ILL_CONDITIONED)


def test_the_tree_kernel_source_as_plain_python_is_solve_tree() -> None:
    """``kernels_tree.build_tree`` without a compiler (no numba needed): numpy's ``solve_tree`` floats and
    iterations on the humanoid, targets on joints and coincident with the rest pose (the fallbacks)."""
    humanoid = fabrik3d.presets.get("humanoid").core
    r = rig(humanoid)
    rest = humanoid.rest_positions
    rng = np.random.default_rng(5)
    goal = {humanoid.index(e): rest[humanoid.index(e)] + rng.normal(size=(12, 3)) * 0.3 for e in humanoid.end_effectors}
    goal[humanoid.index("hand_l")][:3] = rest[humanoid.index("spine_03")]  # a pull landing on a joint
    active = [True] * len(humanoid)
    start = rest[:, :, None]  # (n, 3, 1): joint, coordinate, problem
    want = np.repeat(rest[None], 12, axis=0)
    its = batch_tree.solve_tree(humanoid, r, start, goal, None, active, TOL, 100, want)
    got = np.repeat(rest[None], 12, axis=0)
    launch = backends.tree_launch(batch_tree.TreePlan(humanoid, r, goal, None, active), start, goal, TOL, 100, got)
    kernels_tree.build_tree(lambda f: f)(0, 0, 12, *launch.head, *launch.state(1, 5))
    iterations = launch.head[-1]
    np.testing.assert_array_equal(iterations, its)
    assert np.array_equal(got, want)


def test_the_frames_kernel_source_as_plain_python_is_finish() -> None:
    """``kernels_frames.build_frames`` without a compiler: ``batch.frames.finish``'s frames (but for the
    sign of a zero) on humanoid poses, bones folded back onto their parents' (the half turn) among them."""
    humanoid = fabrik3d.presets.get("humanoid").core
    r = rig(humanoid)
    rng = np.random.default_rng(6)
    rest = humanoid.rest_positions
    poses = np.repeat(rest[None], 16, axis=0) + rng.normal(size=(16, len(rest), 3)) * 0.05
    before = np.array(batch_frames.finish(humanoid, r, poses.transpose(1, 2, 0).copy(), rest[:, :, None], [True] * 25))
    for j, name in enumerate(("elbow_l", "knee_r", "spine_02")):  # a bone opposite its rest direction: the half turn
        k = humanoid.index(name)
        c, parent_frame = r.first_child[k], tuple(before[humanoid.parents[k], :, j])  # (n, 4, B)
        poses[j, r.subtree(c)] += poses[j, k] - np.array(rot.rotate(parent_frame, r.rest_dir[k])) * 0.2 - poses[j, c]
    want = batch_frames.finish(humanoid, r, poses.transpose(1, 2, 0).copy(), rest[:, :, None], [True] * len(rest))
    got = np.empty((16, len(rest), 4))
    launch = backends.frames_launch(r, poses, got)
    kernels_frames.build_frames(lambda f: f)(0, 0, 16, *launch.head, *launch.state(1, 5))  # (5 lanes: 4 rounds)
    np.testing.assert_allclose(got, np.array(want).transpose(2, 0, 1), rtol=0, atol=1e-15)


def test_a_compiled_backend_on_a_chain_inside_a_tree_equals_numpy(backend: str) -> None:
    """One target on a branching skeleton: the kernel solves its root path, numpy the rest (the frames,
    the carried branches); with several targets the tree kernel solves the targets' paths."""
    humanoid = fabrik3d.presets.get("humanoid")
    plain = fabrik3d.Skeleton(humanoid.names, humanoid.parents, humanoid.rest_positions)
    hand = plain.rest_positions[plain.index("hand_l")]
    foot = plain.rest_positions[plain.index("toe_r")]
    rng = np.random.default_rng(1)
    one = {"hand_l": hand + rng.normal(size=(64, 3)) * 0.2}
    assert_same(fabrik3d.solve_batch(plain, one), fabrik3d.solve_batch(plain, one, backend=backend))
    two = {**one, "toe_r": foot + rng.normal(size=(64, 3)) * 0.05}
    assert_same(fabrik3d.solve_batch(plain, two), fabrik3d.solve_batch(plain, two, backend=backend))


def test_the_kernel_source_as_plain_python_is_run_chain() -> None:
    """``kernels.build`` without a compiler (no numba needed): ``run_chain``'s floats and iterations,
    on straight chains (the bend) and folded ones (the landing-on-a-joint fallbacks) too."""
    block = kernels.build(lambda f: f)
    rng = np.random.default_rng(3)
    rests = [np.array([[0.0, float(i), 0.0] for i in range(6)])]  # straight, targets on its line
    rests.append(np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))  # folded
    rests.append(np.cumsum(rng.normal(size=(7, 3)), axis=0))
    for rest in rests:
        n = len(rest)
        lengths = np.linalg.norm(np.diff(rest, axis=0), axis=1)
        targets = np.vstack([[[0.0, 3.0, 0.0], [0.0, -2.0, 0.0], rest[0], rest[1]], rng.normal(size=(20, 3)) * 4])
        bsize = len(targets)
        pose = np.empty((bsize, n, 3))
        launch = backends.chain_launch(rest[:, :, None], lengths.tolist(), targets.T, TOL, 100, pose)
        block(0, 0, bsize, *launch.head, *launch.state(1, 3))
        iterations = launch.head[-1]
        for b, t in enumerate(targets):
            xs, ys, zs = (list(c) for c in rest.T)
            its, _ = run_chain(xs, ys, zs, lengths.tolist(), t.tolist(), TOL, 100)
            assert iterations[b] == its, b
            assert np.array_equal(pose[b], np.array([xs, ys, zs]).T), b


@pytest.mark.parametrize("name", ["gpu", "CPU", "", None, 1])
def test_an_unknown_backend_is_named_with_the_valid_ones(name: object) -> None:
    sk = chain_skeleton(np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"backend: expected one of 'numpy', 'cpu', 'cuda', got"):
        fabrik3d.solve_batch(sk, {"j1": [0.5, 0.5, 0.0]}, backend=name)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["cpu", "cuda"])
def test_without_numba_a_compiled_backend_names_the_extra(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # (import numba raises ImportError)
    sk = chain_skeleton(np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(RuntimeError, match=rf"backend='{name}' needs numba.*pip install 'fabrik3d\[fast\]'"):
        fabrik3d.solve_batch(sk, {"j1": [0.5, 0.5, 0.0]}, backend=name)
    assert fabrik3d.solve_batch(sk, {"j1": [0.5, 0.5, 0.0]}).iterations.shape == (1,)  # numpy needs nothing


def test_cuda_without_a_gpu_says_what_is_missing(numba: object) -> None:
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present (test_cuda_equals_numpy_on_a_gpu runs the kernel)")
    sk = chain_skeleton(np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(backends.BackendError, match=r"backend='cuda' needs an NVIDIA GPU and numba's CUDA target: "):
        fabrik3d.solve_batch(sk, {"j1": [0.5, 0.5, 0.0]}, backend="cuda")


def test_cuda_equals_numpy_on_a_gpu(numba: object) -> None:
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("no NVIDIA GPU here (numba.cuda.is_available() is False)")
    rest = np.array([[0.0, float(i), 0.0] for i in range(11)])
    targets = np.random.default_rng(0).normal(size=(20000, 3)) * 5
    sk = chain_skeleton(rest)
    assert_same(fabrik3d.solve_batch(sk, {"j10": targets}), fabrik3d.solve_batch(sk, {"j10": targets}, backend="cuda"))


def test_cuda_on_a_folded_chain_and_a_far_target_keeps_numpys_iterations(numba: object) -> None:
    """Hypothesis's find on an H200: a chain folded back on itself, targets about its end and one far
    off. The iterations are numpy's; the far one's positions came 3.7e-8 m off (last-place differences
    per operation, carried over the iterations of a badly conditioned chain)."""
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("no NVIDIA GPU here (numba.cuda.is_available() is False)")
    rest = np.array(
        [
            [-2.983569, 2.14442566, -2.79848655],
            [-2.94018831, 2.09884553, -2.57752159],
            [-2.62601807, 1.76874656, -0.97725606],
            [-2.27803567, 1.40312111, 0.79523597],
            [-2.52197689, 1.65943039, -0.44730922],
            [-2.23627887, 1.35924721, 1.00792945],
        ]
    )
    targets = np.array(
        [
            [-2.23608193, 1.3588607, 1.00804798],
            [-2.23614991, 1.35945602, 1.00757421],
            [-2.23627887, 1.35924721, 1.00792945],
            [-2.23647738, 1.35911628, 1.0075785],
            [-1.88392654, 0.98903028, 2.80268022],
            [-3.26414783, 2.4392301, -4.22765],
        ]
    )
    sk = chain_skeleton(rest)
    want = fabrik3d.solve_batch(sk, {"j5": targets}, tolerance=TOL)
    got = fabrik3d.solve_batch(sk, {"j5": targets}, tolerance=TOL, backend="cuda")
    assert_same(want, got, atol=GPU_ILL_CONDITIONED)
    np.testing.assert_allclose(got.positions[:5], want.positions[:5], rtol=0, atol=1e-12)  # (the near ones)


SIMULATED = """
import numpy as np, fabrik3d
rng = np.random.default_rng(2)
rest = np.cumsum(rng.normal(size=(6, 3)), axis=0)
sk = fabrik3d.Skeleton([f"j{i}" for i in range(6)], list(range(-1, 5)), rest)
t = np.vstack([rng.normal(size=(30, 3)) * 4, rest[-1:]])
a = fabrik3d.solve_batch(sk, {"j5": t})
b = fabrik3d.solve_batch(sk, {"j5": t}, backend="cuda")
assert (a.iterations == b.iterations).all() and np.abs(a.positions - b.positions).max() <= 1e-12
assert np.abs(a.rotations - b.rotations).max() <= 1e-12  # (the frames from the poses left on the "GPU")
h = fabrik3d.presets.get("humanoid").core
goals = {e: h.rest_positions[h.index(e)] + rng.normal(size=(9, 3)) * 0.2 for e in h.end_effectors}
a = fabrik3d.solve_batch(h, goals)
b = fabrik3d.solve_batch(h, goals, backend="cuda")
assert (a.iterations == b.iterations).all() and np.abs(a.positions - b.positions).max() <= 1e-12
assert np.abs(a.rotations - b.rotations).max() <= 1e-12  # (the frames from the poses left on the "GPU")
y = fabrik3d.Skeleton(["r", "a", "b", "c"], [-1, 0, 1, 1], [[0, 0, 0], [0, 1, 0], [-0.5, 1.8, 0], [0.5, 1.8, 0]])
goals = {e: y.rest_positions[y.index(e)] + rng.normal(size=(9, 3)) * 0.4 for e in ("b", "c")}
a = fabrik3d.solve_batch(y, goals)
b = fabrik3d.solve_batch(y, goals, backend="cuda")  # (every joint on a path: the frames from the tree's poses)
assert (a.iterations == b.iterations).all() and np.abs(a.positions - b.positions).max() <= 1e-12
assert np.abs(a.rotations - b.rotations).max() <= 1e-12
print("same")
"""


BROKEN = """
import numpy as np, fabrik3d
from fabrik3d.batch import compiled
def broken(kind):
    raise AttributeError("module 'numpy' has no attribute 'row_stack'\\n(a second line)")
compiled.cuda = broken
sk = fabrik3d.Skeleton(["a", "b"], [-1, 0], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
try:
    fabrik3d.solve_batch(sk, {"b": [[0.5, 0.5, 0.0]]}, backend="cuda")
except fabrik3d.batch.backends.BackendError as exc:
    print(exc)
"""


def test_a_cuda_target_that_fails_on_this_machine_is_a_one_line_backend_error(numba: object) -> None:
    """A numba CUDA target at odds with the machine (seen on a GPU: numba-cuda 0.30 with numpy 2.5, which
    dropped ``np.row_stack``) is a ``BackendError`` naming the cause in one line, not a traceback from
    inside numba (run on numba's CUDA simulator, the compiler made to fail)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", BROKEN], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    want = (
        "backend='cuda' failed on this machine's GPU or numba's CUDA target (AttributeError: module 'numpy' has "
        "no attribute 'row_stack'); backend='cpu' runs the same kernels on the CPU cores"
    )
    assert proc.stdout.strip() == want


def test_the_cuda_path_on_numbas_cuda_simulator(numba: object) -> None:
    """The cuda drivers and the kernels compiled as device functions (a chain, the humanoid's tree, a
    fork whose every joint moves, its frames computed from the poses the solve left on the "GPU"), run
    by numba's CUDA simulator (no GPU)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", SIMULATED], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert proc.returncode == 0 and "same" in proc.stdout, proc.stderr[-3000:]
