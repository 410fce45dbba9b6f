"""Posing a rigged character in the web UI, without the UI (``fabrik3d.io.character``).

``Characters`` is a part of ``fabrik3d_web.document.controller.Controller``. Opening a ``.glb`` or ``.gltf``
(the panel's Open field, or ``fabrik3d serve --character``) loads the character: its skeleton is the
scene's (a humanoid's limits, natural posing and effectors come with it), its skinned meshes are
shown, and every download of a pose, a take or an animation writes the character's own file with
it. A ``.gltf`` opened in the browser must carry its buffers inside it (``data:`` URIs): a browser
uploads only the files chosen (a scene with its characters chosen together: ``fabrik3d_web.document.uploads``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.io import gltf
from fabrik3d.io.character import Character, character_from_bytes, load_character, scene_character
from fabrik3d.io.character_export import character_bytes
from fabrik3d.io.scene import Scene
from fabrik3d.io.take import Take

# A character file larger than this is refused (a browser sends it whole, as base64, in one message
# of at most 16 MiB: ``fabrik3d_web.security.MAX_MESSAGE_BYTES``).
MAX_CHARACTER_BYTES = 11 * 1024 * 1024
SUFFIXES = (".glb", ".gltf")
# The most files one upload may hold (a scene and the characters of its figures: ``uploads``).
MAX_UPLOAD_FILES = 17


def uploaded_files(upload: Any) -> list[tuple[str, Any, bytes | bytearray | str]]:
    """``(name, declared size, content)`` of every file of an upload field's value (a dict with ``name``,
    ``size`` and ``content``, or a list of them: a multiple file input sends a list); ``ValueError`` for
    anything else or more than ``MAX_UPLOAD_FILES`` files."""
    items = upload if isinstance(upload, list) else [upload]
    if not items or len(items) > MAX_UPLOAD_FILES:
        raise ValueError(f"upload: expected 1 to {MAX_UPLOAD_FILES} files, got {len(items)}")
    out = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("content"), (bytes, bytearray, str)):
            raise ValueError("upload: expected a file")
        out.append((str(item.get("name") or "upload")[:200], item.get("size"), item["content"]))
    return out


def uploaded_file(upload: Any) -> tuple[str, Any, bytes | bytearray | str]:
    """``(name, declared size, content)`` of the one file of an upload field's value (``uploaded_files``)."""
    files = uploaded_files(upload)
    if len(files) != 1:
        raise ValueError(f"upload: expected one file, got {len(files)}")
    return files[0]


def is_character_file(name: str, content: bytes | str) -> bool:
    """Whether an uploaded file is a glTF character (by its name, or a GLB's magic bytes)."""
    head = content[:4] if isinstance(content, (bytes, bytearray)) else b""
    return name.lower().endswith(SUFFIXES) or head == b"glTF"


class Characters:
    """The character part of the controller (see the module docstring).

    Attributes:
        character: the loaded character, or None (a scene or a preset).
    """

    character: Character | None = None
    result: fabrik3d.SolveResult
    scene: Scene
    source: str
    targets: dict[str, np.ndarray]  # (the Controller's, with ``poles``, ``root_target``; ``look``: Orienting's)
    poles: dict[str, np.ndarray]
    root_target: np.ndarray | None
    look: np.ndarray | None

    load: Callable[..., None]  # (the Controller's)
    look_point: Callable[..., np.ndarray | None]  # (the Orienting part's)

    def load_character_file(self, path: str | os.PathLike[str]) -> None:
        """Open the character at ``path`` (``serve --character``)."""
        self._use_character(load_character(path), os.path.basename(os.fspath(path)))

    def load_character_bytes(self, data: bytes, name: str) -> None:
        """Open a character from an uploaded file's bytes; on any problem nothing changes."""
        if len(data) > MAX_CHARACTER_BYTES:
            raise ValueError(f"{name}: file is too large ({len(data)} bytes, limit {MAX_CHARACTER_BYTES})")
        self._use_character(character_from_bytes(bytes(data), name), name)

    def _use_character(self, character: Character, source: str) -> None:
        self.load(Scene(character.skeleton), source, character)

    def skinned(self) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """The character's mesh primitives skinned into the current pose: ``[(positions (v, 3), normals
        (v, 3))]`` float32 (empty without a character)."""
        if self.character is None:
            return []
        return self.character.skin(self.result, normals=True)

    def framed_points(self) -> np.ndarray:
        """``(m, 3)`` what a view frames: the pose's joints, the targets, the root target and poles,
        the look handle (where the head looks, or where it waits in front of the face) and a
        character's skinned mesh (every 16th vertex), scene units."""
        parts = [self.result.positions, *self.targets.values(), *self.poles.values()]
        parts += [p for p in (self.root_target, self.look_point()) if p is not None]
        if self.character is not None:
            parts += [verts[::16] for verts, _ in self.skinned()]
        return np.vstack([np.reshape(p, (-1, 3)) for p in parts])

    def file_stem(self) -> str:
        """What downloads are named after: the scene's or character's file name without its folder and
        extension, or the preset's name (``hero`` for ``hero.glb``; letters, digits, ``-``, ``_``)."""
        stem = re.split(r"[\\/]", self.source)[-1]
        stem = re.sub(r"\.(json|glb|gltf)$", "", stem, flags=re.IGNORECASE)
        return re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_")[:60] or "fabrik3d"

    def pose_glb(self, mannequin: bool = False) -> bytes:
        """The current pose as a binary glTF: the character's own file with it, or a new file of the
        skeleton (``fabrik3d.gltf.pose_glb_bytes``; with ``mannequin``, the mannequin's body skinned)."""
        if self.character is None:
            return gltf.pose_glb_bytes(self.scene.skeleton, self.result, mannequin)
        return self._character_glb(pose=self.result)

    def animation_glb(self, take: Take, name: str, mannequin: bool = False) -> bytes:
        """``take`` as an animated binary glTF: a new animation ``name`` in the character's own file, or
        a new file of the skeleton (``fabrik3d.gltf.animation_glb_bytes``, every frame keyed; with
        ``mannequin``, the mannequin's body skinned to the bones, as ``pose_glb``)."""
        if self.character is None:
            frames = list(zip(take.positions, take.rotations))
            return gltf.animation_glb_bytes(take.skeleton, frames, take.times, mannequin)
        return self._character_glb(take=take, name=name)

    def _character_glb(self, pose: Any = None, take: Take | None = None, name: str = "take") -> bytes:
        """The character's own file with ``pose`` and/or ``take`` (``ValueError`` for a ``.gltf``
        character: its buffers live beside it; ``fabrik3d export`` writes it)."""
        assert self.character is not None
        if self.character.container != "glb":
            raise ValueError(
                f"{self.character.source}: a .gltf character is written with its buffers beside it; "
                "use: fabrik3d export MODEL.gltf --target ... -o OUT.gltf"
            )
        return character_bytes(self.character, pose=pose, take=take, name=name)


def figure_character(figure: Any, folder: Any, source: str) -> Character | None:
    """The character a figure's scene names: the one the library's ``load_stage`` opened (``Figure.character``),
    else read from the folder of the stage file ``source`` (``folder``: ``Stage.mesh_files`` as ``load_stage``
    sets it); None without one, or where the folder is not known (a stage uploaded from the page: the figure
    shows as its skeleton and keeps the file's name, so that the scene saved again still names it)."""
    if figure.character is not None or figure.scene.character is None or not isinstance(folder, (str, os.PathLike)):
        return figure.character
    return scene_character(figure.scene, Path(folder) / source)
