"""Damped least-squares steps for the constrained solver (``fabrik3d.solver.constrained.solve``).

Where FABRIK's reaching passes fight the joint limits, its progress slows to a
crawl. A damped step moves every turning joint at once: the Jacobian of an
effector's position for a turn about axis ``u`` at joint ``j`` above it is
``u × (P_e − P_j)`` (axes: the hinge axis, two axes across a ball joint's bone,
three for a rigid body); orientation targets add their last bone's direction,
``L (u × d)``. The step ``Jᵀ (J Jᵀ + λ² I)⁻¹ e`` is then limited joint by joint
and the pose rebuilt by forward kinematics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.effort import STEP, TURN
from fabrik3d.solver.limits import clamp_angle

if TYPE_CHECKING:
    from fabrik3d.model.targets import Goal
    from fabrik3d.solver.constrained.plan import LimitedPlan
    from fabrik3d.solver.effort import Effort
    from fabrik3d.solver.rig import Rig

# Twist rows join a damped step once every position is within this many tolerances.
TWIST_NEAR = 5.0
WORLD_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
# Orientation targets count toward reaching until their share has yielded below this.
ORIENTATION_IN_FORCE = 0.1


def joint_turns(jac: np.ndarray, err: np.ndarray, damping: np.ndarray, starts: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Each turning joint's turn vector (radians about its axis) of the damped least-squares step
    ``Jᵀ (J Jᵀ + λ² I)⁻¹ e`` for ``m`` problems at once: ``jac`` ``(m, rows, columns)``, ``err``
    ``(m, rows)``, ``damping`` λ ``(m,)``, ``starts`` ``(turnable,)`` the first column of each
    turning joint (its columns are consecutive), ``u`` the columns' axes ``(m, columns, 3)``;
    returns ``(m, turnable, 3)``. Cost linear in the columns (a dense 0/1 matrix summing the
    columns per joint was quadratic). The scalar solve calls it with ``m = 1``, the batch solve
    (``fabrik3d.batch.constrained.solve``) with all its problems: the same numpy
    calls on each problem's matrices, so the same floats (near-singular ``J Jᵀ`` with a small λ
    would magnify any difference)."""
    step = column_steps(jac, err, damping)
    return np.add.reduceat(step[..., None] * u, starts, axis=1)  # each joint's columns summed, in order


def column_steps(jac: np.ndarray, err: np.ndarray, damping: np.ndarray) -> np.ndarray:
    """The damped least-squares step ``Jᵀ (J Jᵀ + λ² I)⁻¹ e`` per column, ``(m, columns)``, for
    ``joint_turns``' arguments."""
    jt = jac.transpose(0, 2, 1)
    normal = jac @ jt + (damping * damping)[:, None, None] * np.eye(jac.shape[1])
    return (jt @ np.linalg.solve(normal, err[..., None]))[..., 0]


