"""Scene files: a skeleton, its targets and the solver settings, as JSON.

Format (``"format": "fabrik3d.scene"``, ``"version": 3``)::

    {
      "format": "fabrik3d.scene", "version": 3,
      "joints": [{"name": "pelvis", "parent": null, "position": [0, 0.95, 0],
                  "constraints": [{"type": "Cone", "max_deg": 30}]}, ...],
      "targets": {"hand_l": [0.5, 1.2, 0.3]},
      "root_target": null,
      "weights": {"hand_l": 2.0},
      "solver": {"tolerance": 0.001, "max_iterations": 100},
      "posing": {"stiffness": {"chest": 0.7}, "reach": {"hand_l": "spine_01"},
                 "swivel": {"hand_l": {"frame": "chest", "direction": [0.4, -1, -0.3]}}},
      "animation": {"fps": 30, "start": 0, "end": 30, "interpolation": "smooth",
                    "keys": [{"frame": 0, "targets": {"hand_l": [0.5, 1.2, 0.3]}}, ...]}
    }

Only ``format``, ``version`` and ``joints`` are required. ``animation`` (version 3) holds the
keys of ``fabrik3d.model.keys``. ``character`` (version 3), ``{"file": "hero.glb", "rig_map": {role:
bone}}``, says that the skeleton is a rigged character's (``fabrik3d.io.character``): its file,
relative to the scene file's folder (only a file inside that folder is opened, as a glTF's URIs are
read: ``scene_character``), and the rig map it was set up with. ``proportions`` (read by version 3
and written only where there are some), ``{"height": 1.5, "head": 1.0, "arm": 1.1, ...}``, says that
the skeleton is ``presets.humanoid`` of these proportions (``fabrik3d.model.proportions``): the
joints must be that body's (within 1e-6), and the skeleton read remembers them
(``proportions_of``); a reader without it reads the same body from the joints. ``posing`` (version 2) is the
skeleton's natural posing (``fabrik3d.model.posing``); a version 1 file has none and loads as
it always did (the plain full-body chain). ``solver`` may also hold ``"floor": 0.0`` (a floor's
height, ``solve(..., floor=)``) and ``"balance": true`` (any version). Positions are in scene
units, Y up. Errors name the place in the file, e.g.
``joints[4].parent: unknown joint 'hipp'``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.io import files
from fabrik3d.model import presets
from fabrik3d.model.keys import Animation
from fabrik3d.model.mass import rest_ground
from fabrik3d.model.proportions import Proportions, proportions_of, remember
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.skeleton_dict import _json_vector
from fabrik3d.model.workspace import check_floor
from fabrik3d.solver.tree import SolveResult, solve

FORMAT = "fabrik3d.scene"
VERSION = 3
# Versions this module reads (1: without ``posing``; 2: without ``animation``; 4: a stage of one figure).
READS = (1, 2, 3, 4)
# A stage's version (``fabrik3d.io.stage``: several figures and props), and the keys a figure's entry
# adds to a version 3 scene's.
STAGE_VERSION = 4
FIGURE_KEYS = ("name", "position", "facing", "tint", "hidden", "locked")


@dataclass
class Scene:
    """A skeleton with targets and solver settings.

    Attributes:
        skeleton: the skeleton.
        targets: end-effector name -> ``(3,)`` target point, scene units.
        root_target: optional ``(3,)`` root position.
        weights: optional end-effector name -> centroid weight > 0.
        tolerance: reach tolerance, scene units.
        max_iterations: iteration limit.
        animation: keys on a timeline (``fabrik3d.model.keys.Animation``), or None.
        character: ``{"file": path, "rig_map": {role: bone}}`` of the rigged character whose
            skeleton this is (``scene_character`` opens it), or None.
        proportions: the ``Proportions`` of the humanoid this skeleton is
            (``presets.humanoid(...)``), or None; by default ``proportions_of(skeleton)``.
        floor: the floor's height (scene units; ``solve(..., floor=)``), or None for none.
        balance: whether solves keep the centre of mass over the feet (``solve(..., balance=)``).
    """

    skeleton: Skeleton
    targets: dict[str, np.ndarray] = field(default_factory=dict)
    root_target: np.ndarray | None = None
    weights: dict[str, float] | None = None
    tolerance: float = 1e-3
    max_iterations: int = 100
    animation: Animation | None = None
    character: dict[str, Any] | None = None
    proportions: Proportions | None = None
    floor: float | None = None
    balance: bool = False

    def __post_init__(self) -> None:
        if self.proportions is None:
            self.proportions = proportions_of(self.skeleton)
        elif not isinstance(self.proportions, Proportions):
            raise ValueError(f"proportions: expected a Proportions, got {type(self.proportions).__name__}")
        else:
            remember(_check_proportions(self.skeleton, self.proportions), self.proportions)
        effectors = self.skeleton.end_effectors
        for name in self.targets:
            if name not in effectors:
                raise ValueError(
                    f"targets.{checks.cut(name)}: not an end effector; valid names are {checks.names_list(effectors)}"
                )
        self.targets = {k: checks.point(v, f"targets.{k}") for k, v in self.targets.items()}
        if self.root_target is not None:
            self.root_target = checks.point(self.root_target, "root_target")
        if self.weights is not None:
            for name, value in self.weights.items():
                if name not in effectors:
                    names = checks.names_list(effectors)
                    raise ValueError(f"weights.{checks.cut(name)}: not an end effector; valid names are {names}")
                checks.positive(value, f"weights.{name}")
            self.weights = {k: float(v) for k, v in self.weights.items()}
        self.tolerance, self.max_iterations = checks.settings(self.tolerance, self.max_iterations)
        self.floor = check_floor(self.floor, self.skeleton)
        if not isinstance(self.balance, bool):
            raise ValueError(f"balance: expected true or false, got {checks.quoted(self.balance)}")
        if self.character is not None:
            self.character = _character(self.character)
        if self.animation is not None:
            if not isinstance(self.animation, Animation):
                raise ValueError(f"animation: expected an Animation, got {type(self.animation).__name__}")
            try:
                self.animation.check(self.skeleton)
            except ValueError as exc:
                raise ValueError(f"animation: {exc}") from None

    def solve(self, positions: np.ndarray | None = None, goals: Mapping[str, Any] | None = None) -> SolveResult:
        """``fabrik3d.solve`` with this scene's targets and settings, from ``positions`` (``(n, 3)``, default the
        rest pose); ``goals`` (effector name -> ``(3,)`` point) add to the targets or replace theirs."""
        return solve(
            self.skeleton,
            self.targets if not goals else {**self.targets, **goals},
            positions=positions,
            root_target=self.root_target,
            weights=self.weights,
            tolerance=self.tolerance,
            max_iterations=self.max_iterations,
            floor=self.floor,
            balance=self.balance,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form described in the module docstring."""
        out: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        out.update(self.skeleton.to_dict())
        out["targets"] = {k: [float(x) for x in v] for k, v in self.targets.items()}
        out["root_target"] = None if self.root_target is None else [float(x) for x in self.root_target]
        if self.weights is not None:
            out["weights"] = dict(self.weights)
        out["solver"] = {"tolerance": self.tolerance, "max_iterations": self.max_iterations}
        if self.floor is not None:
            out["solver"]["floor"] = self.floor
        if self.balance:
            out["solver"]["balance"] = True
        if self.animation is not None:
            out["animation"] = self.animation.to_dict()
        if self.character is not None:
            out["character"] = {"file": self.character["file"], "rig_map": dict(self.character["rig_map"])}
        if self.proportions is not None:
            out["proportions"] = self.proportions.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any, max_joints: int | None = None) -> Scene:
        """A scene from its JSON form; ``ValueError`` naming the place of any problem.

        ``max_joints``: refuse a scene of more joints before anything is built (a front end's bound).
        """
        if not isinstance(data, Mapping):
            raise ValueError("scene: expected a JSON object")
        if data.get("format") != FORMAT:
            raise ValueError(f"format: expected {FORMAT!r}, got {checks.quoted(data.get('format'))}")
        if type(data.get("version")) is not int or data.get("version") not in READS:
            raise ValueError(f"version: expected one of {READS}, got {checks.quoted(data.get('version'))}")
        if data["version"] == STAGE_VERSION:
            return cls.from_dict(_one_figure(data), max_joints)
        if data["version"] == 1 and "posing" in data:
            raise ValueError("posing: needs version 2")
        for newer in ("animation", "character"):
            if data["version"] < 3 and newer in data:
                raise ValueError(f"{newer}: needs version 3")
        joints = data.get("joints")
        if max_joints is not None and isinstance(joints, list) and len(joints) > max_joints:
            raise ValueError(f"joints: {len(joints)} joints, more than the {max_joints} allowed here")
        skeleton = Skeleton.from_dict(data)
        raw = data.get("proportions")
        proportions = None if raw is None else Proportions.from_dict(raw)
        targets = _mapping(data.get("targets", {}), "targets")
        weights = data.get("weights")
        if weights is not None:
            weights = _mapping(weights, "weights")
        solver = _mapping(data.get("solver", {}), "solver")
        unknown = set(solver) - {"tolerance", "max_iterations", "floor", "balance"}
        if unknown:
            raise ValueError(f"solver: unknown settings {sorted(unknown)}")
        root = data.get("root_target")
        try:
            checks.settings(solver.get("tolerance", 1e-3), solver.get("max_iterations", 100))
        except ValueError as exc:
            raise ValueError(f"solver.{exc}") from None
        return cls(
            skeleton,
            {k: np.array(_json_vector(v, f"targets.{k}")) for k, v in targets.items()},
            None if root is None else np.array(_json_vector(root, "root_target")),
            weights,
            solver.get("tolerance", 1e-3),
            solver.get("max_iterations", 100),
            None if data.get("animation") is None else Animation.from_dict(data["animation"]),
            data.get("character"),
            proportions,
            check_floor(solver.get("floor"), skeleton, "solver.floor", "a height or null"),
            _solver_balance(solver.get("balance", False)),
        )


