"""The limits of a character file (``fabrik3d.io.character``; docs/character.md, "Limits") and of a
prop's mesh file (``fabrik3d.io.prop_file``: the same numbers, its meshes counted as a character's
skinned ones), checked on the glTF JSON before anything is read from its buffers or allocated for it,
each with a one-line error naming the place.

A small file may declare huge things (an accessor of 10^7 vertices, a primitive used by thousands of
nodes, a node chain 10^4 deep): these checks count what the document asks for first, so a refusal
costs the JSON's size in memory and time, not the declaration's.
"""

from __future__ import annotations

from typing import Any

# Nodes of a file, and how deep a node may sit below its scene root (the root is at depth 1).
MAX_NODES = 30_000
MAX_NODE_DEPTH = 512
# Bones (the joints of every skin, their union) of one character, and the entries of all skins' joint lists.
MAX_BONES = 1024
MAX_SKIN_ENTRIES = 65_536
# Skinned primitives: vertices and triangles of one, and of all of them (each mesh node that uses a
# mesh counts its primitives again), and how many there are in all.
MAX_MESH_VERTICES = 1_000_000
MAX_MESH_TRIANGLES = 2_000_000
MAX_SKINNED_VERTICES = 2_000_000
MAX_SKINNED_TRIANGLES = 4_000_000
MAX_PRIMITIVES = 1000


def check_nodes(node_parent: list[int], owner: str = "a character file") -> None:
    """Refuse more than ``MAX_NODES`` nodes or a node deeper than ``MAX_NODE_DEPTH`` (``node_parent``:
    each node's parent, ``-1`` for a root); linear in the nodes, each depth found once. ``owner`` names
    the kind of file in messages (``a prop file``: ``fabrik3d.io.prop_file``)."""
    n = len(node_parent)
    if n > MAX_NODES:
        raise ValueError(f"nodes: {n} nodes; {owner} may have at most {MAX_NODES}")
    depth = [0] * n
    for k in range(n):
        path, a = [], k
        while a >= 0 and not depth[a]:
            path.append(a)
            a = node_parent[a]
            if len(path) > n:
                raise ValueError(f"nodes[{k}]: its ancestors form a cycle")
        d = depth[a] if a >= 0 else 0
        for j in reversed(path):
            d += 1
            depth[j] = d
            if d > MAX_NODE_DEPTH:
                raise ValueError(f"nodes[{j}]: lies more than {MAX_NODE_DEPTH} nodes deep (the limit on node depth)")


def check_skins(skins: list[Any]) -> None:
    """Refuse skins whose joint lists hold more than ``MAX_SKIN_ENTRIES`` entries in all (the bones'
    union is checked against ``MAX_BONES`` as it is formed)."""
    total = 0
    for s, skin in enumerate(skins):
        joints = skin.get("joints") if isinstance(skin, dict) else None
        total += len(joints) if isinstance(joints, list) else 0
        if total > MAX_SKIN_ENTRIES:
            raise ValueError(
                f"skins[{s}].joints: the skins list more than {MAX_SKIN_ENTRIES} joints in all "
                f"(a character has at most {MAX_BONES} bones)"
            )


def check_bones(count: int, where: str) -> None:
    """Refuse a character of more than ``MAX_BONES`` bones."""
    if count > MAX_BONES:
        raise ValueError(f"{where}: more than {MAX_BONES} bones; a character may have at most {MAX_BONES}")


def _declared(doc: dict[str, Any], index: Any, where: str) -> int:
    """The ``count`` that ``accessors[index]`` declares (0 if it cannot be told: the reader refuses it)."""
    accessors = doc.get("accessors")
    if isinstance(index, bool) or not isinstance(index, int) or not isinstance(accessors, list):
        return 0
    if not 0 <= index < len(accessors) or not isinstance(accessors[index], dict):
        return 0
    count = accessors[index].get("count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def check_meshes(
    doc: dict[str, Any], mesh_nodes: list[tuple[int, int]], kind: str = "skinned", owner: str = "a character"
) -> None:
    """Refuse skinned meshes beyond the limits, counted from the accessors' declared counts before any
    is read: ``mesh_nodes`` holds ``(node, mesh)`` of every node with a mesh and a skin, so a mesh used
    by many nodes counts once for each. ``kind`` and ``owner`` name the meshes and their file in
    messages (``"prop"`` and ``"a prop file"``: the static meshes of ``fabrik3d.io.prop_file``)."""
    meshes = doc.get("meshes") or []
    prims = vertices = triangles = 0
    for k, m in mesh_nodes:
        primitives = meshes[m].get("primitives") if isinstance(meshes[m], dict) else None
        for p, prim in enumerate(primitives if isinstance(primitives, list) else []):
            if not isinstance(prim, dict) or prim.get("mode", 4) != 4:
                continue
            where = f"meshes[{m}].primitives[{p}]"
            attributes = prim.get("attributes") if isinstance(prim.get("attributes"), dict) else {}
            v = _declared(doc, attributes.get("POSITION"), where)
            t = (_declared(doc, prim["indices"], where) if prim.get("indices") is not None else v) // 3
            if v > MAX_MESH_VERTICES:
                raise ValueError(f"{where}: {v} vertices; a {kind} mesh may have at most {MAX_MESH_VERTICES}")
            if t > MAX_MESH_TRIANGLES:
                raise ValueError(f"{where}: {t} triangles; a {kind} mesh may have at most {MAX_MESH_TRIANGLES}")
            prims, vertices, triangles = prims + 1, vertices + v, triangles + t
            if prims > MAX_PRIMITIVES:
                raise ValueError(
                    f"nodes[{k}]: more than {MAX_PRIMITIVES} {kind} primitives in all (mesh nodes times their "
                    f"primitives); {owner} may have at most {MAX_PRIMITIVES}"
                )
            if vertices > MAX_SKINNED_VERTICES:
                raise ValueError(
                    f"nodes[{k}]: {where} brings the {kind} vertices to {vertices} (each mesh node counts its "
                    f"mesh again); {owner} may have at most {MAX_SKINNED_VERTICES}"
                )
            if triangles > MAX_SKINNED_TRIANGLES:
                raise ValueError(
                    f"nodes[{k}]: {where} brings the {kind} triangles to {triangles}; {owner} may have at "
                    f"most {MAX_SKINNED_TRIANGLES}"
                )
