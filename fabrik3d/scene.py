"""Old import path, kept working: ``fabrik3d.scene`` is now ``fabrik3d.io.scene``."""

from fabrik3d.io.scene import FORMAT, VERSION, Scene, load_scene, parse_scene, save_scene

__all__ = ["FORMAT", "VERSION", "Scene", "load_scene", "parse_scene", "save_scene"]
