"""glTF export and import, checked with independent tools.

Every exported file (a pose and a take of every preset and of an imported rigged
character, as .glb and .gltf) goes through the Khronos glTF validator and through
three.js's GLTFLoader under node, each run once for all files (tests/js/*.mjs).
three.js's bones must sit where the solver put the joints, turned as the solver's
frames, at every key time; its skinning must carry the mesh with them.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import JS_DIR, require_node_modules

import fabrik3d
from fabrik3d import cli
from fabrik3d import rotations as rot
from fabrik3d.io import gltf
from fabrik3d.io.scene import Scene, save_scene
from fabrik3d.io.take import Take, save_take
from fabrik3d.model import presets
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.rig import pose_frames

POSITION_TOL = 1e-5  # scene units
ANGLE_TOL = 1e-4  # radians
FRAMES = 12
FPS = 24.0
ITERATIONS = 20  # enough to move every joint; keeps the solves of unreachable, limited targets quick


# -- cases: real solves ------------------------------------------------------------------------------------------


def _pose_targets(skeleton: Skeleton, name: str) -> dict[str, np.ndarray]:
    """Several targets that pull the whole skeleton well away from its rest pose."""
    if name in ("humanoid", "plain_humanoid"):
        return {
            "hand_l": np.array([0.45, 1.05, 0.35]),
            "hand_r": np.array([-0.35, 1.75, 0.25]),
            "toe_l": np.array([0.3, 0.25, 0.35]),
            "head": np.array([0.08, 1.66, 0.12]),
        }
    if name == "robot_arm":
        return {"tool": np.array([0.35, 0.45, 0.35])}
    if name == "octopus":
        out = {}
        for k, tip in enumerate(n for n in skeleton.end_effectors if n.startswith("tentacle")):
            p = skeleton.rest_positions[skeleton.index(tip)]
            out[tip] = p + np.array([0.1 * math.cos(k), 0.2 + 0.05 * k, 0.1 * math.sin(k)])
        return out
    # an imported character: each effector pulled up, out and forward
    return {
        e: skeleton.rest_positions[skeleton.index(e)] + np.array([0.15, 0.2, 0.1]) * (1 + k)
        for k, e in enumerate(skeleton.end_effectors[:3])
    }


def _take_frames(skeleton: Skeleton, name: str) -> list[fabrik3d.SolveResult]:
    """Warm-started solves along smooth paths around the pose targets; the root moves too."""
    base = _pose_targets(skeleton, name)
    root = skeleton.rest_positions[skeleton.root]
    frames, positions = [], None
    for k in range(FRAMES):
        a = 2.0 * math.pi * k / FRAMES
        targets = {
            e: p + 0.12 * np.array([math.cos(a + i), math.sin(2 * a + i), math.sin(a + i)])
            for i, (e, p) in enumerate(base.items())
        }
        root_target = root + np.array([0.05 * math.sin(a), -0.04 * (1 - math.cos(a)), 0.0])
        result = fabrik3d.solve(
            skeleton, targets, positions=positions, root_target=root_target, max_iterations=ITERATIONS
        )
        positions = result.positions
        frames.append(result)
    return frames


# -- an imported character, written here as another tool would --------------------------------------------------

# name, parent joint, world position in the armature, and whether the node is stored as a matrix
RIG = [
    ("LeftHand", "LeftArm", (0.62, 1.42, 0.06), False),
    ("Hips", None, (0.0, 1.0, 0.0), True),
    ("Spine", "Hips", (0.0, 1.3, 0.02), False),
    ("Head Top", "Spine", (0.0, 1.72, 0.0), True),
    ("mixamorig:LeftLeg", "Hips", (0.1, 0.52, 0.0), False),
    ("LeftFoot", "mixamorig:LeftLeg", (0.1, 0.06, 0.09), True),
    ("RightLeg", "Hips", (-0.1, 0.52, 0.0), True),
    ("RightFoot", "RightLeg", (-0.1, 0.06, 0.09), False),
    ("LeftArm", "Spine", (0.32, 1.45, 0.0), False),  # hangs from Spine through a non-joint helper node
]
ARMATURE = np.array(  # a non-joint root node: turned, scaled and moved
    [
        [0.5 * math.cos(0.4), 0.0, 0.5 * math.sin(0.4), 0.3],
        [0.0, 0.5, 0.0, 0.1],
        [-0.5 * math.sin(0.4), 0.0, 0.5 * math.cos(0.4), -0.2],
        [0, 0, 0, 1],
    ]
)


def _random_quat(rng: np.random.Generator) -> rot.Quat:
    q = rng.normal(size=4)
    return tuple((q / np.linalg.norm(q)).tolist())


def _matrix(q: rot.Quat, t: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rot.quat_to_matrix(np.array(q))
    m[:3, 3] = t
    return m


def write_rig(folder: Path, *, inverse_bind: bool = True, name: str = "rig.gltf") -> tuple[Path, np.ndarray]:
    """A rigged character as .gltf + .bin: joints not in parent order, arbitrary joint frames,
    a helper node between two joints, some nodes as matrices; returns (path, expected world positions)."""
    rng = np.random.default_rng(7)
    names = [r[0] for r in RIG]
    frames = {r[0]: _random_quat(rng) for r in RIG}
    joint_world = {r[0]: _matrix(frames[r[0]], np.array(r[2])) for r in RIG}  # in the armature
    helper_local = _matrix(rot.IDENTITY, np.array([0.08, 0.1, 0.0]))
    helper_world = joint_world["Spine"] @ helper_local
    nodes: list[dict] = [{"name": "Armature", "matrix": ARMATURE.T.reshape(-1).tolist(), "children": []}]
    node_of = {n: k + 1 for k, n in enumerate(names)}
    helper = len(names) + 1
    for joint, parent, _, as_matrix in RIG:
        above = {"Hips": np.eye(4), "LeftArm": helper_world}.get(joint, joint_world.get(parent or "", np.eye(4)))
        local = np.linalg.inv(above) @ joint_world[joint]
        node: dict = {"name": joint}
        if as_matrix:
            node["matrix"] = local.T.reshape(-1).tolist()
        else:
            node["translation"] = local[:3, 3].tolist()
            node["rotation"] = list(rot.mul(rot.conj(frames[parent]), frames[joint]) if parent else frames[joint])
        nodes.append(node)
    nodes.append({"name": "LeftShoulderHelper", "translation": [0.08, 0.1, 0.0]})
    nodes[node_of["Spine"]]["children"] = [helper]
    for joint, parent, _, _ in RIG:
        holder = 0 if parent is None else helper if joint == "LeftArm" else node_of[parent]
        nodes[holder].setdefault("children", []).append(node_of[joint])
    world = np.array([ARMATURE @ joint_world[n] for n in names])
    ibm = np.linalg.inv(world).transpose(0, 2, 1).reshape(-1).astype("<f4").tobytes()
    doc: dict = {
        "asset": {"version": "2.0", "generator": "fabrik3d tests"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "skins": [{"joints": [node_of[n] for n in names]}],
    }
    if inverse_bind:
        bin_name = name.replace(".gltf", ".bin")
        (folder / bin_name).write_bytes(ibm)
        doc["buffers"] = [{"byteLength": len(ibm), "uri": bin_name}]
        doc["bufferViews"] = [{"buffer": 0, "byteLength": len(ibm)}]
        doc["accessors"] = [{"bufferView": 0, "componentType": 5126, "count": len(names), "type": "MAT4"}]
        doc["skins"][0]["inverseBindMatrices"] = 0
    path = folder / name
    path.write_text(json.dumps(doc, indent=1))
    return path, world[:, :3, 3]


# -- the exported files ------------------------------------------------------------------------------------------


@dataclass
class Case:
    skeleton: Skeleton
    path: Path
    positions: np.ndarray  # (m, n, 3) what the solver gave, one frame for a pose
    rotations: np.ndarray  # (m, n, 4)
    times: np.ndarray | None  # (m,) for a take


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    return write_rig(tmp_path_factory.mktemp("rig"))


SKELETONS = (*presets.names(), "plain_humanoid", "imported")
ALSO_GLTF = {"humanoid_pose", "humanoid_take", "imported_pose"}  # also written as .gltf (embedded buffer)
CASE_NAMES = [
    f"{name}_{kind}{suffix}"
    for name in SKELETONS
    for kind in ("pose", "take")
    for suffix in (".glb", ".gltf")
    if suffix == ".glb" or f"{name}_{kind}" in ALSO_GLTF
] + ["humanoid_twist_pose.glb"]


def _skeleton(name: str, rig_path: Path) -> Skeleton:
    if name == "imported":
        return gltf.import_skeleton(rig_path)
    if name == "plain_humanoid":  # no joint limits: plain FABRIK moves hips and clavicles on their own
        h = presets.get("humanoid")
        return Skeleton(h.names, h.parents, h.rest_positions)
    return presets.get(name)


def _twisted_pose(skeleton: Skeleton) -> fabrik3d.SolveResult:
    """Hands given orientations: their frames carry twist that positions alone cannot tell."""
    hand_l = fabrik3d.Target(
        [0.45, 1.05, 0.35], orientation=[math.sin(0.6) / math.sqrt(2), 0, math.sin(0.6) / math.sqrt(2), math.cos(0.6)]
    )
    hand_r = fabrik3d.Target([-0.35, 1.75, 0.25], orientation=[0.0, math.sin(1.0), 0.0, math.cos(1.0)])
    targets = {"hand_l": hand_l, "hand_r": hand_r, "head": [0.08, 1.66, 0.12]}
    result = fabrik3d.solve(skeleton, targets, max_iterations=ITERATIONS)
    twist = _angles(pose_frames(skeleton, result.positions), result.rotations)
    assert twist.max() > 0.5, "the orientation targets should twist the hands"
    return result


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory, rig: tuple[Path, np.ndarray]) -> dict[str, Case]:
    folder = tmp_path_factory.mktemp("exported")
    out = {}

    def write(case: str, skeleton: Skeleton, results: list[fabrik3d.SolveResult], times: np.ndarray | None) -> None:
        path = folder / case
        if times is None:
            gltf.export_pose(skeleton, results[0], path)
        else:
            gltf.export_animation(skeleton, results, times, path)
        positions = np.array([r.positions for r in results])
        rotations = np.array([r.rotations for r in results])
        out[case] = Case(skeleton, path, positions, rotations, times)

    for name in SKELETONS:
        skeleton = _skeleton(name, rig[0])
        result = fabrik3d.solve(skeleton, _pose_targets(skeleton, name), max_iterations=ITERATIONS)
        moved = np.linalg.norm(result.positions - skeleton.rest_positions, axis=1).max()
        assert moved > 0.1, f"{name}: the pose barely moves ({moved:.3f})"
        take = _take_frames(skeleton, name)
        for case in CASE_NAMES:
            if case.startswith(f"{name}_pose."):
                write(case, skeleton, [result], None)
            elif case.startswith(f"{name}_take."):
                write(case, skeleton, take, np.arange(FRAMES) / FPS)
    humanoid = presets.get("humanoid")
    write("humanoid_twist_pose.glb", humanoid, [_twisted_pose(humanoid)], None)
    assert sorted(out) == sorted(CASE_NAMES)
    return out


def _run_node(script: str, paths: list[Path]) -> dict:
    node = require_node_modules("gltf-validator", "three")
    proc = subprocess.run(
        [node, script, *map(str, paths)], cwd=JS_DIR, capture_output=True, text=True, timeout=180, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def validator_reports(cases: dict[str, Case], rig: tuple[Path, np.ndarray]) -> dict:
    return _run_node("validate.mjs", [c.path for c in cases.values()] + [rig[0]])


@pytest.fixture(scope="module")
def three_reports(cases: dict[str, Case]) -> dict:
    return _run_node("three_check.mjs", [c.path for c in cases.values()])


# -- the Khronos validator ---------------------------------------------------------------------------------------


@pytest.mark.node
@pytest.mark.parametrize("case", CASE_NAMES)
def test_validator_reports_no_errors_and_no_warnings(case: str, cases: dict, validator_reports: dict) -> None:
    report = validator_reports[str(cases[case].path)]
    problems = [m for m in report["messages"] if m["severity"] <= 1]
    assert report["errors"] == 0 and report["warnings"] == 0, problems


@pytest.mark.node
def test_the_hand_written_rig_is_valid_gltf(rig: tuple[Path, np.ndarray], validator_reports: dict) -> None:
    report = validator_reports[str(rig[0])]
    assert report["errors"] == 0 and report["warnings"] == 0, report["messages"]


@pytest.mark.node
def test_the_validator_catches_a_damaged_export(tmp_path: Path) -> None:
    """The harness really reports problems: a POSITION max that is not the data's is an error."""
    skeleton = presets.get("robot_arm")
    data = gltf.pose_glb_bytes(skeleton, fabrik3d.solve(skeleton, {"tool": [0.3, 0.5, 0.3]}))
    doc, blob = _split_glb(data)
    position = doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
    doc["accessors"][position]["max"][1] += 0.5
    path = tmp_path / "damaged.glb"
    path.write_bytes(_join_glb(doc, blob))
    report = _run_node("validate.mjs", [path])[str(path)]
    assert report["errors"] >= 1
    assert "ACCESSOR_MAX_MISMATCH" in {m["code"] for m in report["messages"]}


