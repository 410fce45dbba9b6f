"""Body proportions of the humanoid preset (``fabrik3d.model.presets.humanoid``).

``Proportions(height=1.75, head=1.0, shoulder_width=1.0, hip_width=1.0, arm=1.0, leg=1.0,
torso=1.0, hand=1.0)``: ``height`` in metres, from the ground to the top of the head (the ``head``
joint); the others are factors of the default body's segments (1.0: as the default body):

* ``head``: the neck-to-crown bone (``neck`` to ``head``);
* ``shoulder_width``: the clavicles (``chest`` to ``clavicle``, ``clavicle`` to ``shoulder``);
* ``hip_width``: the pelvis to each hip;
* ``arm``: the upper arm and the forearm (``shoulder`` to ``elbow`` to ``wrist``);
* ``leg``: the thigh, the shin and the foot (``hip`` to ``knee`` to ``ankle`` to ``toe``, and the
  ankle's height above the ground);
* ``torso``: the spine, pelvis to neck;
* ``hand``: the palm and the fingers.

Each segment is scaled along its rest direction (every bone keeps its direction, so the joint
limits, their axes and the natural posing carry over unchanged), then the whole body is scaled
about the ground point below the pelvis so that it stands ``height`` tall: the factors set the
body's proportions, ``height`` its size. Bounds: ``height`` 0.5..2.5 m (``HEIGHT``), factors
0.5..2.0 (``FACTOR``); anything else (NaN, a string, a bool) is one ``ValueError`` naming the
argument.

A skeleton built with proportions remembers them: ``proportions_of(skeleton)`` (scene files store
them, ``fabrik3d.io.scene``).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from fabrik3d import checks

# The default body's height (m): the ``head`` joint's height above the ground.
DEFAULT_HEIGHT = 1.75
# Bounds of ``height`` (m) and of the factors.
HEIGHT = (0.5, 2.5)
FACTOR = (0.5, 2.0)
# The default ankle's height above the ground (m): scaled with ``leg``.
_ANKLE_HEIGHT = 0.09

Joints = list[tuple[str, str | None, tuple[float, float, float]]]


@dataclass(frozen=True)
class Proportions:
    """A humanoid's proportions (module docstring); checked on construction."""

    height: float = DEFAULT_HEIGHT
    head: float = 1.0
    shoulder_width: float = 1.0
    hip_width: float = 1.0
    arm: float = 1.0
    leg: float = 1.0
    torso: float = 1.0
    hand: float = 1.0

    def __post_init__(self) -> None:
        for f in fields(self):
            low, high = HEIGHT if f.name == "height" else FACTOR
            object.__setattr__(self, f.name, _bounded(getattr(self, f.name), f.name, low, high))

    @property
    def is_default(self) -> bool:
        """Whether these are the default body's proportions."""
        return self == Proportions()

    def to_dict(self) -> dict[str, float]:
        """``{"height": 1.75, "head": 1.0, ...}``, every field."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "proportions") -> Proportions:
        """From ``to_dict``'s form (missing fields take their defaults); ``ValueError`` naming the place."""
        if not isinstance(data, Mapping):
            raise ValueError(f'{where}: expected an object such as {{"height": 1.75, "arm": 1.0}}')
        names = [f.name for f in fields(cls)]
        unknown = [k for k in data if k not in names]
        if unknown:
            raise ValueError(
                f"{where}.{checks.cut(str(unknown[0]))}: unknown proportion; they are {checks.names_list(names)}"
            )
        try:
            return cls(**data)
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None


def _bounded(value: Any, name: str, low: float, high: float) -> float:
    what = (
        f"a height in metres from {low:.1f} to {high:.1f}"
        if name == "height"
        else (f"a factor from {low:.1f} to {high:.1f} (1.0: the default body's)")
    )
    v = checks.number(value, name, what)
    if not low <= v <= high:
        raise ValueError(f"{name}: expected {what}, got {checks.quoted(value)}")
    return v


# Which proportion scales the bone to each joint of the humanoid (the fingers: ``hand``).
_SEGMENTS = {
    **dict.fromkeys(("spine_01", "spine_02", "spine_03", "chest", "neck"), "torso"),
    "head": "head",
    **{f"{j}_{s}": "shoulder_width" for j in ("clavicle", "shoulder") for s in "lr"},
    **{f"{j}_{s}": "arm" for j in ("elbow", "wrist") for s in "lr"},
    **{f"hip_{s}": "hip_width" for s in "lr"},
    **{f"{j}_{s}": "leg" for j in ("knee", "ankle", "toe") for s in "lr"},
}


def proportioned(joints: Joints, p: Proportions) -> Joints:
    """The humanoid's ``joints`` (name, parent, rest position; parents first, the default body)
    with proportions ``p`` (module docstring)."""
    factor = p.to_dict()
    old = {name: np.array(at, dtype=float) for name, _, at in joints}
    new: dict[str, np.ndarray] = {}
    for name, parent, at in joints:
        if parent is None:
            new[name] = np.array(at, dtype=float)
        else:
            new[name] = new[parent] + factor[_SEGMENTS.get(name, "hand")] * (old[name] - old[parent])
    ground = min(new[f"ankle_{s}"][1] for s in "lr") - p.leg * _ANKLE_HEIGHT
    scale = p.height / (new["head"][1] - ground)
    base = np.array([new[joints[0][0]][0], ground, new[joints[0][0]][2]])
    out: Joints = []
    for name, parent, _ in joints:
        v = (new[name] - base) * scale + (base[0], 0.0, base[2])
        out.append((name, parent, (float(v[0]), float(v[1]), float(v[2]))))
    return out


_MADE: weakref.WeakKeyDictionary[Any, Proportions] = weakref.WeakKeyDictionary()


def remember(skeleton: Any, p: Proportions) -> Any:
    """``skeleton``, noted as built with proportions ``p`` (``proportions_of``)."""
    _MADE[skeleton] = p
    return skeleton


def proportions_of(skeleton: Any) -> Proportions | None:
    """The proportions ``skeleton`` was built with (``presets.humanoid``, or a scene file that
    stores them), or ``None`` (any other skeleton, the default humanoid of ``presets.get`` too)."""
    try:
        return _MADE.get(skeleton)
    except TypeError:  # not weakly referable
        return None
