"""How a skeleton poses naturally: chain reach, stiffness and swivel (``fabrik3d.solver.natural``).

* ``reach``: effector name -> the joint where its target's chain stops (Blender's chain
  length): that joint and the joints between it and the effector turn; the joints above it
  do not move for this target. Default: the root (the whole path).
* ``stiffness``: joint name -> 0 (free) .. 1 (stiffest). A stiff joint turns only when the
  freer joints of the chain cannot reach, and then only as much as reaching needs; with no
  target that needs it, it relaxes back to the pose the user built (the rest pose, or
  ``relax_to``). Default 0.
* ``swivel``: effector name -> ``Swivel``: the direction a limb's hinge (elbow, knee) bends
  toward when no pole is given, turning about the line from the limb's root to its end.
* ``hang``: effector names whose limbs hang under gravity while they have no target (and no
  pole): an arm beside the body, a little bent at the elbow, whatever the rest pose, as the body
  under it leans or turns (``fabrik3d.solver.hang``). A limb not named follows the body: it keeps
  its turn from its parent (the pose the user built). Default: none.

The presets carry natural defaults (``fabrik3d.model.presets``); ``Posing()`` is the plain
full-body chain of the original algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from fabrik3d import checks


@dataclass(frozen=True)
class Swivel:
    """A limb's natural bend: ``direction`` (a ``(3,)`` world direction at rest, scene axes) turns
    with the frame of joint ``frame`` (the chest for arms, the pelvis for legs).

    ``toward``: pairs ``(axis, direction_k)`` (unit vectors, the same axes): as the line ``u`` from
    the limb's root to the effector leans along ``axis``, the bend turns toward ``direction_k``:
    the bend is ``direction + sum_k max(0, u . axis_k) (direction_k - direction)``, made
    perpendicular to ``u``. So an elbow that hangs down and out for reaches in front turns out
    and forward for reaches up to the face and overhead, back for reaches out to the side, and
    forward for reaches across the body; and no reach runs along its bend (where the swivel
    would be undefined).
    """

    frame: str
    direction: tuple[float, float, float]
    toward: tuple[tuple[tuple[float, float, float], tuple[float, float, float]], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.frame, str) or not self.frame:
            raise ValueError(f"swivel.frame: expected a joint name, got {checks.quoted(self.frame)}")
        object.__setattr__(self, "direction", _unit(self.direction, "swivel.direction"))
        try:
            pairs = [(a, d) for a, d in self.toward]
        except (TypeError, ValueError):
            raise ValueError("swivel.toward: expected pairs [axis, direction]") from None
        object.__setattr__(
            self,
            "toward",
            tuple(
                (_unit(a, f"swivel.toward[{k}].axis"), _unit(d, f"swivel.toward[{k}].direction"))
                for k, (a, d) in enumerate(pairs)
            ),
        )

    def bend(self, u: tuple[float, float, float], fade: float = 1.0) -> tuple[float, float, float]:
        """The (not normalised) bend direction for the unit line ``u`` (the frame's rest axes);
        ``fade`` (0..1) scales the ``toward`` turns (the solve fades them out as the effector
        comes near the limb's root, where ``u`` turns fast)."""
        b = list(self.direction)
        for axis, d in self.toward:
            k = fade * (u[0] * axis[0] + u[1] * axis[1] + u[2] * axis[2])
            if k > 0.0:
                for i in range(3):
                    b[i] += k * (d[i] - self.direction[i])
        return (b[0], b[1], b[2])


@dataclass(frozen=True)
class Posing:
    """Chain reach, stiffness and swivel of a skeleton's joints (module docstring)."""

    stiffness: Mapping[str, float] = field(default_factory=dict)
    reach: Mapping[str, str] = field(default_factory=dict)
    swivel: Mapping[str, Swivel] = field(default_factory=dict)
    hang: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        stiffness = _mapping(self.stiffness, "stiffness")
        for name, value in stiffness.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"stiffness.{name}: expected a number from 0 to 1, got {checks.quoted(value)}")
        reach = _mapping(self.reach, "reach")
        for name, value in reach.items():
            if not isinstance(value, str):
                raise ValueError(f"reach.{name}: expected a joint name, got {checks.quoted(value)}")
        swivel = _mapping(self.swivel, "swivel")
        for name, value in swivel.items():
            if not isinstance(value, Swivel):
                raise ValueError(f"swivel.{name}: expected a fabrik3d.Swivel, got {type(value).__name__}")
        object.__setattr__(self, "stiffness", MappingProxyType({k: float(v) for k, v in stiffness.items()}))
        object.__setattr__(self, "reach", MappingProxyType(dict(reach)))
        object.__setattr__(self, "swivel", MappingProxyType(dict(swivel)))
        if isinstance(self.hang, (str, bytes, Mapping)):
            raise ValueError(f"hang: expected a list of effector names, got {checks.quoted(self.hang)}")
        try:
            hang = list(self.hang)
        except TypeError:
            raise ValueError(f"hang: expected a list of effector names, got {checks.quoted(self.hang)}") from None
        for name in hang:
            if not isinstance(name, str):
                raise ValueError(f"hang: expected effector names, got {checks.quoted(name)}")
        object.__setattr__(self, "hang", frozenset(hang))

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any], ...]]:
        """Pickled as its three mappings (``types.MappingProxyType`` does not pickle), rebuilt and checked
        on load: a worker process's copy (``fabrik3d.batch.workers``)."""
        return (Posing, (dict(self.stiffness), dict(self.reach), dict(self.swivel), self.hang))

    def __bool__(self) -> bool:
        """Whether anything differs from the plain full-body chain."""
        return bool(self.reach or self.swivel or self.hang or any(v > 0.0 for v in self.stiffness.values()))

    def check(self, skeleton: Any) -> Posing:
        """``self`` once every name is checked against ``skeleton`` (``ValueError`` naming the place)."""
        for name in self.stiffness:
            if name not in skeleton:
                raise ValueError(f"posing.stiffness.{name}: unknown joint")
        for name, stop in self.reach.items():
            if not skeleton.is_effector(name):
                raise ValueError(f"posing.reach.{name}: not an end effector")
            if stop not in skeleton or skeleton.index(stop) not in skeleton.path_to_root(skeleton.index(name))[:-1]:
                raise ValueError(f"posing.reach.{name}: {stop!r} is not a joint above {name!r}")
        for name, sw in self.swivel.items():
            if not skeleton.is_effector(name):
                raise ValueError(f"posing.swivel.{name}: not an end effector")
            if sw.frame not in skeleton:
                raise ValueError(f"posing.swivel.{name}.frame: unknown joint {sw.frame!r}")
        for name in sorted(self.hang):
            if not skeleton.is_effector(name):
                raise ValueError(f"posing.hang: {name!r} is not an end effector")
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"stiffness": {...}, "reach": {...}, "swivel": {e: {"frame", "direction"}}}``,
        and ``"hang": [effector, ...]`` (sorted) when any limb hangs."""
        out: dict[str, Any] = {
            "stiffness": dict(self.stiffness),
            "reach": dict(self.reach),
            "swivel": {k: _swivel_dict(v) for k, v in self.swivel.items()},
        }
        if self.hang:
            out["hang"] = sorted(self.hang)
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "posing") -> Posing:
        """A ``Posing`` from ``to_dict``'s form; ``ValueError`` naming the place of any problem."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object")
        unknown = set(data) - {"stiffness", "reach", "swivel", "hang"}
        if unknown:
            raise ValueError(f"{where}: unknown settings {sorted(unknown)}")
        swivel = {}
        for name, value in _mapping(data.get("swivel", {}), f"{where}.swivel").items():
            if not isinstance(value, Mapping) or not {"frame", "direction"} <= set(value) <= SWIVEL_KEYS:
                raise ValueError(f"{where}.swivel.{name}: expected an object with frame, direction (and toward)")
            try:
                swivel[name] = Swivel(value["frame"], value["direction"], value.get("toward", ()))
            except ValueError as exc:
                raise ValueError(f"{where}.swivel.{name}: {exc}") from None
        hang = data.get("hang", [])
        if not isinstance(hang, list):
            raise ValueError(f"{where}.hang: expected a list of effector names, got {checks.quoted(hang)}")
        try:
            return cls(
                _mapping(data.get("stiffness", {}), "stiffness"),
                _mapping(data.get("reach", {}), "reach"),
                swivel,
                frozenset(hang) if all(isinstance(h, str) for h in hang) else hang,  # type: ignore[arg-type]
            )
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None


