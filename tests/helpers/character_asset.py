"""A procedural rigged character for the tests: the humanoid preset's rest pose as a skin (Mixamo or
Blender bone names), a smooth-skinned body of capsules around the bones (4 influences per vertex), a
hat with a second skin (a sparse POSITION accessor), a small PNG texture, an idle animation, a camera,
extras and an extension: what a real exported character holds, written as the JSON of glTF 2.0.

``write_character(folder, name, convention, armature=..., face=..., external=...)`` writes a ``.glb``
(or, with ``external``, a ``.gltf`` with a ``.bin`` and a ``.png`` beside it) and returns its path.
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from fabrik3d import presets
from fabrik3d import rotations as rot

_P = presets.get("humanoid")
# Joints stored as a matrix rather than translation, rotation, scale (Blender names only).
MATRIX_JOINTS = ("spine", "forearm_l", "toe_end_r")


def _at(name: str, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> tuple[float, float, float]:
    p = _P.rest_positions[_P.index(name)]
    return (float(p[0] + dx), float(p[1] + dy), float(p[2] + dz))


_FINGER_KEYS = ("thumb", "index", "middle", "ring", "pinky")


def _finger_joints(s: str, convention: str) -> list[tuple[str, str | None, tuple[float, float, float]]]:
    """A hand's finger bones on the preset's finger rest pose: ``{finger}{k}_{s}``, k 1..3 (the middle's
    1 is the hand's ``middle1``), and an end bone 4 (not for Blender names: Rigify has none)."""
    out: list[tuple[str, str | None, tuple[float, float, float]]] = []
    for f in _FINGER_KEYS:
        parent = f"hand_{s}"
        for k, knuckle in ((1, "01"), (2, "02"), (3, "03"), (4, "end")):
            if k == 4 and convention == "blender":
                break
            key = f"{f}{k}_{s}"
            if key != f"middle1_{s}":
                out.append((key, parent, _at(f"{f}_{knuckle}_{s}")))
            parent = key
    return out


def _joints(face: bool, fingers: str = "") -> list[tuple[str, str | None, tuple[float, float, float]]]:
    """(key, parent key, rest position): the preset's rest pose with a skull joint and end joints; with
    ``face``, joints that sit on their parents: a face on the head, a pelvis bone per side on the hips
    that the thigh hangs from (as in Blender's metarig)."""
    out: list[tuple[str, str | None, tuple[float, float, float]]] = [
        ("hips", None, _at("pelvis")),
        ("spine", "hips", _at("spine_01")),
        ("spine1", "spine", _at("spine_02")),
        ("spine2", "spine1", _at("chest")),
        ("neck", "spine2", _at("neck")),
        ("head", "neck", (0.0, 1.60, 0.02)),
        ("head_end", "head", _at("head")),
    ]
    if face:
        out += [("face", "head", (0.0, 1.60, 0.02)), ("nose", "face", (0.0, 1.65, 0.11))]
    for s, sx in (("l", 1.0), ("r", -1.0)):
        out += [
            (f"shoulder_{s}", "spine2", _at(f"clavicle_{s}")),
            (f"arm_{s}", f"shoulder_{s}", _at(f"shoulder_{s}")),
            (f"forearm_{s}", f"arm_{s}", _at(f"elbow_{s}")),
            (f"hand_{s}", f"forearm_{s}", _at(f"wrist_{s}")),
            (f"middle1_{s}", f"hand_{s}", _at(f"hand_{s}")),
            *(
                _finger_joints(s, fingers)
                if fingers
                else [(f"middle4_{s}", f"middle1_{s}", _at(f"hand_{s}", dx=0.07 * sx))]
            ),
            *([(f"pelvis_{s}", "hips", _at("pelvis"))] if face else []),  # on the hips, as in Blender's metarig
            (f"upleg_{s}", f"pelvis_{s}" if face else "hips", _at(f"hip_{s}")),
            (f"leg_{s}", f"upleg_{s}", _at(f"knee_{s}")),
            (f"foot_{s}", f"leg_{s}", _at(f"ankle_{s}")),
            (f"toebase_{s}", f"foot_{s}", _at(f"toe_{s}")),
            (f"toe_end_{s}", f"toebase_{s}", _at(f"toe_{s}", dz=0.06)),
        ]
    return out


_MIXAMO = {
    "hips": "Hips", "spine": "Spine", "spine1": "Spine1", "spine2": "Spine2", "neck": "Neck", "head": "Head",
    "head_end": "HeadTop_End", "face": "face", "nose": "nose", "pelvis": "Pelvis",
    "shoulder": "Shoulder", "arm": "Arm", "forearm": "ForeArm", "hand": "Hand", "middle1": "HandMiddle1",
    "middle4": "HandMiddle4", "upleg": "UpLeg", "leg": "Leg", "foot": "Foot", "toebase": "ToeBase",
    "toe_end": "Toe_End",
}  # fmt: skip
_BLENDER = {
    "hips": "spine", "spine": "spine.001", "spine1": "spine.002", "spine2": "spine.003", "neck": "spine.004",
    "head": "spine.006", "head_end": "spine.006_end", "face": "face", "nose": "nose", "pelvis": "pelvis",
    "shoulder": "shoulder", "arm": "upper_arm", "forearm": "forearm", "hand": "hand", "middle1": "f_middle.01",
    "middle4": "f_middle.03", "upleg": "thigh", "leg": "shin", "foot": "foot", "toebase": "toe", "toe_end": "toe_end",
}  # fmt: skip


_MIXAMO.update(
    {f"{f}{k}": f"Hand{f.capitalize()}{k}" for f in _FINGER_KEYS for k in (1, 2, 3, 4) if f"{f}{k}" != "middle1"}
)
_BLENDER.update({f"{f}{k}": ("thumb" if f == "thumb" else f"f_{f}") + f".0{k}" for f in _FINGER_KEYS for k in (1, 2, 3)
                 if f"{f}{k}" != "middle1"})  # fmt: skip


def bone_name(key: str, convention: str) -> str:
    """The bone name of ``key`` in ``convention`` (``mixamo`` or ``blender``)."""
    base, side = (key[:-2], key[-1]) if key[-2:] in ("_l", "_r") else (key, "")
    if convention == "mixamo":
        name = _MIXAMO[base]
        return "mixamorig:" + ({"l": "Left", "r": "Right"}.get(side, "")) + name
    name = _BLENDER[base]
    return f"{name}.{side.upper()}" if side else name


def png(width: int = 4, height: int = 4) -> bytes:
    """A small RGBA checker PNG (zlib + struct)."""
    rows = b"".join(
        b"\0" + b"".join(bytes((200, 60 + 120 * ((x + y) % 2), 40, 255)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class _Pack:
    """The binary buffer: 4-byte aligned buffer views."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.views: list[dict[str, Any]] = []
        self.accessors: list[dict[str, Any]] = []

    def view(self, raw: bytes, **extra: Any) -> int:
        self.data += b"\0" * (-len(self.data) % 4)
        self.views.append({"buffer": 0, "byteOffset": len(self.data), "byteLength": len(raw), **extra})
        self.data += raw
        return len(self.views) - 1

    def accessor(self, values: np.ndarray, kind: str, view: int | None = None, offset: int = 0, **extra: Any) -> int:
        ctype = {np.float32: 5126, np.uint8: 5121, np.uint16: 5123}[values.dtype.type]
        if view is None:
            view = self.view(np.ascontiguousarray(values).tobytes())
        acc = {"bufferView": view, "componentType": ctype, "count": len(values), "type": kind, **extra}
        if offset:
            acc["byteOffset"] = offset
        self.accessors.append(acc)
        return len(self.accessors) - 1


def _frame(k: int) -> np.ndarray:
    """A joint's world rotation at rest (3, 3): turned a little differently for each joint."""
    q = rot.axis_angle(rot.unit((math.sin(k), 1.0, math.cos(2 * k))), 0.4 * math.sin(3 * k + 1))
    return rot.quat_to_matrix(np.array(q))


def _capsules(keys: list[str], parents: list[int], rest: np.ndarray) -> tuple[np.ndarray, ...]:
    """Open tubes around each bone, driven by the bone's parent joint and blended into the joints at
    its ends (up to 4 influences): ``(positions, normals, uvs, joints, weights, indices)``."""
    rings, segs = 10, 16
    pos, nor, uv, jo, we, idx = [], [], [], [], [], []
    for k, p in enumerate(parents):
        if p < 0 or np.linalg.norm(rest[k] - rest[p]) < 1e-9:  # a joint on its parent has no bone
            continue
        a, b = rest[p], rest[k]
        d = (b - a) / np.linalg.norm(b - a)
        u = np.cross(d, (0.0, 0.0, 1.0) if abs(d[2]) < 0.9 else (1.0, 0.0, 0.0))
        u /= np.linalg.norm(u)
        w = np.cross(d, u)
        r = 0.09 if keys[p] in ("hips", "spine", "spine1", "spine2") else 0.035
        gp = parents[p]
        base = len(pos)
        for i in range(rings):
            t = i / (rings - 1)
            c = a + t * (b - a)
            infl = {p: 1.0}
            if t > 0.7:
                infl[k] = 0.5 * (t - 0.7) / 0.3
            if t < 0.3 and gp >= 0:
                infl[gp] = 0.4 * (0.3 - t) / 0.3
            if 0.4 < t < 0.6 and gp >= 0 and gp != 0:
                infl[0] = 0.05  # a fourth, small influence of the hips
            js = list(infl)
            ws = np.array([infl[j] for j in js])
            ws /= ws.sum()
            for s in range(segs):
                ang = 2 * math.pi * s / segs
                n = math.cos(ang) * u + math.sin(ang) * w
                pos.append(c + r * n)
                nor.append(n)
                uv.append((s / segs, t))
                jo.append(js + [0] * (4 - len(js)))
                we.append(list(ws) + [0.0] * (4 - len(js)))
        for i in range(rings - 1):
            for s in range(segs):
                a0, a1 = base + i * segs + s, base + i * segs + (s + 1) % segs
                b0, b1 = a0 + segs, a1 + segs
                idx += [a0, a1, b1, a0, b1, b0]
    weights = np.array(we, np.float32)
    top = np.argmax(weights, axis=1)  # the float32 sums made as close to 1 as they get
    weights[np.arange(len(weights)), top] += np.float32(1.0) - weights.sum(axis=1, dtype=np.float32)
    return (
        np.array(pos, np.float32), np.array(nor, np.float32), np.array(uv, np.float32),
        np.array(jo, np.uint8), weights, np.array(idx, np.uint16),
    )  # fmt: skip


def build_character(
    convention: str = "mixamo", *, armature: bool = False, face: bool = False, neutral: bool = False,
    fingers: bool = False,
) -> tuple[dict, bytes]:  # fmt: skip
    """The glTF document (JSON) and its binary buffer (module docstring). With ``neutral``, as Blender
    writes a skin with a vertex no bone weighs: a ``neutral_bone`` joint beside the skeleton (under
    the armature) holds the body's first vertex, weight 1."""
    joints = _joints(face, convention if fingers else "")
    keys = [j[0] for j in joints]
    parents = [keys.index(j[1]) if j[1] else -1 for j in joints]
    rest = np.array([j[2] for j in joints])
    n = len(keys)
    scale = 0.01 if armature else 1.0
    world = np.zeros((n, 4, 4))
    for k in range(n):
        world[k, :3, :3] = _frame(k) * scale
        world[k, :3, 3] = rest[k]
        world[k, 3, 3] = 1.0
    arm = np.eye(4)
    if armature:  # an FBX-like armature: turned about X, 0.01 scale, moved
        arm[:3, :3] = rot.quat_to_matrix(np.array(rot.axis_angle((1.0, 0.0, 0.0), math.pi / 2))) * 0.01
        arm[:3, 3] = (0.1, 0.0, 0.05)
    helper = np.eye(4)
    helper[:3, 3] = (0.0, 0.02, 0.01)
    nodes: list[dict[str, Any]] = []
    for k in range(n):
        nodes.append({"name": bone_name(keys[k], convention)})
    holder = {}  # joint -> the node it hangs from
    if convention == "blender":  # a helper node between the chest and the left clavicle
        nodes.append({"name": "shoulder_helper.L", "translation": helper[:3, 3].tolist(), "children": []})
        holder[keys.index("shoulder_l")] = len(nodes) - 1
    root_parent = None
    if armature:
        nodes.append({"name": "Armature", "children": [], "extras": {"tool": "fbx"}})
        root_parent = len(nodes) - 1
        nodes[root_parent]["translation"] = arm[:3, 3].tolist()
        nodes[root_parent]["rotation"] = list(rot.axis_angle((1.0, 0.0, 0.0), math.pi / 2))
        nodes[root_parent]["scale"] = [0.01, 0.01, 0.01]
    for k in range(n):
        p = parents[k]
        if k in holder:
            h = holder[k]
            nodes[keys.index("spine2")].setdefault("children", []).append(h)
            nodes[h]["children"].append(k)
            above = world[p] @ helper
        elif p >= 0:
            nodes[p].setdefault("children", []).append(k)
            above = world[p]
        else:
            above = arm
            if root_parent is not None:
                nodes[root_parent]["children"].append(k)
        local = np.linalg.inv(above) @ world[k]
        s = np.linalg.norm(local[:3, :3], axis=0)
        nodes[k]["translation"] = local[:3, 3].tolist()
        q = _quat(local[:3, :3] / s)
        nodes[k]["rotation"] = q
        if not np.allclose(s, 1.0):
            nodes[k]["scale"] = s.tolist()
        if convention == "blender" and keys[k] in MATRIX_JOINTS:  # as some tools write them
            for key in ("translation", "rotation", "scale"):
                nodes[k].pop(key, None)
            nodes[k]["matrix"] = local.T.reshape(-1).tolist()
    pack = _Pack()
    position, normal, uv, jo, we, idx = _capsules(keys, parents, rest)
    skin_joints = list(range(n))
    bind_worlds = world
    if neutral:
        nodes.append({"name": "neutral_bone"})
        skin_joints.append(len(nodes) - 1)
        if root_parent is not None:
            nodes[root_parent]["children"].append(len(nodes) - 1)
        bind_worlds = np.concatenate([world, arm[None]])
        jo, we = jo.copy(), we.copy()
        jo[0], we[0] = (n, 0, 0, 0), (1.0, 0.0, 0.0, 0.0)
    interleaved = np.concatenate([position, normal], axis=1).astype(np.float32)
    pn = pack.view(interleaved.tobytes(), byteStride=24, target=34962)
    mn, mx = position.min(axis=0).tolist(), position.max(axis=0).tolist()
    body = {
        "POSITION": pack.accessor(position, "VEC3", view=pn, min=mn, max=mx),
        "NORMAL": pack.accessor(normal, "VEC3", view=pn, offset=12),
        "TEXCOORD_0": pack.accessor(uv, "VEC2"),
        "JOINTS_0": pack.accessor(jo, "VEC4"),
        "WEIGHTS_0": pack.accessor(we, "VEC4"),
    }
    indices = pack.accessor(idx, "SCALAR")
    inverse = np.linalg.inv(bind_worlds).transpose(0, 2, 1).reshape(len(bind_worlds), 16).astype(np.float32)
    ibm = pack.accessor(inverse, "MAT4")
    # the hat: a ring of 8 + a tip over the head, on a second skin (head, neck); sparse: the tip raised
    head = rest[keys.index("head")]
    hat = [
        head + np.array((0.1 * math.cos(a), 0.1, 0.1 * math.sin(a)))
        for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)
    ]
    hat_base = np.array([*hat, head + np.array((0.0, 0.15, 0.0))], np.float32)
    hat_real = hat_base.copy()
    hat_real[8, 1] += 0.05
    hat_j = np.array([[0, 1, 0, 0]] * 9, np.uint8)
    hat_w = np.array([[0.75, 0.25, 0.0, 0.0]] * 9, np.float32)
    hat_idx = np.array([i for k in range(8) for i in (k, 8, (k + 1) % 8)], np.uint16)
    sparse_idx = pack.view(np.array([8], np.uint32).tobytes())
    sparse_val = pack.view(hat_real[8:].tobytes())
    hat_pos = pack.accessor(
        hat_base, "VEC3", min=hat_real.min(axis=0).tolist(), max=hat_real.max(axis=0).tolist(),
        sparse={"count": 1, "indices": {"bufferView": sparse_idx, "componentType": 5125},
                "values": {"bufferView": sparse_val}},
    )  # fmt: skip
    hat_skin = [keys.index("head"), keys.index("neck")]
    hat_ibm = pack.accessor(inverse[hat_skin], "MAT4")
    # an idle animation of the file's own: the neck nods
    t_idle = pack.accessor(np.array([[0.0], [1.0]], np.float32), "SCALAR", min=[0.0], max=[1.0])
    nod = rot.mul(tuple(nodes[keys.index("neck")]["rotation"]), rot.axis_angle((1.0, 0.0, 0.0), 0.2))
    q_idle = pack.accessor(np.array([nodes[keys.index("neck")]["rotation"], nod], np.float32), "VEC4")
    image = png()
    mesh_node, hat_node = len(nodes), len(nodes) + 1
    nodes += [
        {"name": "Body", "mesh": 0, "skin": 0, "extras": {"id": 7}},
        {"name": "Hat", "mesh": 1, "skin": 1},
        {"name": "Camera", "camera": 0, "translation": [0.0, 1.2, 3.0]},
    ]
    roots = [root_parent if root_parent is not None else 0, mesh_node, hat_node, len(nodes) - 1]
    if neutral and root_parent is None:
        roots.append(skin_joints[-1])
    doc: dict[str, Any] = {
        "asset": {"version": "2.0", "generator": "fabrik3d tests (character_asset)", "extras": {"author": "tests"}},
        "extensionsUsed": ["KHR_materials_emissive_strength"],
        "scene": 0,
        "scenes": [{"name": "Scene", "nodes": roots}],
        "nodes": nodes,
        "skins": [
            {"name": "Armature", "joints": skin_joints, "inverseBindMatrices": ibm},
            {"name": "HatSkin", "joints": hat_skin, "inverseBindMatrices": hat_ibm},
        ],
        "meshes": [
            {"name": "Body", "primitives": [{"attributes": body, "indices": indices, "material": 0}]},
            {
                "name": "Hat",
                "primitives": [
                    {
                        "attributes": {
                            "POSITION": hat_pos,
                            "JOINTS_0": pack.accessor(hat_j, "VEC4"),
                            "WEIGHTS_0": pack.accessor(hat_w, "VEC4"),
                        },
                        "indices": pack.accessor(hat_idx, "SCALAR"),
                        "material": 1,
                    }
                ],
            },
        ],
        "materials": [
            {
                "name": "Skin",
                "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "baseColorFactor": [1, 0.9, 0.8, 1]},
                "emissiveFactor": [0.1, 0.0, 0.0],
                "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 2}},
            },
            {"name": "Felt", "pbrMetallicRoughness": {"baseColorFactor": [0.2, 0.2, 0.6, 1.0]}},
        ],
        "textures": [{"source": 0, "sampler": 0}],
        "samplers": [{"magFilter": 9729, "minFilter": 9987}],
        "images": [{"bufferView": pack.view(image), "mimeType": "image/png"}],
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}],
        "animations": [
            {
                "name": "idle",
                "channels": [{"sampler": 0, "target": {"node": keys.index("neck"), "path": "rotation"}}],
                "samplers": [{"input": t_idle, "output": q_idle}],
            }
        ],
    }
    doc["accessors"], doc["bufferViews"] = pack.accessors, pack.views
    return doc, bytes(pack.data)


def _quat(m: np.ndarray) -> list[float]:
    from fabrik3d.io.character_export import matrix_quaternions

    return matrix_quaternions(m[None])[0].tolist()


def write_character(
    folder: Path, name: str, convention: str = "mixamo", *, armature: bool = False, face: bool = False,
    external: bool = False, neutral: bool = False, fingers: bool = False,
) -> Path:  # fmt: skip
    """Write the character (``build_character``; with ``fingers``, five fingers a hand) as
    ``folder/name.glb``, or with ``external`` as
    ``name.gltf`` with ``name.bin`` and its texture ``name.png`` beside it. Returns the path."""
    doc, blob = build_character(convention, armature=armature, face=face, neutral=neutral, fingers=fingers)
    if external:
        view = doc["images"][0].pop("bufferView")
        doc["images"][0] = {"uri": f"{name}.png"}
        (folder / f"{name}.png").write_bytes(png())
        doc["bufferViews"][view]["byteLength"] = 0
        doc["bufferViews"].pop(view) if view == len(doc["bufferViews"]) - 1 else None
        doc["buffers"] = [{"byteLength": len(blob), "uri": f"{name}.bin"}]
        (folder / f"{name}.bin").write_bytes(blob)
        path = folder / f"{name}.gltf"
        path.write_text(json.dumps(doc))
        return path
    path = folder / f"{name}.glb"
    path.write_bytes(glb_bytes(doc, blob))
    return path


def glb_bytes(doc: dict, blob: bytes) -> bytes:
    """A GLB of ``doc`` with ``blob`` as its buffer 0 (``doc`` gets its ``buffers``)."""
    doc["buffers"] = [{"byteLength": len(blob)}]
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    data = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(blob), 0x004E4942) + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(data)) + data


def node_world(nodes: list[dict], k: int) -> np.ndarray:
    """The world matrix of glTF node ``k`` (TRS or matrix, through its parents)."""
    parent = {c: i for i, node in enumerate(nodes) for c in node.get("children", [])}
    out = np.eye(4)
    while k is not None:
        node, m = nodes[k], np.eye(4)
        if "matrix" in node:
            m = np.array(node["matrix"], dtype=float).reshape(4, 4).T
        else:
            m[:3, :3] = rot.quat_to_matrix(np.array(node.get("rotation", [0, 0, 0, 1]))) * node.get("scale", [1, 1, 1])
            m[:3, 3] = node.get("translation", [0, 0, 0])
        out = m @ out
        k = parent.get(k)
    return out
