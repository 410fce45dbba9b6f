"""Issue 50's design question: the natural layer as ONE optimisation, measured against today's solver.

A prototype, not a library module: a damped, weighted least-squares pose solver (Levenberg-Marquardt
on a Gauss-Newton model, analytic Jacobians in numpy) over the humanoid preset's joint rotations and
its root translation, compared with ``fabrik3d.solve`` on issue 50's bars as
benchmarks/bench_whole_body.py measures them (its ``Column`` is reused, only its ``solve`` swapped).

**Units and axes**: metres, radians inside (degrees in the table), Y up, the humanoid faces +Z.

**Variables** (63 for the humanoid): a rotation vector per core joint with a bone (20 joints: pelvis,
spine, chest, neck, clavicles, arms, legs; each step turns the joint's local rotation by
``exp(delta)`` in its own frame) and the root's translation (3). The leaves' local rotations (head,
hands, toes) and the fingers (riders) are kept from the start pose: the fingers ride on the hand.

**Residuals** (one least-squares sum, each term a weight times a residual; rotations in radians and
translations in metres share one scale, 1 rad ~ 1 m, the body's height):

* ``W_HARD * (p_e - target)`` for each target; the free feet (toes without a target) are held where
  they start with the same weight: the ground holds a foot that nothing lifts;
* ``W_START * log(L_start^-1 L)`` per joint and ``W_START * (root - root_start)``: stay near the start
  pose (the previous frame; cold: the rest pose);
* ``W_RELAX * stiffness * log(L_relax^-1 L)``: stiff joints near the relaxed pose (``relax_to``, else
  rest), ``skeleton.posing.stiffness``;
* ``W_HANG * (u - down)`` for each bone of a free hanging limb (``Posing.hang`` effectors without a
  target, the limb of ``fabrik3d.solver.hang.limb_of``: upper arm and forearm), ``u`` its unit direction;
* ``W_HARD * max(0, m - d)``, ``d`` the centre of mass's ground shadow's distance inside the support
  area (``fabrik3d.model.mass``) of the feet's footprint (the soles as if flat on the ground: the
  area the body stands on, re-read at every iteration, held fixed within a step), ``m = COM_MARGIN``
  with ``balance`` and 0 without: always on, since without it the least-squares answer to a low reach
  lunges forward off the feet (pelvis 0.4-0.75 m forward, tried with seed 7) -- nothing else in the
  sum tells a leaning body from a falling one;
* with ``floor``: ``W_HARD * max(0, floor - y_j)`` for every core joint;
* with ``look_at``: ``W_HANG * (face - unit(point - head))`` (the face's axis, ``R_head R0_head^-1 Z``).

**Joint limits**: a projection, not a penalty: after every step each joint's turn is clamped onto its
own limits by the library's ``fabrik3d.solver.fk.clamped_turn`` (cones, elliptical cones, hinges,
twists), and the step is accepted only if the projected pose lowers the sum. The Jacobian goes through
the projection (its derivative, central differences of ``clamped_turn``: 0 across a limit a joint lies
on), so the steps slide along the limits; a penalty (tried first) or a projection the Jacobian does not
know of (tried next) stalled at the knees and elbows, which stand at the end of their hinges' ranges.

**Compared** (same point sets, same seeds, same process): the free arm (p95 angle of the free upper
arm and forearm from straight down; the hand below the shoulder), the starter poses pinned where they
are, low reaches (pelvis pitch >= 20 deg, back >= 3 cm, the hand within 1 cm; with balance the CoM
over the feet), forward reaches with balance (pelvis back >= 1 cm, CoM >= 3 cm inside), the punch's
and the reach beside the body's chest turn, each target's error, NaN, and the time of every solve
(median, p95, worst, ms). The tuning of the constants used seed 7, not the table's (50, the default).

Run: ``python benchmarks/proto_least_squares.py [--quick] [--seed N]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import bench_whole_body as bwb
import common  # (puts tests/ on sys.path)
import numpy as np

import fabrik3d
from fabrik3d.model import mass
from fabrik3d.solver.fk import clamped_turn
from fabrik3d.solver.hang import limb_of
from fabrik3d.solver.look import FORWARD
from fabrik3d.solver.rig import rig

# -- the prototype's tuned constants (every one of them) ------------------------------------------
W_HARD = 1000.0  # targets, free feet held, floor, CoM margin (per metre)
W_START = 0.1  # near the start pose (per radian; per metre for the root)
W_RELAX = 3.0  # near the relaxed pose, times the joint's stiffness (per radian)
W_HANG = 10.0  # a free arm's bones toward straight down; the face toward a look-at point
COM_MARGIN = 0.05  # with balance: the CoM this far inside the support area's edge (m)
LAMBDA_START = 1e-2  # Levenberg-Marquardt damping at the start (times the identity)
LAMBDA_UP = 10.0  # damping up after a rejected step
LAMBDA_DOWN = 3.0  # damping down after an accepted one
MAX_STEPS = 40  # accepted-or-rejected steps per solve
STOP = 1e-3  # stop when an accepted step lowers the sum by less than this share
TUNED = (
    "W_HARD",
    "W_START",
    "W_RELAX",
    "W_HANG",
    "COM_MARGIN",
    "LAMBDA_START",
    "LAMBDA_UP",
    "LAMBDA_DOWN",
    "MAX_STEPS",
    "STOP",
)

DOWN = np.array([0.0, -1.0, 0.0])
Array = np.ndarray


# -- quaternions (x, y, z, w), vectorised ------------------------------------------------------------
def qmul(a: Array, b: Array) -> Array:
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


def qconj(q: Array) -> Array:
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def qmat(q: Array) -> Array:
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def qexp(v: Array) -> Array:
    """Unit quaternions of rotation vectors ``v`` (..., 3)."""
    theta = np.linalg.norm(v, axis=-1, keepdims=True)
    half = 0.5 * theta
    k = np.where(theta > 1e-12, np.sin(half) / np.maximum(theta, 1e-300), 0.5)
    return np.concatenate([v * k, np.cos(half)], axis=-1)


def qlog(q: Array) -> Array:
    """Rotation vectors (..., 3) of unit quaternions (the shorter way round)."""
    q = np.where(q[..., 3:] < 0.0, -q, q)
    s = np.linalg.norm(q[..., :3], axis=-1, keepdims=True)
    theta = 2.0 * np.arctan2(s, q[..., 3:])
    k = np.where(s > 1e-12, theta / np.maximum(s, 1e-300), 2.0)
    return q[..., :3] * k


def log_jacobian(e: Array) -> Array:
    """``d log(A exp(delta)) / d delta`` at ``log(A) = e`` (the inverse right Jacobian of SO(3)), (..., 3, 3)."""
    theta = np.linalg.norm(e, axis=-1)[..., None, None]
    k = np.zeros((*e.shape[:-1], 3, 3))
    k[..., 0, 1], k[..., 0, 2], k[..., 1, 2] = -e[..., 2], e[..., 1], -e[..., 0]
    k = k - np.swapaxes(k, -1, -2)
    t = np.maximum(theta, 1e-9)
    c = np.where(theta > 1e-6, 1.0 / t**2 - (1.0 + np.cos(t)) / (2.0 * t * np.sin(t)), 1.0 / 12.0)
    return np.eye(3) + 0.5 * k + c * (k @ k)


# -- the solver ----------------------------------------------------------------------------------------
class LeastSquares:
    """One damped least-squares pose solve per call (module docstring), ``fabrik3d.solve``'s arguments."""

    def __init__(self, sk: fabrik3d.Skeleton) -> None:
        self.sk, self.r = sk, rig(sk)
        n, riders = len(sk), set(sk.riders)
        self.parents = np.asarray(sk.parents)
        self.rest_local = np.array(self.r.rest_local, dtype=float)
        self.offset = np.array(self.r.offset, dtype=float)
        self.core = [j for j in sk.order if sk.names[j] not in riders]
        self.vars = [j for j in self.core if any(k not in riders for k in sk.children(j))]
        self.nv = 3 * len(self.vars) + 3
        depth = np.zeros(n, dtype=int)
        for j in sk.order[1:]:
            depth[j] = depth[self.parents[j]] + 1
        self.levels = [np.array([j for j in sk.order[1:] if depth[j] == d]) for d in range(1, depth.max() + 1)]
        core = set(self.core)
        self.core_levels = [lv[[j in core for j in lv]] for lv in self.levels]
        self.core_levels = [lv for lv in self.core_levels if len(lv)]
        self.desc = np.zeros((n, n), dtype=bool)  # desc[j, k]: k at or below j
        for j in range(n):
            self.desc[j, self.r.subtree(j)] = True
        self.cidx = np.array(self.core)
        self.vmask = self.desc[np.array(self.vars)][:, self.cidx].astype(float)  # (V, K)
        self.row = {j: k for k, j in enumerate(self.core)}
        # the centre of mass is linear in the joints: com = w @ positions
        self.com_w = np.array([mass.center_of_mass(sk, _unit_row(n, j))[0] for j in range(n)])
        self.stiff = np.array([sk.posing.stiffness.get(sk.names[j], 0.0) for j in self.vars])
        self.limited = [k for k, j in enumerate(self.vars) if sk.names[j] in sk.constraints]
        self.feet = [sk.index(e) for e in sk.end_effectors if sk.index(e) in mass.humanoid_roles(sk).values()]
        self.feet = [e for e in self.feet if sk.names[e].startswith("toe")]
        roles = mass.humanoid_roles(sk)
        self.soles = [roles[k] for k in ("ankle_l", "ankle_r", "toe_l", "toe_r") if k in roles]
        self.head = sk.index("head") if "head" in sk else -1
        if self.head >= 0:
            self.face = qmat(qconj(sk.rest_frames[self.head])) @ np.array(FORWARD)
        self.rest_pose = (sk.rest_positions.copy(), sk.rest_frames.copy())
        self.stance: tuple[Array, Array] | None = None

    # forward kinematics
    def locals_of(self, rotations: Array) -> Array:
        q = np.array(rotations, dtype=float)
        out = q.copy()
        kids = np.array(self.sk.order[1:])
        out[kids] = qmul(qconj(q[self.parents[kids]]), q[kids])
        return out

    def fk_core(self, loc: Array, root: Array) -> tuple[Array, Array]:
        """World matrices and positions of the core joints (rows of the full arrays)."""
        n = len(self.sk)
        m = np.zeros((n, 3, 3))
        p = np.zeros((n, 3))
        rt = self.sk.root
        lm = qmat(loc[self.cidx])
        m[self.cidx] = lm
        p[rt] = root
        for lv in self.core_levels:
            par = self.parents[lv]
            p[lv] = p[par] + np.einsum("kij,kj->ki", m[par], self.offset[lv])
            m[lv] = m[par] @ m[lv]
        return m, p

    def fk_all(self, loc: Array, root: Array) -> tuple[Array, Array]:
        """World quaternions and positions of every joint (the fingers ride)."""
        n = len(self.sk)
        q = np.zeros((n, 4))
        p = np.zeros((n, 3))
        rt = self.sk.root
        q[rt], p[rt] = loc[rt], root
        for lv in self.levels:
            par = self.parents[lv]
            p[lv] = p[par] + np.einsum("kij,kj->ki", qmat(q[par]), self.offset[lv])
            q[lv] = qmul(q[par], loc[lv])
        return q / np.linalg.norm(q, axis=1, keepdims=True), p

    # the least-squares sum
    def residuals(self, s: dict[str, Any], loc: Array, root: Array, jac: bool) -> tuple[Array, Array | None]:
        m, p = self.fk_core(loc, root)
        vars_ = np.array(self.vars)
        rs: list[Array] = []
        js: list[Array] = []
        jp = None
        if jac:  # d p_k / d delta_(v, i) = (R_v e_i) x (p_k - p_v), for k below v; the root moves all
            d = p[self.cidx][None, :, :] - p[vars_][:, None, :]  # (V, K, 3)
            axes = np.swapaxes(m[vars_], 1, 2)  # (V, i, 3)
            c = np.cross(axes[:, None, :, :], d[:, :, None, :]) * self.vmask[:, :, None, None]  # (V, K, i, 3)
            jp = np.zeros((len(self.core), 3, self.nv))
            jp[:, :, :-3] = c.transpose(1, 3, 0, 2).reshape(len(self.core), 3, -1)
            jp[:, :, -3:] = np.eye(3)

        def rows(ks: list[int]) -> Array:
            assert jp is not None
            return jp[[self.row[k] for k in ks]]

        # targets and free feet held: W_HARD (p - goal)
        pts = s["points"]
        if pts:
            ks = list(pts)
            rs.append(W_HARD * (p[ks] - np.array([pts[k] for k in ks])).ravel())
            if jac:
                js.append(W_HARD * rows(ks).reshape(-1, self.nv))
        # near the start, near the relaxed pose (stiffness)
        lv = loc[vars_]
        for ref, w in ((s["start"], W_START * np.ones(len(vars_))), (s["relax"], W_RELAX * self.stiff)):
            keep = w > 0.0
            e = qlog(qmul(qconj(ref[vars_][keep]), lv[keep]))
            rs.append((w[keep, None] * e).ravel())
            if jac:
                blocks = w[keep, None, None] * log_jacobian(e)
                jj = np.zeros((int(keep.sum()), 3, self.nv))
                for row, k in enumerate(np.flatnonzero(keep)):
                    jj[row, :, 3 * k : 3 * k + 3] = blocks[row]
                js.append(jj.reshape(-1, self.nv))
        rs.append(W_START * (root - s["root"]))
        if jac:
            jr = np.zeros((3, self.nv))
            jr[:, -3:] = W_START * np.eye(3)
            js.append(jr)
        # free arms hang: W_HANG (u - down) per bone
        for a, b in s["hang"]:
            length = float(np.linalg.norm(p[b] - p[a]))
            rs.append(W_HANG * ((p[b] - p[a]) / length - DOWN))
            if jac:
                js.append(W_HANG * (rows([b])[0] - rows([a])[0]) / length)
        # floor: W_HARD max(0, floor - y)
        if s["floor"] is not None:
            low = [k for k in self.core if p[k, 1] < s["floor"]]
            if low:
                rs.append(W_HARD * (s["floor"] - p[low, 1]))
                if jac:
                    js.append(-W_HARD * rows(low)[:, 1, :])
        # balance: W_HARD max(0, COM_MARGIN - distance inside the support area)
        if s["balance"] is not None:
            full = np.zeros((len(self.sk), 3))  # the feet's footprint: as if flat on the ground
            full[self.cidx] = p[self.cidx]
            full[self.soles, 1] = self.sk.rest_positions[self.soles, 1] + s["ground"]
            poly = mass.support_area(self.sk, full, s["floor"])
            if len(poly) >= 3:
                com = self.com_w[self.cidx] @ p[self.cidx]
                a, b = poly, np.roll(poly, -1, axis=0)
                edge = b - a
                normal = np.column_stack([-edge[:, 1], edge[:, 0]]) / np.linalg.norm(edge, axis=1)[:, None]
                inside = np.einsum("ij,ij->i", com[[0, 2]] - a, normal)
                i = int(np.argmin(inside))
                short = s["balance"] - inside[i]
                rs.append(np.array([W_HARD * max(0.0, short)]))
                if jac:
                    jc = np.einsum("k,kin->in", self.com_w[self.cidx], jp)
                    grad = -(normal[i, 0] * jc[0] + normal[i, 1] * jc[2]) if short > 0.0 else np.zeros(self.nv)
                    js.append(W_HARD * grad[None, :])
        # look at: W_HANG (face - unit(point - head))
        if s["look"] is not None and self.head >= 0:
            h = self.head
            rh = m[self.parents[h]] @ qmat(loc[h])
            face = rh @ self.face
            want = s["look"] - p[h]
            rs.append(W_HANG * (face - want / np.linalg.norm(want)))
            if jac:
                jf = np.zeros((3, self.nv))
                for k, v in enumerate(self.vars):
                    if self.desc[v, h]:
                        jf[:, 3 * k : 3 * k + 3] = np.cross(m[v].T, face).T
                jh = rows([h])[0]
                want_n = np.linalg.norm(want)
                proj = (np.eye(3) - np.outer(want, want) / want_n**2) / want_n
                js.append(W_HANG * (jf + proj @ jh))
        r = np.concatenate(rs)
        if not jac:
            return r, None
        jm = np.vstack(js)
        # joint limits: the pose is always within them (``project``), so each joint's turn is
        # clamp(T exp(delta)): the chain rule through the projection (its derivative, numeric and
        # central, 0 across a limit it lies on)
        lim = np.array(self.limited)
        turns = qmul(qconj(self.rest_local[vars_]), lv)[lim]
        h = 1e-6
        nudge = qexp(np.concatenate([h * np.eye(3), -h * np.eye(3)]))  # (6, 4)
        nudged = qmul(np.repeat(turns, 6, axis=0), np.tile(nudge, (len(lim), 1)))
        moved = self.past_limits(np.repeat(lim, 6), nudged, np.repeat(turns, 6, axis=0)).reshape(len(lim), 6, 3)
        dk = (moved[:, :3] - moved[:, 3:]) / (2.0 * h)  # (m, axis i, 3): column i of the derivative
        for row, k in enumerate(lim):
            if not np.allclose(dk[row], np.eye(3), atol=1e-5):
                jm[:, 3 * k : 3 * k + 3] = jm[:, 3 * k : 3 * k + 3] @ dk[row].T
        return r, jm

    def past_limits(self, ks: Array, turns: Array, base: Array) -> Array:
        """Rotation vectors (m, 3) from ``base`` (m, 4) to the turns (m, 4) of variable joints ``ks`` clamped
        onto their limits."""
        c = np.array([clamped_turn(self.r, self.vars[k], tuple(t)) for k, t in zip(ks.tolist(), turns.tolist())])
        return qlog(qmul(qconj(base), c))

    def project(self, loc: Array) -> Array:
        """Each variable joint's turn clamped onto its own limits (``fk.clamped_turn``)."""
        out = loc.copy()
        vars_ = np.array(self.vars)
        turns = qmul(qconj(self.rest_local[vars_]), loc[vars_])
        for k in self.limited:
            j = self.vars[k]
            t = clamped_turn(self.r, j, tuple(turns[k].tolist()))  # type: ignore[arg-type]
            out[j] = qmul(self.rest_local[j], np.array(t))
        return out

    def step(self, loc: Array, root: Array, delta: Array) -> tuple[Array, Array]:
        out = loc.copy()
        vars_ = np.array(self.vars)
        out[vars_] = qmul(loc[vars_], qexp(delta[:-3].reshape(-1, 3)))
        out[vars_] /= np.linalg.norm(out[vars_], axis=1, keepdims=True)
        return self.project(out), root + delta[-3:]

    def solve(
        self,
        targets: dict[str, Any],
        *,
        positions: Array | None = None,
        rotations: Array | None = None,
        relax_to: Array | None = None,
        relax_rotations: Array | None = None,
        floor: float | None = None,
        balance: bool = False,
        look_at: dict[str, Any] | None = None,
    ) -> fabrik3d.SolveResult:
        sk = self.sk
        if positions is None or rotations is None:  # cold: from the stance (the solve without targets)
            if self.stance is None and (targets or floor is not None or balance or look_at):
                self.solve({})  # (sets self.stance)
            positions, rotations = self.rest_pose if self.stance is None else self.stance
        if relax_rotations is None:
            relax_rotations = self.rest_pose[1]
        del relax_to  # (the relaxed pose's rotations carry it)
        start = self.project(self.locals_of(rotations))
        root = np.array(positions[sk.root], dtype=float)
        _, p0 = self.fk_core(start, root)
        goals = {sk.index(k): np.asarray(v, dtype=float) for k, v in targets.items()}
        points = dict(goals)
        for f in self.feet:  # a free foot stays where it is
            points.setdefault(f, p0[f].copy())
        hang = []
        for e in sorted(sk.posing.hang):
            if sk.index(e) not in goals:
                limb = limb_of(sk, sk.posing, sk.index(e))
                hang += [(limb[k + 1], limb[k]) for k in range(len(limb) - 1)]
        s = {
            "points": points,
            "start": start,
            "relax": self.locals_of(relax_rotations),
            "root": root.copy(),
            "hang": hang,
            "floor": floor,
            "ground": 0.0 if floor is None else floor - mass.rest_ground(sk),
            "balance": COM_MARGIN if balance else (0.0 if self.feet else None),
            "look": None if not look_at else np.asarray(next(iter(look_at.values())), dtype=float),
        }
        loc, lam, steps = start, LAMBDA_START, 0
        r, jm = self.residuals(s, loc, root, True)
        cost = float(r @ r)
        while steps < MAX_STEPS:
            assert jm is not None
            h, g = jm.T @ jm, jm.T @ r
            diag = np.eye(self.nv)
            improved = False
            while steps < MAX_STEPS:
                steps += 1
                delta = np.linalg.solve(h + lam * diag, -g)
                loc2, root2 = self.step(loc, root, delta)
                r2, _ = self.residuals(s, loc2, root2, False)
                cost2 = float(r2 @ r2)
                if cost2 < cost:
                    improved = True
                    break
                lam *= LAMBDA_UP
            if not improved:
                break
            gain, cost = cost - cost2, cost2
            loc, root, lam = loc2, root2, lam / LAMBDA_DOWN
            if gain < STOP * cost or cost < 1e-12:
                break
            r, jm = self.residuals(s, loc, root, True)
        q, p = self.fk_all(loc, root)
        errors = {sk.names[e]: float(np.linalg.norm(p[e] - t)) for e, t in goals.items()}
        if not targets and positions is self.rest_pose[0] and self.stance is None:
            self.stance = (p, q)
        return fabrik3d.SolveResult(p, q, steps, errors, all(v <= 1e-3 for v in errors.values()))


