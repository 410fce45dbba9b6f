"""Ready-made skeletons: ``names()`` lists them, ``get(name)`` builds one.

All are Y up, in metres, facing +Z (a character's left is +X).

* ``humanoid``: 1.75 m tall (``humanoid(height, head=..., arm=..., ...)`` for other proportions:
  ``fabrik3d.model.proportions``), pelvis root; spine_01..03, chest, neck, head; per side
  (``_l``, ``_r``) clavicle, shoulder, elbow, wrist, hand and hip, knee, ankle, toe. End
  effectors: head, hand_l, hand_r, toe_l, toe_r. T-pose with elbows and knees slightly bent, so
  that FABRIK bends them the natural way, palms down. Each wrist carries a thumb and four fingers
  (``FINGERS``: ``thumb_01_l``, ``thumb_02_l``, ``thumb_03_l``, ``thumb_end_l``, ``index_01_l``
  ... ``pinky_end_r``; the hand is the middle knuckle, where ``middle_01`` starts): riders
  (``fabrik3d.model.skeleton``), posed by forward kinematics and carried by a solve.
* ``robot_arm``: a six-joint serial arm (base, shoulder, elbow, wrist_1..3) with
  a tool tip, in an L pose.
* ``octopus``: a body with a mantle and eight tentacles of eight segments each.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from fabrik3d import checks
from fabrik3d.model.constraints import Cone, Constraint, EllipticalCone, Hinge, Rigid, Twist
from fabrik3d.model.fingers import FINGERS, is_finger_role, rig_finger_limits
from fabrik3d.model.posing import Posing, Swivel
from fabrik3d.model.proportions import DEFAULT_HEIGHT, Proportions, proportioned, remember
from fabrik3d.model.skeleton import Skeleton


def names() -> tuple[str, ...]:
    """Names of the presets."""
    return tuple(_BUILDERS)


def get(name: str) -> Skeleton:
    """A new skeleton of the preset ``name``; ``ValueError`` listing the presets if unknown."""
    try:
        builder = _BUILDERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown preset {checks.quoted(name)}; presets are {checks.names_list(_BUILDERS)}") from None
    return builder()


def _build(
    joints: list[tuple[str, str | None, tuple[float, float, float]]],
    limits: dict[str, Constraint | list[Constraint]] | None = None,
    posing: Posing | None = None,
    riders: list[str] | None = None,
) -> Skeleton:
    names_ = [j[0] for j in joints]
    parents = [-1 if j[1] is None else names_.index(j[1]) for j in joints]
    return Skeleton(names_, parents, [j[2] for j in joints], limits, posing=posing, riders=riders)


def humanoid(
    height: float = DEFAULT_HEIGHT,
    *,
    head: float = 1.0,
    shoulder_width: float = 1.0,
    hip_width: float = 1.0,
    arm: float = 1.0,
    leg: float = 1.0,
    torso: float = 1.0,
    hand: float = 1.0,
) -> Skeleton:
    """The humanoid (module docstring), ``height`` metres tall (ground to the top of the head) with
    the factors of the default body's segments given (``fabrik3d.model.proportions``: bounds, what
    each scales). The same joints, limits and natural posing; with every argument at its default,
    the very skeleton of ``get("humanoid")``. ``ValueError`` naming the argument for a bad value."""
    p = Proportions(height, head, shoulder_width, hip_width, arm, leg, torso, hand)
    joints = _humanoid_joints()
    if p.is_default:
        return _humanoid(joints)
    return remember(_humanoid(proportioned(joints, p)), p)


def _humanoid_joints() -> list[tuple[str, str | None, tuple[float, float, float]]]:
    """The default humanoid's joints: (name, parent, rest position), parents first."""
    joints: list[tuple[str, str | None, tuple[float, float, float]]] = [
        ("pelvis", None, (0.0, 0.95, 0.0)),
        ("spine_01", "pelvis", (0.0, 1.05, -0.01)),
        ("spine_02", "spine_01", (0.0, 1.17, -0.015)),
        ("spine_03", "spine_02", (0.0, 1.29, -0.01)),
        ("chest", "spine_03", (0.0, 1.40, 0.0)),
        ("neck", "chest", (0.0, 1.50, 0.0)),
        ("head", "neck", (0.0, 1.75, 0.02)),
    ]
    for side, sx in (("l", 1.0), ("r", -1.0)):
        joints += [
            (f"clavicle_{side}", "chest", (sx * 0.03, 1.43, 0.0)),
            (f"shoulder_{side}", f"clavicle_{side}", (sx * 0.18, 1.43, -0.01)),
            (f"elbow_{side}", f"shoulder_{side}", (sx * 0.46, 1.43, -0.03)),
            (f"wrist_{side}", f"elbow_{side}", (sx * 0.72, 1.43, -0.01)),
            (f"hand_{side}", f"wrist_{side}", (sx * 0.81, 1.43, -0.01)),
        ]
    for side, sx in (("l", 1.0), ("r", -1.0)):
        joints += [
            (f"hip_{side}", "pelvis", (sx * 0.09, 0.92, 0.0)),
            (f"knee_{side}", f"hip_{side}", (sx * 0.09, 0.51, 0.05)),
            (f"ankle_{side}", f"knee_{side}", (sx * 0.09, 0.09, -0.01)),
            (f"toe_{side}", f"ankle_{side}", (sx * 0.09, 0.02, 0.13)),
        ]
    for side, sx in (("l", 1.0), ("r", -1.0)):
        joints += _fingers(side, sx)
    return joints


