"""Outputs never replace inputs (issue 53, item 1): ``bake``, ``export`` and ``solve -o`` refuse an output
that is one of their inputs (the same path, another spelling of it, a symlink to it) or that two scenes
would both write, with a one-line error and exit status 2, before anything is written: every file's bytes
and modification time are as they were, and no file or folder is added."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import write_character
from helpers.cli import assert_one_line_error, run

import fabrik3d
from fabrik3d.animation import Animation, Key
from fabrik3d.cli import main
from fabrik3d.io import bake_many, outputs
from fabrik3d.io.scene import Scene, save_scene

BODY = fabrik3d.presets.get("humanoid")
HAND = BODY.rest_positions[BODY.index("hand_l")]


def keyed(path: Path, reach: float = 0.1) -> Path:
    """A scene file with two keys (a short bake) at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    anim = Animation((Key(0, {"hand_l": HAND}), Key(4, {"hand_l": HAND + np.array([-0.2, -reach, 0.3])})), fps=24)
    save_scene(Scene(BODY, animation=anim), path)
    return path


def snapshot(folder: Path) -> dict[str, tuple[bool, bytes | str, int]]:
    """Every entry under ``folder``: (is a symlink, its bytes or its link, its mtime in ns, not followed)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        link = path.is_symlink()
        data: bytes | str = os.readlink(path) if link else (b"" if path.is_dir() else path.read_bytes())
        out[str(path.relative_to(folder))] = (link, data, st.st_mtime_ns)
    return out


def test_bake_onto_its_own_scene_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    scene = keyed(tmp_path / "a.json")
    before = snapshot(tmp_path)
    proc = run("bake", "a.json", "-o", "a.json", cwd=tmp_path)
    assert_one_line_error(proc, r"a\.json: the output would replace the input a\.json")
    proc = run("bake", "a.json", "-o", "./a.json", "--frames", "0:2", cwd=tmp_path)  # (another spelling)
    assert_one_line_error(proc, r"would replace the input a\.json")
    proc = run("bake", str(scene), "-o", str(tmp_path / "sub" / ".." / "a.json"))
    assert_one_line_error(proc, r"would replace the input")
    assert snapshot(tmp_path) == before


def test_bake_of_several_scenes_into_their_own_folder_as_takes_is_refused(tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    keyed(shots / "a.json")
    keyed(shots / "b.json", 0.2)
    before = snapshot(tmp_path)
    proc = run("bake", "shots/a.json", "shots/b.json", "-o", "shots", "--as", "json", cwd=tmp_path)
    assert_one_line_error(proc, r"shots/a\.json: the output would replace the input shots/a\.json")
    assert snapshot(tmp_path) == before
    # the library function the command calls refuses it too
    with pytest.raises(ValueError, match="would replace the input"):
        bake_many.bake_many([str(shots / "a.json"), str(shots / "b.json")], shots, suffix=".json")
    assert snapshot(tmp_path) == before


def test_an_output_that_is_another_scene_through_a_symlink_is_refused(tmp_path: Path) -> None:
    """``out/b.json`` links to ``shots/a.json``: baking ``shots/a.json`` and ``other/b.json`` into ``out`` as
    takes would write ``out/b.json``, that is ``a.json``, another input."""
    keyed(tmp_path / "shots" / "a.json")
    keyed(tmp_path / "other" / "b.json", 0.3)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "b.json").symlink_to("../shots/a.json")
    before = snapshot(tmp_path)
    proc = run("bake", "shots/a.json", "other/b.json", "-o", "out", "--as", "json", cwd=tmp_path)
    assert_one_line_error(
        proc, r"^fabrik3d: error: out/b\.json: other/b\.json's output would replace the input shots/a"
    )
    # one scene onto a link to itself
    proc = run("bake", "shots/a.json", "-o", "out/b.json", cwd=tmp_path)
    assert_one_line_error(proc, r"out/b\.json: the output would replace the input shots/a\.json")
    assert snapshot(tmp_path) == before  # (the link is still a link, a.json as it was)


def test_a_symlinked_input_is_one_file_with_its_target(tmp_path: Path) -> None:
    """The scene is given through a link; the output names the link's target."""
    keyed(tmp_path / "real" / "walk.json")
    (tmp_path / "walk.json").symlink_to(tmp_path / "real" / "walk.json")
    before = snapshot(tmp_path)
    proc = run("bake", "walk.json", "-o", "real/walk.json", cwd=tmp_path)
    assert_one_line_error(proc, r"real/walk\.json: the output would replace the input walk\.json")
    proc = run("bake", "walk.json", "real/../walk.json", "-o", "real", "--as", "json", cwd=tmp_path)
    assert proc.returncode == 2 and "would replace the input" in proc.stderr
    assert snapshot(tmp_path) == before


