"""How natural the humanoid's poses are (issue 14's bars), in one table.

Columns: the humanoid preset's defaults (``fabrik3d.solve`` with ``skeleton.posing``), the plain
full-body chain (``posing=fabrik3d.Posing()``, for contrast) and an analytic two-bone arm (the
body still, no limits; arm rows only). The measures (``tests/helpers/naturalness.py``):

* arm reaches that the arm alone can make (0.15-0.95 of the arm's length from the shoulder:
  face, chest, belly, thigh, overhead, across the body, in front, to the side), cold from rest
  and in chained warm drags of 12 frames (the other hand's placed target kept): converged, chest
  turn, head and free-hand moves, bad elbows (up, toward the midline, inside the torso); the head's
  largest move has no aim (reported: a drag that leaves the torso bent, docs/natural-posing.md);
* targets 3-12% beyond the arm's reach in front of the body: reached (the body leans);
* a smooth figure-eight drag of each hand (steps <= 1.5 cm): the largest move of another joint
  over the hand's step, and the largest elbow swing between frames; the chained drags' largest
  move ratio and how many of their frames exceed the aim (no aim of its own: progress shows);
* three round trips of a hand from rest to the face and back: the body's and the arm's largest
  distance from rest;
* a crouch with both toes pinned, the pelvis lowered 1 cm a frame to 30 cm (warm) and to each
  depth from 8 to 35 cm (cold): toe error, knees forward, lowest ankle, knee move per cm.

The aims are issue 14's bars; a column's value that misses its aim is marked ``MISSED`` (the
contrast columns are expected to miss). Geometry only: the speed is bench_humanoid.py's.

Run: ``python benchmarks/bench_naturalness.py [--quick] [--seed N]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import common  # (puts tests/ on sys.path)
from helpers import naturalness as nt

# measure -> (aim, "<=" or ">=")
AIMS: dict[str, tuple[float, str]] = {
    "converged %": (98.0, ">="),
    "chest deg p50": (2.0, "<="),
    "chest deg p95": (5.0, "<="),
    "head cm p50": (1.0, "<="),
    "head cm p95": (3.0, "<="),
    "free hand cm p95": (1.0, "<="),
    "bad elbows %": (2.0, "<="),
    "beyond reach: reached %": (95.0, ">="),
    "smooth drag: joint/hand step": (2.0, "<="),
    "smooth drag: elbow swing deg": (30.0, "<="),
    "chained drags: joint/hand step": (3.0, "<="),
    "round trips: body cm": (1.0, "<="),
    "round trips: arm cm": (3.0, "<="),
    "crouch warm: toe mm": (1.0, "<="),
    "crouch warm: knees forward %": (100.0, ">="),
    "crouch warm: lowest ankle cm": (0.0, ">="),
    "crouch warm: knee cm per cm": (3.0, "<="),
    "crouch cold: toe mm": (1.0, "<="),
    "crouch cold: knees forward %": (100.0, ">="),
    "crouch cold: lowest ankle cm": (0.0, ">="),
}
ARM_ONLY = {"crouch", "beyond"}  # rows the two-bone arm does not model


def measure(mode_name: str, reaches: int, seed: int) -> dict[str, float]:
    mode = nt.MODES[mode_name]
    sk = nt.humanoid()
    sample = nt.arm_reaches(sk, seed, reaches)
    out: dict[str, float] = {}
    cold = nt.cold_reaches(mode, sk, sample).summary()
    warm, ratios = nt.chained_drags(mode, sk, sample)
    for key, value in cold.items():
        out[f"cold: {key}"] = value
    for key, value in warm.summary().items():
        out[f"warm: {key}"] = value
    out["chained drags: joint/hand step"] = max(ratios)
    out["chained drags: frames over 3x"] = sum(r > AIMS["chained drags: joint/hand step"][0] for r in ratios)
    beyond = nt.beyond_reach(sk, seed, max(20, reaches // 2))
    out["beyond reach: reached %"] = 100.0 * sum(mode(sk, {h: t})[1] for h, t in beyond) / len(beyond)
    ratios, swings = zip(*(nt.smooth_drag(mode, sk, side) for side in nt.SIDES))
    out["smooth drag: joint/hand step"] = max(ratios)
    out["smooth drag: elbow swing deg"] = max(swings)
    trips = [nt.round_trips(mode, sk, side) for side in nt.SIDES]
    out["round trips: body cm"] = 100 * max(b for b, _ in trips)
    out["round trips: arm cm"] = 100 * max(a for _, a in trips)
    if mode_name != "two-bone arm":
        warm_crouch = nt.crouch(mode, sk, [0.01 * k for k in range(1, 31)], warm=True)
        cold_crouch = nt.crouch(mode, sk, [0.01 * k for k in range(8, 36)], warm=False)
        for key, value in warm_crouch.items():
            out[f"crouch warm: {key}"] = value
        for key in ("toe mm", "knees forward %", "lowest ankle cm"):
            out[f"crouch cold: {key}"] = cold_crouch[key]
    return out


def aim_of(row: str) -> tuple[float, str] | None:
    return AIMS.get(row) or AIMS.get(row.split(": ", 1)[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="30 reaches instead of 240")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    reaches = 30 if args.quick else 240
    columns = list(nt.MODES)
    results = {}
    for name in columns:
        t0 = time.perf_counter()
        results[name] = measure(name, reaches, args.seed)
        print(f"# {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    rows = list(results[columns[0]])
    title = f"naturalness of the humanoid: {reaches} arm reaches (seed {args.seed}); aims from issue 14"
    print(title)
    print("=" * len(title))
    for line in common.machine_lines():
        print(line)
    print(f"mode    : {'QUICK (fewer reaches)' if args.quick else 'full'}; geometry, not time")
    print()
    table = []
    for row in rows:
        aim = aim_of(row)
        cells = []
        for name in columns:
            value = results[name].get(row)
            if value is None:
                cells.append("-")
                continue
            ok = aim is None or (value <= aim[0] if aim[1] == "<=" else value >= aim[0])
            cells.append((f"{value:.2f}" if isinstance(value, float) else str(value)) + ("" if ok else " MISSED"))
        table.append([row, "" if aim is None else f"{aim[1]} {aim[0]:g}", *cells])
    print(common.format_table(["measure", "aim", *columns], table))
    missed = [row for row in rows if "MISSED" in table[rows.index(row)][2]]
    aimed = [row for row in rows if aim_of(row) is not None]
    print()
    print(
        f"defaults: {len(aimed) - len(missed)} of {len(aimed)} measures within their aims"
        + (f"; missed: {', '.join(missed)}" if missed else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
