"""A scene file opened with the character files it names, chosen together in the Open field (issue 52), in the
real ``fabrik3d serve`` and Debian's headless chromium.

A browser sends the files chosen and nothing beside them: a scene whose figures name characters, opened alone,
shows those figures as their skeletons and says which files were not chosen; chosen with them, each figure is
its character again, with its skinned meshes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import web as wh
from helpers.character_asset import write_character

from fabrik3d.io.character import load_character
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.stage import Figure, Placement, Stage, save_stage

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``duo.json`` (a humanoid and Hero, a character figure placed beside it) and ``hero.glb`` beside it."""
    folder = tmp_path_factory.mktemp("duo")
    hero = write_character(folder, "hero", "mixamo", armature=True)
    sk = load_character(hero).skeleton
    named = Scene(sk, character={"file": "hero.glb", "rig_map": {}})
    stage = Stage([Figure("Ada", scene_or_preset("humanoid")), Figure("Hero", named, Placement([1, 0, 0], -30))])
    save_stage(stage, folder / "duo.json")
    return {"scene": folder / "duo.json", "hero": hero}


def _select(page, name: str) -> None:
    wh.trigger(page, "select_figure", [name])
    wh.wait_until(page, f"() => window.trame.state.get('figure_selected') === {name!r}")


def test_a_scene_alone_says_which_characters_were_not_chosen(page, files: dict[str, Path]) -> None:
    wh.show_control(page, "#scene-upload").set_input_files(str(files["scene"]))
    wh.wait_until(page, "() => (window.trame.state.get('figures') || []).length === 2", 60)
    wh.wait_until(page, "() => (window.trame.state.get('error_message') || '').includes('hero.glb')")
    assert "not among the files chosen" in wh.get_state(page, "error_message")
    _select(page, "Hero")
    assert wh.get_state(page, "character") is None  # (its skeleton, the file's name kept)


def test_a_scene_chosen_with_its_character_opens_it_in_its_figure(page, files: dict[str, Path]) -> None:
    wh.show_control(page, "#scene-upload").set_input_files([str(files["scene"]), str(files["hero"])])
    wh.wait_until(page, "() => !window.trame.state.get('error_message')", 60)
    wh.wait_until(page, "() => (window.trame.state.get('figures') || []).length === 2")
    _select(page, "Hero")
    wh.wait_until(page, "() => (window.trame.state.get('character') || {}).name === 'hero.glb'", 60)
    info = wh.get_state(page, "character")
    assert info["vertices"] > 0
    place = np.array(wh.get_state(page, "figure_place"))
    np.testing.assert_allclose(place, [1.0, 0.0, 0.0, -30.0], atol=1e-6)
    # the undo of the opening goes back to the scene opened alone (one step), its Hero a skeleton
    wh.trigger(page, "undo")
    _select(page, "Hero")
    wh.wait_until(page, "() => window.trame.state.get('character') == null")
