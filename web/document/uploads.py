"""A scene file opened in the browser together with the character files it names (issue 52).

A browser uploads the files the user chose and nothing beside them: a scene file whose figures name characters
(``"character": {"file": "hero.glb"}``) opened alone shows those figures as their skeletons. Chosen together in
the Open field (a multiple file input), the scene and its characters arrive in one message; each figure gets
the character its scene names among them (by file name: ``fabrik3d.io.stage.upload_characters``, with a
character file's checks). The files together stay within ``MAX_CHARACTER_BYTES`` (the page sends them in one
message of at most ``fabrik3d_web.security.MAX_MESSAGE_BYTES``).
"""

from __future__ import annotations

from typing import Any

from fabrik3d.io.stage import Stage, upload_characters

from .characters import MAX_CHARACTER_BYTES, is_character_file
from .controller import scene_file_stage


def scene_with_characters(files: list[tuple[str, Any, Any]]) -> tuple[Stage, str, list[str]]:
    """The stage of the one scene file among ``files`` (``characters.uploaded_files``: name, declared size,
    content) with the characters its figures name taken from the others; returns ``(stage, the scene's name, the
    names of the characters it names that are not among the files)``. ``ValueError`` naming the problem, on one
    line: not exactly one scene file, two files of one name, too many bytes, a scene or a character that fails."""
    scenes = [f for f in files if not is_character_file(f[0], f[2])]
    if len(scenes) != 1:
        raise ValueError(
            f"upload: expected one scene file (.json) and the character files it names, got {len(scenes)} scene files"
        )
    total = sum(len(content) for _, _, content in files)
    if total > MAX_CHARACTER_BYTES:
        raise ValueError(f"upload: the files are too large together ({total} bytes, limit {MAX_CHARACTER_BYTES})")
    name, _, text = scenes[0]
    characters = {}
    for other, _, content in files:
        if other == name:
            continue
        if isinstance(content, str):
            raise ValueError(f"{other}: expected the file's bytes")
        if other in characters:
            raise ValueError(f"upload: two files named {other!r}")
        characters[other] = bytes(content)
    stage = scene_file_stage(bytes(text) if not isinstance(text, str) else text, name)
    missing = upload_characters(stage, characters, name)
    return stage, name, missing
