"""Several files in one upload (``fabrik3d_web.document.uploads``): a scene with the characters it names, or a
one-line error naming what is wrong, nothing opened then."""

from __future__ import annotations

import json

import pytest
from fabrik3d_web.document.characters import MAX_CHARACTER_BYTES, uploaded_files
from fabrik3d_web.document.uploads import scene_with_characters
from helpers.character_asset import write_character

from fabrik3d.io.character import load_character
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.stage import Figure, Stage


def _file(name: str, content: bytes) -> dict:
    return {"name": name, "size": len(content), "content": content}


@pytest.fixture(scope="module")
def duo(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """A scene of a humanoid and Hero (naming ``hero.glb``) and Hero's file."""
    hero = write_character(tmp_path_factory.mktemp("duo"), "hero", "mixamo", armature=True)
    named = Scene(load_character(hero).skeleton, character={"file": "hero.glb", "rig_map": {}})
    text = json.dumps(Stage([Figure("Ada", scene_or_preset("humanoid")), Figure("Hero", named)]).to_dict())
    return text.encode(), hero.read_bytes()


def test_the_scene_and_its_character_chosen_together(duo) -> None:
    scene, hero = duo
    stage, source, missing = scene_with_characters(uploaded_files([_file("duo.json", scene), _file("hero.glb", hero)]))
    assert (source, missing) == ("duo.json", [])
    assert stage.figures[1].character is not None and stage.figures[0].character is None


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["duo.json", "other.json"], "upload: expected one scene file (.json) and the character files it names, got 2"),
        (["hero.glb", "hero.glb"], "upload: expected one scene file (.json) and the character files it names, got 0"),
        (["duo.json", "hero.glb", "hero.glb"], "upload: two files named 'hero.glb'"),
    ],
)
def test_a_wrong_set_of_files_is_named_on_one_line(duo, names: list[str], message: str) -> None:
    files = [_file(n, duo[0] if n.endswith(".json") else duo[1]) for n in names]
    with pytest.raises(ValueError) as exc:
        scene_with_characters(uploaded_files(files))
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_too_many_bytes_together_or_too_many_files_are_refused(duo) -> None:
    big = _file("big.glb", b"glTF" + bytes(MAX_CHARACTER_BYTES))
    with pytest.raises(ValueError, match="upload: the files are too large together"):
        scene_with_characters(uploaded_files([_file("duo.json", duo[0]), big]))
    with pytest.raises(ValueError, match=r"upload: expected 1 to \d+ files, got 40"):
        uploaded_files([_file(f"{k}.glb", duo[1]) for k in range(40)])
    with pytest.raises(ValueError, match="upload: expected 1 to"):
        uploaded_files([])


def test_a_character_that_is_not_the_scene_s_is_named(duo, tmp_path) -> None:
    other = write_character(tmp_path, "hero", "blender").read_bytes()  # (Blender's bone names: other joints)
    with pytest.raises(ValueError, match=r"^duo.json: figures\[1\].character 'hero.glb': its joints are not"):
        scene_with_characters(uploaded_files([_file("duo.json", duo[0]), _file("hero.glb", other)]))
