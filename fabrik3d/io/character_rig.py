"""How a character's bones become a skeleton (``fabrik3d.io.character``): the humanoid roles, the bones the
skeleton keeps, the riders and fixed bones, the joint limits and posing that fit."""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d.model import rig_map as rigs
from fabrik3d.model.constraints import JointLimitError
from fabrik3d.model.fingers import is_finger_role, rig_finger_limits
from fabrik3d.model.skeleton import Skeleton


def rig_roles(
    given: Any, names: tuple[str, ...], parent_of: dict[str, str | None], vrm: dict[str, str] | None = None
) -> tuple[str, dict[str, str]]:
    """``(convention, role -> bone)``: the ``given`` map checked (``"given"``; ``{}``: none), else the
    file's VRM humanoid (``vrm_roles``), else the one the bone names give
    (``fabrik3d.model.rig_map.guess_rig_map``); ``parent_of`` maps bone -> parent."""
    if given is not None:
        return ("given" if given else ""), rigs.check_rig_map(given, names)
    if vrm and len(vrm) >= rigs.MIN_ROLES:
        return "vrm", rigs.fix_chest(vrm, parent_of)
    convention, roles = rigs.guess_rig_map(names)
    return convention, rigs.fix_chest(roles, parent_of) if roles else roles


def kept_bones(
    names: tuple[str, ...], parent_bone: list[int], roles: dict[str, str], notes: list[str]
) -> tuple[list[bool], dict[str, int]]:
    """Which bones the skeleton keeps, and the humanoid's effectors (key -> bone) below its pelvis."""
    index = {n: b for b, n in enumerate(names)}
    ends = {key: index[bone] for key, bone in rigs.effectors(roles).items()}
    if "pelvis" not in ends or len(ends) < 2:
        return [True] * len(names), {}
    kept = [False] * len(names)
    pelvis = ends["pelvis"]
    for key, b in list(ends.items()):
        path = [b]
        while path[-1] not in (pelvis, -1):
            path.append(parent_bone[path[-1]])
        if path[-1] < 0:
            notes.append(f"rig map: {key} ({names[b]!r}) is not below the pelvis; it is not an effector")
            del ends[key]
            continue
        for j in path:
            kept[j] = True
    return kept, ends


def finger_bones(names: tuple[str, ...], parent_bone: list[int], roles: dict[str, str], kept: list[bool]) -> set[int]:
    """The bones of the fingers (the bones of finger roles, those between them and the hand, and those
    below them), marked ``kept`` in place: the skeleton's riders (``fabrik3d.model.skeleton``), posed
    by forward kinematics. None when the hand is not kept (no humanoid)."""
    index = {n: b for b, n in enumerate(names)}
    kids: list[list[int]] = [[] for _ in names]
    for b, p in enumerate(parent_bone):
        if p >= 0:
            kids[p].append(b)
    out: set[int] = set()
    for role, bone in roles.items():
        b = index.get(bone, -1)
        if not is_finger_role(role) or b < 0 or kept[b]:
            continue
        path = [b]
        while path[-1] >= 0 and not kept[path[-1]]:
            path.append(parent_bone[path[-1]])
        if path[-1] < 0:
            continue
        stack = path[:-1]
        while stack:
            j = stack.pop()
            if j not in out:
                out.add(j)
                stack.extend(kids[j])
    for b in out:
        kept[b] = True
    return out


def drivers(
    rest: np.ndarray, parent_bone: list[int], kept: list[bool], min_bone: float
) -> tuple[np.ndarray, list[int]]:
    """``(driver (nb,), skeleton parent of each bone)``: kept bones at their parent's place ride on it."""
    nb = len(rest)
    order, kids = [], [[] for _ in range(nb)]
    for b, p in enumerate(parent_bone):
        if p >= 0:
            kids[p].append(b)
    stack = [b for b, p in enumerate(parent_bone) if p < 0]  # (the tree's root, and any lone bones beside it)
    while stack:
        order.append(stack.pop())
        stack.extend(reversed(kids[order[-1]]))
    driver = np.full(nb, -1)
    up = [-1] * nb  # the nearest kept ancestor of each bone
    for b in order:
        p = parent_bone[b]
        above = -1 if p < 0 else (driver[p] if driver[p] >= 0 else up[p])
        up[b] = above
        if kept[b] and (above < 0 or np.linalg.norm(rest[b] - rest[above]) >= min_bone):
            driver[b] = b
        else:
            driver[b] = above
    return driver, up


