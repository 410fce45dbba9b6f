"""The floor and balance around a solve (``solve(..., floor=, balance=)``).

**Floor** at height ``floor`` (scene units, Y up): no joint goes below it, and a foot that meets it lies
on it, and no part of the mannequin goes below it. Each joint keeps a clearance: a foot's joints (the
ankles and toes of a humanoid, ``fabrik3d.model.mass.humanoid_roles``) their rest height above the
rest ground (``fabrik3d.model.mass.rest_ground``), so that a sole lies on the floor; every other joint
how far the mannequin's body reaches below it (``fabrik3d.model.mannequin.body_clearances``: a knee
its ball's radius, the pelvis its width), so that a knee or a hand put down rests on its surface. The
solve runs with targets lifted to their clearance; then, while a joint is below its clearance (at most
``FLOOR_ROUNDS`` more solves, each warm from the last): a joint of an effector's limb end (the
effector, its riders: a hand's fingers) lifts that effector's target, or pins a free effector where
it is, lifted; another joint (a knee, the pelvis) lifts the root, in a round where no effector had
to be placed (a free foot pinned on the floor lets the legs bend before the root is lifted). Whatever
is left below the floor after that, the whole pose is lifted rigidly: the floor always holds. A toe on
the floor then lies flat on it, bent at the ball (``fabrik3d.solver.toes``).

**Balance**: with feet on the ground (their targets, or free feet in contact pinned where they are),
the root shifts along the ground until the centre of mass (``fabrik3d.model.mass.center_of_mass``)
lies over the support area (``support_area``), ``BALANCE_MARGIN`` inside its edge (over the middle of
the feet; a narrow area, a foot alone: ``BALANCE_SHARE`` of its centre's depth), at most
``BALANCE_ROUNDS`` solves; a centre of mass already that far inside is left where it is, so balance
never brings it nearer the edge. The body leans as the natural posing lets it (a reach in front
moves the pelvis back).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model import mass
from fabrik3d.model.mannequin import body_clearances
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.model.targets import Target
from fabrik3d.model.workspace import check_floor
from fabrik3d.solver.result import SolveResult
from fabrik3d.solver.toes import floor_toes

FLOOR_ROUNDS = 4
BALANCE_ROUNDS = 8
# Halvings of a balance shift that took a target out of reach (``_within_reach``).
REACH_ROUNDS = 5
# How far inside the support area's edge balance keeps the centre of mass (scene units): over the middle
# of the feet, not on the edge of falling; at most ``BALANCE_SHARE`` of the depth of the area's centre.
BALANCE_MARGIN = 0.07
BALANCE_SHARE = 0.6
# Below its clearance by more than this (scene units), a joint counts as under the floor.
FLOOR_SLACK = 5e-4
# A foot's joints may dip this much below their clearance (a heel pad giving) before the floor acts;
# never below the floor itself.
FOOT_GIVE = 0.003


def grounded(
    skeleton: Skeleton,
    targets: Mapping[str, Any],
    solve: Callable[..., SolveResult],
    floor: Any,
    balance: Any,
    options: dict[str, Any],
) -> SolveResult:
    """``solve(skeleton, targets, **options)`` on the floor and balanced (module docstring)."""
    check_skeleton(skeleton)
    height = check_floor(floor, skeleton)
    if not isinstance(balance, bool):
        raise ValueError(f"balance: expected True or False, got {str(balance)[:80]!r}")
    clear = clearances(skeleton, mass.rest_ground(skeleton) if height is None else height)
    if height is not None and isinstance(targets, Mapping):  # (a bad argument: the solve names it)
        goals = {n: _lifted(v, clear[skeleton.index(n)]) if n in skeleton else v for n, v in targets.items()}
    else:
        goals = targets
    result = solve(skeleton, goals, **options)
    # (the solves of the balance's rounds and the floor's are a search of their own: each unbounded,
    # as the first's is not, unless the caller bounds them: ``fabrik3d.solver.effort``)
    options = dict(options, effort=math.inf if options.get("effort") is None else options["effort"])
    if balance:
        result, goals, options = _balanced(skeleton, goals, solve, options, result, height)
    if height is not None:
        result = _on_floor(skeleton, goals, solve, options, result, clear, np.maximum(height, clear - FOOT_GIVE))
        result = floor_toes(skeleton, result, clear, goals, (options.get("positions"), options.get("rotations")))
    # (the errors are to the targets asked for: one the floor held above is not reached)
    errors = {k: _error(skeleton, result.positions, k, v) for k, v in targets.items()}
    converged = all(v <= options.get("tolerance", 1e-3) for v in errors.values())
    return dataclasses.replace(result, errors=errors, converged=converged)


def clearances(skeleton: Skeleton, floor: float) -> np.ndarray:
    """``(n,)`` the lowest height each joint may take over a floor at ``floor`` (module docstring)."""
    at = mass.humanoid_roles(skeleton)
    rest = np.asarray(skeleton.rest_positions)
    base = mass.rest_ground(skeleton)
    out = float(floor) + body_clearances(skeleton)
    for role in ("ankle_l", "ankle_r", "toe_l", "toe_r"):
        if role in at:
            out[at[role]] = floor + max(0.0, float(rest[at[role], 1]) - base)
    return out


def lifted_onto_floor(skeleton: Skeleton, positions: Any, floor: Any) -> np.ndarray:
    """``(n, 3)`` the pose ``positions`` (scene units) lifted rigidly, straight up, just so far that
    no joint is below the height a solve on the floor at ``floor`` keeps it above (its clearance,
    less a foot's give); as it is if none is. A pose set by hand (an applied or pasted pose) is so
    put on the floor at once: the next solve then finds it settled and moves nothing."""
    check_skeleton(skeleton)
    height = check_floor(floor, skeleton)
    p = checks.points(positions, "positions")
    if p.shape != (len(skeleton), 3):
        raise ValueError(f"positions: expected shape ({len(skeleton)}, 3), got {p.shape}")
    if height is None:
        return p
    lowest = np.maximum(height, clearances(skeleton, height) - FOOT_GIVE)
    below = float((lowest - p[:, 1]).max())
    return p + np.array([0.0, below, 0.0]) if below > 0.0 else p


def _on_floor(
    skeleton: Skeleton,
    goals: dict[str, Any],
    solve: Callable[..., SolveResult],
    options: dict[str, Any],
    result: SolveResult,
    clear: np.ndarray,
    lowest: np.ndarray,
) -> SolveResult:
    """The floor's rounds (module docstring): ``lowest`` ``(n,)`` the heights joints may not go below,
    ``clear`` where a placed effector goes."""
    ends = {skeleton.index(e): e for e in skeleton.end_effectors}
    owner = _limb_ends(skeleton, ends)
    for _ in range(FLOOR_ROUNDS):
        below = lowest - result.positions[:, 1]
        if below.max() <= FLOOR_SLACK:
            return result
        goals = dict(goals)
        lift_root, placed = 0.0, False
        for j in np.flatnonzero(below > FLOOR_SLACK):
            e = owner.get(int(j))
            if e is None:
                lift_root = max(lift_root, float(below[j]))
                continue
            name = ends[e]
            point = np.array(_position(goals[name]) if name in goals else result.positions[e], dtype=float)
            point[1] = max(point[1], clear[e]) + (below[j] if j != e else 0.0)
            goals[name] = _moved(goals.get(name), point)
            placed = True
        more = dict(options, positions=result.positions, rotations=result.rotations)
        if lift_root > 0.0 and not placed:  # (feet and hands placed first: then the legs bend)
            root = result.positions[skeleton.root] + np.array([0.0, lift_root, 0.0])
            more["root_target"] = _moved(options.get("root_target"), root)
        result = solve(skeleton, goals, **more)
    below = float((lowest - result.positions[:, 1]).max())
    if below > FLOOR_SLACK:  # (the floor holds: the whole pose lifted; ``grounded`` measures its errors)
        result = dataclasses.replace(result, positions=result.positions + np.array([0.0, below, 0.0]))
    return result


def _balanced(
    skeleton: Skeleton,
    goals: dict[str, Any],
    solve: Callable[..., SolveResult],
    options: dict[str, Any],
    result: SolveResult,
    floor: float | None,
) -> tuple[SolveResult, dict[str, Any], dict[str, Any]]:
    at = mass.humanoid_roles(skeleton)
    feet = [e for e in skeleton.end_effectors if skeleton.index(e) in {at.get("toe_l"), at.get("toe_r")}]
    goals = dict(goals)
    for foot in feet:  # (a free foot on the ground stays where it is)
        if foot not in goals:
            goals[foot] = result.positions[skeleton.index(foot)].copy()
    first, initial = result, options
    gain = 1.5  # (the root's shift over the centre of mass's: the legs stay, the rest moves)
    last: tuple[np.ndarray, np.ndarray] | None = None
    for _ in range(BALANCE_ROUNDS):
        poly = mass.support_area(skeleton, result.positions, floor)
        com = mass.center_of_mass(skeleton, result.positions)[[0, 2]]
        if len(poly) < 3:
            break
        margin = min(BALANCE_MARGIN, BALANCE_SHARE * mass.distance_inside(poly, poly.mean(axis=0)))
        if mass.distance_inside(poly, com) >= margin - 1e-9:
            break
        want = _inside(poly, com, margin)
        root = result.positions[skeleton.root]
        if last is not None:  # (the secant: how far the centre moved for the root's last shift)
            moved, shifted = com - last[0], last[1]
            ratio = float(shifted @ moved) / max(float(moved @ moved), 1e-12)
            gain = min(3.0, max(0.8, ratio)) if math.isfinite(ratio) and ratio > 0 else gain
        step = gain * (want - com)
        last = (com, step)
        target = root + np.array([step[0], 0.0, step[1]])
        more = dict(options, positions=result.positions, rotations=result.rotations)
        more["root_target"] = _moved(options.get("root_target"), target)
        options = dict(options, root_target=more["root_target"])
        result = solve(skeleton, goals, **more)
    if first.converged and not result.converged and "root_target" in options:
        result, options = _within_reach(skeleton, goals, solve, (initial, options), first, result)
    if not result.converged and "root_target" in options and options.get("positions") is not None:
        cold = solve(skeleton, goals, **dict(options, positions=None, rotations=None))  # (a warm start stuck)
        if max(cold.errors.values(), default=0.0) < max(result.errors.values(), default=0.0):
            result = cold
    return result, goals, options


def _within_reach(
    skeleton: Skeleton,
    goals: dict[str, Any],
    solve: Callable[..., SolveResult],
    options: tuple[dict[str, Any], dict[str, Any]],
    first: SolveResult,
    shifted: SolveResult,
) -> tuple[SolveResult, dict[str, Any]]:
    """Balance gives way to the targets: where the root's shift (from ``first``, which met them, to
    ``shifted``, which does not) takes a target out of reach, the largest share of it that keeps them
    all met (``REACH_ROUNDS`` halvings), and the options with that root's target; ``options``: the
    solve's before balance and after its shifts."""
    root, far = first.positions[skeleton.root], shifted.positions[skeleton.root]
    best, best_options = first, options[0]
    options = options[1]
    lo, hi = 0.0, 1.0
    for _ in range(REACH_ROUNDS):
        mid = 0.5 * (lo + hi)
        more = dict(options, root_target=_moved(options["root_target"], root + mid * (far - root)))
        got = solve(skeleton, goals, **dict(more, positions=first.positions, rotations=first.rotations))
        if got.converged:
            lo, best, best_options = mid, got, more
        else:
            hi = mid
    return best, best_options


