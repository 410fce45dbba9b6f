"""Run by Blender (``blender -b --python stage_contents.py -- OUT.json FPS FILE...``): import each glTF file of a
stage (several figures and props) with Blender's own importer into an empty scene running at ``FPS`` frames
per second (the importer keys a glTF time ``t`` at frame ``t * FPS``), and write, per file, what is where on
every frame of its animation (or once, for a file without one)::

    {FILE: {"frames": [f, ...],
            "armatures": [{"name", "ancestors": [object names, nearest first],
                           "heads": [{bone: [x, y, z]} per frame]}],
            "objects": {name: {"type", "ancestors", "parent_bone",
                               "location": [[x, y, z] per frame], "matrix": [3x3 per frame]}}}}

Positions and matrices are in world space, metres, Y up as glTF (converted back from Blender's Z up:
a Blender world point ``b`` is ``C^T b`` in glTF, a world matrix ``M`` is ``C^T M C``, with ``C`` glTF's
axes in Blender's); ``matrix`` holds an object's world rotation times its scale."""

import json
import sys

import numpy

numpy.bool = bool  # (Blender 3.4's glTF importer uses the alias NumPy removed)

import bpy  # noqa: E402
from mathutils import Matrix  # noqa: E402

C = Matrix(((1.0, 0.0, 0.0), (0.0, 0.0, -1.0), (0.0, 1.0, 0.0)))  # glTF's x, y, z in Blender's world
CT = C.transposed()


def gltf_point(v):
    return list(CT @ v)


def gltf_matrix(m):
    return [list(row) for row in CT @ m.to_3x3() @ C]


def ancestors(obj):
    out = []
    while obj.parent is not None:
        obj = obj.parent
        out.append(obj.name)
    return out


def frames_of(scene):
    actions = [o.animation_data.action for o in scene.objects if o.animation_data and o.animation_data.action]
    if not actions:
        return None
    first = min(a.frame_range[0] for a in actions)
    last = max(a.frame_range[1] for a in actions)
    return list(range(round(first), round(last) + 1))


def contents(path, fps):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, 1.0
    bpy.ops.import_scene.gltf(filepath=path)
    frames = frames_of(scene)
    armatures = [o for o in scene.objects if o.type == "ARMATURE"]
    others = [o for o in scene.objects if o.type in ("MESH", "EMPTY")]
    out = {
        "frames": frames,
        "armatures": [{"name": a.name, "ancestors": ancestors(a), "heads": []} for a in armatures],
        "objects": {
            o.name: {"type": o.type, "ancestors": ancestors(o), "parent_bone": o.parent_bone or None,
                     "location": [], "matrix": []}
            for o in others
        },
    }  # fmt: skip
    for frame in frames if frames is not None else [None]:
        if frame is not None:
            scene.frame_set(frame)
        bpy.context.view_layer.update()
        for a, entry in zip(armatures, out["armatures"]):
            entry["heads"].append({b.name: gltf_point(a.matrix_world @ b.head) for b in a.pose.bones})
        for o in others:
            entry = out["objects"][o.name]
            entry["location"].append(gltf_point(o.matrix_world.translation))
            entry["matrix"].append(gltf_matrix(o.matrix_world))
    return out


args = sys.argv[sys.argv.index("--") + 1 :]
out_path, fps, files = args[0], int(args[1]), args[2:]
report = {f: contents(f, fps) for f in files}
with open(out_path, "w") as f:
    json.dump(report, f)
