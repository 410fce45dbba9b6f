"""Turning a joint in the web UI, without the UI: forward kinematics (``fabrik3d.solver.fk``).

``Turning`` is a part of ``fabrik3d_web.document.controller.Controller``. The user chooses a joint and sets
its turn from the rest pose as Euler angles in degrees (X, then Y about the bone, then Z, about the
joint's rest axes: Blender's XYZ pose-bone rotation); the joint turns within its own limits, the
joints below follow it rigidly and nothing else moves (``fabrik3d.solver.fk.turn_joint``; the root
turns the whole skeleton about itself). The angles shown are then the turn actually applied (the
limit's stop where the user asked beyond it). Targets and poles of the effectors below it are
carried with the turn, so they stay where their effectors went; the turned pose becomes the pose
the user built, which stiff joints relax toward in later drags (so a turned spine stays turned).
One undo step per turn (a slider's drag is one step: ``begin_drag`` and ``end_drag``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.io.scene import Scene
from fabrik3d.solver.fk import joint_turn, turn_joint
from fabrik3d.solver.ground import lifted_onto_floor
from fabrik3d.solver.hang import hang_free_limbs
from fabrik3d.solver.rig import rig


class Turning:
    """Choose a joint and turn it (see the module docstring).

    Attributes:
        built: the pose the user built by turning joints (a ``SolveResult``: its positions and
            frames; stiff joints relax toward it, turns about the bones included), or None (the
            rest pose).
    """

    scene: Scene
    targets: dict[str, np.ndarray]
    poles: dict[str, np.ndarray]
    result: fabrik3d.SolveResult
    limits: bool
    tolerance: float
    _free: fabrik3d.Skeleton
    built: fabrik3d.SolveResult | None = None
    orientations: dict[str, np.ndarray]  # (the Orienting part's, with ``root_orientation``)
    root_orientation: np.ndarray | None
    root_target: np.ndarray | None
    # (``_push_undo`` is the History part's, ``_record_frame`` the Recording part's)

    turned_limbs: Callable[..., set[str]]  # (the PosingControls part's)

    def joint_angles(self, name: str) -> list[float]:
        """The turn of joint ``name`` as Euler angles ``[x, y, z]``, degrees (module docstring)."""
        turn = joint_turn(self.scene.skeleton, self.result.rotations, name)
        return [round(a, 3) + 0.0 for a in rot.euler_xyz(tuple(turn.tolist()))]  # (+ 0.0: no -0.0)

    def turnable_joints(self) -> list[str]:
        """The joints the user can turn: every joint, the root too."""
        return list(self.scene.skeleton.names)

    def turn(self, name: Any, angles: Any, *, undoable: bool = True) -> None:
        """Turn joint ``name`` to Euler ``angles`` ``[x, y, z]`` (degrees, each in [-360, 360])."""
        sk = self.scene.skeleton
        if not isinstance(name, str) or name not in self.turnable_joints():
            raise ValueError(f"turn: {str(name)[:60]!r} is not a joint that turns (a joint of the skeleton)")
        try:
            xyz = checks.vec(angles, "angles")
        except ValueError:
            raise ValueError(f"turn {name}: expected three angles in degrees, got {str(angles)[:60]!r}") from None
        if max(abs(a) for a in xyz) > 360.0:
            raise ValueError(f"turn {name}: angles must be within ±360 degrees, got {list(xyz)}")
        skeleton = sk if self.limits else self._free
        old_p, old_q = self.result.positions, self.result.rotations
        positions, rotations = turn_joint(skeleton, old_p, old_q, name, rot.from_euler_xyz(xyz))
        j = sk.index(name)
        below = {sk.names[k] for k in rig(sk).subtree(j)}  # (the root's: every effector)
        # (the world turn of the joint's frame about the joint, which stays, carries the goals of the
        # effectors below it)
        carry = rot.mul(tuple(rotations[j].tolist()), rot.conj(tuple(old_q[j].tolist())))  # type: ignore[arg-type]
        pivot = old_p[j]

        def carried(point: np.ndarray) -> np.ndarray:
            return pivot + np.array(rot.rotate(carry, tuple((point - pivot).tolist())))  # type: ignore[arg-type]

        targets = {k: carried(v) if k in below else v for k, v in self.targets.items()}
        poles = {k: carried(v) if k in below else v for k, v in self.poles.items()}
        # (a limb turned by hand is posed: the turned pose, the pose the user built, has it so, and it
        # follows the body from now on; the free ones, posed before neither, hang at once from the
        # turned trunk: ``fabrik3d.solver.hang``)
        built = None if self.built is None else self.built.rotations
        busy = set(targets) | set(poles) | self.turned_limbs(rotations)
        positions, rotations = hang_free_limbs(skeleton, positions, rotations, busy, built_rotations=built)
        self._turned(undoable, targets, poles, positions, rotations)

    def pose_to(self, positions: np.ndarray, rotations: np.ndarray, *, undoable: bool = True) -> None:
        """Show a pose made by forward kinematics (a hand shape, a pasted or applied pose) as it is, the
        pose the user built now, exactly as a turn: the targeted effectors' targets (their orientations
        too) and the root's target go where the pose put them, so later drags keep it."""
        sk = self.scene.skeleton
        p, q = np.asarray(positions, dtype=float), np.asarray(rotations, dtype=float)
        if p.shape != (len(sk), 3) or q.shape != (len(sk), 4) or not (np.isfinite(p).all() and np.isfinite(q).all()):
            raise ValueError("pose: expected a finite pose of this skeleton")
        p = lifted_onto_floor(sk, p, self.scene.floor)  # (so the next solve finds it settled)
        if undoable:
            self._push_undo()
        self.orientations = {k: q[sk.index(k)].copy() for k in self.orientations}
        if self.root_target is not None:
            self.root_target = p[sk.root].copy()
        if self.root_orientation is not None:
            self.root_orientation = q[sk.root].copy()
        targets = {k: p[sk.index(k)].copy() for k in self.targets}
        # (an arm the pose turns is posed by it: the pose built now has it so, and it follows the body)
        self._turned(False, targets, dict(self.poles), p, q)

    def _turned(
        self,
        undoable: bool,
        targets: dict[str, np.ndarray],
        poles: dict[str, np.ndarray],
        positions: np.ndarray,
        rotations: np.ndarray,
    ) -> None:
        """Show the turned pose as it is (no solve: the user set it), the pose the user built now; the
        carried goals kept."""
        sk = self.scene.skeleton
        errors = {k: float(np.linalg.norm(positions[sk.index(k)] - v)) for k, v in targets.items()}
        converged = all(e <= self.tolerance for e in errors.values())
        if undoable:
            self._push_undo()
        self.result = self.built = fabrik3d.SolveResult(positions, rotations, 0, errors, converged)
        self.targets, self.poles = targets, poles
        self._record_frame()
