"""A mesh prop from an uploaded ``.glb``/``.gltf`` in the web app, in process (issue 52, item 2): the prop is the
file's size, the view draws its triangles, the scene file names the file and the glTF downloads hold its
triangles; undo takes it away; a bad upload changes nothing and says why in one line."""

from __future__ import annotations

import base64
import json
import struct

import numpy as np
import pytest
from fabrik3d_web.app import WebApp
from fabrik3d_web.document.characters import MAX_CHARACTER_BYTES
from fabrik3d_web.panels.mesh_props import MAX_MESH_FILES
from helpers.character_asset import glb_bytes
from helpers.prop_asset import expected, table_file, table_glb
from trame.app import get_server

from fabrik3d.io.stage import load_stage, parse_stage


@pytest.fixture
def app() -> WebApp:
    """The app on a fresh (not started) trame server, its state ready as on a connection."""
    out = WebApp(server=get_server(f"fabrik3d-test-mesh-props-{np.random.randint(1 << 30)}", client_type="vue3"))
    out.state.ready()
    return out


def upload(app: WebApp, name: str, content: bytes | str, size: int | None = None) -> None:
    """The page's upload field sends a file (as trame does: name, size, content)."""
    app.state.mesh_upload = {"name": name, "size": len(content) if size is None else size, "content": content}
    app.state.flush()


def drawn_triangles(app: WebApp, name: str) -> int:
    """How many triangles the view's actor of prop ``name`` draws."""
    mapper = app.figures.view._props[name][1].GetMapper()
    mapper.Update()
    return int(mapper.GetInput().GetNumberOfPolys())


def glb_mesh(data: bytes, name: str) -> tuple[int, int]:
    """``(vertices, triangles)`` of the mesh of the node named ``name`` in a GLB."""
    doc = json.loads(data[20 : 20 + struct.unpack_from("<I", data, 12)[0]])
    node = next(n for n in doc["nodes"] if n.get("name") == name)
    (primitive,) = doc["meshes"][node["mesh"]]["primitives"]
    counts = [doc["accessors"][k]["count"] for k in (primitive["attributes"]["POSITION"], primitive["indices"])]
    return counts[0], counts[1] // 3


def test_an_uploaded_mesh_is_a_prop_of_its_triangles_until_undone(app: WebApp) -> None:
    doc, blob = table_file()
    upload(app, "table.glb", table_glb())
    assert app.state.error_message == "" and app.state.mesh_upload is None
    (prop,) = app.document.props
    assert (prop.name, prop.shape, prop.file, app.state.prop_picked) == ("table", "mesh", "table.glb", "table")
    world = expected(doc, blob).reshape(-1, 3)
    np.testing.assert_allclose(prop.size, np.ptp(world, axis=0), atol=1e-6)  # (its file's bounding box)
    assert prop.transform.position[1] == pytest.approx(prop.size[1] / 2)  # (standing on the floor)
    assert drawn_triangles(app, "table") == 18  # (the box would be 12)
    assert [p["name"] for p in app.state.stage_props] == ["table"] and not app.state.stage_props[0]["missing"]
    stage = parse_stage(app.document.scene_json())
    assert [(p.shape, p.file) for p in stage.props] == [("mesh", "table.glb")]
    assert glb_mesh(app.document.pose_glb(), "table") == (26, 18)
    upload(app, "table.glb", table_glb())  # (the same file again: a second prop of it)
    assert [p.name for p in app.document.props] == ["table", "table 2"]
    app.undo()
    app.undo()
    assert app.document.props == [] and app.figures.view._props == {}
    assert app.state.stage_props == []


def test_undo_takes_an_uploaded_mesh_prop_and_its_file_away_and_redo_brings_them_back(app: WebApp) -> None:
    """Adding a mesh prop is one undo step, its file with it: undone, neither the prop nor the file is left (the
    file no longer counts among the scene's); redone, both are back and drawn; a file of the same name uploaded
    again and undone leaves the first file's content."""
    upload(app, "table.glb", table_glb())
    first = app.document.mesh_files["table.glb"]
    app.undo()
    assert app.document.props == [] and app.document.mesh_files == {} and app.figures.view._props == {}
    app.redo()
    assert [p.name for p in app.document.props] == ["table"] and app.document.mesh_files == {"table.glb": first}
    assert drawn_triangles(app, "table") == 18
    doc, blob = table_file()
    doc["nodes"][1]["scale"] = [2.0, 1.0, 1.0]  # (another table of the same name: wider)
    upload(app, "table.glb", glb_bytes(doc, blob))
    assert app.document.mesh_files["table.glb"] is not first and len(app.document.props) == 2
    app.undo()
    assert [p.name for p in app.document.props] == ["table"] and app.document.mesh_files == {"table.glb": first}


