"""Stages: several figures and props in one scene file (version 4), with the contacts between them.

Format (``"format": "fabrik3d.scene"``, ``"version": 4``)::

    {
      "format": "fabrik3d.scene", "version": 4,
      "figures": [
        {"name": "Ada", "position": [0, 0, 0], "facing": 0, "tint": [0.9, 0.7, 0.5],
         "joints": [...], "targets": {...}, "posing": {...}, "animation": {...}, ...},
        {"name": "Ben", "position": [0.9, 0, 0.6], "facing": 180, "joints": [...], ...}
      ],
      "props": [{"name": "stick", "shape": "cylinder", "size": [0.03, 1, 0.03],
                 "position": [0, 0.1, 0], "rotation": [0, 0, 0, 1],
                 "parent": {"figure": "Ada", "joint": "hand_r"}}],
      "contacts": [{"figure": "Ada", "effector": "hand_l", "on": {"figure": "Ben", "joint": "hand_l"}}]
    }

Each figure holds what a version 3 scene file holds (``fabrik3d.io.scene``: joints, targets, posing,
animation, character, proportions, solver), in its own coordinates, plus ``name`` (unique), its
``Placement`` (``position``, metres; ``facing``, degrees about +Y) and display settings (``tint``: RGB
in 0..1; ``hidden``, ``locked``: booleans). ``props`` are ``fabrik3d.model.props.Prop`` (a held one's
transform is relative to its joint's frame); ``contacts`` are ``fabrik3d.model.contacts.Contact``.
A file of version 1-3 reads as a stage of one figure named ``FIRST_NAME``; ``fabrik3d.load_scene``
reads a version 4 file of one figure at the origin, with no props or contacts, as its scene.
Errors name the place in the file, e.g. ``figures[1].joints[4].parent: unknown joint 'hipp'``.

A figure whose scene names a rigged character (``character``: ``{"file": "hero.glb", ...}``) holds it once its
file is opened (``Figure.character``, not part of the file): ``load_stage`` opens it beside the scene file, as
``fabrik3d.io.character.scene_character`` does (the same checks and limits), and the stage's glTF files write
its own skinned meshes (``fabrik3d.io.stage_character``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fabrik3d import checks
from fabrik3d.io import files
from fabrik3d.io import scene as scene_io
from fabrik3d.io.character import Character, character_from_bytes, scene_character, scene_character_from
from fabrik3d.io.scene import FIGURE_KEYS, STAGE_VERSION, Scene, figure_body
from fabrik3d.model import presets
from fabrik3d.model.contacts import Contact
from fabrik3d.model.placement import Placement
from fabrik3d.model.props import Prop, check_name

if TYPE_CHECKING:
    from fabrik3d.io.prop_file import MeshFiles

FIRST_NAME = "figure"
MAX_FIGURES = 16  # figures in one stage
MAX_PROPS = 64
MAX_CONTACTS = 64
# The tints given to figures in order (RGB 0..1), where a file gives none.
TINTS = ((0.86, 0.72, 0.55), (0.55, 0.72, 0.86), (0.62, 0.82, 0.58), (0.86, 0.6, 0.7), (0.8, 0.78, 0.5))


@dataclass
class Figure:
    """One figure of a stage: a named scene (skeleton, targets, posing, keys, ...), placed.

    Attributes:
        name: unique in its stage.
        scene: the figure's own scene (``fabrik3d.io.scene.Scene``), in its own coordinates.
        placement: where it stands and which way it faces.
        tint: ``(3,)`` RGB in 0..1, its colour in views.
        hidden: drawn or not; locked: whether contacts may pull it.
        character: the rigged character whose skeleton the scene's is (``fabrik3d.io.character.Character``:
            its meshes are written with the figure), or None; not part of the file (``load_stage`` opens the
            one ``scene.character`` names).
    """

    name: str
    scene: Scene
    placement: Placement = field(default_factory=Placement)
    tint: np.ndarray = field(default_factory=lambda: np.array(TINTS[0]))
    hidden: bool = False
    locked: bool = False
    character: Character | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_name(self.name, "name")
        if not isinstance(self.scene, Scene):
            raise ValueError(f"scene: expected a Scene, got {type(self.scene).__name__}")
        if self.character is not None and (
            not isinstance(self.character, Character)
            or tuple(self.character.skeleton.names) != tuple(self.scene.skeleton.names)
        ):
            raise ValueError("character: expected the Character whose skeleton the scene's is (the same joints)")
        if not isinstance(self.placement, Placement):
            raise ValueError(f"placement: expected a Placement, got {type(self.placement).__name__}")
        t = checks.point(self.tint, "tint")
        if np.any(t < 0) or np.any(t > 1):
            raise ValueError(f"tint: expected three values in 0..1, got {t.tolist()}")
        self.tint = t
        for flag in ("hidden", "locked"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag}: expected true or false, got {checks.quoted(getattr(self, flag))}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "position": [float(x) for x in self.placement.position],
                               "facing": self.placement.facing, "tint": [float(x) for x in self.tint]}  # fmt: skip
        if self.hidden:
            out["hidden"] = True
        if self.locked:
            out["locked"] = True
        body = self.scene.to_dict()
        for key in ("format", "version"):
            body.pop(key)
        out.update(body)
        return out

    @classmethod
    def from_dict(cls, data: Any, index: int = 0, max_joints: int | None = None) -> Figure:
        if not isinstance(data, Mapping):
            raise ValueError("expected an object")
        own = {k: data[k] for k in FIGURE_KEYS if k in data}
        body = figure_body(data)
        try:
            placement = Placement(own.get("position", [0.0, 0.0, 0.0]), own.get("facing", 0.0))
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        return cls(
            own.get("name"),  # type: ignore[arg-type]
            Scene.from_dict(body, max_joints),
            placement,
            own.get("tint", TINTS[index % len(TINTS)]),
            own.get("hidden", False),
            own.get("locked", False),
        )


@dataclass
class Stage:
    """Figures and props in one world, and the contacts between them (the module docstring's file).

    ``mesh_files`` is where its mesh props' files are found (``fabrik3d.io.prop_file.MeshFiles``: a folder, or
    file names -> files read): ``load_stage`` sets the scene file's folder; it is not part of the file.

    Raises ``ValueError`` naming the problem: a duplicate name, a contact or a hold naming a figure,
    joint or prop that is not there, an effector with two contacts, a contact's effector that is not
    an end effector.
    """

    figures: list[Figure]
    props: list[Prop] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    mesh_files: MeshFiles = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.figures:
            raise ValueError("figures: a stage holds at least one figure")
        for what, items, limit in (("figures", self.figures, MAX_FIGURES), ("props", self.props, MAX_PROPS),
                                   ("contacts", self.contacts, MAX_CONTACTS)):  # fmt: skip
            if len(items) > limit:
                raise ValueError(f"{what}: {len(items)}, more than the {limit} a stage holds")
        self.figures, self.props, self.contacts = list(self.figures), list(self.props), list(self.contacts)
        _unique([f.name for f in self.figures], "figures")
        _unique([p.name for p in self.props], "props")
        for i, prop in enumerate(self.props):
            if prop.parent is not None:
                self._joint(prop.parent.figure, prop.parent.joint, f"props[{i}].parent")
        held = set()
        for i, c in enumerate(self.contacts):
            where = f"contacts[{i}]"
            fig = self.figure(c.figure, f"{where}.figure")
            if c.effector not in fig.scene.skeleton.end_effectors:
                names = checks.names_list(fig.scene.skeleton.end_effectors)
                raise ValueError(f"{where}.effector: {checks.quoted(c.effector)} is not an end effector of "
                                 f"{checks.quoted(c.figure)} ({names})")  # fmt: skip
            if (c.figure, c.effector) in held:
                raise ValueError(f"{where}: {c.figure}.{c.effector} already has a contact")
            held.add((c.figure, c.effector))
            if c.on_figure is not None:
                self._joint(c.on_figure, c.joint, f"{where}.on")  # type: ignore[arg-type]
            else:
                self.prop(c.on_prop, f"{where}.on.prop")  # type: ignore[arg-type]

    def figure(self, name: str, where: str = "figure") -> Figure:
        """The figure named ``name`` (``ValueError`` listing the figures if none)."""
        for f in self.figures:
            if f.name == name:
                return f
        raise ValueError(f"{where}: no figure {checks.quoted(name)}; figures are {self.names_list('figures')}")

    def prop(self, name: str, where: str = "prop") -> Prop:
        """The prop named ``name`` (``ValueError`` listing the props if none)."""
        for p in self.props:
            if p.name == name:
                return p
        raise ValueError(f"{where}: no prop {checks.quoted(name)}; props are {self.names_list('props') or 'none'}")

    def names_list(self, what: str) -> str:
        return checks.names_list([x.name for x in getattr(self, what)], quote=True)

    def _joint(self, figure: str, joint: str, where: str) -> None:
        sk = self.figure(figure, f"{where}.figure").scene.skeleton
        if joint not in sk.names:
            raise ValueError(f"{where}.joint: {checks.quoted(figure)} has no joint {checks.quoted(joint)}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form described in the module docstring."""
        return {
            "format": scene_io.FORMAT,
            "version": STAGE_VERSION,
            "figures": [f.to_dict() for f in self.figures],
            "props": [p.to_dict() for p in self.props],
            "contacts": [c.to_dict() for c in self.contacts],
        }

    @classmethod
    def from_dict(cls, data: Any, max_joints: int | None = None) -> Stage:
        """A stage from a scene file's JSON, any version (1-3: one figure named ``FIRST_NAME``)."""
        if not isinstance(data, Mapping):
            raise ValueError("scene: expected a JSON object")
        if data.get("version") != STAGE_VERSION or type(data.get("version")) is not int:
            return cls([Figure(FIRST_NAME, Scene.from_dict(data, max_joints))])
        if data.get("format") != scene_io.FORMAT:
            raise ValueError(f"format: expected {scene_io.FORMAT!r}, got {checks.quoted(data.get('format'))}")
        unknown = set(data) - {"format", "version", "figures", "props", "contacts"}
        if unknown:
            raise ValueError(f"{checks.quoted(sorted(map(str, unknown))[0])}: not a field of a version 4 scene "
                             "(a figure's joints, targets and keys go in its entry of 'figures')")  # fmt: skip
        out = []
        for key, limit in (("figures", MAX_FIGURES), ("props", MAX_PROPS), ("contacts", MAX_CONTACTS)):
            items = data.get(key, [] if key != "figures" else None)
            if not isinstance(items, list):
                raise ValueError(f"{key}: expected a list")
            if len(items) > limit:
                raise ValueError(f"{key}: {len(items)}, more than the {limit} a stage holds")
            out.append(items)
        figures = [_at(f"figures[{i}]", Figure.from_dict, d, i, max_joints) for i, d in enumerate(out[0])]
        props = [_at(f"props[{i}]", Prop.from_dict, d) for i, d in enumerate(out[1])]
        contacts = [_at(f"contacts[{i}]", Contact.from_dict, d) for i, d in enumerate(out[2])]
        return cls(figures, props, contacts)

    @property
    def is_plain(self) -> bool:
        """Whether this stage is one scene's: one figure at the origin, no props, no contacts."""
        return len(self.figures) == 1 and not self.props and not self.contacts and self.figures[0].placement.is_identity

    @classmethod
    def of_scene(cls, scene: Scene, name: str = FIRST_NAME) -> Stage:
        """A stage of one figure: ``scene``, at the origin."""
        return cls([Figure(name, scene)])


