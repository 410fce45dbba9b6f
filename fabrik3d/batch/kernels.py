"""The compiled backends' kernel source: ``solver.chain.run_chain`` for one problem, on scalars.

One source serves every target: ``build(jit)`` defines the per-problem functions and passes each
through ``jit`` (``numba.njit`` for the CPU, ``numba.cuda.jit(device=True)`` for NVIDIA GPUs, or
nothing at all: plain Python, which the tests use to check the source without numba). The
drivers that run it over a batch (in parallel over problems; GPU threads sharing a queue of them) are in
``fabrik3d.batch.backends``; numba is imported there, inside functions (the core needs numpy only).

``block`` is ``run_chain`` operation by operation: the same additions in the same order,
the same landing-on-a-joint fallbacks (``toward``), the stall rule (``chain.stalled``, written out:
``before - after < STALL * tol``) and the bend of a chain stuck straight on its target's line
(``bend_if_straight``, at most ``MAX_BENDS`` times), so each problem's floats and iterations are
``run_chain``'s, and so ``solve_batch``'s (``fabrik3d.batch.chain.solve_chains`` gives ``run_chain``'s
floats too). The CPU target compiles without fast-math (no reassociation, no fused multiply-adds);
a GPU compiler may fuse multiply-adds, a last-place difference (positions within 1e-12).

Lanes: a block ``k`` (a CPU thread's share of the problems, or one GPU thread's) steps ``G``
problems side by side, joint by joint: each lane's pose and stage-1 points are a column of ``x[k]``
and ``q[k]`` ``(L, 3, G)``, and each step's test (did it land on a joint?) computes both sides and
picks one, so the loop over the lanes has no branch and compiles to vector instructions (``G`` is
known at run time only, as LLVM's loop vectoriser wants; numba's numpy error model, so a lane's
quotient by zero is an inf, not an exception). ``G`` is 1 on a GPU, whose threads take their
problems one at a time from a queue they share (``take``: ``compiled.from_queue``; a CPU block takes
its own range in order, ``in_order``).

Arrays: ``queue`` ``(1,)`` int64, the GPU's next problem (zero at the start); ``starts`` ``(S, L, 3)``
start poses (``S`` is 1, shared, or ``B``), ``lengths`` ``(L - 1,)`` bones, ``goals`` ``(B, 3)``,
``pose`` ``(B, L, 3)`` the results; lane state ``x``, ``q`` ``(K, L, 3, G)``, ``lanes``, ``errs``,
``its``, ``bents`` ``(K, G)`` (``backends._lane_state``).
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


def landing(cx, cy, cz, px, py, pz, ox, oy, oz):  # type: ignore[no-untyped-def]
    """A FABRIK step's direction: ``c - p``, or ``c - o`` where ``c`` lies on ``p`` (squared length under
    ``TINY2``: the step landed on the joint), with its squared length. Both sides are computed and one is
    picked, so a loop over lanes has no branch. Scalars; the kernels' builds pass it through ``jit``."""
    dx, dy, dz = cx - px, cy - py, cz - pz
    l2 = dx * dx + dy * dy + dz * dz
    small = l2 < TINY2
    ax, ay, az = cx - ox, cy - oy, cz - oz
    a2 = ax * ax + ay * ay + az * az
    return (ax if small else dx), (ay if small else dy), (az if small else dz), (a2 if small else l2)


def in_order(queue, nxt):  # type: ignore[no-untyped-def]
    """The next problem a lane takes: ``nxt``, the one after its last (a CPU block's own range; ``queue``
    unused). The GPU's runner takes from a queue shared by all threads instead (``compiled.cuda``), so
    that a thread whose problem stops takes the next one: a warp steps until its slowest thread stops,
    and the iterations differ from problem to problem."""
    return nxt