def _humanoid(joints: list[tuple[str, str | None, tuple[float, float, float]]]) -> Skeleton:
    """The humanoid of these joints (``_humanoid_joints``, maybe proportioned): its limits and posing."""
    names_ = [j[0] for j in joints]
    parents = [-1 if j[1] is None else names_.index(j[1]) for j in joints]
    fingers = {n: n for n in names_ if is_finger_role(n)}
    limits = {**HUMANOID_LIMITS, **rig_finger_limits(names_, parents, np.array([j[2] for j in joints]), fingers)}
    tops = [f"{f}_01_{side}" for side in ("l", "r") for f in FINGERS]
    return _build(joints, limits, HUMANOID_POSING, tops)  # type: ignore[arg-type]


def robot_arm() -> Skeleton:
    """A six-joint serial arm with a tool tip (see the module docstring)."""
    return _build(
        [
            ("base", None, (0.0, 0.25, 0.0)),
            ("shoulder", "base", (0.0, 0.25, 0.12)),
            ("elbow", "shoulder", (0.0, 0.7, 0.12)),
            ("wrist_1", "elbow", (0.0, 0.7, 0.52)),
            ("wrist_2", "wrist_1", (0.0, 0.7, 0.62)),
            ("wrist_3", "wrist_2", (0.0, 0.7, 0.7)),
            ("tool", "wrist_3", (0.0, 0.7, 0.78)),
        ],
        {
            "base": Hinge((0, 1, 0), -170, 170),  # turntable: yaw of the shoulder offset
            "shoulder": Hinge((1, 0, 0), -100, 100),
            "elbow": Hinge((1, 0, 0), -135, 135),
            "wrist_1": Hinge((1, 0, 0), -120, 120),
            "wrist_2": Hinge((0, 1, 0), -120, 120),
            "wrist_3": Hinge((1, 0, 0), -90, 90),
        },
    )


