"""Make the starter pose library shipped in the package (``fabrik3d/data/poses.json``) with the tool itself.

Each pose is built on the humanoid preset by forward-kinematics turns (``fabrik3d.solver.fk.turn_joint``:
a bone aimed at a direction, within its joint's limits) and ``fabrik3d.solve`` targets, then captured by
role with ``fabrik3d.capture_pose``; the walk's other contact is the first applied mirrored. The hand
shapes are poses of the fingers only (part ``hands``). With ``--draw DIR`` each pose is also drawn, front
and side (needs matplotlib).

Run: ``python examples/make_pose_library.py [--out fabrik3d/data/poses.json] [--draw /tmp/poses]``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.io.pose_library import STARTER, _write
from fabrik3d.solver.fk import turn_joint

SK = fabrik3d.presets.get("humanoid")
CORE = [int(j) for j in SK.core_joints]
FINGERS = ("thumb", "index", "middle", "ring", "pinky")


def rest() -> tuple[np.ndarray, np.ndarray]:
    return SK.rest_positions.copy(), SK.rest_frames.copy()


def aim(pose: tuple[np.ndarray, np.ndarray], joint: str, direction: tuple[float, float, float]):
    """``pose`` with ``joint``'s bone swung to point along ``direction`` (world), within its limits."""
    p, q = pose
    j = SK.index(joint)
    c = SK.first_child(j)
    u = rot.unit(tuple((p[c] - p[j]).tolist()))
    w = rot.unit(direction)
    return _frame(pose, joint, rot.mul(rot.swing(u, w, rot.X_AXIS), tuple(q[j].tolist())))


def spin(pose: tuple[np.ndarray, np.ndarray], joint: str, degrees: float):
    """``pose`` with ``joint``'s bone turned about itself by ``degrees`` (right-handed), within its limits."""
    p, q = pose
    j = SK.index(joint)
    u = rot.unit(tuple((p[SK.first_child(j)] - p[j]).tolist()))
    return _frame(pose, joint, rot.mul(rot.axis_angle(u, math.radians(degrees)), tuple(q[j].tolist())))


def _frame(pose, joint: str, frame):
    """``pose`` with ``joint`` turned (within its limits) toward the world ``frame``."""
    p, q = pose
    j = SK.index(joint)
    parent = int(SK.parents[j])
    r0 = [tuple(v) for v in SK.rest_frames.tolist()]
    rest_local = rot.mul(rot.conj(r0[parent]), r0[j])
    turn = rot.mul(rot.conj(rest_local), rot.mul(rot.conj(tuple(q[parent].tolist())), frame))
    return turn_joint(SK, p, q, joint, rot.normalize_quat(turn))


def aims(pose, **directions):
    """``aim`` for each ``joint=direction``, in skeleton order (parents first)."""
    for joint in sorted(directions, key=SK.index):
        pose = aim(pose, joint, directions[joint])
    return pose


def bend(pose, joint: str, axis: tuple[float, float, float], degrees: float):
    """``pose`` with ``joint`` turned by ``degrees`` about the world ``axis`` (as at rest), within limits."""
    p, q = pose
    local = rot.rotate_inv(tuple(SK.rest_frames[SK.index(joint)].tolist()), axis)
    return turn_joint(SK, p, q, joint, rot.axis_angle(local, math.radians(degrees)))


def grounded(pose, floor: float = 0.02):
    """``pose`` moved up or down so that its lowest joint (fingers aside) is at ``floor``."""
    p, q = pose
    return p + np.array([0.0, floor - p[CORE, 1].min(), 0.0]), q


def solved(pose, targets, **kw):
    r = fabrik3d.solve(SK, targets, positions=pose[0], **kw)
    return r.positions, r.rotations


def fingers(pose, side: str, curls: dict[str, float], thumb: float = 0.0):
    """Fingers of ``side`` curled: degrees per knuckle for each finger (``curls``), the thumb across."""
    sx = 1.0 if side == "l" else -1.0
    for finger in FINGERS:
        deg = thumb if finger == "thumb" else curls.get(finger, 0.0)
        for k in ("01", "02", "03"):
            name = f"{finger}_{k}_{side}"
            j = SK.index(name)
            d = SK.rest_positions[SK.first_child(j)] - SK.rest_positions[j]
            toward = (0.0, -1.0, -0.7 * sx) if finger == "thumb" else (0.0, -1.0, 0.0)
            axis = rot.unit(tuple(np.cross(d, toward).tolist()))
            pose = bend(pose, name, axis, deg * (0.6 if finger == "thumb" and k == "01" else 1.0))
    return pose


