"""The meshes of mesh props (``fabrik3d.model.props.Prop`` of shape ``"mesh"``): a ``.glb``/``.gltf`` file read
to static triangles (standard library + numpy; docs/stage.md, "Mesh props").

* **What is read**: every TRIANGLES primitive (indexed or not) of every mesh that a node of the file's scene
  holds (``scene``, else ``scenes[0]``, else every root node), placed by its node's world matrix (the node
  hierarchy's transforms; a mirrored node keeps its triangles facing out), in metres (glTF's unit). Normals
  are read where a primitive has them (turned with its node) and made from the triangles where it has not
  (``fabrik3d.model.props.vertex_normals``); a file without any has none (``prop_mesh`` makes them). A
  skinned mesh is read in its bind pose (its node's transform ignored, as glTF asks); morph targets,
  materials and textures are not read (a prop has one colour).
* **Checks**: a character file's (``fabrik3d.io.character``): the GLB container and JSON, the accessors and
  buffers (``fabrik3d.io.gltf_accessors``; buffer files only inside the file's folder), the limits counted
  before anything is read (``fabrik3d.io.gltf_limits``: nodes, vertices and triangles of one primitive and
  of all), compressed geometry refused. A primitive of points, lines, strips or fans is refused, and so is
  a file without triangles. Errors are one line naming the file and the place:
  ``cup.glb: meshes[0].primitives[1]: mode 1 (lines) is not triangles``.
* **Where a prop's file is** (``MeshFiles``): in the folder of its stage's scene file (``Stage.mesh_files``, which
  ``load_stage`` sets; a name leading out of that folder is refused, as a glTF's URIs are), or in a mapping
  of file names to ``PropFile``s already read (the web app's uploads). ``mesh_of`` gives a prop's
  ``PropFile`` (a file read from a folder is kept in a small cache while its size and time are unchanged),
  or None where the file is not there; ``prop_surface`` gives the prop's triangles with it, or its bounding
  box and a ``MissingMeshWarning`` where the file is not found.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fabrik3d.io import files as file_io
from fabrik3d.io import gltf_limits as limits
from fabrik3d.io.character import node_worlds, refuse_compressed
from fabrik3d.io.character_mesh import TRIANGLES, triangle_indices, unit_rows, vertex_attribute
from fabrik3d.io.gltf_accessors import Buffers
from fabrik3d.io.gltf_import import _index, _list, _parse_container, node_parents, read_named
from fabrik3d.model.props import Prop, mesh_size, prop_mesh, vertex_normals

__all__ = [
    "MeshFiles",
    "MissingMeshWarning",
    "PropFile",
    "load_prop_file",
    "mesh_of",
    "prop_file_from_bytes",
    "prop_surface",
]

# glTF's primitive modes (glTF 2.0 section 3.7.2.1), for messages.
MODES = {0: "points", 1: "lines", 2: "line loop", 3: "line strip", 4: "triangles", 5: "triangle strip",
         6: "triangle fan"}  # fmt: skip
CACHE_FILES = 8  # mesh files read from folders that ``mesh_of`` keeps


class MissingMeshWarning(UserWarning):
    """A mesh prop's file was not found: the prop is drawn and written as its bounding box."""


@dataclass(frozen=True, eq=False)
class PropFile:
    """The triangles of a mesh file (module docstring). Build with ``load_prop_file`` or
    ``prop_file_from_bytes``.

    Attributes:
        source: the file's name (for messages).
        vertices: ``(n, 3)`` float64 positions, metres, in the file's scene (node transforms applied).
        triangles: ``(t, 3)`` int64 vertex indices, counter-clockwise seen from outside.
        normals: ``(n, 3)`` unit normals, or None where no primitive has any.
        notes: what was not read, one sentence each (morph targets, a skin).
    """

    source: str
    vertices: np.ndarray
    triangles: np.ndarray
    normals: np.ndarray | None
    notes: tuple[str, ...] = ()

    @property
    def size(self) -> np.ndarray:
        """``(3,)`` the size (metres) of a prop made of this file: its bounding box (``mesh_size``;
        ``ValueError`` when larger than a prop may be)."""
        return mesh_size(self.vertices)

    def __repr__(self) -> str:
        return f"PropFile({self.source!r}: {len(self.vertices)} vertices, {len(self.triangles)} triangles)"


