"""Run by Blender (``blender -b --python scene_contents.py -- FILE.glb OUT.json``): import a glTF file with
Blender's own importer and write what it made: ``{"bones": [armature bone names], "meshes": [mesh object
names], "materials": [material names], "heads": {bone: [x, y, z]}}`` (heads in world space, metres, Y up as
glTF, converted back from Blender's Z up)."""

import json
import sys

import numpy

numpy.bool = bool  # (Blender 3.4's glTF importer uses the alias NumPy removed)

import bpy  # noqa: E402

path, out = sys.argv[sys.argv.index("--") + 1 :][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=path)
bones, heads, meshes = [], {}, []
for obj in bpy.context.scene.objects:
    if obj.type == "ARMATURE":
        for bone in obj.pose.bones:
            bones.append(bone.name)
            x, y, z = obj.matrix_world @ bone.head
            heads[bone.name] = [x, z, -y]
    elif obj.type == "MESH":
        meshes.append(obj.name)
materials = sorted(m.name for m in bpy.data.materials)
with open(out, "w") as f:
    json.dump({"bones": sorted(bones), "meshes": sorted(meshes), "materials": materials, "heads": heads}, f)
