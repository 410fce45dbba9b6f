"""``chain.run_chain`` vectorised over a batch of chains (internal to ``fabrik3d.batch``).

Every step mirrors the scalar code operation by operation (the same additions
in the same order, no fused operations), so each chain's result equals
``run_chain`` on it bit for bit, iterations included.

Layout and bookkeeping, chosen for speed (numpy's per-call cost is about 1 us,
an element operation about 0.5 ns):

* a batch of chains is one ``(L, 3, B)`` array: joint, coordinate, problem, so
  a joint's coordinates are one ``(3, m)`` block and one ufunc call treats x, y
  and z of every live problem;
* the live problems occupy the first ``m`` columns of preallocated work arrays,
  updated in place (``out=``); a problem that stops is written out and its
  column refilled from the tail (swap-remove: the cost is that of the stopped
  columns, not of the whole set), or, once at most ``SMALL`` are live, the live
  columns are copied into a contiguous block (numpy's calls on small strided
  views cost twice as much); stopped problems cost nothing (``LiveColumns``,
  shared with the tree kernel);
* the landing-on-a-joint test of each reach (``l2 < TINY2``) is one reduction
  per stage over the stored squared lengths; a stage that has such a column is
  redone for those columns only, with the scalar fallback (``_careful_*``);
* the last few chains (fewer than ``TAIL``) continue in the scalar
  ``run_chain`` from where they are, where numpy's per-call cost exceeds the
  scalar loop's; a chain that stalls lying straight on its target's line (the
  rare case ``chain._bend_if_straight`` bends) is re-solved by ``run_chain``
  from its start. Both give the scalar result by construction.
"""

from __future__ import annotations

import math

import numpy as np

from fabrik3d.rotations import TINY2
from fabrik3d.solver.chain import MAX_BENDS, STRAIGHT, run_chain, stalled

# With fewer live chains than this, the scalar run_chain finishes them (each numpy call costs ~1 us).
TAIL = 16
# With at most this many live chains, the work arrays are compacted into contiguous blocks rather than
# refilled in place: numpy calls on small strided views cost about twice as much, more than the copy.
SMALL = 512


def solve_chains(
    start: np.ndarray, lengths: list[float], target: np.ndarray, tol: float, max_it: int, out: np.ndarray
) -> np.ndarray:
    """``run_chain`` on ``B`` chains; writes the solved chains to ``out``; returns iterations ``(B,)``.

    Args:
        start: ``(L, 3, B)`` start poses, or ``(L, 3, 1)`` shared by all (not modified).
        lengths: ``lengths[i]`` is the bone from joint ``i`` to ``i + 1``.
        target: ``(3, B)`` targets.
        out: ``(B, L, 3)`` (a view is fine) for the results: problem, joint, coordinate.
    """
    bsize = target.shape[1]
    last = start.shape[0] - 1
    iterations = np.zeros(bsize, dtype=np.int64)
    base = start[0]
    dist = _norm(target - base)
    far = dist > sum(lengths)
    err = _norm(start[last] - target)
    still = ~far & ~(err > tol)  # reached at the start: the start pose, 0 iterations
    if still.any():
        out[still] = np.broadcast_to(start, (last + 1, 3, bsize))[:, :, still].transpose(2, 0, 1)
    if far.any():  # unreachable: straighten toward the target in one step
        u = (target - base)[:, far] / dist[far]
        p = np.broadcast_to(base, (3, bsize))[:, far]
        rows = out[far]
        rows[:, 0] = p.T
        for i in range(last):
            p = p + u * lengths[i]
            rows[:, i + 1] = p.T
        out[far] = rows
        iterations[far] = 1
    live = np.flatnonzero(~far & (err > tol))
    if live.size >= TAIL:
        with np.errstate(divide="ignore", invalid="ignore"):  # a step landing on a joint is redone, carefully
            _Live(start, live, target, err[live], lengths, out).run(iterations, tol, max_it)
    else:
        joints = np.broadcast_to(start, (last + 1, 3, bsize))[:, :, live]
        _finish_scalar(out, live, joints, target, lengths, iterations, 0, tol, max_it)
    return iterations


