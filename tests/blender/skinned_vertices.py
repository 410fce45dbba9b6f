"""Run by Blender (``blender -b --python skinned_vertices.py -- FILE.glb OUT.json``): import a glTF file
with Blender's own importer and write, for each mesh object, whether an armature deforms it and its
vertices after the deformation, in world space (glTF's Y up) as ``{name: {"armature": bool, "vertices":
[[x, y, z], ...]}}``."""

import json
import sys

import numpy

numpy.bool = bool  # (Blender 3.4's glTF importer uses the alias NumPy removed)

import bpy  # noqa: E402

path, out = sys.argv[sys.argv.index("--") + 1 :][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=path)
depsgraph = bpy.context.evaluated_depsgraph_get()
report = {}
for obj in bpy.context.scene.objects:
    if obj.type != "MESH":
        continue
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    points = []
    for v in mesh.vertices:
        x, y, z = evaluated.matrix_world @ v.co
        points.append([x, z, -y])  # (Blender's Z up back to glTF's Y up)
    report[obj.name] = {"armature": any(m.type == "ARMATURE" for m in obj.modifiers), "vertices": points}
    evaluated.to_mesh_clear()
with open(out, "w") as f:
    json.dump(report, f)