class DampedSteps:
    """Mixin of ``LimitedSolve``: forward kinematics and damped least-squares steps."""

    r: Rig
    plan: LimitedPlan
    goals: dict[int, Goal]
    up: list[int]
    turnable: list[int]
    hinged: list[bool]
    leaf_dir: dict[int, rot.Vec]
    effectors_beneath: dict[int, list[int]]
    yield_share: float
    twists: dict[int, float]  # (``ReachingPasses.carry``)
    tol: float
    effector_frame: Callable[[int, rot.Quat], rot.Quat]  # a leaf's frame from its parent's (``passes``)
    effort: Effort  # (``LimitedSolve``'s)

    def twist_excess(self, e: int, g: Goal, fp: rot.Quat) -> tuple[float | None, rot.Vec]:
        """How far (radians) the twist that ``g``'s orientation asks of effector ``e`` lies beyond
        ``e``'s Twist limit, given its parent's frame ``fp``, and that twist's world axis
        (``None`` without a Twist limit: then any twist is allowed)."""
        r = self.r
        base = rot.mul(fp, r.rest_local[e])
        limit = r.limits[e].twist
        if limit is None or g.orientation is None:
            return None, rot.Y_AXIS
        tau = rot.twist_angle(rot.mul(rot.conj(base), g.orientation), rot.Y_AXIS)
        return tau - clamp_angle(tau, *limit), rot.y_axis(base)

    def forward(
        self, pose: list[rot.Vec], frames: list[rot.Quat], turned: dict[int, rot.Quat]
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Forward kinematics: every active joint keeps its offset and rotation relative to its
        parent, but the ``turned`` joints take their new rotations (relative to the parent)."""
        r = self.r
        parents, children, goals = r.parents, r.children, self.goals
        new_pose, new_frames = list(pose), list(frames)
        # Per joint, the turn of its frame: new frame = moved[p] * old frame for a joint that keeps
        # its rotation relative to its parent p; the bone from p turns with moved[p] too.
        moved: dict[int, rot.Quat] = {}
        for x in self.up:
            p = parents[x]
            if p < 0:
                new_frames[x] = turned.get(x, frames[x])
                moved[x] = rot.mul(new_frames[x], rot.conj(frames[x]))
                continue
            turn = moved[p]
            local = turned.get(x)
            new_frames[x] = rot.mul(turn, frames[x]) if local is None else rot.mul(new_frames[p], local)
            if not children[x]:
                if x in goals:  # an effector takes its orientation target's twist afresh
                    new_frames[x] = self.effector_frame(x, new_frames[p])
            else:
                moved[x] = turn if local is None else rot.mul(new_frames[x], rot.conj(frames[x]))
            new_pose[x] = _add(new_pose[p], rot.rotate(turn, _sub(pose[x], pose[p])))
        return new_pose, new_frames

    def damped_plan(self) -> tuple[list[int], np.ndarray, np.ndarray]:
        """The columns of the damped steps (fixed for the rig and targets, kept in ``plan``): each
        column's joint, a ``(goals, columns)`` mask of the effectors each column moves, and the first
        column of each turning joint (``(turnable,)``; a joint's columns follow one another and
        ``joint_turns`` sums them)."""
        if self.plan.damped is None:
            r = self.r
            widths = [3 if r.rigid[j] else 1 if self.hinged[j] else 2 for j in self.turnable]
            cols = [j for j, w in zip(self.turnable, widths) for _ in range(w)]
            mask = np.array([[e in self.effectors_beneath[j] for j in cols] for e in self.goals], dtype=float)
            starts = np.cumsum([0, *widths[:-1]], dtype=np.intp)
            self.plan.damped = (cols, mask, starts)
        return self.plan.damped

    def turning_axes(self, frames: list[rot.Quat]) -> list[rot.Vec]:
        """The damped step's turning axes (world), column by column: three world axes for a
        rigid body, the hinge axis, or two axes across a ball joint's bone."""
        r = self.r
        axes: list[rot.Vec] = []
        for j in self.turnable:
            if r.rigid[j]:
                axes += WORLD_AXES
            elif self.hinged[j]:
                p = r.parents[j]
                axes.append(rot.rotate(frames[p] if p >= 0 else rot.IDENTITY, r.limits[j].swing.a))  # type: ignore[union-attr]
            else:
                bx, by, bz = rot.y_axis(frames[j])
                ax, ay, az = abs(bx), abs(by), abs(bz)
                # the bone crossed with the world axis least aligned with it
                v = (0.0, bz, -by) if ax <= ay and ax <= az else (-bz, 0.0, bx) if ay <= az else (by, -bx, 0.0)
                n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                vx, vy, vz = v[0] / n, v[1] / n, v[2] / n
                axes += ((vx, vy, vz), (by * vz - bz * vy, bz * vx - bx * vz, bx * vy - by * vx))
        return axes

    def frame_spins(self, frames: list[rot.Quat], axes: list[rot.Vec]) -> list[rot.Vec]:
        """Per column, the turn of its joint's frame when the column turns the joint by its axis
        ``w``: all of it for a rigid body; for a bone, ``w − (d0·w / (1 + d0·d)) d``: the swing-
        from-rest frame's own twist rate (``d`` the bone, ``d0`` its rest direction)."""
        r = self.r
        cols = self.damped_plan()[0]
        spins: list[rot.Vec] = []
        for j, w in zip(cols, axes):
            if r.rigid[j]:
                spins.append(w)
                continue
            p = r.parents[j]
            bone = rot.y_axis(frames[j])
            rest = rot.rotate(frames[p] if p >= 0 else rot.IDENTITY, r.rest_dir[j])
            near = 1.0 + rest[0] * bone[0] + rest[1] * bone[1] + rest[2] * bone[2]
            k = (rest[0] * w[0] + rest[1] * w[1] + rest[2] * w[2]) / near if near > 1e-9 else 0.0
            spins.append(_add(w, bone, -k))
        return spins

    def damped_step(
        self, pose: list[rot.Vec], frames: list[rot.Quat], damping: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """One damped least-squares step on the joints' turns (the Jacobian of the effectors'
        positions is ``u × (P_e − P_j)`` for each turning axis ``u`` of a joint ``j`` above
        ``e``: the hinge axis, two axes across a ball joint's bone, three for a rigid body),
        then each joint's new rotation is limited and the pose rebuilt by forward kinematics. It spends
        ``STEP`` of the solve's effort, and its turns theirs (``fabrik3d.solver.effort``)."""
        r = self.r
        goals = self.goals
        self.effort.spend(STEP)
        cols, mask, starts = self.damped_plan()
        if not cols:
            return self.forward(pose, frames, {})
        axes = self.turning_axes(frames)
        u = np.array(axes)  # (columns, 3)
        moving = np.array([pose[e] for e in goals])[:, None, :] - np.array([pose[j] for j in cols])[None, :, :]
        # Rows: u × (P_e − P_j) where e is beneath the column's joint, else 0.
        ux, uy, uz = u[:, 0], u[:, 1], u[:, 2]
        mx, my, mz = moving[..., 0], moving[..., 1], moving[..., 2]
        crossed = np.stack((uy * mz - uz * my, uz * mx - ux * mz, ux * my - uy * mx), axis=1)  # (goals, 3, columns)
        rows = [np.where(mask[:, None, :] > 0.0, crossed, 0.0).reshape(-1, len(cols))]  # (+0.0 where not beneath)
        err = [c for e, g in goals.items() for c in _sub(g.position, pose[e])]
        # Orientation targets add their last bone's direction, scaled by its length and by the
        # share of their weight still in force: residual L (wanted - current), rows L (u x d);
        # and, with a Twist limit on the effector, the twist it needs beyond that limit: residual
        # -L excess, row -L (spin . axis) (a turn of the parent's frame takes that twist away).
        if self.yield_share > ORIENTATION_IN_FORCE:
            spin_rows = None
            # Twist comes after positions: its rows join once every target is nearly reached.
            near = max(rot.dist(pose[e], g.position) for e, g in goals.items()) <= TWIST_NEAR * self.tol
            for k, (e, g) in enumerate(goals.items()):
                bone = rot.unit(_sub(pose[e], pose[r.parents[e]]))
                if g.orientation is None or bone is None:
                    continue
                scale = g.weight * self.yield_share * r.lengths[e]
                rows.append((scale * np.cross(u, bone) * mask[k][:, None]).T)
                err += [scale * c for c in _sub(rot.rotate(g.orientation, self.leaf_dir[e]), bone)]
                excess, axis = self.twist_excess(e, g, frames[r.parents[e]])
                if excess is not None and near:
                    spin_rows = np.array(self.frame_spins(frames, axes)) if spin_rows is None else spin_rows
                    along = spin_rows[:, 0] * axis[0] + spin_rows[:, 1] * axis[1] + spin_rows[:, 2] * axis[2]
                    rows.append((-scale * along * mask[k])[None])
                    err.append(-scale * excess)
        jac = np.concatenate(rows)
        spin = joint_turns(jac[None], np.array(err)[None], np.array([damping]), starts, u[None])[0].tolist()
        return self.turn(pose, frames, spin)

    def turn(
        self, pose: list[rot.Vec], frames: list[rot.Quat], spin: list[rot.Vec] | list[list[float]]
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Turn each turning joint by its world rotation vector in ``spin`` (radians, at most 0.5),
        its new rotation limited, and rebuild the pose by forward kinematics (``damped_step``'s
        turn: its batch twin, ``BatchDampedSteps.damped_step``, turns its joints alike)."""
        turned: dict[int, rot.Quat] = {}
        for j, w in zip(self.turnable, spin):
            got = self.turned_local(j, frames, w)
            if got is not None:
                turned[j] = got
        return self.forward(pose, frames, turned)

    def turned_local(self, j: int, frames: list[rot.Quat], w: rot.Vec | list[float]) -> rot.Quat | None:
        """Joint ``j``'s rotation relative to its parent's frame once turned by the world rotation
        vector ``w`` (radians, at most 0.5) and limited (``turn``), or ``None`` for no turn. It spends
        ``TURN`` of the solve's effort (``fabrik3d.solver.effort``)."""
        self.effort.spend(TURN)
        r = self.r
        wx, wy, wz = w
        angle = math.sqrt(wx * wx + wy * wy + wz * wz)
        if angle < 1e-15:
            return None
        kx, ky, kz = wx / angle, wy / angle, wz / angle
        angle = min(angle, 0.5)
        p = r.parents[j]
        fp = frames[p] if p >= 0 else rot.IDENTITY
        if r.rigid[j]:
            turn = rot.axis_angle((kx, ky, kz), angle)
            return rot.mul(rot.conj(fp), self.limit_frame(j, fp, rot.mul(turn, frames[j])))
        # The bone turned by the angle about k (Rodrigues), in the parent's frame as the limits are.
        bx, by, bz = rot.y_axis(frames[j])
        c, s = math.cos(angle), math.sin(angle)
        kb = (kx * bx + ky * by + kz * bz) * (1.0 - c)
        local = rot.rotate_inv(
            fp,
            (
                c * bx + s * (ky * bz - kz * by) + kb * kx,
                c * by + s * (kz * bx - kx * bz) + kb * ky,
                c * bz + s * (kx * by - ky * bx) + kb * kz,
            ),
        )
        limit = r.limits[j].swing
        if limit is not None:
            local = limit.project(local, rot.rotate_inv(fp, (bx, by, bz)) if self.hinged[j] else None)
        swung = rot.swing(r.rest_dir[j], local, r.rest_x[j])
        if r.rolls[j]:  # a rolling joint keeps its roll (the step turns its bone only)
            motion = rot.mul(rot.mul(rot.conj(fp), frames[j]), rot.conj(r.rest_local[j]))
            swung = rot.mul(swung, rot.axis_angle(r.rest_dir[j], rot.twist_angle(motion, r.rest_dir[j])))
        elif j in self.twists:  # (a turn about the bone the solve carries: ``ReachingPasses.carry``)
            swung = rot.mul(swung, rot.axis_angle(r.rest_dir[j], self.twists[j]))
        return rot.mul(swung, r.rest_local[j])

    # -- poles and untargeted branches -----------------------------------------------------------
