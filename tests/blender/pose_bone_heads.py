"""Run by Blender (``blender -b --python pose_bone_heads.py -- FILE.glb OUT.json``): import a glTF file
with Blender's own importer and write every pose bone's head in world space (metres, Y up as glTF,
converted back from Blender's Z up) as ``{bone name: [x, y, z]}``."""

import json
import sys

import numpy

numpy.bool = bool  # (Blender 3.4's glTF importer uses the alias NumPy removed)

import bpy  # noqa: E402

path, out = sys.argv[sys.argv.index("--") + 1 :][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=path)
heads = {}
for obj in bpy.context.scene.objects:
    if obj.type != "ARMATURE":
        continue
    for bone in obj.pose.bones:
        x, y, z = obj.matrix_world @ bone.head
        heads[bone.name] = [x, z, -y]  # (Blender's Z up back to glTF's Y up)
with open(out, "w") as f:
    json.dump(heads, f)
