"""Batch benchmark: ``fabrik3d.solve_batch`` against single solves in a loop, and ikpy, in the same process.

Workloads:

* ``chain``: the core issue's chain (``common.chain_workload``): ten bones of length 1
  along +Y, solved from rest, tolerance 1e-3, at most 100 iterations. B = 1000 is
  its 1000 targets in the ball of radius 9 (``numpy.random.default_rng(0)``);
  B = 10000 draws 10000 targets by the same recipe (``common.ball_points`` on a
  fresh ``default_rng(0)``). Single-solve rows (``solve_chain`` and ``solve`` in a
  loop) solve the 1000 targets, each solve timed alone (``common.run_cases``).
* ``humanoid``: the humanoid preset, its five effectors' targets about their rest
  positions (normal, 5 cm, ``default_rng(0)``), from rest: without limits (the
  vectorised tree); with its joint limits, B = 10000 targets by forward kinematics of
  poses uniform within the limits (all reachable), one pass (vectorised; its restarts
  too, and the last 16 problems go to ``solve``); and B = 4000 such poses solved warm
  from other poses within the limits, with orientation targets for both hands (their
  frames in the pose) and poles on both arms (at the pose's elbows, 20 cm out), one
  pass (vectorised, orientation rows and pole turns included).
* ``ikpy``: ikpy (optimisation-based IK, a benchmark-only dependency) on the same
  chain, built as ten universal joints (revolute about X, then Z) with unit bones
  along +Y, from the zero pose, on the first targets of the chain workload;
  ``it`` is its forward-kinematics evaluations per solve.

Columns: ``us/problem`` is a batch's fastest wall time over the passes divided by
B, or a single solve's mean (each solve's fastest pass); the ratios divide the
single-solve means by it (how many times faster). Peak memory per problem is
``tracemalloc``'s peak during one ``solve_batch`` call divided by B (the constrained humanoid at
the smaller B only: under tracemalloc it takes about 35 s at B = 1000).

Run: ``python benchmarks/bench_batch.py [--quick] [--repeats N] [--budget S] [--profile] [--backends]``
(``--profile`` adds cProfile tables of ``solve_batch`` on the chain and on the humanoid, largest B;
``--backends`` prints only the table of compiled backends, with "cuda" rows where a GPU is present).
"""

from __future__ import annotations

import functools
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import common
import numpy as np

import fabrik3d
import fabrik3d.presets

TOL = 1e-3
MAX_IT = 100
CHAIN = common.SOLVE_CHAIN
SOLVE = "fabrik3d.solve"
BATCH = "fabrik3d.solve_batch"
HEADERS = ["workload", "solver", "B", "problems", "reached", "it mean", "us/problem", "vs solve_chain", "vs solve"]


def chain_skeleton(rest: np.ndarray) -> fabrik3d.Skeleton:
    return fabrik3d.Skeleton([f"j{i}" for i in range(len(rest))], list(range(-1, len(rest) - 1)), rest)


def time_batch(call: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    """``call()``'s result and its fastest wall time in seconds over ``repeats`` calls."""
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t0)
    return out, best


