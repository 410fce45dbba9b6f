"""Humanoid rigs onto the humanoid preset's roles: bone-name conventions, the role map, and the preset's
joint limits and natural posing carried over to a rig.

A *role* is a joint name of the humanoid preset (``fabrik3d.model.presets.humanoid``: ``pelvis``,
``spine_01``, ``chest``, ``neck``, ``head``, ``clavicle_l``, ``shoulder_l``, ``elbow_l``, ``wrist_l``,
``hand_l``, ``hip_l``, ``knee_l``, ``ankle_l``, ``toe_l`` and the ``_r`` side). A *rig map* is a dict
role -> bone name; ``guess_rig_map`` finds one from the bone names of Mixamo (``mixamorig:LeftArm``),
VRM humanoid (``leftUpperArm``), Blender's metarig and Rigify (``upper_arm.L``, ``DEF-upper_arm.L``),
Unreal (``upperarm_l``) and this project's own names. The preset's hand is the middle knuckle (past the
wrist) and its toe the ball of the foot; a rig's head is the skull joint.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model import fingers, presets
from fabrik3d.model.constraints import Cone, Constraint, EllipticalCone, Hinge, Twist, hinge_from_straight, rest_bend
from fabrik3d.model.posing import Posing, Swivel

ROLES: tuple[str, ...] = presets.humanoid().names
# The preset's parent of every role: a role a rig lacks falls back to its nearest mapped ancestor.
_PRESET = presets.humanoid()
ROLE_PARENT: dict[str, str | None] = {
    n: (_PRESET.names[int(p)] if p >= 0 else None) for n, p in zip(_PRESET.names, _PRESET.parents)
}
# Effectors of a humanoid rig: key -> the roles that can serve, the first mapped one wins.
END_ROLES: dict[str, tuple[str, ...]] = {
    "pelvis": ("pelvis",),
    "head": ("head", "neck"),
    "hand_l": ("hand_l", "wrist_l", "elbow_l"),
    "hand_r": ("hand_r", "wrist_r", "elbow_r"),
    "foot_l": ("toe_l", "ankle_l", "knee_l"),
    "foot_r": ("toe_r", "ankle_r", "knee_r"),
}
# The preset's effector -> the key of END_ROLES it becomes (posing settings are keyed by effectors).
_PRESET_END = {"head": "head", "hand_l": "hand_l", "hand_r": "hand_r", "toe_l": "foot_l", "toe_r": "foot_r"}
# A rig is a humanoid when its names give at least this many roles.
MIN_ROLES = 8
# A rig whose pelvis-to-head line leans more than this from the scene's +Y (degrees) takes its body's up
# from that line (a rig lying in its file); otherwise +Y (``_body_axes``: a Blender rig's head sits a
# little forward of its pelvis).
LEAN_DEG = 45.0
# A hinge joint bent more than this at rest (degrees) bends in the plane of that bend, where its normal
# lies within ``BENT_AXIS_DEG`` of the preset's axis (``_turned``).
BENT_DEG = 5.0
BENT_AXIS_DEG = 60.0

_TORSO = ("pelvis", "spine_01", "spine_02", "spine_03", "chest", "neck", "head")
_LIMBS = ("clavicle", "shoulder", "elbow", "wrist", "hand", "hip", "knee", "ankle", "toe")


def _table(torso: Sequence[str], limbs: Sequence[str], side: Any) -> dict[str, str]:
    """role -> normalised bone name: ``torso`` and the left ``limbs`` in ``_TORSO``/``_LIMBS`` order
    ("" for none); ``side(name, 'l' or 'r')`` names the sides."""
    out = {role: name for role, name in zip(_TORSO, torso) if name}
    for s in ("l", "r"):
        out.update({f"{role}_{s}": side(name, s) for role, name in zip(_LIMBS, limbs) if name})
    return out


CONVENTIONS: dict[str, dict[str, str]] = {
    "fabrik3d": {role: role for role in ROLES},
    "mixamo": _table(
        ("hips", "spine", "spine1", "", "spine2", "neck", "head"),
        ("shoulder", "arm", "forearm", "hand", "handmiddle1", "upleg", "leg", "foot", "toebase"),
        lambda n, s: ("left" if s == "l" else "right") + n,
    ),
    "vrm": _table(
        ("hips", "spine", "chest", "", "upperchest", "neck", "head"),
        ("shoulder", "upperarm", "lowerarm", "hand", "middleproximal", "upperleg", "lowerleg", "foot", "toes"),
        lambda n, s: ("left" if s == "l" else "right") + n,
    ),
    "blender": _table(
        ("spine", "spine.001", "spine.002", "", "spine.003", "spine.004", "spine.006"),
        ("shoulder", "upper_arm", "forearm", "hand", "f_middle.01", "thigh", "shin", "foot", "toe"),
        lambda n, s: f"{n}.{s}",
    ),
    "unreal": _table(
        ("pelvis", "spine_01", "spine_02", "", "spine_03", "neck_01", "head"),
        ("clavicle", "upperarm", "lowerarm", "hand", "middle_01", "thigh", "calf", "foot", "ball"),
        lambda n, s: f"{n}_{s}",
    ),
}


# Each convention's finger bones (normalised, left side; ``{k}`` the knuckle 1..3): finger roles
# ``{finger}_0{k}_{side}`` (``fabrik3d.model.fingers``). A rig's middle knuckle is also its hand.
_FINGER_NAMES: dict[str, tuple[str, dict[str, str], Any]] = {
    "mixamo": ("lefthand{f}{k}", {"pinky": "pinky"}, lambda n, s: n.replace("left", "right") if s == "r" else n),
    "vrm": ("left{f}{k}", {"pinky": "little"}, lambda n, s: n.replace("left", "right") if s == "r" else n),
    "blender": ("{f}.0{k}.l", {"thumb": "thumb", "index": "f_index", "middle": "f_middle", "ring": "f_ring",
                               "pinky": "f_pinky"}, lambda n, s: n[:-1] + s),
    "unreal": ("{f}_0{k}_l", {}, lambda n, s: n[:-1] + s),
}  # fmt: skip
_VRM_KNUCKLES = {"thumb": ("metacarpal", "proximal", "distal")}


def _add_fingers() -> None:
    for convention, (pattern, rename, side) in _FINGER_NAMES.items():
        for f in fingers.FINGERS:
            for k in (1, 2, 3):
                knuckle: Any = k
                if convention == "vrm":
                    knuckle = _VRM_KNUCKLES.get(f, ("proximal", "intermediate", "distal"))[k - 1]
                left = pattern.format(f=rename.get(f, f), k=knuckle)
                for s in ("l", "r"):
                    CONVENTIONS[convention][fingers.finger_role(f, f"0{k}", s)] = side(left, s)


_add_fingers()


def normalise(name: str) -> str:
    """A bone name as the tables hold it: without a namespace (``mixamorig:``, ``Armature|``) or a
    Rigify ``DEF-`` prefix, lower case."""
    base = name.rsplit(":", 1)[-1].rsplit("|", 1)[-1].strip().lower()
    for prefix in ("def-", "def_"):
        if base.startswith(prefix):
            base = base[len(prefix) :]
    return base


def guess_rig_map(names: Sequence[str]) -> tuple[str, dict[str, str]]:
    """``(convention, role -> bone name)`` from the bone names of the best-matching convention; ``("",
    {})`` when none gives ``MIN_ROLES`` roles. When the clavicles hang from another bone than the one
    named as the chest (Unreal 5's ``spine_05``), that bone becomes the chest."""
    by_name: dict[str, str] = {}
    for name in names:
        by_name.setdefault(normalise(name), name)
    best, found = "", {}
    for convention, table in CONVENTIONS.items():
        hits = {role: by_name[n] for role, n in table.items() if n in by_name}
        if len(hits) > len(found):
            best, found = convention, hits
    if len(found) < MIN_ROLES:
        return "", {}
    return best, found


def fix_chest(rig_map: dict[str, str], parent_of: Mapping[str, str | None]) -> dict[str, str]:
    """``rig_map`` with the chest moved to the bone the left clavicle hangs from, when that differs."""
    clavicle = rig_map.get("clavicle_l")
    above = parent_of.get(clavicle) if clavicle else None
    if above is None or rig_map.get("chest") == above:
        return rig_map
    out = {role: bone for role, bone in rig_map.items() if bone != above}
    out["chest"] = above
    return out


def check_rig_map(data: Any, names: Sequence[str], where: str = "rig map") -> dict[str, str]:
    """A rig map checked: an object of role -> bone name, roles of the humanoid preset, bones of the rig,
    no bone twice; ``ValueError`` naming the place."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object of role -> bone name")
    known, used = set(names), {}
    for role, bone in data.items():
        if role not in ROLES:
            raise ValueError(f"{where}.{role}: unknown role; roles are {checks.names_list(ROLES)}")
        if not isinstance(bone, str) or bone not in known:
            raise ValueError(f"{where}.{role}: {checks.quoted(bone)} is not a bone of the rig")
        if bone in used and not _hand_and_middle(role, used[bone]):
            raise ValueError(f"{where}.{role}: bone {checks.quoted(bone)} is already {checks.quoted(used[bone])}")
        used[bone] = role
    return dict(data)


def _hand_and_middle(a: str, b: str) -> bool:
    """Whether roles ``a`` and ``b`` are a hand and a middle knuckle (one bone in a rig)."""
    return {a[:-2], b[:-2]} == {"hand", "middle_01"}


def effectors(rig_map: Mapping[str, str]) -> dict[str, str]:
    """key of ``END_ROLES`` -> bone: the first mapped role of each (keys without one are left out)."""
    out = {}
    for key, roles in END_ROLES.items():
        bone = next((rig_map[r] for r in roles if r in rig_map), None)
        if bone is not None:
            out[key] = bone
    return out


def humanoid_setup(
    names: Sequence[str], parents: Sequence[int], rest: np.ndarray, rig_map: Mapping[str, str]
) -> tuple[dict[str, list[Constraint]], Posing]:
    """The preset's joint limits and posing for a rig: ``(limits by bone name, posing)``.

    ``names``, ``parents`` and ``rest`` ``(n, 3)`` are the rig's solving skeleton; ``rig_map`` maps roles
    to its bones. Axes and directions turn from the preset's body axes (left, up, forward) to the rig's
    (``body_turn``: left between its shoulders or hips, up the scene's +Y); each range stays where the
    preset has it about the body, whatever the rig's rest (``_turned``: hinges from straight, cones and
    ball joints' twists about the preset's rest bone); a torso bone the rig lacks lends its limits to
    the one above it (``_absorbed``). Settings naming a role the rig lacks use the nearest mapped role
    above it, or are left out.
    """
    index = {n: k for k, n in enumerate(names)}
    at = {r: index[b] for r, b in rig_map.items() if b in index}
    turn = body_turn({r: _PRESET.index(r) for r in ROLES}, rest, at)
    first_child = {}
    for k, p in enumerate(parents):
        if p >= 0 and p not in first_child:
            first_child[int(p)] = k
    limits: dict[str, list[Constraint]] = {}
    for role, items in _absorbed(presets.HUMANOID_LIMITS, set(at)).items():
        bone = rig_map.get(role)
        if bone is None or bone not in index:
            continue
        j = index[bone]
        bone_dir = rest[first_child[j]] - rest[j] if j in first_child else None
        above = rest[j] - rest[parents[j]] if parents[j] >= 0 else None
        k = _PRESET.first_child(_PRESET.index(role))
        centre = turn @ (_PRESET.rest_positions[k] - _PRESET.rest_positions[_PRESET.index(role)]) if k >= 0 else None
        ball = any(isinstance(c, EllipticalCone) for c in items)  # (a shoulder, a hip: its twist widens too)
        limits[bone] = [_turned(c, turn, bone_dir, above, centre, ball) for c in items]
    ends = effectors(rig_map)

    def name(role: str | None) -> str | None:
        while role is not None and rig_map.get(role) not in index:
            role = ROLE_PARENT[role]
        return None if role is None else rig_map[role]

    pose = presets.HUMANOID_POSING
    stiffness = {rig_map[r]: v for r, v in pose.stiffness.items() if rig_map.get(r) in index}
    for side in "lr":  # (a palm between a held wrist and the hand's end holds with it, at its rest offset)
        wrist, end = rig_map.get(f"wrist_{side}"), ends.get(_PRESET_END[f"hand_{side}"])
        if wrist not in stiffness or end not in index:
            continue
        between, j = [], parents[index[end]]
        while j >= 0 and names[j] != wrist:
            between.append(names[j])
            j = parents[j]
        if j >= 0:
            stiffness.update({bone: stiffness[wrist] for bone in between if bone not in stiffness})
            limits.update({bone: [Cone(0.0), Twist(0.0, 0.0)] for bone in between if bone not in limits})
    reach, swivel = {}, {}
    for effector, stop in pose.reach.items():
        end, above = ends.get(_PRESET_END[effector]), name(stop)
        if end in index and above is not None and above != end:
            reach[end] = above
    for effector, sw in pose.swivel.items():
        end, frame = ends.get(_PRESET_END[effector]), name(sw.frame)
        if end in index and frame is not None:
            toward = tuple((tuple(turn @ a), tuple(turn @ d)) for a, d in sw.toward)
            swivel[end] = Swivel(frame, tuple(turn @ sw.direction), toward)  # type: ignore[arg-type]
    hang = {ends[_PRESET_END[e]] for e in pose.hang if ends.get(_PRESET_END[e]) in index}
    return limits, Posing(stiffness, reach, swivel, frozenset(hang))


def _body_axes(rest: np.ndarray, at: Mapping[str, int]) -> np.ndarray:
    """``(3, 3)`` columns left, up, forward of a body: left from the right to the left shoulder (or
    hip, clavicle); up the scene's +Y made perpendicular to left, unless the body leans more than
    ``LEAN_DEG`` from it (a rig lying in its file), then from the pelvis to the head (or neck, chest);
    the identity without them."""
    left = next((rest[at[f"{r}_l"]] - rest[at[f"{r}_r"]] for r in ("shoulder", "hip", "clavicle") if
                 f"{r}_l" in at and f"{r}_r" in at), None)  # fmt: skip
    top = next((at[r] for r in ("head", "neck", "chest", "spine_01") if r in at), None)
    if left is None or top is None or "pelvis" not in at or np.linalg.norm(left) < 1e-12:
        return np.eye(3)
    x = left / np.linalg.norm(left)
    up = rest[top] - rest[at["pelvis"]]
    y = up - np.dot(up, x) * x
    if np.linalg.norm(y) < 1e-9 * max(np.linalg.norm(up), 1e-300):
        return np.eye(3)
    y /= np.linalg.norm(y)
    scene_up = np.array([0.0, 1.0, 0.0]) - x[1] * x
    if np.linalg.norm(scene_up) > 1e-9 and np.dot(scene_up, y) > math.cos(math.radians(LEAN_DEG)) * np.linalg.norm(
        scene_up
    ):
        y = scene_up / np.linalg.norm(scene_up)
    return np.column_stack([x, y, np.cross(x, y)])


def body_turn(preset_at: Mapping[str, int], rest: np.ndarray, at: Mapping[str, int]) -> np.ndarray:
    """The ``(3, 3)`` rotation from the preset's body axes to a rig's.

    Args:
        preset_at: role -> joint index in the humanoid preset.
        rest: ``(n, 3)`` the rig's rest positions.
        at: role -> joint index in the rig.
    """
    mine = _body_axes(rest, at)
    theirs = _body_axes(_PRESET.rest_positions, {r: preset_at[r] for r in at if r in preset_at})
    return mine @ theirs.T


def _absorbed(limits: Mapping[str, Any], present: set[str]) -> dict[str, list[Constraint]]:
    """``limits`` by role, a torso role the rig lacks (a third spine bone) merged into the nearest role
    above it that the rig has: their cones' angles and twist ranges added, so that the bones the rig
    has can bend as far as the preset's together."""
    out = {role: list(items) if isinstance(items, list) else [items] for role, items in limits.items()}
    for role in ("spine_01", "spine_02", "spine_03", "chest"):
        if role in present or role not in out:
            continue
        above = ROLE_PARENT[role]
        while above is not None and above not in present:
            above = ROLE_PARENT[above]
        if above is None or above not in out:
            continue
        mine = {type(c): c for c in out[role]}
        merged = []
        for c in out[above]:
            extra = mine.get(type(c))
            if isinstance(c, Cone) and isinstance(extra, Cone):
                c = Cone(min(c.max_deg + extra.max_deg, 179.0))
            elif isinstance(c, Twist) and isinstance(extra, Twist):
                c = Twist(max(c.min_deg + extra.min_deg, -180.0), min(c.max_deg + extra.max_deg, 180.0))
            merged.append(c)
        out[above] = merged
    return out


def _turned(
    c: Constraint,
    turn: np.ndarray,
    bone_dir: np.ndarray | None,
    above: np.ndarray | None,
    centre: np.ndarray | None,
    ball: bool = False,
) -> Constraint:
    """Constraint ``c`` with its axes turned by ``turn``, its range kept where the preset has it about
    the body when the rig's rest differs from the preset's (an A-pose's arms, a Blender rig's bent
    elbows and knees); every shifted range keeps the rig's rest pose (0) inside it.

    * An elliptical cone's four extents are shifted by where ``bone_dir`` (the rig's rest bone) lies in
      the cone's chart about ``centre`` (the preset's rest bone, in the rig's axes): the arm of an
      A-pose still rises as far above the shoulder as the preset's.
    * A ball joint's ``Twist`` (``ball``: a shoulder or a hip, beside an elliptical cone) widens both
      ways by the angle between ``bone_dir`` and ``centre``: a twist counts from the rest frame, and
      the same turn read from a rest swung that far (an A-pose's arm) differs by up to that angle, so
      every twist the preset allows stays allowed.
    * A hinge's axis is made perpendicular to ``bone_dir``, or where the rig is bent at rest by more
      than ``BENT_DEG`` it is the normal of that bend (the plane the rig's joint bends in), if within
      ``BENT_AXIS_DEG`` of the preset's; its range is shifted by the rig's rest bend: the preset's
      angles count from the bone straight on from ``above`` (the parent's bone into the joint), so an
      elbow bent at rest can still straighten and bends no further than the preset's.
    """
    if isinstance(c, EllipticalCone):
        right = turn @ np.array(c.right_axis, dtype=float)
        out = dataclasses.replace(c, right_axis=tuple(right.tolist()))
        if bone_dir is None or centre is None or min(np.linalg.norm(bone_dir), np.linalg.norm(centre)) == 0:
            return out
        mid, d = centre / np.linalg.norm(centre), bone_dir / np.linalg.norm(bone_dir)
        side = right - np.dot(right, mid) * mid
        if np.linalg.norm(side) < 1e-9:
            return out
        side /= np.linalg.norm(side)
        x, z = float(np.dot(d, side)), float(np.dot(d, np.cross(side, mid)))
        rho = math.hypot(x, z)
        if rho < 1e-12:
            return out
        theta = math.degrees(math.atan2(rho, float(np.dot(d, mid))))
        u, v = theta * x / rho, theta * z / rho  # (the rig's rest in the preset's chart, degrees)

        def extent(a: float) -> float:
            return min(max(a, 0.0), 179.0)

        return dataclasses.replace(
            out,
            left_deg=extent(c.left_deg + u),
            right_deg=extent(c.right_deg - u),
            up_deg=extent(c.up_deg - v),
            down_deg=extent(c.down_deg + v),
        )
    if isinstance(c, Twist) and ball and bone_dir is not None and centre is not None:
        cos = float(np.dot(bone_dir, centre)) / float(np.linalg.norm(bone_dir) * np.linalg.norm(centre) or 1.0)
        off = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
        return Twist(max(c.min_deg - off, -180.0), min(c.max_deg + off, 180.0)) if off > 1e-9 else c
    if not isinstance(c, Hinge):
        return c
    axis = turn @ np.array(c.axis, dtype=float)
    if bone_dir is None or np.linalg.norm(bone_dir) == 0:
        return dataclasses.replace(c, axis=tuple(axis.tolist()))
    d = bone_dir / np.linalg.norm(bone_dir)
    flat = axis - np.dot(axis, d) * d
    if np.linalg.norm(flat) > 1e-9:
        axis = flat / np.linalg.norm(flat)
    if above is not None and np.linalg.norm(above) > 0:
        normal = np.cross(above / np.linalg.norm(above), d)  # (a rig bent at rest shows its hinge's plane)
        if np.linalg.norm(normal) > math.sin(math.radians(BENT_DEG)):
            normal = normal / np.linalg.norm(normal) * (1.0 if np.dot(normal, axis) >= 0 else -1.0)
            if np.dot(normal, axis) > math.cos(math.radians(BENT_AXIS_DEG)):
                axis = normal
    bend = 0.0 if above is None else rest_bend(above, d, axis)
    return hinge_from_straight(tuple(axis.tolist()), c.min_deg, c.max_deg, bend)
