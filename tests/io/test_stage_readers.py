"""A stage's one file out (issue 52, "One file out" and its bars), read back by independent readers.

The stage: three figures (two default humanoids and a shorter, long-armed one), placed apart and turned
(0, 180 and 90 deg), a handshake contact between two of them, and props of several shapes: a box on the
floor, a wall turned 30 deg, a stick held in a hand with an offset that turns it, a scaled and turned ball.

* Every file (pose and animation, ``.glb`` and ``.gltf``): the Khronos validator reports 0 errors and 0
  warnings.
* Pose: three.js and Blender 3.4 find every figure's joints (under the figure's node, by name) within 1 mm
  of ``StagePose.world`` (three.js: their frames within 0.5 deg too) and every prop's transform within
  1 mm and 0.5 deg (its scale within 0.1 %) of ``StagePose.prop_transform``.
* Animation (``bake_stage``: one figure keyed, the stick in its hand, the handshake kept): three.js at
  each key time and Blender on each frame find every joint within 1 mm of the takes (through the
  figures' placements), the held stick within 2 mm (and 0.5 deg) of ``prop_track``, and the free props
  where they stand.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.blender import run_script
from helpers.stage_check import three_node, three_reports
from helpers.validator import validate

from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.io.take import Take
from fabrik3d.model import presets
from fabrik3d.model.keys import Animation, Key
from fabrik3d.stage import (
    Contact,
    Figure,
    Hold,
    Placement,
    Prop,
    Stage,
    StagePose,
    Transform,
    bake_stage,
    export_stage_animation,
    export_stage_pose,
    prop_track,
    solve_stage,
    standing,
)

FPS = 30
FRAMES = 12  # frames 0..11 of the bake
POSITION_TOL = 1e-3  # metres: joints and props (the bar)
HELD_TOL = 2e-3  # metres: the held prop on every frame of the bake (the bar)
ANGLE_TOL = 0.5  # degrees: props' rotations (the bar), and the joints' frames
SCALE_TOL = 1e-3  # relative
KINDS = (".glb", ".gltf")


def _turn(axis: tuple[float, float, float], degrees: float) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    h = math.radians(degrees) / 2
    return np.array([*(a * math.sin(h)), math.cos(h)])


def build_stage(animated: bool = False) -> Stage:
    """The test's stage: Ada (origin, facing 0), Ben (facing 180, across from her, her right hand in his right
    hand) and Cy (a shorter, long-armed humanoid to the side, facing 90); a box on the floor, a wall turned 30
    deg, a stick in Ada's left hand (an offset that turns it), a ball scaled 1.7 and turned. ``animated``: Ada's
    left hand keyed over ``FRAMES`` frames (the stick moves with it)."""
    ada = scene_or_preset("humanoid")
    names = ada.skeleton.names
    hand_l = ada.skeleton.rest_positions[names.index("hand_l")]
    ada = replace(ada, targets={"hand_l": hand_l + np.array([-0.25, -0.35, 0.3])})
    if animated:
        keys = (
            Key(0, {"hand_l": hand_l + np.array([-0.3, -0.45, 0.25])}),
            Key(FRAMES - 1, {"hand_l": hand_l + np.array([-0.2, 0.1, 0.4])}),
        )
        ada = replace(ada, animation=Animation(keys, fps=FPS))
    cy_skeleton = presets.humanoid(height=1.5, arm=1.1)
    cy_hand = cy_skeleton.rest_positions[cy_skeleton.names.index("hand_r")]
    cy = Scene(cy_skeleton, targets={"hand_r": cy_hand + np.array([0.2, 0.3, 0.35])})
    figures = [
        Figure("Ada", ada),
        Figure("Ben", scene_or_preset("humanoid"), Placement([0.1, 0.0, 0.9], 180)),
        Figure("Cy", cy, Placement([-1.6, 0.0, 0.4], 90)),
    ]
    stick = Transform([0.02, 0.06, 0.01], _turn((1.0, 1.0, 0.0), 40.0))
    props = [
        standing("crate", "box", x=1.3, z=-0.7),
        Prop("wall", "wall", transform=Transform([0.3, 1.2, -2.0], _turn((0.0, 1.0, 0.0), 30.0))),
        Prop("stick", "cylinder", transform=stick, parent=Hold("Ada", "hand_l")),
        Prop("ball", "sphere", transform=Transform([1.0, 0.8, 1.5], _turn((0.3, -1.0, 0.5), 65.0), 1.7)),
    ]
    return Stage(figures, props, [Contact("Ada", "hand_r", on_figure="Ben", joint="hand_r")])


# -- the files -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pose() -> StagePose:
    return solve_stage(build_stage())


@pytest.fixture(scope="module")
def baked() -> tuple[Stage, list[Take]]:
    stage = build_stage(animated=True)
    return stage, bake_stage(stage)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, pose: StagePose, baked) -> dict[str, Path]:
    """``pose.glb``, ``pose.gltf``, ``anim.glb``, ``anim.gltf`` by those names."""
    folder = tmp_path_factory.mktemp("stage_files")
    out = {}
    for kind in KINDS:
        out[f"pose{kind}"] = folder / f"pose{kind}"
        export_stage_pose(pose.stage, pose.poses, out[f"pose{kind}"])
        out[f"anim{kind}"] = folder / f"anim{kind}"
        export_stage_animation(*baked, out[f"anim{kind}"])
    return out


def _document(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    if path.suffix == ".gltf":
        return json.loads(data)
    length = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20 : 20 + length])


def test_the_stage_is_what_the_tests_need(pose: StagePose, baked) -> None:
    """The scene is not trivial: the handshake is closed, the figures stand apart, the stick moves in the bake."""
    stage = pose.stage
    assert [f.placement.facing for f in stage.figures] == [0.0, 180.0, 90.0]
    (gap,) = pose.gaps.values()
    assert gap < 5e-3
    stage_b, takes = baked
    assert len(takes) == 3 and len(takes[0].times) == FRAMES
    p, _ = prop_track(stage_b, takes, "stick")
    assert np.linalg.norm(p[-1] - p[0]) > 0.1
    a = stage_b.figures[0].placement.to_world(takes[0].positions[:, stage_b.figures[0].scene.skeleton.index("hand_r")])
    b = stage_b.figures[1].placement.to_world(takes[1].positions[:, stage_b.figures[1].scene.skeleton.index("hand_r")])
    assert np.linalg.norm(a - b, axis=1).max() < 5e-3


def test_the_file_names_every_figure_and_prop(files: dict[str, Path], pose: StagePose) -> None:
    doc = _document(files["pose.glb"])
    names = [n.get("name") for n in doc["nodes"]]
    for f in pose.stage.figures:
        assert names.count(f.name) == 1 and names.count(f"{f.name} body") == 1
    for p in pose.stage.props:
        assert names.count(p.name) == 1


# -- the validator ---------------------------------------------------------------------------------------------


@pytest.mark.node
def test_the_khronos_validator_reports_no_errors(files: dict[str, Path]) -> None:
    reports = validate(*files.values())
    for name, path in files.items():
        report = reports[str(path)]
        assert report["errors"] == 0, (name, report["messages"])
        assert report["warnings"] == 0, (name, report["messages"])


# -- comparisons ------------------------------------------------------------------------------------------------


def _angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Degrees of the rotations between unit quaternions ``(..., 4)``, by the chord (stable near 0)."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    chord = np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))
    return np.degrees(4.0 * np.arcsin(np.minimum(chord / 2.0, 1.0)))


def _matrix_angle(m: np.ndarray, q: np.ndarray) -> float:
    """Degrees between the rotation matrix ``m`` (3, 3) and the unit quaternion ``q`` (x, y, z, w)."""
    x, y, z, w = q / np.linalg.norm(q)
    r = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip
    cos = (np.trace(r.T @ m) - 1.0) / 2.0
    return math.degrees(math.acos(max(-1.0, min(1.0, float(cos)))))


def _expected_pose(pose: StagePose) -> dict[str, Any]:
    """What a reader should find, one frame: joints per figure (positions, frames) and props (transforms)."""
    stage = pose.stage
    return {
        "joints": {f.name: pose.world(i) for i, f in enumerate(stage.figures)},
        "props": {p.name: pose.prop_transform(p) for p in stage.props},
    }


def _expected_bake(stage: Stage, takes: list[Take]) -> dict[str, Any]:
    """The same per frame of the bake: joints ``(m, n, 3)``/``(m, n, 4)`` per figure, the held stick's track."""
    joints = {
        f.name: (f.placement.to_world(t.positions), f.placement.frames_to_world(t.rotations))
        for f, t in zip(stage.figures, takes)
    }
    return {"joints": joints, "stick": prop_track(stage, takes, "stick")}


