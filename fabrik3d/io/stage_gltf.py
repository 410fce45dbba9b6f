"""glTF 2.0 export of a stage: every figure (its armature and its skinned sticks or mannequin) and every prop
in one file, a pose or an animation.

Each figure is ``fabrik3d.io.gltf``'s document of one skeleton (the same joint nodes, skin and mesh),
with its root joint the child of a node named after the figure that holds its ``Placement`` (so its
joints' world frames are the stage's); its skinned mesh node, named ``"<figure> body"``, is a root of
the scene. A prop is a node named after it with a mesh of its shape (``fabrik3d.model.props.prop_mesh``,
its colour as the material) scaled by its size: a free prop at the scene's root with its world
transform, a held one the child of its joint's node with its transform relative to that joint (it
follows the joint in every frame, as a Blender child of a bone does). An animation has the clip
``"take"``, that keys every figure's joints at the same times. A ``"mesh"`` prop's mesh is its file's
triangles (``fabrik3d.io.prop_file.prop_surface``, found through ``Stage.mesh_files``: centred and stretched
to the prop's size as its box is), or its bounding box where the file is not found (a
``MissingMeshWarning``).

A figure with a character (``Figure.character``) is written with its own skin instead of the sticks or the
mannequin: the character's document posed or keyed as its own export does it, merged in
(``fabrik3d.io.stage_character``); a prop it holds is placed in its bone's node so that it follows the joint.
The character's file's own animations are clips of their own, ``"<figure> <name>"``, after ``"take"`` in an animation;
a pose has none (Blender's importer would show a clip's first frame on the bones it keys, not the pose).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from fabrik3d import __version__
from fabrik3d.io import files, gltf
from fabrik3d.io.gltf_format import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER
from fabrik3d.io.prop_file import prop_surface
from fabrik3d.io.stage import Figure, Stage
from fabrik3d.io.stage_character import KINDS, frame_matrix, merge_character, node_transform
from fabrik3d.io.take import Take, check_pose
from fabrik3d.model.placement import Transform
from fabrik3d.model.props import Prop

__all__ = ["export_stage_animation", "export_stage_pose", "stage_animation_glb_bytes", "stage_pose_glb_bytes"]


def stage_pose_glb_bytes(stage: Stage, poses: Sequence[Any], mannequin: bool = False) -> bytes:
    """A ``.glb`` of one pose of ``stage``: ``poses[i]`` is figure ``i``'s (``.positions`` ``(n, 3)`` and
    ``.rotations`` ``(n, 4)``, in its own coordinates: ``StagePose.poses``)."""
    return gltf._glb(*_pose_document(stage, poses, mannequin))


def export_stage_pose(
    stage: Stage, poses: Sequence[Any], path: str | os.PathLike[str], mannequin: bool = False
) -> None:
    """Write one pose of ``stage`` to a ``.glb`` or ``.gltf`` file, atomically (``stage_pose_glb_bytes``)."""
    encode = gltf._encoder(path)
    files.write_atomic(path, encode(*_pose_document(stage, poses, mannequin)))


def stage_animation_glb_bytes(stage: Stage, takes: Sequence[Take], mannequin: bool = False) -> bytes:
    """A ``.glb`` of an animation of ``stage``: ``takes[i]`` is figure ``i``'s, all at the same times."""
    return gltf._glb(*_animation_document(stage, takes, mannequin))


def export_stage_animation(
    stage: Stage, takes: Sequence[Take], path: str | os.PathLike[str], mannequin: bool = False, kind: str | None = None
) -> None:
    """Write an animation of ``stage`` to a ``.glb`` or ``.gltf`` file, atomically (``stage_animation_glb_bytes``);
    ``kind`` (``".glb"`` or ``".gltf"``) where ``path``'s name does not end in it (a staged file)."""
    encode = gltf._encoder(path if kind is None else f"file{kind}")
    files.write_atomic(path, encode(*_animation_document(stage, takes, mannequin)))


def _pose_document(stage: Stage, poses: Sequence[Any], mannequin: bool) -> tuple[dict[str, Any], bytes]:
    if len(poses) != len(stage.figures):
        raise ValueError(f"poses: expected {len(stage.figures)} (one per figure), got {len(poses)}")
    rigs: list[Any] = []
    for i, (f, pose) in enumerate(zip(stage.figures, poses)):
        if not (hasattr(pose, "positions") and hasattr(pose, "rotations")):
            raise ValueError(f"poses[{i}]: expected a SolveResult, got {type(pose).__name__}")
        sk = f.scene.skeleton
        checked = check_pose(sk, pose.positions, pose.rotations)
        rigs.append(checked if f.character is not None else gltf.local_transforms(sk, *checked))
    blob = gltf._Blob()
    doc, *_ = _document(blob, stage, rigs, mannequin)  # (a pose: the characters' own clips are an animation's)
    return doc, blob.data()


