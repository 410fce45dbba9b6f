"""The compiled backends' tree kernel: ``fabrik3d.batch.tree.solve_tree`` for one problem, on scalars.

The tree twin of ``fabrik3d.batch.kernels`` (the chain kernel), built the same way: ``build_tree(jit)``
passes each function through ``jit`` (``numba.njit``, ``numba.cuda.jit(device=True)``, or nothing: plain
Python, which the tests use to check the source without numba), the lanes of a block are the columns of
``x[k]`` and ``q[k]`` ``(R, 3, G)`` and every step's test computes both sides and picks one (so the loop
over the lanes compiles to vector instructions on a CPU; ``G`` is 1 on a GPU). The drivers are in
``fabrik3d.batch.backends``.

The plan is ``solve_tree``'s (``fabrik3d.batch.tree.TreePlan``) as arrays (``plan_arrays``): the moving
joints as rows (the root first), stage 1's sub-base centroids children first, stage 2's steps parents
first, and each target's row. Each step is ``solve_tree``'s operation by operation (a child's pull
``(q[c] + d * s) * w``, summed, over the weights' total; the fallbacks where a step lands on a joint:
the old bone's direction in stage 1, the stage-1 bone's or else the rest bone's in stage 2), and the
stopping rules are its own (the largest error, ``chain.settled``), so each problem's floats and
iterations are ``solve_tree``'s (a product by a weight of 1.0 or a quotient by a total of 1.0, which
``solve_tree`` skips, changes no float).

Arrays: ``queue`` (``kernels``' own), ``starts`` ``(S, n, 3)`` start poses (``S`` is 1 or ``B``),
``goals`` ``(B, T, 3)``, ``pose`` ``(B, n, 3)`` holding the start poses, whose moving rows are written;
lane state ``x``, ``q`` ``(K, R, 3, G)``, ``lanes``, ``errs``, ``its`` ``(K, G)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.batch.kernels import in_order, landing
from fabrik3d.rotations import TINY2
from fabrik3d.solver.chain import STALL


def plan_arrays(plan: Any) -> tuple[np.ndarray, ...]:
    """``fabrik3d.batch.tree.TreePlan`` as the kernel's arrays: ``moving`` ``(R,)`` joint of each row,
    ``trow`` ``(T,)`` row of each target, ``inward`` ``(I, 3)`` (row, first and end of its children in
    ``kid_rows``), ``kid_rows`` ``(C,)``, ``kids`` ``(C, 2)`` (bone, weight), ``totals`` ``(I,)``,
    ``outward`` ``(O, 2)`` (row, parent row), ``bones`` ``(O, 5)`` (bone, rest bone vector, its squared
    length as ``solve_tree`` computes it)."""
    moving = np.array(plan.moving, dtype=np.int64)
    trow = np.array([j for j, _ in plan.targets], dtype=np.int64)
    inward, kid_rows, kids, totals = [], [], [], []
    for j, children, total in plan.inward:
        inward.append((j, len(kids), len(kids) + len(children)))
        kid_rows.extend(c for c, _, _ in children)
        kids.extend((length, w) for _, length, w in children)
        totals.append(total)
    outward, bones = [], []
    for j, p, length, (rx, ry, rz) in plan.outward:
        outward.append((j, p))
        bones.append((length, rx, ry, rz, rx * rx + ry * ry + rz * rz))
    return (
        moving,
        trow,
        np.array(inward, dtype=np.int64).reshape(-1, 3),
        np.array(kid_rows, dtype=np.int64),
        np.array(kids, dtype=np.float64).reshape(-1, 2),
        np.array(totals, dtype=np.float64),
        np.array(outward, dtype=np.int64).reshape(-1, 2),
        np.array(bones, dtype=np.float64).reshape(-1, 5),
    )


def build_tree(jit: Callable[[Any], Any], take: Callable[..., int] = in_order) -> Callable[..., int]:
    """The tree kernel's functions, each passed through ``jit``; returns ``tree_block``. ``take``: as
    ``kernels.build``'s."""
    step = jit(landing)
    take_next = jit(take)

    @jit
    def begin(b, row, starts, moving, trow, goals, x, q, k, g, errs):  # type: ignore[no-untyped-def]
        """Problem ``b`` (start pose ``starts[row]``) into lane ``g`` of block ``k``, its largest error in
        ``errs[k, g]``; the targets are its targeted rows' stage-1 points (``q``), for good."""
        err = 0.0
        for t in range(trow.shape[0]):
            e = moving[trow[t]]
            dx, dy, dz = (
                starts[row, e, 0] - goals[b, t, 0],
                starts[row, e, 1] - goals[b, t, 1],
                starts[row, e, 2] - goals[b, t, 2],
            )
            one = math.sqrt(dx * dx + dy * dy + dz * dz)
            err = one if t == 0 or one > err else err
        errs[k, g] = err
        for r in range(moving.shape[0]):
            for c in range(3):
                x[k, r, c, g] = starts[row, moving[r], c]
        for t in range(trow.shape[0]):
            for c in range(3):
                q[k, trow[t], c, g] = goals[b, t, c]

    @jit
    def refill(k, g, nxt, hi, queue, starts, moving, trow, goals, tol, iterations, x, q, lanes, errs, its):  # type: ignore[no-untyped-def]
        """Lane ``g`` of block ``k`` (empty) takes problems (``take``: from ``nxt`` on, before ``hi``) until
        one needs iterating; those reached at the start get 0 iterations (their poses are the start's).
        Returns the next problem not taken."""
        while lanes[k, g] < 0:
            b = take_next(queue, nxt)
            if b >= hi:
                return hi
            nxt = b + 1
            begin(b, 0 if starts.shape[0] == 1 else b, starts, moving, trow, goals, x, q, k, g, errs)
            if errs[k, g] > tol:
                lanes[k, g], its[k, g] = b, 0
            else:
                iterations[b] = 0
        return nxt

    @jit
    def stage1(x, q, k, inward, kid_rows, kids, totals):  # type: ignore[no-untyped-def]
        """Inward on every lane of block ``k``: each untargeted joint's stage-1 point, the weighted
        centroid of its children's pulls (the old bone's direction where a pull lands on the joint)."""
        width = x.shape[3]
        for s in range(inward.shape[0]):
            j = inward[s, 0]
            for m in range(inward[s, 1], inward[s, 2]):
                c = kid_rows[m]
                length, w = kids[m, 0], kids[m, 1]
                first = m == inward[s, 1]
                for g in range(width):
                    px, py, pz = q[k, c, 0, g], q[k, c, 1, g], q[k, c, 2, g]
                    dx, dy, dz, l2 = step(  # (landed on the joint: the old bone's direction)
                        x[k, j, 0, g], x[k, j, 1, g], x[k, j, 2, g], px, py, pz,
                        x[k, c, 0, g], x[k, c, 1, g], x[k, c, 2, g],
                    )  # fmt: skip
                    f = length / math.sqrt(l2)
                    vx, vy, vz = (px + dx * f) * w, (py + dy * f) * w, (pz + dz * f) * w
                    if first:
                        q[k, j, 0, g], q[k, j, 1, g], q[k, j, 2, g] = vx, vy, vz
                    else:
                        q[k, j, 0, g], q[k, j, 1, g], q[k, j, 2, g] = (
                            q[k, j, 0, g] + vx,
                            q[k, j, 1, g] + vy,
                            q[k, j, 2, g] + vz,
                        )
            total = totals[s]
            for g in range(width):
                q[k, j, 0, g], q[k, j, 1, g], q[k, j, 2, g] = (
                    q[k, j, 0, g] / total,
                    q[k, j, 1, g] / total,
                    q[k, j, 2, g] / total,
                )

    @jit
    def stage2(x, q, k, outward, bones):  # type: ignore[no-untyped-def]
        """Outward on every lane of block ``k``: every moving joint back at its bone's length from its
        parent (the stage-1 bone's direction where the step lands on the parent, or else the rest bone's)."""
        width = x.shape[3]
        for s in range(outward.shape[0]):
            j, p = outward[s, 0], outward[s, 1]
            length, rx, ry, rz, r2 = bones[s, 0], bones[s, 1], bones[s, 2], bones[s, 3], bones[s, 4]
            for g in range(width):
                px, py, pz = x[k, p, 0, g], x[k, p, 1, g], x[k, p, 2, g]
                dx, dy, dz, l2 = step(  # (landed on the parent: the stage-1 bone's direction)
                    q[k, j, 0, g], q[k, j, 1, g], q[k, j, 2, g], px, py, pz,
                    q[k, p, 0, g], q[k, p, 1, g], q[k, p, 2, g],
                )  # fmt: skip
                tiny = l2 < TINY2  # (that one too: the rest bone's; l2 is short only where it landed)
                dx, dy, dz, l2 = (rx if tiny else dx), (ry if tiny else dy), (rz if tiny else dz), (r2 if tiny else l2)
                f = length / math.sqrt(l2)
                x[k, j, 0, g], x[k, j, 1, g], x[k, j, 2, g] = px + dx * f, py + dy * f, pz + dz * f

    @jit
    def tree_block(
        k,
        lo,
        hi,
        queue,
        starts,
        moving,
        trow,
        inward,
        kid_rows,
        kids,
        totals,
        outward,
        bones,
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
    ):  # type: ignore[no-untyped-def]
        """``solve_tree`` on problems ``lo`` to ``hi - 1`` (those ``take`` gives) in the lanes of block ``k``
        (``lanes[k, g]``: each lane's problem, or -1: an empty lane steps along on what it holds, unread),
        a lane refilled with the next problem as its own stops. ``moving`` to ``bones``: ``plan_arrays``'s
        arrays."""
        width = x.shape[3]
        nxt = lo
        live = 0
        for g in range(width):
            lanes[k, g] = -1
            nxt = refill(k, g, nxt, hi, queue, starts, moving, trow, goals, tol, iterations, x, q, lanes, errs, its)
            live += 1 if lanes[k, g] >= 0 else 0
        while live > 0:
            stage1(x, q, k, inward, kid_rows, kids, totals)
            stage2(x, q, k, outward, bones)
            for g in range(width):  # each lane's stopping rules; a stopped lane takes the next problem
                b = lanes[k, g]
                if b < 0:
                    continue
                its[k, g] += 1
                new = 0.0
                for t in range(trow.shape[0]):
                    r = trow[t]
                    dx, dy, dz = (
                        x[k, r, 0, g] - q[k, r, 0, g],
                        x[k, r, 1, g] - q[k, r, 1, g],
                        x[k, r, 2, g] - q[k, r, 2, g],
                    )
                    one = math.sqrt(dx * dx + dy * dy + dz * dz)
                    new = one if t == 0 or one > new else new
                err = errs[k, g]
                errs[k, g] = new
                if abs(err - new) < STALL * tol or new <= tol or its[k, g] >= max_it:  # chain.settled
                    iterations[b] = its[k, g]
                    for r in range(moving.shape[0]):
                        for c in range(3):
                            pose[b, moving[r], c] = x[k, r, c, g]
                    lanes[k, g] = -1
                    live -= 1
                    nxt = refill(
                        k, g, nxt, hi, queue, starts, moving, trow, goals, tol, iterations, x, q, lanes, errs, its
                    )
                    live += 1 if lanes[k, g] >= 0 else 0
        return live

    return tree_block
