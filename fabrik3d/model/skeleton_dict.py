"""A skeleton's JSON form (``Skeleton.to_dict`` / ``Skeleton.from_dict``):
``{"joints": [{"name", "parent", "position", "constraints", "rest_frame"}], "posing", "riders"}``,
``parent`` the parent's name (``None`` for the root), ``riders`` the riders whose parent does not ride."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from fabrik3d import checks
from fabrik3d.model.posing import Posing


def skeleton_to_dict(skeleton: Any) -> dict[str, Any]:
    """``skeleton``'s JSON form (module docstring); ``skeleton`` a ``fabrik3d.model.skeleton.Skeleton``
    (not imported: that module imports this one)."""
    joints = []
    for j, name in enumerate(skeleton.names):
        p = int(skeleton.parents[j])
        joint: dict[str, Any] = {
            "name": name,
            "parent": skeleton.names[p] if p >= 0 else None,
            "position": [float(v) for v in skeleton.rest_positions[j]],
        }
        if name in skeleton.constraints:
            joint["constraints"] = [c.to_dict() for c in skeleton.constraints[name]]
        if name in skeleton.explicit_rest_frames:
            joint["rest_frame"] = [float(v) for v in skeleton.rest_frames[j]]
        joints.append(joint)
    out: dict[str, Any] = {"joints": joints}
    if skeleton.posing:
        out["posing"] = skeleton.posing.to_dict()
    if skeleton.riders:
        out["riders"] = list(skeleton._rider_tops())
    return out


def skeleton_from_dict(cls: Any, data: Any, where: str = "") -> Any:
    """A skeleton of class ``cls`` from its JSON form; errors name the place (``where`` prefixed), e.g.
    ``joints[4].parent: unknown joint 'hipp'``."""
    from fabrik3d.model.constraints import JointLimitError, constraint_from_dict

    if not isinstance(data, Mapping) or not isinstance(data.get("joints"), list):
        raise ValueError(f"{where or 'skeleton'}: expected an object with a 'joints' list")
    joints = data["joints"]
    names: list[str] = []
    index: dict[str, int] = {}
    for k, joint in enumerate(joints):
        at = f"{where}joints[{k}]"
        if not isinstance(joint, Mapping):
            raise ValueError(f"{at}: expected an object with name, parent and position")
        name = joint.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{at}.name: expected a non-empty string, got {_quoted(name)}")
        if name in index:
            raise ValueError(f"{at}.name: duplicate joint name {_quoted(name)}")
        index[name] = k
        names.append(name)
    parents: list[int] = []
    positions: list[list[float]] = []
    constraints: dict[str, list[Any]] = {}
    frames: dict[str, Any] = {}
    for k, joint in enumerate(joints):
        at = f"{where}joints[{k}]"
        parent = joint.get("parent")
        if parent is None:
            parents.append(-1)
        elif isinstance(parent, str) and parent in index:
            parents.append(index[parent])
        else:
            raise ValueError(f"{at}.parent: unknown joint {_quoted(parent)}")
        positions.append(_json_vector(joint.get("position"), f"{at}.position"))
        if joint.get("rest_frame") is not None:
            from fabrik3d.model.targets import unit_quaternion

            frames[names[k]] = unit_quaternion(joint["rest_frame"], f"{at}.rest_frame")
        raw = joint.get("constraints", [])
        if not isinstance(raw, list):
            raise ValueError(f"{at}.constraints: expected a list")
        if raw:
            constraints[names[k]] = [constraint_from_dict(c, f"{at}.constraints[{m}]") for m, c in enumerate(raw)]
    posing = None if data.get("posing") is None else Posing.from_dict(data["posing"], f"{where}posing")
    riders = data.get("riders")
    if riders is not None and not isinstance(riders, list):
        raise ValueError(f"{where}riders: expected a list of joint names")
    try:
        return cls(names, parents, positions, constraints, frames, posing, riders)
    except JointLimitError as exc:
        at = f"{where}joints[{index[exc.joint]}].constraints"
        at += f"[{exc.position}]" if exc.position is not None else ""
        raise ValueError(f"{at}{'.' + exc.field if exc.field else ''}: {exc.message}") from None
    except ValueError as exc:
        raise ValueError(f"{where or 'skeleton'}: {exc}") from None


def _json_vector(value: Any, where: str) -> list[float]:
    """A finite 3-vector from JSON, or a ``ValueError`` naming ``where``."""
    ok = (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )
    out: list[float] = []
    if ok:
        try:
            out = [float(v) for v in value]
        except OverflowError:  # an int beyond float range
            ok = False
    if not ok or not all(math.isfinite(v) for v in out):
        raise ValueError(f"{where}: expected three finite numbers, got {_quoted(value)}")
    return out


def _quoted(value: Any) -> str:
    """``repr(value)``, cut to 80 characters (``checks.quoted``)."""
    return checks.quoted(value)