def _animation_document(stage: Stage, takes: Sequence[Take], mannequin: bool) -> tuple[dict[str, Any], bytes]:
    if len(takes) != len(stage.figures):
        raise ValueError(f"takes: expected {len(stage.figures)} (one per figure), got {len(takes)}")
    for i, (f, take) in enumerate(zip(stage.figures, takes)):
        if not isinstance(take, Take) or take.skeleton.names != f.scene.skeleton.names:
            raise ValueError(f"takes[{i}]: expected a Take of figure {f.name!r}'s skeleton")
        if not np.array_equal(take.times, takes[0].times):
            raise ValueError(f"takes[{i}]: its times are not takes[0]'s; a stage's figures are keyed at the same times")
    times = takes[0].times.astype(np.float32)
    if len(times) > 1 and not np.all(np.diff(times) > 0):
        raise ValueError("times: not strictly increasing once stored as float32; space the frames further apart")
    rest = [t if f.character is not None else gltf.local_transforms(t.skeleton, t.skeleton.rest_positions,
            t.skeleton.rest_frames) for f, t in zip(stage.figures, takes)]  # fmt: skip
    blob = gltf._Blob()
    doc, joints, keyed, clips = _document(blob, stage, rest, mannequin)
    key_times = blob.add(times[:, None], "SCALAR", min_max=True)
    samplers: list[dict[str, Any]] = []
    channels: list[dict[str, Any]] = []
    for take, nodes, rig, own in zip(takes, joints, rest, keyed):
        if own is not None:  # (a character's keys: its own export's)
            channels += [{**c, "sampler": c["sampler"] + len(samplers)} for c in own["channels"]]
            samplers += own["samplers"]
            continue
        sk, t0 = take.skeleton, rig[0]
        t, q = gltf.local_transforms(sk, take.positions, take.rotations)
        for k in range(1, len(q)):  # continuous signs, key to key
            q[k][np.sum(q[k] * q[k - 1], axis=1) < 0] *= -1.0
        for j in range(len(sk)):
            moved = np.abs(t[:, j] - t0[j]).max() > gltf._OFFSET_TOLERANCE * sk.bone_lengths[j]
            keys = [("rotation", q[:, j], "VEC4")] + ([("translation", t[:, j], "VEC3")] if moved else [])
            for path, values, kind in keys:
                channels.append({"sampler": len(samplers), "target": {"node": nodes[j], "path": path}})
                samplers.append({"input": key_times, "interpolation": "LINEAR", "output": blob.add(values, kind)})
    doc["animations"] = [{"name": "take", "channels": channels, "samplers": samplers}, *clips]
    doc["accessors"] = blob.accessors
    doc["bufferViews"] = blob.views
    return doc, blob.data()


