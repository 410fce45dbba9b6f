"""Rigged characters from glTF: the skeleton, the humanoid roles, riders and linear blend skinning.

The characters are the procedural humanoid of ``tests/helpers/character_asset.py`` (the humanoid preset's
rest pose, a capsule body with 4 influences a vertex, a hat on a second skin), written with Mixamo names,
with Blender names under a turned, 0.01-scaled armature with a helper node, with external buffers, and
with a zero-length "face" joint on the head.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import bone_name, build_character, write_character

import fabrik3d
from fabrik3d import rotations as rot
from fabrik3d.io.character import Character, load_character, parse_rig_map, scene_character
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.model.constraints import Hinge
from fabrik3d.model.skinning import Skinner, skin_naive


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("characters")


@pytest.fixture(scope="module")
def mixamo(folder: Path) -> Character:
    return load_character(write_character(folder, "mixamo", "mixamo"))


@pytest.fixture(scope="module")
def blender(folder: Path) -> Character:
    return load_character(write_character(folder, "blender", "blender", armature=True, face=True))


def _expected_rest(convention: str, face: bool) -> dict[str, np.ndarray]:
    from helpers.character_asset import _joints

    return {bone_name(k, convention): np.array(p) for k, _, p in _joints(face)}


def test_mixamo_names_map_onto_the_humanoid_roles(mixamo: Character) -> None:
    assert mixamo.convention == "mixamo"
    assert mixamo.rig_map["hand_l"] == "mixamorig:LeftHandMiddle1"
    assert mixamo.rig_map["elbow_r"] == "mixamorig:RightForeArm"
    assert mixamo.rig_map["chest"] == "mixamorig:Spine2"
    assert dict(mixamo.effectors) == {
        "pelvis": "mixamorig:Hips",
        "head": "mixamorig:Head",
        "hand_l": "mixamorig:LeftHandMiddle1",
        "hand_r": "mixamorig:RightHandMiddle1",
        "foot_l": "mixamorig:LeftToeBase",
        "foot_r": "mixamorig:RightToeBase",
    }
    sk = mixamo.skeleton
    assert sk.names[sk.root] == "mixamorig:Hips"
    assert set(sk.end_effectors) == {v for k, v in mixamo.effectors.items() if k != "pelvis"}
    # the preset's limits and natural posing came along
    assert any(isinstance(c, Hinge) for c in sk.constraints["mixamorig:LeftForeArm"])
    assert sk.posing.reach["mixamorig:LeftHandMiddle1"] == "mixamorig:Spine"
    assert sk.posing.swivel["mixamorig:LeftHandMiddle1"].frame == "mixamorig:Spine2"
    # the fingers' and toes' ends and the head's top ride on the effectors
    assert set(mixamo.riders) == {
        "mixamorig:HeadTop_End",
        "mixamorig:LeftHandMiddle4",
        "mixamorig:RightHandMiddle4",
        "mixamorig:LeftToe_End",
        "mixamorig:RightToe_End",
    }
    assert mixamo.notes == ()


def test_a_blender_rig_under_a_scaled_turned_armature_loads_in_scene_units(blender: Character) -> None:
    assert blender.convention == "blender"
    assert blender.rig_map["shoulder_l"] == "upper_arm.L" and blender.rig_map["head"] == "spine.006"
    expected = _expected_rest("blender", face=True)
    rest = blender.bind[:, :3, 3]
    for name, p in zip(blender.bones, rest):
        np.testing.assert_allclose(p, expected[name], atol=1e-6, err_msg=name)
    # the bind matrices carry the armature's 0.01 scale
    np.testing.assert_allclose(np.linalg.norm(blender.bind[:, :3, 0], axis=1), 0.01, rtol=1e-5)
    # the left clavicle hangs from the chest through the helper node, which is not a bone
    sk = blender.skeleton
    assert sk.names[sk.parents[sk.index("shoulder.L")]] == "spine.003"
    assert "shoulder_helper.L" not in blender.bones
    # the metarig's pelvis.L sits on the hips, on the path to the left foot: it rides, the thigh hangs from the hips
    assert "pelvis.L" in blender.riders and sk.names[sk.parents[sk.index("thigh.L")]] == "spine"
    assert blender.size == pytest.approx(np.linalg.norm(np.ptp(np.array(list(expected.values())), axis=0)))


def test_a_joint_on_its_parent_rides_on_it(folder: Path) -> None:
    """Rigify's "face" sits exactly on the head (Blender 3.4's export failed with "bone from 'spine.006' is
    shorter than 1e-09"): it loads, is not a joint of the skeleton and follows the head's frame."""
    path = write_character(folder, "face", "blender", face=True)
    character = load_character(path, rig_map={})  # no humanoid roles: every bone counts
    sk = character.skeleton
    assert "face" not in sk.names and "face" in character.riders
    assert sk.names[sk.parents[sk.index("nose")]] == "spine.006"  # the face's child hangs from the head
    assert {"pelvis.L", "pelvis.R"} <= set(character.riders)
    assert not sk.constraints and "nose" in character.effectors
    target = sk.rest_positions[sk.index("nose")] + (0.05, -0.1, 0.1)
    result = fabrik3d.solve(sk, {"nose": target})
    assert result.converged
    face, head = character.bones.index("face"), sk.index("spine.006")
    world = character.bone_matrices(result)
    delta = rot.quat_to_matrix(result.rotations[head]) @ rot.quat_to_matrix(sk.rest_frames[head]).T
    np.testing.assert_allclose(world[face, :3, 3], result.positions[head], atol=1e-6)  # float32 bind
    np.testing.assert_allclose(world[face, :3, :3], delta @ character.bind[face, :3, :3], atol=1e-9)


