"""Shaping a hand in the web UI, without the UI: a shape (fist, point, grip...), a curl per finger, a
spread, an amount, and the shape mirrored onto the other hand (``fabrik3d.shape_hand``).

``Hands`` is a part of ``fabrik3d_web.document.controller.Controller``. Edits of one hand in a row make a
*hand edit*: it starts from the pose shown before its first edit (its *base*) and holds the shape
chosen, the curls and the spread the user set and the amount; each edit shapes the base's hand
again with all of them (``amount`` blends from the base's fingers to the shape), so moving the
amount or a curl back gives the hand it had. Any other change (a drag, an undo, the other hand)
ends the hand edit; the next starts from the pose then shown. Choosing a shape sets every finger
and forgets the curls and spread set before it; a curl alone moves only its finger. The pose made
is the pose the user built (``Turning.pose_to``): undoable (a slider's drag is one step), keyed by
K, kept by later drags (the solve carries the fingers with the hands).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.model.fingers import FINGERS
from fabrik3d.model.pose_library import Pose
from fabrik3d.solver.fk import joint_turn
from fabrik3d.solver.hands import SHAPES, finger_joints
from fabrik3d.solver.rig import rig

SIDES = ("l", "r")


@dataclasses.dataclass(frozen=True)
class HandEdit:
    """One hand's edits in a row (module docstring): what they start from and what they hold."""

    side: str
    base: fabrik3d.SolveResult
    shape: str | None = None
    curls: dict[str, float] = dataclasses.field(default_factory=dict)
    spread: float | None = None
    amount: float = 1.0
    made: fabrik3d.SolveResult | None = None


