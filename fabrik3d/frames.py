"""Old import path, kept working: ``fabrik3d.frames`` is now ``fabrik3d.model.frames`` and ``fabrik3d.solver.rig``."""

from fabrik3d.model.frames import JointTree, rest_frames, rest_local
from fabrik3d.solver.rig import MAX_PLANS, Rig, bone_direction, pose_frames, rig

__all__ = ["MAX_PLANS", "JointTree", "Rig", "bone_direction", "pose_frames", "rest_frames", "rest_local", "rig"]