def _unit_row(n: int, j: int) -> Array:
    out = np.zeros((n, 3))
    out[j, 0] = 1.0
    return out


# -- the comparison --------------------------------------------------------------------------------------
class Timed(bwb.Column):
    """bench_whole_body's measures with ``fn`` in place of ``fabrik3d.solve``, every solve timed."""

    def __init__(self, sk: fabrik3d.Skeleton, fn: Callable[..., fabrik3d.SolveResult]) -> None:
        self.fn = fn
        super().__init__(sk)
        self.rest = fn(sk, {})
        self.times: list[float] = []
        self.errors: list[float] = []

    def solve(self, targets: dict[str, Any], **kw: Any) -> fabrik3d.SolveResult:
        t0 = time.perf_counter()
        r = self.fn(self.sk, targets, **kw)
        self.times.append(1000.0 * (time.perf_counter() - t0))
        self.errors += list(r.errors.values())
        self.solves += 1
        if not (np.isfinite(r.positions).all() and np.isfinite(r.rotations).all()):
            self.bad += 1
        return r


def proto_fn(sk: fabrik3d.Skeleton) -> Callable[..., fabrik3d.SolveResult]:
    solver = LeastSquares(sk)
    return lambda _sk, targets, **kw: solver.solve(targets, **kw)