def _one_figure(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 4 file's one figure as a version 3 scene's JSON (``fabrik3d.io.stage`` reads several)."""
    figures = data.get("figures")
    if not isinstance(figures, list) or not figures:
        raise ValueError("figures: expected a list of one figure or more")
    if len(figures) != 1 or data.get("props") or data.get("contacts"):
        raise ValueError("figures: a stage of several figures, props or contacts; read it with fabrik3d.load_stage")
    figure = figures[0]
    if not isinstance(figure, Mapping):
        raise ValueError("figures[0]: expected an object")
    position, facing = figure.get("position", [0, 0, 0]), figure.get("facing", 0)
    if not (isinstance(position, list) and all(x == 0 for x in position)) or facing != 0:
        raise ValueError("figures[0]: placed away from the origin; read it with fabrik3d.load_stage")
    return figure_body(figure)


def figure_body(figure: Mapping[str, Any]) -> dict[str, Any]:
    """A version 4 file's figure entry as the version 3 scene it holds (its ``FIGURE_KEYS`` left out)."""
    for key in ("format", "version"):
        if key in figure:
            raise ValueError(f"{key}: the file's, not a figure's (a figure is a version {VERSION} scene's body)")
    return {**{k: v for k, v in figure.items() if k not in FIGURE_KEYS}, "format": FORMAT, "version": VERSION}


def _solver_balance(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"solver.balance: expected true or false, got {checks.quoted(value)}")
    return value


def _character(value: Any) -> dict[str, Any]:
    """A scene's ``character``: ``{"file": non-empty path, "rig_map": {role: bone name}}``."""
    if not isinstance(value, Mapping) or set(value) - {"file", "rig_map"}:
        raise ValueError('character: expected {"file": "MODEL.glb", "rig_map": {role: bone}}')
    file, rig_map = value.get("file"), value.get("rig_map", {})
    if not isinstance(file, str) or not file.strip() or len(file) > 1000:
        raise ValueError(f"character.file: expected the character's file name, got {str(file)[:60]!r}")
    if not isinstance(rig_map, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in rig_map.items()
    ):
        raise ValueError("character.rig_map: expected an object of role -> bone name")
    return {"file": file, "rig_map": dict(rig_map)}


def _check_proportions(skeleton: Skeleton, p: Proportions) -> Skeleton:
    """``skeleton``, if it is ``presets.humanoid`` of proportions ``p`` (the same joints, the rest
    positions within 1e-6); else a ``ValueError``."""
    body = presets.humanoid(**p.to_dict())
    if skeleton.names != body.names or not np.array_equal(skeleton.parents, body.parents):
        raise ValueError("proportions: the joints are not the humanoid's (proportions are the humanoid preset's)")
    off = np.linalg.norm(skeleton.rest_positions - body.rest_positions, axis=1)
    if off.max() > 1e-6:
        j = int(off.argmax())
        raise ValueError(
            f"proportions: joint {skeleton.names[j]!r} is {off[j]:.3g} m from where these proportions put it"
        )
    return skeleton


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected an object")
    return dict(value)


def parse_scene(text: str | bytes, source: str = "scene", max_joints: int | None = None) -> Scene:
    """A scene from JSON text; errors are prefixed with ``source``; ``max_joints`` as in ``Scene.from_dict``."""
    return files.parse_json(text, source, lambda data: Scene.from_dict(data, max_joints))


def load_scene(path: str | os.PathLike[str]) -> Scene:
    """Read a scene file; ``ValueError`` naming the file and the place of any problem."""
    return parse_scene(files.read_bytes(path), str(path))


def save_scene(scene: Scene, path: str | os.PathLike[str]) -> None:
    """Write ``scene`` as JSON, atomically (a failure leaves no half-written file)."""
    text = json.dumps(scene.to_dict(), indent=2, allow_nan=False)
    files.write_atomic(path, (text + "\n").encode())


def scene_or_preset(arg: str) -> Scene:
    """A preset by name (``fabrik3d.model.presets``, with no targets; the humanoid on a floor at the ground its
    rest feet stand on), or else the scene file at path ``arg``.

    Raises:
        ValueError: naming ``arg`` when it is neither, or as ``load_scene`` does for a bad file.
    """
    if arg in presets.names():
        skeleton = presets.get(arg)
        return Scene(skeleton, floor=rest_ground(skeleton) if arg == "humanoid" else None)
    if not os.path.exists(arg):
        raise ValueError(
            f"{checks.cut(arg)}: neither a preset ({checks.names_list(presets.names())}) nor an existing scene file"
        )
    return load_scene(arg)
