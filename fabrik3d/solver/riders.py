"""Riders through a solve: the solve poses the skeleton's core, the riders (fingers) follow.

A rider ``j`` (``Skeleton.riders``) keeps, through a solve, its *turn* (``fabrik3d.solver.fk``: its
rotation relative to its parent's frame, from its rest one), clamped to its own limits, and its rest
offset in its parent's frame (bones are rigid, so a palm's knuckles stay where they are on it). With
``R'`` the world frames after the solve and ``P'`` the positions, parents first:

    R'_j = R'_p · L0_j · turn_j        P'_j = P'_p + R'_p · offset_j

(``L0_j`` the rest frame relative to the parent's, ``offset_j`` the rest offset in the parent's rest
frame). So a solve moves no finger relative to its hand, and the fingers keep the shape forward
kinematics gave them. ``carry`` works on any leading batch shape: ``solve`` calls it on one pose,
``fabrik3d.batch.solve_batch`` on ``(B, n, ·)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import clamped_turn
from fabrik3d.solver.result import SolveResult
from fabrik3d.solver.rig import rig


def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of quaternions ``(..., 4)`` (x, y, z, w), broadcast."""
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def qconj(q: np.ndarray) -> np.ndarray:
    """Inverses of unit quaternions ``(..., 4)``."""
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def qrotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``(..., 3)`` rotated by unit quaternions ``(..., 4)``, broadcast."""
    u, w = q[..., :3], q[..., 3:]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross products of ``(..., 3)`` vectors, broadcast (``np.cross`` without its axis handling)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _levels(skeleton: Skeleton) -> list[tuple[np.ndarray, np.ndarray]]:
    """The riders by depth below the core, ``(joints, parents)`` per level; cached on the skeleton."""
    made = skeleton.__dict__.get("_rider_levels")
    if made is None:
        riding = set(skeleton.riders)
        depth: dict[int, int] = {}
        for j in skeleton.order:
            if skeleton.names[j] in riding:
                depth[j] = depth.get(int(skeleton.parents[j]), 0) + 1
        made = []
        for level in range(1, max(depth.values(), default=0) + 1):
            joints = np.array(sorted(j for j, d in depth.items() if d == level), dtype=np.intp)
            made.append((joints, skeleton.parents[joints].astype(np.intp)))
        skeleton.__dict__["_rider_levels"] = made
    return made


def rider_turns(skeleton: Skeleton, frames: np.ndarray) -> np.ndarray:
    """``(..., r, 4)`` the turns of the riders (``skeleton.riders`` order) in the pose of world
    ``frames`` ``(..., n, 4)``, each clamped to its joint's own limits (``fk.clamped_turn``)."""
    r = rig(skeleton)
    riders = skeleton.__dict__.get("_rider_index")
    if riders is None:
        riders = np.array([skeleton.index(n) for n in skeleton.riders], dtype=np.intp)
        skeleton.__dict__["_rider_index"] = riders
    parents = skeleton.parents[riders]
    rest_local = np.array([r.rest_local[j] for j in riders])
    turns = qmul(qconj(rest_local), qmul(qconj(frames[..., parents, :]), frames[..., riders, :]))
    flat = turns.reshape(-1, len(riders), 4)
    cache: dict[bytes, np.ndarray] = skeleton.__dict__.setdefault("_rider_clamps", {})
    for b in range(len(flat)):
        # Each turn is taken to 12 decimals (its sign so that w >= 0, no -0.0) before it is clamped:
        # a solve gives back the turns it carried up to rounding, so the clamps are kept per rounded
        # turns, and the result depends on them alone (not on what was solved before).
        rounded = np.round(flat[b] * np.where(flat[b][:, 3:] < 0.0, -1.0, 1.0), 12) + 0.0
        key = rounded.tobytes()
        done = cache.get(key)
        if done is None:
            unit = rounded / np.linalg.norm(rounded, axis=1, keepdims=True)
            done = np.array([clamped_turn(r, int(j), tuple(q)) for j, q in zip(riders, unit.tolist())])
            if len(cache) >= 64:
                cache.clear()
            cache[key] = done
        flat[b] = done
    return flat.reshape(turns.shape)


def carry(skeleton: Skeleton, before_q: np.ndarray, after_p: np.ndarray, after_q: np.ndarray) -> None:
    """Set the riders of ``after_p`` ``(..., n, 3)`` and ``after_q`` ``(..., n, 4)`` (their core joints
    set) from their turns in the world frames before the solve, ``before_q`` (module docstring); in
    place."""
    turns = rider_turns(skeleton, before_q)
    for joints, parents, rest_local, offset, slots in _placing(skeleton):
        local = qmul(rest_local, turns[..., slots, :])
        after_p[..., joints, :] = after_p[..., parents, :] + qrotate(after_q[..., parents, :], offset)
        turned = qmul(after_q[..., parents, :], local)
        after_q[..., joints, :] = turned / np.linalg.norm(turned, axis=-1, keepdims=True)


