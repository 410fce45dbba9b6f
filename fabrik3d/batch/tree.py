"""The start pose and the tree solve of ``fabrik3d.solver``, vectorised over a batch of problems.

Internal to ``fabrik3d.batch``:

* ``start_pose``: ``solver._start_pose`` (no root orientation);
* ``solve_tree``: ``solver._solve_tree`` (several targets).

(One target: ``fabrik3d.batch.chain``; frames and untargeted branches: ``fabrik3d.batch.frames``.)

Every step mirrors the scalar code operation by operation (the same additions
in the same order, no fused operations), so each problem's result equals
``fabrik3d.solve`` on that problem, iterations included. Poses are
``(n, 3, m)`` arrays: joint, coordinate, problem. The tree solve works as the
chain kernel does (see ``fabrik3d.batch.chain``): the live problems fill the
first ``m`` columns of preallocated arrays updated in place, stopped problems
are written out and refilled from the tail, and the landing-on-a-joint tests
are one reduction per stage, with the scalar fallbacks redone for the columns
that need them (``_careful_stage1``, ``_careful_stage2``).
"""

from __future__ import annotations

import numpy as np

from fabrik3d.batch.chain import LiveColumns, blocks
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.rotations import TINY2
from fabrik3d.solver.chain import settled
from fabrik3d.solver.plan import tree_plan
from fabrik3d.solver.rig import Rig, bone_direction


def start_pose(r: Rig, rest: np.ndarray, pts: np.ndarray, root: np.ndarray | None) -> np.ndarray:
    """``solver._start_pose`` for ``(m, n, 3)`` poses ``pts`` and ``(m, 3)`` root positions (or None).

    Returns the ``(n, 3, m)`` start pose (joint, coordinate, problem).
    """
    n = pts.shape[1]
    top = r.order[0]
    src = pts if root is None else np.broadcast_to(root[:, None, :], (root.shape[0], n, 3))
    m = max(pts.shape[0], src.shape[0])
    out = np.empty((n, 3, m))
    out[top] = src[:, top].T
    rest_rows = rest.tolist()
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in r.order[1:]:
            p = r.parents[j]
            v = (pts[:, j] - pts[:, p]).T
            n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
            u = v / np.sqrt(n2)
            bad = n2 < TINY2
            if bad.any():  # coincident joints: the rest bone's direction
                d = bone_direction(rest_rows[p], rest_rows[j])
                assert d is not None
                u = np.where(bad, np.array(d)[:, None], u)
            np.add(out[p], u * r.lengths[j], out=out[j])
    return out


class TreePlan:
    """The tree solve's steps on rows: the active joints in skeleton order (``rows``; the root first),
    then one row per target (``goal``'s order)."""

    def __init__(
        self, skeleton: Skeleton, r: Rig, goal: dict[int, np.ndarray], weights: dict[int, float] | None, active: list
    ) -> None:
        up, down, kids = tree_plan(skeleton, r, goal, weights, active)
        self.moving = [j for j in r.order if active[j]]
        row = {j: k for k, j in enumerate(self.moving)}
        self.size = len(self.moving)
        self.targets = [(row[e], self.size + k) for k, e in enumerate(goal)]  # (joint row, target row)
        # Stage 1, children first: (row, [(child row, child's bone, weight)], weight sum) of each untargeted joint.
        self.inward = []
        for j in down:
            if j not in goal:
                total = 0.0
                for _, wc in kids[j]:
                    total += wc
                self.inward.append((row[j], [(row[c], r.lengths[c], wc) for c, wc in kids[j]], total))
        # Stage 2, parents first: (row, parent row, bone, rest bone vector) of each joint but the root.
        rest = skeleton.rest_positions
        self.outward = [(row[j], row[r.parents[j]], r.lengths[j], (rest[j] - rest[r.parents[j]]).tolist()) for j in up]