def build_skeleton(
    names: tuple[str, ...],
    up: list[int],
    driver: np.ndarray,
    rest: np.ndarray,
    roles: dict[str, str],
    ends: dict[str, int],
    notes: list[str],
    riders: set[int] | None = None,
) -> tuple[Skeleton, dict[str, str]]:
    """The skeleton of the bones that drive themselves, with the humanoid's limits and posing; the
    bones in ``riders`` (``finger_bones``) ride."""
    own = [b for b in range(len(names)) if driver[b] == b]
    if len(own) < 2:
        raise ValueError("skins: fewer than two bones apart from each other; there is no skeleton to pose")
    at = {b: k for k, b in enumerate(own)}
    sk_names = [names[b] for b in own]
    sk_parents = [at[up[b]] if up[b] >= 0 else -1 for b in own]
    sk_rest = rest[own]
    limits, posing = ({}, None) if not ends else rigs.humanoid_setup(sk_names, sk_parents, sk_rest, roles)
    riding = [names[b] for b in own if b in (riders or ())]
    if riding:
        limits.update(rig_finger_limits(sk_names, sk_parents, sk_rest, roles))
    for _ in range(len(limits) + 2):
        try:
            skeleton = Skeleton(sk_names, sk_parents, sk_rest, limits, posing=posing, riders=riding)
            break
        except JointLimitError as exc:
            notes.append(f"joint limits of {exc.joint!r} left out: {exc}")
            limits.pop(exc.joint, None)
        except ValueError as exc:
            if posing is None:
                raise
            notes.append(f"natural posing left out: {exc}")
            posing = None
    if not ends:
        return skeleton, {n: n for n in skeleton.end_effectors}
    effectors = {}
    for key, b in ends.items():
        j = names[driver[b]]
        if key == "pelvis" or skeleton.is_effector(j):
            effectors[key] = j
        else:
            notes.append(f"rig map: {key} ({names[b]!r}) is not a leaf of the skeleton; it is not an effector")
    return skeleton, effectors


def pose_arrays(skeleton: Skeleton, pose: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(positions (n, 3), rotations (n, 4))`` of a ``SolveResult``-like pose, checked as takes are."""
    from fabrik3d.io.take import check_pose

    if isinstance(pose, tuple) and len(pose) == 2:
        return check_pose(skeleton, *pose)
    if not (hasattr(pose, "positions") and hasattr(pose, "rotations")):
        raise ValueError(f"pose: expected a SolveResult (positions, rotations), got {type(pose).__name__}")
    return check_pose(skeleton, pose.positions, pose.rotations)


def vrm_roles(doc: dict[str, Any], slot: dict[int, int], names: tuple[str, ...]) -> dict[str, str]:
    """role -> bone from a VRM file's humanoid (``extensions.VRMC_vrm.humanoid.humanBones``, VRM 1.0, or
    ``extensions.VRM.humanoid.humanBones``, VRM 0.x), whatever the bones are called; ``slot`` maps a
    node index to its bone. Empty without one."""
    ext = doc.get("extensions") if isinstance(doc.get("extensions"), dict) else {}
    bones: dict[Any, Any] = {}
    for key in ("VRM", "VRMC_vrm"):
        humanoid = ext.get(key, {}).get("humanoid", {}) if isinstance(ext.get(key), dict) else {}
        found = humanoid.get("humanBones") if isinstance(humanoid, dict) else None
        if isinstance(found, list):  # VRM 0.x: [{"bone": "hips", "node": 3}, ...]
            bones = {b.get("bone"): b.get("node") for b in found if isinstance(b, dict)}
        elif isinstance(found, dict):  # VRM 1.0: {"hips": {"node": 3}, ...}
            bones = {k: v.get("node") for k, v in found.items() if isinstance(v, dict)}
    table: dict[str, list[str]] = {}
    for role, bone in rigs.CONVENTIONS["vrm"].items():
        table.setdefault(bone, []).append(role)  # (the middle knuckle is the hand too)
    out = {}
    for bone, node in bones.items():
        if isinstance(node, int) and node in slot:
            for role in table.get(str(bone).lower(), ()):
                out[role] = names[slot[node]]
    return out
