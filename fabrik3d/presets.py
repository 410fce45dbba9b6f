"""Old import path, kept working: ``fabrik3d.presets`` is now ``fabrik3d.model.presets``; with the
proportions of ``fabrik3d.model.proportions`` and ``repose``, ``repose_key`` (``fabrik3d.solver.proportions``)."""

from fabrik3d.model.presets import get, humanoid, names, octopus, robot_arm
from fabrik3d.model.proportions import Proportions, proportions_of
from fabrik3d.solver.proportions import repose, repose_key

__all__ = ["Proportions", "get", "humanoid", "names", "octopus", "proportions_of", "repose", "repose_key", "robot_arm"]
