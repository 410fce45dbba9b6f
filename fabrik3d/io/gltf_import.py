"""glTF 2.0 import of rigged skeletons (standard library + numpy): ``import_skeleton`` and
``skeleton_from_bytes`` (``fabrik3d.io.gltf`` re-exports both; docs/gltf.md).

A skin's joints become the skeleton (rest = the bind pose); ``.glb`` and ``.gltf`` files are read,
with buffers embedded as data URIs or in files beside the document.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import struct
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.io import files
from fabrik3d.io.gltf_format import BIN_CHUNK, FLOAT, JSON_CHUNK, unique_names
from fabrik3d.model.skeleton import Skeleton

T = TypeVar("T")


def import_skeleton(path: str | os.PathLike[str]) -> Skeleton:
    """The skeleton of the first skin of a ``.glb``/``.gltf`` file (see ``skeleton_from_bytes``).

    Buffers may be in the GLB, in base64 data URIs or in files beside a ``.gltf``.
    """
    p = Path(path)
    return skeleton_from_bytes(files.read_bytes(p), str(p), base_dir=p.parent)


def skeleton_from_bytes(data: bytes, source: str = "glTF", base_dir: str | os.PathLike[str] | None = None) -> Skeleton:
    """The skeleton of the first skin of glTF 2.0 content (GLB or JSON).

    Joints are the skin's joints, in its order, named after their nodes (an
    unnamed node ``k`` is ``node_k``; repeats of a name get ``_2``, ``_3``, ...); a
    joint's parent is its nearest ancestor node that is also a joint; rest
    positions come from the bind pose (the inverses of the inverse bind matrices,
    or the nodes' world transforms when the skin has none), in the skin's units.

    Raises:
        ValueError: prefixed with ``source``, for content that is not glTF 2.0, a
            truncated GLB, no skin, joints that do not form one tree, missing or
            short buffers, or a skeleton that ``Skeleton`` refuses.
    """

    def read() -> Skeleton:
        doc, bin_chunk = _parse_container(data)
        names, parents, joint_nodes, node_parent = _skin_joints(doc)
        skin = doc["skins"][0]
        if skin.get("inverseBindMatrices") is None:
            world = _world_matrices(doc, node_parent, joint_nodes)
            rest = np.array([world[k][:3, 3] for k in joint_nodes])
        else:
            rest = _bind_positions(doc, skin["inverseBindMatrices"], len(names), bin_chunk, base_dir)
        return Skeleton(names, parents, rest)

    return read_named(source, read)


def read_named(source: str, read: Callable[[], T]) -> T:
    """``read()`` (a reader of glTF content), its ``ValueError`` prefixed with ``source``; the errors
    that malformed JSON raises on the way (a missing key, a string where an object belongs) become
    one-line ``ValueError``s too: ``hero.glb: not a valid glTF 2.0 file (KeyError: 'buffers')``."""
    try:
        return read()
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    except (KeyError, IndexError, TypeError, AttributeError, struct.error, OverflowError) as exc:
        raise ValueError(f"{source}: not a valid glTF 2.0 file ({type(exc).__name__}: {exc})") from None


def _parse_container(data: bytes) -> tuple[dict[str, Any], bytes | None]:
    """The JSON document and the GLB binary chunk (``None`` for JSON content)."""
    bin_chunk = None
    text = data
    if data[:4] == b"glTF":
        if len(data) < 20:
            raise ValueError(f"truncated GLB: {len(data)} bytes, too short for a header and a chunk")
        _, version, length = struct.unpack_from("<4sII", data)
        if version != 2:
            raise ValueError(f"GLB version {version}, expected 2")
        if length != len(data):
            raise ValueError(f"truncated or damaged GLB: the header says {length} bytes, the file has {len(data)}")
        chunks, offset = [], 12
        while offset + 8 <= length:
            size, kind = struct.unpack_from("<II", data, offset)
            if offset + 8 + size > length:
                raise ValueError(f"truncated GLB: the chunk at byte {offset} runs past the end of the file")
            chunks.append((kind, data[offset + 8 : offset + 8 + size]))
            offset += 8 + size
        if not chunks or chunks[0][0] != JSON_CHUNK:
            raise ValueError("damaged GLB: the first chunk is not JSON")
        text = chunks[0][1]
        bin_chunk = next((c for kind, c in chunks[1:] if kind == BIN_CHUNK), None)
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"neither a GLB nor glTF JSON ({exc})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise ValueError("not a glTF document (expected a JSON object)")
    version = doc.get("asset", {}).get("version") if isinstance(doc.get("asset"), dict) else None
    if not (isinstance(version, str) and version.startswith("2.")):
        raise ValueError(f"asset.version: expected a glTF 2.x version, got {checks.quoted(version)}")
    return doc, bin_chunk


def _list(doc: dict[str, Any], key: str) -> list[Any]:
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{key}: expected a list")
    return value


def _index(value: Any, count: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
        raise ValueError(f"{where}: expected an index in [0, {count - 1}], got {checks.quoted(value)}")
    return value


def joint_parents(node_parent: list[int], slot: dict[int, int], keys: list[int]) -> list[int]:
    """For each node of ``keys``, the slot (``slot``: node index -> joint index) of its nearest ancestor
    that is a joint, or -1; ``ValueError`` if its ancestors form a cycle. Linear in the nodes: each
    helper node between joints is walked once (its answer is remembered)."""
    above: dict[int, int] = {}  # helper node -> the slot of its nearest joint at or above it
    out = []
    for k in keys:
        a, path = node_parent[k], []
        while a >= 0 and a not in slot and a not in above:
            path.append(a)
            a = node_parent[a]
            if len(path) > len(node_parent):
                raise ValueError(f"nodes[{k}]: its ancestors form a cycle")
        found = -1 if a < 0 else slot[a] if a in slot else above[a]
        above.update(dict.fromkeys(path, found))
        out.append(found)
    return out


def node_parents(doc: dict[str, Any]) -> list[int]:
    """The parent node index of every node of ``doc`` (``-1`` for a root); ``ValueError`` naming the node
    for a child index out of range or a node listed as the child of several nodes (or of itself)."""
    nodes = _list(doc, "nodes")
    node_parent = [-1] * len(nodes)
    for i, node in enumerate(nodes):
        for c in node.get("children", []):
            c = _index(c, len(nodes), f"nodes[{i}].children")
            if node_parent[c] >= 0 or c == i:
                raise ValueError(f"nodes[{c}]: has several parents (the nodes do not form trees)")
            node_parent[c] = i
    return node_parent


def _skin_joints(doc: dict[str, Any]) -> tuple[list[str], list[int], list[int], list[int]]:
    """``(names, parents, joint node indices, parent node of every node)`` of the first skin."""
    skins = _list(doc, "skins")
    if not skins:
        raise ValueError("no skin: the file has no rigged skeleton (skins is missing or empty)")
    nodes = _list(doc, "nodes")
    node_parent = node_parents(doc)
    joints = skins[0].get("joints")
    if not isinstance(joints, list) or len(joints) < 2:
        raise ValueError("skins[0].joints: expected a list of at least two node indices")
    joints = [_index(k, len(nodes), f"skins[0].joints[{m}]") for m, k in enumerate(joints)]
    slot = {k: m for m, k in enumerate(joints)}
    if len(slot) != len(joints):
        raise ValueError("skins[0].joints: a node is listed twice")
    given = [nodes[k].get("name") for k in joints]
    names = unique_names(n if isinstance(n, str) and n else f"node_{k}" for n, k in zip(given, joints))
    parents = joint_parents(node_parent, slot, joints)
    roots = [names[m] for m, p in enumerate(parents) if p < 0]
    if len(roots) != 1:
        found = checks.names_list(roots, quote=True) if roots else "none (their parents form a cycle)"
        raise ValueError(f"skins[0].joints: the joints do not form one tree; roots: {found}")
    return names, parents, joints, node_parent


def _world_matrices(doc: dict[str, Any], node_parent: list[int], keys: list[int]) -> dict[int, np.ndarray]:
    """The ``(4, 4)`` world matrices of nodes ``keys`` (and their ancestors) from the nodes' matrices
    or TRS: each node's is its parent's times its own, worked out once (linear in the nodes)."""
    nodes = doc["nodes"]
    world: dict[int, np.ndarray] = {}
    for k in keys:
        path = []
        while k >= 0 and k not in world and len(path) <= len(nodes):  # bounded: parents were checked
            path.append(k)
            k = node_parent[k]
        m = world[k] if k >= 0 else np.eye(4)
        for j in reversed(path):
            m = world[j] = m @ _local_matrix(nodes[j])  # (ValueError: the caller names the file)
            if not np.all(np.isfinite(m)):
                raise ValueError("nodes: a joint's transform is not finite")
    return world


def _local_matrix(node: dict[str, Any]) -> np.ndarray:
    """A node's ``(4, 4)`` local matrix from its ``matrix`` (column-major) or its TRS."""
    if "matrix" in node:
        return np.array(node["matrix"], dtype=float).reshape(4, 4).T
    local = np.eye(4)
    q = np.array(node.get("rotation", (0.0, 0.0, 0.0, 1.0)), dtype=float)
    big = float(np.abs(q).max()) if q.shape == (4,) else math.nan
    if not 0.0 < big < math.inf:  # (a zero quaternion has no direction: no division by 0 or overflow below)
        raise ValueError(
            f"rotation: expected a non-zero quaternion of four finite numbers, got {checks.quoted(q.tolist())}"
        )
    q = q / big
    local[:3, :3] = rot.quat_to_matrix(q / np.linalg.norm(q)) * np.array(node.get("scale", (1.0, 1.0, 1.0)))
    local[:3, 3] = node.get("translation", (0.0, 0.0, 0.0))
    return local


def _bind_positions(doc: dict[str, Any], index: Any, count: int, bin_chunk: bytes | None, base_dir: Any) -> np.ndarray:
    """Joint positions of the bind pose from the inverse bind matrices accessor: ``(count, 3)``."""
    accessors = _list(doc, "accessors")
    where = f"accessors[{_index(index, len(accessors), 'skins[0].inverseBindMatrices')}]"
    acc = accessors[index]
    if acc.get("componentType") != FLOAT or acc.get("type") != "MAT4" or "sparse" in acc:
        raise ValueError(f"{where}: inverse bind matrices must be a dense FLOAT MAT4 accessor")
    if not isinstance(acc.get("count"), int) or acc["count"] < count:
        raise ValueError(f"{where}: expected {count} inverse bind matrices, got {checks.quoted(acc.get('count'))}")
    views = _list(doc, "bufferViews")
    view_index = _index(acc.get("bufferView"), len(views), f"{where}.bufferView")
    view = views[view_index]
    buffer = _buffer(
        doc, _index(view.get("buffer"), len(_list(doc, "buffers")), "bufferView.buffer"), bin_chunk, base_dir
    )
    start, size, stride = view.get("byteOffset", 0), view["byteLength"], view.get("byteStride") or 64
    if start + size > len(buffer):
        raise ValueError(f"bufferViews[{view_index}]: runs past the end of its buffer ({start + size} > {len(buffer)})")
    offset = acc.get("byteOffset", 0)
    if stride < 64 or offset + stride * (count - 1) + 64 > size:
        raise ValueError(f"{where}: runs past the end of bufferViews[{view_index}]")
    flat = np.ndarray((count, 16), dtype="<f4", buffer=buffer, offset=start + offset, strides=(stride, 4))
    matrices = flat.astype(float).reshape(count, 4, 4).transpose(0, 2, 1)
    if not np.all(np.isfinite(matrices)):
        raise ValueError(f"{where}: inverse bind matrices are not finite")
    det = np.linalg.det(matrices[:, :3, :3])
    if not np.all(np.abs(det) > 1e-12):
        raise ValueError(f"{where}[{int(np.argmin(np.abs(det)))}]: inverse bind matrix is singular")
    return np.linalg.inv(matrices)[:, :3, 3]


def _buffer(doc: dict[str, Any], index: int, bin_chunk: bytes | None, base_dir: Any) -> bytes:
    """The bytes of ``buffers[index]``: the GLB chunk, a base64 data URI or a file beside the ``.gltf``."""
    where = f"buffers[{index}]"
    buf = doc["buffers"][index]
    uri = buf.get("uri")
    if uri is None:
        if bin_chunk is None:
            raise ValueError(f"{where}: missing buffer (no uri and no GLB binary chunk)")
        data = bin_chunk
    elif not isinstance(uri, str):
        raise ValueError(f"{where}.uri: expected a string")
    elif uri.startswith("data:"):
        header, _, payload = uri.partition(",")
        if not header.endswith(";base64"):
            raise ValueError(f"{where}: only base64 data URIs are supported")
        try:
            data = base64.b64decode(payload, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"{where}: damaged base64 data ({exc})") from None
    elif base_dir is None:
        raise ValueError(f"{where}: missing buffer: it is the external file {uri!r}, not part of this content")
    else:
        path = _beside(base_dir, uri, f"{where}.uri")
        try:
            data = files.read_bytes(path)
        except ValueError as exc:
            raise ValueError(f"{where}: missing buffer ({exc})") from None
    if len(data) < buf.get("byteLength", 0):
        raise ValueError(f"{where}: {len(data)} bytes, fewer than its byteLength {buf['byteLength']}")
    return data


def _beside(base_dir: str | os.PathLike[str], uri: str, where: str) -> Path:
    """The file that a relative ``uri`` names in the glTF file's folder ``base_dir``.

    Only relative paths that resolve inside that folder are taken: a URI is percent-decoded first,
    then refused when it is absolute, has a scheme or a drive, a backslash, a ``..`` part or a NUL,
    or when the path, symlinks resolved, leads out of the folder. Nothing outside is opened, so the
    error tells nothing about what is there.
    """
    allowed = "data: URIs and relative paths inside the file's folder are read"
    return files.inside(base_dir, urllib.parse.unquote(uri), where, allowed, shown=uri)