def build(jit: Callable[[Any], Any], take: Callable[..., int] = in_order) -> Callable[..., int]:
    """The kernel's functions, each passed through ``jit``; returns ``block``. ``take(queue, nxt)``: the
    next problem a lane takes (``in_order``, or a device function taking it from a shared queue)."""
    step = jit(landing)
    take_next = jit(take)

    @jit
    def toward(px, py, pz, cx, cy, cz, ox, oy, oz, d):  # type: ignore[no-untyped-def]
        """``chain._toward``: the point at ``d`` from ``p`` toward ``c`` (away from ``o`` if ``c`` is on ``p``)."""
        dx, dy, dz, l2 = step(cx, cy, cz, px, py, pz, ox, oy, oz)
        s = d / math.sqrt(l2)
        return px + dx * s, py + dy * s, pz + dz * s

    @jit
    def bend_if_straight(x, k, g, lengths, arc, reach, tx, ty, tz):  # type: ignore[no-untyped-def]
        """``chain._bend_if_straight`` on lane ``g`` of ``x[k]``: bend it into an arc; False if it is not
        straight. ``arc`` ``(L - 1, 2)``: bone ``i``'s cosine and sine (``arc_table``, from the host's
        ``math``, as a GPU's own cosine may differ in the last place)."""
        n = x.shape[1]
        bx, by, bz = x[k, 0, 0, g], x[k, 0, 1, g], x[k, 0, 2, g]
        far = 1
        best = -1.0
        for i in range(1, n):  # max(range(1, n), key=reach2): the first of the largest
            rx, ry, rz = x[k, i, 0, g] - bx, x[k, i, 1, g] - by, x[k, i, 2, g] - bz
            r2 = rx * rx + ry * ry + rz * rz
            if r2 > best:
                far, best = i, r2
        vx, vy, vz = x[k, far, 0, g] - bx, x[k, far, 1, g] - by, x[k, far, 2, g] - bz
        n2 = vx * vx + vy * vy + vz * vz
        if n2 < TINY2 or n < 3:
            return False
        norm = math.sqrt(n2)
        ux, uy, uz = vx / norm, vy / norm, vz / norm
        limit = (STRAIGHT * reach) * (STRAIGHT * reach)
        for i in range(n + 1):  # the joints, then the target
            if i < n:
                px, py, pz = x[k, i, 0, g], x[k, i, 1, g], x[k, i, 2, g]
            else:
                px, py, pz = tx, ty, tz
            rx, ry, rz = px - bx, py - by, pz - bz
            s = rx * ux + ry * uy + rz * uz
            ox, oy, oz = rx - s * ux, ry - s * uy, rz - s * uz
            if ox * ox + oy * oy + oz * oz > limit:
                return False
        axis = 0  # min(range(3), key=abs(u[i])): the first of the smallest
        if abs(uy) < abs(ux):
            axis = 1
        if abs(uz) < (abs(ux) if axis == 0 else abs(uy)):
            axis = 2
        e0, e1, e2 = (1.0 if axis == 0 else 0.0), (1.0 if axis == 1 else 0.0), (1.0 if axis == 2 else 0.0)
        s = e0 * ux + e1 * uy + e2 * uz
        wx, wy, wz = e0 - s * ux, e1 - s * uy, e2 - s * uz
        w = math.sqrt(wx * wx + wy * wy + wz * wz)  # (never short: e is the axis least along u)
        wx, wy, wz = wx / w, wy / w, wz / w
        for i in range(n - 1):
            along = (
                (x[k, i + 1, 0, g] - x[k, i, 0, g]) * ux
                + (x[k, i + 1, 1, g] - x[k, i, 1, g]) * uy
                + (x[k, i + 1, 2, g] - x[k, i, 2, g]) * uz
            )
            sign = 1.0 if along >= 0 else -1.0
            c, s = arc[i, 0] * sign, arc[i, 1]
            d = lengths[i]
            x[k, i + 1, 0, g] = x[k, i, 0, g] + d * (ux * c + wx * s)
            x[k, i + 1, 1, g] = x[k, i, 1, g] + d * (uy * c + wy * s)
            x[k, i + 1, 2, g] = x[k, i, 2, g] + d * (uz * c + wz * s)
        return True

    @jit
    def begin(b, row, starts, reach, lengths, goals, pose, x, q, k, g, errs):  # type: ignore[no-untyped-def]
        """``run_chain`` up to its loop for problem ``b`` (start pose ``starts[row]``) in lane ``g`` of
        block ``k``: returns the iterations if it is done (1: unreachable, straightened; 0: reached at
        the start), its pose written to ``pose[b]``; else -1, the lane's pose, stage-1 points and error
        (``errs[k, g]``) set up."""
        n = pose.shape[1]
        last = n - 1
        bx, by, bz = starts[row, 0, 0], starts[row, 0, 1], starts[row, 0, 2]
        tx, ty, tz = goals[b, 0], goals[b, 1], goals[b, 2]
        dist = math.sqrt((tx - bx) * (tx - bx) + (ty - by) * (ty - by) + (tz - bz) * (tz - bz))
        if dist > reach:  # unreachable: straighten toward the target in one step
            ux, uy, uz = (tx - bx) / dist, (ty - by) / dist, (tz - bz) / dist
            px, py, pz = bx, by, bz
            pose[b, 0, 0], pose[b, 0, 1], pose[b, 0, 2] = px, py, pz
            for i in range(last):
                d = lengths[i]
                px += ux * d
                py += uy * d
                pz += uz * d
                pose[b, i + 1, 0], pose[b, i + 1, 1], pose[b, i + 1, 2] = px, py, pz
            return 1
        ex, ey, ez = starts[row, last, 0] - tx, starts[row, last, 1] - ty, starts[row, last, 2] - tz
        errs[k, g] = math.sqrt(ex * ex + ey * ey + ez * ez)
        for i in range(n):
            for c in range(3):
                x[k, i, c, g] = q[k, i, c, g] = starts[row, i, c]
        q[k, last, 0, g], q[k, last, 1, g], q[k, last, 2, g] = tx, ty, tz
        return -1

    @jit
    def refill(
        k, g, nxt, hi, queue, starts, reach, lengths, goals, tol, pose, iterations, x, q, lanes, errs, its, bents
    ):  # type: ignore[no-untyped-def]
        """Lane ``g`` of block ``k`` (empty: ``lanes[k, g]`` is -1) takes problems (``take``: from ``nxt``
        on, before ``hi``) until one needs iterating (``begin``); those done at the start get their
        iterations and poses. Returns the next problem not taken."""
        while lanes[k, g] < 0:
            b = take_next(queue, nxt)
            if b >= hi:
                return hi
            nxt = b + 1
            row = 0 if starts.shape[0] == 1 else b
            done = begin(b, row, starts, reach, lengths, goals, pose, x, q, k, g, errs)
            if done < 0 and not errs[k, g] > tol:  # reached at the start
                done = 0
                for i in range(pose.shape[1]):
                    for c in range(3):
                        pose[b, i, c] = starts[row, i, c]
            if done >= 0:
                iterations[b] = done
            else:
                lanes[k, g], its[k, g], bents[k, g] = b, 0, 0
        return nxt

    @jit
    def stage1(x, q, k, lengths):  # type: ignore[no-untyped-def]
        """Forward reaching on every lane of block ``k`` (``q[k, last]`` holds the targets)."""
        width = x.shape[3]  # (a trip count known at run time only: LLVM's loop vectoriser takes it)
        for i in range(x.shape[1] - 2, 0, -1):
            d = lengths[i]
            for g in range(width):
                px, py, pz = q[k, i + 1, 0, g], q[k, i + 1, 1, g], q[k, i + 1, 2, g]
                dx, dy, dz, l2 = step(  # (landed on the joint: the old bone's direction)
                    x[k, i, 0, g], x[k, i, 1, g], x[k, i, 2, g], px, py, pz,
                    x[k, i + 1, 0, g], x[k, i + 1, 1, g], x[k, i + 1, 2, g],
                )  # fmt: skip
                s = d / math.sqrt(l2)
                q[k, i, 0, g], q[k, i, 1, g], q[k, i, 2, g] = px + dx * s, py + dy * s, pz + dz * s

    @jit
    def stage2(x, q, k, lengths):  # type: ignore[no-untyped-def]
        """Backward reaching on every lane of block ``k``; where a step lands on its joint, the stage-1
        bone's direction (for the first bone, the base's stage-1 point is worked out: ``toward``)."""
        width = x.shape[3]
        d = lengths[0]
        for g in range(width):
            px, py, pz = x[k, 0, 0, g], x[k, 0, 1, g], x[k, 0, 2, g]
            cx, cy, cz = q[k, 1, 0, g], q[k, 1, 1, g], q[k, 1, 2, g]
            small = (cx - px) * (cx - px) + (cy - py) * (cy - py) + (cz - pz) * (cz - pz) < TINY2
            ox, oy, oz = toward(cx, cy, cz, px, py, pz, x[k, 1, 0, g], x[k, 1, 1, g], x[k, 1, 2, g], d)
            ox, oy, oz = (
                (ox if small else q[k, 0, 0, g]),
                (oy if small else q[k, 0, 1, g]),
                (oz if small else q[k, 0, 2, g]),
            )
            q[k, 0, 0, g], q[k, 0, 1, g], q[k, 0, 2, g] = ox, oy, oz
            dx, dy, dz, l2 = step(cx, cy, cz, px, py, pz, ox, oy, oz)
            s = d / math.sqrt(l2)
            x[k, 1, 0, g], x[k, 1, 1, g], x[k, 1, 2, g] = px + dx * s, py + dy * s, pz + dz * s
        for i in range(2, x.shape[1]):
            d = lengths[i - 1]
            for g in range(width):
                px, py, pz = x[k, i - 1, 0, g], x[k, i - 1, 1, g], x[k, i - 1, 2, g]
                dx, dy, dz, l2 = step(
                    q[k, i, 0, g], q[k, i, 1, g], q[k, i, 2, g], px, py, pz,
                    q[k, i - 1, 0, g], q[k, i - 1, 1, g], q[k, i - 1, 2, g],
                )  # fmt: skip
                s = d / math.sqrt(l2)
                x[k, i, 0, g], x[k, i, 1, g], x[k, i, 2, g] = px + dx * s, py + dy * s, pz + dz * s

    @jit
    def block(
        k,
        lo,
        hi,
        queue,
        starts,
        lengths,
        arc,
        reach,
        goals,
        tol,
        max_it,
        pose,
        iterations,
        x,
        q,
        lanes,
        errs,
        its,
        bents,
    ):  # type: ignore[no-untyped-def]
        """``run_chain`` on problems ``lo`` to ``hi - 1`` (those ``take`` gives: its ``queue``, or in order)
        in the ``lanes`` lanes of block ``k``, each lane's pose and stage-1 points a column of ``x[k]``,
        ``q[k]`` ``(L, 3, lanes)`` (so that a core steps the lanes side by side, in its vector registers),
        a lane refilled with the next problem as its own stops; an empty lane (``lanes[k, g]`` is -1)
        steps along on what it holds, unread.
        Lane state: ``errs``, ``its``, ``bents`` ``(K, lanes)``."""
        n = pose.shape[1]
        last = n - 1
        width = x.shape[3]
        nxt = lo
        live = 0
        problems = (starts, reach, lengths, goals, tol, pose, iterations, x, q, lanes, errs, its, bents)  # (refill's)
        for g in range(width):
            lanes[k, g] = -1
            nxt = refill(k, g, nxt, hi, queue, *problems)
            live += 1 if lanes[k, g] >= 0 else 0
        while live > 0:
            stage1(x, q, k, lengths)
            stage2(x, q, k, lengths)
            for g in range(width):  # each lane's stopping rules; a stopped lane takes the next problem
                b = lanes[k, g]
                if b < 0:
                    continue
                its[k, g] += 1
                tx, ty, tz = q[k, last, 0, g], q[k, last, 1, g], q[k, last, 2, g]
                px, py, pz = x[k, last, 0, g], x[k, last, 1, g], x[k, last, 2, g]
                new = math.sqrt((px - tx) * (px - tx) + (py - ty) * (py - ty) + (pz - tz) * (pz - tz))
                err = errs[k, g]
                stop = False
                if err - new < STALL * tol and new > tol:  # chain.stalled
                    if bents[k, g] < MAX_BENDS and bend_if_straight(x, k, g, lengths, arc, reach, tx, ty, tz):
                        bents[k, g] += 1
                        new = math.inf  # the bent pose starts afresh
                    else:
                        stop = True
                errs[k, g] = new
                if stop or not new > tol or its[k, g] >= max_it:
                    iterations[b] = its[k, g]
                    for i in range(n):
                        for c in range(3):
                            pose[b, i, c] = x[k, i, c, g]
                    lanes[k, g] = -1
                    live -= 1
                    nxt = refill(k, g, nxt, hi, queue, *problems)
                    live += 1 if lanes[k, g] >= 0 else 0
        return live

    return block