def test_a_gltf_with_its_buffer_inside_and_a_gltf_of_another_name(app: WebApp) -> None:
    doc, blob = table_file()
    doc["buffers"] = [{"uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
                       "byteLength": len(blob)}]  # fmt: skip
    upload(app, "C:\\models\\My Table!.gltf", json.dumps(doc).encode())
    assert app.state.error_message == ""
    (prop,) = app.document.props
    assert (prop.name, prop.file) == ("My Table_", "My Table_.gltf")
    assert drawn_triangles(app, prop.name) == 18


def _lines() -> bytes:
    doc, blob = table_file()
    doc["meshes"][1]["primitives"][0]["mode"] = 1
    return glb_bytes(doc, blob)


def _huge() -> bytes:
    doc, blob = table_file()
    doc["nodes"][1]["scale"] = [1000.0, 1.0, 1.0]
    return glb_bytes(doc, blob)


BAD = {
    "too large": (lambda: ("big.glb", table_glb(), MAX_CHARACTER_BYTES + 1), "big.glb: file is too large"),
    "not glTF": (lambda: ("scene.json", b'{"format": "fabrik3d.scene"}', None), "scene.json: not a .glb or .gltf file"),
    "broken": (lambda: ("cup.glb", table_glb()[:100], None), "cup.glb: truncated or damaged GLB"),
    "no triangles": (lambda: ("cup.glb", _lines(), None), "cup.glb: meshes[1].primitives[0]: mode 1 (lines) is not"),
    "larger than a prop": (lambda: ("cup.glb", _huge(), None), "cup.glb: the mesh is 500 m across; a prop is at most"),
    "text, not bytes": (lambda: ("cup.glb", "glTF....", None), "cup.glb: expected the file's bytes"),
    "two files": (lambda: None, "upload: expected one file, got 2"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_upload_changes_nothing_and_says_why(app: WebApp, case: str) -> None:
    upload(app, "first.glb", table_glb())
    make, message = BAD[case]
    props, files, undo = list(app.document.props), dict(app.document.mesh_files), len(app.document._undo)
    made = make()
    if made is None:
        app.state.mesh_upload = [{"name": "a.glb", "size": 4, "content": b"glTF"}] * 2
        app.state.flush()
    else:
        upload(app, *made)
    text = app.state.error_message
    assert text.startswith(message) and "\n" not in text, text
    assert app.document.props == props and app.document.mesh_files == files and len(app.document._undo) == undo
    assert set(app.figures.view._props) == {"first"} and app.state.mesh_upload is None


def test_a_scene_keeps_a_few_mesh_files(app: WebApp) -> None:
    for k in range(MAX_MESH_FILES):
        upload(app, f"m{k}.glb", table_glb())
    upload(app, "m0.glb", table_glb())  # (a file it keeps already: its new content replaces it)
    assert app.state.error_message == "" and len(app.document.props) == MAX_MESH_FILES + 1
    upload(app, "one more.glb", table_glb())
    assert app.state.error_message == f"one more.glb: a scene keeps at most {MAX_MESH_FILES} mesh files"


def test_a_scene_opened_without_its_mesh_file_draws_the_box_until_the_file_comes(app: WebApp) -> None:
    upload(app, "table.glb", table_glb())
    text = app.document.scene_json()
    app.document.mesh_files.clear()  # (another session: the scene file alone)
    app.state.scene_upload = {"name": "stage.json", "size": len(text), "content": text.encode()}
    app.state.flush()
    assert app.state.error_message == "" and app.state.stage_props[0]["missing"] is True
    assert drawn_triangles(app, "table") == 12  # (its box)
    upload(app, "table.glb", table_glb())  # (the file comes: a second prop, and the first is drawn from it)
    assert drawn_triangles(app, "table") == 18 and app.state.stage_props[0]["missing"] is False


def test_a_scene_file_opened_from_its_folder_brings_its_mesh_files(app: WebApp, tmp_path) -> None:  # type: ignore[no-untyped-def]
    upload(app, "table.glb", table_glb())
    (tmp_path / "stage.json").write_text(app.document.scene_json())
    (tmp_path / "table.glb").write_bytes(table_glb())
    other = WebApp(server=get_server(f"fabrik3d-test-mesh-props-{np.random.randint(1 << 30)}", client_type="vue3"))
    other.document.load_stage(load_stage(tmp_path / "stage.json"), "stage.json", undoable=False)  # (serve --scene)
    other.figures.refresh()
    assert set(other.document.mesh_files) == {"table.glb"} and other.state.stage_props[0]["missing"] is False
    assert drawn_triangles(other, "table") == 18
