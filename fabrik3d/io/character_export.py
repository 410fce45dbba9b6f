"""A pose and a take written into a copy of a character's own glTF document (``fabrik3d.io.character``;
docs/character.md).

The bones' nodes get the pose's local rotations and translations (their scale is kept; a node stored as
a ``matrix`` becomes translation, rotation, scale); a take becomes a new animation (LINEAR keys, its
data in new accessors and buffer views), the file's own animations kept. Everything else of the
document is left as it was: meshes, materials, textures, images, skins, cameras, extensions, extras.

A ``.glb`` is written as a ``.glb`` (the new data appended to its binary chunk), atomically; a ``.gltf``
as a ``.gltf``: when its buffers are files, the new data goes to a new ``.bin`` beside it (and the original
buffers and images are copied beside it when it is written to another folder), each named after the
output and its bytes so that nothing else is overwritten, the whole export atomic
(``fabrik3d.io.character_files``); else into a new embedded buffer.
"""

from __future__ import annotations

import base64
import copy
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

from fabrik3d.io import files
from fabrik3d.io.character import Character
from fabrik3d.io.character_files import write_gltf
from fabrik3d.io.character_rig import pose_arrays
from fabrik3d.io.gltf import _Blob, _json
from fabrik3d.io.gltf_format import BIN_CHUNK, DATA_URI, JSON_CHUNK, free_name
from fabrik3d.io.gltf_import import _local_matrix, node_parents
from fabrik3d.io.take import Take

__all__ = ["character_bytes", "export_character", "matrix_quaternions", "posed_document"]


def export_character(
    character: Character, path: str | os.PathLike[str], pose: Any = None, take: Take | None = None, name: str = "take"
) -> None:
    """Write ``character``'s file with ``pose`` (a ``SolveResult`` or ``(positions, rotations)`` of its
    skeleton; ``None`` keeps the file's pose) and ``take`` (a new animation called ``name``; a name the
    file already uses gets ``_2``, ...) to ``path``, atomically (module docstring).

    Raises:
        ValueError: for a pose or take of another skeleton, non-finite values, a suffix other than the
            character's (``.glb`` for a GLB, ``.gltf`` for a glTF), or a path that cannot be written.
    """
    target = Path(path)
    if target.suffix.lower() != f".{character.container}":
        raise ValueError(f"{target}: a {character.container.upper()} character is written to a .{character.container}")
    doc, blob = _document(character, pose, take, name)
    if character.container == "glb":
        files.write_atomic(target, _glb(doc, character.binary, blob))
        return
    write_gltf(character, target, doc, blob)


def character_bytes(character: Character, pose: Any = None, take: Take | None = None, name: str = "take") -> bytes:
    """The ``.glb`` bytes of ``export_character`` for a GLB character (a download, say)."""
    if character.container != "glb":
        raise ValueError(f"{character.source}: a .gltf character is written with export_character")
    doc, blob = _document(character, pose, take, name)
    return _glb(doc, character.binary, blob)


def _document(character: Character, pose: Any, take: Take | None, name: str) -> tuple[dict[str, Any], bytes]:
    """A copy of the document with the pose and the take, and the new binary data."""
    blob = _Blob()
    doc, animation = posed_document(character, pose, take, blob)
    if animation is None:
        return doc, b""
    animations = doc.setdefault("animations", [])
    taken = {a.get("name") for a in animations if isinstance(a.get("name"), str)}
    animations.append({"name": free_name(name, taken), **animation})
    new_buffer = character.container == "gltf" or _needs_new_buffer(doc)
    buffer = len(doc.setdefault("buffers", [])) if new_buffer else 0
    view0, acc0 = len(doc.setdefault("bufferViews", [])), len(doc.setdefault("accessors", []))
    offset = 0 if new_buffer else _aligned(doc["buffers"][0].get("byteLength", 0))
    for view in blob.views:
        view["buffer"] = buffer
        view["byteOffset"] += offset
    for acc in blob.accessors:
        acc["bufferView"] += view0
    for sampler in animation["samplers"]:
        sampler["input"] += acc0
        sampler["output"] += acc0
    doc["bufferViews"] += blob.views
    doc["accessors"] += blob.accessors
    if new_buffer and character.container == "glb":
        doc["buffers"].append(
            {"byteLength": len(blob.data()), "uri": DATA_URI + base64.b64encode(blob.data()).decode()}
        )
        return doc, b""
    return doc, blob.data()


