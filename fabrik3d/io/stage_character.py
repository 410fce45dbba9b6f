"""A character figure of a stage in the stage's glTF file (``fabrik3d.io.stage_gltf``): its own skinned meshes.

A figure with a ``Character`` (``fabrik3d.io.stage.Figure.character``) is written as the character's own
document posed (``fabrik3d.io.character_export.posed_document``: the rule of the character's own export, its
pose or its take on the bones' nodes), merged into the stage's:

* every mesh, skin (its joints and inverse bind matrices), material, texture, image, sampler and camera of the
  character's document is appended to the stage's, indices shifted; its buffers' bytes and its images (a file
  beside a ``.gltf`` or a data URI: embedded as buffer views) go into the stage's one buffer;
* the roots of its scene become children of the figure's node (its ``Placement``), except the nodes with a
  skin, which become roots of the stage's scene (glTF places a skinned mesh by its joints, whatever its
  node's transform), as a plain figure's body is; a node with a mesh is named ``"<figure> <name>"``, as its
  mesh and its skins are; bones keep their names (a figure's joints are found by name below its node);
* its take's keys join the stage's clip ``"take"``; the file's own animations become clips of their own
  (``Merged.clips``, which a stage's animation file writes after the take), named ``"<figure> <name>"``, their
  channels on the merged nodes (a channel without a node, an extension's, is left out);
* the file's scenes, and the extensions of its nodes, of its primitives and of the document itself (which
  refer to what the stage does not carry: lights, variants, VRM), are not written.

Matrices are ``(4, 4)``, scene units (metres).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.io.character import Character
from fabrik3d.io.character_export import matrix_quaternions, posed_document
from fabrik3d.io.gltf import _Blob
from fabrik3d.io.gltf_accessors import Buffers

__all__ = ["KINDS", "Merged", "frame_matrix", "merge_character", "node_transform"]

# The document's lists a character brings into a stage's, in the order they are written.
KINDS = ("nodes", "meshes", "skins", "materials", "textures", "images", "samplers", "cameras")
_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8", "image/jpeg"), (b"\xabKTX 20", "image/ktx2"))


@dataclass
class Merged:
    """What ``merge_character`` added to a stage's document.

    Attributes:
        children: the stage's nodes that go below the figure's node.
        roots: the stage's nodes at the root of its scene (the skinned meshes').
        joints: ``(n,)`` the stage's node of each joint of the character's skeleton.
        holds: ``(n, 4, 4)`` each joint's rest frame in its bone node's frame (``inverse(bind) · frame``):
            what a prop held by the joint is placed in.
        animation: the take's ``{"channels", "samplers"}`` (the stage's nodes, the blob's accessors), or None.
        clips: the file's own animations (``{"name", "channels", "samplers"}``: the stage's nodes, the blob's
            accessors), named ``"<figure> <name>"``.
        extensions: ``(used, required)``: the names of the extensions what was added uses.
    """

    children: list[int]
    roots: list[int]
    joints: list[int]
    holds: np.ndarray
    animation: dict[str, Any] | None
    extensions: tuple[list[str], list[str]]
    clips: list[dict[str, Any]]


def merge_character(
    parts: dict[str, list[Any]], blob: _Blob, character: Character, figure: str, pose: Any = None, take: Any = None
) -> Merged:
    """Append ``character``'s document, posed by ``pose`` (a ``SolveResult`` of its skeleton) or keyed by
    ``take`` (a ``Take``), to a stage document's lists ``parts`` (``KINDS``: appended to) and ``blob`` (its
    buffer, accessors and buffer views); ``figure`` names what it adds (module docstring).

    Raises:
        ValueError: naming the character's file, for a buffer or an image that cannot be read, or a pose or
            take that ``posed_document`` refuses.
    """
    doc, animation = posed_document(character, pose, take, blob)
    at = {kind: len(parts[kind]) for kind in KINDS}
    buffers = Buffers(doc, character.binary, character.base_dir)
    try:
        base = [blob.append(buffers[k][: b.get("byteLength")]) for k, b in enumerate(doc.get("buffers", []))]
    except ValueError as exc:
        raise ValueError(f"{character.source}: {exc}") from None
    view0, acc0 = len(blob.views), len(blob.accessors)
    blob.views += [{**v, "buffer": 0, "byteOffset": v.get("byteOffset", 0) + base[v["buffer"]]}
                   for v in doc.get("bufferViews", [])]  # fmt: skip
    for accessor in doc.get("accessors", []):
        for holder in (accessor, *accessor.get("sparse", {}).values()):
            if isinstance(holder, dict) and "bufferView" in holder:
                holder["bufferView"] += view0
        blob.accessors.append(accessor)
    for k, image in enumerate(doc.get("images", [])):
        if "bufferView" in image:
            image["bufferView"] += view0
        elif "uri" in image:
            data = buffers.uri_bytes(image.pop("uri"), f"{character.source}: images[{k}].uri")
            blob.views.append({"buffer": 0, "byteOffset": blob.append(data), "byteLength": len(data)})
            image.update(bufferView=len(blob.views) - 1, mimeType=image.get("mimeType") or _mime(data))
    dropped = set(doc.get("extensions", {}))
    for mesh in doc.get("meshes", []):
        mesh["name"] = f"{figure} {mesh.get('name') or 'mesh'}"
        for p in mesh.get("primitives", []):
            dropped |= set(p.pop("extensions", {}))
            p["attributes"] = {key: a + acc0 for key, a in p.get("attributes", {}).items()}
            p.update({"indices": p["indices"] + acc0} if "indices" in p else {})
            p.update({"material": p["material"] + at["materials"]} if "material" in p else {})
            if "targets" in p:
                p["targets"] = [{key: a + acc0 for key, a in t.items()} for t in p["targets"]]
    for skin in doc.get("skins", []):
        skin["name"] = f"{figure} {skin.get('name') or 'skin'}"
        skin["joints"] = [j + at["nodes"] for j in skin["joints"]]
        skin.update({"skeleton": skin["skeleton"] + at["nodes"]} if "skeleton" in skin else {})
        if "inverseBindMatrices" in skin:
            skin["inverseBindMatrices"] += acc0
    for material in doc.get("materials", []):
        for info in _texture_infos(material):
            info["index"] += at["textures"]
    for texture in doc.get("textures", []):
        texture.update({"sampler": texture["sampler"] + at["samplers"]} if "sampler" in texture else {})
        for holder in (texture, *texture.get("extensions", {}).values()):
            if isinstance(holder, dict) and "source" in holder:
                holder["source"] += at["images"]
    nodes = doc.get("nodes", [])
    roots = _scene_roots(doc)
    reached = _reached(nodes, roots)
    skinned = {k for k, n in enumerate(nodes) if "skin" in n}
    for node in nodes:
        dropped |= set(node.pop("extensions", {}))
        children = [c for c in node.pop("children", []) if c not in skinned]  # (a skinned mesh: a root)
        node.update({"children": [c + at["nodes"] for c in children]} if children else {})
        for key, kind in (("mesh", "meshes"), ("skin", "skins"), ("camera", "cameras")):
            node.update({key: node[key] + at[kind]} if key in node else {})
        if "mesh" in node:
            node["name"] = f"{figure} {node.get('name') or 'mesh'}"
    for kind in KINDS:
        parts[kind] += doc.get(kind, [])
    found = {name for kind in KINDS for item in doc.get(kind, []) for name in _extension_names(item)}
    used = [e for e in doc.get("extensionsUsed", []) if e in found or e not in dropped]
    required = [e for e in doc.get("extensionsRequired", []) if e in used]
    if animation is not None:
        for channel in animation["channels"]:
            channel["target"]["node"] += at["nodes"]
    clips = [_clip(a, k, figure, at["nodes"], acc0) for k, a in enumerate(doc.get("animations", []))]
    bone = dict(zip(character.bones, character.bone_nodes.tolist()))
    sk = character.skeleton
    frames = np.array([frame_matrix(p, q) for p, q in zip(sk.rest_positions, sk.rest_frames)])
    holds = np.linalg.inv(character.bind[[character.bones.index(j) for j in sk.names]]) @ frames
    return Merged(
        [r + at["nodes"] for r in roots if r not in skinned],
        [k + at["nodes"] for k in sorted(skinned & reached)],
        [bone[j] + at["nodes"] for j in sk.names],
        holds,
        animation,
        (used, required),
        [c for c in clips if c["channels"]],
    )


def _clip(animation: dict[str, Any], k: int, figure: str, node0: int, acc0: int) -> dict[str, Any]:
    """The character's animation ``k`` as a clip of the stage: its channels on nodes (those on none, an
    extension's, left out) shifted by ``node0``, its samplers' accessors by ``acc0``, only the samplers used."""
    channels = [c for c in animation.get("channels", []) if isinstance(c.get("target", {}).get("node"), int)]
    used = sorted({c["sampler"] for c in channels})
    index = {old: new for new, old in enumerate(used)}
    samplers = animation.get("samplers", [])
    moved = [
        {"sampler": index[c["sampler"]], "target": {"node": c["target"]["node"] + node0, "path": c["target"]["path"]}}
        for c in channels
    ]
    kept = [{**samplers[u], "input": samplers[u]["input"] + acc0, "output": samplers[u]["output"] + acc0} for u in used]
    name = animation.get("name") or f"animation {k}"
    return {"name": f"{figure} {name}", "channels": moved, "samplers": kept}


def node_transform(m: np.ndarray) -> dict[str, Any]:
    """A glTF node's transform for the ``(4, 4)`` matrix ``m``: translation, rotation and scale where ``m`` is a
    turn with a uniform scale (to 1e-6), else its ``matrix`` (column major)."""
    s = np.cbrt(np.linalg.det(m[:3, :3]))
    turn = m[:3, :3] / s if s > 0 else m[:3, :3]
    if s > 0 and np.allclose(turn.T @ turn, np.eye(3), atol=1e-6):
        q = matrix_quaternions(turn[None])[0]
        return {"translation": m[:3, 3].tolist(), "rotation": q.tolist(), "scale": [float(s)] * 3}
    return {"matrix": m.T.reshape(-1).tolist()}


def frame_matrix(position: np.ndarray, rotation: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """The ``(4, 4)`` matrix of a frame: ``position`` ``(3,)``, ``rotation`` a unit quaternion ``(4,)`` (x, y, z,
    w), a uniform ``scale`` (a ``Transform``'s: ``frame_matrix(t.position, t.rotation, t.scale)``)."""
    m = np.eye(4)
    m[:3, :3] = rot.quat_to_matrix(np.asarray(rotation, float)) * scale
    m[:3, 3] = position
    return m


def _scene_roots(doc: dict[str, Any]) -> list[int]:
    """The root nodes of the document's scene (its default, else the first; every parentless node without one)."""
    scenes = doc.get("scenes") or []
    if scenes:
        return list(scenes[doc.get("scene", 0)].get("nodes", []))
    below = {c for n in doc.get("nodes", []) for c in n.get("children", [])}
    return [k for k in range(len(doc.get("nodes", []))) if k not in below]


def _reached(nodes: list[dict[str, Any]], roots: list[int]) -> set[int]:
    """The nodes of the trees below ``roots`` (the document as read: one tree each, checked on reading)."""
    out: set[int] = set()
    todo = list(roots)
    while todo:
        k = todo.pop()
        if k not in out:
            out.add(k)
            todo += nodes[k].get("children", [])
    return out


def _texture_infos(item: Any) -> Iterator[dict[str, Any]]:
    """The texture references in a material, its extensions' included: every object under a key ending in
    ``Texture`` (glTF's ``textureInfo``: ``baseColorTexture``, ``normalTexture``, ``clearcoatTexture``, ...)."""
    if isinstance(item, dict):
        for key, value in item.items():
            if key.endswith("Texture") and isinstance(value, dict) and isinstance(value.get("index"), int):
                yield value
            else:
                yield from _texture_infos(value)
    elif isinstance(item, list):
        for value in item:
            yield from _texture_infos(value)


def _extension_names(item: Any) -> Iterator[str]:
    """The names of the extensions used in ``item`` (the keys of every ``extensions`` object in it)."""
    if isinstance(item, dict):
        for key, value in item.items():
            if key == "extensions" and isinstance(value, dict):
                yield from value
            yield from _extension_names(value)
    elif isinstance(item, list):
        for value in item:
            yield from _extension_names(value)


def _mime(data: bytes) -> str:
    """An image's MIME type by its first bytes (PNG, JPEG, KTX2, WebP; PNG where none matches)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _MAGIC if data.startswith(magic)), "image/png")
