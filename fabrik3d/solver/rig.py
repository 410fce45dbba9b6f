"""The rig: a skeleton's per-joint constants for the solver's loops, its plan cache, and the frames
of a pose (the swing rule of ``fabrik3d.model.frames``)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton, check_skeleton
from fabrik3d.solver import limits

# Plans kept per rig (``Rig.cached``).
MAX_PLANS = 64
# Rigs with held joints kept per rig (``Rig.locked``).
MAX_LOCKED = 8
# A joint's turn about its bone, or a leaf's turn (radians), carried through a solve only from this
# size on (below it, the rounding of a frame without one: ``Rig.carried_turns``).
TURN_KEPT = 1e-9


class Rig:
    """Per-joint constants of the swing rule, as Python floats, for the solver's loops.

    Attributes (lists indexed by joint):
        rest_local: ``L0_j``, the rest frame relative to the parent's rest frame.
        rest_dir: ``L0_j·Y``, the rest bone direction in the parent's frame.
        rest_x: ``L0_j·X``, the half-turn axis for a bone opposite its rest direction.
    """

    def __init__(self, skeleton: Skeleton) -> None:
        r0 = [tuple(q) for q in skeleton.rest_frames.tolist()]
        self.parents = [int(p) for p in skeleton.parents]
        self.first_child = [skeleton.first_child(j) for j in range(len(r0))]
        self.order = list(skeleton.order)
        self.rest_frames = r0
        self.rest_local = [rot.mul(rot.conj(r0[p]), r0[j]) if p >= 0 else r0[j] for j, p in enumerate(self.parents)]
        self.rest_dir = [rot.rotate(q, rot.Y_AXIS) for q in self.rest_local]
        self.rest_x = [rot.rotate(q, rot.X_AXIS) for q in self.rest_local]
        self.limits = limits.bind(skeleton, self.rest_local)
        self.rigid = [lim.rigid for lim in self.limits]
        self.children = [list(skeleton.children(j)) for j in range(len(r0))]
        self.bone_children = [list(skeleton.bone_children(j)) for j in range(len(r0))]
        # rolls[j]: a ball joint with a Twist limit above a hinge (an upper arm, a thigh): its frame
        # turns about its bone so that the hinge can bend toward its target (``roll_for_hinge``).
        self.rolls = self._rolls()
        self.lengths = skeleton.bone_lengths.tolist()
        # offset[c]: rest offset of joint c from its parent, in the parent's rest frame.
        rest = skeleton.rest_positions.tolist()
        self.offset: list[rot.Vec] = [(0.0, 0.0, 0.0)] * len(r0)
        for c, p in enumerate(self.parents):
            if p >= 0:
                v = (rest[c][0] - rest[p][0], rest[c][1] - rest[p][1], rest[c][2] - rest[p][2])
                self.offset[c] = rot.rotate(rot.conj(r0[p]), v)
        # The order is a depth-first pre-order, so a subtree is a slice of it.
        self._at = [0] * len(r0)
        self._size = [1] * len(r0)
        for k, j in enumerate(self.order):
            self._at[j] = k
        for j in reversed(self.order):
            if self.parents[j] >= 0:
                self._size[self.parents[j]] += self._size[j]
        # The order cut into runs (first parent, ((joint, bone length), ...)), each joint of a run
        # the parent of the next: ``bone_pose`` walks them.
        self._runs: list[tuple[int, list[tuple[int, float]]]] = []
        for j in self.order[1:]:
            p = self.parents[j]
            if not self._runs or self._runs[-1][1][-1][0] != p:
                self._runs.append((p, []))
            self._runs[-1][1].append((j, self.lengths[j]))
        # For the solver: the rest pose as rows, each bone's rest direction, the rest pose put
        # together by ``bone_pose`` (the start of a solve without one), and a cache of per-target-set
        # plans (``fabrik3d.solver``); all derived from the immutable skeleton.
        self.rest_rows: list[rot.Vec] = [tuple(p) for p in rest]  # type: ignore[misc]
        self.rest_bone: list[rot.Vec | None] = [
            None if p < 0 else bone_direction(self.rest_rows[p], self.rest_rows[c]) for c, p in enumerate(self.parents)
        ]
        xs, ys, zs = (list(v) for v in zip(*self.rest_rows))
        self.rest_start: tuple[rot.Vec, ...] = tuple(self.bone_pose(xs, ys, zs))
        self.plans: dict[Any, Any] = {}

    def _rolls(self) -> list[bool]:
        return [
            lim.twist is not None
            and lim.swing is not None
            and not lim.rigid
            and self.first_child[j] >= 0
            and isinstance(self.limits[self.first_child[j]].swing, limits._BoundHinge)
            for j, lim in enumerate(self.limits)
        ]

    def locked(self, locals_: dict[int, rot.Quat]) -> Rig:
        """This rig with the joints of ``locals_`` held at those rotations relative to their parents'
        frames (``limits.held``: a solve on it turns the joints above them, and carries the joints
        below them rigidly). Kept on this rig, a few at a time (``MAX_LOCKED``)."""
        if not locals_:
            return self
        made: dict[Any, Rig] = self.cached(("locked",), dict)
        key = tuple(sorted(locals_.items()))
        out = made.get(key)
        if out is None:
            if len(made) >= MAX_LOCKED:
                made.clear()
            out = copy.copy(self)
            out.limits = list(self.limits)
            for j, q in locals_.items():
                out.limits[j] = limits.held(q, self.rest_local[j], self.limits[j])
            out.rolls = out._rolls()
            out.plans = {}
            made[key] = out
        return out

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        """The plan stored under ``key`` in ``plans``, made by ``make()`` the first time. Plans
        depend only on this (immutable) skeleton and their key (targeted effectors, weights);
        at most ``MAX_PLANS`` are kept (a skeleton with many effectors has many subsets: the
        cache then starts afresh)."""
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) >= MAX_PLANS:
                self.plans.clear()
            plan = self.plans[key] = make()
        return plan

    def swing_frame(self, j: int, parent_frame: rot.Quat, direction: rot.Vec) -> rot.Quat:
        """World frame of joint ``j`` whose bone points along the unit ``direction``.

        ``R_p · swing(L0_j·Y, R_p⁻¹·direction, L0_j·X) · L0_j`` (module docstring): the
        ``rotations`` helpers ``rotate`` and ``mul`` written out around ``rotations.swing``,
        operation for operation (the same floats; tests/solver/test_solver_fast_paths.py
        compares them), since every solve calls it for every joint.
        """
        fx, fy, fz, fw = parent_frame
        vx, vy, vz = direction
        # local = rot.rotate(rot.conj(parent_frame), direction)
        qx, qy, qz = -fx, -fy, -fz
        tx = 2.0 * (qy * vz - qz * vy)
        ty = 2.0 * (qz * vx - qx * vz)
        tz = 2.0 * (qx * vy - qy * vx)
        bx = vx + fw * tx + (qy * tz - qz * ty)
        by = vy + fw * ty + (qz * tx - qx * tz)
        bz = vz + fw * tz + (qx * ty - qy * tx)
        sx, sy, sz, sw = rot.swing(self.rest_dir[j], (bx, by, bz), self.rest_x[j])
        # rot.mul(parent_frame, rot.mul(s, rest_local))
        lx, ly, lz, lw = self.rest_local[j]
        mx = sw * lx + sx * lw + sy * lz - sz * ly
        my = sw * ly - sx * lz + sy * lw + sz * lx
        mz = sw * lz + sx * ly - sy * lx + sz * lw
        mw = sw * lw - sx * lx - sy * ly - sz * lz
        return (
            fw * mx + fx * mw + fy * mz - fz * my,
            fw * my - fx * mz + fy * mw + fz * mx,
            fw * mz + fx * my - fy * mx + fz * mw,
            fw * mw - fx * mx - fy * my - fz * mz,
        )

    def bone_pose(
        self,
        xs: list[float],
        ys: list[float],
        zs: list[float],
        root: rot.Vec | None = None,
        turn_to: rot.Quat | None = None,
    ) -> list[rot.Vec]:
        """The pose with the rig's bone lengths and the bone directions of ``(xs, ys, zs)``.

        Each bone keeps its direction in the given joints (the rest direction where
        they coincide); the root stays, or goes to ``root``; with ``turn_to``, the whole
        pose then turns about the root so that the root's frame is ``turn_to``.
        """
        top = self.order[0]
        out: list[rot.Vec] = [(0.0, 0.0, 0.0)] * len(xs)
        out[top] = (xs[top], ys[top], zs[top]) if root is None else root
        sqrt = math.sqrt
        tiny = rot.TINY2
        rest_bone = self.rest_bone
        for p, run in self._runs:  # each run goes down a chain, the last joint's point in locals
            ox, oy, oz = xs[p], ys[p], zs[p]
            qx, qy, qz = out[p]
            for j, k in run:
                # bone_direction((ox, oy, oz), joint j), or else the rest bone's
                x, y, z = xs[j], ys[j], zs[j]
                vx, vy, vz = x - ox, y - oy, z - oz
                n2 = vx * vx + vy * vy + vz * vz
                if n2 < tiny:
                    d = rest_bone[j]
                    assert d is not None
                    ux, uy, uz = d
                else:
                    n = sqrt(n2)
                    ux, uy, uz = vx / n, vy / n, vz / n
                qx, qy, qz = qx + ux * k, qy + uy * k, qz + uz * k
                out[j] = (qx, qy, qz)
                ox, oy, oz = x, y, z
        if turn_to is not None:
            turn = rot.mul(turn_to, rot.conj(self.pose_frames(out)[top]))
            c = out[top]
            for j in self.order[1:]:
                v = rot.rotate(turn, (out[j][0] - c[0], out[j][1] - c[1], out[j][2] - c[2]))
                out[j] = (c[0] + v[0], c[1] + v[1], c[2] + v[2])
        return out

    def position_in_order(self, j: int) -> int:
        """Where joint ``j`` stands in the rig's depth-first pre-order (``order``)."""
        return self._at[j]

    def subtree(self, j: int) -> list[int]:
        """Joint ``j`` and all its descendants, parents before children."""
        return self.order[self._at[j] : self._at[j] + self._size[j]]

    def within(self, top: int, j: int) -> bool:
        """Whether joint ``j`` is ``top`` or one of its descendants."""
        return 0 <= self._at[j] - self._at[top] < self._size[top]

    def rigid_fit(self, j: int, positions: list[rot.Vec], parent_frame: rot.Quat) -> rot.Quat:
        """Frame of a rigid joint: the rotation best fitting its rest child offsets to the pose's
        (children all on one line leave the turn about it open: then the swing rule's frame)."""
        pj = positions[j]
        kids = self.bone_children[j]
        dst = [(positions[c][0] - pj[0], positions[c][1] - pj[1], positions[c][2] - pj[2]) for c in kids]
        first = bone_direction(pj, positions[kids[0]])
        swung = self.swing_frame(j, parent_frame, first) if first is not None else parent_frame
        return rot.fit_rotation([self.offset[c] for c in kids], dst, [1.0] * len(kids), swung)

    def carried_turns(self, frames: list[rot.Quat], skip: Any = ()) -> tuple[dict[int, float], dict[int, rot.Quat]]:
        """What ``frames`` (a pose's) turn beyond the swing rule, for a solve to keep: each joint's
        turn about its own bone (radians, from its rest frame in its parent's, the root's in the
        world; within its ``Twist`` limit) and each leaf's rotation relative to its parent (its
        turn about its rest bone direction within its ``Twist`` limit), where not zero
        (``TURN_KEPT``). Rigid joints fit their children, a rolling joint's roll comes from its hinge
        (``Rig.rolls``) and the joints in ``skip`` (leaves with orientation targets) carry none."""
        twists: dict[int, float] = {}
        leaves: dict[int, rot.Quat] = {}
        for j in self.order:
            if self.rigid[j] or self.rolls[j] or j in skip:
                continue
            p = self.parents[j]
            local = frames[j] if p < 0 else rot.mul(rot.conj(frames[p]), frames[j])
            motion = rot.mul(local, rot.conj(self.rest_local[j]))
            tau = rot.twist_angle(motion, self.rest_dir[j])
            limit = self.limits[j].twist
            kept = tau if limit is None else limits.clamp_angle(tau, *limit)
            if self.first_child[j] >= 0:
                if abs(kept) >= TURN_KEPT:
                    twists[j] = kept
                continue
            if kept != tau:  # (a leaf's turn about its rest direction to its limit, its swing kept)
                motion = rot.mul(motion, rot.axis_angle(self.rest_dir[j], kept - tau))
            if 2.0 * math.asin(min(1.0, math.sqrt(motion[0] ** 2 + motion[1] ** 2 + motion[2] ** 2))) >= TURN_KEPT:
                leaves[j] = rot.mul(motion, self.rest_local[j])
        return twists, leaves

    def pose_frames(
        self, positions: list[rot.Vec], turns: tuple[dict[int, float], dict[int, rot.Quat]] | None = None
    ) -> list[rot.Quat]:
        """World frames of every joint of a pose (swing rule, no twist; rigid joints fitted); with
        ``turns`` (``carried_turns``), those joints turned about their bones and those leaves turned
        relative to their parents."""
        twists, leaves = turns if turns is not None else ({}, {})
        out: list[rot.Quat] = [rot.IDENTITY] * len(positions)
        for j in self.order:
            p = self.parents[j]
            parent_frame = out[p] if p >= 0 else rot.IDENTITY
            if self.rigid[j]:
                out[j] = self.rigid_fit(j, positions, parent_frame)
                continue
            c = self.first_child[j]
            d = None if c < 0 else bone_direction(positions[j], positions[c])
            if d is None:
                out[j] = rot.mul(parent_frame, leaves.get(j, self.rest_local[j]))
            else:
                out[j] = self.swing_frame(j, parent_frame, d)
                tau = twists.get(j)
                if tau is not None:
                    out[j] = rot.mul(out[j], rot.axis_angle(rot.Y_AXIS, tau))
        return out


