"""The compiled constrained kernels' rig constants and per-joint rules, shared by the reaching passes
(``fabrik3d.batch.kernels_passes``) and the damped steps' turns (``kernels_turns``).

``rig_arrays`` lays a rig out as the kernels read it, a tuple ``rig`` (``n`` joints): 0 ``parents``,
1 ``first_child`` (-1: a leaf), 2 ``lengths``, 3 ``hinged`` (a ``Hinge`` swing limit), 4 ``offset_dir``
``(n, 3)`` (the plan's unit bones), 5 ``rest_dir``, 6 ``rest_x`` ``(n, 3)``, 7 ``rest_local`` ``(n, 4)``,
8 the swing limits' ``kinds`` and 9 their ``rows`` (``kernels_limits.limit_arrays``), 10 the root, 11
``rigid``, 12 ``offset`` ``(n, 3)``, 13 ``twist`` ``(n, 2)`` (radians) where 14 ``has_twist``, 15
``child_ptr`` and 16 ``child_idx`` (joint ``j``'s children are ``child_idx[child_ptr[j]:child_ptr[j +
1]]``), 17 the root's fixed frame ``(1, 4)`` where 18 ``has_root_frame``, 19 ``rolls`` (``Rig.rolls``: a
ball joint with a twist limit above a hinge, which rolls its hinge's plane onto the target).

``build_joints(jit)`` passes the rules through ``jit`` (once per ``jit``) and returns them by name:
``aim_frame``, ``limit_frame``, ``rigid_turn`` and ``effector_frame``, each its ``ReachingPasses`` namesake on
scalars with the expressions in the scalar order, and the row readers ``vec`` and ``quat``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.batch.kernels_limits import build_limits, limit_arrays
from fabrik3d.solver.constrained.plan import LimitedPlan
from fabrik3d.solver.rig import Rig


def rig_arrays(r: Rig, plan: LimitedPlan, root_frame: rot.Quat | None) -> tuple[Any, ...] | None:
    """``r`` and ``plan`` as the kernels' ``rig`` tuple (see the module docstring), or ``None`` where they
    are not covered: a limit of another kind (a held joint's lock)."""
    limits = limit_arrays(r)
    n = len(r.parents)
    if limits is None:
        return None
    twist = np.zeros((n, 2))
    for j, lim in enumerate(r.limits):
        if lim.twist is not None:
            twist[j] = lim.twist
    return (
        np.asarray(r.parents, dtype=np.int64),
        np.asarray(r.first_child, dtype=np.int64),
        np.asarray(r.lengths, dtype=float),
        np.asarray(plan.hinged, dtype=np.bool_),
        np.asarray(plan.offset_dir, dtype=float),
        np.asarray(r.rest_dir, dtype=float),
        np.asarray(r.rest_x, dtype=float),
        np.asarray(r.rest_local, dtype=float),
        *limits,
        r.order[0],
        np.asarray(r.rigid, dtype=np.bool_),
        np.asarray(r.offset, dtype=float),
        twist,
        np.array([lim.twist is not None for lim in r.limits], dtype=np.bool_),
        np.cumsum([0] + [len(k) for k in r.children], dtype=np.int64),
        np.array([c for k in r.children for c in k], dtype=np.int64),
        np.array([rot.IDENTITY if root_frame is None else root_frame], dtype=float),
        root_frame is not None,
        np.asarray(r.rolls, dtype=np.bool_),
    )


@functools.cache
def build_joints(jit: Callable[[Any], Any]) -> dict[str, Any]:
    """The per-joint rules, each passed through ``jit``, by name (built once per ``jit``). Not to be modified."""
    f = build_limits(jit)
    mul, rotate, rotate_inv, unit, swing = f["mul"], f["rotate"], f["rotate_inv"], f["unit"], f["swing"]
    sub, axis_angle, twist_angle, clamp_angle, project = (
        f["sub"],
        f["axis_angle"],
        f["twist_angle"],
        f["clamp_angle"],
        f["project"],
    )

    @jit
    def vec(a, j):  # type: ignore[no-untyped-def]
        """Row ``j`` of an ``(n, 3)`` array as a vector."""
        return a[j, 0], a[j, 1], a[j, 2]

    @jit
    def quat(a, j):  # type: ignore[no-untyped-def]
        """Row ``j`` of an ``(n, 4)`` array as a quaternion."""
        return a[j, 0], a[j, 1], a[j, 2], a[j, 3]

    @jit
    def aim_frame(j, fp, aim, has_prev, prev, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.aim_frame`` (no carried twist)."""
        rest_dir, rest_x, rest_local, kinds, rows = rig[5], rig[6], rig[7], rig[8], rig[9]
        local = project(kinds[j], rows[j], rotate_inv(fp, aim), has_prev, prev)
        return mul(fp, mul(swing(vec(rest_dir, j), local, vec(rest_x, j)), quat(rest_local, j)))

    @jit
    def limit_frame(j, fp, frame, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.limit_frame``: ``frame`` with joint ``j``'s swing and twist limits applied
        (relative to ``fp``; ``limits.limit_motion``)."""
        rest_dir, rest_x, rest_local, kinds, rows, twist, has_twist = (
            rig[5],
            rig[6],
            rig[7],
            rig[8],
            rig[9],
            rig[13],
            rig[14],
        )
        if kinds[j] == 0 and not has_twist[j]:
            return frame
        d0, l0 = vec(rest_dir, j), quat(rest_local, j)
        motion = mul(mul((-fp[0], -fp[1], -fp[2], fp[3]), frame), (-l0[0], -l0[1], -l0[2], l0[3]))
        tau = twist_angle(motion, d0)
        d = rotate(motion, d0)
        if kinds[j] != 0:
            d = project(kinds[j], rows[j], d, False, d)
        if has_twist[j]:
            tau = clamp_angle(tau, twist[j, 0], twist[j, 1], False, 0.0)
        motion = mul(swing(d0, d, vec(rest_x, j)), axis_angle(d0, tau))
        return mul(fp, mul(motion, l0))

    @jit
    def rigid_turn(pj, fj, q, kid_idx, lo, hi, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.rigid_turn`` for one or two proposers (``kid_idx[lo:hi]``): the turn to apply
        to ``fj``."""
        offset = rig[12]
        c1 = kid_idx[lo]
        if hi - lo == 1:
            ok_a, a = unit(rotate(fj, vec(offset, c1)))
            ok_b, b = unit(sub(vec(q, c1), pj))
        else:
            c2 = kid_idx[lo + 1]
            ok_a, a = unit(rotate(fj, sub(vec(offset, c2), vec(offset, c1))))
            ok_b, b = unit(sub(vec(q, c2), vec(q, c1)))
        if not (ok_a and ok_b):
            return rot.IDENTITY
        return swing(a, b, rotate(fj, rot.X_AXIS))

    @jit
    def effector_frame(j, fp, t, aims, aimed, rig):  # type: ignore[no-untyped-def]
        """``ReachingPasses.effector_frame`` (no turn held): leaf ``j``'s frame, its parent's ``fp`` turned about
        the bone toward its orientation target ``aims[t]`` (``(targets, 4)``; where ``t >= 0`` and
        ``aimed[t]``), within its twist limit."""
        base = mul(fp, quat(rig[7], j))
        if t < 0 or not aimed[t]:
            return base
        tau = twist_angle(mul((-base[0], -base[1], -base[2], base[3]), quat(aims, t)), rot.Y_AXIS)
        if rig[14][j]:
            tau = clamp_angle(tau, rig[13][j, 0], rig[13][j, 1], False, 0.0)
        return mul(base, axis_angle(rot.Y_AXIS, tau))

    return {
        "vec": vec,
        "quat": quat,
        "aim_frame": aim_frame,
        "limit_frame": limit_frame,
        "rigid_turn": rigid_turn,
        "effector_frame": effector_frame,
    }
