"""How natural the humanoid's poses are (issue 14): target sets, drags and the measures of its bars.

Shared by tests/solver/test_naturalness.py (the bars on fixed seeds) and
benchmarks/bench_naturalness.py (the table). A *mode* is a function
``mode(skeleton, targets, positions=None, root_target=None) -> (positions (n, 3), converged)``:
``fabrik3d.solve`` with the preset's defaults, with the plain full-body chain (``Posing()``),
or the analytic two-bone arm (``two_bone_arm``) for contrast.

Measures, all in metres and degrees, Y up, the humanoid facing +Z:

* chest turn: the angle between the chest's frame (its bone and the line between the
  clavicles' roots, from positions) and its rest frame;
* head, free hand: distance from their rest positions;
* a *bad elbow*: it points up (its offset from the shoulder-wrist line more than 20 deg above
  the horizontal, where that line is more than 25 deg from vertical), toward the body's midline
  (the offset more than 30 deg inward), or lies inside the torso (a box about the spine).

The places (target regions, the torso box, the face, the figure-eight) are the default 1.75 m
body's, scaled by ``body_scale`` for a humanoid of another height (``presets.humanoid(height)``;
exactly 1.0 for the default body, so its numbers are unchanged).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d import Posing
from fabrik3d.solver import steady

Pose = np.ndarray
Mode = Callable[..., tuple[np.ndarray, bool]]

SIDES = {"l": 1.0, "r": -1.0}
# The largest step of a dragged hand in a smooth drag (m).
SMOOTH_STEP = 0.015
# The torso box (pelvis to shoulders, about the spine): an elbow inside it is a bad elbow.
TORSO_HALF_WIDTH, TORSO_HALF_DEPTH, TORSO_Y = 0.13, 0.11, (0.9, 1.45)


def humanoid() -> fabrik3d.Skeleton:
    return fabrik3d.presets.get("humanoid")


def followed(sk: fabrik3d.Skeleton) -> fabrik3d.Skeleton:
    """``sk`` with no limb hanging (``Posing.hang`` empty): every free limb follows the body, as
    before free arms hung (issue 50). For the tests of other rules, calibrated on that body."""
    return sk.with_posing(dataclasses.replace(sk.posing, hang=frozenset()))


def is_arm(sk: fabrik3d.Skeleton, j: int) -> bool:
    """Whether joint ``j`` is of an arm below its clavicle: a shoulder, elbow, wrist, hand or finger."""
    while j >= 0:
        name = sk.names[j]
        if name.startswith(("shoulder_", "clavicle_")):
            return name.startswith("shoulder_")
        j = int(sk.parents[j])
    return False


def body_scale(sk: fabrik3d.Skeleton) -> float:
    """The humanoid's height over the default's 1.75 m (its head joint's rest height)."""
    return float(sk.rest_positions[sk.index("head")][1]) / 1.75


def rest_pose(sk: fabrik3d.Skeleton) -> np.ndarray:
    return fabrik3d.solve(sk, {}).positions


def arm_length(sk: fabrik3d.Skeleton, side: str) -> float:
    return float(sum(sk.bone_lengths[sk.index(f"{j}_{side}")] for j in ("elbow", "wrist", "hand")))


# -- modes --------------------------------------------------------------------------------------
def natural(sk: fabrik3d.Skeleton, targets: dict[str, Any], positions=None, root_target=None) -> tuple[Pose, bool]:
    r = fabrik3d.solve(sk, targets, positions=positions, root_target=root_target)
    return r.positions, r.converged


def unbounded(sk: fabrik3d.Skeleton, targets: dict[str, Any], positions=None, root_target=None) -> tuple[Pose, bool]:
    """``natural`` without a drag frame's allowance (``solve``'s ``effort=math.inf``): every search run to
    its end, the rules' own poses."""
    r = fabrik3d.solve(sk, targets, positions=positions, root_target=root_target, effort=math.inf)
    return r.positions, r.converged


# A mode's solve of the frame a drag is let go on, where its last frame fell short (``one_drag``).
LET_GO: dict[Any, Any] = {natural: unbounded}


def full_body(sk: fabrik3d.Skeleton, targets: dict[str, Any], positions=None, root_target=None) -> tuple[Pose, bool]:
    r = fabrik3d.solve(sk, targets, positions=positions, root_target=root_target, posing=Posing())
    return r.positions, r.converged


def two_bone_arm(sk: fabrik3d.Skeleton, targets: dict[str, Any], positions=None, root_target=None) -> tuple[Pose, bool]:
    """The analytic two-bone arm for contrast: the body stays at rest (or ``positions``), each
    targeted hand's arm is straight from the wrist to the hand, the elbow by the law of cosines
    in the plane through the shoulder-target line that holds the natural direction (down, out,
    back), no joint limits. Feet and head targets are ignored."""
    pose = np.array(rest_pose(sk) if positions is None else positions, dtype=float)
    ok = True
    for side, sx in SIDES.items():
        name = f"hand_{side}"
        if name not in targets:
            continue
        s, e, w, h = (sk.index(f"{j}_{side}") for j in ("shoulder", "elbow", "wrist", "hand"))
        a, b = sk.bone_lengths[e], sk.bone_lengths[w] + sk.bone_lengths[h]
        t = np.asarray(targets[name], dtype=float)
        v = t - pose[s]
        d = float(np.linalg.norm(v))
        u = v / max(d, 1e-12)
        reach = min(max(d, abs(a - b) + 1e-9), a + b - 1e-9)
        ok = ok and abs(reach - d) < 1e-6
        cos_a = (a * a + reach * reach - b * b) / (2 * a * reach)
        bend = np.array([0.4 * sx, -1.0, -0.3])
        bend -= (bend @ u) * u
        bend /= max(float(np.linalg.norm(bend)), 1e-12)
        pose[e] = pose[s] + a * (cos_a * u + math.sqrt(max(0.0, 1 - cos_a * cos_a)) * bend)
        hand = pose[s] + reach * u
        fore = (hand - pose[e]) / np.linalg.norm(hand - pose[e])
        pose[w] = pose[e] + sk.bone_lengths[w] * fore
        pose[h] = hand
    return pose, ok


MODES: dict[str, Mode] = {"defaults": natural, "full-body chain": full_body, "two-bone arm": two_bone_arm}


# -- measures -----------------------------------------------------------------------------------
def chest_turn_deg(sk: fabrik3d.Skeleton, pose: Pose, rest: Pose) -> float:
    def frame(p: Pose) -> np.ndarray:
        c, n = p[sk.index("chest")], p[sk.index("neck")]
        y = (n - c) / np.linalg.norm(n - c)
        x = p[sk.index("clavicle_l")] - p[sk.index("clavicle_r")]
        x -= (x @ y) * y
        x /= np.linalg.norm(x)
        return np.stack([x, y, np.cross(x, y)], axis=1)

    m = frame(pose).T @ frame(rest)
    return math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(m) - 1) / 2))))