class Hands:
    """Hand shapes (see the module docstring)."""

    scene: Any
    result: fabrik3d.SolveResult
    character: Any
    hand_edit: HandEdit | None = None

    pose_to: Callable[..., None]  # (the Turning part's)

    def hand_sides(self) -> list[str]:
        """The sides whose hand has fingers (``"l"``, ``"r"``; none on a character without them)."""
        return [s for s in SIDES if finger_joints(self.scene.skeleton, s)]

    # -- what the user does -------------------------------------------------------------------
    def shape_hand(self, side: Any, shape: Any, *, undoable: bool = True) -> None:
        """Give hand ``side`` the shape ``shape`` (every finger; the curls and spread set before it
        forgotten), blended by the hand edit's amount."""
        if shape not in SHAPES:
            raise ValueError(f"hand shape: expected one of {', '.join(SHAPES)}, got {str(shape)[:40]!r}")
        self._edit_hand(side, undoable, shape=shape, curls={}, spread=None)

    def curl_finger(self, side: Any, finger: Any, curl: Any, *, undoable: bool = True) -> None:
        """Curl one finger of hand ``side``: 0 straight, 1 as in the fist."""
        edit = self._hand_edit(side)
        if finger not in finger_joints(self.scene.skeleton, edit.side):
            raise ValueError(f"curl: expected a finger ({', '.join(FINGERS)}), got {str(finger)[:40]!r}")
        value = _number(curl, f"curl {finger}")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"curl {finger}: expected a number from 0 to 1, got {value:g}")
        self._edit_hand(side, undoable, curls={**edit.curls, finger: value})

    def spread_hand(self, side: Any, degrees: Any, *, undoable: bool = True) -> None:
        """Spread the fingers of hand ``side`` (degrees at the index; the others in proportion)."""
        value = _number(degrees, "spread")
        if not -30.0 <= value <= 30.0:
            raise ValueError(f"spread: expected degrees from -30 to 30, got {value:g}")
        self._edit_hand(side, undoable, spread=value)

    def set_hand_amount(self, side: Any, amount: Any, *, undoable: bool = True) -> None:
        """How far hand ``side`` goes from its fingers before the edit to the shape (0..1)."""
        value = _number(amount, "amount")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"amount: expected a number from 0 to 1, got {value:g}")
        self._edit_hand(side, undoable, amount=value)

    def mirror_hand(self, side: Any) -> None:
        """Give the other hand the fingers of hand ``side``, mirrored (one undo step)."""
        s = self._side(side)
        sk, r = self.scene.skeleton, self.result
        rig_map = None if self.character is None else self.character.rig_map
        pose = fabrik3d.capture_pose(sk, r.positions, r.rotations, rig_map, parts="hands")
        own = f"_{s}"
        one = Pose({k: v for k, v in pose.bones.items() if k.endswith(own)}, {
            k: v for k, v in pose.twists.items() if k.endswith(own)})  # fmt: skip
        p, q = fabrik3d.apply_pose(sk, r.positions, r.rotations, one, "hands", mirrored=True, rig_map=rig_map)
        self.pose_to(p, q)

    # -- readouts -----------------------------------------------------------------------------
    def hand_state(self, side: Any) -> dict[str, Any]:
        """The panel's readouts of hand ``side``: ``hand_curls`` (finger -> 0..1, measured on the pose),
        ``hand_spread`` (degrees, as the hand edit set it; 0 if none), ``hand_shape`` (its shape or "")
        and ``hand_amount``."""
        s = side if side in self.hand_sides() else None
        edit = self.hand_edit if self.hand_edit is not None and self.hand_edit.made is self.result else None
        edit = edit if edit is not None and edit.side == s else None
        return {
            "hand_curls": {} if s is None else self.finger_curls(s),
            "hand_spread": 0.0 if edit is None or edit.spread is None else edit.spread,
            "hand_shape": "" if edit is None or edit.shape is None else edit.shape,
            "hand_amount": 1.0 if edit is None else edit.amount,
        }

    def hand_points(self, side: Any) -> np.ndarray:
        """``(m, 3)`` hand ``side``'s joint and its fingers' joints on the pose shown."""
        s, sk = self._side(side), self.scene.skeleton
        tops = [joints[0] for joints in finger_joints(sk, s).values()]
        joints = [int(sk.parents[tops[0]])] + [j for top in tops for j in rig(sk).subtree(top)]
        return self.result.positions[joints].copy()

    def finger_curls(self, side: str) -> dict[str, float]:
        """finger -> how curled it is on the pose shown: its joints' turns from rest, summed, over
        the same in the fist (0 straight, 1 as in the fist; 2 decimals)."""
        sk = self.scene.skeleton
        fist = _fist_turns(sk, side)
        now = _finger_turns(sk, self.result.rotations, side)
        return {f: round(min(1.0, now[f] / fist[f]) if fist[f] > 0 else 0.0, 2) for f in now}

    # -- internals ----------------------------------------------------------------------------
    def _side(self, side: Any) -> str:
        s = {"left": "l", "right": "r"}.get(side, side) if isinstance(side, str) else None
        if s not in SIDES:
            raise ValueError(f"hand: expected 'l' or 'r', got {str(side)[:40]!r}")
        if s not in self.hand_sides():
            raise ValueError(f"hand {s}: this skeleton has no fingers there")
        return s

    def _hand_edit(self, side: Any) -> HandEdit:
        """The hand edit of ``side`` going on, or a new one from the pose shown."""
        s = self._side(side)
        edit = self.hand_edit
        if edit is not None and edit.side == s and edit.made is self.result:
            return edit
        return HandEdit(s, self.result)

    def _edit_hand(self, side: Any, undoable: bool, **changes: Any) -> None:
        edit = dataclasses.replace(self._hand_edit(side), **changes)
        sk, base = self.scene.skeleton, edit.base
        p, q = fabrik3d.shape_hand(
            sk, base.positions, base.rotations, edit.side, edit.shape or "open", edit.amount,
            curls=edit.curls or None, spread=edit.spread,
        )  # fmt: skip
        if edit.shape is None and edit.spread is None:  # (curls alone: only their fingers move)
            joints = [j for f in edit.curls for j in rig(sk).subtree(finger_joints(sk, edit.side)[f][0])]
            kept_p, kept_q = base.positions.copy(), base.rotations.copy()
            kept_p[joints], kept_q[joints] = p[joints], q[joints]
            p, q = kept_p, kept_q
        self.pose_to(p, q, undoable=undoable)
        self.hand_edit = dataclasses.replace(edit, made=self.result)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name}: expected a number, got {str(value)[:40]!r}")
    return float(value)


def _finger_turns(sk: fabrik3d.Skeleton, rotations: np.ndarray, side: str) -> dict[str, float]:
    """finger -> the angles of its three joints' turns from rest, summed (radians)."""
    out = {}
    for finger, joints in finger_joints(sk, side).items():
        angles = [2.0 * math.acos(min(1.0, abs(float(joint_turn(sk, rotations, sk.names[j])[3])))) for j in joints]
        out[finger] = sum(angles)
    return out


_FISTS: dict[tuple[int, str], tuple[fabrik3d.Skeleton, dict[str, float]]] = {}


def _fist_turns(sk: fabrik3d.Skeleton, side: str) -> dict[str, float]:
    """``_finger_turns`` of the fist on ``sk`` (kept per skeleton)."""
    kept = _FISTS.get((id(sk), side))
    if kept is None or kept[0] is not sk:
        rest = fabrik3d.solve(sk, {})
        _, q = fabrik3d.shape_hand(sk, rest.positions, rest.rotations, side, "fist")
        if len(_FISTS) > 16:
            _FISTS.clear()
        kept = _FISTS[(id(sk), side)] = (sk, _finger_turns(sk, q, side))
    return kept[1]
