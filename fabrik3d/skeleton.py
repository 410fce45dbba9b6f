"""Old import path, kept working: ``fabrik3d.skeleton`` is now ``fabrik3d.model.skeleton``."""

from fabrik3d.model.skeleton import MIN_BONE, Skeleton

__all__ = ["MIN_BONE", "Skeleton"]