# -- three.js ----------------------------------------------------------------------------------------------------


def _sanitized(name: str) -> str:
    """three.js's PropertyBinding.sanitizeNodeName."""
    return re.sub(r"[\[\]\.:/]", "", re.sub(r"\s", "_", name))


def _angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angles (radians) of the rotations between unit quaternions ``(..., 4)``, by the chord (stable near 0)."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    chord = np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))
    return 4.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))


@pytest.mark.node
@pytest.mark.parametrize("case", CASE_NAMES)
def test_three_js_bones_match_the_solver(case: str, cases: dict, three_reports: dict) -> None:
    c = cases[case]
    report = three_reports[str(c.path)]
    skeleton = c.skeleton
    n = len(skeleton)
    assert report["meshes"] == 1
    bones = report["bones"]
    assert [b["node"] for b in bones] == list(range(n))
    assert [b["parent"] for b in bones] == skeleton.parents.tolist()
    assert [b["name"] for b in bones] == [_sanitized(name) for name in skeleton.names]
    samples = report["samples"]
    assert len(samples) == len(c.positions)
    if c.times is not None:
        assert [s["time"] for s in samples] == c.times.astype(np.float32).tolist()
    for k, s in enumerate(samples):
        err = np.linalg.norm(np.array(s["positions"]) - c.positions[k], axis=1)
        assert err.max() < POSITION_TOL, f"frame {k}: {skeleton.names[int(err.argmax())]} off by {err.max():.3g}"
        angle = _angles(np.array(s["quaternions"]), c.rotations[k])
        assert angle.max() < ANGLE_TOL, f"frame {k}: {skeleton.names[int(angle.argmax())]} turned by {angle.max():.3g}"


