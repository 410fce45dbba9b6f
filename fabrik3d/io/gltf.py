"""glTF 2.0 export of poses and takes, and import of rigged skeletons (standard library + numpy).

Export writes one node per joint, named after it, in the skeleton's hierarchy
(node ``j`` is joint ``j``), each with a translation and a rotation (x, y, z, w)
local to its parent:

* rotation ``inv(W_parent)·W_j`` from the solver's world frames ``W``
  (``SolveResult.rotations``, so twist is kept); each joint's +Y points along
  its bone to its first child;
* translation ``inv(W_parent)·(P_j − P_parent)``: FABRIK moves siblings
  independently, so every joint carries its posed offset.

The rest pose (``skeleton.rest_positions`` with ``skeleton.rest_frames``) is the
bind pose: a skin lists every joint, with inverse bind matrices (the inverses
of the rest world matrices, column-major). A skinned mesh of one tapered,
four-sided bone shape per bone (weighted to the bone's two joints) sits in a node
at the scene root with no transform, so any viewer shows a body.

A take is one animation: LINEAR rotation channels for every joint and
translation channels for the root and for every joint whose offset leaves its
rest value; the nodes hold the rest pose. Key times are stored as float32.

``.glb`` files are binary; ``.gltf`` files are JSON with the buffer embedded as
a base64 data URI (one file, written atomically).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fabrik3d import __version__
from fabrik3d import rotations as rot
from fabrik3d.io import files
from fabrik3d.io.take import Take, check_pose
from fabrik3d.model.skeleton import Skeleton

_FLOAT, _UBYTE, _USHORT = 5126, 5121, 5123
_ARRAY_BUFFER = 34962
_JSON_CHUNK, _BIN_CHUNK = 0x4E4F534A, 0x004E4942
_DATA_URI = "data:application/octet-stream;base64,"
# A joint gets a translation channel when its offset leaves the rest one by more than this fraction of its bone.
_OFFSET_TOLERANCE = 1e-6


# -- export ------------------------------------------------------------------------------------------------------


def pose_glb_bytes(skeleton: Skeleton, result: Any) -> bytes:
    """A ``.glb`` of one pose: ``result`` has ``.positions`` ``(n, 3)`` and ``.rotations`` ``(n, 4)``."""
    return _glb(*_pose_document(skeleton, result))


def animation_glb_bytes(skeleton: Skeleton, frames: Iterable[Any], times: Any) -> bytes:
    """A ``.glb`` of a take: ``SolveResult``s or ``(positions, rotations)`` pairs at ``(m,)`` ``times`` in seconds."""
    return _glb(*_animation_document(Take.from_frames(skeleton, frames, times)))


def export_pose(skeleton: Skeleton, result: Any, path: str | os.PathLike[str]) -> None:
    """Write one pose to a ``.glb`` or ``.gltf`` file, atomically (see ``pose_glb_bytes``)."""
    encode = _encoder(path)
    files.write_atomic(path, encode(*_pose_document(skeleton, result)))


def export_animation(skeleton: Skeleton, frames: Iterable[Any], times: Any, path: str | os.PathLike[str]) -> None:
    """Write a take to a ``.glb`` or ``.gltf`` file, atomically (see ``animation_glb_bytes``).

    Raises:
        ValueError: for bad frames, times that are not strictly increasing once
            stored as float32, a path not ending in ``.glb``/``.gltf`` or one that
            cannot be written.
    """
    encode = _encoder(path)
    files.write_atomic(path, encode(*_animation_document(Take.from_frames(skeleton, frames, times))))


def local_transforms(skeleton: Skeleton, positions: np.ndarray, rotations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Node transforms of poses: ``(..., n, 3)`` positions and ``(..., n, 4)`` world frames -> local ones.

    Returns ``(translations (..., n, 3), rotations (..., n, 4))`` relative to each
    joint's parent (the root's are its world values).
    """
    child = np.array([j for j in range(len(skeleton)) if skeleton.parents[j] >= 0])
    parent = skeleton.parents[child]
    t = np.array(positions, dtype=float)
    q = np.array(rotations, dtype=float)
    r_parent = rot.quat_to_matrix(rotations[..., parent, :])
    t[..., child, :] = np.einsum("...kji,...kj->...ki", r_parent, positions[..., child, :] - positions[..., parent, :])
    qp = rotations[..., parent, :].reshape(-1, 4).tolist()
    qc = rotations[..., child, :].reshape(-1, 4).tolist()
    local = [rot.mul(rot.conj(a), b) for a, b in zip(qp, qc)]
    q[..., child, :] = np.array(local).reshape(q[..., child, :].shape)
    return t, q / np.linalg.norm(q, axis=-1, keepdims=True)


