"""A character figure in a stage's one file out (issue 52): written with its own skin, read back by independent
readers.

The stage: Ada (the humanoid preset, at the origin), Hero (a rigged ``.glb`` character, Mixamo names, an
armature node, placed and turned 120 deg, a stick in its left hand) and Zed (a ``.gltf`` character whose buffer
and texture are files beside it, Blender names, turned -60 deg), saved and opened again (``load_stage`` opens
the characters beside the scene file). Hero's left hand is keyed for the animation.

* ``load_stage`` gives each character figure its character; a missing or bad one is named on one line.
* Every file (pose and animation, ``.glb`` and ``.gltf``): the Khronos validator reports 0 errors and 0
  warnings; it holds each character's skinned meshes (named after the figure), skins with their inverse bind
  matrices and its texture, inside the file; an animation file holds its file's own animation as a clip.
* The pose: the characters' vertices, skinned as glTF says from the file's nodes and inverse bind matrices, and
  as three.js skins them, are within 0.1 mm of the library's skin (``Character.skin``) placed.
* three.js and Blender 3.4 find every figure's joints (by name, under the figure) within 1 mm of the
  library's pose (``StagePose.world``) and of every frame of the bake, and the stick in Hero's hand within
  1 mm (2 mm on the bake's frames) and 0.5 deg.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import JS_DIR, require_node_modules
from helpers.blender import run_script
from helpers.character_asset import write_character
from helpers.stage_check import three_node, three_reports
from helpers.validator import validate

from fabrik3d import rotations as rot
from fabrik3d.io.character import load_character, node_worlds
from fabrik3d.io.gltf_accessors import Buffers, read_accessor
from fabrik3d.io.gltf_import import _parse_container, node_parents
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.io.stage import load_stage, parse_stage, save_stage, upload_characters
from fabrik3d.io.take import Take
from fabrik3d.model.keys import Animation, Key
from fabrik3d.stage import (
    Figure,
    Hold,
    Placement,
    Prop,
    Stage,
    StagePose,
    Transform,
    bake_stage,
    export_stage_animation,
    export_stage_pose,
    prop_track,
    solve_stage,
)

FPS = 30
FRAMES = 8
POSITION_TOL = 1e-3  # metres (the bar)
HELD_TOL = 2e-3  # metres: the held stick on the bake's frames
SKIN_TOL = 1e-4  # metres: vertices skinned from the file against the library's
ANGLE_TOL = 0.5  # degrees
KINDS = (".glb", ".gltf")
CHARACTERS = ("Hero", "Zed")


def _scene(path: Path, animated: bool) -> Scene:
    """A character's scene: its skeleton, its left hand reached forward (keyed over ``FRAMES`` with
    ``animated``), naming its file."""
    character = load_character(path)
    sk, hand = character.skeleton, character.effectors["hand_l"]
    at = sk.rest_positions[sk.index(hand)]
    scene = Scene(sk, targets={hand: at + np.array([0.1, 0.3, 0.3])}, character={"file": path.name, "rig_map": {}})
    if animated:
        keys = (
            Key(0, {hand: at + np.array([0.15, 0.2, 0.25])}),
            Key(FRAMES - 1, {hand: at + np.array([-0.1, 0.4, 0.3])}),
        )
        scene = replace(scene, animation=Animation(keys, fps=FPS))
    return scene


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scene files (``stage.json``, ``animated.json``) with the characters beside them."""
    out = tmp_path_factory.mktemp("stage_character")
    hero = write_character(out, "hero", "mixamo", armature=True, face=True)
    zed = write_character(out, "zed", "blender", external=True)
    for name, animated in (("stage", False), ("animated", True)):
        grip = Transform([0.02, 0.05, 0.01], rot.axis_angle(rot.unit((1.0, 1.0, 0.0)), 0.7))
        stage = Stage(
            [
                Figure("Ada", scene_or_preset("humanoid")),
                Figure("Hero", _scene(hero, animated), Placement([1.1, 0.0, 0.4], 120)),
                Figure("Zed", _scene(zed, False), Placement([-1.2, 0.0, 0.6], -60)),
            ],
            [Prop("stick", "cylinder", transform=grip, parent=Hold("Hero", load_character(hero).effectors["hand_l"]))],
        )
        save_stage(stage, out / f"{name}.json")
    return out


