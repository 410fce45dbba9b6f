"""A scene's ``character.file`` is opened only inside the scene file's folder (issue 33, item 9), as a
glTF's URIs are: an absolute path, a ``..`` part, a backslash, a drive or a symlink out of the folder
is refused with one line naming the scene file, before anything is opened. The files are made here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.character_asset import write_character

from fabrik3d.io.character import load_character, scene_character
from fabrik3d.io.scene import Scene, load_scene, save_scene


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """``(scenes, outside)``: a folder for the scene files and one beside it holding a character."""
    scenes, outside = tmp_path / "scenes", tmp_path / "outside"
    scenes.mkdir()
    outside.mkdir()
    write_character(outside, "hero", "mixamo", armature=True)
    return scenes, outside


def scene_naming(scenes: Path, outside: Path, file: str) -> Path:
    """A scene file in ``scenes`` whose character is ``file`` (the skeleton the character's own)."""
    model = load_character(outside / "hero.glb")
    path = scenes / "scene.json"
    save_scene(Scene(model.skeleton, character={"file": file, "rig_map": {}}), path)
    return path


@pytest.mark.parametrize(
    "name",
    [
        "ABS",  # the character's absolute path
        "../outside/hero.glb",
        "sub/../../outside/hero.glb",
        "..\\outside\\hero.glb",
        "C:hero.glb",
        "hero.glb\0.txt",
    ],
)
def test_a_name_out_of_the_folder_is_refused(folders: tuple[Path, Path], name: str) -> None:
    scenes, outside = folders
    if name == "ABS":
        name = str(outside / "hero.glb")
    path = scene_naming(scenes, outside, name)
    scene = load_scene(path)  # (the scene itself reads: only opening its character is refused)
    with pytest.raises(ValueError) as info:
        scene_character(scene, path)
    message = str(info.value)
    assert message.startswith(f"{path}: character.file: only relative paths inside the file's folder are read, got ")
    assert "\n" not in message and len(message) < 300 + len(str(path))


def test_a_symlink_out_of_the_folder_is_refused(folders: tuple[Path, Path]) -> None:
    scenes, outside = folders
    (scenes / "hero.glb").symlink_to(outside / "hero.glb")
    (scenes / "models").symlink_to(outside, target_is_directory=True)
    for name in ("hero.glb", "models/hero.glb"):
        path = scene_naming(scenes, outside, name)
        with pytest.raises(ValueError, match=rf"^{path}: character\.file: '{name}' leads out of the file's folder$"):
            scene_character(load_scene(path), path)


def test_a_long_name_is_quoted_short(folders: tuple[Path, Path]) -> None:
    scenes, outside = folders
    path = scene_naming(scenes, outside, "../" + "x" * 900)
    with pytest.raises(ValueError) as info:
        scene_character(load_scene(path), path)
    assert len(str(info.value)) < 200 + len(str(path))


def test_a_file_inside_the_folder_opens(folders: tuple[Path, Path]) -> None:
    scenes, outside = folders
    (scenes / "models").mkdir()
    os.link(outside / "hero.glb", scenes / "models" / "hero.glb")  # (a hard link is a file of the folder)
    write_character(scenes, "hero", "mixamo", armature=True)
    for name in ("hero.glb", "models/hero.glb", "./models/./hero.glb"):
        path = scene_naming(scenes, outside, name)
        opened = scene_character(load_scene(path), path)
        assert opened is not None and Path(opened.source) == (scenes / name).resolve()