# Where mesh props' files are found: a folder, a mapping of file names to files already read, or nowhere.
MeshFiles = str | os.PathLike[str] | Mapping[str, PropFile] | None


def load_prop_file(path: str | os.PathLike[str]) -> PropFile:
    """The triangles of the ``.glb``/``.gltf`` file ``path`` (``prop_file_from_bytes``; its buffers may be
    files beside a ``.gltf``)."""
    p = Path(path)
    return prop_file_from_bytes(file_io.read_bytes(p), str(p), base_dir=p.parent)


def prop_file_from_bytes(data: bytes, source: str = "glTF", base_dir: str | os.PathLike[str] | None = None) -> PropFile:
    """A ``PropFile`` from glTF 2.0 content (GLB or JSON; the module docstring says what is read).

    Args:
        data: the file's bytes.
        source: its name, prefixed to messages.
        base_dir: the folder of external buffers (``None``: only embedded data).

    Raises:
        ValueError: one line, prefixed with ``source`` and naming the place: not glTF 2.0, truncated,
            beyond a limit, no mesh or no triangles, a primitive that is not triangles, data past the end
            of a buffer, indices beyond the vertices, a node's transform not finite, ...
    """
    return read_named(source, lambda: _read(bytes(data), source, base_dir))


def mesh_of(prop: Prop, files: MeshFiles) -> PropFile | None:
    """The ``PropFile`` of a mesh prop (``prop.file`` in ``files``), or None: for a built-in shape, for
    ``files`` None, or where the file is not there.

    Raises:
        ValueError: the file's own (it is there but not a mesh file ``prop_file_from_bytes`` reads), or
            a name that leads out of the folder ``files``.
    """
    if prop.shape != "mesh" or prop.file is None or files is None:
        return None
    if isinstance(files, Mapping):
        return files.get(prop.file)
    path = file_io.inside(files, prop.file, f"props: {prop.name!r}: file")
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    mesh = load_prop_file(path)
    with _LOCK:
        _CACHE[key] = mesh
        while len(_CACHE) > CACHE_FILES:
            _CACHE.popitem(last=False)
    return mesh