def moved(sk: fabrik3d.Skeleton, pose: Pose, rest: Pose, name: str) -> float:
    j = sk.index(name)
    return float(np.linalg.norm(pose[j] - rest[j]))


def elbow_offset(sk: fabrik3d.Skeleton, pose: Pose, side: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The elbow's unit offset from the shoulder-wrist line, and the line's unit direction."""
    s, e, w = (pose[sk.index(f"{j}_{side}")] for j in ("shoulder", "elbow", "wrist"))
    line = (w - s) / np.linalg.norm(w - s)
    off = e - s - ((e - s) @ line) * line
    n = float(np.linalg.norm(off))
    return None if n < 1e-4 else (off / n, line)


def bad_elbow(sk: fabrik3d.Skeleton, pose: Pose, side: str) -> str | None:
    """Why the elbow of ``side`` is unnatural ("up", "inward", "inside"), or ``None``."""
    e = pose[sk.index(f"elbow_{side}")]
    centre = pose[sk.index("spine_03")]
    s = body_scale(sk)
    if (
        abs(e[0] - centre[0]) < TORSO_HALF_WIDTH * s
        and abs(e[2] - centre[2]) < TORSO_HALF_DEPTH * s
        and TORSO_Y[0] * s < e[1] < TORSO_Y[1] * s
    ):
        return "inside"
    got = elbow_offset(sk, pose, side)
    if got is None:
        return None  # a straight arm points nowhere
    off, line = got
    if math.degrees(math.acos(min(1.0, abs(line[1])))) > 25.0:
        up = np.array([0.0, 1.0, 0.0]) - line[1] * line
        up /= np.linalg.norm(up)
        if math.degrees(math.asin(max(-1.0, min(1.0, off @ up)))) > 20.0:
            return "up"
    if off[0] * SIDES[side] < -0.5:
        return "inward"
    return None


def elbow_swing_deg(sk: fabrik3d.Skeleton, a: Pose, b: Pose, side: str) -> float:
    """How far the elbow's offset direction turned between two poses (0 for a straight arm)."""
    oa, ob = elbow_offset(sk, a, side), elbow_offset(sk, b, side)
    if oa is None or ob is None:
        return 0.0
    bend = min(_bend_deg(sk, a, side), _bend_deg(sk, b, side))
    if bend < 20.0:  # a nearly straight arm's offset direction is not a swing anyone sees
        return 0.0
    return math.degrees(math.acos(max(-1.0, min(1.0, float(oa[0] @ ob[0])))))


def _bend_deg(sk: fabrik3d.Skeleton, pose: Pose, side: str) -> float:
    s, e, w = (pose[sk.index(f"{j}_{side}")] for j in ("shoulder", "elbow", "wrist"))
    u, v = (e - s) / np.linalg.norm(e - s), (w - e) / np.linalg.norm(w - e)
    return math.degrees(math.acos(max(-1.0, min(1.0, float(u @ v)))))


# -- target sets --------------------------------------------------------------------------------
REGIONS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    # name: (centre (x toward the hand's side, y, z), half extents); x is mirrored for the right hand
    "face": ((0.0, 1.62, 0.14), (0.08, 0.07, 0.05)),
    "chest": ((0.0, 1.33, 0.18), (0.12, 0.08, 0.06)),
    "belly": ((0.0, 1.08, 0.18), (0.12, 0.07, 0.06)),
    "thigh": ((0.12, 0.78, 0.12), (0.06, 0.1, 0.06)),
    "overhead": ((0.2, 1.95, 0.05), (0.15, 0.08, 0.15)),
    "across": ((-0.2, 1.3, 0.32), (0.12, 0.12, 0.08)),
    "front": ((0.3, 1.35, 0.4), (0.15, 0.15, 0.1)),
    "side": ((0.55, 1.2, 0.1), (0.1, 0.2, 0.15)),
}