def solve_tree(
    skeleton: Skeleton,
    r: Rig,
    start: np.ndarray,
    goal: dict[int, np.ndarray],
    weights: dict[int, float] | None,
    active: list[bool],
    tol: float,
    max_it: int,
    out: np.ndarray,
) -> np.ndarray:
    """``solver._solve_tree`` on ``B`` problems; writes the active joints' solved positions to ``out``.

    Args:
        start: ``(n, 3, B)`` start poses, or ``(n, 3, 1)`` shared by all (not modified).
        goal: targeted effector -> ``(B, 3)`` targets.
        active: the joints on a path from the root to a target.
        out: ``(B, n, 3)`` positions (problem, joint, coordinate), holding the start poses; the
            active joints of the problems that iterate are overwritten.

    Returns:
        ``(B,)`` iterations.
    """
    plan = TreePlan(skeleton, r, goal, weights, active)
    bsize = out.shape[0]
    iterations = np.zeros(bsize, dtype=np.int64)
    err = None
    for e, t in goal.items():
        d = start[e] - t.T
        one = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        err = one if err is None else np.maximum(err, one)
    assert err is not None
    live = np.flatnonzero(np.broadcast_to(err, (bsize,)) > tol)
    if live.size:
        with np.errstate(divide="ignore", invalid="ignore"):  # a step landing on a joint is redone, carefully
            _TreeLive(plan, start, goal, live, np.broadcast_to(err, (bsize,))[live], out).run(iterations, tol, max_it)
    return iterations


class _TreeLive(LiveColumns):
    """The live problems and the iteration on them.

    ``a`` is ``(rows + targets, 3, M)``: the active joints, then the targets, so that moving a
    column moves both; ``err`` is each column's largest error; ``q`` holds the stage-1 points.
    """

    def __init__(
        self,
        plan: TreePlan,
        start: np.ndarray,
        goal: dict[int, np.ndarray],
        live: np.ndarray,
        err: np.ndarray,
        out: np.ndarray,
    ) -> None:
        self.plan, self.out = plan, out
        size, rows = live.size, plan.size
        super().__init__(rows + len(goal), live, err)
        joints = start[plan.moving]
        self.a[:rows] = joints if joints.shape[2] == 1 else joints[:, :, live]
        for k, t in enumerate(goal.values()):
            self.a[rows + k] = t[live].T
        # Scratch, viewed as contiguous blocks for the first m columns: stage-1 points (rows, 3, m),
        # squared step lengths of stages 1 (by child row) and 2 (rows, m), temporaries.
        self.q = np.empty(rows * 3 * size)
        self.l2in = np.empty(rows * size)
        self.l2out = np.empty(rows * size)
        self.d = np.empty(3 * size)
        self.sq = np.empty(3 * size)
        self.s = np.empty(size)
        self.one = np.empty(size)
        self.new = np.empty(size)
        self.viewed = -1
        n = out.shape[1]
        self.whole = plan.moving == list(range(n))

    def views(self) -> None:
        """Views of the first ``m`` columns (rebuilt when ``m`` changes)."""
        m = self.m
        if m == self.viewed:
            return
        self.viewed = m
        rows = self.plan.size
        self.X = list(self.a[:, :, :m])
        self.q_m = blocks(self.q, rows, 3, m)
        self.Q = list(self.q_m)
        for j, t in self.plan.targets:
            self.Q[j] = self.X[t]  # a targeted effector's stage-1 point is its target
        self.l2in_m, self.l2out_m = blocks(self.l2in, rows, m), blocks(self.l2out, rows, m)
        self.L2in, self.L2out = list(self.l2in_m), list(self.l2out_m)
        self.D, self.SQ = blocks(self.d, 3, m), blocks(self.sq, 3, m)
        self.S, self.ONE, self.NEW = self.s[:m], self.one[:m], self.new[:m]

    def run(self, iterations: np.ndarray, tol: float, max_it: int) -> None:
        it = 0
        while self.m and it < max_it:
            it += 1
            self.views()
            self.stage1()
            self.stage2()
            new = self.largest_error()
            err = self.err[: self.m]
            stop = settled(err, new, tol) | (new <= tol)
            np.copyto(err, new)
            if it >= max_it:
                stop[:] = True
            if stop.any():
                self.drop(stop, iterations, it)

    def _step(self, c: np.ndarray, p: np.ndarray, length: float, l2: np.ndarray) -> np.ndarray:
        """``D = (c - p) * (length / |c - p|)``, the squared length stored in ``l2``."""
        d, sq, s = self.D, self.SQ, self.S
        np.subtract(c, p, out=d)
        np.multiply(d, d, out=sq)
        np.add(sq[0], sq[1], out=l2)
        np.add(l2, sq[2], out=l2)
        np.sqrt(l2, out=s)
        np.divide(length, s, out=s)
        return np.multiply(d, s, out=d)

    def stage1(self) -> None:
        """Effectors onto targets, then inward with (weighted) centroids at sub-bases."""
        X, Q, L2, add, mul = self.X, self.Q, self.L2in, np.add, np.multiply
        for j, kids, total in self.plan.inward:
            first = True
            for c, length, wc in kids:
                d = self._step(X[j], Q[c], length, L2[c])
                if first and wc == 1.0:
                    add(Q[c], d, out=Q[j])
                else:
                    add(Q[c], d, out=d)
                    if first:
                        mul(d, wc, out=Q[j])
                    else:
                        if wc != 1.0:
                            mul(d, wc, out=d)
                        add(Q[j], d, out=Q[j])
                first = False
            if total != 1.0:
                np.divide(Q[j], total, out=Q[j])
        if self.plan.size > 1 and not self.l2in_m[1:].min() >= TINY2:  # NaN too; row 0 is the root
            cols = np.flatnonzero(~np.all(self.l2in_m[1:] >= TINY2, axis=0))
            self.q_m[:, :, cols] = _careful_stage1(self.plan, self.a[:, :, cols])

    def stage2(self) -> None:
        """The root stays; every active joint back at its length from its parent."""
        X, Q, L2 = self.X, self.Q, self.L2out
        for j, p, length, _ in self.plan.outward:
            np.add(X[p], self._step(Q[j], X[p], length, L2[j]), out=X[j])
        if self.plan.size > 1 and not self.l2out_m[1:].min() >= TINY2:
            cols = np.flatnonzero(~np.all(self.l2out_m[1:] >= TINY2, axis=0))
            x = self.a[:, :, cols]
            q = self.q_m[:, :, cols]
            for j, t in self.plan.targets:
                q[j] = x[t]
            _careful_stage2(self.plan, x, q)
            self.a[:, :, cols] = x

    def largest_error(self) -> np.ndarray:
        """The largest distance of a targeted effector to its target, per column (``(m,)``)."""
        X, d, sq = self.X, self.D, self.SQ
        new = self.NEW
        for k, (j, t) in enumerate(self.plan.targets):
            one = new if k == 0 else self.ONE
            np.subtract(X[j], X[t], out=d)
            np.multiply(d, d, out=sq)
            np.add(sq[0], sq[1], out=one)
            np.add(one, sq[2], out=one)
            np.sqrt(one, out=one)
            if k:
                np.maximum(new, one, out=new)
        return new

    def drop(self, stop: np.ndarray, iterations: np.ndarray, it: int) -> None:
        """Write out the stopped columns (``stop``, ``(m,)``) and drop them."""
        cols = np.flatnonzero(stop)
        probs = self.probs[cols]
        joints = self.a[: self.plan.size, :, cols].transpose(2, 0, 1)
        if self.whole:
            self.out[probs] = joints
        else:
            self.out[probs[:, None], self.plan.moving] = joints
        iterations[probs] = it
        self.compact(stop, cols)


