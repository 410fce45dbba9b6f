"""Small mesh files for mesh props, written as glTF 2.0 JSON here (not by fabrik3d): a "table" of two meshes
under a node hierarchy.

* ``meshes[0]``: a unit cube, one indexed primitive (8 vertices, 12 triangles, uint16 indices, normals);
* ``meshes[1]``: a square pyramid, one primitive without indices (18 vertices: 6 triangles, no normals);
* ``nodes``: ``table`` (the scene's root: moved, turned 90 deg about +Y, scaled 0.5) with two children, the
  top (the cube, flattened and lifted by its own TRS) and a leg (the pyramid, placed by a ``matrix`` that
  mirrors x); a node outside the scene holds the cube too and must not be read.

``table_file()`` gives ``(doc, blob)``; ``table_glb()`` the GLB's bytes; ``expected(doc, blob)`` the world
triangles every reader must find: ``(t, 3, 3)`` corner positions, metres (``node_world``, written for the
tests).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from helpers.character_asset import glb_bytes, node_world

CUBE = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)], dtype=np.float32)
# The cube's 12 triangles, counter-clockwise seen from outside (vertex k = 4x + 2y + z of the corners).
CUBE_TRIANGLES = np.array([
    [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5],  # -x, +x
    [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],  # -y, +y
    [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],  # -z, +z
], dtype=np.uint16)  # fmt: skip
_APEX, _BASE = (0.0, 0.4, 0.0), [(-0.1, 0.0, -0.1), (0.1, 0.0, -0.1), (0.1, 0.0, 0.1), (-0.1, 0.0, 0.1)]
_SIDES = [[_BASE[k], _APEX, _BASE[(k + 1) % 4]] for k in range(4)]
PYRAMID = np.array([*_SIDES, [_BASE[0], _BASE[1], _BASE[2]], [_BASE[0], _BASE[2], _BASE[3]]], np.float32).reshape(-1, 3)


class Blob:
    """A buffer and its views and accessors, in order."""

    def __init__(self) -> None:
        self.data = b""
        self.views: list[dict[str, Any]] = []
        self.accessors: list[dict[str, Any]] = []

    def add(self, values: np.ndarray, kind: str, ctype: int) -> int:
        self.data += b"\0" * (-len(self.data) % 4)
        raw = np.ascontiguousarray(values).tobytes()
        self.views.append({"buffer": 0, "byteOffset": len(self.data), "byteLength": len(raw)})
        self.data += raw
        acc: dict[str, Any] = {"bufferView": len(self.views) - 1, "componentType": ctype,
                               "count": len(values), "type": kind}  # fmt: skip
        if kind == "VEC3":
            acc.update(min=values.min(axis=0).tolist(), max=values.max(axis=0).tolist())
        self.accessors.append(acc)
        return len(self.accessors) - 1


def table_file() -> tuple[dict[str, Any], bytes]:
    """The table's document (without ``buffers``: ``glb_bytes`` adds it) and its buffer."""
    blob = Blob()
    normals = CUBE / np.linalg.norm(CUBE, axis=1, keepdims=True)
    cube = {"attributes": {"POSITION": blob.add(CUBE, "VEC3", 5126), "NORMAL": blob.add(normals, "VEC3", 5126)},
            "indices": blob.add(CUBE_TRIANGLES.reshape(-1), "SCALAR", 5123)}  # fmt: skip
    pyramid = {"attributes": {"POSITION": blob.add(PYRAMID, "VEC3", 5126)}, "mode": 4}
    half = math.sqrt(0.5)
    mirror = np.diag([-1.0, 1.0, 1.0, 1.0])
    mirror[:3, 3] = (0.3, -0.9, 0.2)
    doc = {
        "asset": {"version": "2.0", "generator": "fabrik3d tests"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "table", "children": [1, 2], "translation": [1.0, 2.0, 3.0], "rotation": [0, half, 0, half],
             "scale": [0.5, 0.5, 0.5]},
            {"name": "top", "mesh": 0, "translation": [0.0, 0.8, 0.0], "scale": [1.6, 0.1, 1.0]},
            {"name": "leg", "mesh": 1, "matrix": mirror.T.reshape(-1).tolist()},
            {"name": "elsewhere", "mesh": 0, "translation": [50.0, 0.0, 0.0]},
        ],
        "meshes": [{"name": "cube", "primitives": [cube]}, {"name": "pyramid", "primitives": [pyramid]}],
        "accessors": blob.accessors,
        "bufferViews": blob.views,
    }  # fmt: skip
    return doc, blob.data


def table_glb() -> bytes:
    return glb_bytes(*table_file())


def expected(doc: dict[str, Any], blob: bytes) -> np.ndarray:
    """``(t, 3, 3)``: the corners of every triangle the scene shows, in the world, outward faces kept
    counter-clockwise (a mirroring node's triangles reversed)."""
    out = []
    for k in (1, 2):
        m = node_world(doc["nodes"], k)
        if k == 1:
            corners = CUBE[CUBE_TRIANGLES.astype(int)]
        else:
            corners = PYRAMID.reshape(-1, 3, 3)
        world = corners.astype(float) @ m[:3, :3].T + m[:3, 3]
        out.append(world[:, ::-1] if np.linalg.det(m[:3, :3]) < 0 else world)
    return np.concatenate(out)