def arm_reaches(sk: fabrik3d.Skeleton, seed: int, count: int) -> list[tuple[str, str, np.ndarray]]:
    """``count`` reaches ``(hand, region, target)`` that the arm alone can make: 0.15-0.95 of the
    arm's length from the shoulder, and reached by the arm's own chain within its limits (the
    chain stops at the shoulder; a solve from rest, then from three other starts)."""
    rng = np.random.default_rng(seed)
    rest = rest_pose(sk)
    out: list[tuple[str, str, np.ndarray]] = []
    names = list(REGIONS)
    scale = body_scale(sk)
    while len(out) < count:
        side = "lr"[int(rng.integers(2))]
        region = names[int(rng.integers(len(names)))]
        centre, half = (np.array(v) * scale for v in REGIONS[region])
        t = centre + rng.uniform(-1, 1, 3) * half
        t[0] *= SIDES[side]
        shoulder = rest[sk.index(f"shoulder_{side}")]
        d = float(np.linalg.norm(t - shoulder)) / arm_length(sk, side)
        if not 0.15 <= d <= 0.95 or not arm_alone_reaches(sk, f"hand_{side}", t):
            continue
        out.append((f"hand_{side}", region, t))
    return out


def arm_alone_reaches(sk: fabrik3d.Skeleton, hand: str, target: np.ndarray) -> bool:
    side = hand[-1]
    arm = Posing(reach={hand: f"shoulder_{side}"})
    if fabrik3d.solve(sk, {hand: target}, posing=arm).converged:
        return True
    rng = np.random.default_rng(0)
    rest = rest_pose(sk)
    for _ in range(3):
        start = rest.copy()
        s = sk.index(f"shoulder_{side}")
        for j in (sk.index(f"{n}_{side}") for n in ("elbow", "wrist", "hand")):
            start[j] = start[s] + rng.normal(0, 0.2, 3)
        if fabrik3d.solve(sk, {hand: target}, posing=arm, positions=start).converged:
            return True
    return False