def peak_bytes(call: Callable[[], Any]) -> int:
    """``tracemalloc``'s peak (bytes) during ``call()``."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def ikpy_rows(targets: np.ndarray, budget_s: float) -> tuple[list[Any], str]:
    """ikpy on the chain: ``[reached %, it mean, us per solve, solves]`` and a note."""
    try:
        from ikpy.chain import Chain
        from ikpy.link import OriginLink, URDFLink
    except ImportError:
        return [], "ikpy row not available: ikpy is not installed (pip install -e '.[bench]')"
    links: list[Any] = [OriginLink()]
    for i in range(10):
        up = np.array([0.0, 1.0 if i else 0.0, 0.0])
        links.append(URDFLink(f"j{i}x", up, np.zeros(3), rotation=np.array([1.0, 0.0, 0.0])))
        links.append(URDFLink(f"j{i}z", np.zeros(3), np.zeros(3), rotation=np.array([0.0, 0.0, 1.0])))
    links.append(URDFLink("tip", np.array([0.0, 1.0, 0.0]), np.zeros(3), joint_type="fixed"))
    mask = [False] + [True] * 20 + [False]
    chain = Chain(links, active_links_mask=mask)
    evals = [0]
    fk = chain.forward_kinematics

    def counted(*a: Any, **k: Any) -> Any:
        evals[0] += 1
        return fk(*a, **k)

    chain.forward_kinematics = counted  # type: ignore[method-assign]
    zero = np.zeros(len(links))
    times, its, errs = [], [], []
    t_end = time.perf_counter() + budget_s
    for t in targets:
        evals[0] = 0
        t0 = time.perf_counter()
        angles = chain.inverse_kinematics(t, initial_position=zero)
        times.append(time.perf_counter() - t0)
        its.append(evals[0])
        errs.append(float(np.linalg.norm(fk(angles)[:3, 3] - t)))
        if time.perf_counter() > t_end:
            break
    reached = common.percent(int(np.sum(np.array(errs) <= TOL)), len(errs))
    return [reached, float(np.mean(its)), 1e6 * float(np.mean(times)), len(times)], ""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    only_backends = "--backends" in argv
    args = common.parse_args(__doc__, [a for a in argv if a != "--backends"], budget_s=2.0, repeats=3)
    common.print_header("fabrik3d batch benchmark: solve_batch vs single solves", args)
    rest, reach, _ = common.chain_workload(args.quick)
    if only_backends:
        print(backend_table(chain_skeleton(rest), args.quick))
        return 0
    sizes = (20, 200) if args.quick else (1000, 10000)
    batches = {sizes[0]: reach, sizes[1]: common.ball_points(np.random.default_rng(0), sizes[1], 9.0)}
    skeleton = chain_skeleton(rest)
    cases = [
        common.solve_chain_case(rest, TOL, MAX_IT),
        common.Case(
            SOLVE,
            rest,
            lambda pos, t: fabrik3d.solve(skeleton, {"j10": t}, tolerance=TOL, max_iterations=MAX_IT),
            lambda r: (r.positions, r.iterations, r.errors["j10"]),
        ),
    ]
    print(
        f"workload: chain of 10 unit bones from rest, B = {sizes[0]} and {sizes[1]} targets in the ball of radius 9 "
        f"(default_rng(0)); humanoid from rest;\n          tolerance {TOL:g}, at most {MAX_IT} iterations; "
        "vs X = X's mean us per solve / this row's us per problem"
    )
    print()
    runs = common.run_cases(cases, reach, warm=False, repeats=args.repeats, budget_s=args.budget)
    single = {label: common.summarize(run.ns).us("mean") for label, run in runs.items()}
    rows: list[list[Any]] = []
    for label, run in runs.items():
        reached = common.percent(int(np.sum(run.errors <= TOL)), len(run.ns))
        mean = single[label]
        rows.append(
            [
                "chain",
                label,
                1,
                len(run.ns),
                reached,
                float(run.iterations.mean()),
                mean,
                common.ratio(single[CHAIN], mean),
                common.ratio(single[SOLVE], mean),
            ]
        )
    results = {}
    for size, targets in batches.items():
        res, seconds = time_batch(
            lambda t=targets: fabrik3d.solve_batch(skeleton, {"j10": t}, tolerance=TOL, max_iterations=MAX_IT),
            args.repeats,
        )
        results[size] = res
        us = 1e6 * seconds / size
        reached = common.percent(int(res.converged.sum()), size)
        rows.append(
            [
                "chain",
                BATCH,
                size,
                size,
                reached,
                float(res.iterations.mean()),
                us,
                common.ratio(single[CHAIN], us),
                common.ratio(single[SOLVE], us),
            ]
        )
    ik, ik_note = ikpy_rows(reach[: 3 if args.quick else 100], 1.0 if args.quick else 10.0)
    if ik:
        reached, it_mean, us, count = ik
        rows.append(["chain", "ikpy (least squares)", 1, count, reached, it_mean, us, "", ""])
        rows[-1][7:] = [common.ratio(single[CHAIN], us), common.ratio(single[SOLVE], us)]
    rows += humanoid_rows(args)
    print(common.format_table(HEADERS, rows))
    print()
    print(backend_table(skeleton, args.quick))
    print()
    if ik_note:
        print(ik_note)
    for line in common.cut_notes(runs, len(reach), args.budget, "chain, rest"):
        print(line)
    print()
    mem_rows = []
    bare = plain_humanoid()
    for size, targets in batches.items():
        chain_peak = peak_bytes(lambda t=targets: fabrik3d.solve_batch(skeleton, {"j10": t}))
        goals = humanoid_targets(bare, size)
        tree_peak = peak_bytes(lambda g=goals: fabrik3d.solve_batch(bare, g))
        mem_rows.append(["chain", size, chain_peak / 2**20, chain_peak / size])
        mem_rows.append(["humanoid, no limits", size, tree_peak / 2**20, tree_peak / size])
    size = min(batches)  # (tracemalloc slows the constrained solve's many small allocations)
    limited = fabrik3d.presets.get("humanoid")
    goals = valid_pose_targets(limited, size)
    limited_peak = peak_bytes(lambda: fabrik3d.solve_batch(limited, goals))
    mem_rows.append(["humanoid, limits", size, limited_peak / 2**20, limited_peak / size])
    print(common.format_table(["workload", "B", "peak MiB", "bytes/problem"], mem_rows))
    print()
    checks = common.Checks()
    res = results[sizes[0]]
    run = runs[CHAIN]
    made = len(run.ns)
    gap = float(np.abs(res.positions[:made] - run.poses[:made]).max())
    same_it = bool(np.array_equal(res.iterations[:made], run.iterations))
    print(
        checks.line(
            "solve_batch equals solve_chain per problem (1e-9, iterations)",
            gap <= 1e-9 and same_it,
            f"{made} problems, largest joint difference {gap:.1e}, iterations {'equal' if same_it else 'DIFFER'}",
        )
    )
    for size, res in results.items():
        lengths = np.linalg.norm(np.diff(res.positions, axis=1), axis=2)
        finite = bool(np.isfinite(res.positions).all() and np.isfinite(res.rotations).all())
        drift = float(np.abs(lengths - 1.0).max()) if finite else np.inf
        print(checks.line(f"B = {size}: finite, bone lengths kept", finite and drift <= 1e-9, f"drift {drift:.1e}"))
    us_big = next(r[6] for r in rows if r[1] == BATCH and r[2] == sizes[1] and r[0] == "chain")
    print(common.aim_line(f"solve_batch chain from rest, B = {sizes[1]}, per problem", us_big, 2.0, " us"))
    if args.profile:
        big = batches[sizes[1]]
        goals = humanoid_targets(bare, sizes[1])
        for label, call in (
            ("chain", lambda: fabrik3d.solve_batch(skeleton, {"j10": big})),
            ("humanoid, no limits", lambda: fabrik3d.solve_batch(bare, goals)),
        ):
            print()
            print(f"profile: {BATCH}, {label}, B = {sizes[1]} (by own time; numpy calls count in their caller's)")
            print(common.profile(call, 3 if label == "chain" else 1, top=14))
    return checks.exit_code()


def plain_humanoid() -> fabrik3d.Skeleton:
    s = fabrik3d.presets.get("humanoid")
    return fabrik3d.Skeleton(s.names, s.parents, s.rest_positions)


def five_target_humanoid() -> fabrik3d.Skeleton:
    """The humanoid's body without its fingers and limits: 25 joints, five end effectors (head, hands, toes)."""
    core = fabrik3d.presets.get("humanoid").core
    return fabrik3d.Skeleton(core.names, core.parents, core.rest_positions)


