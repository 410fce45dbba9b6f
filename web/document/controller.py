"""What the web UI does, without the UI: targets, solving, exports; undo/redo, recording, natural posing
and the timeline in their own parts (``fabrik3d_web.document.history``, ``.recording``, ``.posing``, ``.timeline``).

``Controller`` holds one scene and its current pose. Every user action is a method
named after it (``move_target``, ``undo``, ``load_scene_text`` ...); each checks all of
its input first and raises ``ValueError`` with a message naming the problem, leaving
the scene, targets and pose exactly as they were. Only numpy and ``fabrik3d`` are
imported here (no trame, no VTK), so the logic is tested without a server.

Shapes: ``n`` joints in skeleton order; positions ``(n, 3)`` in scene units (Y up),
rotations ``(n, 4)`` world frames as quaternions (x, y, z, w).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d import checks, display
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.io.stage import SeveralFiguresError, Stage, parse_stage
from fabrik3d.model import presets
from fabrik3d.model.workspace import WORKSPACE_SIZES

from .body import Body
from .characters import MAX_CHARACTER_BYTES, Characters, is_character_file, uploaded_file
from .hands import Hands
from .history import History
from .orienting import Orienting
from .poses import Poses
from .posing import PosingControls
from .recording import Recording
from .timeline import Timeline
from .turning import Turning

MAX_SCENE_BYTES = 2 * 1024 * 1024  # an uploaded scene file larger than this is refused (the octopus: ~20 kB)
# An uploaded scene of more joints is refused before it is built (2000 load and drag in < 1 s here).
MAX_SCENE_JOINTS = 2000
MAX_ITERATIONS = 1000  # the iteration limit the panel accepts (a drag solves once per mouse move)
_KEEP: Any = object()  # "leave as it is", for an optional argument whose None means "none"


def scene_file_stage(text: str | bytes, source: str) -> Stage:
    """The stage of an uploaded scene file's text, within ``MAX_SCENE_BYTES`` and ``MAX_SCENE_JOINTS``."""
    if len(text) > MAX_SCENE_BYTES:
        raise ValueError(f"{source}: file is too large ({len(text)} bytes, limit {MAX_SCENE_BYTES})")
    return parse_stage(text, source, MAX_SCENE_JOINTS)