class SeveralFiguresError(ValueError):
    """A scene file of several figures (or props, or a placed figure) where one scene was asked for: its
    ``stage`` and ``source``, for a reader that opens stages."""

    def __init__(self, stage: Stage, source: str) -> None:
        super().__init__(f"{source}: a scene of {len(stage.figures)} figures and {len(stage.props)} props; "
                         "open it where stages open (fabrik3d.load_stage)")  # fmt: skip
        self.stage, self.source = stage, source


def _at(where: str, build: Any, *args: Any) -> Any:
    try:
        return build(*args)
    except ValueError as exc:
        raise ValueError(f"{where}.{exc}" if not str(exc).startswith("expected") else f"{where}: {exc}") from None


def _unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise ValueError(f"{what}[{i}].name: {checks.quoted(name)} is taken; names in a stage are unique")
        seen.add(name)


def parse_stage(text: str | bytes, source: str = "scene", max_joints: int | None = None) -> Stage:
    """A stage from a scene file's JSON text (any version); errors are prefixed with ``source``."""
    return files.parse_json(text, source, lambda data: Stage.from_dict(data, max_joints))


def load_stage(path: str | os.PathLike[str], characters: bool = True) -> Stage:
    """Read a scene file of any version as a stage, its mesh props' files beside it (``Stage.mesh_files``: the
    file's folder) and, with ``characters``, its figures' characters opened (``open_characters``); ``ValueError``
    naming the file and the place of any problem."""
    stage = parse_stage(files.read_bytes(path), str(path))
    stage.mesh_files = Path(path).parent
    return open_characters(stage, path) if characters else stage