def humanoid_targets(s: fabrik3d.Skeleton, size: int) -> dict[str, np.ndarray]:
    """``(size, 3)`` targets about each effector's rest position (normal, 5 cm, ``default_rng(0)``)."""
    rng = np.random.default_rng(0)
    return {e: s.rest_positions[s.index(e)] + rng.normal(scale=0.05, size=(size, 3)) for e in s.end_effectors}


def valid_pose_targets(s: fabrik3d.Skeleton, size: int) -> dict[str, np.ndarray]:
    """``(size, 3)`` targets of every effector by forward kinematics of poses drawn uniformly
    within the joint limits (``tests/helpers/limits.random_pose``, ``default_rng(0)``): all
    reachable, as when making a dataset of constrained poses."""
    from helpers.limits import random_pose

    rng = np.random.default_rng(0)
    poses = np.array([random_pose(s, rng) for _ in range(size)])
    return {e: poses[:, s.index(e)] for e in s.end_effectors}


def oriented_and_poled(s: fabrik3d.Skeleton, size: int) -> dict[str, Any]:
    """``solve_batch`` arguments: ``valid_pose_targets``'s recipe (``default_rng(1)``), the hands
    also with the orientations of their frames in those poses (weight 1), poles 20 cm out from
    the poses' elbows (away from the chest), and start poses drawn within the limits."""
    from helpers.limits import random_pose

    from fabrik3d.solver.rig import pose_frames

    rng = np.random.default_rng(1)
    poses = np.array([random_pose(s, rng) for _ in range(size)])
    targets: dict[str, Any] = {e: poses[:, s.index(e)] for e in s.end_effectors}
    poles = {}
    for hand, elbow in (("hand_l", "elbow_l"), ("hand_r", "elbow_r")):
        frames = np.array([pose_frames(s, pose)[s.index(hand)] for pose in poses])
        targets[hand] = (targets[hand], frames, 1.0)
        out = poses[:, s.index(elbow)] - poses[:, s.index("chest")]
        poles[hand] = poses[:, s.index(elbow)] + 0.2 * out / np.linalg.norm(out, axis=1, keepdims=True)
    starts = np.array([random_pose(s, rng) for _ in range(size)])
    return {"targets": targets, "poles": poles, "positions": starts}