class Controller(History, Recording, PosingControls, Timeline, Turning, Orienting, Characters, Hands, Poses, Body):
    """The state of the web UI and everything the user can do to it.

    Attributes:
        scene: the loaded scene (its skeleton, its own targets and solver settings).
        targets: effector name -> ``(3,)`` current target; effectors without one are free.
        root_target: ``(3,)`` root position the user dragged to, or ``None``.
        poles: effector name -> ``(3,)`` pole point its chain's inner joints bend toward
            (elbows, knees); effectors without one bend freely.
        result: the current pose (a ``fabrik3d.SolveResult``).
        limits: whether the solve uses the skeleton's joint limits.
        tolerance, max_iterations: solver settings.
        solve_ms: duration of the last solve, milliseconds.
    """

    def __init__(self, scene: Scene | None = None, source: str = "humanoid", character: Any = None) -> None:
        self.limits = True
        self.load(scene if scene is not None else scene_or_preset("humanoid"), source, character)

    # -- loading ------------------------------------------------------------------------------
    def load(self, scene: Scene, source: str = "scene", character: Any = None) -> None:
        """Make ``scene`` current: its own targets and keys, the rest pose solved, an empty take; one
        undo step brings the scene before it back.

        All or nothing: if solving the new scene fails, the current one stays.
        """
        before = dict(self.__dict__)
        snapshot = self._snapshot() if "scene" in before else None
        try:
            self._load(scene, source, character)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        if snapshot is not None:
            self._push_undo(snapshot)

    def _load(self, scene: Scene, source: str, character: Any = None) -> None:
        self.scene = scene
        self.character = character
        self.source = source
        self._free = scene.skeleton.without_constraints()
        self.size = display.skeleton_size(scene.skeleton)
        self.tolerance = scene.tolerance
        self.max_iterations = min(scene.max_iterations, MAX_ITERATIONS)
        if not hasattr(self, "undo_stack"):
            self.undo_stack, self.redo_stack = [], []
        self._clear_take()
        self._clear_timeline(scene.animation)
        self._frame_times: list[float] = []
        self._reset_to_scene()
        if self.animation.keys:
            self.go_to_frame(self.animation.start)

    def load_preset(self, name: str) -> None:
        """Load the preset ``name`` (``ValueError`` listing the presets if unknown)."""
        if not isinstance(name, str):
            raise ValueError(f"preset: expected a name, got {name!r}")
        self.load(scene_or_preset(name) if name in presets.names() else Scene(presets.get(name)), name)

    def load_scene_text(self, text: str | bytes, source: str = "upload") -> None:
        """Load a scene from JSON text (a file's contents); on any problem nothing changes."""
        stage = scene_file_stage(text, source)
        if not stage.is_plain:  # (several figures, props: the document's, ``fabrik3d_web.document.document``)
            raise SeveralFiguresError(stage, source)
        scene = stage.figures[0].scene
        for name, point in scene.targets.items():
            self._check_point(point, f"{source}: targets.{name}", display.skeleton_size(scene.skeleton))
        self.load(scene, source)

    def load_upload(self, upload: Any) -> None:
        """Load a file from the panel's upload field: a dict with ``name``, ``size`` and ``content`` bytes."""
        name, size, content = uploaded_file(upload)
        character = is_character_file(name, content)
        limit = MAX_CHARACTER_BYTES if character else MAX_SCENE_BYTES
        if isinstance(size, (int, float)) and size > limit:
            raise ValueError(f"{name}: file is too large ({int(size)} bytes, limit {limit})")
        if character and isinstance(content, str):
            raise ValueError(f"{name}: expected the file's bytes")
        if character:
            return self.load_character_bytes(bytes(content), name)
        self.load_scene_text(bytes(content) if not isinstance(content, str) else content, name)

    def _reset_to_scene(self) -> None:
        targets = {k: v.copy() for k, v in self.scene.targets.items()}
        root = None if self.scene.root_target is None else self.scene.root_target.copy()
        built, self.built = getattr(self, "built", None), None
        turned = (
            getattr(self, "orientations", {}),
            getattr(self, "root_orientation", None),
            getattr(self, "look", None),
        )
        self._clear_orienting()
        try:
            result = self._solve(targets, root, {}, None)
        except BaseException:
            self.built = built
            self.orientations, self.root_orientation, self.look = turned
            raise
        self.targets: dict[str, np.ndarray] = targets
        self.root_target: np.ndarray | None = root
        self.poles: dict[str, np.ndarray] = {}
        self.result = result

    # -- what the user does -------------------------------------------------------------------
    def move_target(self, name: str, point: Any, *, undoable: bool = True) -> None:
        """Move (or create) the target of end effector ``name`` to ``point`` and re-solve.

        Args:
            name: an end effector of the skeleton.
            point: ``(3,)`` scene units; finite and inside the workspace.
            undoable: record an undo step (False while a drag is under way: the drag
                recorded one in ``begin_drag``).
        """
        if name not in self.scene.skeleton.end_effectors:
            raise ValueError(f"target {name!r}: not an end effector; valid names are {self._effector_list()}")
        targets = dict(self.targets)
        targets[name] = self._check_point(point, f"target {name}")
        self._apply(undoable, targets=targets)

    def move_root(self, point: Any, *, undoable: bool = True) -> None:
        """Move the root joint to ``point`` (scene units) and re-solve."""
        root = self._check_point(point, f"root {self.scene.skeleton.names[self.scene.skeleton.root]}")
        self._apply(undoable, root=root)

    def move_pole(self, name: str, point: Any, *, undoable: bool = True) -> None:
        """Move (or create) the pole of end effector ``name``'s chain to ``point`` (scene units) and re-solve."""
        if name not in self.scene.skeleton.end_effectors:
            raise ValueError(f"pole {name!r}: not an end effector; valid names are {self._effector_list()}")
        poles = dict(self.poles)
        poles[name] = self._check_point(point, f"pole {name}")
        self._apply(undoable, poles=poles)

    def pole_home(self, name: str) -> np.ndarray:
        """``(3,)`` where effector ``name``'s pole handle sits without a pole (``display.pole_home``)."""
        return display.pole_home(self.scene.skeleton, self.result.positions, name, self.size)

    def set_targets(self, targets: Any) -> None:
        """Replace every target (effector name -> ``[x, y, z]``); effectors left out become free."""
        if not isinstance(targets, Mapping):
            raise ValueError("targets: expected an object mapping effector names to [x, y, z]")
        effectors = self.scene.skeleton.end_effectors
        checked = {}
        for name, point in targets.items():
            if name not in effectors:
                raise ValueError(f"targets: {name!r} is not an end effector; valid names are {self._effector_list()}")
            checked[name] = self._check_point(point, f"targets.{name}")
        self._apply(True, targets=checked)

    def type_coordinate(self, name: str, axis: int, text: Any) -> None:
        """The user typed ``text`` as coordinate ``axis`` (0, 1, 2 for x, y, z) of effector ``name``."""
        if not isinstance(name, str) or name not in self.scene.skeleton.end_effectors:
            raise ValueError(f"target {name!r}: not an end effector; valid names are {self._effector_list()}")
        if type(axis) is not int or axis not in (0, 1, 2):
            raise ValueError(f"axis: expected 0, 1 or 2, got {axis!r}")
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            raise ValueError(f"{name}.{'xyz'[axis]}: expected the typed text or a number, got {text!r}")
        try:
            value = float(str(text).strip())
        except (ValueError, OverflowError):
            raise ValueError(f"{name}.{'xyz'[axis]}: {str(text)[:40]!r} is not a number") from None
        point = self.effector_point(name)
        point[axis] = value
        self.move_target(name, point)

    def reset_pose(self) -> None:
        """Back to the scene's own targets and its rest pose (undoable)."""
        before = self._snapshot()
        self._reset_to_scene()
        self._push_undo(before)

    def set_limits(self, enabled: bool) -> None:
        """Solve with (True) or without (False) the skeleton's joint limits, and re-solve."""
        self.limits = bool(enabled)
        self._apply(False)

    def set_solver(self, tolerance: Any, max_iterations: Any) -> None:
        """Change the reach tolerance (scene units, > 0) and the iteration limit (1..MAX_ITERATIONS)."""
        try:
            if any(isinstance(v, bool) for v in (tolerance, max_iterations)):
                raise TypeError
            tolerance = float(tolerance)
            iterations = int(float(max_iterations))  # OverflowError: Infinity, '1e999'
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"solver: tolerance and max_iterations must be finite numbers, got {tolerance!r}, {max_iterations!r}"
            ) from None
        if float(max_iterations) != iterations:
            raise ValueError(f"max_iterations: expected a whole number, got {max_iterations!r}")
        tolerance, iterations = checks.settings(tolerance, iterations)
        if iterations > MAX_ITERATIONS:
            raise ValueError(f"max_iterations: at most {MAX_ITERATIONS}, got {iterations}")
        if tolerance > self.size:
            raise ValueError(f"tolerance: at most the skeleton's size ({self.size:.3g}), got {tolerance:g}")
        self.tolerance, self.max_iterations = tolerance, iterations
        self._apply(False)

    # -- readouts -----------------------------------------------------------------------------
    def effector_point(self, name: str) -> np.ndarray:
        """``(3,)`` target of effector ``name``, or its current position when free."""
        if name in self.targets:
            return self.targets[name].copy()
        return self.result.positions[self.scene.skeleton.index(name)].copy()

    @property
    def unreachable(self) -> list[str]:
        """Targeted effectors that the last solve left farther than the tolerance."""
        return [k for k, err in self.result.errors.items() if err > self.tolerance]

    @property
    def max_error(self) -> float:
        """Largest distance from a targeted effector to its target (scene units; 0 without targets)."""
        return max(self.result.errors.values(), default=0.0)

    @property
    def fps(self) -> float:
        """Solved frames per second over the last second (0 when idle)."""
        now = time.perf_counter()
        recent = [t for t in self._frame_times if now - t <= 1.0]
        return 0.0 if len(recent) < 2 else (len(recent) - 1) / max(recent[-1] - recent[0], 1e-6)

    def state(self) -> dict[str, Any]:
        """The trame state contract: plain JSON values (see docs/web.md)."""
        sk = self.scene.skeleton
        return {
            "joint_names": list(sk.names),
            "pose": np.round(self.result.positions, 6).tolist(),
            "targets": {k: np.round(v, 6).tolist() for k, v in self.targets.items()},
            "root_target": None if self.root_target is None else np.round(self.root_target, 6).tolist(),
            "poles": {k: np.round(v, 6).tolist() for k, v in self.poles.items()},
            "solve_ms": round(self.solve_ms, 3),
            "iterations": int(self.result.iterations),
            "max_error": float(self.max_error),
            "unreachable": self.unreachable,
            "converged": bool(self.result.converged),
            **self.orienting_state(),
            "file_stem": self.file_stem(),
        }

    def effector_rows(self) -> list[dict[str, Any]]:
        """One row per end effector for the panel: name, label (a character's role, e.g. ``hand_l``, or the
        name), x, y, z (3 decimals), targeted, unreachable."""
        bad = set(self.unreachable)
        roles = {} if self.character is None else {bone: role for role, bone in self.character.effectors.items()}
        rows = []
        for name in self.scene.skeleton.end_effectors:
            x, y, z = (f"{v:.3f}" for v in self.effector_point(name))
            label = roles.get(name, name)
            targeted, unreachable = name in self.targets, name in bad
            rows.append(
                {"name": name, "label": label, "x": x, "y": y, "z": z, "targeted": targeted, "unreachable": unreachable}
            )
        return rows

    def scene_json(self) -> str:
        """The current scene (``current_scene``) as scene-file JSON."""
        return json.dumps(self.current_scene().to_dict(), indent=2, allow_nan=False) + "\n"

    def current_scene(self) -> Scene:
        """The current scene: the skeleton, the current targets, keys and settings."""
        return dataclasses.replace(
            self.scene,
            targets=dict(self.targets),
            root_target=self.root_target,
            tolerance=self.tolerance,
            max_iterations=self.max_iterations,
            animation=self.animation if self.animation.keys else None,
            character=self.scene.character
            if self.character is None
            else {"file": self.source, "rig_map": dict(self.character.rig_map)},
        )

    # -- internals ----------------------------------------------------------------------------
    def _effector_list(self) -> str:
        return ", ".join(self.scene.skeleton.end_effectors)

    def _check_point(self, value: Any, where: str, size: float | None = None) -> np.ndarray:
        if isinstance(value, Mapping) or isinstance(value, (str, bytes)):
            raise ValueError(f"{where}: expected [x, y, z], got {str(value)[:60]!r}")
        point = checks.point(value, where)
        limit = WORKSPACE_SIZES * (self.size if size is None else size)  # (fabrik3d.model.workspace)
        if float(np.abs(point).max()) > limit:
            raise ValueError(f"{where}: coordinates must be within ±{limit:.4g} scene units (got {point.tolist()})")
        return point

    def _solve(
        self,
        targets: dict[str, np.ndarray],
        root: np.ndarray | None,
        poles: dict[str, np.ndarray],
        start: np.ndarray | None,
        start_rotations: np.ndarray | None = None,
        effort: float | None = None,
    ) -> fabrik3d.SolveResult:
        """Solve from the pose ``start`` (its frames ``start_rotations``: its turns about the bones kept),
        stiff joints relaxing toward the pose the user built; ``effort``: ``fabrik3d.solve``'s."""
        skeleton = self.scene.skeleton if self.limits else self._free
        built = self.built
        goals, root_goal, look = self._goals(targets, root)
        t0 = time.perf_counter()
        result = fabrik3d.solve(
            skeleton,
            goals,
            positions=start,
            root_target=root_goal,
            look_at=look,
            poles=poles or None,
            weights=self.scene.weights,
            tolerance=self.tolerance,
            max_iterations=self.max_iterations,
            relax_to=None if built is None else built.positions,
            rotations=start_rotations,
            relax_rotations=None if built is None else built.rotations,
            floor=self.scene.floor,
            balance=self.scene.balance,
            effort=effort,
        )
        self.solve_ms = (time.perf_counter() - t0) * 1e3
        if not (np.all(np.isfinite(result.positions)) and np.all(np.isfinite(result.rotations))):
            raise ValueError("solve: the solver returned a non-finite pose; the previous pose is kept")
        return result

    def _apply(
        self,
        undoable: bool,
        targets: dict[str, np.ndarray] | None = None,
        root: Any = _KEEP,
        poles: dict[str, np.ndarray] | None = None,
        start: np.ndarray | None = None,
    ) -> None:
        """Solve with new goals (the current ones where not given) from ``start`` (or the current pose); keep them."""
        targets = self.targets if targets is None else targets
        root = self.root_target if root is _KEEP else root
        poles = self.poles if poles is None else poles
        if start is None:
            result = self._solve(targets, root, poles, self.result.positions, self.result.rotations)
        else:
            result = self._solve(targets, root, poles, start)
        if undoable:
            self._push_undo()
        self.targets, self.root_target, self.poles, self.result = targets, root, poles, result
        self._kept_orientations(targets)
        now = time.perf_counter()
        self._frame_times = [t for t in self._frame_times if now - t <= 1.0] + [now]
        self._record_frame()
