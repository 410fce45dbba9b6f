"""The compiled backends' kernel sources for the damped least-squares steps of the constrained solve
(``fabrik3d.solver.constrained.damped.DampedSteps``): their rows and their turn, one problem at a time, on
scalars.

``build_rows(jit)`` defines ``block(k, lo, hi, ...)``: for the problems ``lo`` to ``hi - 1``, the step's
turning axes (``DampedSteps.turning_axes``), the Jacobian's rows of the target positions and their residuals
(``DampedSteps.damped_step``'s; an orientation target's rows are numpy's), as
``BatchDampedSteps.position_rows`` lays them out.

``build_turns(jit)`` defines ``block(k, lo, hi, ...)``: for the problems ``lo`` to ``hi - 1``, each turning
joint's new rotation from its world rotation vector (``turned_local``: limited by its swing limit, a rigid
body's by ``limit_frame``), then the pose by forward kinematics (``DampedSteps.forward``), the expressions
in the scalar order, so the floats are the scalar step's and its numpy twin's
(``BatchDampedSteps.damped_step``). The step itself (``damped.joint_turns``: numpy's linear algebra, as the
scalar solve calls it) comes in as ``spin``. Rig constants: ``kernels_joints.rig_arrays``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.batch.kernels_joints import build_joints
from fabrik3d.batch.kernels_limits import build_limits
from fabrik3d.rotations import IDENTITY
from fabrik3d.solver.constrained.damped import WORLD_AXES


def build_rows(jit: Callable[[Any], Any]) -> Callable[..., None]:
    """The damped step's rows (``DampedSteps.turning_axes``, then the Jacobian's rows ``u x (P_e - P_j)`` of
    each target position for the columns above it, and the residuals ``t_e - P_e``) on scalars, each function
    passed through ``jit``; returns its ``block``."""
    f = build_limits(jit)
    rotate, y_axis = f["rotate"], f["y_axis"]

    @jit
    def block(k, lo, hi, pose, frames, targets, turnable, starts, goals, above_at, above, cols, u, jac, err, *rig):  # type: ignore[no-untyped-def]
        """Problems ``lo`` to ``hi - 1``: the pose and frames ``(n, 3, m)`` and ``(n, 4, m)``, the targets
        ``(goals, 3, m)`` in; ``turnable``, ``starts`` (each turning joint's first column), ``goals`` (the
        targeted effectors in order), ``above_at`` and ``above`` (per goal,
        the columns above it: ``above[above_at[g]:above_at[g + 1]]``), ``cols`` (each column's joint);
        ``u`` ``(m, columns, 3)``, ``jac`` ``(m, 3 goals, columns)`` (zeros, its columns above each goal
        written) and ``err`` ``(m, 3 goals)`` out; ``rig``: ``rig_arrays``."""
        parents, hinged, rows, rigid = rig[0], rig[3], rig[9], rig[11]
        for b in range(lo, hi):
            for t in range(len(turnable)):
                j = turnable[t]
                c = starts[t]
                if rigid[j]:
                    for i in range(3):
                        u[b, c + i, 0], u[b, c + i, 1], u[b, c + i, 2] = WORLD_AXES[i]
                elif hinged[j]:
                    p = parents[j]
                    fp = (frames[p, 0, b], frames[p, 1, b], frames[p, 2, b], frames[p, 3, b]) if p >= 0 else IDENTITY
                    u[b, c, 0], u[b, c, 1], u[b, c, 2] = rotate(fp, (rows[j, 8], rows[j, 9], rows[j, 10]))  # (its axis)
                else:
                    bx, by, bz = y_axis((frames[j, 0, b], frames[j, 1, b], frames[j, 2, b], frames[j, 3, b]))
                    ax, ay, az = abs(bx), abs(by), abs(bz)
                    # the bone crossed with the world axis least aligned with it
                    v = (0.0, bz, -by) if ax <= ay and ax <= az else (-bz, 0.0, bx) if ay <= az else (by, -bx, 0.0)
                    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                    vx, vy, vz = v[0] / n, v[1] / n, v[2] / n
                    u[b, c, 0], u[b, c, 1], u[b, c, 2] = vx, vy, vz
                    u[b, c + 1, 0], u[b, c + 1, 1], u[b, c + 1, 2] = (
                        by * vz - bz * vy,
                        bz * vx - bx * vz,
                        bx * vy - by * vx,
                    )
            for g in range(len(goals)):
                e = goals[g]
                ex, ey, ez = pose[e, 0, b], pose[e, 1, b], pose[e, 2, b]
                for q in range(above_at[g], above_at[g + 1]):
                    c = above[q]
                    j = cols[c]
                    mx, my, mz = ex - pose[j, 0, b], ey - pose[j, 1, b], ez - pose[j, 2, b]
                    ux, uy, uz = u[b, c, 0], u[b, c, 1], u[b, c, 2]
                    jac[b, 3 * g, c] = uy * mz - uz * my
                    jac[b, 3 * g + 1, c] = uz * mx - ux * mz
                    jac[b, 3 * g + 2, c] = ux * my - uy * mx
                for i in range(3):
                    err[b, 3 * g + i] = targets[g, i, b] - pose[e, i, b]

    return block


def build_turns(jit: Callable[[Any], Any]) -> Callable[..., None]:
    """The damped step's turn (``DampedSteps.turn``: each turning joint's new rotation, limited, then the
    pose by forward kinematics) on scalars, each function passed through ``jit``; returns its ``block``.
    The step itself (``damped.joint_turns``: numpy's linear algebra, as the scalar solve calls it) comes
    in as ``spin``."""
    f = build_limits(jit)
    mul, rotate, rotate_inv, y_axis = f["mul"], f["rotate"], f["rotate_inv"], f["y_axis"]
    sub, add, swing, project, axis_angle = f["sub"], f["add"], f["swing"], f["project"], f["axis_angle"]
    twist_angle = f["twist_angle"]
    g = build_joints(jit)
    vec, quat, limit_frame, effector_frame = g["vec"], g["quat"], g["limit_frame"], g["effector_frame"]

    @jit
    def turned_local(j, fp, fj, w, rig):  # type: ignore[no-untyped-def]
        """``DampedSteps.turned_local``: ``(turns, local)``, joint ``j``'s rotation relative to its parent's
        frame ``fp`` once turned by the world rotation vector ``w`` and limited (``turns``: any turn)."""
        hinged, rest_dir, rest_x, rest_local, kinds, rows = rig[3], rig[5], rig[6], rig[7], rig[8], rig[9]
        wx, wy, wz = w
        angle = math.sqrt(wx * wx + wy * wy + wz * wz)
        if angle < 1e-15:
            return False, fj
        kx, ky, kz = wx / angle, wy / angle, wz / angle
        angle = 0.5 if 0.5 < angle else angle
        if rig[11][j]:
            limited = limit_frame(j, fp, mul(axis_angle((kx, ky, kz), angle), fj), rig)
            return True, mul((-fp[0], -fp[1], -fp[2], fp[3]), limited)
        bx, by, bz = y_axis(fj)
        c, s = math.cos(angle), math.sin(angle)
        kb = (kx * bx + ky * by + kz * bz) * (1.0 - c)
        turned = (
            c * bx + s * (ky * bz - kz * by) + kb * kx,
            c * by + s * (kz * bx - kx * bz) + kb * ky,
            c * bz + s * (kx * by - ky * bx) + kb * kz,
        )
        local = rotate_inv(fp, turned)
        local = project(kinds[j], rows[j], local, hinged[j], rotate_inv(fp, (bx, by, bz)))
        d0, l0 = vec(rest_dir, j), quat(rest_local, j)
        swung = swing(d0, local, vec(rest_x, j))
        if rig[19][j]:  # a rolling joint keeps its roll (the step turns its bone only)
            motion = mul(mul((-fp[0], -fp[1], -fp[2], fp[3]), fj), (-l0[0], -l0[1], -l0[2], l0[3]))
            swung = mul(swung, axis_angle(d0, twist_angle(motion, d0)))
        return True, mul(swung, l0)

    @jit
    def block(k, lo, hi, spin, pose, frames, out_pose, out_frames, turnable, up, goal_of, aims, aimed, *rig):  # type: ignore[no-untyped-def]
        """Problems ``lo`` to ``hi - 1``: ``spin`` ``(m, turnable, 3)`` (radians, world rotation vectors), the
        pose and frames ``(n, 3, m)`` and ``(n, 4, m)`` in, the turned ones out (``up``: the active joints
        root outward; ``goal_of``: the targeted leaves, which take their parent's frame afresh, turned
        toward their orientation targets ``aims`` ``(t, 4, m)`` where ``aimed`` ``(t,)``; ``rig``:
        ``rig_arrays``)."""
        parents, first_child = rig[0], rig[1]
        n = pose.shape[0]
        has = np.zeros(n, dtype=np.bool_)
        local = np.empty((n, 4))
        moved = np.empty((n, 4))
        turns = np.empty((aims.shape[0], 4))
        for b in range(lo, hi):
            for t in range(aims.shape[0]):
                for i in range(4):
                    turns[t, i] = aims[t, i, b]
            for t in range(len(turnable)):
                j = turnable[t]
                p = parents[j]
                fp = (frames[p, 0, b], frames[p, 1, b], frames[p, 2, b], frames[p, 3, b]) if p >= 0 else IDENTITY
                fj = (frames[j, 0, b], frames[j, 1, b], frames[j, 2, b], frames[j, 3, b])
                has[j], got = turned_local(j, fp, fj, (spin[b, t, 0], spin[b, t, 1], spin[b, t, 2]), rig)
                local[j, 0], local[j, 1], local[j, 2], local[j, 3] = got
            for j in range(n):
                for i in range(3):
                    out_pose[j, i, b] = pose[j, i, b]
                for i in range(4):
                    out_frames[j, i, b] = frames[j, i, b]
            for x in up:
                p = parents[x]
                fx = (frames[x, 0, b], frames[x, 1, b], frames[x, 2, b], frames[x, 3, b])
                inverse = (-fx[0], -fx[1], -fx[2], fx[3])
                if p < 0:
                    nf = (local[x, 0], local[x, 1], local[x, 2], local[x, 3]) if has[x] else fx
                    out_frames[x, 0, b], out_frames[x, 1, b], out_frames[x, 2, b], out_frames[x, 3, b] = nf
                    moved[x, 0], moved[x, 1], moved[x, 2], moved[x, 3] = mul(nf, inverse)
                    continue
                turn = (moved[p, 0], moved[p, 1], moved[p, 2], moved[p, 3])
                fpn = (out_frames[p, 0, b], out_frames[p, 1, b], out_frames[p, 2, b], out_frames[p, 3, b])
                nf = mul(fpn, (local[x, 0], local[x, 1], local[x, 2], local[x, 3])) if has[x] else mul(turn, fx)
                if first_child[x] < 0:
                    if goal_of[x] >= 0:  # (its parent's frame, turned toward its orientation target)
                        nf = effector_frame(x, fpn, goal_of[x], turns, aimed, rig)
                else:
                    mv = mul(nf, inverse) if has[x] else turn
                    moved[x, 0], moved[x, 1], moved[x, 2], moved[x, 3] = mv
                out_frames[x, 0, b], out_frames[x, 1, b], out_frames[x, 2, b], out_frames[x, 3, b] = nf
                px = (pose[x, 0, b], pose[x, 1, b], pose[x, 2, b])
                pp = (pose[p, 0, b], pose[p, 1, b], pose[p, 2, b])
                base = (out_pose[p, 0, b], out_pose[p, 1, b], out_pose[p, 2, b])
                out_pose[x, 0, b], out_pose[x, 1, b], out_pose[x, 2, b] = add(base, rotate(turn, sub(px, pp)), 1.0)
            for t in range(len(turnable)):
                has[turnable[t]] = False

    return block
