"""Undo and redo in the web UI, without the UI: every change the user makes is one step.

A ``Snapshot`` holds everything a step can change: the goals (targets, root target, poles), the
pose, the scene (its skeleton carries the posing; a preset switch or an opened file changes it
whole), and the timeline's keys and frame. ``History`` is a part of
``fabrik3d_web.document.controller.Controller``; undo after switching preset or opening a file brings the
previous scene back with its pose.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.io.scene import Scene
from fabrik3d.model.keys import Animation

HISTORY = 200  # undo steps kept
# Opened characters the undo steps may hold (a character's meshes can take hundreds of MB): the steps
# before the oldest of them are forgotten.
HISTORY_CHARACTERS = 3


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Targets, pose, scene and keys at one moment, for undo/redo."""

    targets: dict[str, np.ndarray]
    root_target: np.ndarray | None
    poles: dict[str, np.ndarray]
    result: fabrik3d.SolveResult
    scene: Scene
    source: str
    free: fabrik3d.Skeleton  # the scene's skeleton without its limits
    animation: Animation
    frame: int
    built: fabrik3d.SolveResult | None = None  # the pose built by turning joints (``fabrik3d_web.document.turning``)
    character: Any = None  # the character whose skeleton the scene is (``fabrik3d_web.document.characters``)
    turned: tuple[Any, Any, Any] = ({}, None, None)  # orientations, root orientation, look (``.orienting``)


class History:
    """Undo and redo (see the module docstring)."""

    scene: Scene
    source: str
    targets: dict[str, np.ndarray]
    root_target: np.ndarray | None
    poles: dict[str, np.ndarray]
    result: fabrik3d.SolveResult
    animation: Animation
    frame: int
    built: fabrik3d.SolveResult | None
    character: Any
    orientations: dict[str, np.ndarray]
    root_orientation: np.ndarray | None
    look: np.ndarray | None
    _free: fabrik3d.Skeleton
    undo_stack: list[Snapshot]
    redo_stack: list[Snapshot]
    # Told of each step pushed (``"push"``) or dropped (``"drop"``): a document of several figures keeps
    # one order of steps over them all (``fabrik3d_web.document.document``).
    on_step: Callable[[Any, str], None] | None = None

    # (``_record_frame`` is the Recording part's, ``_keys_changed`` the Timeline part's)
    _solve: Callable[..., fabrik3d.SolveResult]  # (the Controller's)

    def begin_drag(self) -> None:
        """A drag starts: remember the targets and pose for undo."""
        self._push_undo()

    def end_drag(self) -> None:
        """A drag ends: forget its undo step if nothing moved (a click on a handle); else a last frame that
        a drag frame's allowance left short of its targets is solved to its end (``fabrik3d.solver.effort``:
        the pose the user lets go of is the one the solve finds)."""
        if self.undo_stack and self.undo_stack[-1].result is self.result:
            self.undo_stack.pop()
            if self.on_step is not None:
                self.on_step(self, "drop")
        elif not self.result.converged:
            start = self.result
            got = self._solve(self.targets, self.root_target, self.poles, start.positions, start.rotations, math.inf)
            off = [max(r.errors.values(), default=0.0) for r in (start, got)]
            self.result = got if off[1] < off[0] else start

    def undo(self) -> bool:
        """Undo the last change; False if there is nothing to undo."""
        if not self.undo_stack:
            return False
        self.redo_stack.append(self._snapshot())
        self._restore(self.undo_stack.pop())
        return True

    def redo(self) -> bool:
        """Redo the last undone change; False if there is nothing to redo."""
        if not self.redo_stack:
            return False
        self.undo_stack.append(self._snapshot())
        self._restore(self.redo_stack.pop())
        return True

    def _snapshot(self) -> Snapshot:
        root = None if self.root_target is None else self.root_target.copy()
        targets, poles = ({k: v.copy() for k, v in d.items()} for d in (self.targets, self.poles))
        scene = (self.scene, self.source, self._free)
        turned = (dict(self.orientations), self.root_orientation, self.look)
        return Snapshot(
            targets, root, poles, self.result, *scene, self.animation, self.frame, self.built, self.character, turned
        )

    def _push_undo(self, snapshot: Snapshot | None = None) -> None:
        self.undo_stack.append(snapshot or self._snapshot())
        del self.undo_stack[:-HISTORY]
        self.redo_stack.clear()
        if self.on_step is not None:
            self.on_step(self, "push")
        kept = {id(self.character)} if self.character is not None else set()
        for k in range(len(self.undo_stack) - 1, -1, -1):  # (newest first: the oldest characters go)
            held = self.undo_stack[k].character
            if held is not None and id(held) not in kept:
                if len(kept) >= HISTORY_CHARACTERS:
                    del self.undo_stack[: k + 1]
                    break
                kept.add(id(held))

    def _restore(self, snap: Snapshot) -> None:
        self.targets = {k: v.copy() for k, v in snap.targets.items()}
        self.root_target = None if snap.root_target is None else snap.root_target.copy()
        self.poles = {k: v.copy() for k, v in snap.poles.items()}
        self.scene, self.source, self._free = snap.scene, snap.source, snap.free
        self.character = snap.character
        self.orientations, self.root_orientation, self.look = dict(snap.turned[0]), *snap.turned[1:]
        keys_changed = snap.animation is not self.animation
        self.animation, self.frame, self.built = snap.animation, snap.frame, snap.built
        self.result = snap.result
        if keys_changed:
            self._keys_changed()
        self._record_frame()

    def skeleton_changed_by(self, action: Any, *args: Any) -> bool:
        """Run ``action(*args)``; whether it changed the skeleton's joints (an undo past a preset
        switch or an opened file; a changed posing keeps the joints)."""
        before = self.scene.skeleton
        action(*args)
        after = self.scene.skeleton
        return after is not before and (
            after.names != before.names or not np.array_equal(after.rest_positions, before.rest_positions)
        )
