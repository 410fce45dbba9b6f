"""The reaching passes of the constrained solver (``fabrik3d.solver.constrained.solve``), with limits.

Stage 1 (effectors inward) applies each joint's limit inverted: the parent's frame
turns by the least rotation that puts the child's bone inside the child's limit.
Stage 2 (root outward) aims each joint's bone at its child's stage-1 point in the
parent's fresh frame, then limits it (swing, then twist). Rigid joints take the
best rigid fit of their children (one proposer: the minimal rotation; two: the
minimal rotation of the line between them; three or more: weighted Horn fit). A
hinge that FABRIK folds the wrong way swivels its parent's aim (``swivel_for_hinge``).
Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``).
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.limits import clamp_angle, limit_motion

if TYPE_CHECKING:
    from fabrik3d.model.targets import Goal
    from fabrik3d.solver.effort import Effort
    from fabrik3d.solver.rig import Rig

# A hinge that needs a larger correction than this (a chord of its unit direction) swivels its
# parent's aim: SWIVELS turns about the line to the grandchild, then SWIVEL_REFINE halvings.
SWIVEL_MISFIT = 0.2
SWIVELS = 12
SWIVEL_REFINE = 5


class ReachingPasses:
    """Mixin of ``LimitedSolve``: stage 1 and stage 2 with limits, rigid fits, effector frames."""

    r: Rig
    goals: dict[int, Goal]
    effort: Effort  # (``LimitedSolve``'s)
    down: list[int]
    kids: list[list[tuple[int, float]]]
    hinged: list[bool]
    offset_dir: list[rot.Vec]
    yield_share: float
    root_frame: rot.Quat | None
    # joint -> its turn about its bone (radians, from its rest frame in its parent's): what the
    # start's frames carry and every frame of this joint built here keeps (``carry``)
    twists: dict[int, float]
    # leaf -> its rotation relative to its parent's frame, kept likewise (a hand turned at the wrist)
    leaves: dict[int, rot.Quat]

    def carry(self, frames: list[rot.Quat]) -> None:
        """Keep what ``frames`` turn beyond the swing rule through this solve (``Rig.carried_turns``:
        turns about the bones, leaves' turns; a leaf with an orientation target turns toward it)."""
        oriented = {j for j, g in self.goals.items() if g.orientation is not None}
        self.twists, self.leaves = self.r.carried_turns(frames, oriented)

    # -- stage 1: effectors inward ---------------------------------------------------------------
    def stage1(self, pose: list[rot.Vec], frames: list[rot.Quat]) -> tuple[list[rot.Vec], list[rot.Quat]]:
        r = self.r
        q = list(pose)
        qf = list(frames)
        for j in self.down:
            g = self.goals.get(j)
            if g is not None:
                q[j] = g.position
                if g.orientation is not None:
                    qf[j] = g.orientation
                continue
            kids = self.kids[j]
            if r.rigid[j]:
                q[j], qf[j] = self.rigid_stage1(j, pose[j], frames[j], q, kids)
            elif len(kids) == 1:
                q[j], qf[j] = self.reach_inward(j, kids[0][0], pose, frames, q, qf)
            else:
                sx = sy = sz = sw = 0.0
                for c, w in kids:
                    d = rot.unit(_sub(pose[j], q[c])) or rot.unit(_sub(pose[j], pose[c]))
                    assert d is not None
                    p = _add(q[c], d, r.lengths[c])
                    sx, sy, sz, sw = sx + w * p[0], sy + w * p[1], sz + w * p[2], sw + w
                q[j] = (sx / sw, sy / sw, sz / sw)
        return q, qf

    def reach_inward(
        self, j: int, c: int, pose: list[rot.Vec], frames: list[rot.Quat], q: list[rot.Vec], qf: list[rot.Quat]
    ) -> tuple[rot.Vec, rot.Quat]:
        """Stage-1 position and frame of joint ``j`` from its one active child ``c``."""
        r = self.r
        e_c = self.offset_dir[c]
        old_bone = rot.rotate(frames[j], e_c)
        bone = rot.unit(_sub(q[c], pose[j])) or old_bone
        g = self.goals.get(c)
        if g is not None and g.orientation is not None:
            # A leaf copies its parent's rest frame, so its frame carries the bone as e_c.
            wanted = rot.rotate(g.orientation, e_c)
            w = g.weight * self.yield_share  # position wins: the share yields while stalled
            bone = rot.unit(_add(tuple(x * (1.0 - w) for x in bone), wanted, w)) or wanted  # type: ignore[arg-type]
        limit = r.limits[c].swing
        if limit is None and r.limits[j].swing is None:  # no limit needs this frame
            return _add(q[c], bone, -r.lengths[c]), frames[j]
        frame = rot.mul(rot.swing(old_bone, bone, rot.x_axis(frames[j])), frames[j])
        if limit is not None:
            # Inverted limit: turn this joint's frame so the child's bone lies within its limit.
            local = rot.rotate_inv(frame, rot.y_axis(qf[c]))
            previous = rot.rotate_inv(frames[j], rot.y_axis(frames[c]))
            allowed = limit.project(local, previous)
            if allowed != local:
                frame = rot.mul(frame, rot.swing(allowed, local, r.rest_x[c]))
                bone = rot.rotate(frame, e_c)
        return _add(q[c], bone, -r.lengths[c]), frame

    def rigid_stage1(
        self, j: int, pj: rot.Vec, fj: rot.Quat, q: list[rot.Vec], kids: list[tuple[int, float]]
    ) -> tuple[rot.Vec, rot.Quat]:
        """Best rigid fit (position and frame) of a rigid joint to its children's stage-1 points."""
        r = self.r
        turn = self.rigid_turn(pj, fj, q, kids, centred=True)
        frame = rot.mul(turn, fj) if len(kids) < 3 else turn
        sx = sy = sz = sw = 0.0
        for c, w in kids:
            p = _sub(q[c], rot.rotate(frame, r.offset[c]))
            sx, sy, sz, sw = sx + w * p[0], sy + w * p[1], sz + w * p[2], sw + w
        return (sx / sw, sy / sw, sz / sw), frame

    def rigid_turn(
        self, pj: rot.Vec, fj: rot.Quat, q: list[rot.Vec], kids: list[tuple[int, float]], centred: bool
    ) -> rot.Quat:
        """Fit of a rigid joint at ``pj`` with frame ``fj`` to its children's points ``q``.

        One or two proposers: the turn to apply to ``fj`` (the minimal rotation of
        the child's offset onto its direction from ``pj``, or of the line between
        the two); three or more: the fitted frame itself (Horn), with translation
        when ``centred`` (stage 1), else about ``pj`` (stage 2).
        """
        r = self.r
        if len(kids) == 1:
            c = kids[0][0]
            a, b = rot.unit(rot.rotate(fj, r.offset[c])), rot.unit(_sub(q[c], pj))
            if a is None or b is None:
                return rot.IDENTITY
            return rot.swing(a, b, rot.rotate(fj, rot.X_AXIS))
        if len(kids) == 2:
            (c1, _), (c2, _) = kids
            a = rot.unit(rot.rotate(fj, _sub(r.offset[c2], r.offset[c1])))
            b = rot.unit(_sub(q[c2], q[c1]))
            if a is None or b is None:
                return rot.IDENTITY
            return rot.swing(a, b, rot.rotate(fj, rot.X_AXIS))
        ws = [w for _, w in kids]
        src = [r.offset[c] for c, _ in kids]
        dst = [_sub(q[c], pj) for c, _ in kids]
        if centred:
            total = sum(ws)
            ms = tuple(sum(w * s[i] for w, s in zip(ws, src)) / total for i in range(3))
            md = tuple(sum(w * d[i] for w, d in zip(ws, dst)) / total for i in range(3))
            src = [_sub(s, ms) for s in src]  # type: ignore[arg-type]
            dst = [_sub(d, md) for d in dst]  # type: ignore[arg-type]
        return rot.fit_rotation(src, dst, ws, fj)

    # -- stage 2: root outward -----------------------------------------------------------------
    def stage2(
        self,
        q: list[rot.Vec],
        qf: list[rot.Quat],
        start: list[rot.Vec],
        old: list[rot.Quat],
        active: list[bool],
        up: list[int],
        kids: list[list[tuple[int, float]]],
        rng: random.Random | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Place active joints outward from the fixed root, limiting each frame.

        With ``rng``, every bone aims in a random direction instead (a restart). It spends a unit of
        the solve's effort a joint (``fabrik3d.solver.effort``).
        """
        r = self.r
        self.effort.spend(len(up))
        parents, children, first_child, lengths, hinged = r.parents, r.children, r.first_child, r.lengths, self.hinged
        pose = list(q)
        frames = list(old)
        root = r.order[0]
        pose[root] = start[root]
        for j in up:
            p = parents[j]
            fp = frames[p] if p >= 0 else rot.IDENTITY
            pj = pose[j]
            if not children[j]:
                frames[j] = self.effector_frame(j, fp)
                continue
            if r.rigid[j]:
                if p < 0:  # the root's body keeps its frame, within its own limits (to its rest frame)
                    frames[j] = self.limit_frame(
                        j, rot.IDENTITY, old[j] if self.root_frame is None else self.root_frame
                    )
                else:
                    turn = self.rigid_turn(pj, old[j], q, kids[j], centred=False)
                    fit = rot.mul(turn, old[j]) if len(kids[j]) < 3 else turn
                    if rng is not None:
                        fit = rot.normalize_quat(tuple(rng.gauss(0.0, 1.0) for _ in range(4)))  # type: ignore[arg-type]
                    frames[j] = self.limit_frame(j, fp, fit)
                for c in children[j]:
                    pose[c] = _add(pj, rot.rotate(frames[j], r.offset[c]))
                continue
            first = first_child[j]
            if active[first]:
                aim = rot.unit(_sub(q[first], pj)) or rot.y_axis(old[j])
                if rng is not None:
                    aim = rot.unit(tuple(rng.gauss(0.0, 1.0) for _ in range(3))) or aim  # type: ignore[arg-type]
                previous = None
                if hinged[j]:  # a hinge keeps its angle when the bone runs along its axis
                    previous = rot.rotate_inv(old[p], rot.y_axis(old[j])) if p >= 0 else rot.y_axis(old[j])
                frames[j] = self.aim_frame(j, fp, aim, previous)
                if rng is None and hinged[first] and active[first_child[first]]:
                    if r.rolls[j]:
                        frames[j] = self.roll_for_hinge(j, first, pj, frames[j], q)
                    frames[j] = self.swivel_for_hinge(j, first, fp, pj, frames[j], q, previous)
            elif p >= 0:
                frames[j] = rot.mul(fp, rot.mul(rot.conj(old[p]), old[j]))
            for c, _ in kids[j]:
                if c == first:
                    pose[c] = _add(pj, rot.y_axis(frames[j]), lengths[c])
                else:
                    d = rot.unit(_sub(q[c], pj)) or rot.unit(_sub(start[c], start[j]))
                    assert d is not None
                    pose[c] = _add(pj, d, lengths[c])
        return pose, frames

    def aim_frame(self, j: int, fp: rot.Quat, aim: rot.Vec, previous: rot.Vec | None) -> rot.Quat:
        """Frame of non-rigid joint ``j`` whose bone aims along ``aim``, within its swing limit."""
        r = self.r
        local = rot.rotate_inv(fp, aim)
        limit = r.limits[j].swing
        if limit is not None:
            local = limit.project(local, previous)
        frame = rot.mul(fp, rot.mul(rot.swing(r.rest_dir[j], local, r.rest_x[j]), r.rest_local[j]))
        tau = self.twists.get(j)
        return frame if tau is None else rot.mul(frame, rot.axis_angle(rot.Y_AXIS, tau))

    def roll_for_hinge(self, j: int, c: int, pj: rot.Vec, frame: rot.Quat, q: list[rot.Vec]) -> rot.Quat:
        """``frame`` of a rolling joint ``j`` (``Rig.rolls``: an upper arm, a thigh) twisted about its
        bone, within its ``Twist`` limit, so that child ``c``'s hinge plane holds the grandchild's
        stage-1 point, bent the way the hinge allows (of the two twists that do, the smaller).

        The child's bone ``t`` in ``j``'s frame turned by ``τ`` about the bone is ``R_y(-τ)·t``;
        it lies in the hinge's plane where ``a·R_y(-τ)·t = 0``, i.e. ``A cos θ + B sin θ = -C``
        with ``θ = -τ``, ``A = a_x t_x + a_z t_z``, ``B = a_x t_z - a_z t_x``, ``C = a_y t_y``.
        """
        r = self.r
        hinge = r.limits[c].swing
        pc = _add(pj, rot.y_axis(frame), r.lengths[c])
        w = rot.unit(_sub(q[r.first_child[c]], pc))
        if w is None:
            return frame
        tx, ty, tz = rot.rotate_inv(frame, w)
        ax, ay, az = hinge.a  # type: ignore[union-attr]
        big_a, big_b, big_c = ax * tx + az * tz, ax * tz - az * tx, ay * ty
        radius = math.sqrt(big_a * big_a + big_b * big_b)
        if radius < 1e-9:
            return frame  # the child's bone runs along this bone: any roll serves
        base = math.atan2(big_b, big_a)
        spread = math.acos(max(-1.0, min(1.0, -big_c / radius)))
        lo, hi = r.limits[j].twist  # type: ignore[misc]
        best: tuple[float, float] | None = None
        for theta in (base + spread, base - spread):
            c_, s_ = math.cos(theta), math.sin(theta)
            turned = (tx * c_ + tz * s_, ty, -tx * s_ + tz * c_)
            phi = hinge.angle(turned)  # type: ignore[union-attr]
            tau = (-theta + math.pi) % (2.0 * math.pi) - math.pi
            miss = 0.0 if phi is None else max(hinge.lo - phi, phi - hinge.hi, 0.0)  # type: ignore[union-attr]
            key = (miss, abs(tau))
            if best is None or key < best:
                best = key
                chosen = tau
        return rot.mul(frame, rot.axis_angle(rot.Y_AXIS, clamp_angle(chosen, lo, hi)))

    def swivel_for_hinge(
        self,
        j: int,
        c: int,
        fp: rot.Quat,
        pj: rot.Vec,
        frame: rot.Quat,
        q: list[rot.Vec],
        previous: rot.Vec | None,
    ) -> rot.Quat:
        """Turn ``j``'s aim about the line to its grandchild so that child ``c``'s hinge can bend.

        A hinge bends one way only: FABRIK, which keeps bends on the side where
        they were, can fold it the wrong way, where the limit straightens it.
        Turning the child's point about the line from ``j`` to the grandchild
        keeps every bone length; of twelve turns, the one whose hinge angle needs
        the least correction wins (no turn when none is needed).
        """
        r = self.r
        g = r.first_child[c]
        hinge = r.limits[c].swing
        axis = rot.unit(_sub(q[g], pj))
        if axis is None:
            return frame

        def misfit(f: rot.Quat) -> float:
            pc = _add(pj, rot.y_axis(f), r.lengths[c])
            d = rot.unit(_sub(q[g], pc))
            if d is None:
                return 0.0
            local = rot.rotate_inv(f, d)
            allowed = hinge.project(local, None)  # type: ignore[union-attr]
            return rot.dist(local, allowed)

        if misfit(frame) < SWIVEL_MISFIT:
            return frame
        v = _sub(q[c], pj)

        def turned(angle: float) -> rot.Quat | None:
            aim = rot.unit(rot.rotate(rot.axis_angle(axis, angle), v))
            return None if aim is None else self.aim_frame(j, fp, aim, previous)

        # The smallest turn (either way, found coarsely, then refined) that lets the hinge bend.
        step = 2.0 * math.pi / SWIVELS
        for k in range(1, SWIVELS // 2 + 1):
            for sign in (1.0, -1.0):
                f = turned(sign * k * step)
                if f is None or misfit(f) >= SWIVEL_MISFIT:
                    continue
                lo, hi = (k - 1) * step, k * step
                for _ in range(SWIVEL_REFINE):
                    mid = 0.5 * (lo + hi)
                    h = turned(sign * mid)
                    if h is not None and misfit(h) < SWIVEL_MISFIT:
                        hi, f = mid, h
                    else:
                        lo = mid
                return f
        return frame

    def effector_frame(self, j: int, fp: rot.Quat) -> rot.Quat:
        """A leaf's frame: its parent's, turned about the bone toward an orientation target."""
        r = self.r
        base = rot.mul(fp, r.rest_local[j])
        g = self.goals.get(j)
        if g is None or g.orientation is None:
            held = self.leaves.get(j)
            return base if held is None else rot.mul(fp, held)
        tau = rot.twist_angle(rot.mul(rot.conj(base), g.orientation), rot.Y_AXIS)
        limit = r.limits[j].twist
        if limit is not None:
            tau = clamp_angle(tau, *limit)
        return rot.mul(base, rot.axis_angle(rot.Y_AXIS, tau))

    def limit_frame(self, j: int, fp: rot.Quat, frame: rot.Quat) -> rot.Quat:
        """``frame`` with the joint's swing and twist limits applied (relative to ``fp``)."""
        r = self.r
        lim = r.limits[j]
        if lim.swing is None and lim.twist is None:
            return frame

        motion = rot.mul(rot.mul(rot.conj(fp), frame), rot.conj(r.rest_local[j]))
        motion = limit_motion(lim, r.rest_dir[j], r.rest_x[j], motion)
        return rot.mul(fp, rot.mul(motion, r.rest_local[j]))