def _pose_document(skeleton: Skeleton, result: Any) -> tuple[dict[str, Any], bytes]:
    if not (hasattr(result, "positions") and hasattr(result, "rotations")):
        raise ValueError(f"result: expected a SolveResult (with positions and rotations), got {type(result).__name__}")
    positions, rotations = check_pose(skeleton, result.positions, result.rotations)
    blob = _Blob()
    return _rig(blob, skeleton, *local_transforms(skeleton, positions, rotations)), blob.data()


def _animation_document(take: Take) -> tuple[dict[str, Any], bytes]:
    skeleton = take.skeleton
    times = take.times.astype(np.float32)
    same = ~(np.diff(times) > 0)
    if same.any():
        k = int(np.argmax(same)) + 1
        raise ValueError(
            f"times[{k}]: {take.times[k]!r} and times[{k - 1}] = {take.times[k - 1]!r} are equal once stored as "
            "float32, as glTF stores key times; space the frames further apart"
        )
    t, q = local_transforms(skeleton, take.positions, take.rotations)
    for k in range(1, len(q)):  # continuous signs on the quaternions written, key to key
        q[k][np.sum(q[k] * q[k - 1], axis=1) < 0] *= -1.0
    t0, q0 = local_transforms(skeleton, skeleton.rest_positions, skeleton.rest_frames)
    blob = _Blob()
    doc = _rig(blob, skeleton, t0, q0)
    key_times = blob.add(times[:, None], "SCALAR", min_max=True)
    samplers: list[dict[str, Any]] = []
    channels: list[dict[str, Any]] = []
    for j in range(len(skeleton)):
        moved = np.abs(t[:, j] - t0[j]).max() > _OFFSET_TOLERANCE * skeleton.bone_lengths[j]
        keys = [("rotation", q[:, j], "VEC4")] + ([("translation", t[:, j], "VEC3")] if moved else [])
        for path, values, kind in keys:
            channels.append({"sampler": len(samplers), "target": {"node": j, "path": path}})
            samplers.append({"input": key_times, "interpolation": "LINEAR", "output": blob.add(values, kind)})
    doc["animations"] = [{"name": "take", "channels": channels, "samplers": samplers}]
    return doc, blob.data()


