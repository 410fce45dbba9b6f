"""Damped least-squares steps for the constrained solver (``fabrik3d.limited``).

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
from typing import TYPE_CHECKING

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import cross as _cross
from fabrik3d.rotations import sub as _sub

if TYPE_CHECKING:
    from fabrik3d.frames import Rig
    from fabrik3d.targets import Goal

_Y = (0.0, 1.0, 0.0)
# Orientation targets count toward reaching until their share has yielded below this.
ORIENTATION_IN_FORCE = 0.1


class DampedSteps:
    """Mixin of ``LimitedSolve``: forward kinematics and damped least-squares steps."""

    r: Rig
    goals: dict[int, Goal]
    up: list[int]
    turnable: list[int]
    hinged: list[bool]
    leaf_dir: dict[int, rot.Vec]
    effectors_beneath: dict[int, list[int]]
    yield_share: float

    def forward(
        self, pose: list[rot.Vec], frames: list[rot.Quat], turned: dict[int, rot.Quat]
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """Forward kinematics: every active joint keeps its offset and rotation relative to its
        parent, but the ``turned`` joints take their new rotations (relative to the parent)."""
        r = self.r
        new_pose, new_frames = list(pose), list(frames)
        for x in self.up:
            p = r.parents[x]
            if p < 0:
                new_frames[x] = turned.get(x, frames[x])
                continue
            inv = rot.conj(frames[p])
            local = turned.get(x)
            if local is None:
                local = rot.mul(inv, frames[x])
            new_frames[x] = rot.mul(new_frames[p], local)
            new_pose[x] = _add(new_pose[p], rot.rotate(new_frames[p], rot.rotate(inv, _sub(pose[x], pose[p]))))
        return new_pose, new_frames

    def damped_step(
        self, pose: list[rot.Vec], frames: list[rot.Quat], damping: float
    ) -> tuple[list[rot.Vec], list[rot.Quat]]:
        """One damped least-squares step on the joints' turns (the Jacobian of the effectors'
        positions is ``u × (P_e − P_j)`` for each turning axis ``u`` of a joint ``j`` above
        ``e``: the hinge axis, two axes across a ball joint's bone, three for a rigid body),
        then each joint's new rotation is limited and the pose rebuilt by forward kinematics."""
        r = self.r
        goals = self.goals
        rows = {e: 3 * k for k, e in enumerate(goals)}
        columns: list[tuple[int, rot.Vec]] = []
        for j in self.turnable:
            if r.rigid[j]:
                axes = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
            elif self.hinged[j]:
                p = r.parents[j]
                axes = [rot.rotate(frames[p] if p >= 0 else rot.IDENTITY, r.limits[j].swing.a)]  # type: ignore[union-attr]
            else:
                bone = rot.rotate(frames[j], _Y)
                u = rot.unit(rot._perpendicular(bone))
                assert u is not None
                axes = [u, _cross(bone, u)]
            columns.extend((j, u) for u in axes)
        # Orientation targets add their last bone's direction, scaled by its length and by the
        # share of their weight still in force: residual L (wanted - current), rows L (u x d).
        turning: list[tuple[int, float, rot.Vec, rot.Vec]] = []
        if self.yield_share > ORIENTATION_IN_FORCE:
            for e, g in goals.items():
                bone = rot.unit(_sub(pose[e], pose[r.parents[e]]))
                if g.orientation is not None and bone is not None:
                    scale = g.weight * self.yield_share * r.lengths[e]
                    turning.append((e, scale, bone, rot.rotate(g.orientation, self.leaf_dir[e])))
        size = 3 * (len(goals) + len(turning))
        jac = np.zeros((size, len(columns)))
        for k, (j, u) in enumerate(columns):
            pj = pose[j]
            for e in self.effectors_beneath[j]:
                jac[rows[e] : rows[e] + 3, k] = _cross(u, _sub(pose[e], pj))
            for m, (e, scale, bone, _) in enumerate(turning):
                if e in self.effectors_beneath[j]:
                    row = 3 * (len(goals) + m)
                    jac[row : row + 3, k] = [scale * c for c in _cross(u, bone)]
        err = np.array(
            [c for e, g in goals.items() for c in _sub(g.position, pose[e])]
            + [scale * c for _, scale, bone, wanted in turning for c in _sub(wanted, bone)]
        )
        step = jac.T @ np.linalg.solve(jac @ jac.T + damping**2 * np.eye(len(err)), err)
        spin: dict[int, list[float]] = {}
        for (j, u), a in zip(columns, step.tolist()):
            w = spin.setdefault(j, [0.0, 0.0, 0.0])
            w[0], w[1], w[2] = w[0] + a * u[0], w[1] + a * u[1], w[2] + a * u[2]
        turned: dict[int, rot.Quat] = {}
        for j, w in spin.items():
            angle = math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
            if angle < 1e-15:
                continue
            turn = rot.axis_angle((w[0] / angle, w[1] / angle, w[2] / angle), min(angle, 0.5))
            p = r.parents[j]
            fp = frames[p] if p >= 0 else rot.IDENTITY
            if r.rigid[j]:
                new = self.limit_frame(j, fp, rot.mul(turn, frames[j]))
            else:
                bone = rot.rotate(frames[j], _Y)
                local = rot.rotate(rot.conj(fp), rot.rotate(turn, bone))
                limit = r.limits[j].swing
                if limit is not None:
                    local = limit.project(local, rot.rotate(rot.conj(fp), bone) if self.hinged[j] else None)
                new = rot.mul(fp, rot.mul(rot.swing(r.rest_dir[j], local, r.rest_x[j]), r.rest_local[j]))
            turned[j] = rot.mul(rot.conj(fp), new)
        return self.forward(pose, frames, turned)

    # -- poles and untargeted branches -----------------------------------------------------------
