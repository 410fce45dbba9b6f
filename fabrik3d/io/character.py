"""Rigged glTF characters: a ``.glb``/``.gltf`` in, a skeleton to solve, its skinned meshes, the document
kept whole for export (``fabrik3d.io.character_export``); docs/character.md.

* **Bones** are the joints of every skin (their union, in order of appearance); a bone's parent is its
  nearest ancestor node that is a bone (helper nodes between bones and an armature node above them
  keep their transforms). The bones must form one tree. **Rest = the bind pose**: a bone's bind world
  matrix ``B`` is the inverse of its inverse bind matrix (the first skin listing it that has them),
  else its node's world matrix; scene units (an armature's 0.01 scale included).
* The **skeleton** (what ``fabrik3d.solve`` poses) keeps the bones that pose the body: for a humanoid
  (``fabrik3d.model.rig_map``), the paths from the pelvis to the hands, feet and head, with the preset's
  joint limits and natural posing; else every bone. Bones that sit on their parent (closer than
  ``RIDER_FRACTION`` of the model's size) and the bones below the hands, feet and head are **riders**:
  they keep their bind offset in the frame of their nearest skeleton joint above (their *driver*);
  bones above the pelvis stay fixed.
* A pose of the skeleton (``positions`` (n, 3), world frames ``rotations`` (n, 4)) moves a bone by
  ``D = [R·R0⁻¹ | P − R·R0⁻¹·P0]`` of its driver (``R0``, ``P0`` the rest frame and position): its world
  matrix is ``D·B`` and its skinning matrix ``D·B·inverse_bind`` (the glTF joint matrix).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.io import files
from fabrik3d.io import gltf_limits as limits
from fabrik3d.io.character_mesh import SkinnedPrimitive, read_meshes
from fabrik3d.io.character_rig import (
    build_skeleton,
    drivers,
    finger_bones,
    kept_bones,
    pose_arrays,
    rig_roles,
    vrm_roles,
)
from fabrik3d.io.gltf_accessors import Buffers, read_accessor
from fabrik3d.io.gltf_format import unique_names
from fabrik3d.io.gltf_import import (
    _index,
    _list,
    _local_matrix,
    _parse_container,
    joint_parents,
    node_parents,
    read_named,
)
from fabrik3d.model import rig_map as rigs
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.skinning import Skinner, pose_deltas

__all__ = [
    "Character",
    "Skin",
    "character_from_bytes",
    "load_character",
    "load_rig_map",
    "parse_rig_map",
    "scene_character",
    "scene_character_from",
]

# A bone closer to its skeleton parent than this fraction of the model's size rides on it.
RIDER_FRACTION = 1e-6
# Compressed geometry is not read: files that require these are refused (quantized attributes are read).
_UNSUPPORTED = ("KHR_draco_mesh_compression", "EXT_meshopt_compression")


@dataclass(frozen=True, eq=False)
class Skin:
    """One skin: ``bones`` ``(b,)`` the bone index of each of its joints, ``offsets`` ``(b, 4, 4)``
    ``B·inverse_bind`` of each (the identity when its bind is the bones' rest)."""

    bones: np.ndarray
    offsets: np.ndarray


@dataclass(frozen=True, eq=False)
class Character:
    """A rigged character read from glTF (module docstring). Build with ``load_character``.

    Attributes:
        source: the file's name (for messages).
        document: the glTF JSON as read (never modified; export works on a copy).
        binary: the GLB's binary chunk, or ``None`` for a ``.gltf``.
        base_dir: the folder of the file (external buffers and images), or ``None``.
        container: ``"glb"`` or ``"gltf"``.
        skeleton: the skeleton to solve (joint names are bone names).
        bones: every bone's name (``bone_nodes`` their node indices, ``(nb,)``).
        bind: ``(nb, 4, 4)`` bind world matrices, scene units.
        driver: ``(nb,)`` the skeleton joint each bone follows, ``-1`` for a fixed bone.
        skins: the document's skins, in order.
        meshes: the skinned triangle primitives.
        rig_map: humanoid role -> bone name (empty for other rigs); ``convention`` names where it came
            from (``mixamo``, ``vrm``, ``blender``, ``unreal``, ``fabrik3d``, ``given`` or ``""``).
        effectors: what a user drags -> skeleton joint: ``pelvis``, ``head``, ``hand_l``, ``hand_r``,
            ``foot_l``, ``foot_r`` for a humanoid (the pelvis is the skeleton's root: move it with
            ``root_target``), each leaf by its own name otherwise.
        notes: what was not read or was changed, one sentence each.
        size: the model's size: the diagonal of its bones' bounding box, scene units.
    """

    source: str
    document: dict[str, Any]
    binary: bytes | None
    base_dir: Path | None
    container: str
    skeleton: Skeleton
    bones: tuple[str, ...]
    bone_nodes: np.ndarray
    bind: np.ndarray
    driver: np.ndarray
    skins: tuple[Skin, ...]
    meshes: tuple[SkinnedPrimitive, ...]
    rig_map: Mapping[str, str]
    convention: str
    effectors: Mapping[str, str]
    notes: tuple[str, ...]
    size: float
    _skinners: dict[int, Skinner] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return (
            f"Character({self.source!r}: {len(self.bones)} bones, {len(self.skeleton)} joints, "
            f"{len(self.meshes)} primitives, convention {self.convention!r})"
        )

    def effector(self, name: Any, where: str = "target") -> str:
        """The skeleton joint a user's ``name`` targets: an effector key (``hand_l``), any role that
        serves it (``wrist_l``), the rig's bone of such a role (``hand.L``, ``mixamorig:LeftHand``), or
        a leaf's own name; ``ValueError`` naming ``where`` and listing the keys first otherwise."""
        if isinstance(name, str):
            if name in self.effectors:
                return self.effectors[name]
            for key, roles in rigs.END_ROLES.items():
                if key in self.effectors and any(name in (r, self.rig_map.get(r)) for r in roles):
                    return self.effectors[key]
            if name in self.skeleton.end_effectors:
                return name
        keys = checks.names_list(self.effectors) or "none"
        bones = checks.names_list(sorted(set(self.skeleton.end_effectors) - set(self.effectors.values())))
        raise ValueError(
            f"{where} {checks.quoted(str(name))}: not a role of this character nor a bone of one; the roles are {keys}"
            + (f" (other leaves: {bones})" if bones else "")
        )

    @property
    def riders(self) -> tuple[str, ...]:
        """Bones not in the skeleton that follow a skeleton joint."""
        names = set(self.skeleton.names)
        return tuple(b for b, d in zip(self.bones, self.driver) if b not in names and d >= 0)

    def deltas(self, pose: Any = None) -> np.ndarray:
        """``(nb, 4, 4)`` rigid motions ``D`` of the bones from the rest pose to ``pose`` (``positions``
        ``(n, 3)`` and ``rotations`` ``(n, 4)`` of the skeleton, e.g. a ``SolveResult``; ``None``: rest)."""
        out = np.tile(np.eye(4), (len(self.bones), 1, 1))
        if pose is None:
            return out
        d = pose_deltas(self.skeleton, *pose_arrays(self.skeleton, pose))
        moving = self.driver >= 0
        out[moving] = d[self.driver[moving]]
        return out

    def bone_matrices(self, pose: Any = None) -> np.ndarray:
        """``(nb, 4, 4)`` world matrices ``D·B`` of the bones in ``pose`` (``None``: the bind pose)."""
        return self.deltas(pose) @ self.bind

    def skin(self, pose: Any = None, normals: bool = False) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """Each mesh primitive skinned into ``pose``: ``(positions (v, 3), normals (v, 3) or None)``,
        float32, scene units, in ``meshes`` order (linear blend skinning, ``fabrik3d.model.skinning``)."""
        d = self.deltas(pose)
        out = []
        for k, prim in enumerate(self.meshes):
            s = self.skins[prim.skin]
            if k not in self._skinners:
                self._skinners[k] = Skinner(prim.positions, prim.joints, prim.weights, len(s.bones), prim.normals)
            out.append(self._skinners[k].skin(d[s.bones] @ s.offsets, normals))
        return out


def load_character(path: str | os.PathLike[str], rig_map: Any = None) -> Character:
    """The character of a ``.glb``/``.gltf`` file (``character_from_bytes``); ``rig_map`` may be a dict
    role -> bone name or the path of such a JSON file."""
    p = Path(path)
    if isinstance(rig_map, (str, os.PathLike)):
        rig_map = load_rig_map(rig_map)
    return character_from_bytes(files.read_bytes(p), str(p), base_dir=p.parent, rig_map=rig_map)


def scene_character(scene: Any, scene_path: str | os.PathLike[str], where: str | None = None) -> Character | None:
    """The character a scene file names (``Scene.character``: its file relative to the scene file's
    folder, opened with the scene's rig map), or None. ``ValueError`` naming ``where`` (default
    ``"SCENE: character"``) when the file cannot be read or its skeleton is not the scene's (its joint names
    differ), on one line.

    Only a file inside the scene file's folder is opened, as a glTF's URIs are read: a name that is
    absolute, has a drive, a backslash, a ``..`` part or a NUL, or that leads out of the folder
    (symlinks resolved), is refused before anything is opened."""
    if scene.character is None:
        return None
    at = f"{scene_path}: character" if where is None else where
    path = files.inside(Path(scene_path).parent, scene.character["file"], f"{at}.file")
    return scene_character_from(scene, lambda rig_map: load_character(path, rig_map), at)


def scene_character_from(scene: Any, read: Callable[[Any], Character], at: str) -> Character:
    """The character a scene names, made by ``read(rig_map)`` (from its file or an upload's bytes), checked to
    have the scene's joints; ``ValueError`` naming ``at`` on one line otherwise."""
    try:
        character = read(scene.character["rig_map"] or None)
    except ValueError as exc:
        raise ValueError(f"{at}: {exc}") from None
    if tuple(character.skeleton.names) != tuple(scene.skeleton.names):
        raise ValueError(f"{at} {scene.character['file']!r}: its joints are not the scene's")
    return character


def load_rig_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """A rig map from a JSON file: ``{"hand_l": "mixamorig:LeftHandMiddle1", ...}`` (role -> bone)."""
    return parse_rig_map(files.read_bytes(path), str(path))


def parse_rig_map(text: str | bytes, source: str = "rig map") -> dict[str, str]:
    """A rig map from JSON text; the roles are checked here, the bones when a character is loaded."""

    def build(data: Any) -> dict[str, str]:
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ValueError("expected an object of role -> bone name")
        unknown = [r for r in data if r not in rigs.ROLES]
        if unknown:
            raise ValueError(f"{unknown[0]}: unknown role; roles are {checks.names_list(rigs.ROLES)}")
        return dict(data)

    return files.parse_json(text, source, build)


def character_from_bytes(
    data: bytes, source: str = "glTF", base_dir: str | os.PathLike[str] | None = None, rig_map: Any = None
) -> Character:
    """A ``Character`` from glTF 2.0 content (GLB or JSON) (module docstring).

    Args:
        data: the file's bytes.
        source: its name, prefixed to messages.
        base_dir: the folder of external buffers and images (``None``: only embedded data).
        rig_map: role -> bone name, or ``None`` to recognise humanoid bone names; ``{}`` for none.

    Raises:
        ValueError: prefixed with ``source`` and naming the place: not glTF 2.0, truncated, no skin,
            bones that do not form one tree, non-finite or singular matrices, weights that do not sum
            to 1, data past the end of a buffer, a required extension that is not supported, ...
    """
    return read_named(source, lambda: _load(data, source, None if base_dir is None else Path(base_dir), rig_map))


def _load(data: bytes, source: str, base_dir: Path | None, given: Any) -> Character:
    doc, bin_chunk = _parse_container(data)
    refuse_compressed(doc)
    buffers = Buffers(doc, bin_chunk, base_dir)
    nodes = _list(doc, "nodes")
    node_parent = node_parents(doc)
    limits.check_nodes(node_parent)
    skins = _list(doc, "skins")
    if not skins:
        raise ValueError("no skin: the file has no rigged skeleton (skins is missing or empty)")
    limits.check_skins(skins)
    bone_nodes: list[int] = []
    slot: dict[int, int] = {}
    inverse: list[np.ndarray] = []
    for s, skin in enumerate(skins):
        joints = skin.get("joints") if isinstance(skin, dict) else None
        if not isinstance(joints, list) or not joints:
            raise ValueError(f"skins[{s}].joints: expected a list of node indices")
        joints = [_index(k, len(nodes), f"skins[{s}].joints[{m}]") for m, k in enumerate(joints)]
        if len(set(joints)) != len(joints):
            raise ValueError(f"skins[{s}].joints: a node is listed twice")
        inverse.append(_inverse_binds(doc, buffers, skin, len(joints), s))
        for k in joints:
            slot.setdefault(k, len(bone_nodes))
            bone_nodes += [k] if len(bone_nodes) == slot[k] else []
        limits.check_bones(len(bone_nodes), f"skins[{s}].joints")
    parent_bone, lone = _bone_parents(bone_nodes, slot, node_parent, nodes)
    world = node_worlds(nodes, node_parent)
    bind = np.array([world[k] for k in bone_nodes])
    for s, skin in reversed(list(enumerate(skins))):  # the first skin listing a bone gives its bind
        if skin.get("inverseBindMatrices") is not None:
            for m, k in enumerate(skin["joints"]):
                bind[slot[k]] = np.linalg.inv(inverse[s][m])
    names = tuple(unique_names(_node_name(nodes, k) for k in bone_nodes))
    rest = bind[:, :3, 3]
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    if not size > 0:
        raise ValueError("skins: every bone sits at one point; there is no skeleton to pose")
    notes: list[str] = []
    parent_of = {names[b]: (names[p] if p >= 0 else None) for b, p in enumerate(parent_bone)}
    convention, roles = rig_roles(given, names, parent_of, vrm_roles(doc, slot, names))
    kept, ends = kept_bones(names, parent_bone, roles, notes)
    riders = finger_bones(names, parent_bone, roles, kept) if ends else set()
    for b in lone:  # (not a joint to pose: its vertices stay where the file puts them)
        kept[b] = False
        notes.append(f"skins: {names[b]!r} stands apart from the skeleton (Blender's neutral bone): it stays fixed")
    driver, parents = drivers(rest, parent_bone, kept, max(RIDER_FRACTION * size, 2e-9))
    skeleton, effectors = build_skeleton(names, parents, driver, rest, roles, ends, notes, riders)
    joint_of = {b: k for k, b in enumerate(b for b in range(len(names)) if driver[b] == b)}
    driver = np.array([joint_of[d] if d >= 0 else -1 for d in driver])
    skin_list = tuple(
        Skin(np.array([slot[k] for k in skin["joints"]]), bind[[slot[k] for k in skin["joints"]]] @ inverse[s])
        for s, skin in enumerate(skins)
    )
    meshes = read_meshes(doc, buffers, [len(s.bones) for s in skin_list], notes)
    return Character(
        source, doc, bin_chunk, base_dir, "glb" if bin_chunk is not None or data[:4] == b"glTF" else "gltf",
        skeleton, names, np.array(bone_nodes), bind, driver, skin_list, tuple(meshes), roles, convention,
        effectors, tuple(notes), size,
    )  # fmt: skip


def refuse_compressed(doc: dict[str, Any]) -> None:
    """Refuse a document that requires compressed geometry (Draco, meshopt): it is not read."""
    for name in _list(doc, "extensionsRequired"):
        if name in _UNSUPPORTED:
            raise ValueError(f"extensionsRequired: {name} is not supported (export the file without it)")


def _node_name(nodes: list[Any], k: int) -> str:
    name = nodes[k].get("name")
    return name if isinstance(name, str) and name else f"node_{k}"


def node_worlds(nodes: list[Any], node_parent: list[int]) -> list[np.ndarray]:
    """The ``(4, 4)`` world matrix of every node (``node_parent``: ``node_parents``' answer), scene
    units; ``ValueError`` naming a node with a bad transform."""
    local = []
    for k, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise ValueError(f"nodes[{k}]: expected an object")
        try:
            with np.errstate(all="ignore"):  # (a huge transform: not finite, refused below)
                m = _local_matrix(node)
        except ValueError as exc:
            raise ValueError(f"nodes[{k}] ({checks.quoted(_node_name(nodes, k))}): {exc}") from None
        except TypeError:
            raise ValueError(f"nodes[{k}]: its matrix or translation, rotation, scale are malformed") from None
        if m.shape != (4, 4) or not np.all(np.isfinite(m)):
            raise ValueError(f"nodes[{k}] ({checks.quoted(_node_name(nodes, k))}): its transform is not finite")
        local.append(m)
    world: list[np.ndarray | None] = [None] * len(nodes)
    for k in range(len(nodes)):
        path = []
        while k >= 0 and world[k] is None:
            path.append(k)
            k = node_parent[k]
            if len(path) > len(nodes):
                raise ValueError(f"nodes[{path[0]}]: its ancestors form a cycle")
        m = world[k] if k >= 0 else np.eye(4)
        for j in reversed(path):
            m = world[j] = m @ local[j]  # type: ignore[operator]
    return world  # type: ignore[return-value]


def _inverse_binds(doc: dict[str, Any], buffers: Buffers, skin: dict[str, Any], count: int, s: int) -> np.ndarray:
    """``(count, 4, 4)`` inverse bind matrices of ``skins[s]`` (identities without them), checked."""
    if skin.get("inverseBindMatrices") is None:
        return np.tile(np.eye(4), (count, 1, 1))
    at = f"skins[{s}].inverseBindMatrices"
    flat = read_accessor(doc, buffers, skin["inverseBindMatrices"], at, limits.MAX_SKIN_ENTRIES)
    if flat.shape[1] != 16 or len(flat) < count or flat.dtype.kind != "f":
        raise ValueError(f"{at}: expected {count} FLOAT MAT4 matrices")
    m = flat[:count].reshape(count, 4, 4).transpose(0, 2, 1)
    det = np.linalg.det(m[:, :3, :3])
    if not np.all(np.abs(det) > 1e-12):
        raise ValueError(f"{at}[{int(np.argmin(np.abs(det)))}]: the matrix is singular")
    return m


def _bone_parents(
    bone_nodes: list[int], slot: dict[int, int], node_parent: list[int], nodes: list[Any]
) -> tuple[list[int], list[int]]:
    """Each bone's parent bone (nearest ancestor node that is a bone), checked to form one tree, and the
    lone bones beside it: roots without a bone below them (Blender's ``neutral_bone``, which holds the
    vertices no bone weighs), kept fixed."""
    parents = joint_parents(node_parent, slot, bone_nodes)
    has_kids = {p for p in parents if p >= 0}
    roots = [b for b, p in enumerate(parents) if p < 0]
    trees = [b for b in roots if b in has_kids]
    if len(roots) != 1 and len(trees) != 1:
        names = checks.names_list([_node_name(nodes, bone_nodes[b]) for b in roots], quote=True)
        raise ValueError(f"skins: the joints do not form one tree; roots: {names}")
    return parents, [b for b in roots if b not in has_kids] if len(roots) > 1 else []