def posed_document(
    character: Character, pose: Any = None, take: Take | None = None, blob: _Blob | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A copy of ``character``'s document with ``pose`` on its bones' nodes, and ``take`` as an animation.

    The one rule of a character's pose and keys, for its own file (``export_character``) and for a stage's
    (``fabrik3d.io.stage_character``).

    Args:
        character: the character.
        pose: a ``SolveResult`` or ``(positions (n, 3), rotations (n, 4))`` of its skeleton; ``None`` keeps
            the file's pose.
        take: a ``Take`` of its skeleton, or ``None``.
        blob: where the take's keys go (a ``fabrik3d.io.gltf._Blob``: its accessors and buffer views; a new
            one when ``None``).

    Returns:
        ``(document, animation)``: ``animation`` is ``{"channels", "samplers"}`` (its samplers' accessors are
        ``blob``'s, its channels' nodes the document's), or ``None`` without a take.
    """
    doc = copy.deepcopy(character.document)
    nodes = doc["nodes"]
    if pose is not None:
        t, q = _locals(character, doc, character.bone_matrices(pose_arrays(character.skeleton, pose)))
        for b, k in enumerate(character.bone_nodes):
            _set_trs(nodes[k], t[b], q[b])
    if take is None:
        return doc, None
    if not isinstance(take, Take) or take.skeleton.names != character.skeleton.names:
        raise ValueError("take: expected a Take of the character's skeleton (Take(character.skeleton, ...))")
    times = take.times.astype(np.float32)
    if not np.all(np.diff(times) > 0):
        raise ValueError("take.times: key times must stay strictly increasing once stored as float32")
    frames = [_locals(character, doc, character.bone_matrices((p, r))) for p, r in zip(take.positions, take.rotations)]
    t = np.array([f[0] for f in frames])  # (m, nb, 3)
    q = np.array([f[1] for f in frames])  # (m, nb, 4)
    for k in range(1, len(q)):  # continuous quaternion signs, key to key
        q[k][np.sum(q[k] * q[k - 1], axis=1) < 0] *= -1.0
    blob = _Blob() if blob is None else blob
    key_times = blob.add(times[:, None], "SCALAR", min_max=True)
    samplers: list[dict[str, Any]] = []
    channels: list[dict[str, Any]] = []
    own = set(character.skeleton.names)
    for b, k in enumerate(character.bone_nodes):
        node = nodes[k]
        if "matrix" in node:
            t0, q0 = _locals_of_matrix(node)
            _set_trs(node, t0, q0)
        t0 = np.array(node.get("translation", (0.0, 0.0, 0.0)), float)
        q0 = np.array(node.get("rotation", (0.0, 0.0, 0.0, 1.0)), float)
        scale = 1e-6 * (np.abs(t[:, b]).max() + np.abs(t0).max() + 1e-12)
        moves = np.abs(t[:, b] - t0).max() > scale
        turns = np.abs(np.abs(np.sum(q[:, b] * q0, axis=1)) - 1.0).max() > 1e-9
        keys = []
        if character.bones[b] in own or turns:
            keys.append(("rotation", q[:, b], "VEC4"))
        if character.bones[b] in own or moves:
            keys.append(("translation", t[:, b], "VEC3"))
        for path, values, kind in keys:
            channels.append({"sampler": len(samplers), "target": {"node": int(k), "path": path}})
            samplers.append({"input": key_times, "interpolation": "LINEAR", "output": blob.add(values, kind)})
    return doc, {"channels": channels, "samplers": samplers}


def _needs_new_buffer(doc: dict[str, Any]) -> bool:
    """Whether a GLB's new data cannot go into its binary chunk (its buffer 0 is a URI or missing)."""
    buffers = doc.get("buffers") or []
    return not buffers or buffers[0].get("uri") is not None


def _aligned(n: int) -> int:
    return n + (-n % 4)


def _locals(character: Character, doc: dict[str, Any], world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(translations (nb, 3), rotations (nb, 4))`` of the bones' nodes for bone world matrices
    ``world`` ``(nb, 4, 4)``; the nodes' scales are kept."""
    nodes = doc["nodes"]
    parent = node_parents(doc)
    bone_of = {int(k): b for b, k in enumerate(character.bone_nodes)}
    memo: dict[int, np.ndarray] = {}

    def posed(k: int) -> np.ndarray:
        if k < 0:
            return np.eye(4)
        if k not in memo:
            memo[k] = world[bone_of[k]] if k in bone_of else posed(parent[k]) @ _local_matrix(nodes[k])
        return memo[k]

    local = np.empty_like(world)
    scale = np.array([_node_scale(nodes[int(k)]) for k in character.bone_nodes])
    for b, k in enumerate(character.bone_nodes):
        above = posed(parent[int(k)])
        if abs(np.linalg.det(above[:3, :3])) < 1e-300 or not np.all(np.abs(scale[b]) > 0):
            raise ValueError(
                f"{character.source}: nodes[{k}]: its parent's or its own scale is 0; its pose cannot be written"
            )
        local[b] = np.linalg.inv(above) @ world[b]
    u, _, vt = np.linalg.svd(local[:, :3, :3] / scale[:, None, :])
    t, q = local[:, :3, 3], matrix_quaternions(u @ vt)
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise ValueError(f"{character.source}: the pose gives a non-finite node transform")
    return t, q


def _node_scale(node: dict[str, Any]) -> np.ndarray:
    """A node's scale: its ``scale``, or its matrix's column lengths (the first negated for a mirror)."""
    if "matrix" in node:
        m = _local_matrix(node)[:3, :3]
        s = np.linalg.norm(m, axis=0)
        return s * np.array([-1.0 if np.linalg.det(m) < 0 else 1.0, 1.0, 1.0])
    return np.array(node.get("scale", (1.0, 1.0, 1.0)), float)


def _locals_of_matrix(node: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    m = _local_matrix(node)
    turn = m[:3, :3] / _node_scale(node)
    u, _, vt = np.linalg.svd(turn)
    return m[:3, 3], matrix_quaternions((u @ vt)[None])[0]


def _set_trs(node: dict[str, Any], t: np.ndarray, q: np.ndarray) -> None:
    """Give ``node`` translation ``t`` and rotation ``q`` (a matrix becomes TRS with its scale)."""
    if "matrix" in node:
        s = _node_scale(node)
        del node["matrix"]
        if not np.allclose(s, 1.0, rtol=0, atol=1e-7):
            node["scale"] = s.tolist()
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise ValueError(f"node {node.get('name')!r}: the pose gives a non-finite transform")
    node["translation"] = [float(v) for v in t]
    node["rotation"] = [float(v) for v in q / np.linalg.norm(q)]


def matrix_quaternions(m: np.ndarray) -> np.ndarray:
    """Unit quaternions (x, y, z, w) ``(n, 4)`` of rotation matrices ``(n, 3, 3)`` (Shepperd's method)."""
    m = np.asarray(m, float)
    tr = np.trace(m, axis1=1, axis2=2)
    cand = np.stack([tr, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=1)
    pick = np.argmax(cand, axis=1)
    q = np.empty((len(m), 4))
    for case in range(4):
        r = m[pick == case]
        if not len(r):
            continue
        if case == 0:
            s = 2.0 * np.sqrt(1.0 + r[:, 0, 0] + r[:, 1, 1] + r[:, 2, 2])
            v = [(r[:, 2, 1] - r[:, 1, 2]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s, (r[:, 1, 0] - r[:, 0, 1]) / s, s / 4]
        elif case == 1:
            s = 2.0 * np.sqrt(1.0 + r[:, 0, 0] - r[:, 1, 1] - r[:, 2, 2])
            v = [s / 4, (r[:, 0, 1] + r[:, 1, 0]) / s, (r[:, 0, 2] + r[:, 2, 0]) / s, (r[:, 2, 1] - r[:, 1, 2]) / s]
        elif case == 2:
            s = 2.0 * np.sqrt(1.0 + r[:, 1, 1] - r[:, 0, 0] - r[:, 2, 2])
            v = [(r[:, 0, 1] + r[:, 1, 0]) / s, s / 4, (r[:, 1, 2] + r[:, 2, 1]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s]
        else:
            s = 2.0 * np.sqrt(1.0 + r[:, 2, 2] - r[:, 0, 0] - r[:, 1, 1])
            v = [(r[:, 0, 2] + r[:, 2, 0]) / s, (r[:, 1, 2] + r[:, 2, 1]) / s, s / 4, (r[:, 1, 0] - r[:, 0, 1]) / s]
        q[pick == case] = np.stack(v, axis=1)
    q[q[:, 3] < 0] *= -1.0
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _glb(doc: dict[str, Any], binary: bytes | None, blob: bytes) -> bytes:
    """A GLB of ``doc``: the original binary chunk (cut to buffer 0's length, 4-aligned) then ``blob``."""
    chunk = b""
    if doc.get("buffers") and doc["buffers"][0].get("uri") is None:
        binary = binary or b""
        size = doc["buffers"][0].get("byteLength", len(binary))
        chunk = binary[:size] + b"\0" * (-size % 4) + blob
        doc["buffers"][0]["byteLength"] = len(chunk)
        chunk += b"\0" * (-len(chunk) % 4)
    text = _json(doc)
    text += b" " * (-len(text) % 4)
    parts = [struct.pack("<II", len(text), JSON_CHUNK), text]
    if chunk:
        parts += [struct.pack("<II", len(chunk), BIN_CHUNK), chunk]
    body = b"".join(parts)
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body
