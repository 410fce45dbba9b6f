"""Run by Blender (``blender -b --python export_rigs.py -- OUT_FOLDER``): build two characters the way a
user would in Blender and export each with Blender's own glTF exporter into OUT_FOLDER:

- ``rigify.glb``: Rigify's human metarig as Blender adds it (159 bones: face, palms, fingers, heels);
- ``mixamo.glb``: an armature with Mixamo's bone names (``mixamorig:Hips`` ...) on the same metarig's
  joints, its arms lowered further (an A-pose), with the middle finger's bones.

Each armature skins a small mesh with a material (``<name>_skin``): a triangle at the middle of every
deforming bone, weighted to it alone, and one triangle left without weights (so Blender's exporter adds
its ``neutral_bone`` to the skin, as it does for real characters)."""

import sys

import addon_utils
import bpy
from mathutils import Matrix, Vector

out = sys.argv[sys.argv.index("--") + 1]
bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable("rigify", default_set=True)


def skin(arm: bpy.types.Object, name: str) -> None:
    """A mesh of one triangle per deforming bone (and one without weights) skinned to ``arm``."""
    verts, faces, groups = [], [], []
    for bone in arm.data.bones:
        if not bone.use_deform:
            continue
        mid = (bone.head_local + bone.tail_local) / 2.0
        k = len(verts)
        verts += [mid + Vector((0.01, 0, 0)), mid + Vector((0, 0.01, 0)), mid + Vector((0, 0, 0.01))]
        faces.append((k, k + 1, k + 2))
        groups.append((bone.name, (k, k + 1, k + 2)))
    k = len(verts)
    verts += [Vector((0, 0, 0)), Vector((0.02, 0, 0)), Vector((0, 0.02, 0))]  # weighted to no bone
    faces.append((k, k + 1, k + 2))
    mesh = bpy.data.meshes.new(name + "_body")
    mesh.from_pydata([tuple(v) for v in verts], [], faces)
    body = bpy.data.objects.new(name + "_body", mesh)
    bpy.context.scene.collection.objects.link(body)
    for bone_name, idx in groups:
        body.vertex_groups.new(name=bone_name).add(list(idx), 1.0, "REPLACE")
    body.parent = arm
    body.modifiers.new("Armature", "ARMATURE").object = arm
    material = bpy.data.materials.new(name + "_skin")
    material.diffuse_color = (0.8, 0.6, 0.45, 1.0)
    body.data.materials.append(material)


def export(objects: list, path: str) -> None:
    bpy.ops.object.select_all(action="DESELECT")
    for o in objects:
        o.select_set(True)
    bpy.ops.export_scene.gltf(filepath=path, export_format="GLB", use_selection=True, export_animations=False)


bpy.ops.object.armature_human_metarig_add()
metarig = bpy.context.object
metarig.name = "rigify"
heads = {b.name: b.head_local.copy() for b in metarig.data.bones}
tails = {b.name: b.tail_local.copy() for b in metarig.data.bones}
skin(metarig, "rigify")
export([metarig, *metarig.children], f"{out}/rigify.glb")

# Mixamo's names on the metarig's joints: (name, parent, head, tail)
M = "mixamorig:"
bones = [
    ("Hips", None, heads["spine"], heads["spine.001"]),
    ("Spine", "Hips", heads["spine.001"], heads["spine.002"]),
    ("Spine1", "Spine", heads["spine.002"], heads["spine.003"]),
    ("Spine2", "Spine1", heads["spine.003"], heads["spine.004"]),
    ("Neck", "Spine2", heads["spine.004"], heads["spine.006"]),
    ("Head", "Neck", heads["spine.006"], tails["spine.006"]),
    ("HeadTop_End", "Head", tails["spine.006"], tails["spine.006"] + Vector((0, 0, 0.05))),
]
for side, s in (("Left", "L"), ("Right", "R")):
    bones += [
        (f"{side}Shoulder", "Spine2", heads[f"shoulder.{s}"], heads[f"upper_arm.{s}"]),
        (f"{side}Arm", f"{side}Shoulder", heads[f"upper_arm.{s}"], heads[f"forearm.{s}"]),
        (f"{side}ForeArm", f"{side}Arm", heads[f"forearm.{s}"], heads[f"hand.{s}"]),
        (f"{side}Hand", f"{side}ForeArm", heads[f"hand.{s}"], heads[f"f_middle.01.{s}"]),
        (f"{side}HandMiddle1", f"{side}Hand", heads[f"f_middle.01.{s}"], heads[f"f_middle.02.{s}"]),
        (f"{side}HandMiddle2", f"{side}HandMiddle1", heads[f"f_middle.02.{s}"], heads[f"f_middle.03.{s}"]),
        (f"{side}HandMiddle3", f"{side}HandMiddle2", heads[f"f_middle.03.{s}"], tails[f"f_middle.03.{s}"]),
        (f"{side}UpLeg", "Hips", heads[f"thigh.{s}"], heads[f"shin.{s}"]),
        (f"{side}Leg", f"{side}UpLeg", heads[f"shin.{s}"], heads[f"foot.{s}"]),
        (f"{side}Foot", f"{side}Leg", heads[f"foot.{s}"], heads[f"toe.{s}"]),
        (f"{side}ToeBase", f"{side}Foot", heads[f"toe.{s}"], tails[f"toe.{s}"]),
        (f"{side}Toe_End", f"{side}ToeBase", tails[f"toe.{s}"], tails[f"toe.{s}"] + Vector((0, -0.03, 0))),
    ]
data = bpy.data.armatures.new("mixamo")
arm = bpy.data.objects.new("mixamo", data)
bpy.context.scene.collection.objects.link(arm)
bpy.context.view_layer.objects.active = arm
bpy.ops.object.mode_set(mode="EDIT")
for name, parent, head, tail in bones:
    b = data.edit_bones.new(M + name)
    b.head, b.tail = head, tail
    if parent:
        b.parent = data.edit_bones[M + parent]
        b.use_connect = False
# An A-pose: each arm turned 20 deg further down about the forward axis at its shoulder joint.
for side, sign in (("Left", 1.0), ("Right", -1.0)):
    pivot = data.edit_bones[f"{M}{side}Arm"].head.copy()
    turn = Matrix.Translation(pivot) @ Matrix.Rotation(sign * 0.349, 4, "Y") @ Matrix.Translation(-pivot)
    for b in data.edit_bones:
        if b.name.startswith(f"{M}{side}") and not b.name.startswith((f"{M}{side}Up", f"{M}{side}Leg")):
            if b.name in (f"{M}{side}Shoulder",) or "Foot" in b.name or "Toe" in b.name:
                continue
            b.head, b.tail = turn @ b.head, turn @ b.tail
bpy.ops.object.mode_set(mode="OBJECT")
skin(arm, "mixamo")
export([arm, *arm.children], f"{out}/mixamo.glb")