class LiveColumns:
    """Work arrays whose first ``m`` columns are the live problems (the chain and tree kernels' base).

    ``a`` is ``(rows, 3, M)``: each problem's state, moved as one column; ``err`` and ``probs`` are
    each column's error and problem index. ``a`` lives in one of two flat buffers, the other taking
    its compacted copies.
    """

    def __init__(self, rows: int, live: np.ndarray, err: np.ndarray) -> None:
        size = live.size
        self.bufs = [np.empty(rows * 3 * size), np.empty(rows * 3 * min(size, SMALL))]
        self.at = 0
        self.a = self.bufs[0].reshape(rows, 3, size)
        self.err, self.probs, self.m = err, live, size

    def compact(self, stop: np.ndarray, cols: np.ndarray) -> None:
        """Drop the stopped columns (``stop``: ``(m,)`` mask, ``cols``: its indices), already written out."""
        m = self.m - cols.size
        if m <= SMALL:  # copy the live columns into a contiguous block (numpy's fast path)
            keep = np.flatnonzero(~stop)
            self.at = 1 - self.at
            rows = self.a.shape[0]
            block = self.bufs[self.at][: rows * 3 * m].reshape(rows, 3, m)
            np.take(self.a[:, :, : self.m], keep, axis=2, out=block, mode="clip")
            self.a = block
            self.err, self.probs = self.err[keep], self.probs[keep]
        else:  # refill the stopped columns below m by live ones above (moves only the stopped)
            holes = cols[: np.searchsorted(cols, m)]
            if holes.size:
                fillers = np.flatnonzero(~stop[m:]) + m
                self.a[:, :, holes] = self.a[:, :, fillers]
                self.err[holes] = self.err[fillers]
                self.probs[holes] = self.probs[fillers]
        self.m = m


def blocks(buf: np.ndarray, *shape: int) -> np.ndarray:
    """The start of the flat scratch ``buf`` viewed as a contiguous array of ``shape``."""
    return buf[: math.prod(shape)].reshape(shape)


