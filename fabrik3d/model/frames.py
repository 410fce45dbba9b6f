"""Orientation frames of joints: rest frames and the frames of a pose.

Every joint ``j`` has a world frame ``R_j`` (a unit quaternion, see
``fabrik3d.rotations``) whose +Y axis points along the bone from ``j`` to its
first child.

* Rest frame ``R0_j``: the minimal rotation taking world +Y onto the rest bone to
  the first child (a bone along -Y turns a half turn about world +X). A leaf
  copies its parent's rest frame. For a chain along +Y every rest frame is the
  identity.
* Frame of a pose: ``R_j = R_p · S_j · L0_j`` where ``p`` is the parent (the
  world, identity, for the root), ``L0_j = R0_p⁻¹ R0_j`` the rest local rotation,
  and ``S_j`` the *swing*: the minimal rotation taking the rest bone direction in
  the parent's frame, ``L0_j·Y``, onto the current one, ``R_p⁻¹·(P_c − P_j)/|…|``.
  A bone exactly opposite its rest direction swings a half turn about
  ``L0_j·X``, the joint's rest +X axis in the parent's frame. A leaf has no bone
  and keeps ``R_p · L0_j``. Frames are thus a function of the pose, not of the
  solve's history, with no twist.
* A joint with a ``Rigid`` constraint has the frame that best fits its rest
  child offsets onto the pose's (Horn's method), so it may carry twist.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.model.targets import unit_quaternion


class JointTree(Protocol):
    """What the rules of the model read of a skeleton (``fabrik3d.model.skeleton.Skeleton`` is one;
    a protocol, so that this module and ``constraints`` need not import the skeleton's module, which
    imports them)."""

    names: tuple[str, ...]
    parents: np.ndarray
    order: tuple[int, ...]
    rest_positions: np.ndarray
    rest_frames: np.ndarray
    constraints: Mapping[str, tuple[Any, ...]]

    def index(self, name: str) -> int: ...

    def __contains__(self, name: object) -> bool: ...

    def children(self, i: int) -> tuple[int, ...]: ...

    def bone_children(self, i: int) -> tuple[int, ...]: ...

    def first_child(self, i: int) -> int: ...


def rest_frames(skeleton: JointTree, given: Mapping[str, Any] | None = None) -> np.ndarray:
    """``(n, 4)`` rest frames of ``skeleton`` as quaternions (x, y, z, w).

    ``given`` maps joint names to explicit rest frames (unit quaternions; a
    joint with children must have +Y along its rest bone to the first child,
    within 1e-6); the other joints take the default rule (module docstring).
    """
    n = len(skeleton.names)
    out: list[rot.Quat] = [rot.IDENTITY] * n
    rest = skeleton.rest_positions
    explicit = _explicit_frames(skeleton, given or {})
    for j in skeleton.order:
        c = skeleton.first_child(j)
        d = None if c < 0 else rot.unit(tuple((rest[c] - rest[j]).tolist()))
        if j in explicit:
            q = explicit[j]
            if d is not None and sum(a * b for a, b in zip(rot.rotate(q, rot.Y_AXIS), d)) < 1.0 - 1e-12:
                raise ValueError(
                    f"joint {skeleton.names[j]!r}: rest_frame's +Y must point along the rest bone to "
                    f"{skeleton.names[c]!r} (within 1e-6)"
                )
            out[j] = q
        elif d is None:
            out[j] = out[int(skeleton.parents[j])]
        else:
            out[j] = rot.swing(rot.Y_AXIS, d, rot.X_AXIS)
    arr = np.array(out, dtype=float)
    arr.setflags(write=False)
    return arr


def _explicit_frames(skeleton: JointTree, given: Mapping[str, Any]) -> dict[int, rot.Quat]:
    if not isinstance(given, Mapping):
        raise ValueError("rest_frames: expected a mapping from joint names to quaternions (x, y, z, w)")
    out = {}
    for name, value in given.items():
        if name not in skeleton:  # a dict look-up (the names are a tuple)
            raise ValueError(f"rest_frames: unknown joint {checks.quoted(name)}")
        q = unit_quaternion(value, f"joint {name!r}: rest_frame")
        out[skeleton.index(name)] = tuple(q.tolist())
    return out  # type: ignore[return-value]


def rest_local(parents: Any, frames: Any) -> list[rot.Quat]:
    """``L0_j = R0_p⁻¹ R0_j`` per joint: its rest frame relative to its parent's (the root's: its own
    rest frame), from ``parents`` ``(n,)`` and the rest ``frames`` ``(n, 4)`` (module docstring)."""
    r0 = [tuple(q) for q in np.asarray(frames).tolist()]
    return [rot.mul(rot.conj(r0[p]), r0[j]) if p >= 0 else r0[j] for j, p in enumerate(int(p) for p in parents)]