def problem(kwargs: dict[str, Any], b: int) -> dict[str, Any]:
    """``solve`` arguments of problem ``b`` of ``solve_batch`` arguments."""
    targets = {
        e: fabrik3d.Target(v[0][b], v[1][b], v[2]) if isinstance(v, tuple) else v[b]
        for e, v in kwargs["targets"].items()
    }
    out: dict[str, Any] = {"targets": targets}
    if "poles" in kwargs:
        out["poles"] = {e: v[b] for e, v in kwargs["poles"].items()}
    if "positions" in kwargs:
        out["positions"] = kwargs["positions"][b]
    return out


def humanoid_rows(args: Any) -> list[list[Any]]:
    """Humanoid rows: the tree without limits, with limits, and with limits, orientation targets
    and poles (all vectorised), each vs solve looped."""
    rows = []
    limited = fabrik3d.presets.get("humanoid")
    quick = args.quick

    def targets_only(make: Callable[[fabrik3d.Skeleton, int], dict]) -> Callable[[fabrik3d.Skeleton, int], dict]:
        return lambda s, size: {"targets": make(s, size)}

    for label, s, size, loop_count, repeats, make in (
        (
            "humanoid, no limits",
            plain_humanoid(),
            20 if quick else 10000,
            5 if quick else 200,
            args.repeats,
            targets_only(humanoid_targets),
        ),
        # one pass: 10000 constrained solves take a while
        ("humanoid, limits", limited, 2 if quick else 10000, 2 if quick else 200, 1, targets_only(valid_pose_targets)),
        (
            "humanoid, limits, hand turns, poles, warm",
            limited,
            2 if quick else 4000,
            2 if quick else 100,
            1,
            oriented_and_poled,
        ),
    ):
        kwargs = make(s, size)
        res, seconds = time_batch(lambda s=s, k=kwargs: fabrik3d.solve_batch(s, **k), repeats)
        its, hits = [], 0
        t0 = time.perf_counter()
        for b in range(loop_count):
            one = fabrik3d.solve(s, **problem(kwargs, b))
            its.append(one.iterations)
            hits += one.converged
        loop_us = 1e6 * (time.perf_counter() - t0) / loop_count
        us = 1e6 * seconds / size
        reached = common.percent(int(res.converged.sum()), size)
        row = [label, SOLVE, 1, loop_count, common.percent(hits, loop_count), float(np.mean(its)), loop_us, "", "1.00x"]
        rows.append(row)
        rows.append(
            [label, BATCH, size, size, reached, float(res.iterations.mean()), us, "", common.ratio(loop_us, us)]
        )
    return rows


BACKEND_HEADERS = [
    "workload",
    "B",
    "backend",
    "threads",
    "it mean",
    "ns/problem",
    "kernel ns/problem",
    "vs numpy",
    "same",
]


