"""The compiled backends' kernel source for the constrained solve's reaching passes: stage 1 and stage 2
with joint limits (``fabrik3d.solver.constrained.passes.ReachingPasses``), one problem at a time, on scalars.

``build_passes(jit)`` defines ``block(k, lo, hi, ...)``, which runs one iteration's passes (stage 1,
then stage 2) or the start's projection (stage 2 of every joint toward itself, ``project``) for the
problems ``lo`` to ``hi - 1``, each as ``ReachingPasses`` runs it: the same expressions in the same order
(``fabrik3d.batch.kernels_limits``), the hinge's swivel search (its twelve turns, then its halvings)
included, so each problem's floats are the scalar passes' and so the numpy twins' (``BatchPasses``) bit
for bit. ``fabrik3d.batch.compiled`` runs the blocks in parallel over the CPU cores.

What it covers (``kernels_joints.rig_arrays`` says whether a rig is): swing limits that are cones,
elliptical cones or hinges (any joint may have none), twist limits, a ``Rigid`` root (its frame kept or
the root's orientation, limited) and ``Rigid`` joints with one or two children (one with three or more is
fitted between the kernel's segments, ``kernels_rigid``); rolling joints; target positions
and orientations (with the yield share of each problem); no turns carried through the solve, no restart's
random aims (those stay with the numpy passes). Python's negative index of a leaf's missing child
(``first_child`` is -1) is kept: it reads the last joint, as the scalar code does.

Arrays (``n`` joints, ``m`` problems; ``(joints, coordinates, problems)`` as the numpy passes' tuples
stack): ``pose`` ``(n, 3, m)``, ``frames`` ``(n, 4, m)``, ``start`` ``(n, 3, m)`` (stage 2's root and
fallback directions), ``goals`` ``(t, 3, m)`` the targets' positions, ``goal_of`` ``(n,)`` each joint's
target (-1: none), the targets' orientations ``(t, 4, m)``, where they have one ``(t,)``, their weights
``(t,)`` and the yield shares ``(m,)`` (``CompiledPasses.aims``); out ``out_pose`` ``(n, 3, m)``, ``out_frames``
``(n, 4, m)``. Then the plan (``plan_arrays``: ``down`` and ``up``, the joint orders, ``active`` ``(n,)``,
the kids as ``kid_ptr`` ``(n + 1,)``, ``kid_idx`` and ``kid_w``: a joint's kids are
``kid_idx[kid_ptr[j]:kid_ptr[j + 1]]``) and the rig (``kernels_joints.rig_arrays``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d.batch.kernels_joints import build_joints
from fabrik3d.batch.kernels_limits import build_limits
from fabrik3d.rotations import IDENTITY, Y_AXIS
from fabrik3d.solver.constrained.passes import SWIVEL_MISFIT, SWIVEL_REFINE, SWIVELS


def plan_arrays(
    order: list[int], down: list[int], active: list[bool], kids: list[list[tuple[int, float]]]
) -> tuple[np.ndarray, ...]:
    """A pass's plan as ``block``'s arrays: ``down``, ``up`` (``order``), ``active``, ``kid_ptr``, ``kid_idx``,
    ``kid_w``."""
    ptr = np.cumsum([0] + [len(k) for k in kids], dtype=np.int64)
    idx = np.array([c for k in kids for c, _ in k], dtype=np.int64)
    w = np.array([w for k in kids for _, w in k], dtype=float)
    return (
        np.asarray(down, dtype=np.int64),
        np.asarray(order, dtype=np.int64),
        np.asarray(active, dtype=np.bool_),
        ptr,
        idx,
        w,
    )


def build_passes(jit: Callable[[Any], Any]) -> Callable[..., None]:
    """The kernel's functions, each passed through ``jit``; returns ``block``."""
    f = build_limits(jit)
    mul, rotate, rotate_inv, x_axis, y_axis = f["mul"], f["rotate"], f["rotate_inv"], f["x_axis"], f["y_axis"]
    sub, add, unit, dist, swing = f["sub"], f["add"], f["unit"], f["dist"], f["swing"]
    axis_angle, project, hinge_angle, clamp_angle = f["axis_angle"], f["project"], f["hinge_angle"], f["clamp_angle"]
    g = build_joints(jit)
    vec, quat, aim_frame, limit_frame, rigid_turn, effector_frame = (
        g["vec"],
        g["quat"],
        g["aim_frame"],
        g["limit_frame"],
        g["rigid_turn"],
        g["effector_frame"],
    )

    @jit
    def misfit(c, g, pj, frame, q, rig):  # type: ignore[no-untyped-def]
        """``swivel_for_hinge``'s misfit: how far hinge ``c`` must correct its bone toward ``q[g]`` when
        its parent's frame is ``frame``."""
        lengths, kinds, rows = rig[2], rig[8], rig[9]
        pc = add(pj, y_axis(frame), lengths[c])
        ok, d = unit(sub(vec(q, g), pc))
        if not ok:
            return 0.0
        local = rotate_inv(frame, d)
        return dist(local, project(kinds[c], rows[c], local, False, local))

    @jit
    def swivel(j, c, fp, pj, frame, q, has_prev, prev, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.swivel_for_hinge``: ``j``'s frame turned about the line to its grandchild so
        that hinge ``c`` can bend (the first of the coarse turns that does, then halved toward none)."""
        g = rig[1][c]
        g = g if g >= 0 else g + q.shape[0]  # (Python's index of a leaf's missing child)
        ok, axis = unit(sub(vec(q, g), pj))
        if not ok or misfit(c, g, pj, frame, q, rig) < SWIVEL_MISFIT:
            return frame
        v = sub(vec(q, c), pj)
        step = 2.0 * math.pi / SWIVELS
        for k in range(1, SWIVELS // 2 + 1):
            for sign in (1.0, -1.0):
                ok, aim = unit(rotate(axis_angle(axis, sign * k * step), v))
                if not ok:
                    continue
                found = aim_frame(j, fp, aim, has_prev, prev, rig)
                if misfit(c, g, pj, found, q, rig) >= SWIVEL_MISFIT:
                    continue
                lo, hi = (k - 1) * step, k * step
                for _ in range(SWIVEL_REFINE):
                    mid = 0.5 * (lo + hi)
                    ok, aim = unit(rotate(axis_angle(axis, sign * mid), v))
                    h = aim_frame(j, fp, aim, has_prev, prev, rig) if ok else found
                    if ok and misfit(c, g, pj, h, q, rig) < SWIVEL_MISFIT:
                        hi, found = mid, h
                    else:
                        lo = mid
                return found
        return frame

    @jit
    def roll_for_hinge(j, c, pj, frame, q, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.roll_for_hinge``: rolling joint ``j``'s frame twisted about its bone, within its
        twist limit, so that hinge ``c``'s plane holds the grandchild's stage-1 point."""
        row, g = rig[9][c], rig[1][c]
        g = g if g >= 0 else g + q.shape[0]
        ok, w = unit(sub(vec(q, g), add(pj, y_axis(frame), rig[2][c])))
        if not ok:
            return frame
        tx, ty, tz = rotate_inv(frame, w)
        ax, ay, az = row[8], row[9], row[10]
        big_a, big_b, big_c = ax * tx + az * tz, ax * tz - az * tx, ay * ty
        radius = math.sqrt(big_a * big_a + big_b * big_b)
        if radius < 1e-9:
            return frame
        base = math.atan2(big_b, big_a)
        ratio = -big_c / radius
        ratio = 1.0 if 1.0 < ratio else ratio  # max(-1.0, min(1.0, ratio))
        spread = math.acos(-1.0 if -1.0 > ratio else ratio)
        have, low, small, chosen = False, 0.0, 0.0, 0.0
        for theta in (base + spread, base - spread):
            c_, s_ = math.cos(theta), math.sin(theta)
            on, phi = hinge_angle(row, (tx * c_ + tz * s_, ty, -tx * s_ + tz * c_))
            tau = (-theta + math.pi) % (2.0 * math.pi) - math.pi
            miss = 0.0
            if on:  # max(lo - phi, phi - hi, 0.0)
                miss = row[6] - phi
                miss = phi - row[7] if phi - row[7] > miss else miss
                miss = 0.0 if 0.0 > miss else miss
            if not have or miss < low or (miss == low and abs(tau) < small):  # (the key (miss, |tau|))
                have, low, small, chosen = True, miss, abs(tau), tau
        return mul(frame, axis_angle(Y_AXIS, clamp_angle(chosen, rig[13][j, 0], rig[13][j, 1], False, 0.0)))

    @jit
    def reach_inward(j, c, pose, frames, q, qf, aim, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.reach_inward``: joint ``j``'s stage-1 point and frame from its one child ``c``
        (``aim``: ``(t, aims, aimed, aim_w, share)``, ``c``'s target ``t`` (-1: none) and the orientation
        targets, their weights and the yield share)."""
        lengths, offset_dir, rest_x, kinds, rows = rig[2], rig[4], rig[6], rig[8], rig[9]
        e_c = vec(offset_dir, c)
        fj = quat(frames, j)
        old_bone = rotate(fj, e_c)
        ok, bone = unit(sub(vec(q, c), vec(pose, j)))
        if not ok:
            bone = old_bone
        t, aims, aimed, aim_w, share = aim
        if t >= 0 and aimed[t]:
            wanted = rotate(quat(aims, t), e_c)
            w = aim_w[t] * share  # (position wins: the share yields while stalled)
            ok, bone = unit(add((bone[0] * (1.0 - w), bone[1] * (1.0 - w), bone[2] * (1.0 - w)), wanted, w))
            if not ok:
                bone = wanted
        if kinds[c] == 0 and kinds[j] == 0:
            return add(vec(q, c), bone, -lengths[c]), fj
        frame = mul(swing(old_bone, bone, x_axis(fj)), fj)
        if kinds[c] != 0:
            local = rotate_inv(frame, y_axis(quat(qf, c)))
            previous = rotate_inv(fj, y_axis(quat(frames, c)))
            allowed = project(kinds[c], rows[c], local, True, previous)
            if allowed[0] != local[0] or allowed[1] != local[1] or allowed[2] != local[2]:
                frame = mul(frame, swing(allowed, local, vec(rest_x, c)))
                bone = rotate(frame, e_c)
        return add(vec(q, c), bone, -lengths[c]), frame

    @jit
    def stage1(pose, frames, goals, goal_of, aims, q, qf, down, kid_ptr, kid_idx, kid_w, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.stage1`` into ``q`` and ``qf`` (copies of ``pose`` and ``frames``, ``(n, 3)``
        and ``(n, 4)``); ``goals`` ``(t, 3)``; ``aims``: the orientation targets ``(t, 4)``, where they are
        (``aimed``), their weights and the yield share."""
        lengths, rigid, offset = rig[2], rig[11], rig[12]
        turns, aimed, aim_w, share = aims
        for j in down:
            t = goal_of[j]
            if t >= 0:
                q[j, 0], q[j, 1], q[j, 2] = goals[t, 0], goals[t, 1], goals[t, 2]
                if aimed[t]:
                    qf[j, 0], qf[j, 1], qf[j, 2], qf[j, 3] = turns[t, 0], turns[t, 1], turns[t, 2], turns[t, 3]
                continue
            lo, hi = kid_ptr[j], kid_ptr[j + 1]
            if rigid[j]:  # (one or two proposers: ``rigid_stage1``)
                fj = quat(frames, j)
                frame = mul(rigid_turn(vec(pose, j), fj, q, kid_idx, lo, hi, rig), fj)
                sx = sy = sz = sw = 0.0
                for at in range(lo, hi):
                    c, w = kid_idx[at], kid_w[at]
                    p = sub(vec(q, c), rotate(frame, vec(offset, c)))
                    sx, sy, sz, sw = sx + w * p[0], sy + w * p[1], sz + w * p[2], sw + w
                q[j, 0], q[j, 1], q[j, 2] = sx / sw, sy / sw, sz / sw
                qf[j, 0], qf[j, 1], qf[j, 2], qf[j, 3] = frame
                continue
            if hi - lo == 1:
                c = kid_idx[lo]
                p, fr = reach_inward(j, c, pose, frames, q, qf, (goal_of[c], turns, aimed, aim_w, share), rig)
                q[j, 0], q[j, 1], q[j, 2] = p
                qf[j, 0], qf[j, 1], qf[j, 2], qf[j, 3] = fr
                continue
            sx = sy = sz = sw = 0.0
            for at in range(lo, hi):
                c, w = kid_idx[at], kid_w[at]
                ok, d = unit(sub(vec(pose, j), vec(q, c)))
                if not ok:
                    ok, d = unit(sub(vec(pose, j), vec(pose, c)))
                    if not ok:
                        d = Y_AXIS
                p = add(vec(q, c), d, lengths[c])
                sx, sy, sz, sw = sx + w * p[0], sy + w * p[1], sz + w * p[2], sw + w
            q[j, 0], q[j, 1], q[j, 2] = sx / sw, sy / sw, sz / sw

    @jit
    def stage2(q, old, start, pose, frames, up, active, kid_ptr, kid_idx, goal_of, turns, aimed, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.stage2`` (no restart's aims) over the joints ``up`` into ``pose`` and ``frames``
        (at the start copies of ``q`` and ``old``, the root at ``start``'s; ``turns`` ``(t, 4)`` the
        orientation targets where ``aimed``)."""
        parents, first_child, lengths, hinged = rig[0], rig[1], rig[2], rig[3]
        n = q.shape[0]
        for j in up:
            p = parents[j]
            fp = quat(frames, p) if p >= 0 else IDENTITY
            pj = vec(pose, j)
            first = first_child[j]
            if first < 0:  # a leaf: its parent's frame, turned toward its orientation target (no turn held)
                frames[j, 0], frames[j, 1], frames[j, 2], frames[j, 3] = effector_frame(
                    j, fp, goal_of[j], turns, aimed, rig
                )
                continue
            if rig[11][j]:  # rigid: fitted (the root keeps its frame), limited, its children placed rigidly
                if p < 0:
                    fj = limit_frame(j, IDENTITY, quat(rig[17], 0) if rig[18] else quat(old, j), rig)
                else:
                    oj = quat(old, j)
                    fj = limit_frame(
                        j, fp, mul(rigid_turn(pj, oj, q, kid_idx, kid_ptr[j], kid_ptr[j + 1], rig), oj), rig
                    )
                frames[j, 0], frames[j, 1], frames[j, 2], frames[j, 3] = fj
                for at in range(rig[15][j], rig[15][j + 1]):
                    c = rig[16][at]
                    pose[c, 0], pose[c, 1], pose[c, 2] = add(pj, rotate(fj, vec(rig[12], c)), 1.0)
                continue
            if active[first]:
                ok, aim = unit(sub(vec(q, first), pj))
                if not ok:
                    aim = y_axis(quat(old, j))
                has_prev, prev = False, aim
                if hinged[j]:
                    has_prev = True
                    prev = rotate_inv(quat(old, p), y_axis(quat(old, j))) if p >= 0 else y_axis(quat(old, j))
                fj = aim_frame(j, fp, aim, has_prev, prev, rig)
                grand = first_child[first]
                if hinged[first] and active[grand if grand >= 0 else grand + n]:
                    if rig[19][j]:
                        fj = roll_for_hinge(j, first, pj, fj, q, rig)
                    fj = swivel(j, first, fp, pj, fj, q, has_prev, prev, rig)
                frames[j, 0], frames[j, 1], frames[j, 2], frames[j, 3] = fj
            elif p >= 0:
                op = quat(old, p)
                frames[j, 0], frames[j, 1], frames[j, 2], frames[j, 3] = mul(
                    fp, mul((-op[0], -op[1], -op[2], op[3]), quat(old, j))
                )
            for at in range(kid_ptr[j], kid_ptr[j + 1]):
                c = kid_idx[at]
                if c == first:
                    pc = add(pj, y_axis(quat(frames, j)), lengths[c])
                else:
                    ok, d = unit(sub(vec(q, c), pj))
                    if not ok:
                        ok, d = unit(sub(vec(start, c), vec(start, j)))
                        if not ok:
                            d = Y_AXIS
                    pc = add(pj, d, lengths[c])
                pose[c, 0], pose[c, 1], pose[c, 2] = pc

    @jit
    def block(
        k,
        lo,
        hi,
        segments,
        pose,
        frames,
        start,
        goals,
        goal_of,
        all_turns,
        aimed,
        aim_w,
        shares,
        q_in,
        qf_in,
        out_pose,
        out_frames,
        *arrays,
    ):  # type: ignore[no-untyped-def]
        """Problems ``lo`` to ``hi - 1``: stage 1 over ``down[segments[0]:segments[1]]``, continuing the
        stage-1 points and frames ``q_in`` and ``qf_in`` (``(n, 3, m)``, ``(n, 4, m)``, in and out), then stage
        2 over ``up[segments[2]:segments[3]]``, continuing ``out_pose`` and ``out_frames`` (in and out; at
        the start copies of the stage-1 points and of ``frames``, the root at ``start``'s: ``CompiledPasses``).
        The driver runs the passes in such segments around the joints it fits between them (rigid, three or
        more children: Horn's fit, ``kernels_rigid`` around numpy's ``eigh``); a projection (``project``) is
        stage 2 of every joint toward ``pose``.
        ``all_turns``: the orientation targets ``(t, 4, m)`` (``t`` targets, even for a projection), where
        they are (``aimed`` ``(t,)``), their weights ``aim_w`` ``(t,)`` and the yield shares ``shares``
        ``(m,)``. ``arrays``: the plan's (``plan_arrays``), then the rig's (``rig_arrays``). ``k`` unused."""
        down, up, active, kid_ptr, kid_idx, kid_w = arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5]
        rig = arrays[6:]
        n = pose.shape[0]
        q, qf = np.empty((n, 3)), np.empty((n, 4))
        st, old = np.empty((n, 3)), np.empty((n, 4))
        got, got_f, given = np.empty((n, 3)), np.empty((n, 4)), np.empty((n, 3))
        targets = np.empty((goals.shape[0], 3))
        turns = np.empty((all_turns.shape[0], 4))
        first1, last1, first2, last2 = segments[0], segments[1], segments[2], segments[3]
        for b in range(lo, hi):
            for j in range(n):
                for i in range(3):
                    given[j, i] = pose[j, i, b]
                    q[j, i] = q_in[j, i, b]
                    st[j, i] = start[j, i, b]
                    got[j, i] = out_pose[j, i, b]
                for i in range(4):
                    old[j, i] = frames[j, i, b]
                    qf[j, i] = qf_in[j, i, b]
                    got_f[j, i] = out_frames[j, i, b]
            for t in range(all_turns.shape[0]):
                for i in range(4):
                    turns[t, i] = all_turns[t, i, b]
            if last1 > first1:
                for t in range(goals.shape[0]):
                    for i in range(3):
                        targets[t, i] = goals[t, i, b]
                stage1(
                    given,
                    old,
                    targets,
                    goal_of,
                    (turns, aimed, aim_w, shares[b]),
                    q,
                    qf,
                    down[first1:last1],
                    kid_ptr,
                    kid_idx,
                    kid_w,
                    rig,
                )
                for j in range(n):
                    for i in range(3):
                        q_in[j, i, b] = q[j, i]
                    for i in range(4):
                        qf_in[j, i, b] = qf[j, i]
            if last2 > first2:
                stage2(q, old, st, got, got_f, up[first2:last2], active, kid_ptr, kid_idx, goal_of, turns, aimed, rig)
                for j in range(n):
                    for i in range(3):
                        out_pose[j, i, b] = got[j, i]
                    for i in range(4):
                        out_frames[j, i, b] = got_f[j, i]

    return block
