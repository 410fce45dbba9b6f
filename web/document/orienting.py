"""Turning targets in the web UI, without the UI: a hand's, a foot's or the head's orientation, the
pelvis's (the root's), and where the head looks.

``Orienting`` is a part of ``fabrik3d_web.document.controller.Controller``. An effector's target may carry an
orientation (``fabrik3d.Target(position, orientation)``: the solve turns the wrist, the forearm and
whatever it must so that the hand's frame matches it, and keeps it through later drags of the
position); the root's target may too (the pelvis turns and tilts, the legs following with their
feet where they are). The look (a point) turns the neck and the head toward it after every solve
(``solve(..., look_at=)``), until it is freed. Each change is an undo step (a whole turning drag
is one); keys keep orientations with their targets, and the pose shown.

Orientations are unit quaternions (x, y, z, w), world frames as ``SolveResult.rotations``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.model.targets import unit_quaternion
from fabrik3d.solver.look import face_axis

# Where the look handle waits while the head looks nowhere in particular: this many skeleton sizes
# in front of the face.
LOOK_HOME = 0.35


class Orienting:
    """Orientation targets and the look (see the module docstring).

    Attributes:
        orientations: effector name -> ``(4,)`` its target's orientation (targeted effectors only).
        root_orientation: ``(4,)`` the root's target orientation, or None.
        look: ``(3,)`` the point the head looks at, or None.
    """

    scene: Any
    targets: dict[str, np.ndarray]
    root_target: np.ndarray | None
    result: fabrik3d.SolveResult
    built: fabrik3d.SolveResult | None  # (the Turning part's)
    character: Any
    size: float
    orientations: dict[str, np.ndarray]
    root_orientation: np.ndarray | None = None
    look: np.ndarray | None = None

    _apply: Callable[..., None]  # (the Controller's)
    _check_point: Callable[..., np.ndarray]  # (the Controller's)
    # (``_snapshot`` and ``_push_undo`` are the History part's)

    def _clear_orienting(self) -> None:
        self.orientations, self.root_orientation, self.look = {}, None, None

    # -- what the user does -------------------------------------------------------------------
    def orient_target(self, name: Any, orientation: Any, position: Any = None, *, undoable: bool = True) -> None:
        """Turn effector ``name``'s target to ``orientation``, and move it to ``position`` if given (a
        hand turned about its wrist moves its tip); a free effector is pinned where it is."""
        sk = self.scene.skeleton
        if not isinstance(name, str) or name not in sk.end_effectors:
            raise ValueError(f"turn target {str(name)[:60]!r}: not an end effector")
        q = unit_quaternion(orientation, f"turn target {name}")
        targets = dict(self.targets)
        targets.setdefault(name, self.result.positions[sk.index(name)].copy())
        if position is not None:
            targets[name] = self._check_point(position, f"turn target {name}")
        self._turn(undoable, lambda: self.orientations.__setitem__(name, q), targets=targets)

    def orient_root(self, orientation: Any, *, undoable: bool = True) -> None:
        """Turn the root (the pelvis) to ``orientation`` where it stands (or where it was moved)."""
        sk = self.scene.skeleton
        q = unit_quaternion(orientation, f"turn {sk.names[sk.root]}")
        root = self.root_target if self.root_target is not None else self.result.positions[sk.root].copy()
        self._turn(undoable, lambda: setattr(self, "root_orientation", q), root=root)

    def look_toward(self, point: Any, *, undoable: bool = True) -> None:
        """Make the head look at ``point`` (scene units), now and after every later solve."""
        if self.head_name() is None:
            raise ValueError("look: this skeleton has no head (a joint named 'head', or a character's head role)")
        checked = self._check_point(point, "look")
        self._turn(undoable, lambda: setattr(self, "look", checked))

    def free_look(self) -> None:
        """Stop looking at a point: the neck and the head keep their turns, now the pose the user
        built that later solves relax toward (undoable)."""
        if self.look is not None:
            self._turn(True, lambda: setattr(self, "look", None), built=self.result)

    def free_turns(self) -> None:
        """Free every target's orientation and the root's (the targets stay; undoable)."""
        if self.orientations or self.root_orientation is not None:
            self._turn(True, lambda: self._clear_turns())

    def _clear_turns(self) -> None:
        self.orientations, self.root_orientation = {}, None

    def _turn(self, undoable: bool, change: Callable[[], None], built: Any = None, **goals: Any) -> None:
        """Make ``change`` to the orientations or the look and solve with ``goals`` (``_apply``'s),
        relaxing toward ``built`` if given (it becomes the pose the user built); as it was if that
        fails; one undo step if ``undoable``."""
        before = self._snapshot() if undoable else None
        kept = (dict(self.orientations), self.root_orientation, self.look, self.built)
        change()
        if built is not None:
            self.built = built
        try:
            self._apply(False, **goals)
        except BaseException:
            self.orientations, self.root_orientation, self.look, self.built = kept
            raise
        if before is not None:
            self._push_undo(before)

    # -- readouts -----------------------------------------------------------------------------
    def head_name(self) -> str | None:
        """The joint that carries the face: a character's head role, or ``"head"``; None if neither."""
        roles = {} if self.character is None else getattr(self.character, "effectors", {})
        name = roles.get("head", "head")
        return name if name in self.scene.skeleton.names else None

    def look_point(self) -> np.ndarray | None:
        """``(3,)`` where the look handle sits: the look, or in front of the face (None: no head)."""
        head = self.head_name()
        if head is None:
            return None
        if self.look is not None:
            return self.look.copy()
        sk = self.scene.skeleton
        axis = face_axis(sk, self.result.rotations, head)
        return self.result.positions[sk.index(head)] + LOOK_HOME * self.size * axis

    def target_orientation(self, name: str) -> np.ndarray:
        """``(4,)`` effector ``name``'s target orientation, or its frame now."""
        if name in self.orientations:
            return self.orientations[name].copy()
        return self.result.rotations[self.scene.skeleton.index(name)].copy()

    def orienting_state(self) -> dict[str, Any]:
        """The orientations and the look for the trame state contract (docs/web.md)."""
        return {
            "orientations": {k: np.round(q, 6).tolist() for k, q in self.orientations.items()},
            "root_orientation": None if self.root_orientation is None else np.round(self.root_orientation, 6).tolist(),
            "look_target": None if self.look is None else np.round(self.look, 6).tolist(),
        }

    # -- for the solve ------------------------------------------------------------------------
    def _goals(self, targets: dict[str, np.ndarray], root: np.ndarray | None) -> tuple[dict[str, Any], Any, Any]:
        """``solve``'s targets, root target and look for these targets and root: orientations where set."""
        goals = {
            k: fabrik3d.Target(p, self.orientations[k]) if k in self.orientations else p for k, p in targets.items()
        }
        if self.root_orientation is not None:
            sk = self.scene.skeleton
            at = root if root is not None else self.result.positions[sk.root]
            root = fabrik3d.Target(at, self.root_orientation)
        head = self.head_name()
        look = None if self.look is None or head is None else {head: self.look}
        return goals, root, look

    def _kept_orientations(self, targets: dict[str, np.ndarray]) -> None:
        """Forget the orientations of effectors that no longer have a target."""
        self.orientations = {k: q for k, q in self.orientations.items() if k in targets}


def turned_about(q: Any, axis: Any, angle: float) -> np.ndarray:
    """``(4,)`` the orientation ``q`` turned by ``angle`` radians about the unit world ``axis``."""
    turn = rot.axis_angle(tuple(float(v) for v in axis), angle)  # type: ignore[arg-type]
    return np.array(rot.normalize_quat(rot.mul(turn, tuple(float(v) for v in q))))  # type: ignore[arg-type]