def test_two_scenes_that_would_write_one_file_are_refused_naming_both(tmp_path: Path, monkeypatch, capsys) -> None:
    keyed(tmp_path / "x" / "a.json")
    keyed(tmp_path / "y" / "a.json", 0.2)
    before = snapshot(tmp_path)
    proc = run("bake", "x/a.json", "y/a.json", "-o", "out", cwd=tmp_path)
    assert_one_line_error(proc, r"x/a\.json and y/a\.json would both write a\.glb in out")
    # where names ignore case (a Mac's or Windows' disk: simulated, this one does not), A.json and a.json too
    keyed(tmp_path / "y" / "A.json", 0.3)
    before = snapshot(tmp_path)
    monkeypatch.setattr(outputs, "case_blind", lambda folder: True)
    monkeypatch.chdir(tmp_path)
    assert main(["bake", "x/a.json", "y/A.json", "-o", "out"]) == 2
    assert "x/a.json and y/A.json would both write A.glb" in capsys.readouterr().err
    assert snapshot(tmp_path) == before and not (tmp_path / "out").exists()


def test_case_blind_finds_this_file_system_case_sensitive(tmp_path: Path) -> None:
    (tmp_path / "Walk.json").write_text("{}")
    assert outputs.case_blind(tmp_path) is False  # (Linux's tmp: names keep their case)
    assert outputs.case_blind(tmp_path / "missing" / "deeper") is False
    assert outputs.same_file(tmp_path / "Walk.json", tmp_path / "." / "Walk.json")
    assert not outputs.same_file(tmp_path / "Walk.json", tmp_path / "walk.json")


def test_export_and_solve_refuse_to_write_over_their_input(tmp_path: Path) -> None:
    hero = write_character(tmp_path, "hero", "mixamo", armature=True)
    scene = keyed(tmp_path / "scene.json")
    before = snapshot(tmp_path)
    proc = run("export", "hero.glb", "--target", "hand_l=0.3,1.3,0.35", "-o", "./hero.glb", cwd=tmp_path)
    assert_one_line_error(proc, r"\./hero\.glb: the output would replace the input hero\.glb")
    proc = run("export", str(hero), "-o", str(hero))
    assert_one_line_error(proc, r"the output would replace the input")
    proc = run("solve", str(scene), "-o", str(scene))
    assert_one_line_error(proc, r"scene\.json: the output would replace the input")
    assert snapshot(tmp_path) == before


def test_an_external_gltf_characters_own_files_are_inputs_too(tmp_path: Path) -> None:
    write_character(tmp_path, "model", "mixamo", external=True)
    before = snapshot(tmp_path)
    proc = run("export", "model.gltf", "-o", "model.gltf", cwd=tmp_path)
    assert_one_line_error(proc, r"model\.gltf: the output would replace the input model\.gltf")
    assert snapshot(tmp_path) == before
    # the rule itself: an output onto a file the character reads beside it
    with pytest.raises(ValueError, match=r"would replace the input .*model\.bin"):
        outputs.check_outputs([(tmp_path / "model.bin", "model.gltf")], [tmp_path / "model.bin"])


def test_a_good_bake_into_another_folder_still_writes(tmp_path: Path) -> None:
    keyed(tmp_path / "shots" / "a.json")
    keyed(tmp_path / "shots" / "b.json", 0.2)
    proc = run("bake", "shots/a.json", "shots/b.json", "-o", "baked", "--as", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "baked").iterdir()) == ["a.json", "b.json"]
    assert "baked 2 of 2 scenes" in proc.stdout