class _Live(LiveColumns):
    """The live chains and the iteration on them.

    ``a`` is ``(L + 1, 3, M)``: the ``L`` joints of each live chain and, as a last row, its target,
    so that moving a column moves both.
    """

    def __init__(
        self, start: np.ndarray, live: np.ndarray, target: np.ndarray, err: np.ndarray, lengths: list, out: np.ndarray
    ) -> None:
        self.start, self.out, self.target_all, self.lengths = start, out, target, lengths
        self.last = last = start.shape[0] - 1  # the effector's index
        size = live.size
        super().__init__(last + 2, live, err)
        self.a[: last + 1] = start if start.shape[2] == 1 else start[:, :, live]
        self.a[last + 1] = target[:, live]
        # Scratch, viewed as contiguous blocks for the first m columns: stage-1 joints (L, 3, m), squared
        # step lengths (L, m), and (3, m), (3, m), (m,), (m,) temporaries.
        self.w = np.empty((last + 1) * 3 * size)
        self.l2 = np.empty((last + 1) * size)
        self.d = np.empty(3 * size)
        self.sq = np.empty(3 * size)
        self.s = np.empty(size)
        self.new = np.empty(size)
        self.viewed = -1

    def views(self) -> None:
        """Views of the first ``m`` columns (rebuilt when ``m`` changes)."""
        m = self.m
        if m == self.viewed:
            return
        self.viewed = m
        rows = self.last + 1
        self.A = list(self.a[:, :, :m])  # joints, then the target
        self.w_m = blocks(self.w, rows, 3, m)
        self.W = list(self.w_m)
        self.W[-1] = self.A[-1]  # the effector's stage-1 point is the target
        self.l2_m = blocks(self.l2, rows, m)
        self.L2 = list(self.l2_m)
        self.D, self.SQ = blocks(self.d, 3, m), blocks(self.sq, 3, m)
        self.S, self.NEW = self.s[:m], self.new[:m]

    def run(self, iterations: np.ndarray, tol: float, max_it: int) -> None:
        last = self.last
        sub, mul, add = np.subtract, np.multiply, np.add
        it = 0
        while self.m >= TAIL and it < max_it:
            it += 1
            self.views()
            self.stage1()
            self.stage2()
            new, d, sq = self.NEW, self.D, self.SQ
            sub(self.A[last], self.A[last + 1], out=d)
            mul(d, d, out=sq)
            add(sq[0], sq[1], out=new)
            add(new, sq[2], out=new)
            np.sqrt(new, out=new)
            err = self.err[: self.m]
            done = new <= tol
            stall = stalled(err, new, tol)
            np.copyto(err, new)
            stop = done | stall if it < max_it else np.ones(self.m, dtype=bool)
            if stop.any():
                self.drop(stop, stall & ~done, iterations, it, tol, max_it)
        m = self.m
        joints = self.a[: last + 1, :, :m]
        _finish_scalar(self.out, self.probs[:m], joints, self.target_all, self.lengths, iterations, it, tol, max_it)

    def stage1(self) -> None:
        """Forward reaching: effector onto the target, then inward (joints 1 and up; joint 0's stage-1
        point is only needed by a degenerate stage 2, which computes it)."""
        A, W, L2, d, sq, s, lengths, last = self.A, self.W, self.L2, self.D, self.SQ, self.S, self.lengths, self.last
        sub, mul, add, sqrt, div = np.subtract, np.multiply, np.add, np.sqrt, np.divide
        sq0, sq1, sq2 = sq
        p = W[last]
        for i in range(last - 1, 0, -1):
            l2 = L2[i]
            sub(A[i], p, out=d)
            mul(d, d, out=sq)
            add(sq0, sq1, out=l2)
            add(l2, sq2, out=l2)
            sqrt(l2, out=s)
            div(lengths[i], s, out=s)
            mul(d, s, out=d)
            p = add(p, d, out=W[i])
        if last > 1 and not self.l2_m[1:last].min() >= TINY2:  # NaN too
            cols = np.flatnonzero(~np.all(self.l2_m[1:last] >= TINY2, axis=0))
            self.w_m[:last, :, cols] = _careful_stage1(self.a[:, :, cols], lengths)[:last]

    def stage2(self) -> None:
        """Backward reaching: the base stays (``A[0]`` never changes), then outward."""
        A, W, L2, d, sq, s, lengths, last = self.A, self.W, self.L2, self.D, self.SQ, self.S, self.lengths, self.last
        sub, mul, add, sqrt, div = np.subtract, np.multiply, np.add, np.sqrt, np.divide
        sq0, sq1, sq2 = sq
        # Joint 1 first: where it lands on the base, the scalar code needs joint 0's stage-1 point,
        # which needs joint 1's old position, about to be overwritten.
        l2 = L2[1]
        sub(W[1], A[0], out=d)
        mul(d, d, out=sq)
        add(sq0, sq1, out=l2)
        add(l2, sq2, out=l2)
        fix = None
        if not l2.min() >= TINY2:
            cols = np.flatnonzero(~(l2 >= TINY2))
            fix = (cols, _careful_reach(self.a[0][:, cols], W[1][:, cols], self.a[1][:, cols], lengths[0]))
        p = A[0]
        for i in range(1, last + 1):
            if i > 1:
                l2 = L2[i]
                sub(W[i], p, out=d)
                mul(d, d, out=sq)
                add(sq0, sq1, out=l2)
                add(l2, sq2, out=l2)
            sqrt(l2, out=s)
            div(lengths[i - 1], s, out=s)
            mul(d, s, out=d)
            p = add(p, d, out=A[i])
        if fix is not None or not self.l2_m[1:].min() >= TINY2:
            cols = np.flatnonzero(~np.all(self.l2_m[1:] >= TINY2, axis=0))
            w = self.w_m[:, :, cols]
            w[last] = self.a[last + 1][:, cols]
            w[0] = np.nan  # used only where joint 1 lands on the base
            if fix is not None:
                w[0][:, np.searchsorted(cols, fix[0])] = fix[1]
            self.a[: last + 1, :, cols] = _careful_stage2(self.a[: last + 1, :, cols], w, lengths)

    def drop(
        self, stop: np.ndarray, stalled: np.ndarray, iterations: np.ndarray, it: int, tol: float, max_it: int
    ) -> None:
        """Write out the stopped columns (``stop``, ``(m,)``) and refill them from the tail."""
        last = self.last
        cols = np.flatnonzero(stop)
        done = cols
        if MAX_BENDS > 0 and stalled.any():
            k = np.flatnonzero(stalled)
            rerun = k[_straight(self.a[: last + 1, :, k], self.a[last + 1][:, k], sum(self.lengths))]
            if rerun.size:
                done = np.setdiff1d(cols, rerun, assume_unique=True)
                for b in self.probs[rerun].tolist():  # the scalar chain, which bends, from the start
                    xs, ys, zs = self.start[:, :, b if self.start.shape[2] > 1 else 0].T.tolist()
                    target = self.target_all[:, b].tolist()
                    iterations[b], _ = run_chain(xs, ys, zs, self.lengths, target, tol, max_it)
                    self.out[b] = np.array([xs, ys, zs]).T
        probs = self.probs[done]
        self.out[probs] = self.a[: last + 1, :, done].transpose(2, 0, 1)
        iterations[probs] = it
        self.compact(stop, cols)