@pytest.mark.node
@pytest.mark.parametrize("case", CASE_NAMES)
def test_three_js_skinning_carries_the_mesh_with_the_joints(case: str, cases: dict, three_reports: dict) -> None:
    """Every mesh vertex bound at a joint in the bind pose lands on that joint's solved position."""
    c = cases[case]
    doc, blob = _read(c.path)
    attributes = doc["meshes"][0]["primitives"][0]["attributes"]
    rest_vertices = _accessor(doc, blob, attributes["POSITION"]).astype(float)
    weights = _accessor(doc, blob, attributes["WEIGHTS_0"])
    assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-6)
    rest = c.skeleton.rest_positions
    at_joint = np.linalg.norm(rest_vertices[:, None, :] - rest[None, :, :], axis=2) < 1e-6  # (v, n)
    assert at_joint.any(axis=0).all(), "every joint is the base or tip of a bone shape"
    vertex, joint = np.nonzero(at_joint)
    for k, s in enumerate(three_reports[str(c.path)]["samples"]):
        skinned = np.array(s["skinned"]).reshape(-1, 3)
        err = np.linalg.norm(skinned[vertex] - c.positions[k][joint], axis=1)
        assert err.max() < POSITION_TOL, f"frame {k}: vertex {vertex[err.argmax()]} off by {err.max():.3g}"