def prop_surface(prop: Prop, files: MeshFiles = None, segments: int = 24) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``prop_mesh`` of ``prop`` with its file's triangles when it is a mesh prop (``mesh_of``):
    ``(vertices (m, 3), normals (m, 3), triangles (t, 3) int32)``, metres, in the prop's own frame (its
    size, not its transform). A mesh prop whose file is not found is its bounding box, with a
    ``MissingMeshWarning`` naming it."""
    mesh = mesh_of(prop, files)
    if prop.shape == "mesh" and mesh is None:
        where = "given" if files is None else "uploaded" if isinstance(files, Mapping) else f"in {os.fspath(files)}"
        warnings.warn(
            f"prop {prop.name!r}: its file {prop.file!r} is not {where}; it is drawn as its bounding box",
            MissingMeshWarning,
            stacklevel=2,
        )
    return prop_mesh(prop, segments, mesh)


_CACHE: OrderedDict[tuple[str, int, int], PropFile] = OrderedDict()
_LOCK = threading.Lock()


def _read(data: bytes, source: str, base_dir: str | os.PathLike[str] | None) -> PropFile:
    doc, bin_chunk = _parse_container(data)
    refuse_compressed(doc)
    nodes = _list(doc, "nodes")
    node_parent = node_parents(doc)
    limits.check_nodes(node_parent, "a prop file")
    meshes = _list(doc, "meshes")
    if not meshes:
        raise ValueError("meshes: none; the file holds no triangles")
    placed, scene = [], _scene_nodes(doc, nodes, node_parent)
    for k in scene[1]:
        if nodes[k].get("mesh") is not None:
            placed.append((k, _index(nodes[k]["mesh"], len(meshes), f"nodes[{k}].mesh")))
    if not placed:
        raise ValueError(f"{scene[0]}: no node of the scene holds a mesh; the file shows no triangles")
    for m in dict.fromkeys(m for _, m in placed):
        for p, prim in enumerate(_list(meshes[m], "primitives")):
            mode = prim.get("mode", TRIANGLES) if isinstance(prim, dict) else None
            if mode != TRIANGLES:
                what = f"mode {mode} ({MODES[mode]})" if mode in MODES else f"mode {mode!r}"
                raise ValueError(f"meshes[{m}].primitives[{p}]: {what} is not triangles (export it with triangles)")
    limits.check_meshes(doc, placed, "prop", "a prop file")  # (before any accessor is read)
    world = node_worlds(nodes, node_parent)
    buffers = Buffers(doc, bin_chunk, base_dir)
    read: dict[tuple[int, int], tuple[np.ndarray, np.ndarray | None, np.ndarray]] = {}
    notes: list[str] = []
    parts = []
    for k, m in placed:
        if nodes[k].get("skin") is not None:
            notes.append(f"nodes[{k}]: a skinned mesh, read in its bind pose")
        matrix = np.eye(4) if nodes[k].get("skin") is not None else world[k]
        for p, prim in enumerate(meshes[m]["primitives"]):
            if (m, p) not in read:
                read[m, p] = _primitive(doc, buffers, prim, f"meshes[{m}].primitives[{p}]", notes)
            parts.append(_placed(*read[m, p], matrix))
    vertices = np.concatenate([v for v, _, _ in parts])
    starts = np.cumsum([0] + [len(v) for v, _, _ in parts[:-1]])
    triangles = np.concatenate([t + s for (_, _, t), s in zip(parts, starts)])
    has = [n is not None for _, n, _ in parts]
    normals = None
    if any(has):
        normals = np.concatenate([vertex_normals(v, t) if n is None else n for v, n, t in parts])
    return PropFile(source, vertices, triangles, normals, tuple(dict.fromkeys(notes)))


def _scene_nodes(doc: dict[str, Any], nodes: list[Any], node_parent: list[int]) -> tuple[str, list[int]]:
    """``(its place, every node of the scene shown, parents first)``: the nodes of ``scene`` (else of
    ``scenes[0]``) and below them; without scenes, every node."""
    scenes = _list(doc, "scenes")
    if scenes:
        s = _index(doc.get("scene", 0), len(scenes), "scene")
        where = f"scenes[{s}]"
        listed = scenes[s].get("nodes", []) if isinstance(scenes[s], dict) else None
        if not isinstance(listed, list):
            raise ValueError(f"{where}.nodes: expected a list of node indices")
        stack = [_index(r, len(nodes), f"{where}.nodes[{i}]") for i, r in enumerate(listed)][::-1]
    else:
        where = "nodes"
        stack = [k for k, parent in enumerate(node_parent) if parent < 0][::-1]
    order, seen = [], set()
    while stack:  # (depth first, iterative: depths were checked)
        k = stack.pop()
        if k not in seen:
            seen.add(k)
            order.append(k)
            stack.extend(reversed(nodes[k].get("children", [])))
    return where, order


def _primitive(
    doc: dict[str, Any], buffers: Buffers, prim: dict[str, Any], where: str, notes: list[str]
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """``(positions (v, 3), normals (v, 3) or None, triangles (t, 3))`` of a TRIANGLES primitive."""
    attributes = prim.get("attributes")
    if not isinstance(attributes, dict) or "POSITION" not in attributes:
        raise ValueError(f"{where}.attributes: no POSITION")
    if prim.get("targets"):
        notes.append(f"{where}: morph targets are ignored")
    positions = vertex_attribute(doc, buffers, attributes, "POSITION", 3, where)
    normals = None
    if "NORMAL" in attributes:
        normals = vertex_attribute(doc, buffers, attributes, "NORMAL", 3, where, len(positions))
    return positions, normals, triangle_indices(doc, buffers, prim, where, len(positions))


def _placed(
    positions: np.ndarray, normals: np.ndarray | None, triangles: np.ndarray, matrix: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """A primitive moved by its node's world ``matrix`` ``(4, 4)``: normals turned by its inverse
    transpose, the triangles' order reversed where it mirrors (so they still face out)."""
    turn = matrix[:3, :3]
    vertices = positions @ turn.T + matrix[:3, 3]
    det = float(np.linalg.det(turn))
    if normals is not None:
        normals = unit_rows(normals @ np.linalg.inv(turn)) if abs(det) > 1e-12 else None
    return vertices, normals, triangles[:, ::-1] if det < 0 else triangles