def _finish_scalar(
    out: np.ndarray,
    probs: np.ndarray,
    joints: np.ndarray,
    target: np.ndarray,
    lengths: list[float],
    iterations: np.ndarray,
    it: int,
    tol: float,
    max_it: int,
) -> None:
    """The scalar ``run_chain`` continues problems ``probs`` from ``joints`` (``(L, 3, k)``) after ``it``
    iterations; writes them to ``out`` (``(B, L, 3)``)."""
    for k, b in enumerate(probs.tolist()):
        xs, ys, zs = joints[:, :, k].T.tolist()
        more, _ = run_chain(xs, ys, zs, lengths, target[:, b].tolist(), tol, max_it - it)
        out[b] = np.array([xs, ys, zs]).T
        iterations[b] = it + more


def _norm(v: np.ndarray) -> np.ndarray:
    """Lengths of the columns of ``(3, m)`` vectors, summed as ``x*x + y*y + z*z`` like the scalar code."""
    sq = v * v
    return np.sqrt(sq[0] + sq[1] + sq[2])


def _careful_reach(c: np.ndarray, p: np.ndarray, old: np.ndarray, length: float) -> np.ndarray:
    """``p + (c - p) * (length / |c - p|)`` on ``(3, k)`` points; ``c - old`` where ``c`` lies on ``p``."""
    d = c - p
    l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    small = l2 < TINY2
    if small.any():  # landed on the joint: keep the old bone's direction
        d = np.where(small, c - old, d)
        l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return p + d * (length / np.sqrt(l2))


def _careful_stage1(a: np.ndarray, lengths: list[float]) -> np.ndarray:
    """Stage 1 of ``run_chain`` on ``(L + 1, 3, k)`` joints and targets ``a``: the ``(L, 3, k)`` stage-1
    joints (joint 0's left unset)."""
    last = a.shape[0] - 2
    w = np.empty_like(a[:-1])
    w[last] = a[last + 1]
    for i in range(last - 1, 0, -1):
        w[i] = _careful_reach(a[i], w[i + 1], a[i + 1], lengths[i])
    return w


def _careful_stage2(a: np.ndarray, w: np.ndarray, lengths: list[float]) -> np.ndarray:
    """Stage 2 of ``run_chain``: ``(L, 3, k)`` joints from the base ``a[0]`` and stage-1 joints ``w``."""
    out = a.copy()
    for i in range(1, a.shape[0]):
        out[i] = _careful_reach(w[i], out[i - 1], w[i - 1], lengths[i - 1])
    return out


def _straight(joints: np.ndarray, t: np.ndarray, scale: float) -> np.ndarray:
    """``chain._bend_if_straight``'s test (without the bend) for ``(L, 3, k)`` chains and ``(3, k)`` targets."""
    n, _, k = joints.shape
    if n < 3:
        return np.zeros(k, dtype=bool)
    b = joints[0]
    sq = (joints[1:] - b) ** 2
    far = np.argmax(sq[:, 0] + sq[:, 1] + sq[:, 2], axis=0) + 1
    u = joints[far, :, np.arange(k)].T - b
    n2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    ok = n2 >= TINY2
    with np.errstate(invalid="ignore", divide="ignore"):
        u = u / np.sqrt(n2)
    r = np.concatenate([joints, t[None]]) - b
    along = r[:, 0] * u[0] + r[:, 1] * u[1] + r[:, 2] * u[2]
    off = (r - along[:, None, :] * u) ** 2
    return ok & ~np.any(off[:, 0] + off[:, 1] + off[:, 2] > (STRAIGHT * scale) ** 2, axis=0)