# -- file content ------------------------------------------------------------------------------------------------


def _split_glb(data: bytes) -> tuple[dict, bytes]:
    json_len = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + json_len])
    bin_len = struct.unpack_from("<I", data, 20 + json_len)[0]
    return doc, data[28 + json_len : 28 + json_len + bin_len]


def _join_glb(doc: dict, blob: bytes | None) -> bytes:
    """A GLB of ``doc`` and ``blob`` (no binary chunk for ``None``)."""
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<II", len(text), 0x4E4F534A) + text
    if blob is not None:
        chunks += struct.pack("<II", len(blob), 0x004E4942) + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def _read(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    if data[:4] == b"glTF":
        return _split_glb(data)
    doc = json.loads(data)
    return doc, base64.b64decode(doc["buffers"][0]["uri"].partition(",")[2])


def _accessor(doc: dict, blob: bytes, index: int) -> np.ndarray:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    dtype = {5126: "<f4", 5121: "u1", 5123: "<u2"}[acc["componentType"]]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    return np.frombuffer(blob, dtype, acc["count"] * width, start).reshape(acc["count"], width)


def _local_offsets(skeleton: Skeleton, positions: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """``(..., n, 3)`` each joint's offset from its parent in the parent's frame (the root's: zero)."""
    parents = np.maximum(skeleton.parents, 0)
    d = positions - positions[..., parents, :]
    return np.einsum("...kji,...kj->...ki", rot.quat_to_matrix(rotations[..., parents, :]), d)


@pytest.mark.parametrize("case", ["humanoid_take.glb", "plain_humanoid_take.glb", "octopus_take.glb"])
def test_take_keys_every_rotation_and_the_offsets_that_change(case: str, cases: dict) -> None:
    c = cases[case]
    skeleton = c.skeleton
    doc, blob = _read(c.path)
    (animation,) = doc["animations"]
    paths: dict[str, set[int]] = {"rotation": set(), "translation": set()}
    for channel in animation["channels"]:
        sampler = animation["samplers"][channel["sampler"]]
        assert sampler["interpolation"] == "LINEAR"
        paths[channel["target"]["path"]].add(channel["target"]["node"])
        keys = _accessor(doc, blob, sampler["output"]).astype(float)
        assert len(keys) == FRAMES
        if channel["target"]["path"] == "rotation":
            assert np.all(np.sum(keys[1:] * keys[:-1], axis=1) >= 0), "quaternion signs flip between keys"
    assert paths["rotation"] == set(range(len(skeleton)))
    # Translation keys: the root, and the joints whose offset in their parent's frame leaves the rest one.
    rest = _local_offsets(skeleton, skeleton.rest_positions, skeleton.rest_frames)
    change = np.abs(_local_offsets(skeleton, c.positions, c.rotations) - rest).max(axis=(0, 2))
    lengths = np.maximum(skeleton.bone_lengths, 1e-12)
    moved = {j for j in range(len(skeleton)) if change[j] > 1e-4 * lengths[j]} | {skeleton.root}
    still = {j for j in range(len(skeleton)) if change[j] < 1e-8 * lengths[j]} - {skeleton.root}
    assert moved <= paths["translation"]
    assert not still & paths["translation"]
    if case.startswith("plain_"):  # plain FABRIK moves the hips and clavicles against pelvis and chest
        assert {skeleton.index(n) for n in ("hip_l", "hip_r", "clavicle_l", "clavicle_r")} <= moved
    # a first child stays at its bone's length along its parent's +Y: it never needs translation keys
    assert not {skeleton.first_child(j) for j in range(len(skeleton))} & paths["translation"]


def test_quaternion_signs_are_made_continuous_on_the_keys_written(tmp_path: Path) -> None:
    skeleton = presets.get("robot_arm")
    frames = _take_frames(skeleton, "robot_arm")
    flipped = [(f.positions, f.rotations * (-1.0) ** k) for k, f in enumerate(frames)]
    doc, blob = _split_glb(gltf.animation_glb_bytes(skeleton, flipped, np.arange(FRAMES) / FPS))
    for sampler in doc["animations"][0]["samplers"]:
        keys = _accessor(doc, blob, sampler["output"]).astype(float)
        if keys.shape[1] == 4:
            assert np.all(np.sum(keys[1:] * keys[:-1], axis=1) >= 0)


def test_pose_bytes_and_file_agree(tmp_path: Path) -> None:
    skeleton = presets.get("humanoid")
    result = fabrik3d.solve(skeleton, _pose_targets(skeleton, "humanoid"), max_iterations=ITERATIONS)
    gltf.export_pose(skeleton, result, tmp_path / "a.glb")
    assert (tmp_path / "a.glb").read_bytes() == gltf.pose_glb_bytes(skeleton, result)
    gltf.export_pose(skeleton, result, tmp_path / "a.gltf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.glb", "a.gltf"]  # no side .bin, no temporaries
    _same_content(tmp_path / "a.gltf", gltf.pose_glb_bytes(skeleton, result))


def _same_content(gltf_path: Path, glb: bytes) -> None:
    """The .gltf at ``gltf_path`` holds the same document and buffer as ``glb``, its buffer embedded."""
    doc, blob = _read(gltf_path)
    assert doc["buffers"][0]["uri"].startswith("data:application/octet-stream;base64,")
    glb_doc, glb_blob = _split_glb(glb)
    assert blob == glb_blob
    assert {k: v for k, v in doc.items() if k != "buffers"} == {k: v for k, v in glb_doc.items() if k != "buffers"}


def test_non_joint_names_never_clash_with_joint_names() -> None:
    names = ["fabrik3d", "fabrik3d_body", "fabrik3d_skin", "fabrik3d_bones", "tip"]
    skeleton = Skeleton(names, [-1, 0, 1, 2, 3], [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0], [0, 4, 0]])
    doc, _ = _split_glb(gltf.pose_glb_bytes(skeleton, fabrik3d.solve(skeleton, {"tip": [1, 3, 0]})))
    others = [doc["scenes"][0]["name"], doc["nodes"][-1]["name"], doc["skins"][0]["name"], doc["meshes"][0]["name"]]
    assert not set(others) & set(names)
    assert len(set(others)) == 4


# -- round trip and import ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASE_NAMES)
def test_import_of_an_export_gives_back_the_skeleton(case: str, cases: dict) -> None:
    c = cases[case]
    back = gltf.import_skeleton(c.path)
    assert back.names == c.skeleton.names
    assert back.parents.tolist() == c.skeleton.parents.tolist()
    assert np.abs(back.rest_positions - c.skeleton.rest_positions).max() < 1e-6


@pytest.mark.parametrize("inverse_bind", [True, False])
def test_import_reads_a_rig_written_by_another_tool(tmp_path: Path, inverse_bind: bool) -> None:
    path, world = write_rig(tmp_path, inverse_bind=inverse_bind)
    skeleton = gltf.import_skeleton(path)
    assert skeleton.names == tuple(r[0] for r in RIG)
    # LeftArm's parent is Spine: the helper node between them is not a joint.
    assert [None if p < 0 else skeleton.names[p] for p in skeleton.parents] == [r[1] for r in RIG]
    assert np.abs(skeleton.rest_positions - world).max() < 1e-6


def test_a_pose_of_an_imported_character_keeps_its_names_and_hierarchy(cases: dict) -> None:
    doc, _ = _read(cases["imported_pose.glb"].path)
    joints = doc["skins"][0]["joints"]
    names = [doc["nodes"][k]["name"] for k in joints]
    assert names == [r[0] for r in RIG]
    parent_of = {c: k for k, node in enumerate(doc["nodes"]) for c in node.get("children", [])}
    assert [doc["nodes"][parent_of[k]]["name"] if k in parent_of else None for k in joints] == [r[1] for r in RIG]


def test_import_names_unnamed_and_repeated_nodes(tmp_path: Path) -> None:
    path, _ = write_rig(tmp_path)
    doc = json.loads(path.read_text())
    doc["nodes"][1]["name"] = "Spine"  # LeftHand's node repeats Spine's name
    del doc["nodes"][5]["name"]  # mixamorig:LeftLeg's node has no name
    path.write_text(json.dumps(doc))
    names = gltf.import_skeleton(path).names
    assert names[0] == "Spine" and names[2] == "Spine_2"
    assert names[4] == "node_5"


def _glb_of_rig(folder: Path) -> bytes:
    skeleton = gltf.import_skeleton(write_rig(folder)[0])
    return gltf.pose_glb_bytes(skeleton, fabrik3d.solve(skeleton, {}))


def _bad_rig(folder: Path, change) -> Path:
    path, _ = write_rig(folder)
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("skins"), "no skin"),
        (lambda d: d["skins"].clear(), "no skin"),
        (lambda d: d["skins"][0]["joints"].remove(2), "do not form one tree"),
        (lambda d: d["nodes"][3]["children"].append(2), "several parents"),
        (lambda d: d["skins"][0].update(joints=[2, 2, 3]), "listed twice"),
        (lambda d: d["skins"][0].update(joints=[2, 99]), r"skins\[0\].joints\[1\]"),
        (lambda d: d["buffers"][0].update(uri="gone.bin"), "missing buffer"),
        (lambda d: d["buffers"][0].pop("uri"), "missing buffer"),
        (lambda d: d["buffers"][0].update(uri="data:application/octet-stream;base64,AAAA"), "fewer than"),
        (lambda d: d["bufferViews"][0].update(byteOffset=64), "past the end"),
        (lambda d: d["accessors"][0].update(type="MAT3"), "FLOAT MAT4"),
        (lambda d: d["accessors"][0].update(count=3), "expected 9 inverse bind matrices"),
        (lambda d: d["asset"].update(version="1.0"), "asset.version"),
        (lambda d: d["nodes"][1].update(children="x"), r"nodes\[1\]\.children"),
        (lambda d: d["nodes"].__setitem__(1, 5), "not a valid glTF 2.0 file"),
    ],
)
def test_import_of_bad_rigs_fails_clearly(tmp_path: Path, change, message: str) -> None:
    path = _bad_rig(tmp_path, change)
    with pytest.raises(ValueError, match=message) as info:
        gltf.import_skeleton(path)
    assert str(info.value).startswith(str(path))


