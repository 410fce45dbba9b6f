"""A floor lies within the workspace (issue 53, item 7): every way in (the library's ``solve``, a scene
file, ``Scene``, the CLI's ``--floor``) refuses a floor farther from the origin than
``WORKSPACE_SIZES`` skeleton sizes, with one line naming it, and no warning."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from helpers.cli import assert_one_line_error, run

import fabrik3d
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.model import presets
from fabrik3d.model.workspace import WORKSPACE_SIZES, skeleton_size, workspace

SK = presets.get("humanoid")


@pytest.mark.parametrize("floor", [1e6, -1e6, 1e8, 1e308, 260.0])
def test_solve_refuses_a_floor_outside_the_workspace_naming_it(floor: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no numpy overflow warning on the way)
        with pytest.raises(ValueError, match=r"^floor: must be within ±"):
            fabrik3d.solve(SK, {}, floor=floor)


def test_a_floor_inside_the_workspace_is_taken() -> None:
    assert workspace(SK) == pytest.approx(WORKSPACE_SIZES * skeleton_size(SK))
    r = fabrik3d.solve(SK, {}, floor=0.5)
    assert r.positions[:, 1].min() >= 0.5 - 1e-6


def test_a_scene_file_with_a_far_floor_is_refused_naming_solver_floor(tmp_path: Path) -> None:
    path = tmp_path / "scene.json"
    save_scene(Scene(SK, floor=0.0), path)
    data = json.loads(path.read_text())
    data["solver"]["floor"] = 1e6
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"solver\.floor: must be within ±"):
        load_scene(path)
    with pytest.raises(ValueError, match=r"^floor: must be within"):
        Scene(SK, floor=1e6)


def test_the_cli_refuses_a_far_floor_in_one_line(tmp_path: Path) -> None:
    proc = run("solve", "humanoid", "--floor", "1e6")
    assert_one_line_error(proc, r"--floor: must be within ±")
    out = tmp_path / "pose.glb"
    proc = run("export", "humanoid", "--floor", "1e6", "-o", str(out))
    assert_one_line_error(proc, r"--floor: must be within ±")
    assert not out.exists()