def backend_table(skeleton: fabrik3d.Skeleton, quick: bool) -> str:
    """Per backend of ``solve_batch``: numpy, and "cpu" (numba, the extra fabrik3d[fast]) on 1, 2, 4, ...
    threads and on every core (``thread_curve``), compiled before timing, on five workloads: the chain
    (B targets in the ball of radius 9, ``ball_points`` on ``default_rng(0)``), the humanoid's body
    with its five targets, no limits (``five_target_humanoid``, ``humanoid_targets``), and with joint
    limits the robot arm (hinges), the octopus (nine targets, a rigid root, cones) and the humanoid's body
    with its limits and a plain posing (25 joints, five targets; rolling shoulders and hips, a rigid chest
    of three children), their targets by forward kinematics of poses within the limits
    (``valid_pose_targets``), solved cold from rest (one pass; restarts where a first attempt stalls); the
    humanoid's body with its limits again, warm from poses within them, with orientation targets for both
    hands and poles on both arms (``oriented_and_poled``);
    and the humanoid preset itself (its natural posing, fingers riding; ``humanoid_targets``), whose
    problems ``solve`` takes one by one: on "cpu" they are shared among as many worker processes as
    threads (``fabrik3d.batch.workers``; one pass, the workers' start included).

    ``ns/problem``: the whole ``solve_batch`` call (the fastest of 3 passes, 1 at the largest B);
    ``kernel``: the chain solve alone (``solve_chains``; for "cuda" the copies to and from the GPU
    included; the chain only); ``vs numpy``: numpy's ns/problem over this row's; ``same``: iterations
    equal, positions and rotations within 1e-12. Where numba sees an NVIDIA GPU, "cuda" rows follow (not
    for the limits, whose compiled passes are the CPU's), and a last table times the GPU kernels alone on
    arrays already on the GPU (CUDA events)."""
    from fabrik3d.batch import backends
    from fabrik3d.batch import chain as batch_chain

    try:
        import numba
    except ImportError:
        return f"backends: only numpy here (numba is missing: {backends.INSTALL})"
    rest = skeleton.rest_positions
    start, lengths = rest[:, :, None], np.linalg.norm(np.diff(rest, axis=0), axis=1).tolist()
    cores = numba.get_num_threads()
    gpu = cuda_available()
    humanoid = five_target_humanoid()
    arm, octopus = fabrik3d.presets.get("robot_arm"), fabrik3d.presets.get("octopus")
    core = fabrik3d.presets.get("humanoid").core  # (its body and limits without the natural posing)
    limited_humanoid = fabrik3d.Skeleton(core.names, core.parents, core.rest_positions, core.constraints)
    workloads = [
        ("chain", (1000,) if quick else (10**4, 10**5, 10**6)),
        ("humanoid", (200,) if quick else (10**4, 10**5)),
        ("robot arm, limits", (300,) if quick else (10**3, 10**4)),
        ("octopus, limits", (300,) if quick else (10**3,)),
        ("humanoid, limits", (300,) if quick else (10**3,)),
        ("humanoid, limits, oriented", (300,) if quick else (10**3,)),
        ("humanoid preset, natural", (8,) if quick else (200,)),
    ]
    rows = []
    for name, sizes in workloads:
        limited = "limits" in name
        for size in sizes:
            extra: dict[str, Any] = {}
            if name == "chain":
                targets = common.ball_points(np.random.default_rng(0), size, 9.0)
                model, goal = skeleton, {"j10": targets}
                goals, out = np.ascontiguousarray(targets.T), np.empty((size, len(rest), 3))
            elif name.endswith("oriented"):
                model = limited_humanoid
                extra = oriented_and_poled(model, size)
                goal = extra.pop("targets")
            elif limited:
                model = {"robot": arm, "octopus": octopus, "humanoid": limited_humanoid}[name.split()[0].strip(",")]
                goal = valid_pose_targets(model, size)
            elif name.endswith("natural"):
                model = fabrik3d.presets.get("humanoid")
                goal = humanoid_targets(model, size)
            else:
                model, goal = humanoid, humanoid_targets(humanoid, size)
            one_by_one = name.endswith("natural")
            repeats = 1 if (size == sizes[-1] and not quick) or limited or one_by_one else 3
            base, base_ns = None, 0.0
            cuda_rows = [("cuda", 0)] * (gpu and not limited and not one_by_one)  # (limits: the CPU passes)
            plan = [("numpy", 1), *(("cpu", t) for t in thread_curve(cores)), *cuda_rows]
            for backend, threads in plan:
                numba.set_num_threads(max(threads, 1))
                if backend != "numpy" and not one_by_one and not extra:  # compile (limits: large enough to vectorise)
                    warm = 300 if limited else 64
                    fabrik3d.solve_batch(model, {e: t[:warm] for e, t in goal.items()}, backend=backend)
                res, seconds = time_batch(
                    lambda m=model, g=goal, b=backend, x=extra: fabrik3d.solve_batch(m, g, backend=b, **x), repeats
                )
                ns = 1e9 * seconds / size
                kernel_ns: Any = ""
                if name == "chain":
                    k = (
                        batch_chain.solve_chains
                        if backend == "numpy"
                        else functools.partial(backends.solve_chains, backend)
                    )
                    _, k_seconds = time_batch(lambda k=k, g=goals, o=out: k(start, lengths, g, TOL, MAX_IT, o), repeats)
                    kernel_ns = 1e9 * k_seconds / size
                if base is None:
                    base, base_ns = res, ns
                same = (
                    np.array_equal(base.iterations, res.iterations)
                    and np.abs(base.positions - res.positions).max() <= 1e-12
                    and np.abs(base.rotations - res.rotations).max() <= 1e-12
                )
                rows.append([name, size, backend, threads, float(res.iterations.mean()), ns, kernel_ns])
                rows[-1] += [common.ratio(base_ns, ns), "yes" if same else "NO"]
            numba.set_num_threads(cores)
    table = "backends of solve_batch:\n" + common.format_table(BACKEND_HEADERS, rows)
    if gpu:
        table += "\n\n" + cuda_kernel_table(skeleton, humanoid, quick)
    return table


