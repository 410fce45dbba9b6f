"""Run by Blender (``blender -b --python export_hand_rigs.py -- OUT_FOLDER``): a Mixamo-named armature
with both hands' five fingers, built on the joints of Rigify's human metarig as Blender adds it, its
arms lowered into an A-pose, exported with Blender's own glTF exporter as ``OUT_FOLDER/mixamo_hands.glb``
(Mixamo's hierarchy: each finger's first bone on the hand, four bones a finger, the fourth its tip).

The hand-shape tests (``tests/io/test_blender_hand_shapes.py``) take Rigify's metarig itself from
``export_rigs.py``."""

import sys

import addon_utils
import bpy
from mathutils import Matrix, Vector

out = sys.argv[sys.argv.index("--") + 1]
bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable("rigify", default_set=True)
bpy.ops.object.armature_human_metarig_add()
metarig = bpy.context.object
heads = {b.name: b.head_local.copy() for b in metarig.data.bones}
tails = {b.name: b.tail_local.copy() for b in metarig.data.bones}

M = "mixamorig:"
bones = [
    ("Hips", None, heads["spine"], heads["spine.001"]),
    ("Spine", "Hips", heads["spine.001"], heads["spine.002"]),
    ("Spine1", "Spine", heads["spine.002"], heads["spine.003"]),
    ("Spine2", "Spine1", heads["spine.003"], heads["spine.004"]),
    ("Neck", "Spine2", heads["spine.004"], heads["spine.006"]),
    ("Head", "Neck", heads["spine.006"], tails["spine.006"]),
]
FINGERS = {"Thumb": "thumb", "Index": "f_index", "Middle": "f_middle", "Ring": "f_ring", "Pinky": "f_pinky"}
for side, s in (("Left", "L"), ("Right", "R")):
    bones += [
        (f"{side}Shoulder", "Spine2", heads[f"shoulder.{s}"], heads[f"upper_arm.{s}"]),
        (f"{side}Arm", f"{side}Shoulder", heads[f"upper_arm.{s}"], heads[f"forearm.{s}"]),
        (f"{side}ForeArm", f"{side}Arm", heads[f"forearm.{s}"], heads[f"hand.{s}"]),
        (f"{side}Hand", f"{side}ForeArm", heads[f"hand.{s}"], heads[f"f_middle.01.{s}"]),
        (f"{side}UpLeg", "Hips", heads[f"thigh.{s}"], heads[f"shin.{s}"]),
        (f"{side}Leg", f"{side}UpLeg", heads[f"shin.{s}"], heads[f"foot.{s}"]),
        (f"{side}Foot", f"{side}Leg", heads[f"foot.{s}"], heads[f"toe.{s}"]),
        (f"{side}ToeBase", f"{side}Foot", heads[f"toe.{s}"], tails[f"toe.{s}"]),
    ]
    for finger, rigify in FINGERS.items():
        points = [heads[f"{rigify}.0{k}.{s}"] for k in (1, 2, 3)] + [tails[f"{rigify}.03.{s}"]]
        end = points[3] + (points[3] - points[2]).normalized() * 0.01
        parent = f"{side}Hand"
        for k, (head, tail) in enumerate(zip(points, [*points[1:], end]), start=1):
            bones.append((f"{side}Hand{finger}{k}", parent, head, tail))
            parent = f"{side}Hand{finger}{k}"
bpy.data.objects.remove(metarig)
data = bpy.data.armatures.new("mixamo_hands")
arm = bpy.data.objects.new("mixamo_hands", data)
bpy.context.scene.collection.objects.link(arm)
bpy.context.view_layer.objects.active = arm
bpy.ops.object.mode_set(mode="EDIT")
for name, parent, head, tail in bones:
    b = data.edit_bones.new(M + name)
    b.head, b.tail = head, tail
    if parent:
        b.parent = data.edit_bones[M + parent]
        b.use_connect = False
# An A-pose: each arm, hand and fingers turned 20 deg further down about the forward axis at the shoulder.
for side, sign in (("Left", 1.0), ("Right", -1.0)):
    pivot = data.edit_bones[f"{M}{side}Arm"].head.copy()
    turn = Matrix.Translation(pivot) @ Matrix.Rotation(sign * 0.349, 4, "Y") @ Matrix.Translation(-pivot)
    for b in data.edit_bones:
        if b.name.startswith((f"{M}{side}Arm", f"{M}{side}ForeArm", f"{M}{side}Hand")):
            b.head, b.tail = turn @ b.head, turn @ b.tail
bpy.ops.object.mode_set(mode="OBJECT")
# A mesh: one triangle at the middle of every bone, weighted to it alone.
verts, faces = [], []
body = bpy.data.objects.new("mixamo_hands_body", bpy.data.meshes.new("mixamo_hands_body"))
groups = []
for bone in arm.data.bones:
    mid = (bone.head_local + bone.tail_local) / 2.0
    k = len(verts)
    verts += [mid + Vector((0.005, 0, 0)), mid + Vector((0, 0.005, 0)), mid + Vector((0, 0, 0.005))]
    faces.append((k, k + 1, k + 2))
    groups.append((bone.name, (k, k + 1, k + 2)))
body.data.from_pydata([tuple(v) for v in verts], [], faces)
bpy.context.scene.collection.objects.link(body)
for bone_name, idx in groups:
    body.vertex_groups.new(name=bone_name).add(list(idx), 1.0, "REPLACE")
body.parent = arm
body.modifiers.new("Armature", "ARMATURE").object = arm
bpy.ops.object.select_all(action="DESELECT")
arm.select_set(True)
body.select_set(True)
bpy.ops.export_scene.gltf(
    filepath=f"{out}/mixamo_hands.glb", export_format="GLB", use_selection=True, export_animations=False
)
