"""Reading turns back from a real page (tests of rotation in the web UI): a joint's world frame from the
turning panel's readouts, angles between orientations. The humanoid preset (Y up, facing +Z)."""

from __future__ import annotations

import math

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model import presets
from fabrik3d.solver.rig import rig

BODY = presets.get("humanoid")


def quat_angle(a, b) -> float:
    """Degrees between two orientations (unit quaternions, either sign)."""
    d = abs(float(np.dot(np.asarray(a, dtype=float), np.asarray(b, dtype=float))))
    return math.degrees(2.0 * math.acos(min(1.0, d)))


def turned(q, axis, degrees: float) -> np.ndarray:
    """``q`` turned by ``degrees`` about the world ``axis`` (right-handed)."""
    return np.array(rot.normalize_quat(rot.mul(rot.axis_angle(axis, math.radians(degrees)), tuple(q))))


def turn_angles(page, names: list[str]) -> dict[str, list[float]]:
    """``joint_angles`` of each joint of ``names``, chosen one after another in the turning panel.

    The page pushes a state change only while no call of its own is in flight (else later), and the
    server's state comes in a message of its own, not ordered with the answers to calls: each choice is
    made when nothing is in flight and nothing waits to be pushed, and its angles are read once they
    stayed the same over two round trips to the server, 30 ms apart (the joint's, not the one's before)."""
    return page.evaluate(
        """async (names) => {
             const s = window.trame.state, out = {};
             const pause = (ms) => new Promise((r) => setTimeout(r, ms));
             const calm = async () => {
               for (let i = 0; i < 500 && (s.dirtyKeys.size || s.client.isBusy()); i++) await pause(10);
             };
             const choose = async (n) => { await calm(); await s.set('selected_joint', n); await calm(); };
             const read = async (n) => {
               await window.trame.trigger('joint_screen_position', [n]);  // (a round trip)
               await pause(30);
               return JSON.stringify(s.get('joint_angles'));
             };
             for (const n of names) {
               if (s.get('selected_joint') === n) await choose(n === 'pelvis' ? 'toe_r' : 'pelvis');
               await choose(n);
               let last = await read(n), now = await read(n);
               for (let i = 0; i < 50 && now !== last; i++) [last, now] = [now, await read(n)];
               out[n] = JSON.parse(now);
             }
             return out;
           }""",
        names,
    )


def frame(page, name: str) -> np.ndarray:
    """Joint ``name``'s world frame (x, y, z, w) in the pose shown, from the turning panel's readouts."""
    chain = [BODY.index(name)]
    while BODY.parents[chain[-1]] >= 0:
        chain.append(BODY.parents[chain[-1]])
    chain.reverse()
    angles = turn_angles(page, [BODY.names[j] for j in chain])
    r = rig(BODY)
    world: tuple[float, float, float, float] | None = None
    for j in chain:
        local = rot.mul(r.rest_local[j], rot.from_euler_xyz(tuple(angles[BODY.names[j]])))
        world = local if world is None else rot.mul(world, local)
    assert world is not None
    return np.array(rot.normalize_quat(world))
