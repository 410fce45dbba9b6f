"""Hip hinge: a reach low and in front, beyond the limb, tilts the pelvis forward.

With natural posing, a hand's chain runs up the spine (its ``reach``), and a target beyond the arm
pulled the spine any way it could (sideways too), the pelvis upright. A body bends at the hips
instead (FinalIK's body tilt, Cascadeur's pelvis): where the feet are planted (another target
outside the reaching chain's subtree) and a limb's target lies below its base, more in front of it
than beside, and beyond ``HINGE_SLACK`` of the limb's length from it, the pelvis turns forward about
the body's side axis, by the least angle
(up to ``MAX_HINGE``) that brings every such limb's base within that share of its target, and
the limb reaches from there without the spine (its chain stops at the limb's base): the spine stays
straight, the legs follow with the feet where they are. As the pelvis pitches, the hips **step back**
so the centre of mass stays over the feet (``counterweight``, read off the mass model; a low reach's
step: in full for a target at half the hips' height or below, none from their height up), and **lower**
so that each planted leg reaches its foot within ``LEG_REACH`` of its length (or as stretched as it
stands upright, straighter than that: no drop without a hinge); a reach far in front
that the step back puts out of reach hinges without it (``hinge``'s ``counter``).

The **limb** of an effector is the run of joints above it less stiff than ``HINGE_STIFFNESS``
(the presets' arm and clavicle); its **base** is the topmost of them, whose parent is the trunk.
The tilt is measured from the pose the body relaxes to (``relax_to``, else rest): when the target
comes back up the pelvis turns back, and steps forward again to where it stood upright (the start's
tilt undoes its own step back), at the height of the pose the body relaxes to. Only where the pelvis
would turn does this change a solve.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import mass
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Goal
from fabrik3d.solver.look import FORWARD
from fabrik3d.solver.rig import Rig

# Joints at least this stiff are the trunk (the presets' spine and chest, 0.7); the limb is below.
HINGE_STIFFNESS = 0.5
# The limb reaches from its base to within this share of its length (an arm comfortably bent).
HINGE_SLACK = 0.8
# The deepest hinge (radians).
MAX_HINGE = math.radians(90.0)
# A target beyond the deepest hinge's reach tilts the pelvis only if that brings the limb's base this
# much nearer it (a share of the limb's length).
HINGE_GAIN = 0.1
# A planted leg straightens to at most this share of its length as the hips step back (the pelvis lowers).
LEG_REACH = 0.97
# Bisection steps for the tilt (2^-30 of MAX_HINGE).
HINGE_STEPS = 30


def hinge(
    skeleton: Skeleton,
    r: Rig,
    goals: dict[int, Goal],
    start: list[rot.Vec],
    posing: Posing,
    relax: list[rot.Vec] | None,
    counter: bool = True,
) -> tuple[Goal, Posing, Goal] | None:
    """The root's goal (where it stands, tilted, moved back), the posing to solve with and the root's
    goal upright where it stands (for a solve without the hinge), or None to solve as without a hinge
    (module docstring).

    Args:
        skeleton, r: the skeleton and its rig.
        goals: the targets by effector index.
        start: the start pose (the root stays where it is in it).
        posing: the natural posing (its stiffness and reach).
        relax: the pose the body relaxes to (None: rest); its root's frame is upright.
        counter: whether the hips step back to keep the weight over the feet (``counterweight``); a
            reach far in front that the step back puts out of reach hinges without it.
    """
    root = skeleton.root
    stiff = posing.stiffness
    names = skeleton.names
    limbs: dict[int, tuple[int, float]] = {}
    for e in goals:
        top = posing.reach.get(names[e])
        if top is None:
            continue  # (the posing never lets the trunk join this chain)
        base, length = e, 0.0
        while r.parents[base] >= 0 and stiff.get(names[r.parents[base]], 0.0) < HINGE_STIFFNESS:
            length += r.lengths[base]
            base = r.parents[base]
        trunk, t = r.parents[base], skeleton.index(top)
        if trunk < 0 or base == e or not r.within(t, trunk):
            continue  # (no trunk above the limb, or not on the chain)
        if any(f != e and not r.within(t, f) for f in goals):  # (planted: a target outside the chain's subtree)
            limbs[e] = (base, length)
    if not limbs:
        return None
    reference = reference_frame(r, relax)
    now = reference if _upright(r, start, reference) else start_frame(r, start)
    untilt = rot.mul(reference, rot.conj(now))  # (the start turned upright about the root)
    fx, _, fz = rot.rotate(reference, rot.rotate_inv(r.rest_frames[root], FORWARD))
    n = math.hypot(fx, fz)
    if n < 1e-9:
        return None
    forward, axis = (fx / n, 0.0, fz / n), (fz / n, 0.0, -fx / n)  # (axis: up x forward, the body's side)
    top = skeleton.index(posing.reach[names[next(iter(limbs))]])
    full = counterweight(skeleton, r, relax, top, forward, axis) if counter else (lambda t: 0.0)
    # (the step back is a low reach's: all of it for a target at half the hips' height or below, none
    # from the hips' height up, smoothly between; a reach in front at chest height leans the body, and
    # balance, where asked, moves the hips)
    hips = (r.rest_start if relax is None else relax)[root][1] - mass.rest_ground(skeleton)
    low = min(goals[e].position[1] for e in limbs) - mass.rest_ground(skeleton)
    share = smoothstep(2.0 - 2.0 * low / hips) if hips > 0.0 else 0.0

    def back(t: float) -> float:
        return share * full(t)

    # (where the root stands upright: the start's tilt, the hinge's, undone with its step back, at the
    # height of the pose the body relaxes to)
    home = rot.add(start[root], forward, back(rot.angle_between(now, reference)))
    pivot = (home[0], (r.rest_start if relax is None else relax)[root][1], home[2])
    legs = []
    for hip, ankle, length in _legs(skeleton, r, [f for f in goals if f not in limbs]):
        offset = rot.rotate(untilt, rot.sub(start[hip], start[root]))
        stretch = rot.dist(rot.add(pivot, offset), start[ankle])  # (as the leg stands upright: no drop there)
        legs.append((offset, start[ankle], min(length, max(LEG_REACH * length, stretch))))

    def place(t: float) -> rot.Vec:
        """The root's place for a hinge of ``t``: stepped back, and lowered so the legs reach their feet."""
        p = rot.add(pivot, forward, -back(t))
        turn, drop = rot.axis_angle(axis, t), 0.0
        for hip, ankle, length in legs:
            d = rot.sub(rot.add(p, rot.rotate(turn, hip)), ankle)
            flat = d[0] * d[0] + d[2] * d[2]
            if flat < length * length and rot.dot(d, d) > length * length:
                drop = max(drop, d[1] - math.sqrt(length * length - flat))
        return (p[0], p[1] - drop, p[2])

    theta = 0.0
    spine: set[int] = set()
    for e, (base, length) in limbs.items():
        upright = rot.add(pivot, rot.rotate(untilt, rot.sub(start[base], start[root])))
        target = goals[e].position
        to = rot.sub(target, upright)
        if to[1] >= 0.0 or rot.dot(to, forward) <= abs(rot.dot(to, axis)):
            continue  # (not below the limb's base and in front of it: no hinge for this one)

        def gap(t: float, upright: rot.Vec = upright, target: rot.Vec = target, length: float = length) -> float:
            b = rot.add(place(t), rot.rotate(rot.axis_angle(axis, t), rot.sub(upright, pivot)))
            return rot.dist(target, b) - HINGE_SLACK * length

        if gap(0.0) <= 0.0:
            continue  # (within the limb's reach)
        if gap(MAX_HINGE) > 0.0:  # (beyond the deepest hinge: the nearest tilt, the spine joining the limb)
            lo, hi = 0.0, MAX_HINGE
            for _ in range(HINGE_STEPS):  # (the gap falls, then rises, along the arc the base runs)
                a, b = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
                lo, hi = (lo, b) if gap(a) <= gap(b) else (a, hi)
            if gap(hi) >= gap(0.0) - HINGE_GAIN * length:
                continue  # (a hinge brings it no nearer)
            theta = max(theta, hi)
            spine.add(e)
            continue
        lo, hi = 0.0, MAX_HINGE
        for _ in range(HINGE_STEPS):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if gap(mid) <= 0.0 else (mid, hi)
        theta = max(theta, hi)
    upright_goal = Goal(pivot, reference, 1.0)
    if theta == 0.0:
        if now is reference or rot.angle_between(now, reference) <= 1e-9:
            return None
        return upright_goal, posing, upright_goal  # (back upright where a hinge left it tilted)
    reach = {**posing.reach, **{names[e]: names[base] for e, (base, _) in limbs.items() if e not in spine}}
    tilted = rot.normalize_quat(rot.mul(rot.axis_angle(axis, theta), reference))
    tilted_goal = Goal(place(theta), tilted, 1.0)
    return tilted_goal, dataclasses.replace(posing, reach=reach), upright_goal


