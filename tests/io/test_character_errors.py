"""Bad characters: a clear ``ValueError`` naming the file and the place, never a crash or half a load."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.character_asset import build_character, glb_bytes, write_character

from fabrik3d.io.character import character_from_bytes, load_character

SOURCE = build_character("mixamo")


def _load(doc: dict[str, Any], blob: bytes | bytearray) -> Any:
    return character_from_bytes(glb_bytes(doc, bytes(blob)), "hero.glb")


def _fresh() -> tuple[dict[str, Any], bytearray]:
    doc, blob = SOURCE
    return copy.deepcopy(doc), bytearray(blob)


def _values(doc: dict[str, Any], blob: bytearray, attribute: str, dtype: str) -> np.ndarray:
    """A writable view of an attribute of the body's primitive in ``blob``."""
    acc = doc["accessors"][doc["meshes"][0]["primitives"][0]["attributes"][attribute]]
    view = doc["bufferViews"][acc["bufferView"]]
    return np.ndarray((acc["count"], 4), dtype, buffer=blob, offset=view["byteOffset"])


def test_the_source_loads() -> None:
    character = _load(*_fresh())
    assert len(character.meshes) == 2 and character.notes == ()


def test_no_skin() -> None:
    doc, blob = _fresh()
    del doc["skins"]
    for node in doc["nodes"]:
        node.pop("skin", None)
    with pytest.raises(ValueError, match=r"^hero\.glb: no skin: the file has no rigged skeleton"):
        _load(doc, blob)


def test_joints_that_are_not_one_tree() -> None:
    doc, blob = _fresh()
    names = [n.get("name") for n in doc["nodes"]]
    leg = names.index("mixamorig:LeftUpLeg")
    doc["nodes"][0]["children"].remove(leg)
    doc["scenes"][0]["nodes"].append(leg)
    with pytest.raises(ValueError, match=r"skins: the joints do not form one tree; roots: 'mixamorig:Hips', "):
        _load(doc, blob)


def test_weights_a_little_off_are_normalised() -> None:
    doc, blob = _fresh()
    _values(doc, blob, "WEIGHTS_0", "<f4")[17] *= np.float32(1.01)
    body = _load(doc, blob).meshes[0]
    assert body.weights[17].sum() == pytest.approx(1.0, abs=1e-12)


def test_weights_far_off_are_refused() -> None:
    doc, blob = _fresh()
    w = _values(doc, blob, "WEIGHTS_0", "<f4")
    w[17] *= np.float32(0.62) / w[17].sum()
    with pytest.raises(
        ValueError, match=r"meshes\[0\]\.primitives\[0\]\.attributes\.WEIGHTS_0: weights of vertex 17 sum to 0\.62"
    ):
        _load(doc, blob)


def test_a_joint_index_beyond_the_skin() -> None:
    doc, blob = _fresh()
    _values(doc, blob, "JOINTS_0", "u1")[5, 0] = 200
    with pytest.raises(ValueError, match=r"JOINTS_0: vertex 5 uses joint 200; the skin has 29 joints"):
        _load(doc, blob)


def test_nan_in_a_node_matrix() -> None:
    doc, blob = _fresh()
    node = doc["nodes"][4]
    for key in ("translation", "rotation", "scale"):
        node.pop(key, None)
    node["matrix"] = [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, math.nan, 0, 1]
    with pytest.raises(ValueError, match=r"nodes\[4\] \('mixamorig:Neck'\): its transform is not finite"):
        _load(doc, blob)


def test_nan_in_an_inverse_bind_matrix() -> None:
    doc, blob = _fresh()
    acc = doc["accessors"][doc["skins"][0]["inverseBindMatrices"]]
    start = doc["bufferViews"][acc["bufferView"]]["byteOffset"]
    np.ndarray((acc["count"], 16), "<f4", buffer=blob, offset=start)[3, 13] = np.nan
    with pytest.raises(ValueError, match=rf"accessors\[{doc['skins'][0]['inverseBindMatrices']}\]: element 3 is not"):
        _load(doc, blob)


def test_a_truncated_file() -> None:
    data = glb_bytes(*_fresh())
    for cut in (len(data) - 100, 30, 10):
        with pytest.raises(ValueError, match=r"^hero\.glb: truncated"):
            character_from_bytes(data[:cut], "hero.glb")


def test_an_interleaved_view_that_is_too_short() -> None:
    doc, blob = _fresh()
    position = doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
    doc["bufferViews"][doc["accessors"][position]["bufferView"]]["byteLength"] -= 24
    with pytest.raises(ValueError, match=rf"accessors\[{position}\]: runs past the end of its buffer view"):
        _load(doc, blob)


def test_compressed_meshes_are_refused_by_name() -> None:
    doc, blob = _fresh()
    doc["extensionsUsed"] = ["KHR_draco_mesh_compression"]
    doc["extensionsRequired"] = ["KHR_draco_mesh_compression"]
    with pytest.raises(ValueError, match=r"extensionsRequired: KHR_draco_mesh_compression is not supported"):
        _load(doc, blob)


def test_a_missing_external_buffer(tmp_path: Path) -> None:
    path = write_character(tmp_path, "hero", external=True)
    (tmp_path / "hero.bin").unlink()
    with pytest.raises(ValueError, match=r"hero\.gltf: buffers\[0\]: missing buffer"):
        load_character(path)


def test_what_is_not_shown_is_noted_not_fatal() -> None:
    doc, blob = _fresh()
    doc["meshes"][1]["primitives"][0]["mode"] = 1  # lines
    doc["nodes"].append({"name": "Prop", "mesh": 1})
    doc["scenes"][0]["nodes"].append(len(doc["nodes"]) - 1)
    character = _load(doc, blob)
    assert len(character.meshes) == 1
    assert any("meshes[1].primitives[0]: mode 1" in n for n in character.notes)
    assert any("meshes[1] has no skin" in n for n in character.notes)


def test_a_bad_rig_map_names_the_role(tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    path.write_text('{"hand_l": 3}')
    with pytest.raises(ValueError, match=r"map\.json: expected an object of role -> bone name"):
        load_character(write_character(tmp_path, "hero"), rig_map=path)