@pytest.fixture(scope="module")
def pose(folder: Path) -> StagePose:
    return solve_stage(load_stage(folder / "stage.json"))


@pytest.fixture(scope="module")
def baked(folder: Path) -> tuple[Stage, list[Take]]:
    stage = load_stage(folder / "animated.json")
    return stage, bake_stage(stage)


@pytest.fixture(scope="module")
def files(folder: Path, pose: StagePose, baked) -> dict[str, Path]:
    """``pose.glb``, ``pose.gltf``, ``anim.glb``, ``anim.gltf``, written in another folder than the scene's."""
    out = folder / "out"
    out.mkdir()
    names = {}
    for kind in KINDS:
        names[f"pose{kind}"] = out / f"pose{kind}"
        export_stage_pose(pose.stage, pose.poses, names[f"pose{kind}"])
        names[f"anim{kind}"] = out / f"anim{kind}"
        export_stage_animation(*baked, names[f"anim{kind}"])
    return names


def _read(path: Path) -> tuple[dict[str, Any], Buffers]:
    doc, chunk = _parse_container(path.read_bytes())
    return doc, Buffers(doc, chunk, None)


def test_the_stage_is_what_the_tests_need(pose: StagePose, baked) -> None:
    """The characters are placed and posed away from their rest; Hero's hand (and the stick) moves in the bake."""
    for i, f in enumerate(pose.stage.figures[1:], start=1):
        assert np.abs(pose.poses[i].positions - f.scene.skeleton.rest_positions).max() > 0.05
        assert not f.placement.is_identity
    stage, takes = baked
    p, _ = prop_track(stage, takes, "stick")
    assert len(takes[1].times) == FRAMES and np.linalg.norm(p[-1] - p[0]) > 0.1


# -- the stage holds its characters ------------------------------------------------------------------------------


def test_load_stage_opens_each_figure_s_character(pose: StagePose, folder: Path) -> None:
    ada, hero, zed = pose.stage.figures
    assert ada.character is None and ada.scene.character is None
    assert Path(hero.character.source).name == "hero.glb" and hero.character.container == "glb"
    assert Path(zed.character.source).name == "zed.gltf" and zed.character.container == "gltf"
    assert hero.character.skeleton.names == hero.scene.skeleton.names
    stage = parse_stage((folder / "stage.json").read_text())  # (no folder: the figure is its skeleton)
    assert stage.figures[1].character is None and stage.figures[1].scene.character == hero.scene.character
    with pytest.raises(ValueError, match="character: expected the Character whose skeleton"):
        Figure("Ada", scene_or_preset("humanoid"), character=hero.character)


def test_characters_uploaded_with_the_scene_are_given_to_their_figures(folder: Path) -> None:
    """A browser sends the files chosen and nothing beside them (``upload_characters``): each figure gets the
    character its scene names among them, by file name, checked as a file beside the scene is."""
    text = (folder / "stage.json").read_bytes()
    stage = parse_stage(text, "stage.json")
    missing = upload_characters(stage, {"hero.glb": (folder / "hero.glb").read_bytes()}, "stage.json")
    assert missing == ["zed.gltf"] and stage.figures[2].character is None
    hero = stage.figures[1].character
    assert hero is not None and hero.skeleton.names == stage.figures[1].scene.skeleton.names
    # the same file under the other figure's name: its joints are not Zed's scene's, named on one line
    stage = parse_stage(text, "stage.json")
    with pytest.raises(ValueError, match=r"^stage.json: figures\[2\].character 'zed.gltf': its joints are not"):
        upload_characters(stage, {"zed.gltf": (folder / "hero.glb").read_bytes()}, "stage.json")
    assert all(f.character is None for f in stage.figures)  # (nothing given when one fails)
    with pytest.raises(ValueError, match=r"^stage.json: figures\[1\].character: hero.glb: "):
        upload_characters(stage, {"hero.glb": b"glTF broken"}, "stage.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"file": "missing.glb"}, r"figures\[2\]\.character: .*missing\.glb: cannot read"),
        ({"file": "../hero.glb"}, r"figures\[2\]\.character\.file: only relative paths inside the file's folder"),
        ({"file": "hero.glb"}, r"figures\[2\]\.character 'hero\.glb': its joints are not the scene's"),
    ],
)
def test_a_missing_or_bad_character_is_named_on_one_line(folder: Path, change: dict, message: str) -> None:
    data = json.loads((folder / "stage.json").read_text())
    data["figures"][2]["character"].update(change)
    path = folder / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"^{path}: {message}") as info:
        load_stage(path)
    assert "\n" not in str(info.value)


