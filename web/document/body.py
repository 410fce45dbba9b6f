"""The body in the web UI, without the UI: the mannequin, the floor and balance, the proportions.

``Body`` is a part of ``fabrik3d_web.document.controller.Controller``.

* The mannequin (``fabrik3d.model.mannequin``): a wooden-mannequin mesh for a skeleton without a
  character mesh, one rigid influence per vertex, skinned into the current pose every frame as a
  character's mesh is (``fabrik3d.model.skinning.Skinner``: vertex ``v`` of joint ``j`` goes to
  ``D_j · v``, ``D_j`` the joint's rigid motion from its rest pose, ``Character.deltas``).
* The floor and balance: the scene's ``floor`` (a height, or None) and ``balance`` (``solve(...,
  floor=, balance=)``), kept in the scene (a downloaded scene file carries them); each switch is one
  undo step. ``balance_state`` gives the centre of mass, its ground shadow, the support area and
  whether the shadow is inside it (``fabrik3d.center_of_mass``, ``fabrik3d.support_area``).
* Proportions of the humanoid preset (``fabrik3d.presets.humanoid``): ``set_proportion`` rebuilds the
  skeleton and carries the pose onto it with the same joint turns (``fabrik3d.presets.repose``), and
  the timeline's keys (``repose_key``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.io.scene import Scene
from fabrik3d.model import mass, presets
from fabrik3d.model.key_poses import KeyPose
from fabrik3d.model.keys import Key
from fabrik3d.model.mannequin import Mannequin
from fabrik3d.model.proportions import FACTOR, HEIGHT, Proportions
from fabrik3d.solver.proportions import repose_key

# The proportions the panel offers (Proportions' fields) and their bounds.
PROPORTIONS = tuple(f.name for f in dataclasses.fields(Proportions))
BOUNDS = {name: HEIGHT if name == "height" else FACTOR for name in PROPORTIONS}
_HUMANOID = presets.get("humanoid")


class Body:
    """The mannequin, the floor and balance, the proportions (see the module docstring)."""

    scene: Scene
    result: fabrik3d.SolveResult
    character: Any
    targets: dict[str, np.ndarray]
    root_target: np.ndarray | None
    poles: dict[str, np.ndarray]
    built: Any
    animation: Any
    _free: fabrik3d.Skeleton
    _mannequin: Mannequin | None = None

    _bake_to: Callable[..., Any]  # (the Timeline's)
    _keys_changed: Callable[..., None]  # (the Timeline's)
    _apply: Callable[..., None]  # (the Controller's)
    _snapshot: Callable[..., Any]  # (the Controller's)
    _push_undo: Callable[..., None]  # (the Controller's)
    _solve: Callable[..., Any]  # (the Controller's)

    # -- the mannequin -------------------------------------------------------------------------
    @property
    def has_feet(self) -> bool:
        """Whether the skeleton stands on feet (a humanoid's roles: a support area, the mannequin's
        human widths)."""
        return len(mass.humanoid_roles(self.scene.skeleton)) >= 8

    def mannequin(self) -> Mannequin | None:
        """The mannequin of the scene's skeleton (built once per skeleton), or None with a character."""
        if self.character is not None:
            return None
        sk = self.scene.skeleton
        m = self._mannequin
        if m is None or m.skeleton is not sk:
            if (
                m is not None
                and m.skeleton.names == sk.names
                and np.array_equal(m.skeleton.rest_positions, sk.rest_positions)
            ):
                m = dataclasses.replace(m, skeleton=sk)  # (a changed posing: the same body)
            else:
                m = Mannequin.of(sk)
            self._mannequin = m
        return m

    def mannequin_skinned(self, positions: Any = None, rotations: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """The mannequin in the current pose (or the pose given): ``(positions, normals)`` ``(v, 3)`` float32."""
        m = self.mannequin()
        if m is None:
            raise ValueError("mannequin: a character shows its own mesh")
        p = self.result.positions if positions is None else positions
        return m.skinned(p, self.result.rotations if rotations is None else rotations)

    # -- floor and balance ---------------------------------------------------------------------
    @property
    def ground(self) -> float:
        """The ground's height: the scene's floor, or the one its rest feet stand on."""
        return mass.rest_ground(self.scene.skeleton) if self.scene.floor is None else float(self.scene.floor)

    def set_floor(self, on: Any) -> None:
        """Solve with a floor (at the ground the rest feet stand on) or without one; one undo step.
        Without the floor, balance is off too (it keeps the body over the feet on the floor)."""
        if not isinstance(on, bool):
            raise ValueError(f"floor: expected true or false, got {str(on)[:40]!r}")
        floor = mass.rest_ground(self.scene.skeleton) if on else None
        self._set_ground(floor, self.scene.balance and on)

    def set_balance(self, on: Any) -> None:
        """Keep the centre of mass over the feet (and the floor on) or not; one undo step."""
        if not isinstance(on, bool):
            raise ValueError(f"balance: expected true or false, got {str(on)[:40]!r}")
        floor = self.scene.floor
        if on and floor is None:
            floor = mass.rest_ground(self.scene.skeleton)
        self._set_ground(floor, on)

    def _set_ground(self, floor: float | None, balance: bool) -> None:
        if (floor, balance) == (self.scene.floor, self.scene.balance):
            return
        snapshot, scene = self._snapshot(), self.scene
        self.scene = dataclasses.replace(scene, floor=floor, balance=balance)
        try:
            self._apply(False)
        except BaseException:
            self.scene = scene
            raise
        self._push_undo(snapshot)

    def balance_state(self, positions: Any = None) -> dict[str, Any]:
        """``com`` ``(3,)``, ``shadow`` ``(3,)`` (on the ground), ``support`` ``(k, 2)`` ground polygon
        ``(x, z)``, ``inside``: whether the shadow is over the support area, ``margin``: how far inside
        (scene units, negative outside), for the pose (default the current one)."""
        sk = self.scene.skeleton
        p = self.result.positions if positions is None else positions
        com, support, margin = mass.balance_margin(sk, p, floor=self.ground)
        shadow = np.array([com[0], self.ground, com[2]])
        return {"com": com, "shadow": shadow, "support": support, "inside": margin >= 0.0, "margin": margin}

    def body_state(self) -> dict[str, Any]:
        """For the panel: ``floor_on``, ``balance_on``, ``com_inside``, ``com`` (``[x, y, z]``),
        ``has_feet``, ``has_mannequin``, ``proportions`` (name -> value, or null: not the humanoid)."""
        b = self.balance_state() if self.has_feet else None
        props = self.proportions()
        return {
            "floor_on": self.scene.floor is not None,
            "balance_on": bool(self.scene.balance),
            "has_feet": self.has_feet,
            "has_mannequin": self.character is None,
            "com": None if b is None else np.round(b["com"], 6).tolist(),
            "com_inside": None if b is None else bool(b["inside"]),
            "proportions": None if props is None else props.to_dict(),
        }

    # -- proportions -------------------------------------------------------------------------------
    def proportions(self) -> Proportions | None:
        """The scene's humanoid proportions (the default body's for the humanoid preset), or None for
        any other skeleton (a character's too)."""
        if self.character is not None:
            return None
        if self.scene.proportions is not None:
            return self.scene.proportions
        sk = self.scene.skeleton
        same = sk.names == _HUMANOID.names and np.array_equal(sk.rest_positions, _HUMANOID.rest_positions)
        return Proportions() if same else None

    def set_proportion(self, name: Any, value: Any) -> None:
        """Set one proportion (``PROPORTIONS``: ``height`` in metres, the others factors): the humanoid
        rebuilt with them, the pose carried onto it with the same joint turns, the targets where its
        effectors went; one undo step."""
        old = self.proportions()
        if old is None:
            raise ValueError("proportions: only the humanoid has proportions")
        if name not in PROPORTIONS:
            raise ValueError(f"proportions: {str(name)[:40]!r} is not one of {', '.join(PROPORTIONS)}")
        try:
            new = dataclasses.replace(old, **{name: value})
        except ValueError as exc:
            raise ValueError(f"proportions.{exc}") from None
        if new == old:
            return
        self._use_proportions(new)

    def _use_proportions(self, new: Proportions) -> None:
        old_sk = self.scene.skeleton
        sk = presets.humanoid(**new.to_dict()).with_posing(old_sk.posing)
        # (the pose shown carried as a key is: targets where its effectors went, the poles with the root)
        now = Key(0, self.targets, self.root_target, self.poles, KeyPose(self.result.positions, self.result.rotations))
        carried = repose_key(old_sk, sk, now, now.pose)
        positions, rotations = carried.pose
        moved = {name: t.position for name, t in carried.targets.items()}
        root = None if carried.root_target is None else carried.root_target.position
        poles = dict(carried.poles)
        # (the keys too, each from its pose: the one it holds, or the one baked at its frame on the old body)
        keys = tuple(repose_key(old_sk, sk, k, k.pose or self._bake_to(k.frame)) for k in self.animation.keys)
        snapshot, before = self._snapshot(), (self.scene, self._free, self.built)
        floor = None if self.scene.floor is None else mass.rest_ground(sk)
        self.scene = dataclasses.replace(self.scene, skeleton=sk, proportions=new, floor=floor)
        self._free, self.built = sk.without_constraints(), None
        try:
            self.result = self._solve(moved, root, poles, positions, rotations)
        except BaseException:
            self.scene, self._free, self.built = before
            raise
        self.targets, self.root_target, self.poles = moved, root, poles
        self.animation = dataclasses.replace(self.animation, keys=keys)
        self._keys_changed()
        self._push_undo(snapshot)