def beyond_reach(sk: fabrik3d.Skeleton, seed: int, count: int) -> list[tuple[str, np.ndarray]]:
    """Targets 3-12% beyond the arm's reach from the shoulder, in front of the body."""
    rng = np.random.default_rng(seed)
    rest = rest_pose(sk)
    out = []
    for _ in range(count):
        side = "lr"[int(rng.integers(2))]
        d = rng.normal(0, 1, 3)
        d[2] = abs(d[2]) + 0.8  # in front
        d[0] = abs(d[0]) * SIDES[side] * 0.6
        d[1] *= 0.5
        d /= np.linalg.norm(d)
        k = rng.uniform(1.03, 1.12)
        out.append((f"hand_{side}", rest[sk.index(f"shoulder_{side}")] + k * arm_length(sk, side) * d))
    return out


# -- scenarios ----------------------------------------------------------------------------------
@dataclass
class Tally:
    """Per-reach measures of a scenario."""

    converged: list[bool] = field(default_factory=list)
    chest: list[float] = field(default_factory=list)
    head: list[float] = field(default_factory=list)
    free_hand: list[float] = field(default_factory=list)
    bad: list[str | None] = field(default_factory=list)

    def add(
        self, sk: fabrik3d.Skeleton, pose: Pose, rest: Pose, hand: str, ok: bool, other_at: Pose | None = None
    ) -> None:
        """One reach of ``hand``; the other hand is measured from rest, or from ``other_at`` (its placed target)."""
        other = "hand_r" if hand == "hand_l" else "hand_l"
        self.converged.append(ok)
        self.chest.append(chest_turn_deg(sk, pose, rest))
        self.head.append(moved(sk, pose, rest, "head"))
        home = rest[sk.index(other)] if other_at is None else other_at
        self.free_hand.append(float(np.linalg.norm(pose[sk.index(other)] - home)))
        self.bad.append(bad_elbow(sk, pose, hand[-1]))

    def summary(self) -> dict[str, float]:
        def q(v: list[float], p: float) -> float:
            return float(np.percentile(v, p)) if v else float("nan")

        return {
            "converged %": 100.0 * float(np.mean(self.converged)),
            "chest deg p50": q(self.chest, 50),
            "chest deg p95": q(self.chest, 95),
            "head cm p50": 100 * q(self.head, 50),
            "head cm p95": 100 * q(self.head, 95),
            "head cm max": 100 * max(self.head, default=float("nan")),  # (reported: a torso left bent by a drag)
            "free hand cm p95": 100 * q(self.free_hand, 95),
            "bad elbows %": 100.0 * float(np.mean([b is not None for b in self.bad])),
        }


def cold_reaches(mode: Mode, sk: fabrik3d.Skeleton, reaches: list[tuple[str, str, np.ndarray]]) -> Tally:
    rest = rest_pose(sk)
    tally = Tally()
    for hand, _, target in reaches:
        pose, ok = mode(sk, {hand: target})
        tally.add(sk, pose, rest, hand, ok)
    return tally


def drag(start: np.ndarray, end: np.ndarray, frames: int) -> Iterator[np.ndarray]:
    for k in range(1, frames + 1):
        yield start + (end - start) * k / frames


