"""The compiled reaching passes' driver: the constrained solve's stage 1 and stage 2 with joint limits
(``fabrik3d.batch.kernels_passes``) on the numpy twins' batch values, for ``solve_batch``'s ``backend="cpu"``.

``BatchLimited`` (``fabrik3d.batch.constrained``) takes a ``CompiledPasses`` where its rig and targets are
covered (``CompiledPasses.make``: swing limits that are cones, elliptical cones or hinges, twist limits,
rolling joints, ``Rigid`` joints, a root orientation, target positions and orientations; ``None``
otherwise) and hands it each iteration's passes (``reach``), the start's projections (``project``) and
the damped steps' rows (``rows``: turning axes, Jacobian, residuals) and turns (``turn``); the step itself
(numpy's linear algebra, where the scalar solve has it), the restarts' random aims, the poles and the
bookkeeping stay with the numpy twins. The floats are the scalar ones bit for bit either way, so the
backend changes the time only, never a result.

A pose is a list of batch vectors (tuples of three ``(m,)`` arrays, or ``None`` for a joint the solve
does not move), frames lists of batch quaternions; here they are stacked into ``(n, 3, m)`` and
``(n, 4, m)`` arrays for the kernel and the results handed back as views of its output arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch import compiled
from fabrik3d.batch.backends import BLOCKS_PER_THREAD
from fabrik3d.batch.kernels_joints import rig_arrays
from fabrik3d.batch.kernels_passes import plan_arrays
from fabrik3d.solver.constrained.plan import LimitedPlan
from fabrik3d.solver.rig import Rig


class CompiledPasses:
    """Stage 1 and stage 2 of one rig, plan and set of targeted effectors, compiled (see the module
    docstring); ``make`` builds one where they are covered."""

    def __init__(self, r: Rig, plan: LimitedPlan, effectors: list[int], rig: tuple[Any, ...]) -> None:
        n = len(r.parents)
        self.r, self.n, self.rig, self.effectors = r, n, rig, effectors
        # joints a rigid parent places (in the numpy passes they get a position, active or not)
        self.placed = [p >= 0 and r.rigid[p] for p in r.parents]
        self.goal_of = np.full(n, -1, dtype=np.int64)
        for t, e in enumerate(effectors):
            self.goal_of[e] = t
        every = [[(c, 1.0) for c in r.children[j]] for j in range(n)]
        # per pass: its plan (down, up), the rigid joints Horn's method fits there (three or more kids) with
        # those kids, and the plan as the kernel's arrays
        self.reaching = (
            plan.down,
            plan.up,
            self._fitted(plan.kids),
            plan_arrays(plan.up, plan.down, plan.active, plan.kids),
        )
        self.every = ([], r.order, self._fitted(every), plan_arrays(r.order, [], [True] * n, every))
        self.turnable = np.asarray(plan.turnable, dtype=np.int64)
        self.up = np.asarray(plan.up, dtype=np.int64)
        self.run = compiled.cpu("passes")
        self.run_rows = compiled.cpu("rows")
        self.run_turns = compiled.cpu("turns")
        self.run_fit_matrix, self.run_fit_finish = compiled.cpu("fit_matrix"), compiled.cpu("fit_finish")
        self.damped: tuple[np.ndarray, ...] | None = None  # (the rows kernel's plan, from the first step's host)

    def _fitted(self, kids: list[list[tuple[int, float]]]) -> dict[int, list[tuple[int, float]]]:
        """The rigid joints (not the root) with three or more of ``kids``, each with them."""
        r = self.r
        return {j: kids[j] for j in range(self.n) if r.rigid[j] and r.parents[j] >= 0 and len(kids[j]) >= 3}

    @classmethod
    def make(
        cls, r: Rig, plan: LimitedPlan, effectors: list[int], root_frame: rot.Quat | None
    ) -> CompiledPasses | None:
        """The compiled passes of rig ``r``'s ``plan`` toward ``effectors`` (the targets' order) with the
        root's fixed frame ``root_frame`` (or ``None``), or ``None`` where they are not covered."""
        rig = rig_arrays(r, plan, root_frame)
        return None if rig is None else cls(r, plan, effectors, rig)

    def reach(self, host: Any, pose: list[Any], frames: list[Any], start: list[Any]) -> tuple[list[Any], list[Any]]:
        """Stage 1 toward the targets of ``host`` (the ``BatchPasses`` calling), then stage 2 from ``start``: the
        new pose and frames (``None`` where ``pose`` has ``None``)."""
        m = _problems(pose)
        return self._passes(host, True, pose, frames, start, self.targets(host, m), self.reaching, m)

    def project(self, host: Any, pose: list[Any], frames: list[Any]) -> tuple[list[Any], list[Any]]:
        """``LimitedSolve.project``: stage 2 of every joint toward ``pose`` itself."""
        m = _problems(pose)
        return self._passes(host, False, pose, frames, pose, np.empty((0, 3, m)), self.every, m)

    def targets(self, host: Any, m: int) -> np.ndarray:
        """The target positions of ``host`` as the kernels read them: ``(t, 3, m)``, ``effectors``' order."""
        targets = np.empty((len(self.effectors), 3, m))
        for t, e in enumerate(self.effectors):
            for i, x in enumerate(host.goal_positions[e]):
                targets[t, i] = x
        return targets

    def aims(self, host: Any, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The orientation targets of ``host`` as the kernels read them: ``(t, 4, m)`` (zeros where a target
        has none), where they are ``(t,)``, their weights ``(t,)`` and the yield shares ``(m,)``."""
        turns = np.zeros((len(self.effectors), 4, m))
        aimed = np.zeros(len(self.effectors), dtype=np.bool_)
        weights = np.zeros(len(self.effectors))
        for t, e in enumerate(self.effectors):
            aim = host.goal_orientations.get(e)
            if aim is not None:
                aimed[t], weights[t] = True, aim[1]
                for i, x in enumerate(aim[0]):
                    turns[t, i] = x
        shares = np.array(np.broadcast_to(np.asarray(host.yield_share, dtype=float), (m,)))
        return turns, aimed, weights, shares

    def rows(self, host: Any, pose: list[Any], frames: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
        """``BatchDampedSteps.position_rows`` compiled: the damped step's turning axes ``u`` ``(m, columns, 3)``,
        its Jacobian's rows of the target positions ``(m, 3 goals, columns)`` and their residuals ``(m, 3
        goals)`` for the targets of ``host`` (an orientation target's rows are numpy's), and the pose and frames
        stacked, for ``turn``."""
        m = _problems(pose)
        goals = self.effectors  # (``host.goal_positions``' order, as ``host.above``'s)
        if self.damped is None:
            at = np.cumsum([0] + [len(a) for a in host.above], dtype=np.int64)
            above = np.concatenate([np.asarray(a, dtype=np.int64) for a in host.above] + [np.zeros(0, np.int64)])
            self.damped = (
                self.turnable,
                np.asarray(host.starts, dtype=np.int64),
                np.asarray(goals, dtype=np.int64),
                at,
                above,
                np.asarray(host.cols, dtype=np.int64),
            )
        given, given_frames = _stack(pose, 3, m), _stack(frames, 4, m)
        columns = len(host.cols)
        u, jac, err = np.empty((m, columns, 3)), np.zeros((m, 3 * len(goals), columns)), np.empty((m, 3 * len(goals)))
        args = (given, given_frames, self.targets(host, m), *self.damped, u, jac, err)
        self.run_rows(_blocks(m), m, (*args, *self.rig))
        return u, jac, err, (given, given_frames)

    def turn(
        self, host: Any, spin: np.ndarray, pose: list[Any], frames: list[Any], stacked: Any = None
    ) -> tuple[list[Any], list[Any]]:
        """``DampedSteps.turn``: each turning joint turned by its world rotation vector in ``spin``
        (``(m, turnable, 3)``, radians, ``damped.joint_turns``'), limited, and the pose rebuilt, the targeted
        leaves turned toward the orientation targets of ``host`` (``stacked``: the pose and frames as ``rows``
        stacked them)."""
        m = len(spin)
        given, given_frames = (_stack(pose, 3, m), _stack(frames, 4, m)) if stacked is None else stacked
        out, out_frames = np.empty((self.n, 3, m)), np.empty((self.n, 4, m))
        turns, aimed, _, _ = self.aims(host, m)
        args = (np.ascontiguousarray(spin), given, given_frames, out, out_frames, self.turnable, self.up, self.goal_of)
        self.run_turns(_blocks(m), m, (*args, turns, aimed, *self.rig))
        return _unstack(out, pose), _unstack(out_frames, frames)

    def _passes(
        self,
        host: Any,
        reach: bool,
        pose: list[Any],
        frames: list[Any],
        start: list[Any],
        targets: np.ndarray,
        plan: tuple[Any, ...],
        m: int,
    ) -> tuple[list[Any], list[Any]]:
        """The passes in segments around the rigid joints with three or more kids, which ``_fit`` fits
        between them (``kernels_rigid`` around numpy's ``eigh``: Horn's eigenvector stays the scalar solve's
        LAPACK call)."""
        down, up, fitted, arrays = plan
        given, given_frames, given_start = _stack(pose, 3, m), _stack(frames, 4, m), _stack(start, 3, m)
        aims = self.aims(host, m)
        q, qf = given.copy(), given_frames.copy()  # stage 1's points and frames
        out, out_frames = np.empty_like(given), given_frames.copy()  # stage 2's (from q, below)

        def launch(segments: tuple[int, int, int, int]) -> None:
            if segments[1] == segments[0] and segments[3] == segments[2]:
                return  # (two fitted joints in a row: no kernel's segment between them)
            args = (np.array(segments, dtype=np.int64), given, given_frames, given_start, targets, self.goal_of, *aims)
            self.run(_blocks(m), m, (*args, q, qf, out, out_frames, *arrays, *self.rig))

        lo = 0
        for i in [i for i, j in enumerate(down) if j in fitted] + [len(down)] * reach:
            launch((lo, i, 0, 0))
            if i < len(down):
                j = down[i]
                self._fit(j, True, q, given, given_frames, q, qf, fitted[j])
            lo = i + 1
        out[:] = q
        out[self.r.order[0]] = given_start[self.r.order[0]]
        lo = 0
        for i in [i for i, j in enumerate(up) if j in fitted] + [len(up)]:
            launch((0, 0, lo, i))
            if i < len(up):
                j = up[i]
                self._fit(j, False, q, out, given_frames, out, out_frames, fitted[j])
            lo = i + 1
        return _unstack(out, pose, self.placed), _unstack(out_frames, frames)

    def _fit(
        self,
        j: int,
        stage1: bool,
        q: np.ndarray,
        pose: np.ndarray,
        frames: np.ndarray,
        out_pose: np.ndarray,
        out_frames: np.ndarray,
        kids: list[tuple[int, float]],
    ) -> None:
        """Rigid joint ``j`` fitted to its three or more ``kids``' points ``q`` by Horn's method
        (``kernels_rigid``), ``eigh`` numpy's as in the scalar solve: stage 1 (``pose`` the pass's, ``frames``
        its frames; into ``out_pose`` and ``out_frames``, the stage-1 points and frames) or stage 2 (``pose``
        and ``out_pose`` the new pose, ``out_frames`` the new frames; ``frames`` the pass's, the fit's
        fallback). ``BatchPasses.rigid_stage1`` and ``place_rigid`` are the numpy twins."""
        m = q.shape[2]
        kid_idx = np.array([c for c, _ in kids], dtype=np.int64)
        kid_w = np.array([w for _, w in kids], dtype=float)
        matrix = np.empty((m, 4, 4))
        self.run_fit_matrix(_blocks(m), m, (j, stage1, q, pose, kid_idx, kid_w, matrix, *self.rig))
        vals, vecs = np.linalg.eigh(matrix)
        args = (j, stage1, vals, vecs, q, frames, out_pose, out_frames, kid_idx, kid_w)
        self.run_fit_finish(_blocks(m), m, (*args, *self.rig))


def _blocks(m: int) -> int:
    """Blocks of problems for the CPU runner: ``BLOCKS_PER_THREAD`` per thread, at most one a problem."""
    import numba

    return max(1, min(m, numba.get_num_threads() * BLOCKS_PER_THREAD))


def _problems(pose: list[Any]) -> int:
    """The number of problems of a pose (its longest coordinate array)."""
    return max((np.size(x) for v in pose if v is not None for x in v), default=1)


def _stack(seq: list[Any], width: int, m: int) -> np.ndarray:
    """A list of batch tuples (``None``: zeros, never read) as one ``(n, width, m)`` array."""
    out = np.zeros((len(seq), width, m))
    for j, v in enumerate(seq):
        if v is not None:
            for i, x in enumerate(v):
                out[j, i] = x
    return out


def _unstack(a: np.ndarray, like: list[Any], placed: list[bool] | None = None) -> list[Any]:
    """``(n, width, m)`` as a list of batch tuples of views, ``None`` where ``like`` has ``None`` (unless
    ``placed``)."""
    width = a.shape[1]
    rows = list(a.reshape(-1, a.shape[2]))  # (the row views, made at C speed)
    return [
        None if v is None and not (placed and placed[j]) else tuple(rows[j * width : (j + 1) * width])
        for j, v in enumerate(like)
    ]
