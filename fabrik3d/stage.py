"""Stages: several figures and props in one scene, the contacts between them, one file out (docs/stage.md).

``Stage`` holds ``Figure``s (each a named ``Scene``, placed by a ``Placement``), ``Prop``s (built-in shapes or
a mesh file's triangles, ``load_prop_file``, ``prop_surface``; free or held by a joint: ``Hold``) and
``Contact``s (an effector on another figure's joint or on a prop);
``load_stage`` reads any scene file (version 4, or 1-3 as one figure), ``save_stage`` writes version 4.
``solve_stage`` solves the figures with their contacts kept (``fabrik3d.solver.together``);
``bake_stage`` bakes their keys; ``export_stage_pose`` and ``export_stage_animation`` write every figure
and prop into one glTF file.

Example::

    import fabrik3d
    from fabrik3d.stage import Contact, Figure, Placement, Stage, solve_stage

    ada = fabrik3d.io.scene.scene_or_preset("humanoid")
    ben = fabrik3d.io.scene.scene_or_preset("humanoid")
    stage = Stage(
        [Figure("Ada", ada), Figure("Ben", ben, Placement([0.0, 0.0, 0.9], facing=180))],
        contacts=[Contact("Ada", "hand_r", on_figure="Ben", joint="hand_r")],  # a handshake
    )
    pose = solve_stage(stage)  # pose.poses[i]: figure i's, pose.world(i): in the stage
"""

from fabrik3d.io.prop_file import PropFile, load_prop_file, prop_surface
from fabrik3d.io.stage import Figure, Stage, load_stage, parse_stage, save_stage
from fabrik3d.io.stage_bake import bake_stage, prop_track
from fabrik3d.io.stage_gltf import (
    export_stage_animation,
    export_stage_pose,
    stage_animation_glb_bytes,
    stage_pose_glb_bytes,
)
from fabrik3d.io.stage_pose import StagePose, solve_stage
from fabrik3d.model.contacts import Contact
from fabrik3d.model.placement import Placement, Transform
from fabrik3d.model.props import SHAPES, Hold, Prop, nearest_on_surface, prop_mesh, standing

__all__ = [
    "SHAPES",
    "Contact",
    "Figure",
    "Hold",
    "Placement",
    "Prop",
    "PropFile",
    "Stage",
    "StagePose",
    "Transform",
    "bake_stage",
    "export_stage_animation",
    "export_stage_pose",
    "load_prop_file",
    "load_stage",
    "nearest_on_surface",
    "parse_stage",
    "prop_mesh",
    "prop_surface",
    "prop_track",
    "save_stage",
    "solve_stage",
    "stage_animation_glb_bytes",
    "stage_pose_glb_bytes",
    "standing",
]