SWIVEL_KEYS = {"frame", "direction", "toward"}


def _swivel_dict(v: Swivel) -> dict[str, Any]:
    out: dict[str, Any] = {"frame": v.frame, "direction": list(v.direction)}
    if v.toward:
        out["toward"] = [[list(a), list(d)] for a, d in v.toward]
    return out


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{where}: expected an object keyed by names")
    return dict(value)


def _unit(value: Any, where: str) -> tuple[float, float, float]:
    d = _vector(value, where)
    n = math.sqrt(sum(x * x for x in d))
    if n < 1e-9:
        raise ValueError(f"{where}: expected a non-zero direction")
    if abs(n - 1.0) <= 1e-12:  # (a unit vector is kept as given: a file round trip changes no bit)
        return d
    return (d[0] / n, d[1] / n, d[2] / n)


def _vector(value: Any, where: str) -> tuple[float, float, float]:
    try:
        out = tuple(float(x) for x in value if not isinstance(x, (bool, str)))
    except (TypeError, ValueError):
        out = ()
    if len(out) != 3 or len(list(value)) != 3 or not all(math.isfinite(x) for x in out):
        raise ValueError(f"{where}: expected 3 finite numbers, got {checks.quoted(value)}")
    return out  # type: ignore[return-value]


def hinge_above(skeleton: Any, effector: int) -> int | None:
    """The joint nearest above ``effector`` (an index) with a ``Hinge`` limit and a parent: the
    joint a swivel or a pole bends (an elbow, a knee); ``None`` when its path has none."""
    from fabrik3d.model.constraints import Hinge

    j = int(skeleton.parents[effector])
    while j >= 0 and skeleton.parents[j] >= 0:
        if any(isinstance(c, Hinge) for c in skeleton.constraints.get(skeleton.names[j], ())):
            return j
        j = int(skeleton.parents[j])
    return None


def check_posing(posing: Any, skeleton: Any) -> Posing:
    """``posing`` checked against ``skeleton`` (``ValueError`` naming the place)."""
    if not isinstance(posing, Posing):
        raise ValueError(f"posing: expected a fabrik3d.Posing, got {type(posing).__name__}")
    return posing.check(skeleton)