def test_a_rig_without_roles_gets_effectors_at_its_leaves_and_no_limits(folder: Path) -> None:
    path = write_character(folder, "plain", "mixamo")
    character = load_character(path, rig_map={})
    sk = character.skeleton
    assert character.convention == "" and not sk.constraints and not sk.posing
    assert dict(character.effectors) == {n: n for n in sk.end_effectors}
    assert "mixamorig:LeftHandMiddle4" in sk.end_effectors and len(sk) == len(character.bones)


def test_a_rig_map_file_is_used_and_kept(folder: Path, mixamo: Character) -> None:
    mapping = {"pelvis": "mixamorig:Hips", "hand_l": "mixamorig:LeftHand", "hand_r": "mixamorig:RightHand"}
    path = folder / "map.json"
    path.write_text(json.dumps(mapping))
    character = load_character(folder / "mixamo.glb", rig_map=path)
    assert character.convention == "given" and dict(character.rig_map) == mapping
    assert character.effectors["hand_l"] == "mixamorig:LeftHand"
    assert "mixamorig:LeftHandMiddle1" in character.riders  # below an effector: rides on it
    with pytest.raises(ValueError, match=r"map: elbow_x: unknown role"):
        parse_rig_map('{"elbow_x": "a"}', "map")
    with pytest.raises(ValueError, match=r"rig map\.hand_l: 'LeftHand' is not a bone of the rig"):
        load_character(folder / "mixamo.glb", rig_map={"pelvis": "mixamorig:Hips", "hand_l": "LeftHand"})


def test_external_buffers_textures_sparse_and_interleaved_data_are_read(folder: Path, mixamo: Character) -> None:
    character = load_character(write_character(folder, "external", "mixamo", external=True))
    body, hat = character.meshes
    assert (body.where, hat.where) == ("meshes[0].primitives[0]", "meshes[1].primitives[0]")
    assert body.texture is not None and body.texture[:4] == b"\x89PNG" and body.texture_mime == "image/png"
    assert body.uvs is not None and body.uvs.shape == (len(body.positions), 2)
    np.testing.assert_allclose(body.base_color, (1.0, 0.9, 0.8, 1.0))
    np.testing.assert_allclose(np.linalg.norm(body.normals, axis=1), 1.0, atol=1e-6)  # interleaved with positions
    np.testing.assert_array_equal(body.positions, mixamo.meshes[0].positions)
    assert hat.skin == 1 and hat.texture is None
    head = mixamo.bind[mixamo.bones.index("mixamorig:Head"), :3, 3]
    assert hat.positions[8, 1] == pytest.approx(head[1] + 0.2, abs=1e-6)  # the sparse accessor raised the tip
    assert body.weights.shape[1] == 4 and np.allclose(body.weights.sum(axis=1), 1.0)


def test_a_material_s_double_sided_flag_is_read(folder: Path, mixamo: Character) -> None:
    assert [m.double_sided for m in mixamo.meshes] == [False, False]  # (glTF's default: back faces culled)
    path = write_character(folder, "double", "mixamo", external=True)
    doc = json.loads(path.read_text())
    doc["materials"][0]["doubleSided"] = True
    path.write_text(json.dumps(doc))
    body, hat = load_character(path).meshes
    assert body.double_sided and not hat.double_sided


