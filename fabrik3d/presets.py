"""Old import path, kept working: ``fabrik3d.presets`` is now ``fabrik3d.model.presets``."""

from fabrik3d.model.presets import get, humanoid, names, octopus, robot_arm

__all__ = ["get", "humanoid", "names", "octopus", "robot_arm"]