# -- the files ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pose.glb", "pose.gltf", "anim.glb", "anim.gltf"])
def test_the_file_holds_each_character_s_skinned_meshes(name: str, files: dict[str, Path], pose: StagePose) -> None:
    doc, buffers = _read(files[name])
    names = [n.get("name") for n in doc["nodes"]]
    roots = doc["scenes"][0]["nodes"]
    for f in pose.stage.figures[1:]:
        character = f.character
        source = character.document
        for k_source in sorted({p.node for p in character.meshes}):
            was = source["nodes"][k_source]  # (a skinned mesh node of its own, a root, named after the figure)
            k = names.index(f"{f.name} {was['name']}")
            node = doc["nodes"][k]
            assert k in roots and doc["meshes"][node["mesh"]]["name"].startswith(f"{f.name} ")
            skin, skin_was = doc["skins"][node["skin"]], source["skins"][was["skin"]]
            assert skin["name"].startswith(f"{f.name} ")
            assert [names[j] for j in skin["joints"]] == [source["nodes"][j]["name"] for j in skin_was["joints"]]
            ibm = read_accessor(doc, buffers, skin["inverseBindMatrices"], "ibm")
            assert ibm.shape == (len(skin["joints"]), 16)
        figure = doc["nodes"][names.index(f.name)]
        below = [doc["nodes"][c].get("name") for c in figure["children"]]
        assert (below[:1] == ["Armature"]) if f.name == "Hero" else ("spine" in below)
    # (both textures, Zed's a file beside its .gltf, inside the file)
    assert [(i.get("uri"), i.get("mimeType")) for i in doc["images"]] == [(None, "image/png")] * 2
    assert len(doc["buffers"]) == 1 and doc["buffers"][0].get("uri", "data:").startswith("data:")
    if name.startswith("anim"):
        assert doc["animations"][0]["name"] == "take"
    else:
        assert "animations" not in doc  # (a pose: the characters' own clips are the animation file's)


def _library_skins(doc: dict[str, Any], pose: StagePose) -> dict[tuple[int, int], tuple[str, np.ndarray]]:
    """Each character's primitive in the stage file ``doc`` (``(mesh, primitive)``: its indices there) -> its
    node's name and its vertices ``(v, 3)`` as the library skins them (``Character.skin``), placed."""
    names = [n.get("name") for n in doc["nodes"]]
    out = {}
    for i, f in enumerate(pose.stage.figures):
        if f.character is None:
            continue
        for prim, (vertices, _) in zip(f.character.meshes, f.character.skin(pose.poses[i])):
            name = f"{f.name} {f.character.document['nodes'][prim.node]['name']}"
            p = int(prim.where.split("primitives[")[1].rstrip("]"))
            out[(doc["nodes"][names.index(name)]["mesh"], p)] = (name, f.placement.to_world(vertices))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_the_pose_file_skins_each_character_where_the_library_does(kind: str, files: dict[str, Path], pose) -> None:
    doc, buffers = _read(files[f"pose{kind}"])
    world = np.array(node_worlds(doc["nodes"], node_parents(doc)))
    skins = _library_skins(doc, pose)
    assert len(skins) == 4  # (Hero's body and hat, Zed's)
    for (m, p), (name, want) in skins.items():
        node = next(n for n in doc["nodes"] if n.get("name") == name)
        primitive = doc["meshes"][m]["primitives"][p]
        read = {key: read_accessor(doc, buffers, a, key) for key, a in primitive["attributes"].items()}
        skin = doc["skins"][node["skin"]]
        ibm = read_accessor(doc, buffers, skin["inverseBindMatrices"], "ibm").reshape(-1, 4, 4)
        joints = world[skin["joints"]] @ ibm.transpose(0, 2, 1)  # (glTF's joint matrices)
        v = np.c_[read["POSITION"], np.ones(len(read["POSITION"]))]
        got = np.einsum("vk,vkij,vj->vi", read["WEIGHTS_0"], joints[read["JOINTS_0"].astype(int)], v)[:, :3]
        err = np.linalg.norm(got - want, axis=1)
        assert err.max() <= SKIN_TOL, f"{kind}: {name} (meshes[{m}].primitives[{p}]) off by {err.max():.2e} m"


