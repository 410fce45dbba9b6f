"""glTF 2.0 export of poses and takes (standard library + numpy); the import of rigged skeletons is in
``fabrik3d.io.gltf_import``, re-exported here (one public path for both).

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
import json
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fabrik3d import __version__
from fabrik3d import rotations as rot
from fabrik3d.io import files
from fabrik3d.io.gltf_format import (
    ARRAY_BUFFER,
    BIN_CHUNK,
    DATA_URI,
    ELEMENT_ARRAY_BUFFER,
    FLOAT,
    JSON_CHUNK,
    MAX_SKIN_JOINTS,
    UBYTE,
    UINT,
    USHORT,
    free_name,
)
from fabrik3d.io.gltf_import import import_skeleton, skeleton_from_bytes
from fabrik3d.io.take import Take, check_pose
from fabrik3d.model.mannequin import mannequin_mesh
from fabrik3d.model.skeleton import Skeleton

__all__ = [
    "animation_glb_bytes",
    "export_animation",
    "export_pose",
    "import_skeleton",
    "local_transforms",
    "pose_glb_bytes",
    "skeleton_from_bytes",
]

# A joint gets a translation channel when its offset leaves the rest one by more than this fraction of its bone.
_OFFSET_TOLERANCE = 1e-6


# -- export ------------------------------------------------------------------------------------------------------


def pose_glb_bytes(skeleton: Skeleton, result: Any, mannequin: bool = False) -> bytes:
    """A ``.glb`` of one pose: ``result`` has ``.positions`` ``(n, 3)`` and ``.rotations`` ``(n, 4)``; the
    skinned mesh is the bones' sticks, or with ``mannequin`` a body (``fabrik3d.model.mannequin``)."""
    return _glb(*_pose_document(skeleton, result, mannequin))


def animation_glb_bytes(skeleton: Skeleton, frames: Iterable[Any], times: Any, mannequin: bool = False) -> bytes:
    """A ``.glb`` of a take: ``SolveResult``s or ``(positions, rotations)`` pairs at ``(m,)`` ``times`` in seconds;
    the skinned mesh the bones move is their sticks, or with ``mannequin`` the mannequin's body (``pose_glb_bytes``)."""
    return _glb(*_animation_document(Take.from_frames(skeleton, frames, times), mannequin))


def export_pose(skeleton: Skeleton, result: Any, path: str | os.PathLike[str], mannequin: bool = False) -> None:
    """Write one pose to a ``.glb`` or ``.gltf`` file, atomically (see ``pose_glb_bytes``)."""
    encode = _encoder(path)
    files.write_atomic(path, encode(*_pose_document(skeleton, result, mannequin)))


def export_animation(
    skeleton: Skeleton, frames: Iterable[Any], times: Any, path: str | os.PathLike[str], mannequin: bool = False
) -> None:
    """Write a take to a ``.glb`` or ``.gltf`` file, atomically (see ``animation_glb_bytes``).

    Raises:
        ValueError: for bad frames, times that are not strictly increasing once
            stored as float32, a path not ending in ``.glb``/``.gltf`` or one that
            cannot be written.
    """
    encode = _encoder(path)
    files.write_atomic(path, encode(*_animation_document(Take.from_frames(skeleton, frames, times), mannequin)))


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
    qp = np.moveaxis(np.asarray(rotations, dtype=float)[..., parent, :], -1, 0)  # (rot's formulas on arrays)
    qc = np.moveaxis(np.asarray(rotations, dtype=float)[..., child, :], -1, 0)
    q[..., child, :] = np.stack(rot.mul(rot.conj(qp), qc), axis=-1)  # type: ignore[arg-type]
    return t, q / np.linalg.norm(q, axis=-1, keepdims=True)


def _pose_document(skeleton: Skeleton, result: Any, mannequin: bool = False) -> tuple[dict[str, Any], bytes]:
    if not (hasattr(result, "positions") and hasattr(result, "rotations")):
        raise ValueError(f"result: expected a SolveResult (with positions and rotations), got {type(result).__name__}")
    positions, rotations = check_pose(skeleton, result.positions, result.rotations)
    blob = _Blob()
    return _rig(blob, skeleton, *local_transforms(skeleton, positions, rotations), mannequin), blob.data()


def _animation_document(take: Take, mannequin: bool = False) -> tuple[dict[str, Any], bytes]:
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
    doc = _rig(blob, skeleton, t0, q0, mannequin)
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


