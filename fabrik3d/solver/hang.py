"""Free limbs hang: a limb without a target hangs under gravity, whatever the body under it does.

A limb named in ``Posing.hang`` (the presets' arms) that has no target and no pole does not ride on
its parent, as a branch without a target otherwise does (``fabrik3d.solver.tree``): it hangs. This
is Blender's "inherit rotation" off for the limb's base, with gravity's direction in place of the
rest pose's:

* **The stance.** Once per rig, the limb is posed hanging beside the upright body at rest: the hinge
  (an elbow) bent to ``HANG_BEND`` toward the front, about the axis across its bone and the body's
  forward (+Z), within its limits; then the base (a shoulder) turned so that the upper limb points
  ``HANG_OUT`` out from straight down, away from the body's midline, the bend toward the front, within
  its limits; the joints below the hinge (a wrist) as at rest.
* **Posed limbs follow.** A limb that does not hang in the pose the user built (``solve``'s
  ``relax_to``: an applied pose's arms, an arm turned by hand) was posed by the user: it follows the
  body, keeping its turns from its parent (``posed_limbs``), as a limb not in ``Posing.hang`` does.
* **Every solve.** The limb's base takes the stance's world frame turned only by the heading of its
  parent (the turn of the parent's frame from the stance about the world's up axis, +Y): a body that
  bends forward leaves its arm hanging straight down, a body that turns carries the arm's bend round
  with it. The base's turn is clamped to its own limits (``fk.clamped_turn``); the joints below it
  down to the effector take their stance rotations relative to their parents, and whatever hangs
  below (a hand's fingers) follows rigidly.

The **limb** of an effector is the natural solve's chain at its freest level (``NaturalSolve.chain``):
up from the effector's parent through the stiff joints held below the first free one (a wrist) and
the free ones (an elbow, a shoulder), to the first stiff joint above them (a clavicle: the trunk
it hangs from; a limb with no stiff joint above it does not hang). Its base is its topmost joint,
its hinge the base's child on the way down.

Positions are ``(x, y, z)`` and frames ``(x, y, z, w)`` tuples (``fabrik3d.rotations``), scene axes (Y up).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.posing import Posing, check_posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.fk import _pose, clamped_turn
from fabrik3d.solver.look import FORWARD
from fabrik3d.solver.rig import Rig, rig
from fabrik3d.solver.subtree import forward, local

# The upper limb's angle out from straight down, away from the body's midline (radians): the arm
# clears the hip.
HANG_OUT = math.radians(6.0)
# The hinge's bend toward the front (radians, between the upper and the lower limb, its bend at rest
# included): an elbow hanging relaxed is a little bent.
HANG_BEND = math.radians(15.0)
UP = (0.0, 1.0, 0.0)
# A limb of the pose the user built whose joints turn more than this (radians) from hanging was posed
# by the user (``posed_limbs``): it follows the body.
POSED_ANGLE = 1e-3


def hanging_limbs(skeleton: Skeleton, posing: Posing, busy: Any) -> dict[int, list[int]]:
    """effector index -> its limb's joints, from the effector's parent up to the base, for each
    effector of ``posing.hang`` not in ``busy`` (the targeted effectors, and those with a pole)."""
    out: dict[int, list[int]] = {}
    for name in sorted(posing.hang):
        e = skeleton.index(name)
        limb = limb_of(skeleton, posing, e)
        if e not in busy and limb:
            out[e] = limb
    return out


def limb_of(skeleton: Skeleton, posing: Posing, effector: int) -> list[int]:
    """The joints of the limb of ``effector`` (an index; module docstring) with ``posing``'s
    stiffness, from the effector's parent up to its base; empty where it has none to hang (no free
    joint above it, or no stiff trunk above them, or a single joint)."""
    stiff, parents = posing.stiffness, skeleton.parents
    limb: list[int] = []
    j, freed = int(parents[effector]), False
    while j >= 0:
        free = stiff.get(skeleton.names[j], 0.0) <= 0.0
        if not free and freed:
            return limb if len(limb) >= 2 else []
        freed = freed or free
        limb.append(j)
        j = int(parents[j])
    return []  # (no stiff trunk above the limb: nothing it hangs from)


def hung(
    skeleton: Skeleton,
    r: Rig,
    posing: Posing,
    busy: Any,
    pose: list[rot.Vec],
    frames: list[rot.Quat],
) -> tuple[list[rot.Vec], list[rot.Quat]]:
    """The pose ``pose`` (its world ``frames``) with every hanging limb hung (module docstring);
    ``busy``: the effectors (indices) that have a target or a pole, or that the user posed."""
    turned: dict[int, rot.Quat] = {}
    for e, limb in hanging_limbs(skeleton, posing, busy).items():
        turned.update(_hanging(skeleton, r, e, limb, frames))
    return forward(r, pose, frames, turned)


def posed_limbs(skeleton: Skeleton, r: Rig, posing: Posing, frames: list[rot.Quat] | None) -> set[int]:
    """The effectors of ``posing.hang`` whose limbs do not hang in the pose of world ``frames`` (the
    pose the user built: ``solve``'s ``relax_to``; None, the rest pose: none): the user posed them,
    and they follow the body, keeping their turns (an applied pose's arms, a limb turned by hand)."""
    if frames is None:
        return set()
    out = set()
    for e, limb in hanging_limbs(skeleton, posing, ()).items():
        for j, want in _hanging(skeleton, r, e, limb, frames).items():
            if rot.angle_between(local(r, frames, j), want) > POSED_ANGLE:
                out.add(e)
                break
    return out


def _hanging(skeleton: Skeleton, r: Rig, e: int, limb: list[int], frames: list[rot.Quat]) -> dict[int, rot.Quat]:
    """The rotations relative to their parents of the joints of effector ``e``'s ``limb`` hanging from
    its parent in the pose of world ``frames`` (module docstring); empty where it cannot hang."""
    stance = r.cached(("hang-stance", e, tuple(limb)), lambda: _stance(skeleton, r, e, limb))
    if stance is None:
        return {}
    parent_frame, locals_ = stance
    base = limb[-1]
    p = r.parents[base]
    heading = rot.axis_angle(UP, rot.twist_angle(rot.mul(frames[p], rot.conj(parent_frame)), UP))
    want = rot.mul(rot.mul(heading, parent_frame), locals_[base])  # (the base's world frame)
    turn = rot.mul(rot.conj(r.rest_local[base]), rot.mul(rot.conj(frames[p]), want))
    out = {j: locals_[j] for j in limb[:-1]}
    out[base] = rot.mul(r.rest_local[base], clamped_turn(r, base, rot.normalize_quat(turn)))
    return out


def hang_free_limbs(
    skeleton: Skeleton,
    positions: Any,
    rotations: Any,
    busy: Any = (),
    posing: Posing | None = None,
    built_rotations: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A pose (``positions`` ``(n, 3)`` scene units, ``rotations`` ``(n, 4)`` world frames x, y, z, w)
    with its free limbs hung, as a solve leaves them (module docstring): a pose turned by hand
    (``fabrik3d.solver.fk``) whose trunk turned shows its free arms hanging at once, not after the next
    solve. ``busy``: the names of the effectors that have a target or a pole, or that the user turned
    (they do not hang); ``posing``: default the skeleton's; ``built_rotations``: ``(n, 4)`` the world
    frames of the pose the user built, whose posed limbs do not hang (``posed_limbs``; None: none)."""
    posing = skeleton.posing if posing is None else check_posing(posing, skeleton)
    p, q = _pose(skeleton, positions, rotations)
    busy_at = {skeleton.index(n) for n in busy if isinstance(n, str) and n in skeleton}
    if built_rotations is not None:
        built = [tuple(v) for v in checks.frames(built_rotations, len(skeleton), "built_rotations").tolist()]
        busy_at |= posed_limbs(skeleton, rig(skeleton), posing, built)  # type: ignore[arg-type]
    if not hanging_limbs(skeleton, posing, busy_at):
        return p, q
    pose, frames = hung(
        skeleton, rig(skeleton), posing, busy_at, [tuple(v) for v in p.tolist()], [tuple(v) for v in q.tolist()]
    )
    return np.array(pose, dtype=float), np.array(frames, dtype=float)


def _stance(skeleton: Skeleton, r: Rig, e: int, limb: list[int]) -> tuple[rot.Quat, dict[int, rot.Quat]] | None:
    """The limb of effector ``e`` hanging beside the upright body at rest (module docstring): its
    base's parent's world frame and the limb's joints' rotations relative to their parents (the
    hinge's bend and the base's turn each within the joint's limits); None where the limb has no
    length to hang."""
    rest = [tuple(v) for v in skeleton.rest_positions.tolist()]
    base, hinge = limb[-1], limb[-2]
    below = limb[-3] if len(limb) >= 3 else e
    upper = rot.unit(rot.sub(rest[hinge], rest[base]))
    lower = rot.unit(rot.sub(rest[below], rest[hinge]))
    ahead = rot.unit((FORWARD[0], 0.0, FORWARD[2]))
    side = rot.sub(rest[base], rest[skeleton.root])
    side = rot.unit((side[0], 0.0, side[2]))
    if upper is None or lower is None or ahead is None:
        return None
    # the hinge bent forward (to HANG_BEND in all, with its bend at rest), about the axis across its
    # bone and the body's forward
    axis = rot.unit(rot.cross(lower, ahead)) or rot.unit(rot.cross(lower, UP)) or (1.0, 0.0, 0.0)
    at_rest = math.acos(max(-1.0, min(1.0, rot.dot(upper, lower))))
    bend = rot.axis_angle(axis, max(0.0, HANG_BEND - at_rest))
    frames = r.rest_frames
    hinge_turn = rot.mul(rot.conj(frames[base]), rot.mul(bend, frames[hinge]))  # (the hinge's local frame)
    hinge_turn = rot.mul(rot.conj(r.rest_local[hinge]), hinge_turn)
    hinge_local = rot.mul(r.rest_local[hinge], clamped_turn(r, hinge, rot.normalize_quat(hinge_turn)))
    lower = rot.rotate(rot.mul(frames[base], rot.mul(hinge_local, rot.conj(frames[hinge]))), lower)
    # the upper limb down, HANG_OUT out from the midline; the lower limb's bend toward the front
    out = (0.0, 0.0, 0.0) if side is None else rot.add(side, ahead, -rot.dot(side, ahead))
    d1 = rot.unit(rot.add(rot.add((0.0, 0.0, 0.0), (0.0, -1.0, 0.0), math.cos(HANG_OUT)), out, math.sin(HANG_OUT)))
    assert d1 is not None
    first = rot.swing(upper, d1, ahead)
    turned, front = rot.rotate(first, lower), rot.add(ahead, d1, -rot.dot(ahead, d1))
    a = rot.add(turned, d1, -rot.dot(turned, d1))
    angle = math.atan2(rot.dot(rot.cross(a, front), d1), rot.dot(a, front)) if rot.unit(a) else 0.0
    whole = rot.mul(rot.axis_angle(d1, angle), first)
    p = r.parents[base]
    base_turn = rot.mul(rot.conj(r.rest_local[base]), rot.mul(rot.conj(frames[p]), rot.mul(whole, frames[base])))
    locals_ = {j: r.rest_local[j] for j in limb}
    locals_[base] = rot.mul(r.rest_local[base], clamped_turn(r, base, rot.normalize_quat(base_turn)))
    locals_[hinge] = hinge_local
    return frames[p], locals_