def arm_down(pose, side: str):
    sx = 1.0 if side == "l" else -1.0
    return aims(pose, **{f"shoulder_{side}": (0.12 * sx, -1.0, -0.02), f"elbow_{side}": (0.06 * sx, -1.0, 0.12)})


def build() -> dict[str, tuple[np.ndarray, np.ndarray, tuple[str, ...] | None]]:
    out = {}
    relaxed = {"index": 15, "middle": 20, "ring": 25, "pinky": 30}
    fist = {"index": 85, "middle": 85, "ring": 85, "pinky": 85}
    point = {"index": 0, "middle": 85, "ring": 85, "pinky": 85}
    out["T"] = (*rest(), None)
    a = aims(rest(), shoulder_l=(0.72, -0.7, 0.0), shoulder_r=(-0.72, -0.7, 0.0), elbow_l=(0.7, -0.7, 0.05),
             elbow_r=(-0.7, -0.7, 0.05))  # fmt: skip
    out["A"] = (*a, None)
    idle = arm_down(arm_down(rest(), "l"), "r")
    idle = fingers(fingers(idle, "l", relaxed, 10), "r", relaxed, 10)
    idle = aims(idle, hip_l=(0.03, -1.0, 0.0), hip_r=(-0.03, -1.0, 0.0))
    out["idle"] = (*grounded(idle), None)
    walk = aims(idle, hip_l=(0.0, -1.0, 0.45), knee_l=(0.0, -1.0, 0.3), ankle_l=(0.0, 0.15, 1.0),
                hip_r=(0.0, -1.0, -0.4), knee_r=(0.0, -1.0, -0.55), ankle_r=(0.0, -0.7, 1.0),
                shoulder_l=(0.12, -1.0, -0.3), elbow_l=(0.08, -1.0, 0.05),
                shoulder_r=(-0.12, -1.0, 0.3), elbow_r=(-0.08, -0.8, 0.6))  # fmt: skip
    out["walk contact left"] = (*grounded(walk), None)
    run = bend(bend(idle, "spine_01", (1.0, 0.0, 0.0), 6), "spine_02", (1.0, 0.0, 0.0), 6)
    run = aims(run, hip_l=(0.0, -0.45, 0.9), knee_l=(0.0, -1.0, 0.05), ankle_l=(0.0, -0.3, 1.0),
               hip_r=(0.0, -1.0, -0.45), knee_r=(0.0, -0.55, -0.85), ankle_r=(0.0, -0.9, -0.2),
               shoulder_l=(0.12, -0.8, -0.55), elbow_l=(0.1, -0.2, 1.0),
               shoulder_r=(-0.12, -0.8, 0.45), elbow_r=(-0.15, 0.75, 0.65))  # fmt: skip
    run = fingers(fingers(run, "l", {k: 60 for k in fist}, 30), "r", {k: 60 for k in fist}, 30)
    out["run"] = (*grounded(run), None)
    sit = aims(idle, hip_l=(0.08, -0.05, 1.0), hip_r=(-0.08, -0.05, 1.0), knee_l=(0.0, -1.0, 0.05),
               knee_r=(0.0, -1.0, 0.05), shoulder_l=(0.15, -1.0, 0.3), shoulder_r=(-0.15, -1.0, 0.3),
               elbow_l=(0.02, -0.45, 1.0), elbow_r=(-0.02, -0.45, 1.0))  # fmt: skip
    out["sit"] = (*grounded(sit), None)
    crouch = bend(bend(idle, "spine_01", (1.0, 0.0, 0.0), 18), "spine_02", (1.0, 0.0, 0.0), 15)
    crouch = aims(crouch, hip_l=(0.2, -0.45, 1.0), hip_r=(-0.2, -0.45, 1.0), knee_l=(0.05, -1.0, -0.4),
                  knee_r=(-0.05, -1.0, -0.4), ankle_l=(0.05, -0.45, 1.0), ankle_r=(-0.05, -0.45, 1.0),
                  shoulder_l=(0.2, -0.6, 0.8), shoulder_r=(-0.2, -0.6, 0.8),
                  elbow_l=(0.05, -0.5, 1.0), elbow_r=(-0.05, -0.5, 1.0))  # fmt: skip
    out["crouch"] = (*grounded(crouch), None)
    kneel = aims(idle, hip_l=(0.1, -0.05, 1.0), knee_l=(0.0, -1.0, 0.05), hip_r=(-0.08, -1.0, -0.05),
                 knee_r=(0.0, -0.05, -1.0), ankle_r=(0.0, -0.6, -0.8),
                 shoulder_l=(0.12, -1.0, 0.3), elbow_l=(0.0, -0.4, 1.0))  # fmt: skip
    out["kneel"] = (*grounded(kneel), None)
    up = aims(idle, shoulder_l=(0.2, 1.0, 0.05), shoulder_r=(-0.2, 1.0, 0.05), elbow_l=(0.15, 1.0, 0.05),
              elbow_r=(-0.15, 1.0, 0.05))  # fmt: skip
    up = fingers(fingers(up, "l", {}, 0), "r", {}, 0)
    out["reach up"] = (*up, None)
    pt = aims(idle, shoulder_r=(-0.2, 0.05, 1.0), elbow_r=(-0.15, 0.1, 1.0), wrist_r=(-0.12, 0.08, 1.0))
    pt = fingers(pt, "r", point, 40)
    out["point"] = (*pt, None)
    wave = aim(idle, "shoulder_r", (-1.0, 0.35, 0.1))
    wave = aim(spin(wave, "shoulder_r", 90), "elbow_r", (-0.15, 1.0, 0.1))
    wave = fingers(wave, "r", {"index": 5, "middle": 5, "ring": 8, "pinky": 10}, 0)
    out["wave"] = (*wave, None)
    hips = solved(idle, {"hand_l": (0.2, 0.98, 0.04), "hand_r": (-0.2, 0.98, 0.04), "head": SK.rest_positions[6],
                         "toe_l": idle[0][SK.index("toe_l")], "toe_r": idle[0][SK.index("toe_r")]})  # fmt: skip
    out["hands on hips"] = (*hips, None)
    crossed = solved(idle, {"hand_l": (-0.17, 1.24, 0.17), "hand_r": (0.17, 1.28, 0.14), "head": SK.rest_positions[6],
                            "toe_l": idle[0][SK.index("toe_l")], "toe_r": idle[0][SK.index("toe_r")]})  # fmt: skip
    out["arms crossed"] = (*crossed, None)
    for name, curls, thumb in (("relaxed", relaxed, 10), ("fist", fist, 55), ("point", point, 45), ("open", {}, 0)):
        hand = fingers(fingers(rest(), "l", curls, thumb), "r", curls, thumb)
        out[f"hand {name}"] = (*hand, ("hands",))
    return out


