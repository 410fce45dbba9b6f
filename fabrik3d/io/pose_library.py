"""Pose library files: named poses in a JSON file (``fabrik3d.model.pose_library`` has the format).

``save_pose`` adds a pose to a library file (a new file when there is none) or replaces the pose of the
same name; ``delete_pose`` removes one; ``load_library`` reads them all. Writes are atomic (the old file
stays whole until the new one is complete); a file over ``MAX_LIBRARY_BYTES`` is refused before it is
parsed; a bad file gives one line naming the file and the place, e.g. ``poses.json: poses['wave']
.bones['elbow_l']: expected 3 numbers, got [1, 2]``. ``starter_poses`` is the library shipped with the
package (made by ``examples/make_pose_library.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from fabrik3d import checks
from fabrik3d.io import files
from fabrik3d.model.pose_library import Pose, check_name, check_thumbnail, library_from_dict, library_to_dict

# A library file is refused beyond this size (thumbnails included), before it is parsed.
MAX_LIBRARY_BYTES = 32 * 1024 * 1024
STARTER = Path(__file__).resolve().parent.parent / "data" / "poses.json"


def parse_library(text: str | bytes, source: str = "pose library") -> dict[str, Pose]:
    """name -> ``Pose`` from a library file's text; ``ValueError`` prefixed with ``source``."""
    return files.parse_json(text, source, library_from_dict)


def load_library(path: str | os.PathLike[str]) -> dict[str, Pose]:
    """name -> ``Pose`` of the library file ``path``, in the file's order.

    Raises:
        ValueError: one line naming the file: missing, not a regular file, over ``MAX_LIBRARY_BYTES``,
            not JSON, or not a pose library (naming the place in it).
    """
    return parse_library(files.read_bytes(path, MAX_LIBRARY_BYTES), str(path))


def _existing(path: Path) -> dict[str, Pose]:
    """The poses of ``path``, none when it does not exist (a bad file is an error: never overwritten)."""
    if not path.exists():
        return {}
    return load_library(path)


def _write(path: Path, poses: dict[str, Pose]) -> None:
    text = json.dumps(library_to_dict(poses), indent=1)
    data = text.encode("utf-8")
    if len(data) > MAX_LIBRARY_BYTES:
        raise ValueError(f"{path}: the library would be over {MAX_LIBRARY_BYTES} bytes")
    files.write_atomic(path, data + b"\n")


def save_pose(
    path: str | os.PathLike[str], name: str, pose: Pose, thumbnail: bytes | None = None, overwrite: bool = True
) -> None:
    """Save ``pose`` as ``name`` in the library file ``path`` (created when missing; the folder must
    exist). A pose of the same name is replaced, or with ``overwrite=False`` refused.

    Args:
        thumbnail: PNG bytes (at most ``fabrik3d.model.pose_library.MAX_THUMBNAIL_BYTES``), stored with
            the pose; ``None`` keeps the pose's own.

    Raises:
        ValueError: naming the file: a bad name or thumbnail, an existing pose with ``overwrite=False``, an
            existing file that is not a pose library (it is left as it is), or a folder that cannot be
            written.
    """
    p = Path(path)
    if not isinstance(pose, Pose):
        raise ValueError(f"pose: expected a fabrik3d Pose, got {type(pose).__name__}")
    name = check_name(name)
    if thumbnail is not None:
        pose = Pose(pose.bones, pose.twists, pose.pelvis, pose.height, check_thumbnail(thumbnail))
    poses = _existing(p)
    if name in poses and not overwrite:
        raise ValueError(f"{p}: already has a pose {checks.quoted(name)} (pass overwrite=True to replace it)")
    poses[name] = pose
    _write(p, poses)


def delete_pose(path: str | os.PathLike[str], name: str) -> None:
    """Remove the pose ``name`` from the library file ``path`` (the file stays, maybe empty).

    Raises:
        ValueError: naming the file, when it has no such pose or is not a pose library.
    """
    p = Path(path)
    poses = load_library(p)
    if name not in poses:
        shown = checks.quoted(name)
        raise ValueError(f"{p}: no pose {shown}; poses are {checks.names_list(poses, quote=True) or 'none'}")
    del poses[name]
    _write(p, poses)


def starter_poses() -> dict[str, Pose]:
    """name -> ``Pose`` of the starter library shipped with the package (T, A, idle, walk, run, sit, ...)."""
    return load_library(STARTER)