def _rig(blob: _Blob, skeleton: Skeleton, t: np.ndarray, q: np.ndarray, mannequin: bool = False) -> dict[str, Any]:
    """The document's nodes, skin, mesh (the sticks, or the mannequin's body) and scene; joint ``j`` is
    node ``j``, the mesh node is node ``n``."""
    n = len(skeleton)
    if n > MAX_SKIN_JOINTS:
        raise ValueError(
            f"skeleton: {n} joints; a glTF skinned mesh indexes at most {MAX_SKIN_JOINTS} (JOINTS_0: unsigned short)"
        )
    taken = set(skeleton.names)
    nodes: list[dict[str, Any]] = []
    for j, name in enumerate(skeleton.names):
        node: dict[str, Any] = {"name": name, "translation": t[j].tolist(), "rotation": q[j].tolist()}
        if skeleton.children(j):
            node["children"] = list(skeleton.children(j))
        nodes.append(node)
    nodes.append({"name": free_name("fabrik3d_body", taken), "mesh": 0, "skin": 0})
    rest = np.zeros((n, 4, 4))
    rest[:, :3, :3] = rot.quat_to_matrix(skeleton.rest_frames)
    rest[:, :3, 3] = skeleton.rest_positions
    rest[:, 3, 3] = 1.0
    inverse_bind = np.linalg.inv(rest)
    inverse_bind[:, 3] = (0.0, 0.0, 0.0, 1.0)
    primitive, material = _body(blob, skeleton) if mannequin else (_sticks(blob, skeleton), None)
    return {
        "asset": {"version": "2.0", "generator": f"fabrik3d {__version__}"},
        "scene": 0,
        "scenes": [{"name": free_name("fabrik3d", taken), "nodes": [skeleton.root, n]}],
        "nodes": nodes,
        "skins": [
            {
                "name": free_name("fabrik3d_skin", taken),
                "joints": list(range(n)),
                "skeleton": skeleton.root,
                "inverseBindMatrices": blob.add(inverse_bind.transpose(0, 2, 1).reshape(n, 16), "MAT4"),
            }
        ],
        "meshes": [{"name": free_name("fabrik3d_body" if mannequin else "fabrik3d_bones", taken),
                    "primitives": [primitive]}],
        **({"materials": [material]} if material else {}),
        "accessors": blob.accessors,
        "bufferViews": blob.views,
    }  # fmt: skip


def _sticks(blob: _Blob, skeleton: Skeleton) -> dict[str, Any]:
    """The primitive of the bones' sticks (``_bone_mesh``)."""
    position, normal, joints, weights = _bone_mesh(skeleton)
    return {
        "attributes": {
            "POSITION": blob.add(position, "VEC3", min_max=True, target=ARRAY_BUFFER),
            "NORMAL": blob.add(normal, "VEC3", target=ARRAY_BUFFER),
            "JOINTS_0": blob.add(joints, "VEC4", target=ARRAY_BUFFER),
            "WEIGHTS_0": blob.add(weights, "VEC4", target=ARRAY_BUFFER),
        }
    }


def _body(blob: _Blob, skeleton: Skeleton) -> tuple[dict[str, Any], dict[str, Any]]:
    """The primitive of the mannequin's body (``fabrik3d.model.mannequin``, indexed) and its material."""
    position, normal, joint, _, triangles = mannequin_mesh(skeleton)
    joints = np.zeros((len(joint), 4), np.uint8 if len(skeleton) <= 256 else np.uint16)
    joints[:, 0] = joint
    weights = np.zeros((len(joint), 4), np.float32)
    weights[:, 0] = 1.0
    index_type = np.uint16 if len(position) <= 65535 else np.uint32
    primitive = {
        "attributes": {
            "POSITION": blob.add(position, "VEC3", min_max=True, target=ARRAY_BUFFER),
            "NORMAL": blob.add(normal, "VEC3", target=ARRAY_BUFFER),
            "JOINTS_0": blob.add(joints, "VEC4", target=ARRAY_BUFFER),
            "WEIGHTS_0": blob.add(weights, "VEC4", target=ARRAY_BUFFER),
        },
        "indices": blob.add(triangles.reshape(-1, 1).astype(index_type), "SCALAR", target=ELEMENT_ARRAY_BUFFER),
        "material": 0,
    }
    wood = {"name": "mannequin wood", "pbrMetallicRoughness": {"baseColorFactor": [0.78, 0.6, 0.4, 1.0],
            "metallicFactor": 0.0, "roughnessFactor": 0.7}}  # fmt: skip
    return primitive, wood


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
        np.dtype(np.float32): FLOAT,
        np.dtype(np.uint8): UBYTE,
        np.dtype(np.uint16): USHORT,
        np.dtype(np.uint32): UINT,
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

    def append(self, raw: bytes) -> int:
        """Append raw bytes (another document's buffer, an image), 4-byte aligned; returns their byte offset."""
        at = self.size
        self.parts.append(raw + b"\0" * (-len(raw) % 4))
        self.size += len(self.parts[-1])
        return at

    def data(self) -> bytes:
        return b"".join(self.parts)


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
            struct.pack("<II", len(text), JSON_CHUNK),
            text,
            struct.pack("<II", len(blob), BIN_CHUNK),
            blob,
        ]
    )


def _gltf(doc: dict[str, Any], blob: bytes) -> bytes:
    uri = DATA_URI + base64.b64encode(blob).decode("ascii")
    return _json({**doc, "buffers": [{"byteLength": len(blob), "uri": uri}]}) + b"\n"


def _encoder(path: str | os.PathLike[str]) -> Any:
    suffix = Path(path).suffix.lower()
    if suffix not in (".glb", ".gltf"):
        raise ValueError(f"{path}: expected a file name ending in .glb or .gltf")
    return _glb if suffix == ".glb" else _gltf