def octopus() -> Skeleton:
    """A body with a mantle and eight tentacles (see the module docstring)."""
    joints: list[tuple[str, str | None, tuple[float, float, float]]] = [
        ("body", None, (0.0, 0.6, 0.0)),
        ("mantle", "body", (0.0, 0.9, -0.05)),
    ]
    for k in range(8):
        a = 2.0 * math.pi * (k + 0.5) / 8.0
        cx, cz = math.cos(a), math.sin(a)
        x, y, z = 0.12 * cx, 0.55, 0.12 * cz
        joints.append((f"tentacle_{k + 1}_0", "body", (x, y, z)))
        for s in range(1, 9):
            # Each segment reaches out and curls down, a little shorter than the last.
            step = 0.09 * (1.0 - 0.05 * s)
            droop = 0.2 + 0.08 * s
            h = math.cos(droop)
            x, y, z = x + step * h * cx, y - step * math.sin(droop), z + step * h * cz
            joints.append((f"tentacle_{k + 1}_{s}", f"tentacle_{k + 1}_{s - 1}", (x, y, z)))
    limits: dict[str, Constraint | list[Constraint]] = {"body": Rigid()}
    for k in range(8):
        for s in range(8):
            limits[f"tentacle_{k + 1}_{s}"] = Cone(40)
    return _build(joints, limits)


# Joint limits of the humanoid (degrees). Shoulders and hips: EllipticalCone(left, right, up,
# down) with "right" forward for the left side and backward for the right side, so "up" is up
# (shoulders) or outward/inward (hips).
HUMANOID_LIMITS: dict[str, Constraint | list[Constraint]] = {
    "pelvis": Rigid(),
    "spine_01": [Cone(20), Twist(-20, 20)],
    "spine_02": [Cone(20), Twist(-20, 20)],
    "spine_03": [Cone(20), Twist(-20, 20)],
    "chest": [Rigid(), Cone(15), Twist(-15, 15)],
    "neck": [Cone(45), Twist(-60, 60)],
    "head": Twist(-80, 80),
    "clavicle_l": Cone(20),
    "clavicle_r": Cone(20),
    "shoulder_l": [
        EllipticalCone(left_deg=60, right_deg=135, up_deg=100, down_deg=100, right_axis=(0, 0, 1)),
        Twist(-120, 120),
    ],
    "shoulder_r": [
        EllipticalCone(left_deg=135, right_deg=60, up_deg=100, down_deg=100, right_axis=(0, 0, -1)),
        Twist(-120, 120),
    ],
    "elbow_l": [Hinge((0, 1, 0), -150, 0), Twist(-85, 85)],
    "elbow_r": [Hinge((0, 1, 0), 0, 150), Twist(-85, 85)],
    "wrist_l": Cone(70),
    "wrist_r": Cone(70),
    "hand_l": Twist(-90, 90),
    "hand_r": Twist(-90, 90),
    "hip_l": [EllipticalCone(left_deg=30, right_deg=120, up_deg=50, down_deg=30, right_axis=(0, 0, 1)), Twist(-40, 40)],
    "hip_r": [EllipticalCone(left_deg=30, right_deg=120, up_deg=30, down_deg=50, right_axis=(0, 0, 1)), Twist(-40, 40)],
    "knee_l": [Hinge((1, 0, 0), 0, 150), Twist(-30, 30)],
    "knee_r": [Hinge((1, 0, 0), 0, 150), Twist(-30, 30)],
    "ankle_l": Cone(40),
    "ankle_r": Cone(40),
}


# How the humanoid poses (``fabrik3d.model.posing``): the limbs do the work; the neck and the
# clavicles join when they cannot reach, the spine and the chest after them, and only as much as
# needed; no chain turns the pelvis (it moves with the root target). Elbows bend down and out
# (and back when the arm hangs), knees forward over the toes.
def _arm_swivel(sx: float) -> Swivel:
    """Elbows down, out and a little back; out and forward as the hand rises; back as it goes out
    to the side; down, out and forward as it crosses the body (``Swivel``)."""
    return Swivel(
        "chest",
        (0.4 * sx, -1.0, -0.3),
        toward=(
            ((0.0, 1.0, 0.0), (0.4 * sx, -1.0, 0.7)),
            ((sx, 0.0, 0.0), (0.0, -0.2, -1.0)),
            ((-sx, 0.0, 0.0), (0.6 * sx, -0.6, 0.6)),
        ),
    )


