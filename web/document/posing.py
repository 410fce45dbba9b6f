"""Natural posing in the web UI, without the UI: pin and free effectors, mirror the pose, each
effector's chain reach and each joint's stiffness (``fabrik3d.Posing``).

``PosingControls`` is a part of ``fabrik3d_web.document.controller.Controller``. Every action checks its
input first and raises ``ValueError`` naming the problem, leaving everything as it was; a
changed posing is kept in the scene (a downloaded scene file carries it), the pose is solved
again at once, and undo brings the posing and pose before it back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.io.scene import Scene
from fabrik3d.model.mirror import mirror_positions
from fabrik3d.solver import fk
from fabrik3d.solver.hang import limb_of


class PosingControls:
    """Pin, free, chain reach and stiffness (see the module docstring)."""

    scene: Scene
    targets: dict[str, np.ndarray]
    poles: dict[str, np.ndarray]
    result: fabrik3d.SolveResult
    _free: fabrik3d.Skeleton

    _apply: Callable[..., None]  # (the Controller's)
    _snapshot: Callable[..., Any]  # (the Controller's)
    _push_undo: Callable[..., None]  # (the Controller's)

    def pin_effector(self, name: Any) -> None:
        """Pin the free effector ``name`` where it is now (its target: its current position)."""
        self._apply(True, targets=fabrik3d.pin(self.targets, self.scene.skeleton, self.result.positions, name))

    def free_effector(self, name: Any) -> None:
        """Free the effector ``name``: remove its target (nothing happens if it has none). A limb
        released where the user put it keeps its pose: it follows the body, it does not hang."""
        self._check_effector(name, "free")
        targets = fabrik3d.free(self.targets, name)
        self._posed({name} if name in self.targets else set(), True, lambda undoable: self._apply(undoable, targets))

    def _posed(self, effectors: set[str], undoable: bool, act: Callable[[bool], None]) -> None:
        """``act(undoable)`` with the limbs of ``effectors`` posed by the user: those that hung follow
        the body from now on (``Posing.hang`` without them), in the same undo step."""
        posing = self.posing
        stop = effectors & posing.hang
        if not stop:
            act(undoable)
            return
        snapshot, before = (self._snapshot() if undoable else None), (self.scene, self._free)
        self._use_posing(dataclasses.replace(posing, hang=posing.hang - stop))
        try:
            act(False)
        except BaseException:
            self.scene, self._free = before
            raise
        if undoable:
            self._push_undo(snapshot)

    def turned_limbs(self, rotations: np.ndarray) -> set[str]:
        """The hanging effectors whose limbs (the effector itself too) turn relative to their parents
        between the pose shown and a pose of world frames ``rotations`` (an FK turn of one of their joints)."""
        sk, posing = self.scene.skeleton, self.posing
        before, after = self.result.rotations, np.asarray(rotations, dtype=float)
        out = set()
        for name in posing.hang:
            for j in [sk.index(name), *limb_of(sk, posing, sk.index(name))]:
                same = float(fk.joint_turn(sk, before, sk.names[j]) @ fk.joint_turn(sk, after, sk.names[j]))
                if abs(abs(same) - 1.0) > 1e-9:
                    out.add(name)
                    break
        return out

    def mirror_pose(self, source: Any) -> None:
        """Make the other side the mirror image of the ``source`` side (``"left"`` or ``"right"``):
        its effectors' targets and poles reflected (``fabrik3d.mirror_goals``), then solved from
        the pose with that side's joints reflected too (``mirror_positions``)."""
        sk, pose = self.scene.skeleton, self.result.positions
        targets, poles = fabrik3d.mirror_goals(sk, self.targets, pose, self.poles, source)
        self._apply(True, targets=targets, poles=poles, start=mirror_positions(sk, pose, source))

    def set_reach(self, effector: Any, joint: Any) -> None:
        """Stop the chain of ``effector``'s target at ``joint`` (one of ``reach_options``)."""
        self._check_effector(effector, "reach")
        options = self.reach_options(effector)
        if not isinstance(joint, str) or joint not in options:
            raise ValueError(f"reach.{effector}: {str(joint)[:60]!r} is not a joint above it; choose one of {options}")
        posing = self.posing
        self._set_posing(dataclasses.replace(posing, reach={**posing.reach, effector: joint}))

    def set_hang(self, effector: Any, hangs: Any) -> None:
        """Let ``effector``'s limb hang under gravity while it has no target (``hangs`` True), or
        follow the body, keeping its turn from its parent (False); ``Posing.hang``."""
        self._check_effector(effector, "hang")
        if not isinstance(hangs, bool):
            raise ValueError(f"hang.{effector}: expected true or false, got {str(hangs)[:40]!r}")
        if hangs and not self.can_hang(effector):
            raise ValueError(f"hang.{effector}: its limb has no stiff joint above it to hang from")
        posing = self.posing
        hang = posing.hang | {effector} if hangs else posing.hang - {effector}
        self._set_posing(dataclasses.replace(posing, hang=hang))

    def can_hang(self, effector: str) -> bool:
        """Whether ``effector`` has a limb that can hang (``fabrik3d.solver.hang.limb_of``)."""
        sk = self.scene.skeleton
        return bool(limb_of(sk, self.posing, sk.index(effector)))

    def set_stiffness(self, joint: Any, value: Any) -> None:
        """Set ``joint``'s stiffness: 0 (free) .. 1 (turns only when nothing freer can serve)."""
        sk = self.scene.skeleton
        if not isinstance(joint, str) or joint not in sk:
            raise ValueError(f"stiffness: {str(joint)[:60]!r} is not a joint of this skeleton")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ValueError(f"stiffness.{joint}: expected a number from 0 to 1, got {str(value)[:40]!r}")
        posing = self.posing
        self._set_posing(dataclasses.replace(posing, stiffness={**posing.stiffness, joint: float(value)}))

    # -- readouts -----------------------------------------------------------------------------
    @property
    def posing(self) -> fabrik3d.Posing:
        """The scene's posing (an empty one: the plain full-body chain)."""
        return self.scene.skeleton.posing or fabrik3d.Posing()

    def reach_options(self, effector: str) -> list[str]:
        """The joints where ``effector``'s chain may stop: those above it, its parent first."""
        sk = self.scene.skeleton
        return [sk.names[j] for j in reversed(sk.path_to_root(sk.index(effector))[:-1])]

    def posing_state(self) -> dict[str, Any]:
        """For the panel: ``hang_of`` (effector -> whether its free limb hangs; None: it has no limb
        that can), ``reach_of`` (effector -> the joint its chain stops at), ``reach_options``
        (effector -> joints), ``stiffness_of`` (joint -> 0..1, every joint)."""
        sk, posing = self.scene.skeleton, self.posing
        root = sk.names[sk.root]
        return {
            "hang_of": {e: (e in posing.hang if self.can_hang(e) else None) for e in sk.end_effectors},
            "reach_of": {e: posing.reach.get(e, root) for e in sk.end_effectors},
            "reach_options": {e: self.reach_options(e) for e in sk.end_effectors},
            "stiffness_of": {name: posing.stiffness.get(name, 0.0) for name in sk.names},
        }

    # -- internals ----------------------------------------------------------------------------
    def _check_effector(self, name: Any, where: str) -> None:
        sk = self.scene.skeleton
        if not isinstance(name, str) or not sk.is_effector(name):
            effectors = ", ".join(sk.end_effectors)
            raise ValueError(f"{where}: {str(name)[:60]!r} is not an end effector; valid names are {effectors}")

    def _set_posing(self, posing: fabrik3d.Posing) -> None:
        """Use ``posing`` and solve again (one undo step; nothing changes if the solve fails)."""
        snapshot, before = self._snapshot(), (self.scene, self._free)
        self._use_posing(posing)
        try:
            self._apply(False)
        except BaseException:
            self.scene, self._free = before
            raise
        self._push_undo(snapshot)

    def _use_posing(self, posing: fabrik3d.Posing | None) -> None:
        """The scene's skeleton (and its copy without limits) with ``posing``; no solve."""
        skeleton = self.scene.skeleton.with_posing(posing)
        self.scene = dataclasses.replace(self.scene, skeleton=skeleton)
        self._free = skeleton.without_constraints()
