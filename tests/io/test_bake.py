"""Baking animations (fabrik3d.io.bake) and what the scene file and glTF keep of them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_node_modules

from fabrik3d.animation import Animation, Key, bake, solve_goals
from fabrik3d.io import gltf
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.model import presets


@pytest.fixture(scope="module")
def body():
    return presets.get("humanoid")


def _at(body, name: str) -> np.ndarray:
    return body.rest_positions[body.index(name)]


def _reach(body) -> Animation:
    """The left hand from rest to the chest, overhead and back; the toes pinned at frame 0."""
    feet = {"toe_l": _at(body, "toe_l"), "toe_r": _at(body, "toe_r")}
    return Animation(
        (
            Key(0, {"hand_l": _at(body, "hand_l"), **feet}),
            Key(20, {"hand_l": [0.25, 1.25, 0.35]}),
            Key(40, {"hand_l": [0.3, 1.75, 0.15]}),
            Key(60, {"hand_l": _at(body, "hand_l")}),
        )
    )


def test_a_warm_bake_reaches_every_interpolated_target_and_moves_continuously(body) -> None:
    anim = _reach(body)
    take = bake(body, anim)
    assert len(take.times) == 61
    np.testing.assert_allclose(take.times, np.arange(61) / 30.0)
    goals = anim.goals(np.arange(61))
    hand = body.index("hand_l")
    for f, g in enumerate(goals):
        for name, t in g.targets.items():
            assert np.linalg.norm(take.positions[f, body.index(name)] - t.position) <= 1e-3, (f, name)
    # continuous: no joint pops (an elbow bending from straight moves faster than the hand: a few cm)
    steps = np.linalg.norm(np.diff(take.positions, axis=0), axis=2)  # (60, n)
    target_steps = np.linalg.norm(np.diff([g.targets["hand_l"].position for g in goals], axis=0), axis=1)
    assert np.all(steps.max(axis=1) <= 3 * target_steps + 0.025), np.argmax(steps.max(axis=1) - 3 * target_steps)
    # the body stays: the hand reaches with the arm
    assert np.linalg.norm(take.positions[:, body.index("head")] - _at(body, "head"), axis=1).max() < 0.03
    assert take.positions[20, hand] == pytest.approx(goals[20].targets["hand_l"].position, abs=1e-3)


def test_a_bake_over_a_range_starts_its_clock_at_the_range(body) -> None:
    take = bake(body, _reach(body), frames=(10, 25))
    assert len(take.times) == 16 and take.times[0] == 0.0
    assert take.times[-1] == pytest.approx(15 / 30)


def test_a_batch_bake_gives_what_solve_gives_per_frame(body) -> None:
    anim = Animation(
        (Key(0, {"hand_l": [0.3, 1.3, 0.3]}, poles={"hand_l": [0.5, 0.9, -0.4]}), Key(6, {"hand_l": [0.25, 1.5, 0.3]})),
        interpolation="linear",
    )
    take = bake(body, anim, method="batch")
    for f, g in enumerate(anim.goals(np.arange(7))):
        expected = solve_goals(body, g)
        np.testing.assert_array_equal(take.positions[f], expected.positions)


def test_on_frame_sees_every_frame_in_order(body) -> None:
    seen = []
    bake(body, _reach(body), frames=(0, 5), on_frame=lambda f, r: seen.append((f, r.converged)))
    assert seen == [(f, True) for f in range(6)]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"method": "fast"}, ValueError, "method: expected one of warm, batch"),
        ({"frames": (5, 2)}, ValueError, "the last frame 2 is before the first 5"),
        ({"frames": 7}, ValueError, r"frames: expected \(first, last\)"),
        ({"frames": (0, -3)}, ValueError, r"frames\[1\]: frame -3 is outside"),
        ({"tolerance": 0}, ValueError, "tolerance"),
    ],
)
def test_bad_bakes_fail_clearly(body, kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        bake(body, _reach(body), **kwargs)


def test_bake_names_keys_on_joints_that_are_not_effectors(body) -> None:
    with pytest.raises(ValueError, match=r"key at frame 3: targets\.knee_l: not an end effector"):
        bake(body, Animation((Key(3, {"knee_l": [0, 0.5, 0]}),)))
    with pytest.raises(TypeError, match="animation: expected an Animation"):
        bake(body, {"keys": []})


def test_scene_files_keep_the_keys_and_old_versions_load(tmp_path: Path, body) -> None:
    scene = Scene(body, animation=_reach(body))
    path = tmp_path / "anim.json"
    save_scene(scene, path)
    data = json.loads(path.read_text())
    assert data["version"] == 3 and [k["frame"] for k in data["animation"]["keys"]] == [0, 20, 40, 60]
    back = load_scene(path)
    assert back.animation is not None and back.animation.to_dict() == scene.animation.to_dict()
    data["version"] = 2
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="animation: needs version 3"):
        load_scene(path)
    del data["animation"]
    path.write_text(json.dumps(data))
    assert load_scene(path).animation is None
    data["animation"] = {"keys": [{"frame": 1, "targets": {"elbow_l": [0, 1, 0]}}]}
    data["version"] = 3
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"anim\.json: animation: key at frame 1: targets\.elbow_l: not an end"):
        load_scene(path)


@pytest.mark.node
def test_a_baked_glb_is_valid_and_three_js_plays_the_solver_s_bones(tmp_path: Path, body) -> None:
    anim = Animation((Key(0, {"hand_l": _at(body, "hand_l")}), Key(30, {"hand_l": [0.25, 1.25, 0.35]})))
    take = bake(body, anim)
    path = tmp_path / "reach.glb"
    gltf.export_animation(body, list(zip(take.positions, take.rotations)), take.times, path)
    node = require_node_modules("gltf-validator", "three")
    reports = []
    for script in ("validate.mjs", "three_check.mjs"):
        proc = subprocess.run([node, script, str(path)], cwd=JS_DIR, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr[-2000:]
        reports.append(json.loads(proc.stdout)[str(path)])
    valid, three = reports
    assert valid["errors"] == 0 and valid["warnings"] == 0, valid["messages"]
    assert len(three["samples"]) == 31
    names = body.names
    for k, sample in enumerate(three["samples"]):
        assert sample["time"] == pytest.approx(take.times[k], abs=1e-6)
        got = {b["name"]: p for b, p in zip(three["bones"], sample["positions"])}
        for j, name in enumerate(names):
            np.testing.assert_allclose(got[name], take.positions[k, j], atol=1e-5)


def test_a_held_key_keeps_its_pose_without_solving_again(body) -> None:
    anim = Animation((Key(0, {"hand_l": _at(body, "hand_l")}), Key(10, {"hand_l": [0.25, 1.25, 0.35]})), end=20)
    seen = []
    take = bake(body, anim, on_frame=lambda f, r: seen.append(r))
    assert len(seen) == 21
    assert all(seen[f] is seen[10] for f in range(10, 21))  # the same result, not a new solve
    np.testing.assert_array_equal(take.positions[20], take.positions[10])
    assert seen[9] is not seen[10]
