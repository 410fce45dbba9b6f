"""Pose libraries: named poses in a SQLite database or a JSON file (docs/poses.md).

The path says which: a name ending in ``.db``, ``.sqlite`` or ``.sqlite3`` (``DB_SUFFIXES``) is a
library database (``fabrik3d.io.pose_store``: one row per pose, each save one transaction); any other
is a JSON library file (``fabrik3d.model.pose_library`` has the format). ``save_pose`` adds a pose (a
new library when there is none) or replaces the pose of the same name; ``delete_pose`` removes one;
``load_library`` reads them all, ``load_pose`` one, ``library_page`` the names and thumbnails of a page
of them (``PAGE_SIZE``) with the count. ``import_library`` and ``export_library`` carry poses between a
JSON file and a database.

Any number of processes may write one library at once and lose nothing: a database by its
transactions, a JSON file by a lock held across its read, change and write (``fabrik3d.io.locks``).
A JSON write is atomic (the old file stays whole until the new one is complete); a JSON file over
``MAX_LIBRARY_BYTES`` is refused before it is parsed. Every failure (a bad file, a folder that cannot be
read) is one ``ValueError`` line naming the file and the place, e.g. ``poses.json: poses['wave']
.bones['elbow_l']: expected 3 numbers, got [1, 2]``. ``starter_poses`` is the library shipped with the
package (made by ``examples/make_pose_library.py``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from fabrik3d import checks
from fabrik3d.io import files, locks, pose_store
from fabrik3d.model.pose_library import MAX_POSES, Pose, check_name, check_thumbnail, library_from_dict, library_to_dict

# A JSON library file is refused beyond this size (thumbnails included), before it is parsed.
MAX_LIBRARY_BYTES = 32 * 1024 * 1024
STARTER = Path(__file__).resolve().parent.parent / "data" / "poses.json"
# Names of library databases (any other name is a JSON library file).
DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
# Rows in a page (``library_page``), and the most one page may ask for.
PAGE_SIZE = 50
MAX_PAGE = 1000


@dataclass(frozen=True)
class LibraryPage:
    """One page of a library: ``total`` poses in all; ``rows``: (name, thumbnail PNG bytes or None) of
    the poses from the ``offset``-th (0-based) on, in the library's order."""

    total: int
    offset: int
    rows: tuple[tuple[str, bytes | None], ...]


