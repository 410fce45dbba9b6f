"""Baking and exporting a stage (issue 52): every frame keeps its contacts and its held props; the CLI's
``export`` and ``bake`` write every figure and prop of a version 4 file into one glTF file."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers.cli import assert_one_line_error, run
from helpers.validator import validate

from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.model.keys import Animation, Key
from fabrik3d.model.placement import quat_conj, quat_mul, rotate
from fabrik3d.stage import (
    Contact,
    Figure,
    Hold,
    Placement,
    Prop,
    Stage,
    Transform,
    bake_stage,
    export_stage_animation,
    prop_track,
    save_stage,
    standing,
)

GRIP = Transform([0.0, 0.05, 0.03], [0.0, 0.0, 0.38, 0.925])


def keyed_stage() -> Stage:
    """Ada swings her left hand (holding a stick) over 12 frames; Ben shakes her right hand."""
    ada = scene_or_preset("humanoid")
    hand = ada.skeleton.rest_positions[ada.skeleton.index("hand_l")]
    keys = (Key(0, {"hand_l": np.add(hand, (0.1, -0.35, 0.3))}), Key(12, {"hand_l": np.add(hand, (0.05, 0.15, 0.4))}))
    ada = Scene(ada.skeleton, animation=Animation(keys, fps=24), floor=ada.floor)
    return Stage(
        [Figure("Ada", ada), Figure("Ben", scene_or_preset("humanoid"), Placement([-0.35, 0.0, 0.8], 180))],
        [Prop("stick", "cylinder", transform=GRIP, parent=Hold("Ada", "hand_l")), standing("box", "box", 1.0, 0.0)],
        [Contact("Ada", "hand_r", "Ben", "hand_r")],
    )


def test_a_two_figure_bake_keeps_the_prop_in_the_hand_and_the_hands_shaken_every_frame(tmp_path: Path) -> None:
    stage = keyed_stage()
    takes = bake_stage(stage)
    assert [len(t.times) for t in takes] == [13, 13]
    np.testing.assert_allclose(takes[0].times, np.arange(13) / 24)
    sk = stage.figures[0].scene.skeleton
    j = sk.index("hand_l")
    positions, rotations = prop_track(stage, takes, "stick")
    grip = takes[0].positions[:, j] + rotate(takes[0].rotations[:, j], GRIP.position)
    assert np.linalg.norm(positions - grip, axis=1).max() * 1e3 <= 2.0
    held = quat_mul(quat_conj(takes[0].rotations[:, j]), rotations)  # the grip's turn, frame by frame
    assert np.degrees(2 * np.arccos(np.clip(np.abs(held @ GRIP.rotation), 0, 1))).max() <= 0.5
    hand_path = np.linalg.norm(np.diff(takes[0].positions[:, j], axis=0), axis=1).sum()
    assert hand_path > 0.3  # the hand (and the prop) really moved
    ada_hand = takes[0].positions[:, sk.index("hand_r")]
    ben_hand = stage.figures[1].placement.to_world(takes[1].positions[:, sk.index("hand_r")])
    assert np.linalg.norm(ada_hand - ben_hand, axis=1).max() * 1e3 <= 5.0
    path = tmp_path / "stage.glb"
    export_stage_animation(stage, takes, path)
    report = validate(path)[str(path)]
    assert report["errors"] == 0, report["messages"][:5]


def test_a_stage_without_keys_or_with_two_rates_is_refused() -> None:
    still = Stage([Figure("Ada", scene_or_preset("humanoid"))])
    with pytest.raises(ValueError, match="no figure of the stage has keys"):
        bake_stage(still)
    stage = keyed_stage()
    other = Scene(stage.figures[0].scene.skeleton, animation=Animation(stage.figures[0].scene.animation.keys, fps=30))
    two = Stage([stage.figures[0], Figure("Cy", other, Placement([2.0, 0.0, 0.0]))])
    with pytest.raises(ValueError, match=r"different rates \(\[24.0, 30.0\] fps\)"):
        bake_stage(two)


def glb_json(path: Path) -> dict:
    data = path.read_bytes()
    length = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20 : 20 + length])


def test_the_cli_exports_and_bakes_a_stage_into_one_file(tmp_path: Path) -> None:
    scene = tmp_path / "stage.json"
    save_stage(keyed_stage(), scene)
    out = tmp_path / "pose.glb"
    proc = run("export", str(scene), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "2 figures and 2 props, contacts within" in proc.stdout
    doc = glb_json(out)
    names = [n.get("name") for n in doc["nodes"]]
    assert {"Ada", "Ben", "stick", "box", "Ada body", "Ben body"} <= set(names)
    assert len(doc["skins"]) == 2
    baked = tmp_path / "anim.gltf"
    proc = run("bake", str(scene), "-o", str(baked))
    assert proc.returncode == 0, proc.stderr
    assert "frames 0..12 at 24 fps" in proc.stdout
    anim = json.loads(baked.read_text())
    assert len(anim["animations"]) == 1 and len(anim["skins"]) == 2
    report = validate(out, baked)
    assert report[str(out)]["errors"] == 0 and report[str(baked)]["errors"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "{scene}", "--target", "hand_l=0,1,0.3", "-o", "{out}.glb"], "--target applies to a scene of one"),
        (["bake", "{scene}", "-o", "{out}.json"], "bakes into a .glb or .gltf file"),
        (["bake", "{scene}", "--method", "batch", "-o", "{out}.glb"], "bakes with --method warm"),
        (["export", "{scene}", "-o", "{scene}"], "would replace"),
    ],
)
def test_the_cli_refuses_what_a_stage_cannot_do_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    scene = tmp_path / "stage.json"
    save_stage(keyed_stage(), scene)
    filled = [a.format(scene=scene, out=tmp_path / "out") for a in args]
    proc = run(*filled)
    assert_one_line_error(proc, message)
    assert json.loads(scene.read_text())["version"] == 4