def open_characters(stage: Stage, path: str | os.PathLike[str]) -> Stage:
    """Give each figure of ``stage`` whose scene names a character (and that holds none yet) that character,
    read from the folder of the scene file ``path`` (``fabrik3d.io.character.scene_character``: only a file
    inside that folder, of at most ``fabrik3d.io.files.MAX_FILE_BYTES``, whose joints are the scene's);
    returns ``stage``. ``ValueError`` naming the file and ``figures[i].character`` when one cannot be opened,
    the figures then unchanged."""
    opened = {}
    for i, f in enumerate(stage.figures):
        if f.scene.character is not None and f.character is None:
            opened[i] = scene_character(f.scene, path, where=f"{path}: figures[{i}].character")
    for i, character in opened.items():
        stage.figures[i].character = character
    return stage


def upload_characters(stage: Stage, uploads: Mapping[str, bytes], source: str) -> list[str]:
    """Give each figure of ``stage`` whose scene names a character the one among ``uploads`` (file name -> the
    file's bytes: a browser sends names without folders, so the scene's file is matched by its last part), with a
    character file's checks; returns the names of the characters not uploaded (those figures keep none: they show
    as their skeletons). ``ValueError`` naming ``source`` and ``figures[i].character`` for one that cannot be
    read, the figures then unchanged."""
    opened, missing = {}, []
    for i, f in enumerate(stage.figures):
        if f.scene.character is None or f.character is not None:
            continue
        name = Path(str(f.scene.character["file"]).replace("\\", "/")).name
        if name not in uploads:
            missing.append(name)
            continue

        def read(rig_map: Any, data: bytes = uploads[name], name: str = name) -> Character:
            return character_from_bytes(data, name, None, rig_map)

        opened[i] = scene_character_from(f.scene, read, f"{source}: figures[{i}].character")
    for i, character in opened.items():
        stage.figures[i].character = character
    return missing


def stage_file(arg: str) -> Stage | None:
    """The stage in the scene file ``arg`` when it is more than one scene's (``Stage.is_plain``), its figures'
    characters opened (``open_characters``); None for a preset's name, a file that is not there
    (``scene_or_preset`` says why), or one scene's file (its character is not opened here)."""
    if arg in presets.names() or not os.path.isfile(arg):
        return None
    stage = load_stage(arg, characters=False)
    return None if stage.is_plain else open_characters(stage, arg)


def save_stage(stage: Stage, path: str | os.PathLike[str]) -> None:
    """Write ``stage`` as a version 4 scene file, atomically."""
    text = json.dumps(stage.to_dict(), indent=2, allow_nan=False)
    files.write_atomic(path, (text + "\n").encode())
