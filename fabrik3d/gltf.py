"""Old import path, kept working: ``fabrik3d.gltf`` is now ``fabrik3d.io.gltf``."""

from fabrik3d.io.gltf import (
    animation_glb_bytes,
    export_animation,
    export_pose,
    import_skeleton,
    local_transforms,
    pose_glb_bytes,
    skeleton_from_bytes,
)

__all__ = [
    "animation_glb_bytes",
    "export_animation",
    "export_pose",
    "import_skeleton",
    "local_transforms",
    "pose_glb_bytes",
    "skeleton_from_bytes",
]
