"""Run by Blender (``blender -b --python export_prop.py -- OUT.glb OUT.json``): build a small static prop with
Blender's own tools (a cube of quads, and a 12-sided cylinder, its caps n-gons, parented to the cube, turned
and scaled), export it with Blender's glTF exporter, and write what Blender holds, in glTF's axes (Y up),
metres::

    {"triangles": t, "lower": [x, y, z], "upper": [x, y, z], "area": square metres}

(the triangles of Blender's own triangulation of every face, the bounding box and area of the world-space
surface)."""

import json
import math
import sys

import numpy

numpy.bool = bool  # (Blender 3.4's glTF importer uses the alias NumPy removed)

import bpy  # noqa: E402

glb, out = sys.argv[sys.argv.index("--") + 1 :][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.mesh.primitive_cube_add(size=0.4, location=(0.2, -0.1, 0.3))
cube = bpy.context.active_object
bpy.ops.mesh.primitive_cylinder_add(vertices=12, radius=0.05, depth=0.6, location=(0.0, 0.0, 0.5))
stick = bpy.context.active_object
stick.rotation_euler = (math.radians(30), math.radians(10), 0.0)
stick.scale = (1.0, 2.0, 1.0)
stick.parent = cube
bpy.context.view_layer.update()
bpy.ops.export_scene.gltf(filepath=glb, export_format="GLB")

triangles, points, area = 0, [], 0.0
depsgraph = bpy.context.evaluated_depsgraph_get()
for obj in (cube, stick):
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    mesh.calc_loop_triangles()
    world = [evaluated.matrix_world @ v.co for v in mesh.vertices]
    for tri in mesh.loop_triangles:
        a, b, c = (world[k] for k in tri.vertices)
        area += (b - a).cross(c - a).length / 2
    triangles += len(mesh.loop_triangles)
    points += [(p.x, p.z, -p.y) for p in world]  # (Blender's Z up to glTF's Y up)
    evaluated.to_mesh_clear()
report = {
    "triangles": triangles,
    "lower": [min(p[k] for p in points) for k in range(3)],
    "upper": [max(p[k] for p in points) for k in range(3)],
    "area": area,
}
with open(out, "w") as f:
    json.dump(report, f)