def chained_drags(
    mode: Mode, sk: fabrik3d.Skeleton, reaches: list[tuple[str, str, np.ndarray]], frames: int = 12
) -> tuple[Tally, list[float]]:
    """Each hand goes from reach to reach in ``frames`` warm frames, or more where a step would
    be over 1.5 cm (a smooth drag), the other hand's target kept where it was placed; measured at
    the end of each drag. Also, per frame, the largest jump of any joint but the dragged hand, over
    the hand's step."""
    rest = rest_pose(sk)
    tally = Tally()
    pose = rest
    placed = {h: rest[sk.index(h)].copy() for h in ("hand_l", "hand_r")}
    ratios: list[float] = []
    for hand, _, target in reaches:
        pose, ok, more = one_drag(mode, sk, pose, placed, hand, target, frames)
        ratios += more
        placed[hand] = target
        tally.add(sk, pose, rest, hand, ok, placed["hand_r" if hand == "hand_l" else "hand_l"])
    return tally, ratios


def one_drag(
    mode: Mode,
    sk: fabrik3d.Skeleton,
    pose: Pose,
    placed: dict[str, np.ndarray],
    hand: str,
    target: np.ndarray,
    frames: int = 12,
) -> tuple[Pose, bool, list[float]]:
    """One of ``chained_drags``' drags: ``hand`` from its ``placed`` target to ``target`` from
    ``pose``, the other hand's kept, then let go; returns (the last pose, converged, each frame's jump
    ratio). Let go short of its target, a natural drag's last frame is solved once more to its end
    (``LET_GO``: a drag frame's allowance may have cut it short; the web UI's release does the same)."""
    steps = max(frames, math.ceil(float(np.linalg.norm(target - placed[hand])) / SMOOTH_STEP))
    ratios: list[float] = []

    def frame(solve: Mode, before: Pose, t: np.ndarray) -> tuple[Pose, bool]:
        got, ok = solve(sk, {**placed, hand: t}, positions=before)
        step = float(np.linalg.norm(got[sk.index(hand)] - before[sk.index(hand)]))
        ratios.append(jump_ratio(sk, before, got, hand, step))
        return got, ok

    ok = True
    for t in drag(placed[hand], target, steps):
        pose, ok = frame(mode, pose, t)
    if not ok and mode in LET_GO:
        pose, ok = frame(LET_GO[mode], pose, target)
    return pose, ok, ratios


def whole_jumps(patch: Any) -> None:
    """The natural solve's last guard without ``fabrik3d.solver.steady.partway`` (``patch``: pytest's
    monkeypatch or one of its contexts): a pose that still jumps stands whole, so that a test which
    switches off a rule older than it sees the jump that rule stops."""
    patch.setattr(steady, "partway", lambda solve, start, got, bar: got)


def jump_ratio(sk: fabrik3d.Skeleton, a: Pose, b: Pose, hand: str, step: float) -> float:
    """The largest move of a joint other than ``hand`` between two frames, over the hand's step (the
    solved joints: fingers ride on the wrist and move as its frame turns)."""
    moves = np.linalg.norm(b - a, axis=1)
    moves[sk.index(hand)] = 0.0
    moves[[j for j in range(len(sk)) if sk.names[j] in set(sk.riders)]] = 0.0
    return float(moves.max() / max(step, 1e-3))


def figure_eight(sk: fabrik3d.Skeleton, side: str, frames: int = 240) -> list[np.ndarray]:
    """A smooth figure-eight of the hand in front of the chest, steps <= 1.5 cm a frame."""
    rest = rest_pose(sk)
    s = rest[sk.index(f"shoulder_{side}")]
    scale = body_scale(sk)
    centre = s + np.array([0.1 * SIDES[side], -0.15, 0.3]) * scale
    out = []
    for k in range(frames + 1):
        a = 2 * math.pi * k / frames
        out.append(centre + np.array([0.18 * math.sin(a), 0.12 * math.sin(2 * a), 0.05 * math.cos(a)]) * scale)
    return out


