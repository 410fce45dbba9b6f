"""A stage's mesh props (issue 52, item 2) through its files: saved and loaded with their file beside the scene
file, exported to ``.glb`` and ``.gltf`` with the file's own triangles (read back here from the output's bytes,
and by Blender 3.4's importer), the Khronos validator reporting no error and no warning; a file that is not
there is written as the prop's box, with a warning."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.blender import run_script
from helpers.character_asset import node_world
from helpers.cli import run
from helpers.prop_asset import table_glb
from helpers.validator import validate

from fabrik3d.io.prop_file import MissingMeshWarning, load_prop_file
from fabrik3d.io.scene import scene_or_preset
from fabrik3d.model.placement import Placement, Transform
from fabrik3d.model.props import Hold, Prop
from fabrik3d.stage import Figure, Stage, export_stage_pose, load_stage, save_stage, solve_stage, stage_pose_glb_bytes

TOL = 1e-5  # metres (float32 in the file)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A stage of a figure, the table standing turned and scaled, and the table held small in its right
    hand, saved beside the table's file (``table.glb``)."""
    (tmp_path / "table.glb").write_bytes(table_glb())
    size = load_prop_file(tmp_path / "table.glb").size
    free = Prop("table", "mesh", size, Transform([0.8, 0.4, 0.2], [0.0, 0.38268343, 0.0, 0.92387953], 1.5),
                file="table.glb", colour=[0.6, 0.4, 0.2])  # fmt: skip
    held = Prop("toy", "mesh", size, Transform([0.0, 0.1, 0.05], scale=0.2), Hold("Ada", "hand_r"), file="table.glb")
    stage = Stage([Figure("Ada", scene_or_preset("humanoid"), Placement([0.0, 0.0, -0.5], 30))], [free, held])
    save_stage(stage, tmp_path / "stage.json")
    return tmp_path


def read_glb(data: bytes) -> tuple[dict[str, Any], bytes]:
    size = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + size])
    return doc, data[20 + size + 8 :]


def accessor(doc: dict[str, Any], blob: bytes, k: int) -> np.ndarray:
    """A tightly packed accessor's values (what fabrik3d writes), read here from the bytes."""
    acc = doc["accessors"][k]
    view = doc["bufferViews"][acc["bufferView"]]
    dtype = {5126: "<f4", 5123: "<u2", 5125: "<u4"}[acc["componentType"]]
    width = {"SCALAR": 1, "VEC3": 3}[acc["type"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    return np.frombuffer(blob, dtype, acc["count"] * width, start).reshape(-1, width)


def world_corners(doc: dict[str, Any], blob: bytes, name: str) -> np.ndarray:
    """``(t, 3, 3)``: the triangles of the node named ``name`` in the world, as the file places them."""
    k = next(i for i, n in enumerate(doc["nodes"]) if n.get("name") == name)
    (primitive,) = doc["meshes"][doc["nodes"][k]["mesh"]]["primitives"]
    points = accessor(doc, blob, primitive["attributes"]["POSITION"]).astype(float)
    triangles = accessor(doc, blob, primitive["indices"]).reshape(-1, 3)
    m = node_world(doc["nodes"], k)
    return (points @ m[:3, :3].T + m[:3, 3])[triangles]


def expected_corners(stage: Stage, pose: Any, name: str) -> np.ndarray:
    """The prop's file's triangles, centred on their box, placed where the stage puts the prop."""
    mesh = load_prop_file(Path(stage.mesh_files) / "table.glb")  # type: ignore[arg-type]
    centred = mesh.vertices - (mesh.vertices.max(axis=0) + mesh.vertices.min(axis=0)) / 2
    return pose.prop_transform(name).apply(centred)[mesh.triangles]


def test_the_stage_loads_with_its_mesh_props_and_writes_their_triangles(folder: Path) -> None:
    stage = load_stage(folder / "stage.json")
    assert stage.mesh_files == folder
    assert [(p.name, p.shape, p.file) for p in stage.props] == [("table", "mesh", "table.glb"),
                                                                  ("toy", "mesh", "table.glb")]  # fmt: skip
    np.testing.assert_allclose(stage.props[0].size, load_prop_file(folder / "table.glb").size)
    pose = solve_stage(stage)
    doc, blob = read_glb(stage_pose_glb_bytes(stage, pose.poses))
    for name in ("table", "toy"):
        got, want = world_corners(doc, blob, name), expected_corners(stage, pose, name)
        assert got.shape == want.shape == (18, 3, 3)
        np.testing.assert_allclose(got, want, atol=TOL)


@pytest.mark.node
def test_the_khronos_validator_reports_no_errors_for_mesh_props(folder: Path) -> None:
    stage = load_stage(folder / "stage.json")
    pose = solve_stage(stage)
    paths = [folder / "out.glb", folder / "out.gltf"]
    for path in paths:
        export_stage_pose(stage, pose.poses, path)
    (folder / "table.glb").unlink()
    with pytest.warns(MissingMeshWarning, match="'table.glb' is not in"):
        export_stage_pose(stage, pose.poses, folder / "boxes.glb")
    doc, blob = read_glb((folder / "boxes.glb").read_bytes())
    assert world_corners(doc, blob, "table").shape == (12, 3, 3)  # (its box)
    reports = validate(*paths, folder / "boxes.glb")
    for path in (*paths, folder / "boxes.glb"):
        report = reports[str(path)]
        assert report["errors"] == 0 and report["warnings"] == 0, (path.name, report["messages"])


@pytest.mark.blender
def test_blender_imports_the_mesh_props_triangles(folder: Path) -> None:
    stage = load_stage(folder / "stage.json")
    pose = solve_stage(stage)
    export_stage_pose(stage, pose.poses, folder / "out.glb")
    run_script("skinned_vertices.py", str(folder / "out.glb"), str(folder / "blender.json"))
    report = json.loads((folder / "blender.json").read_text())
    for name in ("table", "toy"):
        want = expected_corners(stage, pose, name).reshape(-1, 3)
        got = np.array(report[name]["vertices"])
        gaps = np.linalg.norm(got[:, None] - want[None], axis=2)
        assert gaps.min(axis=1).max() <= TOL and gaps.min(axis=0).max() <= TOL, name  # (the same points)


def test_the_notebook_draws_the_mesh_props_triangles(folder: Path) -> None:
    pytest.importorskip("pythreejs")
    from fabrik3d.notebook.stage import StageView

    stage = load_stage(folder / "stage.json")
    view = StageView(stage)
    mesh = load_prop_file(folder / "table.glb")
    geometry = view.prop_meshes["table"].geometry
    np.testing.assert_array_equal(np.asarray(geometry.index.array).reshape(-1, 3), mesh.triangles)
    points = np.asarray(geometry.attributes["position"].array, float).reshape(-1, 3)
    np.testing.assert_allclose(np.ptp(points, axis=0), mesh.size, atol=TOL)


def test_fabrik3d_export_of_the_stage_writes_the_mesh_props_triangles(folder: Path) -> None:
    proc = run("export", "stage.json", "-o", "out.glb", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    doc, blob = read_glb((folder / "out.glb").read_bytes())
    stage = load_stage(folder / "stage.json")
    np.testing.assert_allclose(world_corners(doc, blob, "table"), expected_corners(stage, solve_stage(stage), "table"),
                               atol=TOL)  # fmt: skip