def _report_joints(where: str, figure: str, got: np.ndarray, want: np.ndarray, names: tuple[str, ...]) -> str:
    err = np.linalg.norm(got - want, axis=-1)
    return f"{where}: {figure}.{names[int(err.argmax())]} off by {err.max() * 1000:.3f} mm"


# -- three.js --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(files: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return three_reports(files)


def _three_joints(report: dict[str, Any], sample: dict[str, Any], figure: Figure) -> tuple[np.ndarray, np.ndarray]:
    """A figure's joints as three.js places them, found under its figure node by name: positions, frames."""
    rows = [three_node(report, name, under=figure.name) for name in figure.scene.skeleton.names]
    return np.array(sample["positions"])[rows], np.array(sample["quaternions"])[rows]


def _check_three_prop(
    report: dict[str, Any], sample: dict[str, Any], name: str, want: Transform, tol: float, where: str = "three.js"
) -> None:
    i = three_node(report, name)
    err = np.linalg.norm(np.array(sample["positions"][i]) - want.position)
    turn = float(_angles(np.array(sample["quaternions"][i]), want.rotation))
    scale = np.array(sample["scales"][i])
    assert err <= tol, f"{where}: prop {name} off by {err * 1000:.3f} mm"
    assert turn <= ANGLE_TOL, f"{where}: prop {name} turned by {turn:.3f} deg"
    np.testing.assert_allclose(scale, want.scale, rtol=SCALE_TOL, err_msg=f"{where}: prop {name}'s scale")


