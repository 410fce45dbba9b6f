"""The torso follows a far hand: a hand driven forward beyond its arm's reach (a punch, a long reach)
turns the spine toward it, about the body's vertical, before the arm reaches.

The natural solve relaxes the stiff joints toward a pose (the rest pose, or the pose the user built)
and turns them only as much as reaching needs (``fabrik3d.solver.natural``): a hand beyond its arm then
brings in the stiff joint that costs least first, the clavicle, and the chest hardly turns (7 deg at
the median for a punch). A body turns its chest into a punch. So the pose the body relaxes to is turned
first, about the spine's bones (their twist), toward such a target:

* an effector's **limb** is the one that would hang (``hang.limb_of``: the shoulder, elbow and
  wrist), its **base** the topmost (the shoulder), its **trunk** the joints at least
  ``hinge.HINGE_STIFFNESS`` stiff above it (the chest and spine, past a clavicle);
* for a target ahead of the base (within about 75 deg of the body's forward, ``FOLLOW_AHEAD``: not a hand
  hanging beside the body or reaching down, up or out to the side) at ``rho`` arm lengths from it,
  the trunk turns by ``w(rho)`` times the angle, about the vertical through the root, that brings the
  base in line with the target (capped at ``FOLLOW_MAX``), with ``w`` rising smoothly from 0 at
  ``FOLLOW_FROM`` (a reach the arm makes alone: no turn) to 1 at ``FOLLOW_FULL``;
* the turn is taken by the trunk's rigid joints (the chest, whose frame its children's places give:
  the clavicles and the neck turn with it, and no bone is twisted beyond the swing rule), shared
  equally, each within its own limits (``fk.clamped_turn``: the humanoid's chest turns 15 deg at
  most; the spine below follows as reaching needs).

The turn is a smooth function of the targets, so a drag turns the chest gradually.

Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``), scene axes (Y
up, facing +Z).
"""

from __future__ import annotations

import math

from fabrik3d import rotations as rot
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal
from fabrik3d.solver.fk import clamped_turn
from fabrik3d.solver.hang import limb_of
from fabrik3d.solver.hinge import HINGE_STIFFNESS, smoothstep
from fabrik3d.solver.look import FORWARD
from fabrik3d.solver.rig import Rig
from fabrik3d.solver.subtree import local

# The reach (target's distance from the limb's base over the limb's length) where the trunk begins to
# turn toward it, and where it turns in full: a reach the arm makes alone leaves the chest alone.
FOLLOW_FROM = 0.95
FOLLOW_FULL = 1.05
# A target turns the trunk only if it lies ahead of the shoulder: the cosine of its direction's angle
# from the body's forward at least this (within about 75 deg of it).
FOLLOW_AHEAD = 0.25
# The largest turn of the trunk toward a target (radians).
FOLLOW_MAX = math.radians(30.0)


def follow_turns(
    skeleton: Skeleton,
    r: Rig,
    posing: Posing,
    goals: dict[int, Goal],
    pose: list[rot.Vec],
    frames: list[rot.Quat],
) -> dict[int, rot.Quat]:
    """The trunk joints' rotations relative to their parents in the relaxed pose ``pose`` (world
    ``frames``), turned toward the far targets of ``goals`` (module docstring); empty where none turns it."""
    names, stiff = skeleton.names, posing.stiffness
    root = r.order[0]
    yaw, trunk = 0.0, []
    for e, g in goals.items():
        if names[e] not in posing.reach:
            continue  # (the posing never lets the trunk join this chain)
        limb = limb_of(skeleton, posing, e)
        if not limb:
            continue
        base, length = limb[-1], sum(r.lengths[j] for j in (e, *limb[:-1]))
        joints, j = [], r.parents[base]
        while j >= 0 and j != root and stiff.get(names[j], 0.0) < HINGE_STIFFNESS:
            j = r.parents[j]  # (a clavicle: between the arm and the trunk)
        while j >= 0 and j != root and stiff.get(names[j], 0.0) >= HINGE_STIFFNESS:
            joints.append(j)
            j = r.parents[j]
        if not joints or length <= 0.0:
            continue
        to = rot.sub(g.position, pose[base])
        far = math.sqrt(rot.dot(to, to))
        if rot.dot(to, FORWARD) <= FOLLOW_AHEAD * far:
            continue  # (not ahead: a hand hanging or reaching down, up or aside turns no chest)
        w = smoothstep((far / length - FOLLOW_FROM) / (FOLLOW_FULL - FOLLOW_FROM))
        if w <= 0.0:
            continue
        a, b = rot.sub(pose[base], pose[root]), rot.sub(g.position, pose[root])
        angle = math.atan2(a[2] * b[0] - a[0] * b[2], a[0] * b[0] + a[2] * b[2])  # (about +Y, from a to b)
        yaw += w * max(-FOLLOW_MAX, min(FOLLOW_MAX, angle))
        trunk = trunk or [j for j in joints if r.rigid[j]]
    if abs(yaw) < 1e-12 or not trunk:
        return {}
    yaw = max(-FOLLOW_MAX, min(FOLLOW_MAX, yaw))
    out = {}
    for j in trunk:
        now = local(r, frames, j)  # (a turn about the joint's own bone: +Y of its frame)
        turn = rot.mul(rot.conj(r.rest_local[j]), rot.mul(now, rot.axis_angle(rot.Y_AXIS, yaw / len(trunk))))
        out[j] = rot.mul(r.rest_local[j], clamped_turn(r, j, rot.normalize_quat(turn)))
    return out
