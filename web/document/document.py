"""The web UI's scene document: several figures and props, the contacts between them, the selection, and
one undo history over them all (issue 52). No trame, no VTK: tested without a server.

Each figure is a ``FigureSlot``: a name, a placement and a tint around a ``Controller``, which holds that
figure's skeleton, targets, poles, turns, posing, pose and keys (everything a panel edits). The panels act
on the selected figure's controller (``Document.controller``). The document's own commands (figures here; props
and contacts in ``stage_commands``) check their input first (``ValueError`` naming the problem, nothing changed
then); each is one undo step. Undo is one order over everything: a figure's own steps (its controller's history,
through ``on_step``) and the document's, latest first (``undo``, ``redo``).

Contacts are kept by ``settle``: after a figure changes, it and the figures linked to it are solved together
(``fabrik3d.solver.together``), each by its own controller, from their current poses. ``stage()`` is the
library's ``Stage`` of the document (files, glTF, bakes), ``load_stage`` the reverse; ``mesh_files`` holds the
mesh props' uploaded files (``fabrik3d_web.panels.mesh_props``), which the view and the glTF files draw.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.io.prop_file import PropFile, mesh_of
from fabrik3d.io.scene import scene_or_preset
from fabrik3d.io.stage import MAX_FIGURES, TINTS, Figure, SeveralFiguresError, Stage, upload_characters
from fabrik3d.io.stage_bake import bake_stage
from fabrik3d.io.stage_gltf import stage_animation_glb_bytes, stage_pose_glb_bytes
from fabrik3d.io.stage_pose import links, prop_transform
from fabrik3d.model import presets
from fabrik3d.model.contacts import Contact
from fabrik3d.model.placement import Placement, Transform, quat_conj, quat_mul
from fabrik3d.model.props import Hold, Prop, check_name
from fabrik3d.solver import together

from .characters import figure_character, uploaded_files
from .controller import Controller
from .uploads import scene_with_characters

SPACING = 0.9  # metres between a new figure and the one it is placed beside
HISTORY = 200  # document steps kept


@dataclasses.dataclass(eq=False)
class FigureSlot:
    """One figure of the document: its ``controller`` (the figure's own state and actions) placed."""

    name: str
    controller: Controller
    placement: Placement = dataclasses.field(default_factory=Placement)
    tint: tuple[float, float, float] = TINTS[0]
    hidden: bool = False
    locked: bool = False


@dataclasses.dataclass(frozen=True)
class _Snapshot:
    slots: tuple[FigureSlot, ...]
    props: tuple[Prop, ...]
    contacts: tuple[Contact, ...]
    selected: str
    poses: tuple[fabrik3d.SolveResult, ...]  # (each figure's: a command's settle moves them)
    mesh_files: tuple[tuple[str, PropFile], ...]  # (the uploaded files: adding a mesh prop adds its file)


class Document:
    """Figures, props, contacts and the selection (module docstring). Starts with one figure, ``first``."""

    def __init__(self, first: Controller, name: str = "Figure 1") -> None:
        self.slots = [FigureSlot(check_name(name, "name"), first)]
        self.props: list[Prop] = []
        self.contacts: list[Contact] = []
        self.mesh_files: dict[str, PropFile] = {}  # (mesh props' uploaded files, read, by name: mesh_props)
        self.selected = self.slots[0].name
        self._undo: list[tuple[str, Any]] = []
        self._redo: list[tuple[str, Any]] = []
        first.on_step = self._figure_step

    # -- reading -------------------------------------------------------------------------------------
    @property
    def slot(self) -> FigureSlot:
        """The selected figure."""
        return self.find(self.selected)

    @property
    def controller(self) -> Controller:
        """The selected figure's controller: what every panel acts on."""
        return self.slot.controller

    def find(self, name: Any) -> FigureSlot:
        """The figure named ``name`` (``ValueError`` listing the figures if none)."""
        for s in self.slots:
            if s.name == name:
                return s
        names = ", ".join(repr(s.name) for s in self.slots)
        raise ValueError(f"figure: no figure {str(name)[:64]!r}; figures are {names}")

    def prop(self, name: Any) -> Prop:
        for p in self.props:
            if p.name == name:
                return p
        raise ValueError(f"prop: no prop {str(name)[:64]!r}")

    def stage(self) -> Stage:
        """The document as the library's ``Stage`` (each figure's current scene, and its character: the glTF files
        write its own skin)."""
        figures = [Figure(s.name, s.controller.current_scene(), s.placement, np.array(s.tint), s.hidden, s.locked,
                          s.controller.character) for s in self.slots]  # fmt: skip
        return Stage(figures, list(self.props), list(self.contacts), self.mesh_files)

    @property
    def is_plain(self) -> bool:
        """One figure at the origin, no props: the files are the single figure's (scene version 3)."""
        return len(self.slots) == 1 and not self.props and self.slots[0].placement.is_identity

    def scene_json(self) -> str:
        """The scene file: the figure's (version 3) when plain, else the stage's (version 4)."""
        if self.is_plain:
            return self.controller.scene_json()
        return json.dumps(self.stage().to_dict(), indent=2, allow_nan=False) + "\n"

    def pose_glb(self, mannequin: bool = False) -> bytes:
        """The current pose of every figure and every prop as a binary glTF (``fabrik3d.io.stage_gltf``)."""
        if self.is_plain:
            return self.controller.pose_glb(mannequin)
        return stage_pose_glb_bytes(self.stage(), self.poses(), mannequin)

    def animation_glb(self, mannequin: bool = False) -> bytes:
        """Every figure's keys baked together (contacts kept, ``fabrik3d.io.stage_bake``) as a binary glTF."""
        if self.is_plain:
            return self.controller.baked_glb(mannequin)
        stage = self.stage()
        return stage_animation_glb_bytes(stage, bake_stage(stage), mannequin)

    def open_upload(self, upload: Any) -> list[str]:
        """Open the upload field's files: a scene or character in the selected figure (``Controller.load_upload``), a
        stage (``load_stage``), or a scene with its characters (``uploads``); returns the characters not chosen."""
        if len(files := uploaded_files(upload)) > 1:
            stage, source, missing = scene_with_characters(files)
            self.load_stage(stage, source)
            return missing
        try:
            self.controller.load_upload(upload)
        except SeveralFiguresError as exc:
            self.load_stage(exc.stage, exc.source)
            return upload_characters(exc.stage, {}, exc.source)  # (the characters it names: none chosen with it)
        return []

    def load_stage(self, stage: Stage, source: str = "scene", undoable: bool = True) -> None:
        """Make ``stage`` the document (a controller per figure, each its scene's rest solved); one undo step
        (none with ``undoable`` False: the scene a server opens on); its mesh props' files that are found
        (``Stage.mesh_files``) are kept, and its figures' characters (``characters.figure_character``). All or
        nothing: a figure or a file that fails to load leaves the document as it was."""
        slots = []
        for i, f in enumerate(stage.figures):
            character = figure_character(f, stage.mesh_files, source)
            c = Controller(f.scene, source if character is None else f.scene.character["file"], character)
            for name, point in f.scene.targets.items():
                c._check_point(point, f"{source}: figures[{i}].targets.{name}")
            slots.append(FigureSlot(f.name, c, f.placement, tuple(float(x) for x in f.tint), f.hidden, f.locked))
        meshes = {str(p.file): m for p in stage.props if (m := mesh_of(p, stage.mesh_files)) is not None}
        if undoable:
            self.step()
        for s in slots:
            s.controller.on_step = self._figure_step
        self.slots, self.props, self.contacts = slots, list(stage.props), list(stage.contacts)
        self.mesh_files.update(meshes)
        self.selected = slots[0].name
        self.settle([s.name for s in slots])

    def poses(self) -> list[fabrik3d.SolveResult]:
        """Each figure's current pose, in the document's order."""
        return [s.controller.result for s in self.slots]

    def in_view(self, slot: FigureSlot) -> tuple[np.ndarray, np.ndarray]:
        """A figure's pose in the view's coordinates (the selected figure's own): ``(positions (n, 3), frames
        (n, 4))``."""
        view, pose = self.slot.placement, slot.controller.result
        frames = quat_mul(quat_conj(view.rotation), slot.placement.frames_to_world(pose.rotations))
        return view.to_local(slot.placement.to_world(pose.positions)), frames

    def prop_world(self, prop: Prop) -> Transform:
        """A prop's frame in the world (a held one's through its figure's current pose)."""
        return prop_transform(self.stage_shape(), self.poses(), prop)

    def stage_shape(self) -> Stage:
        """A ``Stage`` of the figures' skeletons and placements (cheap: no scene is rebuilt)."""
        figures = [Figure(s.name, s.controller.scene, s.placement) for s in self.slots]
        return _unchecked_stage(figures, self.props, self.contacts)

    # -- figures -------------------------------------------------------------------------------------
    def add_figure(self, preset: Any = "humanoid", duplicate: bool = False) -> str:
        """Add a figure (the preset ``preset``, or a copy of the selected one with its pose and keys) beside
        the selected one, facing the same way, and select it; returns its name."""
        if len(self.slots) >= MAX_FIGURES:
            raise ValueError(f"figures: a scene holds at most {MAX_FIGURES}")
        if duplicate:
            c = self.controller
            controller = Controller(c.current_scene(), c.source, c.character)
            controller.result = c.result
        else:
            if not isinstance(preset, str) or preset not in presets.names():
                raise ValueError(f"preset: expected one of {', '.join(presets.names())}, got {str(preset)[:40]!r}")
            controller = Controller(scene_or_preset(preset), preset)
        base = self.slot.placement
        spot = base.to_world(np.array([SPACING, 0.0, 0.0]))
        while any(np.linalg.norm(s.placement.position - spot) < SPACING / 2 for s in self.slots):
            spot = spot + (spot - base.position)
        name = self.free_name(f"Figure {len(self.slots) + 1}")
        self.step()
        controller.on_step = self._figure_step
        tint = TINTS[len(self.slots) % len(TINTS)]
        self.slots.append(FigureSlot(name, controller, Placement(spot, base.facing), tint))
        self.select_figure(name)
        return name

    def select_figure(self, name: Any) -> None:
        """Make ``name`` the figure the panels act on (not an undo step); the pose copied goes with the
        selection, so that a paste puts it on the figure selected (by role, mirrored or not)."""
        old, new = self.controller, self.find(name)
        if new.controller is not old and old.clipboard is not None:
            new.controller.clipboard, new.controller.clipboard_what = old.clipboard, old.clipboard_what
        self.selected = new.name

    def rename_figure(self, name: Any, new: Any) -> None:
        slot = self.find(name)
        new = check_name(new.strip() if isinstance(new, str) else new, "name")
        if new != slot.name and any(s.name == new for s in self.slots):
            raise ValueError(f"name: {new!r} is taken")
        self.step()
        self._replace_slot(slot, dataclasses.replace(slot, name=new))
        self.props = [self._renamed_prop(p, slot.name, new) for p in self.props]
        self.contacts = [self._renamed_contact(c, slot.name, new) for c in self.contacts]
        if self.selected == slot.name:
            self.selected = new

    def place_figure(self, name: Any, position: Any, facing: Any) -> None:
        """Move figure ``name`` to ``position`` (metres) facing ``facing`` degrees about +Y."""
        slot = self.find(name)
        placement = Placement(position, facing)
        self.step()
        self._replace_slot(slot, dataclasses.replace(slot, placement=placement))
        self.settle([slot.name])

    def set_figure_flags(self, name: Any, hidden: Any = None, locked: Any = None) -> None:
        slot = self.find(name)
        for flag, value in (("hidden", hidden), ("locked", locked)):
            if value is not None and not isinstance(value, bool):
                raise ValueError(f"{flag}: expected true or false, got {str(value)[:40]!r}")
        self.step()
        kw = {k: v for k, v in (("hidden", hidden), ("locked", locked)) if v is not None}
        self._replace_slot(slot, dataclasses.replace(slot, **kw))

    def delete_figure(self, name: Any) -> None:
        """Delete a figure (not the last): its contacts go, the props it held stay where they are."""
        slot = self.find(name)
        if len(self.slots) == 1:
            raise ValueError("figure: the last figure stays (a scene holds one at least)")
        self.step()
        self.props = [dataclasses.replace(p, transform=self.prop_world(p), parent=None)
                      if p.parent is not None and p.parent.figure == slot.name else p for p in self.props]  # fmt: skip
        self.contacts = [c for c in self.contacts if slot.name not in (c.figure, c.on_figure)]
        self.slots.remove(slot)
        if self.selected == slot.name:
            self.selected = self.slots[0].name

    def settle(self, changed: Sequence[str]) -> list[str]:
        """Solve the figures ``changed`` touches with their contacts kept (each from its current pose, by its own
        controller); returns the names of the figures whose pose changed."""
        if not self.contacts:
            return []
        stage = self.stage_shape()
        every = links(stage)
        index = {s.name: i for i, s in enumerate(self.slots)}
        chosen = {index[n] for n in changed if n in index}
        group = sorted({i for g in together.groups(len(self.slots), every) if chosen & set(g) for i in g})
        if not any(link.a in group for link in every):
            return []
        members = [together.Member(s.controller.scene.skeleton.names, s.placement, _solve_with(s.controller))
                   for s in self.slots]  # fmt: skip
        out = together.solve_together(members, every, self.poses(), group)
        for i in group:
            self.slots[i].controller.result = out.poses[i]
        return [self.slots[i].name for i in group]

    # -- undo ----------------------------------------------------------------------------------------
    def undo(self) -> bool:
        """Undo the latest step, the document's or a figure's; False if there is none."""
        return self._move(self._undo, self._redo, "undo")

    def redo(self) -> bool:
        return self._move(self._redo, self._undo, "redo")

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def _move(self, source: list[tuple[str, Any]], target: list[tuple[str, Any]], way: str) -> bool:
        while source:
            kind, item = source.pop()
            if kind == "document":
                target.append(("document", self._snapshot()))
                self._restore(item)
                return True
            controller, linked = item  # (the figures its contacts move: their poses before the step)
            now = [(c, c.result) for c, _ in linked]
            if getattr(controller, way)():
                for c, pose in linked:
                    c.result = pose
                target.append(("figure", (controller, now)))
                return True
        return False

    def _figure_step(self, controller: Controller, what: str) -> None:
        """A figure's controller pushed (or dropped) an undo step: one step of the document's order, with the
        poses of the figures linked to it by contacts (the step may move them too)."""
        if what == "push":
            self._undo.append(("figure", (controller, self._linked_poses(controller))))
            del self._undo[:-HISTORY]
            self._redo.clear()
        elif self._undo and self._undo[-1][0] == "figure" and self._undo[-1][1][0] is controller:
            self._undo.pop()

    def _linked_poses(self, controller: Controller) -> list[tuple[Controller, fabrik3d.SolveResult]]:
        at = [i for i, s in enumerate(self.slots) if s.controller is controller]
        if not self.contacts or not at:
            return []
        group = together.group_of(at[0], len(self.slots), links(self.stage_shape()))
        return [(self.slots[i].controller, self.slots[i].controller.result) for i in group if i != at[0]]

    def step(self) -> None:
        """Remember the document as it is now: one undo step (a command calls it after its checks)."""
        self._undo.append(("document", self._snapshot()))
        del self._undo[:-HISTORY]
        self._redo.clear()

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(tuple(dataclasses.replace(s) for s in self.slots), tuple(self.props), tuple(self.contacts),
                         self.selected, tuple(self.poses()), tuple(self.mesh_files.items()))  # fmt: skip

    def _restore(self, snap: _Snapshot) -> None:
        self.slots = [dataclasses.replace(s) for s in snap.slots]
        self.props, self.contacts, self.selected = list(snap.props), list(snap.contacts), snap.selected
        for s, pose in zip(self.slots, snap.poses):
            s.controller.result = pose
        self.mesh_files.clear()  # (the same dict: the view and the stage read it)
        self.mesh_files.update(snap.mesh_files)

    # -- helpers -------------------------------------------------------------------------------------
    def free_name(self, base: str, taken: Sequence[Any] | None = None) -> str:
        names = {x.name for x in (self.slots if taken is None else taken)}
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base} {k}"
        return name

    def _replace_slot(self, old: FigureSlot, new: FigureSlot) -> None:
        self.slots[self.slots.index(old)] = new

    def replace_prop(self, old: Prop, new: Prop) -> None:
        """Put ``new`` in ``old``'s place (moved, turned, scaled, held or let go): the figures with a hand on
        one of its points follow it (``settle``)."""
        self.props[self.props.index(old)] = new
        self.settle([c.figure for c in self.contacts if c.on_prop in (old.name, new.name)])

    @staticmethod
    def _renamed_prop(p: Prop, old: str, new: str) -> Prop:
        if p.parent is None or p.parent.figure != old:
            return p
        return dataclasses.replace(p, parent=Hold(new, p.parent.joint))

    @staticmethod
    def _renamed_contact(c: Contact, old: str, new: str) -> Contact:
        figure = new if c.figure == old else c.figure
        on = new if c.on_figure == old else c.on_figure
        return dataclasses.replace(c, figure=figure, on_figure=on)


def _solve_with(c: Controller) -> Any:
    """A figure's solve for ``together``: its controller's, with its own goals and ``goals`` added, from ``start``."""

    def solve(goals: dict[str, np.ndarray], start: fabrik3d.SolveResult) -> fabrik3d.SolveResult:
        return c._solve({**c.targets, **goals}, c.root_target, c.poles, start.positions, start.rotations)

    return solve


def _unchecked_stage(figures: list[Figure], props: list[Prop], contacts: list[Contact]) -> Stage:
    """A ``Stage`` of parts already checked (a drag's settle builds one per move)."""
    stage = Stage.__new__(Stage)
    stage.figures, stage.props, stage.contacts = figures, props, contacts
    return stage
