"""Scaling benchmark: how solve time grows with chain length and with the number of targeted effectors.

Workloads (all from rest, tolerance 1e-3, at most 100 iterations, ``numpy.random.default_rng(0)``):

* chains of 10, 100 and 1000 unit bones along +Y; targets uniform in the ball of
  radius 0.9 x the chain's reach (``common.ball_points``);
* trees with 2, 8, 32 and 64 targeted effectors: a spine of three unit bones up
  +Y to a sub-base from which the arms (three bones of 0.5 each) fan out evenly in
  the XZ plane; targets about each arm tip's rest position (normal, 0.3).

Each row times ``fabrik3d.solve`` (``solve_chain`` for the chains) one problem at
a time (mean over the problems) and ``fabrik3d.solve_batch`` on all of them at
once (fastest of the passes, divided by B). Since FABRIK's iterations are linear
in the number of bones, the ``per it`` columns divide by each problem's iterations
too. The growth exponent ``k`` is the least-squares slope of log(time) against
log(size): 1 is linear.

A second table times what must stay linear in the skeleton's size (issue 15), one call each at
10^3, 10^4 and 10^5 joints (``--quick``: 100 and 300), with the fitted exponent (aim: <= 1.2):
building a chain ``Skeleton`` with a ``Cone`` on every joint; a constrained ``solve`` of that chain
(one reachable target, at most 4 iterations, so damped steps run); ``solve_batch`` of a plain chain
(2 problems, one target); a plain ``solve`` of a star whose every leaf is targeted; reading a
scene file of that limited chain (``parse_scene``); ``fabrik3d.gltf.import_skeleton`` of a
chain's .gltf without inverse bind matrices, and of a star whose leaves all have one name (issue 33).

A third table times animations against their keys and frames (issue 33), one call each at 10^2,
10^3 and 10^4 keys (the most an animation holds) and 10^3, 10^4 and 10^5 frames (the most one bake
solves; ``--quick``: 30 and 100 keys, 100 and 300 frames), with the fitted exponent (aim: <= 1.2):
reading a scene of the humanoid with a key on every frame (targets only, and with the pose each key
holds), baking it with a posed key on every frame (no solve: the curves, the key lookups and the
keyed results), and ``fabrik3d bake``'s streamed bake of two keys held over the frames to a ``.glb``.

Run: ``python benchmarks/bench_scaling.py [--quick] [--repeats N]``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from typing import Any

import common
import numpy as np

import fabrik3d
from fabrik3d.io.scene import Scene, parse_scene

TOL = 1e-3
MAX_IT = 100
HEADERS = [
    "workload",
    "size",
    "joints",
    "B",
    "it mean",
    "single us",
    "single us/it",
    "batch us/problem",
    "batch us/it",
    "batch vs single",
]


def chain_case(bones: int, count: int) -> tuple[fabrik3d.Skeleton, dict[str, np.ndarray]]:
    rest = common.straight_chain(bones)
    s = fabrik3d.Skeleton([f"j{i}" for i in range(bones + 1)], list(range(-1, bones)), rest)
    return s, {f"j{bones}": common.ball_points(np.random.default_rng(0), count, 0.9 * bones)}


def tree_case(arms: int, count: int) -> tuple[fabrik3d.Skeleton, dict[str, np.ndarray]]:
    names, parents, pos = ["root", "s1", "s2", "sub"], [-1, 0, 1, 2], [[0.0, float(y), 0.0] for y in range(4)]
    for a in range(arms):
        angle = 2 * math.pi * a / arms
        d = np.array([math.cos(angle), 0.0, math.sin(angle)])
        for k in range(3):
            names.append(f"a{a}_{k}")
            parents.append(3 if k == 0 else len(names) - 2)
            pos.append((np.array([0.0, 3.0, 0.0]) + 0.5 * (k + 1) * d).tolist())
    s = fabrik3d.Skeleton(names, parents, pos)
    rng = np.random.default_rng(0)
    return s, {e: s.rest_positions[s.index(e)] + rng.normal(scale=0.3, size=(count, 3)) for e in s.end_effectors}


def measure(s: fabrik3d.Skeleton, goals: dict[str, np.ndarray], singles: int, repeats: int) -> dict[str, float]:
    """Single solves (the first ``singles`` problems) and the batch: times in us, iterations."""
    (_name, targets), *_ = goals.items()
    bsize = len(targets)
    times, its = [], []
    rest = s.rest_positions
    for b in range(singles):
        if len(goals) == 1:
            t0 = time.perf_counter()
            r = fabrik3d.solve_chain(rest, targets[b], tolerance=TOL, max_iterations=MAX_IT)
        else:
            one = {e: v[b] for e, v in goals.items()}
            t0 = time.perf_counter()
            r = fabrik3d.solve(s, one, tolerance=TOL, max_iterations=MAX_IT)
        times.append(time.perf_counter() - t0)
        its.append(max(r.iterations, 1))
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = fabrik3d.solve_batch(s, goals, tolerance=TOL, max_iterations=MAX_IT)
        best = min(best, time.perf_counter() - t0)
    it_batch = float(np.maximum(res.iterations, 1).mean())
    return {
        "B": bsize,
        "it": float(np.mean(its)),
        "single": 1e6 * float(np.mean(times)),
        "single_it": 1e6 * float(np.mean(np.array(times) / np.array(its))),
        "batch": 1e6 * best / bsize,
        "batch_it": 1e6 * best / bsize / it_batch,
    }


def exponent(sizes: list[int], values: list[float]) -> float:
    """Least-squares slope of log(values) against log(sizes)."""
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def main(argv: list[str] | None = None) -> int:
    args = common.parse_args(__doc__, argv, budget_s=2.0, repeats=3)
    common.print_header("fabrik3d scaling benchmark: chain length and targeted effectors", args)
    bones = (10, 100) if args.quick else (10, 100, 1000)
    arms = (2, 8) if args.quick else (2, 8, 32, 64)
    # (batch size, single solves) per size: one batch size per workload (per-call costs weigh more in small
    # batches, so a batch size shrinking with the size would bend the fitted exponent); fewer single solves.
    chain_counts = {10: (1000, 200), 100: (1000, 20), 1000: (1000, 3)}
    tree_counts = {2: (200, 50), 8: (200, 20), 32: (200, 5), 64: (200, 3)}
    if args.quick:
        chain_counts = {10: (40, 5), 100: (20, 2)}
        tree_counts = {2: (20, 3), 8: (20, 2)}
    rows: list[list[Any]] = []
    series: dict[str, tuple[list[int], list[dict[str, float]]]] = {"chain": ([], []), "tree": ([], [])}
    for label, sizes, counts, make in (
        ("chain", bones, chain_counts, chain_case),
        ("tree", arms, tree_counts, tree_case),
    ):
        for size in sizes:
            bsize, singles = counts[size]
            s, goals = make(size, bsize)
            m = measure(s, goals, singles, args.repeats)
            series[label][0].append(size)
            series[label][1].append(m)
            what = f"{size} bones" if label == "chain" else f"{size} effectors"
            rows.append(
                [
                    label,
                    what,
                    len(s),
                    m["B"],
                    m["it"],
                    m["single"],
                    m["single_it"],
                    m["batch"],
                    m["batch_it"],
                    common.ratio(m["single"], m["batch"]),
                ]
            )
    print("time per problem (us) from rest; per it = divided by the problem's iterations")
    print()
    print(common.format_table(HEADERS, rows))
    print()
    for label, (sizes, ms) in series.items():
        k = {key: exponent(sizes, [m[key] for m in ms]) for key in ("single", "single_it", "batch", "batch_it")}
        print(
            f"growth exponent, {label}s (time ~ size^k): single k = {k['single']:.2f} "
            f"(per iteration {k['single_it']:.2f}), batch k = {k['batch']:.2f} (per iteration {k['batch_it']:.2f})"
        )
    print()
    large_skeletons((100, 300) if args.quick else (1000, 10_000, 100_000))
    print()
    animations(
        (30, 100) if args.quick else (1000, 10_000, 100_000), (100, 300) if args.quick else (1000, 10_000, 100_000)
    )
    return 0


def _line(n: int, limits: bool = False) -> fabrik3d.Skeleton:
    pos = np.zeros((n, 3))
    pos[:, 1] = np.arange(n) * 0.1
    names = [f"j{i}" for i in range(n)]
    return fabrik3d.Skeleton(
        names, list(range(-1, n - 1)), pos, {m: fabrik3d.Cone(40.0) for m in names[:-1]} if limits else None
    )


def _star(n: int) -> tuple[fabrik3d.Skeleton, dict[str, np.ndarray]]:
    pos = np.zeros((n + 1, 3))
    angle = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    pos[1:, 0], pos[1:, 2] = np.cos(angle), np.sin(angle)
    s = fabrik3d.Skeleton(["c"] + [f"e{i}" for i in range(n)], [-1] + [0] * n, pos)
    return s, {f"e{i}": pos[i + 1] + [0.0, 0.1, 0.0] for i in range(n)}


def _gltf_without_bind_matrices(n: int, folder: str) -> str:
    """A .gltf of an ``n``-joint chain (0.1 apart along +Y): nodes and a skin, no inverse bind
    matrices and no mesh (written here: a skinned mesh's JOINTS_0 indexes at most 65536 joints)."""
    nodes = [{"name": f"j{i}", "translation": [0.0, 0.1 if i else 0.0, 0.0]} for i in range(n)]
    for i in range(n - 1):
        nodes[i]["children"] = [i + 1]
    doc = {
        "asset": {"version": "2.0"},
        "nodes": nodes,
        "skins": [{"joints": list(range(n))}],
        "scenes": [{"nodes": [0]}],
        "scene": 0,
    }
    path = os.path.join(folder, f"chain{n}.gltf")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def _gltf_same_names(n: int, folder: str) -> str:
    """A .gltf of a root and ``n - 1`` leaf joints all named ``bone`` (they import as ``bone``, ``bone_2``,
    ...: the renaming must stay linear; issue 33 had 2x10^4 of them take 23 s)."""
    nodes = [{"name": "root", "children": list(range(1, n))}]
    nodes += [{"name": "bone", "translation": [0.001 * i, 0.1, 0.0]} for i in range(1, n)]
    doc = {"asset": {"version": "2.0"}, "nodes": nodes, "skins": [{"joints": list(range(n))}]}
    path = os.path.join(folder, f"same{n}.gltf")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def _scene_text(n: int) -> str:
    return json.dumps(Scene(_line(n, True)).to_dict())


def _limited_solve(s: fabrik3d.Skeleton) -> None:
    n = len(s)
    fabrik3d.solve(s, {f"j{n - 1}": [0.03 * n, 0.06 * n, 0.0]}, max_iterations=4)


def _batch_solve(s: fabrik3d.Skeleton) -> None:
    n = len(s)
    fabrik3d.solve_batch(s, {f"j{n - 1}": np.array([[0.05 * n, 0.05 * n, 0.0]] * 2)})


def _import(path: str) -> None:
    fabrik3d.gltf.import_skeleton(path)


def _once(call: Any, *args: Any) -> float:
    t0 = time.perf_counter()
    call(*args)
    return time.perf_counter() - t0


def large_skeletons(sizes: tuple[int, ...]) -> None:
    """The second table: seconds per call at each size, the fitted exponent, the aim (<= 1.2)."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        cases: list[tuple[str, Any]] = [
            ("Skeleton, a Cone on every joint", lambda n: _once(_line, n, True)),
            ("solve with limits, chain", lambda n: _once(_limited_solve, _line(n, True))),
            ("solve_batch, plain chain, B = 2", lambda n: _once(_batch_solve, _line(n))),
            ("solve, star, every leaf targeted", lambda n: _once(fabrik3d.solve, *_star(n))),
            ("scene file read, a Cone on every joint", lambda n: _once(parse_scene, _scene_text(n))),
            ("glTF import, no inverse bind matrices", lambda n: _once(_import, _gltf_without_bind_matrices(n, folder))),
            ("glTF import, every leaf of one name", lambda n: _once(_import, _gltf_same_names(n, folder))),
        ]
        for what, run in cases:
            seconds = [run(n) for n in sizes]
            k = exponent(list(sizes), seconds)
            rows.append([what, *[f"{s:.3f}" for s in seconds], f"{k:.2f}", "met" if k <= 1.2 else "MISSED"])
    print("large skeletons: seconds per call (one call each), growth exponent k (aim <= 1.2)")
    print()
    print(common.format_table(["case", *[f"{n} joints" for n in sizes], "k", "aim"], rows))


def _keyed_scene(keys: int, poses: bool) -> str:
    """A scene of the humanoid whose hand_l is keyed on frames 0..keys-1 (with the rest pose held by
    every key when ``poses``: a bake then solves nothing, only the curves and key lookups run)."""
    body = fabrik3d.presets.get("humanoid")
    hand = body.rest_positions[body.index("hand_l")]
    rest = fabrik3d.solve(body, {})
    pose = {"positions": rest.positions.tolist(), "rotations": rest.rotations.tolist()}
    up = np.array([0.0, 0.01, 0.0])
    rows = [{"frame": f, "targets": {"hand_l": (hand + (f % 2) * up).tolist()}} for f in range(keys)]
    for row in rows if poses else []:
        row["pose"] = pose
    data = Scene(body).to_dict()
    data["animation"] = {"keys": rows}
    return json.dumps(data)


def _bake_file(scene: Scene, frames: int, path: str) -> None:
    from fabrik3d.io.bake_file import bake_to_file

    bake_to_file(scene.skeleton, scene.animation, path, frames=(0, frames - 1))  # type: ignore[arg-type]


def animations(key_sizes: tuple[int, ...], frame_sizes: tuple[int, ...]) -> None:
    """The third table (issue 33): seconds per call against the number of keys (at most
    ``MAX_KEYS``) and of frames baked (at most ``MAX_BAKE_FRAMES``), the fitted exponent, the aim."""
    from fabrik3d.io.bake import MAX_BAKE_FRAMES, bake
    from fabrik3d.model.keys import MAX_KEYS

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "bake.glb")
        held = parse_scene(_keyed_scene(2, False))  # (two keys, then held: a bake's own cost per frame)
        cases: list[tuple[str, tuple[int, ...], str, Any]] = [
            ("scene file read, keys", key_sizes, "keys", lambda n: _once(parse_scene, _keyed_scene(n, False))),
            (
                "scene file read, keys holding poses",
                key_sizes,
                "keys",
                lambda n: _once(parse_scene, _keyed_scene(n, True)),
            ),
            ("bake, a posed key on every frame", key_sizes, "keys", lambda n: _once(bake, *_posed_bake(n))),
            ("bake streamed to .glb, pose held", frame_sizes, "frames", lambda n: _once(_bake_file, held, n, out)),
        ]
        for what, sizes, unit, run in cases:
            seconds = [run(n) for n in sizes]
            k = exponent(list(sizes), seconds)
            per = 1e6 * seconds[-1] / sizes[-1]
            cells = [f"{n} {unit}: {t:.3f}" for n, t in zip(sizes, seconds)]
            rows.append([what, *cells, f"{per:.0f}", f"{k:.2f}", "met" if k <= 1.2 else "MISSED"])
    print(f"animations: seconds per call (one call each; at most {MAX_KEYS} keys, {MAX_BAKE_FRAMES} frames a bake),")
    print("us per key or frame at the largest size, growth exponent k (aim <= 1.2)")
    print()
    heads = [f"size {i + 1}" for i in range(len(key_sizes))]
    print(common.format_table(["case", *heads, "us each", "k", "aim"], rows))


def _posed_text(n: int) -> str:
    return _keyed_scene(n, True)


def _posed_bake(n: int) -> tuple[Any, Any]:
    scene = parse_scene(_keyed_scene(n, True))
    return scene.skeleton, scene.animation


if __name__ == "__main__":
    sys.exit(main())