@pytest.mark.node
def test_three_js_skins_each_character_where_the_library_does(files: dict[str, Path], pose: StagePose) -> None:
    node = require_node_modules("three")
    specs = json.dumps([{"file": str(files[f"pose{kind}"])} for kind in KINDS])
    proc = subprocess.run([node, "skinned_check.mjs", specs], cwd=JS_DIR, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    for kind, report in zip(KINDS, json.loads(proc.stdout)):
        skins = _library_skins(_read(files[f"pose{kind}"])[0], pose)
        got = {(r["mesh"], max(r["primitive"], 0)): np.array(r["skinned"]).reshape(-1, 3) for r in report["meshes"]}
        for key, (name, want) in skins.items():
            err = np.linalg.norm(got[key] - want, axis=1)
            assert err.max() <= SKIN_TOL, f"three.js {kind}: {name} off by {err.max():.2e} m"


@pytest.mark.parametrize("name", ["anim.glb", "anim.gltf"])
def test_each_character_s_own_animations_are_clips_of_the_animation(name: str, files: dict[str, Path], folder) -> None:
    """The characters' files' own clips (an idle nod of the neck) in the animation file, after the take (the clip
    Blender makes the armatures' action): one clip each, ``"<figure> idle"``, on that figure's neck node, with the
    source file's keys. A pose file has no clip (``test_the_file_holds_each_character_s_skinned_meshes``)."""
    doc, buffers = _read(files[name])
    clips = {a["name"]: a for a in doc["animations"]}
    assert [a["name"] for a in doc["animations"]] == ["take", *(f"{c} idle" for c in CHARACTERS)]
    for figure, source in (("Hero", folder / "hero.glb"), ("Zed", folder / "zed.gltf")):
        src_doc, src_chunk = _parse_container(source.read_bytes())
        src_buffers, src = Buffers(src_doc, src_chunk, folder), src_doc["animations"][0]
        clip = clips[f"{figure} idle"]
        assert len(clip["channels"]) == len(src["channels"]) == 1
        got, want = clip["channels"][0], src["channels"][0]
        assert got["target"]["path"] == want["target"]["path"]
        node = got["target"]["node"]
        assert doc["nodes"][node]["name"] == src_doc["nodes"][want["target"]["node"]]["name"]
        parents = node_parents(doc)
        while parents[node] >= 0:
            node = parents[node]
        assert doc["nodes"][node]["name"] == figure  # (under its own figure's node)
        for key in ("input", "output"):
            a = read_accessor(doc, buffers, clip["samplers"][got["sampler"]][key], key)
            b = read_accessor(src_doc, src_buffers, src["samplers"][want["sampler"]][key], key)
            np.testing.assert_array_equal(a, b)


@pytest.mark.node
def test_the_khronos_validator_reports_no_errors(files: dict[str, Path]) -> None:
    reports = validate(*files.values())
    for name, path in files.items():
        report = reports[str(path)]
        assert (report["errors"], report["warnings"]) == (0, 0), (name, report["messages"])


# -- readers -----------------------------------------------------------------------------------------------------


def _expected(stage: Stage, takes: list[Take] | None, pose: StagePose | None) -> dict[str, Any]:
    """Each figure's joints ``(m, n, 3)`` in the world and the stick's ``(positions (m, 3), rotations (m, 4))``."""
    if takes is None:
        joints = {f.name: pose.world(i)[0][None] for i, f in enumerate(stage.figures)}  # type: ignore[union-attr]
        t = pose.prop_transform("stick")  # type: ignore[union-attr]
        return {"joints": joints, "stick": (t.position[None], t.rotation[None])}
    joints = {f.name: f.placement.to_world(t.positions) for f, t in zip(stage.figures, takes)}
    return {"joints": joints, "stick": prop_track(stage, takes, "stick")}


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    """Degrees between unit quaternions (by the chord)."""
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    chord = min(np.linalg.norm(a - b), np.linalg.norm(a + b))
    return float(np.degrees(4.0 * np.arcsin(min(chord / 2.0, 1.0))))


def _check_joints(where: str, f: Figure, got: np.ndarray, want: np.ndarray, errors: dict[str, float]) -> None:
    err = np.linalg.norm(got - want, axis=1)
    errors[f.name] = max(errors.get(f.name, 0.0), float(err.max()))
    worst = f.scene.skeleton.names[int(err.argmax())]
    assert err.max() <= POSITION_TOL, f"{where}: {f.name}.{worst} off by {err.max() * 1000:.3f} mm"


@pytest.fixture(scope="module")
def three(files: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return three_reports(files)


@pytest.mark.node
@pytest.mark.parametrize("name", ["pose.glb", "pose.gltf", "anim.glb", "anim.gltf"])
def test_three_js_finds_every_joint_within_a_millimetre(name: str, three, pose: StagePose, baked) -> None:
    report = three[name]
    stage, takes = (pose.stage, None) if name.startswith("pose") else baked
    want = _expected(stage, takes, pose)
    assert len(report["samples"]) == (1 if takes is None else FRAMES)
    errors: dict[str, float] = {}
    stick = three_node(report, "stick", under="Hero")
    for k, sample in enumerate(report["samples"]):
        for f in stage.figures:
            rows = [three_node(report, j, under=f.name) for j in f.scene.skeleton.names]
            got = np.array(sample["positions"])[rows]
            _check_joints(f"three.js {name}, sample {k}", f, got, want["joints"][f.name][k], errors)
        tol = POSITION_TOL if takes is None else HELD_TOL
        assert np.linalg.norm(np.array(sample["positions"][stick]) - want["stick"][0][k]) <= tol, f"{name}: stick"
        assert _angle(np.array(sample["quaternions"][stick]), want["stick"][1][k]) <= ANGLE_TOL, f"{name}: stick"
    print(f"three.js {name}: worst joint error (mm)", {n: round(e * 1000, 4) for n, e in errors.items()})


@pytest.fixture(scope="module", params=KINDS)
def blender(request: pytest.FixtureRequest, files: dict[str, Path], tmp_path_factory) -> tuple[str, dict[str, Any]]:
    kind = request.param
    out = tmp_path_factory.mktemp("blender_stage_character") / "contents.json"
    names = [f"pose{kind}", f"anim{kind}"]
    run_script("stage_contents.py", str(out), str(FPS), *(str(files[n]) for n in names))
    report = json.loads(out.read_text())
    return kind, {n: report[str(files[n])] for n in names}


@pytest.mark.blender
@pytest.mark.parametrize("what", ["pose", "anim"])
def test_blender_finds_every_joint_within_a_millimetre(what: str, blender, pose: StagePose, baked) -> None:
    kind, reports = blender
    report = reports[f"{what}{kind}"]
    stage, takes = (pose.stage, None) if what == "pose" else baked
    want = _expected(stage, takes, pose)
    assert report["frames"] == (None if takes is None else list(range(FRAMES)))
    errors: dict[str, float] = {}
    for k in range(1 if takes is None else FRAMES):
        for f in stage.figures:
            (armature,) = [a for a in report["armatures"] if f.name in (a["name"], *a["ancestors"])]
            heads = armature["heads"][k]
            got = np.array([heads[j] for j in f.scene.skeleton.names])
            _check_joints(f"Blender {what}{kind}, frame {k}", f, got, want["joints"][f.name][k], errors)
        stick = report["objects"]["stick"]
        err = np.linalg.norm(np.array(stick["location"][k]) - want["stick"][0][k])
        assert err <= (POSITION_TOL if takes is None else HELD_TOL), f"Blender {what}{kind}: stick off by {err}"
    for f in stage.figures[1:]:
        assert any(o["type"] == "MESH" and n.startswith(f"{f.name} ") for n, o in report["objects"].items())
    print(f"Blender {what}{kind}: worst joint error (mm)", {n: round(e * 1000, 4) for n, e in errors.items()})
