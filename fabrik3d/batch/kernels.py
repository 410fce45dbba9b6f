"""The compiled backends' kernel source: ``solver.chain.run_chain`` for one problem, on scalars.

One source serves every target: ``build(jit)`` defines the per-problem functions and passes each
through ``jit`` (``numba.njit`` for the CPU, ``numba.cuda.jit(device=True)`` for NVIDIA GPUs, or
nothing at all: plain Python, which the tests use to check the source without numba). The
drivers that run it over a batch (in parallel over problems, one GPU thread per problem) are in
``fabrik3d.batch.backends``; numba is imported there, inside functions (the core needs numpy only).

``chain_problem`` is ``run_chain`` operation by operation: the same additions in the same order,
the same landing-on-a-joint fallbacks (``toward``), the stall rule (``chain.stalled``, written out:
``before - after < STALL * tol``) and the bend of a chain stuck straight on its target's line
(``bend_if_straight``, at most ``MAX_BENDS`` times), so each problem's floats and iterations are
``run_chain``'s, and so ``solve_batch``'s (``fabrik3d.batch.chain.solve_chains`` gives ``run_chain``'s
floats too). The CPU target compiles without fast-math (no reassociation, no fused multiply-adds);
a GPU compiler may fuse multiply-adds, a last-place difference (positions within 1e-12).

Arrays: ``start`` ``(S, L, 3)`` start poses (``S`` is 1, shared, or ``B``), ``lengths`` ``(L - 1,)``
bones, ``target`` ``(B, 3)``, ``pose`` ``(B, L, 3)`` the results (also the working pose), ``q``
``(K, L, 3)`` scratch for stage 1, row ``k`` for the problem at hand (a CPU thread's, a GPU thread's).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.rotations import TINY2
from fabrik3d.solver.chain import BEND_DEG, MAX_BENDS, STALL, STRAIGHT

# chain.py's math.radians(BEND_DEG) as CPython computes it (x * (pi / 180)), for targets without radians.
_BEND = BEND_DEG * (math.pi / 180.0)


def arc_table(bones: int) -> np.ndarray:
    """``(bones, 2)``: the cosine and sine by which ``chain._bend_if_straight`` turns bone ``i`` of a chain
    of ``bones`` bones, computed as it computes them (``math`` on this machine)."""
    table = np.empty((bones, 2))
    for i in range(bones):
        a = _BEND * (i + 1) / bones
        table[i] = math.cos(a), math.sin(a)
    return table


def build(jit: Callable[[Any], Any]) -> Callable[..., int]:
    """The kernel's functions, each passed through ``jit``; returns ``block``."""

    @jit
    def toward(px, py, pz, cx, cy, cz, ox, oy, oz, d):  # type: ignore[no-untyped-def]
        """``chain._toward``: the point at ``d`` from ``p`` toward ``c`` (away from ``o`` if ``c`` is on ``p``)."""
        dx, dy, dz = cx - px, cy - py, cz - pz
        l2 = dx * dx + dy * dy + dz * dz
        if l2 < TINY2:
            dx, dy, dz = cx - ox, cy - oy, cz - oz
            l2 = dx * dx + dy * dy + dz * dz
        s = d / math.sqrt(l2)
        return px + dx * s, py + dy * s, pz + dz * s

    @jit
    def bend_if_straight(pose, b, lengths, arc, reach, tx, ty, tz):  # type: ignore[no-untyped-def]
        """``chain._bend_if_straight`` on ``pose[b]``: bend it into an arc; False if it is not straight.
        ``arc`` ``(L - 1, 2)``: bone ``i``'s cosine and sine (``arc_table``, from the host's ``math``, as a GPU's
        own cosine may differ in the last place)."""
        n = pose.shape[1]
        bx, by, bz = pose[b, 0, 0], pose[b, 0, 1], pose[b, 0, 2]
        far = 1
        best = -1.0
        for i in range(1, n):  # max(range(1, n), key=reach2): the first of the largest
            x, y, z = pose[b, i, 0] - bx, pose[b, i, 1] - by, pose[b, i, 2] - bz
            r2 = x * x + y * y + z * z
            if r2 > best:
                far, best = i, r2
        vx, vy, vz = pose[b, far, 0] - bx, pose[b, far, 1] - by, pose[b, far, 2] - bz
        n2 = vx * vx + vy * vy + vz * vz
        if n2 < TINY2 or n < 3:
            return False
        norm = math.sqrt(n2)
        ux, uy, uz = vx / norm, vy / norm, vz / norm
        limit = (STRAIGHT * reach) * (STRAIGHT * reach)
        for i in range(n + 1):  # the joints, then the target
            if i < n:
                px, py, pz = pose[b, i, 0], pose[b, i, 1], pose[b, i, 2]
            else:
                px, py, pz = tx, ty, tz
            rx, ry, rz = px - bx, py - by, pz - bz
            k = rx * ux + ry * uy + rz * uz
            ox, oy, oz = rx - k * ux, ry - k * uy, rz - k * uz
            if ox * ox + oy * oy + oz * oz > limit:
                return False
        axis = 0  # min(range(3), key=abs(u[i])): the first of the smallest
        if abs(uy) < abs(ux):
            axis = 1
        if abs(uz) < (abs(ux) if axis == 0 else abs(uy)):
            axis = 2
        e0, e1, e2 = (1.0 if axis == 0 else 0.0), (1.0 if axis == 1 else 0.0), (1.0 if axis == 2 else 0.0)
        k = e0 * ux + e1 * uy + e2 * uz
        wx, wy, wz = e0 - k * ux, e1 - k * uy, e2 - k * uz
        w = math.sqrt(wx * wx + wy * wy + wz * wz)  # (never short: e is the axis least along u)
        wx, wy, wz = wx / w, wy / w, wz / w
        m = n - 1
        for i in range(m):
            along = (
                (pose[b, i + 1, 0] - pose[b, i, 0]) * ux
                + (pose[b, i + 1, 1] - pose[b, i, 1]) * uy
                + (pose[b, i + 1, 2] - pose[b, i, 2]) * uz
            )
            sign = 1.0 if along >= 0 else -1.0
            c, s = arc[i, 0] * sign, arc[i, 1]
            d = lengths[i]
            pose[b, i + 1, 0] = pose[b, i, 0] + d * (ux * c + wx * s)
            pose[b, i + 1, 1] = pose[b, i, 1] + d * (uy * c + wy * s)
            pose[b, i + 1, 2] = pose[b, i, 2] + d * (uz * c + wz * s)
        return True

    @jit
    def begin(b, row, starts, reach, lengths, goals, pose, q, k, g, errs):  # type: ignore[no-untyped-def]
        """``run_chain`` up to its loop for problem ``b`` (start pose ``starts[row]``) in lane ``g`` of
        block ``k``: writes ``pose[b]``; returns the iterations if it is done (1: unreachable, straightened;
        0: reached at the start), else -1 with its error in ``errs[k, g]`` and its stage-1 row set up."""
        n = pose.shape[1]
        last = n - 1
        for i in range(n):
            for c in range(3):
                pose[b, i, c] = starts[row, i, c]
        bx, by, bz = pose[b, 0, 0], pose[b, 0, 1], pose[b, 0, 2]
        tx, ty, tz = goals[b, 0], goals[b, 1], goals[b, 2]
        dist = math.sqrt((tx - bx) * (tx - bx) + (ty - by) * (ty - by) + (tz - bz) * (tz - bz))
        if dist > reach:  # unreachable: straighten toward the target in one step
            ux, uy, uz = (tx - bx) / dist, (ty - by) / dist, (tz - bz) / dist
            px, py, pz = bx, by, bz
            for i in range(last):
                d = lengths[i]
                px += ux * d
                py += uy * d
                pz += uz * d
                pose[b, i + 1, 0], pose[b, i + 1, 1], pose[b, i + 1, 2] = px, py, pz
            return 1
        ex, ey, ez = pose[b, last, 0] - tx, pose[b, last, 1] - ty, pose[b, last, 2] - tz
        errs[k, g] = math.sqrt(ex * ex + ey * ey + ez * ez)
        q[k, g, 0, 0], q[k, g, 0, 1], q[k, g, 0, 2] = bx, by, bz
        q[k, g, last, 0], q[k, g, last, 1], q[k, g, last, 2] = tx, ty, tz
        return -1

    @jit
    def refill(k, g, nxt, hi, starts, reach, lengths, goals, tol, pose, iterations, q, lanes, errs, its, bents):  # type: ignore[no-untyped-def]
        """Lane ``g`` of block ``k`` (empty: ``lanes[k, g]`` is -1) takes problems from ``nxt`` on (before
        ``hi``) until one needs iterating (``begin``); those done at the start get their iterations.
        Returns the next problem not taken."""
        while nxt < hi and lanes[k, g] < 0:
            b = nxt
            nxt += 1
            done = begin(b, 0 if starts.shape[0] == 1 else b, starts, reach, lengths, goals, pose, q, k, g, errs)
            if done >= 0 or not errs[k, g] > tol:
                iterations[b] = 0 if done < 0 else done
            else:
                lanes[k, g], its[k, g], bents[k, g] = b, 0, 0
        return nxt

    @jit
    def block(k, lo, hi, starts, lengths, arc, reach, goals, tol, max_it, pose, iterations, q, lanes, errs, its, bents):  # type: ignore[no-untyped-def]
        """``run_chain`` on problems ``lo`` to ``hi - 1`` in ``G`` lanes (``lanes[k]``: each lane's problem,
        or -1), the lanes interleaved joint by joint (independent work for the core between dependent
        steps), a lane refilled with the next problem as its own stops. Lane state: ``errs``, ``its``,
        ``bents`` ``(K, G)``; stage-1 rows ``q[k, g]``."""
        n = pose.shape[1]
        last = n - 1
        lanes_n = lanes.shape[1]
        nxt = lo
        live = 0
        for g in range(lanes_n):
            lanes[k, g] = -1
            nxt = refill(
                k, g, nxt, hi, starts, reach, lengths, goals, tol, pose, iterations, q, lanes, errs, its, bents
            )
            live += 1 if lanes[k, g] >= 0 else 0
        while live > 0:
            for i in range(last - 1, 0, -1):  # stage 1, forward reaching, every lane
                for g in range(lanes_n):
                    b = lanes[k, g]
                    if b < 0:
                        continue
                    px, py, pz = q[k, g, i + 1, 0], q[k, g, i + 1, 1], q[k, g, i + 1, 2]
                    cx, cy, cz = pose[b, i, 0], pose[b, i, 1], pose[b, i, 2]
                    dx, dy, dz = cx - px, cy - py, cz - pz
                    l2 = dx * dx + dy * dy + dz * dz
                    if l2 < TINY2:  # landed on the joint: keep the old bone's direction
                        dx, dy, dz = cx - pose[b, i + 1, 0], cy - pose[b, i + 1, 1], cz - pose[b, i + 1, 2]
                        l2 = dx * dx + dy * dy + dz * dz
                    s = lengths[i] / math.sqrt(l2)
                    q[k, g, i, 0], q[k, g, i, 1], q[k, g, i, 2] = px + dx * s, py + dy * s, pz + dz * s
            for i in range(1, n):  # stage 2, backward reaching, every lane
                for g in range(lanes_n):
                    b = lanes[k, g]
                    if b < 0:
                        continue
                    px, py, pz = pose[b, i - 1, 0], pose[b, i - 1, 1], pose[b, i - 1, 2]
                    cx, cy, cz = q[k, g, i, 0], q[k, g, i, 1], q[k, g, i, 2]
                    dx, dy, dz = cx - px, cy - py, cz - pz
                    l2 = dx * dx + dy * dy + dz * dz
                    if l2 < TINY2:  # keep the stage-1 bone's direction
                        if i == 1:  # the base's stage-1 point
                            ox, oy, oz = pose[b, 1, 0], pose[b, 1, 1], pose[b, 1, 2]
                            q[k, g, 0, 0], q[k, g, 0, 1], q[k, g, 0, 2] = toward(
                                cx, cy, cz, px, py, pz, ox, oy, oz, lengths[0]
                            )
                        dx, dy, dz = cx - q[k, g, i - 1, 0], cy - q[k, g, i - 1, 1], cz - q[k, g, i - 1, 2]
                        l2 = dx * dx + dy * dy + dz * dz
                    s = lengths[i - 1] / math.sqrt(l2)
                    pose[b, i, 0], pose[b, i, 1], pose[b, i, 2] = px + dx * s, py + dy * s, pz + dz * s
            for g in range(lanes_n):  # each lane's stopping rules; a stopped lane takes the next problem
                b = lanes[k, g]
                if b < 0:
                    continue
                its[k, g] += 1
                tx, ty, tz = goals[b, 0], goals[b, 1], goals[b, 2]
                px, py, pz = pose[b, last, 0], pose[b, last, 1], pose[b, last, 2]
                new = math.sqrt((px - tx) * (px - tx) + (py - ty) * (py - ty) + (pz - tz) * (pz - tz))
                err = errs[k, g]
                stop = False
                if err - new < STALL * tol and new > tol:  # chain.stalled
                    if bents[k, g] < MAX_BENDS and bend_if_straight(pose, b, lengths, arc, reach, tx, ty, tz):
                        bents[k, g] += 1
                        new = math.inf  # the bent pose starts afresh
                    else:
                        stop = True
                errs[k, g] = new
                if stop or not new > tol or its[k, g] >= max_it:
                    iterations[b] = its[k, g]
                    lanes[k, g] = -1
                    live -= 1
                    nxt = refill(
                        k, g, nxt, hi, starts, reach, lengths, goals, tol, pose, iterations, q, lanes, errs, its, bents
                    )
                    live += 1 if lanes[k, g] >= 0 else 0
        return live

    return block
