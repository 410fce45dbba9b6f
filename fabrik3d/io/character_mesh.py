"""The skinned meshes of a rigged glTF character (``fabrik3d.io.character``): positions, normals, UVs,
joint indices and weights (any number of ``JOINTS_n``/``WEIGHTS_n`` sets: 4 influences each), triangle
indices, base colour and base-colour texture of each primitive of each skinned mesh node.

What is not read is reported in the character's notes (points and lines, morph targets, meshes without
a skin); weights that miss 1 by up to ``WEIGHT_TOLERANCE`` are normalised, larger errors refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.io import gltf_limits as limits
from fabrik3d.io.gltf_accessors import Buffers, read_accessor
from fabrik3d.io.gltf_images import MAX_TEXTURE_PIXELS_IN_ALL, image_type
from fabrik3d.io.gltf_import import _list

# Vertex weights summing to 1 within this are normalised; beyond it the file is refused.
WEIGHT_TOLERANCE = 0.02
TRIANGLES = 4


@dataclass(frozen=True, eq=False)
class SkinnedPrimitive:
    """One triangle primitive of a skinned mesh, in the bind pose (scene units).

    Attributes:
        where: its place in the document, e.g. ``meshes[0].primitives[1]``.
        node: the index of the node holding the mesh.
        skin: the index of the skin that deforms it (``Character.skins``).
        positions: ``(v, 3)`` vertex positions.
        normals: ``(v, 3)`` unit normals, or ``None``.
        uvs: ``(v, 2)`` texture coordinates of the base-colour texture, or ``None``.
        indices: ``(t, 3)`` triangles (vertex indices); without indices in the file, ``0, 1, 2, ...``.
        joints: ``(v, k)`` indices into the skin's joints (0 where the weight is 0).
        weights: ``(v, k)`` weights, rows summing to 1.
        base_color: ``(4,)`` RGBA factor of the material (linear), 1 without a material.
        texture: the base-colour image's bytes (PNG or JPEG), or ``None``.
        texture_mime: its MIME type (``image/png``, ``image/jpeg``), or ``""``.
        double_sided: whether its material shows the triangles' back faces (glTF's ``doubleSided``;
            false: a viewer culls them).
    """

    where: str
    node: int
    skin: int
    positions: np.ndarray
    normals: np.ndarray | None
    uvs: np.ndarray | None
    indices: np.ndarray
    joints: np.ndarray
    weights: np.ndarray
    base_color: np.ndarray
    texture: bytes | None
    texture_mime: str
    double_sided: bool = False


def read_meshes(
    doc: dict[str, Any], buffers: Buffers, skin_sizes: list[int], notes: list[str]
) -> list[SkinnedPrimitive]:
    """Every triangle primitive of every node with a mesh and a skin; ``skin_sizes[s]`` is the number of
    joints of skin ``s``. Things not read are appended to ``notes``."""
    meshes = _list(doc, "meshes")
    skinned: list[tuple[int, int, int]] = []  # (node, mesh, skin)
    for k, node in enumerate(_list(doc, "nodes")):
        if not isinstance(node, dict) or node.get("mesh") is None:
            continue
        m = node["mesh"]
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < len(meshes):
            raise ValueError(f"nodes[{k}].mesh: expected an index in [0, {len(meshes) - 1}], got {checks.quoted(m)}")
        s = node.get("skin")
        if s is None:
            notes.append(f"nodes[{k}]: meshes[{m}] has no skin; it stays in the file but is not posed here")
            continue
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < len(skin_sizes):
            raise ValueError(
                f"nodes[{k}].skin: expected an index in [0, {len(skin_sizes) - 1}], got {checks.quoted(s)}"
            )
        skinned.append((k, m, s))
    limits.check_meshes(doc, [(k, m) for k, m, _ in skinned])  # (before any accessor is read)
    images: dict[int, tuple[bytes | None, str, int]] = {}  # each image checked once, its bytes shared
    out = []
    for k, m, s in skinned:
        for p, prim in enumerate(_list(meshes[m], "primitives")):
            where = f"meshes[{m}].primitives[{p}]"
            if prim.get("mode", TRIANGLES) != TRIANGLES:
                notes.append(f"{where}: mode {prim.get('mode')} (not triangles) is not shown")
                continue
            if prim.get("targets"):
                notes.append(f"{where}: morph targets are ignored")
            out.append(_primitive(doc, buffers, prim, where, k, s, skin_sizes[s], (images, notes)))
    return out


def _primitive(
    doc: dict[str, Any],
    buffers: Buffers,
    prim: dict[str, Any],
    where: str,
    node: int,
    skin: int,
    size: int,
    seen: tuple[dict[int, tuple[bytes | None, str, int]], list[str]],
) -> SkinnedPrimitive:
    attributes = prim.get("attributes")
    if not isinstance(attributes, dict) or "POSITION" not in attributes:
        raise ValueError(f"{where}.attributes: no POSITION")

    def attribute(name: str, width: int) -> np.ndarray:
        return vertex_attribute(doc, buffers, attributes, name, width, where, len(positions))

    positions = vertex_attribute(doc, buffers, attributes, "POSITION", 3, where)
    normals = attribute("NORMAL", 3) if "NORMAL" in attributes else None
    if normals is not None:
        normals = unit_rows(normals)
    if "JOINTS_0" not in attributes or "WEIGHTS_0" not in attributes:
        raise ValueError(f"{where}.attributes: a skinned mesh needs JOINTS_0 and WEIGHTS_0")
    joints, weights, n = [], [], 0
    while f"JOINTS_{n}" in attributes and f"WEIGHTS_{n}" in attributes:
        j, w = attribute(f"JOINTS_{n}", 4), attribute(f"WEIGHTS_{n}", 4)
        if j.dtype.kind not in "iu":
            raise ValueError(f"{where}.attributes.JOINTS_{n}: expected unsigned byte or short indices")
        joints.append(j.astype(np.int64))
        weights.append(w.astype(float))
        n += 1
    jt, wt = np.concatenate(joints, axis=1), np.concatenate(weights, axis=1)
    _check_weights(jt, wt, size, where)
    material = _material(doc, buffers, prim.get("material"), where, seen)
    uvs = None
    if material[1] is not None:
        name = f"TEXCOORD_{material[3]}"
        uvs = attribute(name, 2) if name in attributes else None
    tris = triangle_indices(doc, buffers, prim, where, len(positions))
    return SkinnedPrimitive(where, node, skin, positions, normals, uvs, tris, jt, wt, *material[:3], material[4])


def vertex_attribute(
    doc: dict[str, Any],
    buffers: Buffers,
    attributes: dict[str, Any],
    name: str,
    width: int,
    where: str,
    count: int | None = None,
) -> np.ndarray:
    """Attribute ``name`` of the primitive at ``where``: ``(v, width)`` values, at most
    ``limits.MAX_MESH_VERTICES``, and ``count`` of them when given (a primitive's attributes all have
    its POSITION's count). Floats (integers too: ``KHR_mesh_quantization``), except ``JOINTS_n``."""
    at = f"{where}.attributes.{name}"
    values = read_accessor(doc, buffers, attributes[name], at, limits.MAX_MESH_VERTICES)
    if not name.startswith("JOINTS_"):  # KHR_mesh_quantization: integer positions, normals, UVs
        values = values.astype(float)
    if values.shape[1] != width or (count is not None and len(values) != count):
        raise ValueError(f"{at}: expected {'v' if count is None else count} x {width} values")
    return values


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` ``(v, 3)`` scaled to unit length (rows shorter than 1e-12 become zeros)."""
    length = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, length, out=np.zeros_like(vectors), where=length > 1e-12)


def triangle_indices(doc: dict[str, Any], buffers: Buffers, prim: dict[str, Any], where: str, count: int) -> np.ndarray:
    """The triangles ``(t, 3)`` int64 of a TRIANGLES primitive of ``count`` vertices: its ``indices``
    (unsigned, three per triangle, each below ``count``; at most ``3 * limits.MAX_MESH_TRIANGLES``), or
    ``0, 1, 2, ...`` without them (``count`` a multiple of 3)."""
    if prim.get("indices") is None:
        if count % 3:
            raise ValueError(f"{where}: {count} vertices without indices are not whole triangles")
        return np.arange(count).reshape(-1, 3)
    at = f"{where}.indices"
    idx = read_accessor(doc, buffers, prim["indices"], at, 3 * limits.MAX_MESH_TRIANGLES)
    if idx.shape[1] != 1 or idx.dtype.kind != "u" or len(idx) % 3:
        raise ValueError(f"{at}: expected unsigned integer indices, three per triangle")
    if idx.size and int(idx.max()) >= count:
        raise ValueError(f"{at}: index {int(idx.max())} beyond the {count} vertices")
    return idx.reshape(-1, 3).astype(np.int64)


def _check_weights(joints: np.ndarray, weights: np.ndarray, size: int, where: str) -> None:
    """Refuse negative weights, sums far from 1 and joints beyond the skin; normalise the rest in place."""
    at = f"{where}.attributes.WEIGHTS_0"
    if np.any(weights < 0):
        v = int(np.argmax(np.any(weights < 0, axis=1)))
        raise ValueError(f"{at}: vertex {v} has a negative weight {weights[v].min():g}")
    total = weights.sum(axis=1)
    bad = np.abs(total - 1.0) > WEIGHT_TOLERANCE
    if bad.any():
        v = int(np.argmax(bad))
        raise ValueError(f"{at}: weights of vertex {v} sum to {total[v]:.3g}, not 1 (tolerance {WEIGHT_TOLERANCE})")
    weights /= total[:, None]
    used = weights > 0
    beyond = used & ((joints >= size) | (joints < 0))
    if beyond.any():
        v = int(np.argmax(beyond.any(axis=1)))
        j = int(joints[v][beyond[v]][0])
        raise ValueError(f"{where}.attributes.JOINTS_0: vertex {v} uses joint {j}; the skin has {size} joints")
    joints[~used] = 0


def _material(
    doc: dict[str, Any],
    buffers: Buffers,
    index: Any,
    where: str,
    seen: tuple[dict[int, tuple[bytes | None, str, int]], list[str]],
) -> tuple[np.ndarray, bytes | None, str, int, bool]:
    """``(base colour (4,), texture bytes or None, MIME type, texCoord set, doubleSided)`` of
    ``materials[index]``; ``seen``: the images checked so far (index -> bytes or None, MIME type) and
    the notes, which say why an image is left out (``fabrik3d.io.gltf_images``)."""
    if index is None:
        return np.ones(4), None, "", 0, False
    materials = _list(doc, "materials")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(materials):
        raise ValueError(
            f"{where}.material: expected an index in [0, {len(materials) - 1}], got {checks.quoted(index)}"
        )
    pbr = materials[index].get("pbrMetallicRoughness", {})
    double = materials[index].get("doubleSided", False) is True
    color = np.array(pbr.get("baseColorFactor", (1.0, 1.0, 1.0, 1.0)), dtype=float)
    if color.shape != (4,) or not np.all(np.isfinite(color)):
        raise ValueError(f"materials[{index}].pbrMetallicRoughness.baseColorFactor: expected 4 finite numbers")
    info = pbr.get("baseColorTexture")
    if not isinstance(info, dict):
        return color, None, "", 0, double
    at = f"materials[{index}].pbrMetallicRoughness.baseColorTexture"
    textures = _list(doc, "textures")
    t = info.get("index")
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(textures):
        raise ValueError(f"{at}.index: expected an index in [0, {len(textures) - 1}], got {checks.quoted(t)}")
    source = textures[t].get("source")
    images = _list(doc, "images")
    if source is None or not isinstance(source, int) or not 0 <= source < len(images):
        return color, None, "", 0, double  # an extension's image (WebP, KTX2): not read
    checked, notes = seen
    if source not in checked:
        image = images[source]
        if image.get("bufferView") is not None:
            data = buffers.view_bytes(image["bufferView"], f"images[{source}].bufferView")
        else:
            data = buffers.uri_bytes(image.get("uri"), f"images[{source}].uri")
        try:
            mime, pixels = image_type(data)
            used = sum(n for _, _, n in checked.values())
            if used + pixels > MAX_TEXTURE_PIXELS_IN_ALL:
                raise ValueError(f"with its {pixels} pixels the textures hold more than {MAX_TEXTURE_PIXELS_IN_ALL}")
            checked[source] = data, mime, pixels
        except ValueError as exc:
            notes.append(f"images[{source}]: {exc}; the texture is left out")
            checked[source] = None, "", 0
    data, mime, _ = checked[source]
    if data is None:
        return color, None, "", 0, double
    coord = info.get("texCoord", 0)
    return color, data, mime, coord if isinstance(coord, int) and not isinstance(coord, bool) else 0, double