def draw(name: str, p: np.ndarray, folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(6, 4))
    for ax, (i, label) in zip(axes, ((0, "front"), (2, "side"))):
        for j, parent in enumerate(SK.parents):
            if parent >= 0:
                side = SK.names[j].endswith("_l")
                ax.plot([p[parent, i], p[j, i]], [p[parent, 1], p[j, 1]], "-", color="C0" if side else "C3", lw=1.5)
        ax.axhline(0.0, color="0.7", lw=0.5)
        ax.set_aspect("equal")
        ax.set_xlim(-1.0, 1.0)
        ax.set_ylim(-0.05, 2.3)
        ax.set_title(f"{name} ({label})", fontsize=8)
    fig.savefig(folder / f"{name.replace(' ', '_')}.png", dpi=70)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=STARTER)
    parser.add_argument("--draw", type=Path, default=None)
    args = parser.parse_args()
    poses = {}
    for name, (p, q, parts) in build().items():
        poses[name] = fabrik3d.capture_pose(SK, p, q, parts=parts)
        if name == "walk contact left":
            mp, mq = fabrik3d.apply_pose(SK, *rest(), poses[name], mirrored=True)
            poses["walk contact right"] = fabrik3d.capture_pose(SK, mp, mq)
    if args.draw:
        args.draw.mkdir(parents=True, exist_ok=True)
        for name, pose in poses.items():
            draw(name, fabrik3d.apply_pose(SK, *rest(), pose)[0], args.draw)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _write(args.out, poses)
    print(f"{args.out}: {len(poses)} poses ({', '.join(poses)})")


if __name__ == "__main__":
    main()