def _careful_stage1(plan: TreePlan, x: np.ndarray) -> np.ndarray:
    """Stage 1 with the scalar fallback (an old bone's direction where a step lands on its joint) on
    ``(rows + targets, 3, k)`` joints and targets ``x``; returns the ``(rows, 3, k)`` stage-1 points."""
    q = np.empty((plan.size, 3, x.shape[2]))
    for j, t in plan.targets:
        q[j] = x[t]
    for j, kids, total in plan.inward:
        acc = None
        for c, length, wc in kids:
            d = x[j] - q[c]
            l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            small = l2 < TINY2
            if small.any():  # keep the old bone's direction
                d = np.where(small, x[j] - x[c], d)
                l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            v = q[c] + d * (length / np.sqrt(l2))
            if wc != 1.0:
                v = v * wc
            acc = v if acc is None else acc + v
        assert acc is not None
        q[j] = acc if total == 1.0 else acc / total
    return q


def _careful_stage2(plan: TreePlan, x: np.ndarray, q: np.ndarray) -> None:
    """Stage 2 with the scalar fallbacks (the stage-1 bone's direction, or else the rest bone's) on
    ``(rows + targets, 3, k)`` joints ``x`` (in place) and stage-1 points ``q``."""
    for j, p, length, bone in plan.outward:
        d = q[j] - x[p]
        l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        small = l2 < TINY2
        if small.any():
            a = q[j] - q[p]
            l2a = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
            rx, ry, rz = bone
            tiny = l2a < TINY2
            d = np.where(small, np.where(tiny, np.array(bone)[:, None], a), d)
            l2 = np.where(small, np.where(tiny, rx * rx + ry * ry + rz * rz, l2a), l2)
        x[j] = x[p] + d * (length / np.sqrt(l2))
