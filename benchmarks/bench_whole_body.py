"""The body as a whole (issue 50's bars), in one table.

Columns: ``whole body``, the humanoid preset as it is (``fabrik3d.solve`` with its ``Posing``), and
``rules off``, for contrast: the same skeleton with ``Posing.hang`` emptied and, for that column only
(patched inside a context that restores them), the hinge's step back (``hinge.counterweight``), the
torso's follow (``whole_body.follow_turns``) and the settled start (``WholeBody.settled``,
``WholeBody.nearer``) switched off. The rows:

* **free arm**: toes pinned, the left hand placed (cold) or dragged (20 warm frames from where it
  hangs) low in front (0.1-0.55 m high, 0.25-0.55 m before the toes): the right upper arm's and
  forearm's angles from straight down (p95), and how far the right hand is below its shoulder (the
  least, in arm lengths);
* **starter poses** ("sit", "kneel", "crouch", "run", "walk contact left", "idle", "T", "A"; a few
  with ``--quick``), applied to the stance ``solve(sk, {})``, put on the floor at 0
  (``ground.lifted_onto_floor``) and solved warm relaxing to the pose applied, on the floor: each
  effector pinned where it is (and all at once), the largest joint move; a look 40 deg aside, the
  largest move of the pelvis, knees, ankles and toes; ten warm re-solves with every effector pinned,
  the largest move from the pose;
* **low reaches** (``helpers.whole_body.low_reaches``: 0.05-0.35 m high, 0.25-0.45 m before the
  toes, toes pinned): the pelvis pitched forward 20 deg, moved back 3 cm, the hand within 1 cm; with
  ``balance=True, floor=0.0``, the centre of mass over the support area;
* **forward reaches** with balance (``helpers.whole_body.forward_reaches``, ``floor=0.0``): the pelvis
  back 1 cm, the centre of mass 3 cm inside the support area's edge (missed today: the heels lift and
  the area shrinks to the balls of the feet, docs/natural-posing.md), and how many end nearer the edge
  than the same reach without balance;
* **punch**: 20-frame drags of a hand to 0.6-0.7 m before the chest at shoulder height: the chest's
  turn toward it;
* **beside**: cold reaches beside the body within 0.5-0.8 of the arm: the chest's largest turn.

The aims are issue 50's bars (and issue 14's for the reaches beside the body); a ``whole body`` value
that misses its aim is marked ``MISSED`` (the contrast column is expected to miss). A missed aim never
fails the script; a measured pose with NaN does (exit 1). Geometry only: the speed is
bench_humanoid.py's; each column's wall time is printed for scale.

Run: ``python benchmarks/bench_whole_body.py [--quick] [--seed N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import sys
import time
from collections.abc import Iterator
from typing import Any

import common  # (puts tests/ on sys.path)
import numpy as np
from helpers import naturalness as nt
from helpers import whole_body as wb

import fabrik3d
import fabrik3d.solver.hinge
import fabrik3d.solver.whole_body
from fabrik3d import rotations as rot
from fabrik3d.solver.ground import lifted_onto_floor

DOWN = np.array([0.0, -1.0, 0.0])
EFFECTORS = ("toe_l", "toe_r", "hand_l", "hand_r", "head")
STARTERS = ("sit", "kneel", "crouch", "run", "walk contact left", "idle", "T", "A")
QUICK_STARTERS = ("sit", "kneel")
LOWER = ("pelvis", "knee_l", "knee_r", "ankle_l", "ankle_r", "toe_l", "toe_r")
COLUMNS = ("whole body", "rules off")

# row -> (aim, "<=" or ">="), or None: reported, no aim
ROWS: dict[str, tuple[float, str] | None] = {
    "free arm: arm from down deg p95": (30.0, "<="),
    "free arm: hand below shoulder, min (arms)": (0.4, ">="),
    "starters: pin where it is, max move mm": (1.0, "<="),
    "starters: look 40 deg aside, hips/legs mm": (1.0, "<="),
    "starters: 10 re-solves pinned, max move mm": (1.0, "<="),
    "low reaches: pelvis pitch >= 20 deg %": (90.0, ">="),
    "low reaches: moved back >= 3 cm %": (90.0, ">="),
    "low reaches: reached within 1 cm %": (90.0, ">="),
    "low reaches: pelvis back cm p50": None,
    "low reaches, balance: CoM over feet %": (95.0, ">="),
    "forward, balance: pelvis back >= 1 cm %": (90.0, ">="),
    "forward, balance: CoM >= 3 cm inside %": (90.0, ">="),
    "forward, balance: CoM inside cm p50": None,
    "forward, balance: nearer edge than without": (0.0, "<="),
    "punch: chest turn toward it deg p50": (10.0, ">="),
    "punch: chest turn >= 10 deg %": (90.0, ">="),
    "beside, 0.5-0.8 arm: chest turn deg max": (3.0, "<="),
}


@dataclasses.dataclass(frozen=True)
class Sizes:
    free_cold: int
    free_drags: int
    starters: tuple[str, ...]
    low: int
    low_balance: int
    forward: int
    punches: int
    beside: int


FULL = Sizes(80, 30, STARTERS, 100, 60, 50, 8, 40)
QUICK = Sizes(3, 1, QUICK_STARTERS, 3, 2, 2, 2, 2)


# -- the contrast -------------------------------------------------------------------------------
def rules_off_skeleton(sk: fabrik3d.Skeleton) -> fabrik3d.Skeleton:
    return sk.with_posing(dataclasses.replace(sk.posing, hang=frozenset()))


@contextlib.contextmanager
def rules_off() -> Iterator[None]:
    """The hinge's step back, the torso's follow and the settled start switched off; restored after."""
    hinge, body = fabrik3d.solver.hinge, fabrik3d.solver.whole_body
    saved = [
        (hinge, "counterweight", hinge.counterweight),
        (body, "follow_turns", body.follow_turns),
        (body.WholeBody, "settled", body.WholeBody.settled),
        (body.WholeBody, "nearer", body.WholeBody.nearer),
    ]
    try:
        hinge.counterweight = lambda *a: lambda t: 0.0
        body.follow_turns = lambda *a: {}
        body.WholeBody.settled = lambda self, *a: None
        body.WholeBody.nearer = lambda self, start, got: True
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


# -- one column -----------------------------------------------------------------------------------
class Column:
    """The measures of one skeleton; every pose measured is checked finite (``bad`` counts those not)."""

    def __init__(self, sk: fabrik3d.Skeleton) -> None:
        self.sk = sk
        self.rest = fabrik3d.solve(sk, {})
        self.toes = wb.toes(sk)
        self.bad = 0
        self.solves = 0

    def solve(self, targets: dict[str, Any], **kw: Any) -> fabrik3d.SolveResult:
        r = fabrik3d.solve(self.sk, targets, **kw)
        self.solves += 1
        if not (np.isfinite(r.positions).all() and np.isfinite(r.rotations).all()):
            self.bad += 1
        return r

    def at(self, p: np.ndarray, name: str) -> np.ndarray:
        return p[self.sk.index(name)]

    # free arm (tests/solver/test_hang.py)
    def arm_down_deg(self, p: np.ndarray, side: str) -> list[float]:
        out = []
        for a, b in ((f"shoulder_{side}", f"elbow_{side}"), (f"elbow_{side}", f"wrist_{side}")):
            v = self.at(p, b) - self.at(p, a)
            out.append(math.degrees(math.acos(float(np.clip(v @ DOWN / np.linalg.norm(v), -1.0, 1.0)))))
        return out

    def hand_below_shoulder(self, p: np.ndarray, side: str) -> float:
        drop = float(self.at(p, f"shoulder_{side}")[1] - self.at(p, f"hand_{side}")[1])
        return drop / nt.arm_length(self.sk, side)

    def hang_reaches(self, seed: int, count: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        toe = float(self.toes["toe_l"][2])
        return [
            np.array([rng.uniform(-0.05, 0.3), rng.uniform(0.1, 0.55), toe + rng.uniform(0.25, 0.55)])
            for _ in range(count)
        ]

    def drag_to(self, target: np.ndarray, frames: int = 20) -> fabrik3d.SolveResult:
        """The left hand dragged from where it hangs to ``target`` in ``frames`` warm frames, toes pinned."""
        r = self.solve(dict(self.toes))
        start = self.at(r.positions, "hand_l")
        for k in range(1, frames + 1):
            goal = start + (target - start) * k / frames
            r = self.solve({**self.toes, "hand_l": goal}, positions=r.positions, rotations=r.rotations)
        return r

    def free_arm(self, seed: int, cold: int, drags: int) -> dict[str, float]:
        angles, below = [], []
        poses = [self.solve({**self.toes, "hand_l": t}) for t in self.hang_reaches(seed, cold)]
        poses += [self.drag_to(t) for t in self.hang_reaches(seed + 1, drags)]
        for r in poses:
            angles += self.arm_down_deg(r.positions, "r")
            below.append(self.hand_below_shoulder(r.positions, "r"))
        return {
            "free arm: arm from down deg p95": float(np.percentile(angles, 95)),
            "free arm: hand below shoulder, min (arms)": min(below),
        }

    # starter poses (tests/solver/test_settled.py)
    def moved_mm(self, a: np.ndarray, b: np.ndarray, names: tuple[str, ...] | None = None) -> float:
        idx = list(range(len(self.sk))) if names is None else [self.sk.index(n) for n in names]
        return 1000.0 * float(np.linalg.norm((a - b)[idx], axis=1).max())

    def starters(self, names: tuple[str, ...]) -> dict[str, float]:
        pin = look = again = 0.0
        a = math.radians(40.0)
        for name in names:
            p, q = fabrik3d.apply_pose(
                self.sk, self.rest.positions, self.rest.rotations, fabrik3d.starter_poses()[name]
            )
            p = lifted_onto_floor(self.sk, p, 0.0)
            kw = {"positions": p, "rotations": q, "relax_to": p, "relax_rotations": q, "floor": 0.0}
            for e in EFFECTORS:
                r = self.solve(fabrik3d.pin({}, self.sk, p, e), **kw)
                pin = max(pin, self.moved_mm(r.positions, p))
            pinned = {e: self.at(p, e) for e in EFFECTORS}
            r = self.solve(pinned, **kw)
            pin = max(pin, self.moved_mm(r.positions, p))
            for _ in range(10):
                r = self.solve(pinned, **{**kw, "positions": r.positions, "rotations": r.rotations})
            again = max(again, self.moved_mm(r.positions, p))
            aside = self.at(p, "head") + np.array([math.sin(a), 0.0, math.cos(a)])
            r = self.solve({}, look_at={"head": aside}, **kw)
            look = max(look, self.moved_mm(r.positions, p, LOWER))
        return {
            "starters: pin where it is, max move mm": pin,
            "starters: look 40 deg aside, hips/legs mm": look,
            "starters: 10 re-solves pinned, max move mm": again,
        }

    # low and forward reaches (tests/helpers/whole_body.py)
    def reach(self, target: np.ndarray, **kw: Any) -> fabrik3d.SolveResult:
        return self.solve({**self.toes, "hand_l": target}, **kw)

    def low(self, seed: int, count: int, balanced: int) -> dict[str, float]:
        got = [wb.measures(self.sk, self.reach(t)) for t in wb.low_reaches(self.sk, seed, count)]
        held = [
            wb.measures(self.sk, self.reach(t, balance=True, floor=0.0), 0.0)
            for t in wb.low_reaches(self.sk, seed + 1, balanced)
        ]
        return {
            "low reaches: pelvis pitch >= 20 deg %": share(m["pitch"] >= 20.0 for m in got),
            "low reaches: moved back >= 3 cm %": share(m["back"] >= 0.03 for m in got),
            "low reaches: reached within 1 cm %": share(m["error"] <= 0.01 for m in got),
            "low reaches: pelvis back cm p50": 100.0 * float(np.median([m["back"] for m in got])),
            "low reaches, balance: CoM over feet %": share(m["inside"] >= 0.0 for m in held),
        }

    def forward(self, seed: int, count: int) -> dict[str, float]:
        plain, held = [], []
        for t in wb.forward_reaches(self.sk, seed, count):
            plain.append(wb.measures(self.sk, self.reach(t, floor=0.0), 0.0))
            held.append(wb.measures(self.sk, self.reach(t, floor=0.0, balance=True), 0.0))
        return {
            "forward, balance: pelvis back >= 1 cm %": share(m["back"] >= 0.01 for m in held),
            "forward, balance: CoM >= 3 cm inside %": share(m["inside"] >= 0.03 for m in held),
            "forward, balance: CoM inside cm p50": 100.0 * float(np.median([m["inside"] for m in held])),
            "forward, balance: nearer edge than without": sum(
                h["inside"] < p["inside"] - 1e-3 for h, p in zip(held, plain, strict=True)
            ),
        }

    # the torso follows (tests/solver/test_whole_body.py)
    def chest_yaw_deg(self, r: fabrik3d.SolveResult) -> float:
        j = self.sk.index("chest")
        q = rot.mul(tuple(r.rotations[j]), rot.conj(tuple(self.rest.rotations[j])))
        return math.degrees(2.0 * math.atan2(q[1], q[3]))

    def punches(self, seed: int, count: int) -> dict[str, float]:
        rng = np.random.default_rng(seed)
        chest = self.at(self.rest.positions, "chest")
        toward = []
        for k in range(count):
            side = "lr"[k % 2]
            across = (-1.0 if side == "l" else 1.0) * rng.uniform(0.0, 0.15)
            height = self.at(self.rest.positions, f"shoulder_{side}")[1] + rng.uniform(-0.05, 0.05)
            target = np.array([across, height, chest[2] + rng.uniform(0.6, 0.7)])
            hand, r = f"hand_{side}", self.rest
            start = self.at(r.positions, hand)
            for f in range(1, 21):
                r = self.solve({hand: start + (target - start) * f / 20}, positions=r.positions, rotations=r.rotations)
            toward.append(self.chest_yaw_deg(r) * (1.0 if side == "r" else -1.0))
        return {
            "punch: chest turn toward it deg p50": float(np.median(toward)),
            "punch: chest turn >= 10 deg %": share(t >= 10.0 for t in toward),
        }

    def beside(self, seed: int, count: int) -> dict[str, float]:
        rng = np.random.default_rng(seed)
        worst = 0.0
        for k in range(count):
            side = "lr"[k % 2]
            s = 1.0 if side == "l" else -1.0
            shoulder = self.at(self.rest.positions, f"shoulder_{side}")
            d = np.array([s * rng.uniform(0.3, 1.0), rng.uniform(-0.6, 0.4), rng.uniform(-0.2, 0.6)])
            target = shoulder + d / np.linalg.norm(d) * rng.uniform(0.5, 0.8) * nt.arm_length(self.sk, side)
            worst = max(worst, abs(self.chest_yaw_deg(self.solve({f"hand_{side}": target}))))
        return {"beside, 0.5-0.8 arm: chest turn deg max": worst}


def share(flags: Any) -> float:
    flags = list(flags)
    return 100.0 * sum(flags) / len(flags) if flags else float("nan")


def measure(sk: fabrik3d.Skeleton, sizes: Sizes, seed: int) -> tuple[dict[str, float], int, int]:
    """Every row's value for ``sk``, the count of poses with NaN, and the count of solves."""
    col = Column(sk)
    out: dict[str, float] = {}
    out.update(col.free_arm(seed, sizes.free_cold, sizes.free_drags))
    out.update(col.starters(sizes.starters))
    out.update(col.low(seed + 2, sizes.low, sizes.low_balance))
    out.update(col.forward(seed + 4, sizes.forward))
    out.update(col.punches(seed + 5, sizes.punches))
    out.update(col.beside(seed + 6, sizes.beside))
    return out, col.bad, col.solves