@pytest.mark.node
@pytest.mark.parametrize("kind", KINDS)
def test_three_js_finds_every_joint_and_prop_of_the_pose(kind: str, three, pose: StagePose) -> None:
    report = three[f"pose{kind}"]
    (sample,) = report["samples"]
    want = _expected_pose(pose)
    for f in pose.stage.figures:
        three_node(report, f.name)
        positions, frames = _three_joints(report, sample, f)
        wp, wq = want["joints"][f.name]
        names = f.scene.skeleton.names
        assert np.linalg.norm(positions - wp, axis=1).max() <= POSITION_TOL, _report_joints(
            "three.js", f.name, positions, wp, names
        )
        assert _angles(frames, wq).max() <= ANGLE_TOL, f"three.js: {f.name}'s joint frames"
    for name, transform in want["props"].items():
        _check_three_prop(report, sample, name, transform, POSITION_TOL)


@pytest.mark.node
@pytest.mark.parametrize("kind", KINDS)
def test_three_js_plays_the_bake_with_the_stick_in_the_hand(kind: str, three, baked) -> None:
    stage, takes = baked
    report = three[f"anim{kind}"]
    assert report["animations"] == ["take"]
    samples = report["samples"]
    assert [s["time"] for s in samples] == takes[0].times.astype(np.float32).tolist()
    want = _expected_bake(stage, takes)
    stick_p, stick_q = want["stick"]
    for k, sample in enumerate(samples):
        for f in stage.figures:
            positions, frames = _three_joints(report, sample, f)
            wp, wq = (a[k] for a in want["joints"][f.name])
            where = f"three.js, frame {k}"
            assert np.linalg.norm(positions - wp, axis=1).max() <= POSITION_TOL, _report_joints(
                where, f.name, positions, wp, f.scene.skeleton.names
            )
            assert _angles(frames, wq).max() <= ANGLE_TOL, f"{where}: {f.name}'s joint frames"
        _check_three_prop(report, sample, "stick", Transform(stick_p[k], stick_q[k]), HELD_TOL, f"three.js, frame {k}")
        for p in stage.props:
            if p.parent is None:
                _check_three_prop(report, sample, p.name, p.transform, POSITION_TOL, f"three.js, frame {k}")