def test_vertices_weighted_to_the_hand_move_with_the_solved_hand(mixamo: Character) -> None:
    sk = mixamo.skeleton
    hand = sk.index("mixamorig:LeftHandMiddle1")
    target = sk.rest_positions[hand] + (-0.25, 0.35, 0.3)
    result = fabrik3d.solve(sk, {"mixamorig:LeftHandMiddle1": target})
    assert result.converged
    body = mixamo.meshes[0]
    skinned = mixamo.skin(result)[0][0]
    bones = mixamo.skins[body.skin].bones[body.joints]  # (v, 4) bone of each influence
    follows = np.isin(
        bones, [mixamo.bones.index(n) for n in ("mixamorig:LeftHandMiddle1", "mixamorig:LeftHandMiddle4")]
    )
    on_hand = np.where(((body.weights > 0) <= follows).all(axis=1))[0]
    assert len(on_hand) >= 50
    turn = rot.quat_to_matrix(result.rotations[hand]) @ rot.quat_to_matrix(sk.rest_frames[hand]).T
    expected = (body.positions[on_hand] - sk.rest_positions[hand]) @ turn.T + result.positions[hand]
    np.testing.assert_allclose(skinned[on_hand], expected, atol=1e-5)
    moved = np.linalg.norm(skinned[on_hand].mean(axis=0) - body.positions[on_hand].mean(axis=0))
    assert moved > 0.3  # the hand went about half a metre
    # the feet were not asked to move: the vertices on them stay put
    foot = mixamo.bones.index("mixamorig:RightToeBase")
    on_foot = np.where((bones == foot).any(axis=1) & (body.weights.max(axis=1) > 0.99))[0]
    np.testing.assert_allclose(skinned[on_foot], body.positions[on_foot], atol=1e-6)


def test_the_rest_pose_skins_to_the_bind_pose(blender: Character) -> None:
    for prim, (positions, normals) in zip(blender.meshes, blender.skin(normals=True)):
        np.testing.assert_allclose(positions, prim.positions, atol=1e-6)
        if prim.normals is not None:
            np.testing.assert_allclose(normals, prim.normals, atol=1e-5)


@pytest.mark.parametrize("joints", [10, 400])  # the dense and the gathered blend
@pytest.mark.parametrize("k", [4, 8])
def test_the_skinner_equals_the_textbook_form(joints: int, k: int) -> None:
    rng = np.random.default_rng(joints + k)
    v = 3000
    p = rng.normal(size=(v, 3))
    j = rng.integers(0, joints, size=(v, k))
    w = rng.random((v, k)) * (rng.random((v, k)) > 0.3)
    w[:, 0] += 0.1
    w /= w.sum(axis=1, keepdims=True)
    m = np.tile(np.eye(4), (joints, 1, 1))
    m[:, :3, :3] = rot.quat_to_matrix(rng.normal(size=(joints, 4)) / 2.0)  # not unit: scale too
    m[:, :3, 3] = rng.normal(size=(joints, 3))
    skinner = Skinner(p, j, w, joints)
    assert skinner.dense == (joints == 10)
    np.testing.assert_allclose(skinner.positions(m), skin_naive(p, j, w, m), atol=1e-4)


def _sides(*names: str) -> list[str]:
    """Each name, those with ``{s}``, ``{S}`` or ``{side}`` once per side (l, L, left; r, R, right)."""
    sides = (("l", "L", "left"), ("r", "R", "right"))
    return [n.format(s=a, S=b, side=c) for n in names for a, b, c in (sides if "{" in n else sides[:1])]


@pytest.mark.parametrize(
    ("convention", "names", "expected"),
    [
        (
            "unreal",  # Unreal 5: five spine bones, the clavicles on the last: that is the chest
            _sides(
                "root",
                "pelvis",
                *(f"spine_0{k}" for k in range(1, 6)),
                "neck_01",
                "head",
                "clavicle_{s}",
                "upperarm_{s}",
                "lowerarm_{s}",
                "hand_{s}",
                "middle_01_{s}",
                "thigh_{s}",
                "calf_{s}",
                "foot_{s}",
                "ball_{s}",
                "ik_hand_root",
            ),
            {"pelvis": "pelvis", "wrist_l": "hand_l", "hand_l": "middle_01_l", "chest": "spine_05", "toe_r": "ball_r"},
        ),
        (
            "vrm",
            _sides(
                "hips",
                "spine",
                "chest",
                "upperChest",
                "neck",
                "head",
                "{side}Shoulder",
                "{side}UpperArm",
                "{side}LowerArm",
                "{side}Hand",
                "{side}MiddleProximal",
                "{side}UpperLeg",
                "{side}LowerLeg",
                "{side}Foot",
                "{side}Toes",
            ),
            {"chest": "upperChest", "spine_02": "chest", "shoulder_l": "leftUpperArm", "toe_r": "rightToes"},
        ),
        (
            "blender",  # Rigify's deform bones
            _sides(
                "DEF-spine",
                *(f"DEF-spine.00{k}" for k in range(1, 7)),
                "DEF-shoulder.{S}",
                "DEF-upper_arm.{S}",
                "DEF-upper_arm.{S}.001",
                "DEF-forearm.{S}",
                "DEF-hand.{S}",
                "DEF-f_middle.01.{S}",
                "DEF-thigh.{S}",
                "DEF-shin.{S}",
                "DEF-foot.{S}",
                "DEF-toe.{S}",
            ),
            {"pelvis": "DEF-spine", "head": "DEF-spine.006", "elbow_l": "DEF-forearm.L", "hand_r": "DEF-f_middle.01.R"},
        ),
        ("fabrik3d", list(fabrik3d.presets.get("humanoid").names), {"hand_l": "hand_l", "wrist_l": "wrist_l"}),
    ],
)
def test_bone_names_of_the_common_tools_give_the_roles(convention: str, names: list[str], expected: dict) -> None:
    from fabrik3d.model.rig_map import fix_chest, guess_rig_map

    found, roles = guess_rig_map(names)
    parents = {  # the clavicles hang from the last spine bone
        n: next((m for m in reversed(names) if m.startswith(("spine_0", "DEF-spine.003", "upperChest"))), None)
        for n in names
        if "clavicle" in n or "houlder" in n
    }
    roles = fix_chest(roles, parents)
    assert found == convention
    assert {k: roles.get(k) for k in expected} == expected


