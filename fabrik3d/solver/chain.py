"""Single-chain FABRIK (Aristidou & Lasenby 2011, listing 1.1-1.34).

A chain is ``n`` joint positions ``p_0 … p_{n-1}`` (``(n, 3)``, scene units):
``p_0`` is the fixed base, ``p_{n-1}`` the end effector, and the bone lengths
``d_i = |p_{i+1} − p_i|`` are those of the input.

The algorithm, as in the paper:

1. If the target is farther from the base than the sum of the bones it is
   unreachable: every bone points straight at it, in one step (one iteration).
2. Otherwise repeat, while the effector is farther than ``tolerance`` from the
   target: stage 1 (forward reaching) puts the effector on the target and each
   joint on the line to its old position at its bone's length from the joint
   after it; stage 2 (backward reaching) puts the base back and each joint on
   the line to its stage-1 position at its bone's length from the joint before.

Every loop is bounded. The solve stops when the error is within tolerance, at
``max_iterations``, or when an iteration improves the error by less than
``STALL * tolerance`` (the target is in the chain's dead zone, or the chain is
as close as it gets). Degenerate steps (a joint landing exactly on the point it
aims for) keep the bone's previous direction, so no NaN can arise.

A chain lying straight along the line to a reachable target stalls at once,
since FABRIK alone never bends it; one lying *nearly* straight there (every
joint and the target within ``STRAIGHT`` times the reach of the line) crawls
so slowly that the stall rule ends it too. Such a chain is then bent once,
into an arc turning ``BEND_DEG`` degrees in total toward the world axis least
aligned with the chain (X before Y before Z on ties), and solving continues (at most
``MAX_BENDS`` times, should it fold flat again).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.rotations import TINY2, unit

# An iteration that improves the error by less than STALL * tolerance ends the solve.
STALL = 1e-3
# Total turn of the arc a straight, stuck chain is bent into, in degrees.
BEND_DEG = 10.0
# A bent chain can fold flat again into a fixed point; it is bent at most this many times.
MAX_BENDS = 3
# A stalled chain within STRAIGHT * reach of the line through its target counts as straight.
STRAIGHT = 1e-2


def stalled(before: Any, after: Any, tol: float) -> Any:
    """The chain's stall rule: an iteration took the error from ``before`` to ``after`` (scene
    units) and bettered it by less than ``STALL * tol``. Floats, or ``(m,)`` arrays (the batch
    kernel's live chains: then an ``(m,)`` mask)."""
    return before - after < STALL * tol


def settled(before: Any, after: Any, tol: float) -> Any:
    """The tree's stall rule: an iteration changed the largest error (``before`` to ``after``)
    by less than ``STALL * tol``, either way (with an unreachable target the largest error may
    rise). Floats, or ``(m,)`` arrays (an ``(m,)`` mask)."""
    return abs(before - after) < STALL * tol


@dataclass(frozen=True)
class ChainResult:
    """Outcome of ``solve_chain``.

    Attributes:
        positions: ``(n, 3)`` solved joint positions.
        iterations: forward-and-backward iterations run (1 for an unreachable target).
        error: distance from the effector to the target, in scene units.
        reached: whether ``error <= tolerance``.
    """

    positions: np.ndarray
    iterations: int
    error: float
    reached: bool


def solve_chain(
    positions: np.ndarray,
    target: np.ndarray,
    *,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
) -> ChainResult:
    """Solve one chain with FABRIK (see the module docstring).

    Args:
        positions: ``(n, 3)`` joints, ``n >= 2``; ``positions[0]`` is the fixed base,
            ``positions[-1]`` the end effector. Not modified.
        target: ``(3,)`` point for the end effector.
        tolerance: distance (scene units, > 0) at which the target counts as reached.
        max_iterations: upper bound on iterations (>= 1).

    Raises:
        ValueError: naming the argument, for wrong shapes, non-finite values,
            coincident joints, a non-positive tolerance or ``max_iterations < 1``.
    """
    xs, ys, zs = checks.columns(positions, "positions")
    n = len(xs)
    if n < 2:
        raise ValueError(f"positions: a chain has at least two joints, got {n}")
    t = checks.vec(target, "target")
    tolerance, max_iterations = checks.settings(tolerance, max_iterations)
    ds = list(map(math.dist, zip(xs, ys, zs), zip(xs[1:], ys[1:], zs[1:])))  # bone i: joint i to i + 1
    if min(ds) < 1e-9:
        i = ds.index(min(ds))
        raise ValueError(f"positions: joints {i} and {i + 1} coincide (bones must be at least 1e-9 long)")
    iterations, error = run_chain(xs, ys, zs, ds, t, tolerance, max_iterations)
    out = np.empty((n, 3))
    out[:, 0], out[:, 1], out[:, 2] = xs, ys, zs
    return ChainResult(out, iterations, error, error <= tolerance)


def run_chain(
    xs: list[float],
    ys: list[float],
    zs: list[float],
    ds: list[float],
    target: Sequence[float],
    tol: float,
    max_it: int,
) -> tuple[int, float]:
    """FABRIK on coordinate lists, in place; returns ``(iterations, error)``.

    ``ds[i]`` is the length of the bone from joint ``i`` to ``i + 1``. Inputs are
    trusted (checked by the callers).
    """
    n = len(xs)
    last = n - 1
    bx, by, bz = xs[0], ys[0], zs[0]
    tx, ty, tz = target
    sqrt = math.sqrt
    dist = sqrt((tx - bx) * (tx - bx) + (ty - by) * (ty - by) + (tz - bz) * (tz - bz))
    if dist > sum(ds):
        # Unreachable: straighten toward the target in one step (lines 1.4-1.9).
        ux, uy, uz = (tx - bx) / dist, (ty - by) / dist, (tz - bz) / dist
        px, py, pz = bx, by, bz
        for i in range(last):
            d = ds[i]
            px += ux * d
            py += uy * d
            pz += uz * d
            xs[i + 1], ys[i + 1], zs[i + 1] = px, py, pz
        return 1, sqrt((px - tx) * (px - tx) + (py - ty) * (py - ty) + (pz - tz) * (pz - tz))
    ex, ey, ez = xs[last] - tx, ys[last] - ty, zs[last] - tz
    err = sqrt(ex * ex + ey * ey + ez * ez)
    tiny = TINY2
    it = 0
    bent = 0
    # Stage 1 writes to qx, qy, qz and leaves xs, ys, zs as they were (the old joints a degenerate
    # step falls back on); stage 2 writes the new pose back to xs, ys, zs. The base stays put
    # (xs[0] is never written), and its stage-1 point, which only a degenerate stage-2 step
    # uses, is worked out there (``_toward``).
    qx, qy, qz = xs[:], ys[:], zs[:]
    qx[last], qy[last], qz[last] = tx, ty, tz
    inward = range(last - 1, 0, -1)
    outward = range(1, n)
    back = [0.0, *ds]  # back[i] = ds[i - 1], the bone from joint i - 1 to i
    while err > tol and it < max_it:
        it += 1
        # Stage 1, forward reaching: effector onto the target, then inward (1.17-1.22).
        px, py, pz = tx, ty, tz
        for i in inward:
            cx = xs[i]
            cy = ys[i]
            cz = zs[i]
            dx = cx - px
            dy = cy - py
            dz = cz - pz
            l2 = dx * dx + dy * dy + dz * dz
            if l2 < tiny:  # landed on the joint: keep the old bone's direction
                dx, dy, dz = cx - xs[i + 1], cy - ys[i + 1], cz - zs[i + 1]
                l2 = dx * dx + dy * dy + dz * dz
            s = ds[i] / sqrt(l2)
            px += dx * s
            py += dy * s
            pz += dz * s
            qx[i] = px
            qy[i] = py
            qz[i] = pz
        # Stage 2, backward reaching: from the base, outward (1.24-1.29).
        px, py, pz = bx, by, bz
        for i in outward:
            cx = qx[i]
            cy = qy[i]
            cz = qz[i]
            dx = cx - px
            dy = cy - py
            dz = cz - pz
            l2 = dx * dx + dy * dy + dz * dz
            if l2 < tiny:  # keep the stage-1 bone's direction
                if i == 1:  # the base's stage-1 point
                    qx[0], qy[0], qz[0] = _toward(cx, cy, cz, bx, by, bz, xs[1], ys[1], zs[1], ds[0], tiny)
                dx, dy, dz = cx - qx[i - 1], cy - qy[i - 1], cz - qz[i - 1]
                l2 = dx * dx + dy * dy + dz * dz
            s = back[i] / sqrt(l2)
            px += dx * s
            py += dy * s
            pz += dz * s
            xs[i] = px
            ys[i] = py
            zs[i] = pz
        new = sqrt((px - tx) * (px - tx) + (py - ty) * (py - ty) + (pz - tz) * (pz - tz))
        if stalled(err, new, tol) and new > tol:
            if bent < MAX_BENDS and _bend_if_straight(xs, ys, zs, ds, target):
                bent += 1
                err = math.inf  # the bent pose starts afresh: its first iteration may well be worse
                continue
            err = new
            break
        err = new
    return it, err


def _toward(
    px: float,
    py: float,
    pz: float,
    cx: float,
    cy: float,
    cz: float,
    ox: float,
    oy: float,
    oz: float,
    d: float,
    tiny: float,
) -> tuple[float, float, float]:
    """The point at distance ``d`` from ``p`` toward ``c`` (away from ``o`` if ``c`` lies on ``p``):
    one step of ``run_chain``'s stage 1, with the same floats."""
    dx, dy, dz = cx - px, cy - py, cz - pz
    l2 = dx * dx + dy * dy + dz * dz
    if l2 < tiny:
        dx, dy, dz = cx - ox, cy - oy, cz - oz
        l2 = dx * dx + dy * dy + dz * dz
    s = d / math.sqrt(l2)
    return px + dx * s, py + dy * s, pz + dz * s


def _bend_if_straight(
    xs: list[float], ys: list[float], zs: list[float], ds: list[float], target: Sequence[float]
) -> bool:
    """Bend a chain lying (nearly) on one line with its target into an arc; False if not straight."""
    n = len(xs)
    bx, by, bz = xs[0], ys[0], zs[0]

    def reach2(i: int) -> float:
        x, y, z = xs[i] - bx, ys[i] - by, zs[i] - bz
        return x * x + y * y + z * z

    far = max(range(1, n), key=reach2)
    u = unit((xs[far] - bx, ys[far] - by, zs[far] - bz))
    if u is None or n < 3:
        return False
    scale = sum(ds)
    points = [(xs[i], ys[i], zs[i]) for i in range(n)] + [tuple(target)]
    for px, py, pz in points:
        rx, ry, rz = px - bx, py - by, pz - bz
        k = rx * u[0] + ry * u[1] + rz * u[2]
        ox, oy, oz = rx - k * u[0], ry - k * u[1], rz - k * u[2]
        if ox * ox + oy * oy + oz * oz > (STRAIGHT * scale) * (STRAIGHT * scale):
            return False
    axis = min(range(3), key=lambda i: abs(u[i]))
    e = [0.0, 0.0, 0.0]
    e[axis] = 1.0
    k = e[0] * u[0] + e[1] * u[1] + e[2] * u[2]
    perp = unit((e[0] - k * u[0], e[1] - k * u[1], e[2] - k * u[2]))
    assert perp is not None
    total = math.radians(BEND_DEG)
    m = n - 1
    for i in range(m):
        # Each bone lies along +u or -u; turn it by a growing share of the arc.
        sign = (
            1.0 if (xs[i + 1] - xs[i]) * u[0] + (ys[i + 1] - ys[i]) * u[1] + (zs[i + 1] - zs[i]) * u[2] >= 0 else -1.0
        )
        a = total * (i + 1) / m
        c, s = math.cos(a) * sign, math.sin(a)
        d = ds[i]
        xs[i + 1] = xs[i] + d * (u[0] * c + perp[0] * s)
        ys[i + 1] = ys[i] + d * (u[1] * c + perp[1] * s)
        zs[i + 1] = zs[i] + d * (u[2] * c + perp[2] * s)
    return True
