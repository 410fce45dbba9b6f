"""``fabrik3d render`` of a scene of several figures (issue 52): one OpenPose person a figure, every figure in
the depth pass, the keys' frames baked together; a pose option for one figure refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import write_character
from helpers.cli import assert_one_line_error, run

from fabrik3d.io.character import load_character
from fabrik3d.io.scene import Scene, save_scene, scene_or_preset
from fabrik3d.model.keys import Animation, Key
from fabrik3d.stage import Contact, Figure, Placement, Stage, save_stage

pytest.importorskip("vtkmodules")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def stage_file(tmp_path_factory) -> Path:
    ada = scene_or_preset("humanoid")
    hand = ada.skeleton.rest_positions[ada.skeleton.index("hand_l")]
    keys = Animation(
        (Key(0, {"hand_l": np.add(hand, (0.1, -0.3, 0.3))}), Key(4, {"hand_l": np.add(hand, (0, 0.2, 0.4))}))
    )
    stage = Stage(
        [Figure("Ada", Scene(ada.skeleton, animation=keys, floor=ada.floor)),
         Figure("Ben", scene_or_preset("humanoid"), Placement([-0.35, 0.0, 0.8], 180)),
         Figure("Cy", scene_or_preset("humanoid"), Placement([1.2, 0.0, 0.0], 90), hidden=True)],
        contacts=[Contact("Ada", "hand_r", "Ben", "hand_r")],
    )  # fmt: skip
    path = tmp_path_factory.mktemp("stage") / "stage.json"
    save_stage(stage, path)
    return path


def test_a_still_of_a_stage_has_a_person_a_figure_shown(stage_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "still"
    proc = run("render", str(stage_file), "--passes", "openpose,depth", "--size", "256x256", "--view", "side",
               "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    people = json.loads((out / "openpose.json").read_text())["people"]
    assert len(people) == 2  # (Cy is hidden)
    depth = np.array(Image.open(out / "depth.png"))
    assert (depth > 0).mean() > 0.02


def test_the_keys_of_a_stage_render_as_numbered_frames(stage_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "frames"
    proc = run("render", str(stage_file), "--passes", "openpose", "--size", "128", "--frames", "0:4", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.glob("openpose_*.json")) == [f"openpose_{k:04d}.json" for k in range(5)]
    first, last = (json.loads((out / f"openpose_{k:04d}.json").read_text())["people"] for k in (0, 4))
    assert len(first) == len(last) == 2 and first != last  # (Ada's hand moved)


def test_a_pose_option_for_one_figure_is_refused(stage_file: Path, tmp_path: Path) -> None:
    proc = run("render", str(stage_file), "--target", "hand_l=0,1,0.3", "-o", str(tmp_path / "x"))
    assert_one_line_error(proc, "pose one figure; .* holds a stage")
    assert not (tmp_path / "x").exists()


def test_a_character_figure_is_drawn_with_its_own_skin(tmp_path: Path) -> None:
    """A stage's character figure renders as the same character's one-figure scene does (its skinned meshes,
    not the mannequin of its skeleton): the stage (the character and a hidden humanoid) and the scene give the
    same depth picture."""
    hero = write_character(tmp_path, "hero", "mixamo", armature=True)
    sk = load_character(hero).skeleton
    scene = Scene(sk, character={"file": hero.name, "rig_map": {}})
    save_scene(scene, tmp_path / "hero.json")
    stage = Stage([Figure("Hero", scene), Figure("Ada", scene_or_preset("humanoid"), Placement([2, 0, 0], 0),
                                                 hidden=True)])  # fmt: skip
    save_stage(stage, tmp_path / "stage.json")
    pictures = {}
    for name in ("hero", "stage"):
        proc = run("render", str(tmp_path / f"{name}.json"), "--passes", "depth", "--size", "192x256", "-o",
                   str(tmp_path / name))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        pictures[name] = np.array(Image.open(tmp_path / name / "depth.png")).astype(float)
    assert (pictures["hero"] > 0).mean() > 0.02
    assert np.abs(pictures["stage"] - pictures["hero"]).mean() < 0.5