def smoothstep(x: float) -> float:
    """0 below 0, 1 above 1, smoothly between (smoothstep)."""
    x = max(0.0, min(1.0, x))
    return x * x * (3.0 - 2.0 * x)


def _legs(skeleton: Skeleton, r: Rig, planted: list[int]) -> list[tuple[int, int, float]]:
    """(hip, ankle, length) of the leg of each planted effector (a toe): the root's child on its way up
    (the hip), its parent (the ankle) and the bones' length between them."""
    root, out = r.order[0], []
    for f in planted:
        ankle = r.parents[f]
        j, length = ankle, 0.0
        while j >= 0 and r.parents[j] != root:
            length += r.lengths[j]
            j = r.parents[j]
        if j >= 0 and j != ankle:
            out.append((j, ankle, length))
    return out


def counterweight(
    skeleton: Skeleton, r: Rig, relax: list[rot.Vec] | None, top: int, forward: rot.Vec, axis: rot.Vec
) -> Callable[[float], float]:
    """How far back (scene units, along ``forward``) the root steps for a hinge of ``t`` radians about
    ``axis``: so far that the centre of mass (``fabrik3d.model.mass.center_of_mass``) stays over the
    feet. The upper body (the root's child on the way to ``top``, and all below it) turning forward by
    ``t`` about the root moves the centre of mass forward by ``m (R(t) v - v) . forward`` (``m`` its
    share of the mass, ``v`` its centre from the root, in the upright pose the body relaxes to); the
    root steps back that much over ``1 - m_l / 2`` (the legs, share ``m_l``, follow it about halfway,
    their feet planted). Read off the pose with three centres of mass: the upper body moved, turned
    half round about the vertical and about the side."""
    root = r.order[0]
    j = top
    while j >= 0 and r.parents[j] != root:
        j = r.parents[j]
    if j < 0:
        return lambda t: 0.0
    pose = np.array(skeleton.rest_positions if relax is None else relax, dtype=float)
    upper = r.subtree(j)
    c0 = mass.center_of_mass(skeleton, pose)
    moved = pose.copy()
    moved[upper] += np.asarray(forward)
    share = float((mass.center_of_mass(skeleton, moved) - c0) @ np.asarray(forward))
    if share <= 1e-9:
        return lambda t: 0.0
    o = pose[root]
    half = {}
    for turn_axis in ((0.0, 1.0, 0.0), axis):  # (a half turn about a: (R - I) v = 2 (a.v) a - 2 v)
        turned = pose.copy()
        q = rot.axis_angle(turn_axis, math.pi)
        turned[upper] = o + np.array([rot.rotate(q, tuple(p)) for p in (pose[upper] - o).tolist()])
        half[turn_axis] = (mass.center_of_mass(skeleton, turned) - c0) / (-2.0 * share)
    ahead = rot.dot(tuple(half[(0.0, 1.0, 0.0)].tolist()), forward)  # (v's part along forward)
    up = float(half[axis][1])  # (v's part along up)
    k = share / (1.0 - 0.5 * (1.0 - share))

    def back(t: float) -> float:
        # (v = ahead forward + up Y, turned by t about the side axis: forward gains up sin t + ahead (cos t - 1))
        return k * (up * math.sin(t) + ahead * (math.cos(t) - 1.0))

    return back


def start_frame(r: Rig, start: list[rot.Vec]) -> rot.Quat:
    """The root's frame in the pose ``start`` (its children fitted)."""
    j = r.order[0]
    return r.rigid_fit(j, start, rot.IDENTITY) if r.rigid[j] else r.pose_frames(start)[j]


def _upright(r: Rig, start: list[rot.Vec], reference: rot.Quat) -> bool:
    """Whether the root's children sit in ``start`` where the frame ``reference`` puts them (to
    1e-9 of a scene unit): the root is upright, no fit needed."""
    j = r.order[0]
    return all(rot.dist(rot.sub(start[c], start[j]), rot.rotate(reference, r.offset[c])) <= 1e-9 for c in r.children[j])


def reference_frame(r: Rig, relax: Any) -> rot.Quat:
    """The root's frame in the pose the body relaxes to (``relax``, a list of points, or rest)."""
    return r.rest_frames[r.order[0]] if relax is None else start_frame(r, relax)