def _rig(blob: _Blob, skeleton: Skeleton, t: np.ndarray, q: np.ndarray) -> dict[str, Any]:
    """The document's nodes, skin, mesh and scene; joint ``j`` is node ``j``, the mesh node is node ``n``."""
    n = len(skeleton)
    taken = set(skeleton.names)
    nodes: list[dict[str, Any]] = []
    for j, name in enumerate(skeleton.names):
        node: dict[str, Any] = {"name": name, "translation": t[j].tolist(), "rotation": q[j].tolist()}
        if skeleton.children(j):
            node["children"] = list(skeleton.children(j))
        nodes.append(node)
    nodes.append({"name": _free_name("fabrik3d_body", taken), "mesh": 0, "skin": 0})
    rest = np.zeros((n, 4, 4))
    rest[:, :3, :3] = rot.quat_to_matrix(skeleton.rest_frames)
    rest[:, :3, 3] = skeleton.rest_positions
    rest[:, 3, 3] = 1.0
    inverse_bind = np.linalg.inv(rest)
    inverse_bind[:, 3] = (0.0, 0.0, 0.0, 1.0)
    position, normal, joints, weights = _bone_mesh(skeleton)
    attributes = {
        "POSITION": blob.add(position, "VEC3", min_max=True, target=_ARRAY_BUFFER),
        "NORMAL": blob.add(normal, "VEC3", target=_ARRAY_BUFFER),
        "JOINTS_0": blob.add(joints, "VEC4", target=_ARRAY_BUFFER),
        "WEIGHTS_0": blob.add(weights, "VEC4", target=_ARRAY_BUFFER),
    }
    return {
        "asset": {"version": "2.0", "generator": f"fabrik3d {__version__}"},
        "scene": 0,
        "scenes": [{"name": _free_name("fabrik3d", taken), "nodes": [skeleton.root, n]}],
        "nodes": nodes,
        "skins": [
            {
                "name": _free_name("fabrik3d_skin", taken),
                "joints": list(range(n)),
                "skeleton": skeleton.root,
                "inverseBindMatrices": blob.add(inverse_bind.transpose(0, 2, 1).reshape(n, 16), "MAT4"),
            }
        ],
        "meshes": [{"name": _free_name("fabrik3d_bones", taken), "primitives": [{"attributes": attributes}]}],
        "accessors": blob.accessors,
        "bufferViews": blob.views,
    }


def _bone_mesh(skeleton: Skeleton) -> tuple[np.ndarray, ...]:
    """Flat-shaded bone shapes in the rest pose.

    Each bone is eight triangles: a square ring at a fifth of its length, joined to
    its base (weighted to the parent) and to its tip (weighted to the joint). The
    ring follows the parent when the joint is its first child (the parent's +Y runs
    along the bone), else it blends 3:1 between the two.

    Returns ``(position (v, 3), normal (v, 3), joints (v, 4), weights (v, 4))``.
    """
    n = len(skeleton)
    rest = skeleton.rest_positions
    out_p, out_j, out_w = [], [], []
    for j in range(n):
        p = int(skeleton.parents[j])
        if p < 0:
            continue
        a, b = rest[p], rest[j]
        length = skeleton.bone_lengths[j]
        d = (b - a) / length
        s = rot.swing((0.0, 1.0, 0.0), tuple(d.tolist()), (1.0, 0.0, 0.0))
        u, w = np.array(rot.rotate(s, (1.0, 0.0, 0.0))), np.array(rot.rotate(s, (0.0, 0.0, 1.0)))
        c = a + 0.2 * length * d
        r = 0.1 * length
        ring = [c + r * u, c + r * w, c - r * u, c - r * w]
        ring_w = ((p, 0), (1.0, 0.0)) if skeleton.first_child(p) == j else ((p, j), (0.75, 0.25))
        for k in range(4):
            for apex, apex_joint in ((a, p), (b, j)):
                tri = [apex, ring[k], ring[(k + 1) % 4]]
                if np.dot(np.cross(tri[1] - apex, tri[2] - apex), sum(tri) / 3.0 - c) < 0:
                    tri = [apex, tri[2], tri[1]]  # counter-clockwise seen from outside
                out_p += tri
                for v in range(3):
                    joint, weight = ((apex_joint, 0), (1.0, 0.0)) if tri[v] is apex else ring_w
                    out_j.append((*joint, 0, 0))
                    out_w.append((*weight, 0.0, 0.0))
    position = np.array(out_p, dtype=np.float32)
    tri = position.reshape(-1, 3, 3).astype(float)
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    joint_type = np.uint8 if n <= 256 else np.uint16
    return position, np.repeat(normal, 3, axis=0), np.array(out_j, joint_type), np.array(out_w, np.float32)


