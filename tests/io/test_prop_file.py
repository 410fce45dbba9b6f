"""Mesh props' files (issue 52, item 2: ``fabrik3d.io.prop_file``): a ``.glb``/``.gltf`` read to triangles with
its node transforms applied, under a character file's checks and limits; bad files give one line naming the
file and the place; a prop of it is drawn with the file's triangles (``prop_surface``), its box where the file
is not found."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers.blender import run_script
from helpers.character_asset import glb_bytes
from helpers.prop_asset import CUBE, CUBE_TRIANGLES, PYRAMID, expected, table_file, table_glb

from fabrik3d.io.gltf_limits import MAX_MESH_VERTICES, MAX_NODES
from fabrik3d.io.prop_file import (
    MissingMeshWarning,
    PropFile,
    load_prop_file,
    mesh_of,
    prop_file_from_bytes,
    prop_surface,
)
from fabrik3d.model.props import FLAT, Prop, prop_mesh


def corners(mesh: PropFile) -> np.ndarray:
    return mesh.vertices[mesh.triangles]


def test_the_table_reads_as_its_triangles_placed_by_its_nodes() -> None:
    doc, blob = table_file()
    mesh = prop_file_from_bytes(glb_bytes(doc, blob), "table.glb")
    assert (len(mesh.vertices), len(mesh.triangles)) == (len(CUBE) + len(PYRAMID), len(CUBE_TRIANGLES) + 6)
    np.testing.assert_allclose(corners(mesh), expected(doc, blob), atol=1e-6)  # (the node outside is not read)
    world = expected(doc, blob).reshape(-1, 3)
    np.testing.assert_allclose(mesh.size, world.max(axis=0) - world.min(axis=0), atol=1e-6)
    # the top is turned 90 deg by the table: its 1.6 m (x 0.5) long side lies along z
    assert mesh.size[2] == pytest.approx(0.8, abs=1e-6) and mesh.size[0] < 0.8
    # every triangle faces out of the solid it bounds (the mirrored leg's reversed), its normals turned along
    face = np.cross(corners(mesh)[:, 1] - corners(mesh)[:, 0], corners(mesh)[:, 2] - corners(mesh)[:, 0])
    centre = {k: mesh.vertices[list(range(*span))].mean(axis=0) for k, span in (("top", (0, 8)), ("leg", (8, 26)))}
    for k, rows in (("top", slice(0, 12)), ("leg", slice(12, 18))):
        out = corners(mesh)[rows].mean(axis=1) - centre[k]
        assert np.all(np.einsum("ij,ij->i", face[rows], out) > 0), k
    assert mesh.normals is not None
    top = mesh.normals[:8]
    assert np.all(np.einsum("ij,ij->i", top, mesh.vertices[:8] - centre["top"]) > 0)
    np.testing.assert_allclose(np.linalg.norm(mesh.normals, axis=1), 1.0, atol=1e-9)


def test_a_gltf_with_its_buffer_beside_it_or_in_a_data_uri_reads_the_same(tmp_path: Path) -> None:
    doc, blob = table_file()
    glb = prop_file_from_bytes(glb_bytes(doc, blob), "table.glb")
    (tmp_path / "table.bin").write_bytes(blob)
    beside = {**doc, "buffers": [{"uri": "table.bin", "byteLength": len(blob)}]}
    (tmp_path / "table.gltf").write_text(json.dumps(beside))
    inline = {**doc, "buffers": [{"uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
                                  "byteLength": len(blob)}]}  # fmt: skip
    for mesh in (load_prop_file(tmp_path / "table.gltf"), prop_file_from_bytes(json.dumps(inline).encode())):
        np.testing.assert_array_equal(mesh.triangles, glb.triangles)
        np.testing.assert_allclose(mesh.vertices, glb.vertices)


def _scene_of(primitive: dict, extra: dict | None = None) -> bytes:
    """A file of one node holding a mesh of ``primitive`` (the table's accessors kept)."""
    doc, blob = table_file()
    doc.update(meshes=[{"primitives": [doc["meshes"][0]["primitives"][0], primitive]}],
               nodes=[{"mesh": 0}], scenes=[{"nodes": [0]}])  # fmt: skip
    doc.update(extra or {})
    return glb_bytes(doc, blob)


def _truncated() -> bytes:
    doc, blob = table_file()
    doc["bufferViews"][0]["byteLength"] += 4096
    return glb_bytes(doc, blob)


def _index_beyond() -> bytes:
    """The cube's indices (up to 7) on 6 of its vertices."""
    doc, blob = table_file()
    doc["accessors"].append({**doc["accessors"][0], "count": 6})
    doc["meshes"][0]["primitives"][0]["attributes"] = {"POSITION": len(doc["accessors"]) - 1}
    return glb_bytes(doc, blob)


def _no_meshes() -> bytes:
    return json.dumps({"asset": {"version": "2.0"}, "nodes": [{"name": "empty"}]}).encode()


def _huge() -> bytes:
    doc, blob = table_file()
    doc["accessors"][0]["count"] = 10**7
    return glb_bytes(doc, blob)


def _many_nodes() -> bytes:
    doc, blob = table_file()
    doc["nodes"] += [{"name": f"n{k}"} for k in range(MAX_NODES)]
    return glb_bytes(doc, blob)


BAD = {
    "not glTF": (lambda: b"PK\x03\x04 a zip file", "cup.glb: neither a GLB nor glTF JSON"),
    "a truncated GLB": (lambda: table_glb()[:-40], "cup.glb: truncated or damaged GLB: the header says"),
    "a view past its buffer": (_truncated, "cup.glb: bufferViews[0]: runs past the end of its buffer"),
    "a lines primitive": (
        lambda: _scene_of({"attributes": {"POSITION": 0}, "mode": 1}),
        "cup.glb: meshes[0].primitives[1]: mode 1 (lines) is not triangles",
    ),
    "no meshes": (_no_meshes, "cup.glb: meshes: none; the file holds no triangles"),
    "no mesh in the scene": (
        lambda: _scene_of({"attributes": {"POSITION": 0}}, {"scenes": [{"nodes": []}]}),
        "cup.glb: scenes[0]: no node of the scene holds a mesh",
    ),
    "too many vertices": (
        _huge,
        f"cup.glb: meshes[0].primitives[0]: 10000000 vertices; a prop mesh may have at most {MAX_MESH_VERTICES}",
    ),
    "too many nodes": (_many_nodes, f"cup.glb: nodes: {MAX_NODES + 4} nodes; a prop file may have at most"),
    "an index beyond the vertices": (
        _index_beyond,
        "cup.glb: meshes[0].primitives[0].indices: index 7 beyond the 6 vertices",
    ),
    "compressed": (
        lambda: _scene_of({"attributes": {"POSITION": 0}}, {"extensionsRequired": ["KHR_draco_mesh_compression"]}),
        "cup.glb: extensionsRequired: KHR_draco_mesh_compression is not supported",
    ),
    "a malformed node": (
        lambda: _scene_of({"attributes": {"POSITION": 0}}, {"nodes": [{"mesh": 0, "scale": [1, 0]}]}),
        "cup.glb: nodes[0]",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_file_gives_one_line_naming_the_file_and_the_place(case: str) -> None:
    make, message = BAD[case]
    with pytest.raises(ValueError) as info:
        prop_file_from_bytes(make(), "cup.glb")
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_a_mesh_prop_is_its_file_centred_and_stretched_to_its_size(tmp_path: Path) -> None:
    (tmp_path / "table.glb").write_bytes(table_glb())
    mesh = mesh_of(Prop("t", "mesh", (1, 1, 1), file="table.glb"), tmp_path)
    assert mesh is not None
    same = Prop("t", "mesh", mesh.size, file="table.glb")
    vertices, normals, triangles = prop_surface(same, tmp_path)
    np.testing.assert_allclose(vertices, mesh.vertices - (mesh.vertices.max(0) + mesh.vertices.min(0)) / 2)
    np.testing.assert_array_equal(triangles, mesh.triangles)
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-9)
    twice = Prop("t", "mesh", mesh.size * (2, 1, 1), file="table.glb")
    np.testing.assert_allclose(np.ptp(prop_surface(twice, tmp_path)[0], axis=0), mesh.size * (2, 1, 1))
    assert mesh_of(same, tmp_path) is mesh  # (read once while the file is unchanged)
    assert mesh_of(same, {"table.glb": mesh}) is mesh and mesh_of(Prop("b", "box"), tmp_path) is None


def test_a_flat_mesh_keeps_its_flat_side() -> None:
    doc, blob = table_file()
    doc["nodes"][1]["scale"] = [1.0, 0.0, 1.0]  # (the top squashed flat: its normals made from the triangles)
    doc["nodes"][0]["children"] = [1]
    mesh = prop_file_from_bytes(glb_bytes(doc, blob))
    assert mesh.size[1] == FLAT
    vertices, normals, _ = prop_mesh(Prop("f", "mesh", mesh.size, file="f.glb"), surface=mesh)
    assert np.ptp(vertices[:, 1]) == 0.0
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-9)


def test_a_missing_file_is_the_box_and_says_so(tmp_path: Path) -> None:
    prop = Prop("statue", "mesh", (0.5, 1.8, 0.4), file="statue.glb")
    with pytest.warns(MissingMeshWarning, match=r"prop 'statue': its file 'statue.glb' is not in .*bounding box"):
        vertices, _, triangles = prop_surface(prop, tmp_path)
    np.testing.assert_array_equal(vertices, prop_mesh(Prop("box", "box", (0.5, 1.8, 0.4)))[0])
    assert len(triangles) == 12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prop_surface(Prop("b", "box"), tmp_path)  # (a built-in shape has no file to miss)
    with pytest.raises(ValueError, match=r"leads out of the file's folder|only relative paths"):
        mesh_of(Prop("x", "mesh", file="../x.glb"), tmp_path)


@pytest.mark.blender
def test_a_mesh_made_by_blender_reads_as_blender_sees_it(tmp_path: Path) -> None:
    """Blender 3.4 builds a cube and a parented, turned and scaled cylinder (quads and n-gons), exports them to
    a GLB with its own exporter and reports their triangles in the world (glTF's axes)."""
    out = tmp_path / "blender.json"
    run_script("export_prop.py", str(tmp_path / "made.glb"), str(out))
    report = json.loads(out.read_text())
    mesh = load_prop_file(tmp_path / "made.glb")
    assert len(mesh.triangles) == report["triangles"]
    np.testing.assert_allclose(mesh.vertices.min(axis=0), report["lower"], atol=1e-5)
    np.testing.assert_allclose(mesh.vertices.max(axis=0), report["upper"], atol=1e-5)
    area = np.linalg.norm(np.cross(*(corners(mesh)[:, k] - corners(mesh)[:, 0] for k in (1, 2))), axis=1).sum() / 2
    assert area == pytest.approx(report["area"], rel=1e-5)