def is_database(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a library database (its name ends in one of ``DB_SUFFIXES``)."""
    return Path(path).suffix.lower() in DB_SUFFIXES


def parse_library(text: str | bytes, source: str = "pose library") -> dict[str, Pose]:
    """name -> ``Pose`` from a library file's text; ``ValueError`` prefixed with ``source``."""
    return files.parse_json(text, source, library_from_dict)


def load_library(path: str | os.PathLike[str]) -> dict[str, Pose]:
    """name -> ``Pose`` of the library ``path`` (a database or a JSON file), in the library's order.

    Raises:
        ValueError: one line naming the file: missing, not a regular file, unreadable, over
            ``MAX_LIBRARY_BYTES`` (JSON), not a pose library (naming the place in it).
    """
    if is_database(path):
        return pose_store.load_all(Path(path))
    return parse_library(files.read_bytes(path, MAX_LIBRARY_BYTES), str(path))


def load_pose(path: str | os.PathLike[str], name: str) -> Pose:
    """The pose ``name`` of the library ``path`` (of a database, only that pose is read).

    Raises:
        ValueError: naming the file, when it has no such pose or cannot be read (``load_library``).
    """
    if is_database(path):
        return pose_store.load_one(Path(path), name)
    poses = load_library(path)
    if not isinstance(name, str) or name not in poses:
        raise ValueError(f"{path}: no pose {checks.quoted(name)}")
    return poses[name]


def library_page(path: str | os.PathLike[str], offset: int = 0, limit: int = PAGE_SIZE) -> LibraryPage:
    """The names and thumbnails of ``limit`` poses of the library ``path`` from the ``offset``-th on
    (0-based; past the end: no rows), and the count of all; a database reads only those rows.

    Raises:
        ValueError: a bad ``offset`` or ``limit`` (0 to ``MAX_PAGE`` rows), or naming the file (``load_library``).
    """
    for what, value, top in (("offset", offset, MAX_POSES), ("limit", limit, MAX_PAGE)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise ValueError(f"library page: {what} is a whole number from 0 to {top}, got {checks.quoted(value)}")
    if is_database(path):
        total, rows = pose_store.page(Path(path), offset, limit)
    else:
        poses = load_library(path)
        total = len(poses)
        rows = [(name, pose.thumbnail) for name, pose in list(poses.items())[offset : offset + limit]]
    return LibraryPage(total, offset, tuple(rows))


def save_pose(
    path: str | os.PathLike[str], name: str, pose: Pose, thumbnail: bytes | None = None, overwrite: bool = True
) -> None:
    """Save ``pose`` as ``name`` in the library ``path`` (created when missing; the folder must exist).
    A pose of the same name is replaced in its place, or with ``overwrite=False`` refused.

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
    if is_database(p):
        pose_store.save(p, name, pose, overwrite)
        return
    with locks.held(p):
        poses = _existing(p)
        if name in poses and not overwrite:
            raise ValueError(f"{p}: already has a pose {checks.quoted(name)} (pass overwrite=True to replace it)")
        poses[name] = pose
        _write(p, poses)


def delete_pose(path: str | os.PathLike[str], name: str) -> None:
    """Remove the pose ``name`` from the library ``path`` (the library stays, maybe empty).

    Raises:
        ValueError: naming the file, when it has no such pose or is not a pose library.
    """
    p = Path(path)
    if is_database(p):
        pose_store.delete(p, name)
        return
    with locks.held(p):
        poses = load_library(p)
        if name not in poses:
            shown = checks.quoted(name)
            raise ValueError(f"{p}: no pose {shown}; poses are {checks.names_list(poses, quote=True) or 'none'}")
        del poses[name]
        _write(p, poses)


def import_library(json_path: str | os.PathLike[str], db_path: str | os.PathLike[str], replace: bool = True) -> int:
    """Save every pose of the JSON library file ``json_path`` into the library database ``db_path``
    (made when missing), in one transaction: a pose of a name the database has replaces it in its place
    (with ``replace=False``, the database's is kept), the others go last in the file's order. The JSON
    file is only read. Returns how many poses were saved.

    Raises:
        ValueError: ``db_path`` not a database name (``DB_SUFFIXES``), or naming the file that is bad.
    """
    _check_database(db_path)
    poses = parse_library(files.read_bytes(json_path, MAX_LIBRARY_BYTES), str(json_path))
    return pose_store.save_many(Path(db_path), poses, replace)


def export_library(db_path: str | os.PathLike[str], json_path: str | os.PathLike[str]) -> int:
    """Write every pose of the library database ``db_path`` to the JSON library file ``json_path`` (the
    docs' format; a file there is replaced whole, atomically). Returns how many poses were written.

    Raises:
        ValueError: ``db_path`` not a database name or ``json_path`` one, or naming the file that is bad.
    """
    _check_database(db_path)
    if is_database(json_path):
        raise ValueError(f"{json_path}: export writes a JSON file; a name ending in {DB_SUFFIXES} is a database")
    poses = pose_store.load_all(Path(db_path))
    p = Path(json_path)
    with locks.held(p):
        _write(p, poses)
    return len(poses)


def starter_poses() -> dict[str, Pose]:
    """name -> ``Pose`` of the starter library shipped with the package (T, A, idle, walk, run, sit, ...)."""
    return load_library(STARTER)


def _check_database(path: str | os.PathLike[str]) -> None:
    if not is_database(path):
        raise ValueError(f"{path}: a library database's name ends in {', '.join(DB_SUFFIXES)}")


def _existing(path: Path) -> dict[str, Pose]:
    """The poses of the JSON file ``path``, none when it does not exist (a bad file is an error: never
    overwritten; a folder that cannot be read too)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return load_library(path)


def _write(path: Path, poses: dict[str, Pose]) -> None:
    """Write ``poses`` as the JSON library file ``path`` (atomically; the caller holds its lock)."""
    text = json.dumps(library_to_dict(poses), indent=1)
    data = text.encode("utf-8")
    if len(data) > MAX_LIBRARY_BYTES:
        raise ValueError(f"{path}: the library would be over {MAX_LIBRARY_BYTES} bytes")
    files.write_atomic(path, data + b"\n")