def bone_direction(a: rot.Vec, b: rot.Vec) -> rot.Vec | None:
    """Unit vector from ``a`` to ``b``, or ``None`` if they coincide."""
    return rot.unit((b[0] - a[0], b[1] - a[1], b[2] - a[2]))


def rig(skeleton: Skeleton) -> Rig:
    """The skeleton's cached ``Rig``."""
    cached = skeleton.__dict__.get("_rig")
    if cached is None:
        cached = Rig(skeleton)
        skeleton.__dict__["_rig"] = cached
    return cached


def pose_frames(skeleton: Skeleton, positions: np.ndarray) -> np.ndarray:
    """World frames of a pose by the swing rule (module docstring).

    Args:
        skeleton: the skeleton.
        positions: ``(n, 3)`` joint positions with the skeleton's bone lengths.

    Returns:
        ``(n, 4)`` unit quaternions (x, y, z, w).

    Raises:
        ValueError: naming ``positions``, for a wrong shape or NaN, inf or huge values.
    """
    check_skeleton(skeleton)
    xs, ys, zs = checks.columns(positions, "positions")
    n = len(skeleton.names)
    if len(xs) != n:
        raise ValueError(f"positions: expected shape ({n}, 3), got {np.shape(positions)}")
    frames = rig(skeleton).pose_frames(list(zip(xs, ys, zs)))
    return np.fromiter(chain.from_iterable(frames), float, 4 * n).reshape(n, 4)


def given_frames(skeleton: Skeleton, value: Any, name: str, positions: Any, root: Any = None) -> list[rot.Quat] | None:
    """``solve``'s ``rotations`` or ``relax_rotations`` checked, as tuples, turned with the root's
    goal (a ``fabrik3d.model.targets.Goal``) as ``Rig.bone_pose`` turns the pose; frames need the
    pose (``positions``) they are the frames of."""
    if value is None:
        return None
    other = "positions" if name == "rotations" else "relax_to"
    if positions is None:
        raise ValueError(f"{name}: given without {other} (they are the frames of that pose)")
    q = checks.frames(value, len(skeleton), name)
    rows: list[rot.Quat] = [tuple(row) for row in q.tolist()]  # type: ignore[misc]
    if root is not None and root.orientation is not None:
        turn = rot.mul(root.orientation, rot.conj(rows[skeleton.order[0]]))
        rows = [rot.mul(turn, f) for f in rows]
    return rows