def _document(
    blob: Any, stage: Stage, rigs: Sequence[Any], mannequin: bool
) -> tuple[dict[str, Any], list[list[int]], list[dict[str, Any] | None], list[dict[str, Any]]]:
    """The stage's nodes, skins, meshes and scene. ``rigs[i]``: a plain figure's joints' local ``(t, q)``; a
    character figure's pose (``(positions, rotations)``) or ``Take``. Returns the document, each figure's
    joints' nodes, each character figure's keys (``stage_character.Merged.animation``; else None) and the
    characters' own clips (``Merged.clips``: an animation writes them after its take, a pose not at all)."""
    parts: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    nodes = parts["nodes"]
    roots: list[int] = []
    joints: list[list[int]] = []
    keyed: list[dict[str, Any] | None] = []
    holds: list[np.ndarray | None] = []
    used: list[str] = []
    required: list[str] = []
    clips: list[dict[str, Any]] = []  # (the characters' own animations)
    for f, rig in zip(stage.figures, rigs):
        if f.character is not None:
            take = rig if isinstance(rig, Take) else None
            merged = merge_character(parts, blob, f.character, f.name, rig if take is None else None, take)
            children, body = merged.children, merged.roots
            joints.append(merged.joints)
            keyed.append(merged.animation)
            holds.append(merged.holds)
            clips += merged.clips
            used += [e for e in merged.extensions[0] if e not in used]
            required += [e for e in merged.extensions[1] if e not in required]
        else:
            children, body, own = _plain(parts, blob, f, rig, mannequin)
            joints.append(own)
            keyed.append(None)
            holds.append(None)
        figure = {"name": f.name, "translation": f.placement.position.tolist(),
                  "rotation": f.placement.rotation.tolist(), "children": children}  # fmt: skip
        nodes.append(figure)
        roots += [len(nodes) - 1, *body]
    for prop in stage.props:
        parts["meshes"].append(_prop_mesh(blob, prop, len(parts["materials"]), stage))
        colour = [*prop.colour.tolist(), 1.0]
        parts["materials"].append({"name": f"{prop.name} colour", "pbrMetallicRoughness": {
            "baseColorFactor": colour, "metallicFactor": 0.0, "roughnessFactor": 0.8}})  # fmt: skip
        t = prop.transform
        node: dict[str, Any] = {"name": prop.name, "mesh": len(parts["meshes"]) - 1}
        if prop.parent is None:
            nodes.append({**node, **_trs(t)})
            roots.append(len(nodes) - 1)
            continue
        i = next(k for k, f in enumerate(stage.figures) if f.name == prop.parent.figure)
        j = stage.figures[i].scene.skeleton.names.index(prop.parent.joint)
        hold = holds[i]  # (a character's bone node is not its joint's frame: the prop is placed in it)
        placed = _trs(t) if hold is None else node_transform(hold[j] @ frame_matrix(t.position, t.rotation, t.scale))
        nodes.append({**node, **placed})
        joint = nodes[joints[i][j]]
        joint["children"] = [*joint.get("children", []), len(nodes) - 1]
    doc = {
        "asset": {"version": "2.0", "generator": f"fabrik3d {__version__}"},
        **({"extensionsUsed": used} if used else {}),
        **({"extensionsRequired": required} if required else {}),
        "scene": 0,
        "scenes": [{"name": "stage", "nodes": roots}],
        **{kind: items for kind, items in parts.items() if items},
        "accessors": blob.accessors,
        "bufferViews": blob.views,
    }
    return doc, joints, keyed, clips


def _plain(
    parts: dict[str, list[Any]], blob: Any, f: Figure, rig: tuple[np.ndarray, np.ndarray], mannequin: bool
) -> tuple[list[int], list[int], list[int]]:
    """A plain figure's armature and its skinned sticks or mannequin (``fabrik3d.io.gltf``'s) appended to
    ``parts``; returns its root joint's node (the figure node's child), its body's node (a root) and its
    joints' nodes."""
    nodes = parts["nodes"]
    part = gltf._rig(blob, f.scene.skeleton, *rig, mannequin)
    off, n = len(nodes), len(f.scene.skeleton)
    for node in part["nodes"]:
        node = dict(node)
        if "children" in node:
            node["children"] = [c + off for c in node["children"]]
        if "mesh" in node:
            node.update(name=f"{f.name} body", mesh=node["mesh"] + len(parts["meshes"]),
                        skin=node["skin"] + len(parts["skins"]))  # fmt: skip
        nodes.append(node)
    for skin in part["skins"]:
        parts["skins"].append({**skin, "name": f"{f.name} skin", "joints": [j + off for j in skin["joints"]],
                               "skeleton": skin["skeleton"] + off})  # fmt: skip
    materials = parts["materials"]
    for mesh in part["meshes"]:
        prims = [{**p, **({"material": p["material"] + len(materials)} if "material" in p else {})}
                 for p in mesh["primitives"]]  # fmt: skip
        parts["meshes"].append({**mesh, "name": f"{f.name} {mesh['name']}", "primitives": prims})
    materials += part.get("materials", [])
    return [off + f.scene.skeleton.root], [off + n], list(range(off, off + n))


def _trs(t: Transform) -> dict[str, Any]:
    return {"translation": t.position.tolist(), "rotation": t.rotation.tolist(), "scale": [t.scale] * 3}


def _prop_mesh(blob: Any, prop: Prop, material: int, stage: Stage) -> dict[str, Any]:
    """A prop's shape as a glTF mesh (a ``"mesh"`` prop's file's: ``prop_surface``)."""
    vertices, normals, triangles = prop_surface(prop, stage.mesh_files)
    index_type = np.uint16 if len(vertices) <= 65535 else np.uint32
    primitive = {
        "attributes": {
            "POSITION": blob.add(vertices, "VEC3", min_max=True, target=ARRAY_BUFFER),
            "NORMAL": blob.add(normals, "VEC3", target=ARRAY_BUFFER),
        },
        "indices": blob.add(triangles.reshape(-1, 1).astype(index_type), "SCALAR", target=ELEMENT_ARRAY_BUFFER),
        "material": material,
    }
    return {"name": f"{prop.name} shape", "primitives": [primitive]}