class _Blob:
    """The binary buffer being built: 4-byte aligned buffer views, one accessor each."""

    _COMPONENT: ClassVar[dict[np.dtype, int]] = {
        np.dtype(np.float32): _FLOAT,
        np.dtype(np.uint8): _UBYTE,
        np.dtype(np.uint16): _USHORT,
    }

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.views: list[dict[str, Any]] = []
        self.accessors: list[dict[str, Any]] = []

    def add(self, values: np.ndarray, kind: str, *, min_max: bool = False, target: int | None = None) -> int:
        """Append ``(count, components)`` values (float64 is stored as float32); returns the accessor index."""
        if values.dtype == np.float64:
            values = values.astype(np.float32)
        raw = np.ascontiguousarray(values).astype(values.dtype.newbyteorder("<")).tobytes()
        view: dict[str, Any] = {"buffer": 0, "byteOffset": self.size, "byteLength": len(raw)}
        if target is not None:
            view["target"] = target
        raw += b"\0" * (-len(raw) % 4)
        self.parts.append(raw)
        self.size += len(raw)
        accessor: dict[str, Any] = {
            "bufferView": len(self.views),
            "componentType": self._COMPONENT[values.dtype],
            "count": len(values),
            "type": kind,
        }
        if min_max:  # from the stored values, as the validator requires
            accessor["min"] = values.min(axis=0).tolist()
            accessor["max"] = values.max(axis=0).tolist()
        self.views.append(view)
        self.accessors.append(accessor)
        return len(self.accessors) - 1

    def data(self) -> bytes:
        return b"".join(self.parts)


