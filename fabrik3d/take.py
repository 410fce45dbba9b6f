"""Old import path, kept working: ``fabrik3d.take`` is now ``fabrik3d.io.take``."""

from fabrik3d.io.take import (
    BONE_TOLERANCE,
    FORMAT,
    UNIT_TOLERANCE,
    VERSION,
    Take,
    check_frames,
    check_pose,
    load_take,
    parse_take,
    save_take,
    take_to_json,
)

__all__ = [
    "BONE_TOLERANCE",
    "FORMAT",
    "UNIT_TOLERANCE",
    "VERSION",
    "Take",
    "check_frames",
    "check_pose",
    "load_take",
    "parse_take",
    "save_take",
    "take_to_json",
]