_TORSO = ("spine_01", "spine_02", "spine_03", "chest")
# The wrists hold their bend from the forearm while the arm reaches (a stiff joint below the arm's
# free joints: ``fabrik3d.solver.natural``); they bend where the arm alone cannot reach, where the
# hand's target has an orientation, and near the arm's full length or its shoulder
# (``fabrik3d.solver.levels.LOOSE_REACH``).
WRIST_STIFFNESS = 0.3
HUMANOID_POSING = Posing(
    stiffness={
        **{name: 0.7 for name in _TORSO},
        "neck": 0.4,
        "clavicle_l": 0.4,
        "clavicle_r": 0.4,
        "wrist_l": WRIST_STIFFNESS,
        "wrist_r": WRIST_STIFFNESS,
    },
    reach={"hand_l": "spine_01", "hand_r": "spine_01", "head": "spine_01", "toe_l": "hip_l", "toe_r": "hip_r"},
    swivel={
        "hand_l": _arm_swivel(1.0),
        "hand_r": _arm_swivel(-1.0),
        "toe_l": Swivel("pelvis", (0.1, 0.0, 1.0)),
        "toe_r": Swivel("pelvis", (-0.1, 0.0, 1.0)),
    },
    hang=frozenset({"hand_l", "hand_r"}),
)

# Per finger of the left hand: its base knuckle's offset from the wrist (x along the palm, z toward
# the thumb; metres), the lengths of its three bones and its spread about the palm normal (degrees,
# toward the thumb). The middle knuckle is the hand joint itself.
_FINGER_BASES: dict[str, tuple[tuple[float, float, float], tuple[float, float, float], float]] = {
    "thumb": ((0.02, -0.012, 0.022), (0.045, 0.034, 0.028), 0.0),
    "index": ((0.086, 0.0, 0.019), (0.040, 0.024, 0.020), 3.0),
    "middle": ((0.09, 0.0, 0.0), (0.045, 0.028, 0.021), 0.0),
    "ring": ((0.086, -0.002, -0.017), (0.042, 0.026, 0.020), -3.0),
    "pinky": ((0.078, -0.005, -0.031), (0.035, 0.020, 0.018), -5.0),
}


def _fingers(side: str, sx: float) -> list[tuple[str, str | None, tuple[float, float, float]]]:
    """The fingers of one hand (wrist at ``(0.72 sx, 1.43, -0.01)``, palm down); their limits come
    from ``fabrik3d.model.fingers``."""
    wrist = (sx * 0.72, 1.43, -0.01)
    joints: list[tuple[str, str | None, tuple[float, float, float]]] = []
    for finger, (base, lengths, spread) in _FINGER_BASES.items():
        if finger == "thumb":
            d = _unit((sx * 0.75, -0.12, 0.65))
        else:
            a = math.radians(spread)
            d = (sx * math.cos(a), 0.0, math.sin(a))
        at = (wrist[0] + sx * base[0], wrist[1] + base[1], wrist[2] + base[2])
        parent = f"wrist_{side}"
        for suffix, length in zip(("01", "02", "03", "end"), (0.0, *lengths)):
            at = (at[0] + d[0] * length, at[1] + d[1] * length, at[2] + d[2] * length)
            name = f"{finger}_{suffix}_{side}"
            joints.append((name, parent, at))
            parent = name
    return joints


def _unit(v: tuple[float, float, float]) -> tuple[float, float, float]:
    n = math.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2)
    return (v[0] / n, v[1] / n, v[2] / n)


_BUILDERS: dict[str, Callable[[], Skeleton]] = {
    "humanoid": humanoid,
    "robot_arm": robot_arm,
    "octopus": octopus,
}