# -- Blender ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=KINDS)
def blender(request: pytest.FixtureRequest, files: dict[str, Path], tmp_path_factory) -> tuple[str, dict[str, Any]]:
    """One Blender run per kind of file (``stage_contents.py`` on its pose and its animation): the kind and the
    report by the file's name."""
    kind = request.param
    out = tmp_path_factory.mktemp("blender_stage") / "contents.json"
    names = [f"pose{kind}", f"anim{kind}"]
    run_script("stage_contents.py", str(out), str(FPS), *(str(files[n]) for n in names))
    report = json.loads(out.read_text())
    return kind, {n: report[str(files[n])] for n in names}


def _blender_heads(report: dict[str, Any], k: int, figure: Figure) -> np.ndarray:
    """A figure's bone heads on sample ``k``, from the one armature that is (or is below) the figure's object."""
    found = [a for a in report["armatures"] if figure.name in (a["name"], *a["ancestors"])]
    assert len(found) == 1, f"{len(found)} armatures for figure {figure.name!r}"
    heads = found[0]["heads"][k]
    return np.array([heads[name] for name in figure.scene.skeleton.names])


def _check_blender_prop(report: dict[str, Any], k: int, name: str, want: Transform, tol: float, where: str) -> None:
    assert name in report["objects"], f"{where}: no object {name!r}"
    obj = report["objects"][name]
    m = np.array(obj["matrix"][k])
    scale = np.linalg.norm(m, axis=0)
    err = np.linalg.norm(np.array(obj["location"][k]) - want.position)
    turn = _matrix_angle(m / scale, want.rotation)
    assert err <= tol, f"{where}: prop {name} off by {err * 1000:.3f} mm"
    assert turn <= ANGLE_TOL, f"{where}: prop {name} turned by {turn:.3f} deg"
    np.testing.assert_allclose(scale, want.scale, rtol=SCALE_TOL, err_msg=f"{where}: prop {name}'s scale")


@pytest.mark.blender
def test_blender_finds_every_joint_and_prop_of_the_pose(blender, pose: StagePose) -> None:
    kind, reports = blender
    report = reports[f"pose{kind}"]
    assert report["frames"] is None
    want = _expected_pose(pose)
    for f in pose.stage.figures:
        heads = _blender_heads(report, 0, f)
        wp = want["joints"][f.name][0]
        assert np.linalg.norm(heads - wp, axis=1).max() <= POSITION_TOL, _report_joints(
            f"Blender {kind}", f.name, heads, wp, f.scene.skeleton.names
        )
        assert f"{f.name} body" in report["objects"]
    for name, transform in want["props"].items():
        _check_blender_prop(report, 0, name, transform, POSITION_TOL, f"Blender {kind}")
    stick = report["objects"]["stick"]
    assert (stick["ancestors"][:1], stick["parent_bone"]) == (["Ada"], "hand_l")  # (a child of the hand's bone)


@pytest.mark.blender
def test_blender_plays_the_bake_with_the_stick_in_the_hand(blender, baked) -> None:
    kind, reports = blender
    stage, takes = baked
    report = reports[f"anim{kind}"]
    assert report["frames"] == list(range(FRAMES))  # (at FPS, key k on frame k)
    want = _expected_bake(stage, takes)
    stick_p, stick_q = want["stick"]
    for k in range(FRAMES):
        where = f"Blender {kind}, frame {k}"
        for f in stage.figures:
            heads = _blender_heads(report, k, f)
            wp = want["joints"][f.name][0][k]
            assert np.linalg.norm(heads - wp, axis=1).max() <= POSITION_TOL, _report_joints(
                where, f.name, heads, wp, f.scene.skeleton.names
            )
        _check_blender_prop(report, k, "stick", Transform(stick_p[k], stick_q[k]), HELD_TOL, where)
        for p in stage.props:
            if p.parent is None:
                _check_blender_prop(report, k, p.name, p.transform, POSITION_TOL, where)