def _free_name(base: str, taken: set[str]) -> str:
    """``base`` or ``base_2``, ``base_3``, ... : the first not in ``taken`` (which it joins)."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _json(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, allow_nan=False, separators=(",", ":")).encode()


def _glb(doc: dict[str, Any], blob: bytes) -> bytes:
    doc = {**doc, "buffers": [{"byteLength": len(blob)}]}
    text = _json(doc)
    text += b" " * (-len(text) % 4)
    total = 12 + 8 + len(text) + 8 + len(blob)
    return b"".join(
        [
            struct.pack("<4sII", b"glTF", 2, total),
            struct.pack("<II", len(text), _JSON_CHUNK),
            text,
            struct.pack("<II", len(blob), _BIN_CHUNK),
            blob,
        ]
    )


def _gltf(doc: dict[str, Any], blob: bytes) -> bytes:
    uri = _DATA_URI + base64.b64encode(blob).decode("ascii")
    return _json({**doc, "buffers": [{"byteLength": len(blob), "uri": uri}]}) + b"\n"


def _encoder(path: str | os.PathLike[str]) -> Any:
    suffix = Path(path).suffix.lower()
    if suffix not in (".glb", ".gltf"):
        raise ValueError(f"{path}: expected a file name ending in .glb or .gltf")
    return _glb if suffix == ".glb" else _gltf


# -- import ------------------------------------------------------------------------------------------------------


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
    try:
        doc, bin_chunk = _parse_container(data)
        names, parents, joint_nodes, node_parent = _skin_joints(doc)
        skin = doc["skins"][0]
        if skin.get("inverseBindMatrices") is None:
            rest = np.array([_world_matrix(doc, node_parent, k)[:3, 3] for k in joint_nodes])
        else:
            rest = _bind_positions(doc, skin["inverseBindMatrices"], len(names), bin_chunk, base_dir)
        return Skeleton(names, parents, rest)
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
        if not chunks or chunks[0][0] != _JSON_CHUNK:
            raise ValueError("damaged GLB: the first chunk is not JSON")
        text = chunks[0][1]
        bin_chunk = next((c for kind, c in chunks[1:] if kind == _BIN_CHUNK), None)
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
        raise ValueError(f"asset.version: expected a glTF 2.x version, got {version!r}")
    return doc, bin_chunk


def _list(doc: dict[str, Any], key: str) -> list[Any]:
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{key}: expected a list")
    return value


def _index(value: Any, count: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
        raise ValueError(f"{where}: expected an index in [0, {count - 1}], got {value!r}")
    return value


def _skin_joints(doc: dict[str, Any]) -> tuple[list[str], list[int], list[int], list[int]]:
    """``(names, parents, joint node indices, parent node of every node)`` of the first skin."""
    skins = _list(doc, "skins")
    if not skins:
        raise ValueError("no skin: the file has no rigged skeleton (skins is missing or empty)")
    nodes = _list(doc, "nodes")
    node_parent = [-1] * len(nodes)
    for i, node in enumerate(nodes):
        for c in node.get("children", []):
            c = _index(c, len(nodes), f"nodes[{i}].children")
            if node_parent[c] >= 0 or c == i:
                raise ValueError(f"nodes[{c}]: has several parents (the nodes do not form trees)")
            node_parent[c] = i
    joints = skins[0].get("joints")
    if not isinstance(joints, list) or len(joints) < 2:
        raise ValueError("skins[0].joints: expected a list of at least two node indices")
    joints = [_index(k, len(nodes), f"skins[0].joints[{m}]") for m, k in enumerate(joints)]
    slot = {k: m for m, k in enumerate(joints)}
    if len(slot) != len(joints):
        raise ValueError("skins[0].joints: a node is listed twice")
    names: list[str] = []
    taken: set[str] = set()
    parents: list[int] = []
    for k in joints:
        name = nodes[k].get("name")
        names.append(_free_name(name if isinstance(name, str) and name else f"node_{k}", taken))
        a, steps = node_parent[k], 0
        while a >= 0 and a not in slot:
            a, steps = node_parent[a], steps + 1
            if steps > len(nodes):
                raise ValueError(f"nodes[{k}]: its ancestors form a cycle")
        parents.append(slot[a] if a >= 0 else -1)
    roots = [names[m] for m, p in enumerate(parents) if p < 0]
    if len(roots) != 1:
        found = ", ".join(map(repr, roots)) if roots else "none (their parents form a cycle)"
        raise ValueError(f"skins[0].joints: the joints do not form one tree; roots: {found}")
    return names, parents, joints, node_parent


def _world_matrix(doc: dict[str, Any], node_parent: list[int], k: int) -> np.ndarray:
    """The ``(4, 4)`` world matrix of node ``k`` from the nodes' matrices or TRS."""
    nodes = doc["nodes"]
    m = np.eye(4)
    for _ in range(len(nodes) + 1):  # the walk up is bounded: node parents were checked
        if k < 0:
            break
        node = nodes[k]
        local = np.eye(4)
        if "matrix" in node:
            local = np.array(node["matrix"], dtype=float).reshape(4, 4).T
        else:
            q = np.array(node.get("rotation", (0.0, 0.0, 0.0, 1.0)), dtype=float)
            local[:3, :3] = rot.quat_to_matrix(q / np.linalg.norm(q)) * np.array(node.get("scale", (1.0, 1.0, 1.0)))
            local[:3, 3] = node.get("translation", (0.0, 0.0, 0.0))
        m = local @ m
        k = node_parent[k]
    if not np.all(np.isfinite(m)):
        raise ValueError("nodes: a joint's transform is not finite")
    return m


def _bind_positions(doc: dict[str, Any], index: Any, count: int, bin_chunk: bytes | None, base_dir: Any) -> np.ndarray:
    """Joint positions of the bind pose from the inverse bind matrices accessor: ``(count, 3)``."""
    accessors = _list(doc, "accessors")
    where = f"accessors[{_index(index, len(accessors), 'skins[0].inverseBindMatrices')}]"
    acc = accessors[index]
    if acc.get("componentType") != _FLOAT or acc.get("type") != "MAT4" or "sparse" in acc:
        raise ValueError(f"{where}: inverse bind matrices must be a dense FLOAT MAT4 accessor")
    if not isinstance(acc.get("count"), int) or acc["count"] < count:
        raise ValueError(f"{where}: expected {count} inverse bind matrices, got {acc.get('count')!r}")
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
        try:
            data = files.read_bytes(Path(base_dir) / urllib.parse.unquote(uri))
        except ValueError as exc:
            raise ValueError(f"{where}: missing buffer ({exc})") from None
    if len(data) < buf.get("byteLength", 0):
        raise ValueError(f"{where}: {len(data)} bytes, fewer than its byteLength {buf['byteLength']}")
    return data