def _inside(poly: np.ndarray, point: np.ndarray, margin: float) -> np.ndarray:
    """The point ``margin`` inside the convex ``poly`` nearest ``point`` (toward its centroid)."""
    centre = poly.mean(axis=0)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if mass.distance_inside(poly, point + mid * (centre - point)) >= margin:
            hi = mid
        else:
            lo = mid
    return point + hi * (centre - point)


def _limb_ends(skeleton: Skeleton, ends: dict[int, str]) -> dict[int, int]:
    """joint -> the effector whose limb end it is: the effector itself and the riders below it (or
    beside it on its parent: a hand's fingers hang from the wrist)."""
    out: dict[int, int] = {}
    riding = set(skeleton.riders)
    for e in ends:
        out[e] = e
        p = int(skeleton.parents[e])
        stack = [
            k for k in (*skeleton.children(e), *(skeleton.children(p) if p >= 0 else ())) if skeleton.names[k] in riding
        ]
        while stack:
            k = stack.pop()
            out[k] = e
            stack.extend(skeleton.children(k))
    return out


def _position(value: Any) -> np.ndarray:
    return np.asarray(value.position if isinstance(value, Target) else value, dtype=float)


def _moved(value: Any, point: np.ndarray) -> Any:
    """``value`` (a point or a ``Target``) at ``point``, its orientation and weight kept."""
    if isinstance(value, Target):
        return Target(point, value.orientation, value.weight)
    return point


def _lifted(value: Any, lowest: float) -> Any:
    try:
        point = np.array(_position(value), dtype=float)
    except (TypeError, ValueError):
        return value  # (the solve names what is wrong with it)
    if point.shape != (3,) or not point[1] < lowest:
        return value
    point[1] = lowest
    return _moved(value, point)


def _error(skeleton: Skeleton, positions: np.ndarray, name: str, value: Any) -> float:
    return float(np.linalg.norm(positions[skeleton.index(name)] - _position(value)))