def _placing(skeleton: Skeleton) -> list[tuple[np.ndarray, ...]]:
    """Per level of riders (``_levels``): joints, parents, rest local rotations ``(k, 4)``, rest
    offsets ``(k, 3)`` and places in ``skeleton.riders``; cached on the skeleton."""
    made = skeleton.__dict__.get("_rider_placing")
    if made is None:
        r = rig(skeleton)
        slot = {name: k for k, name in enumerate(skeleton.riders)}
        made = [
            (
                joints,
                parents,
                np.array([r.rest_local[j] for j in joints]),
                np.array([r.offset[j] for j in joints]),
                np.array([slot[skeleton.names[j]] for j in joints], dtype=np.intp),
            )
            for joints, parents in _levels(skeleton)
        ]
        skeleton.__dict__["_rider_placing"] = made
    return made


def before(skeleton: Skeleton, positions: Any, rotations: Any) -> tuple[np.ndarray, np.ndarray]:
    """The pose a solve starts from, checked: ``(positions (n, 3), rotations (n, 4))`` (the rest pose
    and frames when ``positions`` is None; the swing rule's frames when ``rotations`` is None)."""
    n = len(skeleton)
    if positions is None:
        p = np.array(skeleton.rest_positions, dtype=float)
        return p, (np.array(skeleton.rest_frames) if rotations is None else checks.frames(rotations, n, "rotations"))
    p = checks.points(positions, "positions")
    if p.shape != (n, 3):
        raise ValueError(f"positions: expected shape ({n}, 3), got {p.shape}")
    q = fitted_frames(skeleton, p) if rotations is None else checks.frames(rotations, n, "rotations")
    return p, q


def fitted_frames(skeleton: Skeleton, positions: np.ndarray) -> np.ndarray:
    """The world frames of a pose given by its positions alone: the swing rule's, each joint that
    riders hang from (a wrist) turned about its bone to best fit its riders' rest offsets to where
    they are (the palm's knuckles say how the wrist is turned), its riders' frames following."""
    r = rig(skeleton)
    rows = [tuple(v) for v in positions.tolist()]
    swing = r.pose_frames(rows)  # type: ignore[arg-type]
    twists: dict[int, float] = {}
    riding = set(skeleton.riders)
    for c in range(len(skeleton)):
        kids = [k for k in skeleton.children(c) if skeleton.names[k] in riding]
        if not kids or skeleton.names[c] in riding or skeleton.first_child(c) < 0:
            continue
        q = np.array(swing[c])
        axis = qrotate(q, np.array([0.0, 1.0, 0.0]))
        want = qrotate(q, np.array([r.offset[k] for k in kids]))
        have = positions[kids] - positions[c]
        sin = float(np.einsum("i,ki->", axis, np.cross(want, have)))
        cos = float(np.einsum("ki,ki->", want - np.outer(want @ axis, axis), have - np.outer(have @ axis, axis)))
        if abs(sin) > 1e-15 or cos < 0.0:
            twists[c] = float(np.arctan2(sin, cos))
    frames = r.pose_frames(rows, (twists, {})) if twists else swing  # type: ignore[arg-type]
    return np.array(frames, dtype=float)


def solve_riding(skeleton: Skeleton, solve: Callable[..., SolveResult], targets: Any, **options: Any) -> SolveResult:
    """``solve(skeleton, targets, **options)`` for a skeleton with riders: the core solved by ``solve``
    (the full arrays of ``positions``, ``rotations``, ``relax_to`` and ``relax_rotations`` cut to its
    joints), the riders carried (module docstring); the result is the whole skeleton's."""
    core, keep = skeleton.core, skeleton.core_joints
    n = len(skeleton)
    p0, q0 = before(skeleton, options.get("positions"), options.get("rotations"))
    given = dict(options)
    checked = {
        "positions": lambda v: p0,
        "rotations": lambda v: q0,
        "relax_to": lambda v: _shaped(checks.points(v, "relax_to"), n),
        "relax_rotations": lambda v: checks.frames(v, n, "relax_rotations"),
    }
    for name, check in checked.items():
        if given.get(name) is not None:
            given[name] = check(given[name])[keep]
    return carried(skeleton, solve(core, targets, **given), q0)


def _shaped(points: np.ndarray, n: int) -> np.ndarray:
    if points.shape != (n, 3):
        raise ValueError(f"relax_to: expected shape ({n}, 3), got {points.shape}")
    return points


def carried(skeleton: Skeleton, got: Any, before_q: np.ndarray) -> Any:
    """``got`` (a ``SolveResult`` or a ``BatchResult`` of ``skeleton.core``: positions ``(..., m, 3)``)
    made the whole skeleton's: its core joints as solved, the riders carried (``carry``) from their turns
    in the world frames before the solve, ``before_q`` ``(..., n, 4)`` (broadcast to ``got``'s batch)."""
    lead = got.positions.shape[:-2]
    n = len(skeleton)
    p, q = np.empty((*lead, n, 3)), np.empty((*lead, n, 4))  # (every joint is the core's or a rider)
    keep = skeleton.core_joints
    p[..., keep, :], q[..., keep, :] = got.positions, got.rotations
    carry(skeleton, before_q, p, q)
    return dataclasses.replace(got, positions=p, rotations=q)