def smooth_drag(mode: Mode, sk: fabrik3d.Skeleton, side: str) -> tuple[float, float]:
    """The hand brought from rest to a figure-eight's start (1 cm steps, not measured), then once
    round it: (largest move of another joint over the hand's step, largest elbow swing in deg)."""
    hand = f"hand_{side}"
    rest = rest_pose(sk)
    path = figure_eight(sk, side)
    pose = rest
    home = rest[sk.index(hand)]
    for t in drag(home, path[0], math.ceil(float(np.linalg.norm(path[0] - home)) / 0.01)):
        pose, _ = mode(sk, {hand: t}, positions=pose)
    ratio = swing = 0.0
    for t in path[1:]:
        before = pose
        pose, _ = mode(sk, {hand: t}, positions=pose)
        step = float(np.linalg.norm(pose[sk.index(hand)] - before[sk.index(hand)]))
        ratio = max(ratio, jump_ratio(sk, before, pose, hand, step))
        swing = max(swing, elbow_swing_deg(sk, before, pose, side))
    return ratio, swing


def round_trips(mode: Mode, sk: fabrik3d.Skeleton, side: str, trips: int = 3) -> tuple[float, float]:
    """A hand from rest to the face and back, ``trips`` times (1 cm steps), its target at rest at
    the end: (largest move of a body joint from rest, largest move of an arm joint from rest)."""
    hand = f"hand_{side}"
    rest = rest_pose(sk)
    face = np.array([0.03 * SIDES[side], 1.62, 0.14]) * body_scale(sk)
    home = rest[sk.index(hand)]
    pose = rest
    steps = math.ceil(float(np.linalg.norm(face - home)) / 0.01)
    for _ in range(trips):
        for a, b in ((home, face), (face, home)):
            for t in drag(a, b, steps):
                pose, _ = mode(sk, {hand: t}, positions=pose)
    arm = {sk.index(f"{j}_{side}") for j in ("clavicle", "shoulder", "elbow", "wrist", "hand")}
    dist = np.linalg.norm(pose - rest, axis=1)
    solved = set(sk.core_joints.tolist())  # (fingers ride on the wrists)
    body = max(float(d) for j, d in enumerate(dist) if j not in arm and j in solved)
    return body, max(float(dist[j]) for j in arm)


def crouch(mode: Mode, sk: fabrik3d.Skeleton, depths: list[float], warm: bool) -> dict[str, float]:
    """Both toes pinned at rest, the pelvis lowered to each depth (warm: 1 cm a frame, from the
    last pose; cold: from rest). Returns the worst toe error (m), the share of depths past 3 cm with
    both knees bent forward, the lowest ankle height (m) and the largest knee move per cm lowered."""
    rest = rest_pose(sk)
    toes = {t: rest[sk.index(t)].copy() for t in ("toe_l", "toe_r")}
    pelvis = rest[sk.index("pelvis")]
    pose = rest
    toe_err, forward, lowest, knee_rate = 0.0, [], math.inf, 0.0
    last_depth = 0.0
    for depth in depths:
        before = pose
        pose, _ = mode(sk, toes, positions=pose if warm else None, root_target=pelvis - np.array([0, depth, 0]))
        toe_err = max(toe_err, *(float(np.linalg.norm(pose[sk.index(t)] - p)) for t, p in toes.items()))
        lowest = min(lowest, *(float(pose[sk.index(f"ankle_{s}")][1]) for s in SIDES))
        if depth > 0.03:
            forward.append(all(knee_forward(sk, pose, s) for s in SIDES))
        if warm:
            dk = max(float(np.linalg.norm(pose[sk.index(f"knee_{s}")] - before[sk.index(f"knee_{s}")])) for s in SIDES)
            knee_rate = max(knee_rate, dk / max(depth - last_depth, 1e-9))
        last_depth = depth
    return {
        "toe mm": 1000 * toe_err,
        "knees forward %": 100.0 * float(np.mean(forward)) if forward else 100.0,
        "lowest ankle cm": 100 * lowest,
        "knee cm per cm": knee_rate,
    }


def knee_forward(sk: fabrik3d.Skeleton, pose: Pose, side: str) -> bool:
    """Whether the knee lies in front (+Z) of the hip-ankle line."""
    h, k, a = (pose[sk.index(f"{j}_{side}")] for j in ("hip", "knee", "ankle"))
    line = (a - h) / np.linalg.norm(a - h)
    off = k - h - ((k - h) @ line) * line
    return bool(off[2] > 1e-3)