def cell(value: float, aim: tuple[float, str] | None, marked: bool) -> str:
    text = str(value) if isinstance(value, (int, np.integer)) else f"{value:.2f}"
    if aim is None or not marked:
        return text
    ok = value <= aim[0] if aim[1] == "<=" else value >= aim[0]
    return text if ok else text + " MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a few samples of each kind (smoke test)")
    parser.add_argument("--seed", type=int, default=50)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    sk = fabrik3d.presets.get("humanoid")
    results: dict[str, dict[str, float]] = {}
    wall: dict[str, float] = {}
    bad = solves = 0
    for name in COLUMNS:
        t0 = time.perf_counter()
        if name == "whole body":
            got, nan, count = measure(sk, sizes, args.seed)
        else:
            with rules_off():
                got, nan, count = measure(rules_off_skeleton(sk), sizes, args.seed)
        wall[name] = time.perf_counter() - t0
        results[name] = got
        bad, solves = bad + nan, solves + count

    title = f"the body as a whole: the humanoid preset's whole-body rules (seed {args.seed}); aims from issue 50"
    print(title)
    print("=" * len(title))
    for line in common.machine_lines():
        print(line)
    print(
        f"mode    : {'QUICK (a few samples)' if args.quick else 'full'}; free arm {sizes.free_cold} cold + "
        f"{sizes.free_drags} drags, {len(sizes.starters)} starter poses, low reaches {sizes.low} "
        f"(+{sizes.low_balance} balanced), forward {sizes.forward}, punches {sizes.punches}, "
        f"beside {sizes.beside}; geometry, not time"
    )
    print()
    table = []
    for row, aim in ROWS.items():
        cells = [cell(results[name][row], aim, name == COLUMNS[0]) for name in COLUMNS]
        table.append([row, "" if aim is None else f"{aim[1]} {aim[0]:g}", *cells])
    table.append(["wall time s", "", *(f"{wall[name]:.1f}" for name in COLUMNS)])
    print(common.format_table(["measure", "aim", *COLUMNS], table))
    print()
    aimed = [row for row, aim in ROWS.items() if aim is not None]
    missed = [row for row in aimed if "MISSED" in table[list(ROWS).index(row)][2]]
    print(
        f"whole body: {len(aimed) - len(missed)} of {len(aimed)} measures within their aims"
        + (f"; missed: {', '.join(missed)}" if missed else "")
    )
    checks = common.Checks()
    print(checks.line("measured poses finite", bad == 0, f"{solves - bad} of {solves} solves"))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