def test_import_of_bad_files_fails_clearly(tmp_path: Path) -> None:
    good = _glb_of_rig(tmp_path)
    doc, _ = _split_glb(good)
    bad = {
        "truncated.glb": (good[: len(good) // 2], "truncated"),
        "header.glb": (good[:16], "truncated GLB"),
        "garbage.gltf": (b"{not json", "neither a GLB nor glTF JSON"),
        "binary.glb": (bytes(range(256)) * 4, "neither a GLB nor glTF JSON"),
        "list.gltf": (b"[1, 2, 3]", "not a glTF document"),
        "version.glb": (good[:4] + struct.pack("<I", 1) + good[8:], "GLB version 1"),
        "nobin.glb": (_join_glb(doc, None), "missing buffer"),
        "trailing.glb": (good + b"\0" * 8, "the header says"),
    }
    for name, (data, message) in bad.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ValueError, match=message):
            gltf.import_skeleton(path)
    with pytest.raises(ValueError, match="cannot read"):
        gltf.import_skeleton(tmp_path / "absent.glb")


def test_damaged_files_only_ever_raise_value_error(tmp_path: Path) -> None:
    good = _glb_of_rig(tmp_path)
    rng = np.random.default_rng(3)
    outcomes = set()
    for cut in range(0, len(good), 97):
        with pytest.raises(ValueError):
            gltf.skeleton_from_bytes(good[:cut])
    for _ in range(300):
        data = bytearray(good)
        for at in rng.integers(0, len(good), size=rng.integers(1, 4)):
            data[at] = int(rng.integers(0, 256))
        try:
            gltf.skeleton_from_bytes(bytes(data))
            outcomes.add("read")
        except ValueError:
            outcomes.add("refused")
    assert outcomes == {"read", "refused"}  # some damage is harmless (padding, floats), some is not


# -- export errors -----------------------------------------------------------------------------------------------


def _humanoid_pose() -> tuple[Skeleton, fabrik3d.SolveResult]:
    skeleton = presets.get("humanoid")
    return skeleton, fabrik3d.solve(skeleton, _pose_targets(skeleton, "humanoid"), max_iterations=ITERATIONS)


def test_export_to_an_unwritable_place_fails_clearly_and_leaves_nothing(tmp_path: Path) -> None:
    skeleton, result = _humanoid_pose()
    with pytest.raises(ValueError, match="cannot write"):
        gltf.export_pose(skeleton, result, tmp_path / "no" / "such" / "dir.glb")
    (tmp_path / "taken.glb").mkdir()  # a folder where the file should go: the rename fails
    with pytest.raises(ValueError, match="cannot write"):
        gltf.export_pose(skeleton, result, tmp_path / "taken.glb")
    assert [p.name for p in tmp_path.iterdir()] == ["taken.glb"]
    assert list((tmp_path / "taken.glb").iterdir()) == []


def test_bad_export_input_fails_clearly_and_keeps_the_old_file(tmp_path: Path) -> None:
    skeleton, result = _humanoid_pose()
    path = tmp_path / "pose.glb"
    path.write_bytes(b"old")
    positions = result.positions.copy()
    positions[9] = np.nan
    rotations = result.rotations.copy()
    rotations[3] *= 2.0
    bad = [
        ((positions, result.rotations), r"positions\[9\] \(elbow_l\): coordinates must be finite"),
        ((result.positions, rotations), r"rotations\[3\] \(spine_03\): not a unit quaternion"),
        ((result.positions[:-1], result.rotations), "positions: expected 65 joints, got 64"),
        ((presets.get("octopus").rest_positions[:65], result.rotations), "bone from"),
    ]
    for (p, r), message in bad:
        with pytest.raises(ValueError, match=message):
            gltf.export_pose(skeleton, fabrik3d.SolveResult(p, r, 0, {}, True), path)
    with pytest.raises(ValueError, match="expected a SolveResult"):
        gltf.export_pose(skeleton, result.positions, path)
    with pytest.raises(ValueError, match=r"\.glb or \.gltf"):
        gltf.export_pose(skeleton, result, tmp_path / "pose.obj")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pose.glb"]


def test_bad_take_input_fails_clearly(tmp_path: Path) -> None:
    skeleton, result = _humanoid_pose()
    frames = [result, result]
    path = tmp_path / "take.glb"
    with pytest.raises(ValueError, match="equal once stored as float32"):
        gltf.export_animation(skeleton, frames, [1.0, 1.0 + 1e-9], path)
    with pytest.raises(ValueError, match=r"times\[1\]: must be greater"):
        gltf.export_animation(skeleton, frames, [0.5, 0.5], path)
    with pytest.raises(ValueError, match="2 frames but 3 times"):
        gltf.export_animation(skeleton, frames, [0, 1, 2], path)
    with pytest.raises(ValueError, match=r"frames\[1\]: expected a SolveResult"):
        gltf.export_animation(skeleton, [result, "pose"], [0, 1], path)
    with pytest.raises(ValueError, match="at least 0"):
        gltf.export_animation(skeleton, frames, [-1, 1], path)
    assert list(tmp_path.iterdir()) == []


# -- the command line --------------------------------------------------------------------------------------------


def test_cli_exports_a_solved_scene(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = Scene(_skeleton("plain_humanoid", tmp_path), {"hand_l": np.array([0.45, 1.05, 0.35])})
    save_scene(scene, tmp_path / "scene.json")
    out = tmp_path / "pose.glb"
    argv = ["export", str(tmp_path / "scene.json"), "-o", str(out), "--target", "toe_r=-0.2,0.2,0.3"]
    assert cli.main(argv) == 0
    assert "pose.glb" in capsys.readouterr().out
    scene.targets["toe_r"] = np.array([-0.2, 0.2, 0.3])
    assert out.read_bytes() == gltf.pose_glb_bytes(scene.skeleton, scene.solve())
    assert cli.main(["export", "robot_arm", "-o", str(tmp_path / "arm.gltf"), "--target", "tool=0.3,0.5,0.4"]) == 0
    skeleton = presets.get("robot_arm")
    _same_content(
        tmp_path / "arm.gltf", gltf.pose_glb_bytes(skeleton, fabrik3d.solve(skeleton, {"tool": [0.3, 0.5, 0.4]}))
    )


def test_cli_exports_a_take(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skeleton = presets.get("robot_arm")
    frames = _take_frames(skeleton, "robot_arm")
    times = np.arange(FRAMES) / FPS
    save_take(Take.from_frames(skeleton, frames, times), tmp_path / "take.json")
    out = tmp_path / "arm.gltf"
    assert cli.main(["export", "--take", str(tmp_path / "take.json"), "-o", str(out)]) == 0
    assert f"{FRAMES} frames" in capsys.readouterr().out
    _same_content(out, gltf.animation_glb_bytes(skeleton, frames, times))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "-o", "x.glb"], "give a scene or preset, or --take"),
        (["export", "humanoid", "--take", "t.json", "-o", "x.glb"], "not both"),
        (["export", "--take", "t.json", "--target", "head=0,1,0", "-o", "x.glb"], "--target"),
        (["export", "--take", "missing.json", "-o", "x.glb"], "missing.json: cannot read"),
        (["export", "humanoid", "-o", "x.fbx"], r"\.glb or \.gltf"),
        (["export", "humanoid", "-o", "no/dir/x.glb"], "cannot write"),
        (["export", "humanoid", "--target", "nose=0,1,0", "-o", "x.glb"], "nose"),
        (["export", "elephant", "-o", "x.glb"], "neither a preset"),
        (["export", "humanoid"], "-o"),
    ],
)
def test_cli_export_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        status = cli.main(argv)
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert re.match(r"fabrik3d( export)?: error: ", err) and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []


def test_cli_take_with_a_bad_frame_names_the_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skeleton = presets.get("robot_arm")
    take = Take.from_frames(skeleton, _take_frames(skeleton, "robot_arm"), np.arange(FRAMES) / FPS)
    data = take.to_dict()
    data["frames"][3]["positions"].pop()
    (tmp_path / "take.json").write_text(json.dumps(data))
    assert cli.main(["export", "--take", str(tmp_path / "take.json"), "-o", str(tmp_path / "x.glb")]) == 2
    assert "frames[3].positions: expected 7 joints, got 6" in capsys.readouterr().err
