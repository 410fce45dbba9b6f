"""Contacts: an end effector of one figure put on a point of another figure, or of a prop.

A ``Contact`` says that effector ``effector`` of figure ``figure`` stays on its anchor through every
solve of either side:

* on a figure (``on_figure``, ``joint``): the point ``offset`` (metres, in that joint's world frame) of
  that figure's joint: a hand on a shoulder, two hands clasped;
* on a prop (``on_prop``): the point ``offset`` in the prop's own frame (``fabrik3d.model.props``):
  a hand on a wall, on a table, on a stick another figure holds.

When the anchor is an end effector of another figure (two hands clasped), the two meet halfway:
both are pulled, and two figures so linked are solved together (``fabrik3d.solver.together``).
Otherwise the anchor leads and the effector follows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model.props import check_name

MAX_OFFSET = 10.0  # metres: the farthest an anchor's point lies from its joint or prop


@dataclass(frozen=True, eq=False)  # (compared by identity: numpy fields)
class Contact:
    """Effector ``effector`` of figure ``figure`` on a point of figure ``on_figure``'s joint ``joint``, or of
    prop ``on_prop`` (exactly one of the two); ``offset`` ``(3,)`` metres in that joint's or prop's frame."""

    figure: str
    effector: str
    on_figure: str | None = None
    joint: str | None = None
    on_prop: str | None = None
    offset: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        check_name(self.figure, "figure")
        if not isinstance(self.effector, str) or not self.effector:
            raise ValueError(f"effector: expected an end effector's name, got {checks.quoted(self.effector)}")
        if (self.on_figure is None) == (self.on_prop is None):
            raise ValueError("on: expected a figure's joint or a prop (one of them)")
        if self.on_figure is not None:
            check_name(self.on_figure, "on.figure")
            if not isinstance(self.joint, str) or not self.joint:
                raise ValueError(f"on.joint: expected a joint's name, got {checks.quoted(self.joint)}")
            if self.on_figure == self.figure and self.joint == self.effector:
                raise ValueError("on: an effector cannot be put on itself")
        else:
            check_name(self.on_prop, "on.prop")
            if self.joint is not None:
                raise ValueError("on.joint: a prop's point has no joint")
        off = checks.point(self.offset, "on.offset")
        if float(np.linalg.norm(off)) > MAX_OFFSET:
            raise ValueError(f"on.offset: expected within {MAX_OFFSET:g} m of the anchor, got {off.tolist()}")
        object.__setattr__(self, "offset", off)

    @property
    def label(self) -> str:
        """What the contact joins, for a list: ``"A.hand_r on B.hand_l"``."""
        on = f"{self.on_figure}.{self.joint}" if self.on_figure is not None else f"prop {self.on_prop}"
        return f"{self.figure}.{self.effector} on {on}"

    def to_dict(self) -> dict[str, Any]:
        on: dict[str, Any] = (
            {"figure": self.on_figure, "joint": self.joint} if self.on_figure is not None else {"prop": self.on_prop}
        )
        if self.offset.any():
            on["offset"] = [float(x) for x in self.offset]
        return {"figure": self.figure, "effector": self.effector, "on": on}

    @classmethod
    def from_dict(cls, data: Any) -> Contact:
        """A contact from its JSON form (``to_dict``); ``ValueError`` naming the field."""
        if not isinstance(data, dict) or set(data) != {"figure", "effector", "on"}:
            raise ValueError('expected {"figure": NAME, "effector": EFFECTOR, "on": {...}}')
        on = data["on"]
        if not isinstance(on, dict) or not set(on) <= {"figure", "joint", "prop", "offset"}:
            raise ValueError('on: expected {"figure": NAME, "joint": JOINT} or {"prop": NAME}, with an "offset"')
        return cls(data["figure"], data["effector"], on.get("figure"), on.get("joint"), on.get("prop"),
                   on.get("offset", [0.0, 0.0, 0.0]))  # fmt: skip