@pytest.mark.parametrize("version", ["VRM", "VRMC_vrm"])
def test_a_vrm_humanoid_maps_its_bones_whatever_their_names(version: str) -> None:
    from helpers.character_asset import glb_bytes

    from fabrik3d.io.character import character_from_bytes

    doc, blob = build_character("mixamo")
    vrm = {"Hips": "hips", "Spine": "spine", "Spine1": "chest", "Spine2": "upperChest", "Neck": "neck", "Head": "head"}
    for side in ("Left", "Right"):
        low = side.lower()
        for mixamo, bone in (("Shoulder", "Shoulder"), ("Arm", "UpperArm"), ("ForeArm", "LowerArm"), ("Hand", "Hand"),
                             ("HandMiddle1", "MiddleProximal"), ("UpLeg", "UpperLeg"), ("Leg", "LowerLeg"),
                             ("Foot", "Foot"), ("ToeBase", "Toes")):  # fmt: skip
            vrm[side + mixamo] = low + bone
    human = {}
    for k, node in enumerate(doc["nodes"]):
        name = node.get("name", "").removeprefix("mixamorig:")
        if name in vrm:
            human[vrm[name]] = k
        node["name"] = f"J_Bip_{k}"  # names no table knows
    if version == "VRM":  # 0.x: a list
        bones: object = [{"bone": b, "node": k} for b, k in human.items()]
    else:  # 1.0: an object
        bones = {b: {"node": k} for b, k in human.items()}
    doc["extensions"] = {version: {"humanoid": {"humanBones": bones}}}
    doc["extensionsUsed"] = [*doc["extensionsUsed"], version]
    character = character_from_bytes(glb_bytes(doc, blob), "avatar.vrm")
    assert character.convention == "vrm"
    assert character.rig_map["hand_l"] == f"J_Bip_{human['leftMiddleProximal']}"
    assert character.rig_map["chest"] == f"J_Bip_{human['upperChest']}"
    assert set(character.effectors) == {"pelvis", "head", "hand_l", "hand_r", "foot_l", "foot_r"}


def test_a_scene_file_names_its_character_and_rig_map_and_opens_it(tmp_path: Path) -> None:
    path = write_character(tmp_path, "hero", "mixamo", armature=True)
    model = load_character(path)
    custom = {**model.rig_map}
    scene = Scene(model.skeleton, targets={model.effectors["hand_l"]: [0.4, 1.3, 0.3]}, character={
        "file": "hero.glb",
        "rig_map": custom,
    })  # fmt: skip
    save_scene(scene, tmp_path / "posed.json")
    back = load_scene(tmp_path / "posed.json")
    assert back.character == {"file": "hero.glb", "rig_map": custom}
    opened = scene_character(back, tmp_path / "posed.json")
    assert opened is not None and opened.rig_map == custom and opened.skeleton.names == model.skeleton.names
    assert scene_character(Scene(model.skeleton), tmp_path / "x.json") is None
    # a character whose joints are not the scene's, a missing file, a bad reference: named
    other = write_character(tmp_path, "plain", "blender")
    wrong = Scene(model.skeleton, character={"file": other.name, "rig_map": {}})
    with pytest.raises(ValueError, match=r"character 'plain\.glb': its joints are not the scene's"):
        scene_character(wrong, tmp_path / "w.json")
    with pytest.raises(ValueError, match=r"missing\.glb"):
        scene_character(Scene(model.skeleton, character={"file": "missing.glb", "rig_map": {}}), tmp_path / "m.json")
    for bad, message in [
        ({"file": ""}, "character.file: expected the character's file name"),
        ({"file": "a.glb", "rig_map": {"hand_l": 3}}, "character.rig_map: expected an object"),
        ({"path": "a.glb"}, "character: expected"),
    ]:
        with pytest.raises(ValueError, match=message):
            Scene(model.skeleton, character=bad)