ROWS: dict[str, tuple[float, str] | None] = {
    **bwb.ROWS,
    "targets: reach error mm p95": None,
    "targets: reach error mm max": None,
    "poses with NaN": (0.0, "<="),
    "time per solve ms median": None,
    "time per solve ms p95": None,
    "time per solve ms worst": None,
}


def measure(col: Timed, sizes: bwb.Sizes, seed: int) -> dict[str, float]:
    out: dict[str, float] = {}
    out.update(col.free_arm(seed, sizes.free_cold, sizes.free_drags))
    out.update(col.starters(sizes.starters))
    out.update(col.low(seed + 2, sizes.low, sizes.low_balance))
    out.update(col.forward(seed + 4, sizes.forward))
    out.update(col.punches(seed + 5, sizes.punches))
    out.update(col.beside(seed + 6, sizes.beside))
    err = np.array(col.errors) * 1000.0
    t = np.array(col.times)
    out.update(
        {
            "targets: reach error mm p95": float(np.percentile(err, 95)),
            "targets: reach error mm max": float(err.max()),
            "poses with NaN": col.bad,
            "time per solve ms median": float(np.median(t)),
            "time per solve ms p95": float(np.percentile(t, 95)),
            "time per solve ms worst": float(t.max()),
        }
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a few samples of each kind (smoke test)")
    parser.add_argument("--seed", type=int, default=50)
    args = parser.parse_args(argv)
    sizes = bwb.QUICK if args.quick else bwb.FULL
    sk = fabrik3d.presets.get("humanoid")
    columns = {"today's solver": Timed(sk, fabrik3d.solve), "least-squares prototype": Timed(sk, proto_fn(sk))}
    results, wall = {}, {}
    for name, col in columns.items():
        t0 = time.perf_counter()
        results[name] = measure(col, sizes, args.seed)
        wall[name] = time.perf_counter() - t0
    title = f"issue 50: the natural layer as one least-squares optimisation vs today's (seed {args.seed})"
    print(title)
    print("=" * len(title))
    for line in common.machine_lines():
        print(line)
    print(
        f"mode    : {'QUICK (a few samples)' if args.quick else 'full'}; free arm {sizes.free_cold} cold + "
        f"{sizes.free_drags} drags, {len(sizes.starters)} starter poses, low reaches "
        f"{sizes.low} (+{sizes.low_balance} balanced), forward {sizes.forward}, punches {sizes.punches}, "
        f"beside {sizes.beside}; the same point sets for both"
    )
    print(f"tuned   : prototype constants {len(TUNED)}: " + ", ".join(f"{k}={globals()[k]:g}" for k in TUNED))
    print()
    table = []
    for row, aim in ROWS.items():
        cells = [bwb.cell(results[name][row], aim, True) for name in columns]
        table.append([row, "" if aim is None else f"{aim[1]} {aim[0]:g}", *cells])
    table.append(["wall time s", "", *(f"{wall[name]:.1f}" for name in columns)])
    table.append(["solves", "", *(str(col.solves) for col in columns.values())])
    print(common.format_table(["measure", "aim", *columns], table))
    print()
    for name in columns:
        aimed = [row for row, aim in ROWS.items() if aim is not None]
        met = sum("MISSED" not in bwb.cell(results[name][row], ROWS[row], True) for row in aimed)
        print(f"{name}: {met} of {len(aimed)} aims met")
    checks = common.Checks()
    for name, col in columns.items():
        print(checks.line(f"{name}: poses finite", col.bad == 0, f"{col.solves - col.bad} of {col.solves} solves"))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