def thread_curve(cores: int) -> list[int]:
    """The CPU threads the "cpu" rows run on: 1, 2, 4, ... and every core (the scaling curve)."""
    out = [1]
    while out[-1] * 2 < cores:
        out.append(out[-1] * 2)
    return out + [cores] * (cores > 1)


def cuda_available() -> bool:
    """Whether numba's CUDA target sees a GPU (False without numba's CUDA target)."""
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


CUDA_HEADERS = ["workload", "B", "kernel ms", "ns/problem", "solves/s"]


def cuda_kernel_table(chain: fabrik3d.Skeleton, humanoid: fabrik3d.Skeleton, quick: bool) -> str:
    """The cuda kernels alone on arrays already on the GPU (the solve, not the frames): the median of 5
    launches timed by CUDA events; the chain workload, and the humanoid's tree with its five targets."""
    from numba import cuda

    from fabrik3d.batch import backends, compiled
    from fabrik3d.batch import tree as batch_tree
    from fabrik3d.solver.rig import rig

    r = rig(humanoid)
    rows = []
    for name in ("chain", "humanoid"):
        for size in (64,) if quick else (10**5, 10**6, 10**7):
            if name == "chain":
                rest = chain.rest_positions
                lengths = np.linalg.norm(np.diff(rest, axis=0), axis=1).tolist()
                goals = common.ball_points(np.random.default_rng(0), size, 9.0)
                pose = np.empty((size, len(rest), 3))
                launch = backends.chain_launch(rest[:, :, None], lengths, goals.T, TOL, MAX_IT, pose)
            else:
                goal = {humanoid.index(e): t for e, t in humanoid_targets(humanoid, size).items()}
                plan = batch_tree.TreePlan(humanoid, r, goal, None, [True] * len(humanoid))
                pose = np.repeat(humanoid.rest_positions[None], size, axis=0)
                launch = backends.tree_launch(plan, humanoid.rest_positions[:, :, None], goal, TOL, MAX_IT, pose)
            threads = backends.cuda_threads(size)
            args = backends.cuda_arguments(launch, threads)
            kernel = compiled.cuda(launch.kind)
            grid = threads // backends.CUDA_THREADS
            times = []
            for _ in range(6):
                args[0].copy_to_device(np.zeros(1, dtype=np.int64))  # (the queue of problems, afresh)
                t0, t1 = cuda.event(), cuda.event()
                t0.record()
                kernel[grid, backends.CUDA_THREADS](size, args)
                t1.record()
                t1.synchronize()
                times.append(t0.elapsed_time(t1))  # ms
            ms = float(np.median(times[1:]))
            rate = f"{size / ms * 1e3:.3g}" if ms > 0 else "-"  # (numba's CUDA simulator times nothing)
            rows.append([name, size, ms, 1e6 * ms / size, rate])
            del args, launch
    return "cuda kernels alone (arrays on the GPU, float64):\n" + common.format_table(CUDA_HEADERS, rows)


if __name__ == "__main__":
    sys.exit(main())
