"""The pose library as a SQLite database: one row per pose (docs/poses.md, "The library database").

A table ``poses(name TEXT PRIMARY KEY, position INTEGER UNIQUE, pose TEXT, thumbnail BLOB)``: the pose's
JSON form (``fabrik3d.model.pose_library``) without its thumbnail, the thumbnail's PNG bytes apart, and
the order the poses were first saved in. The file says it is a library with ``PRAGMA application_id``
(``APPLICATION_ID``) and its layout's version with ``PRAGMA user_version``. The journal is WAL (readers
never wait for a writer); each save, delete or import is one ``BEGIN IMMEDIATE`` transaction, and a
writer waits for another for up to ``BUSY_TIMEOUT`` seconds. Reading a page touches 50 names and
thumbnails, never the poses. ``sqlite3`` is imported inside the functions (Pyodide lacks it: ``import
fabrik3d`` and JSON libraries work there, a database is a ``ValueError`` that says so). Every failure is
a ``ValueError`` naming the file.
This module is the store only: ``fabrik3d.io.pose_library`` is its public face.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from fabrik3d import checks
from fabrik3d.model.pose_library import MAX_POSES, MAX_THUMBNAIL_BYTES, PNG_SIGNATURE, Pose, check_thumbnail

APPLICATION_ID = 0x46334450  # "F3DP", PRAGMA application_id of a library database
SCHEMA_VERSION = 1
# A writer waits this long (seconds) for another writer's transaction before giving up.
BUSY_TIMEOUT = 60.0
# Seconds between a writer's tries to begin its transaction where SQLite answered "locked" at once
# (``_begin_writing``).
BUSY_RETRY_S = 0.02
# A pose's JSON text (its thumbnail apart) over this many characters is refused when read.
MAX_POSE_CHARS = 256 * 1024
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS poses (name TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE, "
    "pose TEXT NOT NULL, thumbnail BLOB)",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

Row = tuple[str, "bytes | None"]


# -- reading ----------------------------------------------------------------------------------------------
def load_all(path: Path) -> dict[str, Pose]:
    """name -> ``Pose`` of every pose of the database ``path``, in the library's order."""
    with _reading(path) as db:
        if db is None:
            return {}
        rows = db.execute(
            "SELECT name, CASE WHEN length(pose) <= ? THEN pose END, thumbnail FROM poses ORDER BY position",
            (MAX_POSE_CHARS,),
        ).fetchall()
        return {name: _pose(path, name, text, png) for name, text, png in rows}


def load_one(path: Path, name: str) -> Pose:
    """The pose ``name`` of the database ``path`` (only that row is read)."""
    with _reading(path) as db:
        row = None
        if db is not None:
            row = db.execute(
                "SELECT name, CASE WHEN length(pose) <= ? THEN pose END, thumbnail FROM poses WHERE name = ?",
                (MAX_POSE_CHARS, name),
            ).fetchone()
        if row is None:
            raise ValueError(f"{path}: no pose {checks.quoted(name)}")
        return _pose(path, *row)


def page(path: Path, offset: int, limit: int) -> tuple[int, list[Row]]:
    """(how many poses, the ``limit`` rows from the ``offset``-th on: (name, PNG bytes or None))."""
    with _reading(path) as db:
        if db is None:
            return 0, []
        (total,) = db.execute("SELECT count(*) FROM poses").fetchone()
        rows = db.execute(
            "SELECT name, CASE WHEN length(thumbnail) <= ? THEN thumbnail END FROM poses ORDER BY position "
            "LIMIT ? OFFSET ?",
            (MAX_THUMBNAIL_BYTES, limit, offset),
        ).fetchall()
        return total, [(name, _png(png)) for name, png in rows]


# -- writing ----------------------------------------------------------------------------------------------
def save(path: Path, name: str, pose: Pose, overwrite: bool) -> None:
    """Save ``pose`` as ``name`` (the database is made when missing): a pose of that name is replaced
    in its place, or with ``overwrite=False`` refused; a new one goes last."""
    with _writing(path) as db:
        _put(db, path, name, pose, overwrite)


def save_many(path: Path, poses: Mapping[str, Pose], replace: bool = True) -> int:
    """Save the poses of ``poses`` in one transaction: a pose of a name the library has replaces it in
    its place, or with ``replace=False`` is skipped. Returns how many were saved."""
    saved = 0
    with _writing(path) as db:
        for name, pose in poses.items():
            if replace or db.execute("SELECT 1 FROM poses WHERE name = ?", (name,)).fetchone() is None:
                _put(db, path, name, pose, True)
                saved += 1
    return saved


def delete(path: Path, name: str) -> None:
    """Remove the pose ``name``; ``ValueError`` when there is none."""
    with _writing(path) as db:
        if db.execute("DELETE FROM poses WHERE name = ?", (name,)).rowcount == 0:
            total = db.execute("SELECT count(*) FROM poses").fetchone()[0]
            some = [r[0] for r in db.execute("SELECT name FROM poses ORDER BY position LIMIT 10")]
            shown = checks.names_list(some, quote=True) + (f" ... and {total - len(some):,} more" if total > 10 else "")
            raise ValueError(f"{path}: no pose {checks.quoted(name)}; poses are {shown or 'none'}")


def _put(db: Any, path: Path, name: str, pose: Pose, overwrite: bool) -> None:
    data = pose.to_dict()
    data.pop("thumbnail", None)
    text = json.dumps(data, separators=(",", ":"))
    old = db.execute("SELECT position FROM poses WHERE name = ?", (name,)).fetchone()
    if old is not None:
        if not overwrite:
            raise ValueError(f"{path}: already has a pose {checks.quoted(name)} (pass overwrite=True to replace it)")
        db.execute("UPDATE poses SET pose = ?, thumbnail = ? WHERE name = ?", (text, pose.thumbnail, name))
        return
    count, last = db.execute("SELECT count(*), coalesce(max(position), 0) FROM poses").fetchone()
    if count >= MAX_POSES:
        raise ValueError(f"{path}: a library holds at most {MAX_POSES} poses")
    db.execute("INSERT INTO poses VALUES (?, ?, ?, ?)", (name, last + 1, text, pose.thumbnail))


# -- connections ------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _reading(path: Path) -> Iterator[Any]:
    """A connection to the existing database ``path`` (``None`` for an empty one: no poses yet)."""
    if not _existing_file(path):
        raise ValueError(f"{path}: cannot read (No such file or directory)")
    with _errors(path), contextlib.closing(_connect(path, "rw")) as db:
        yield db if _layout(db, path) else None


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[Any]:
    """A connection inside one write transaction (committed on a normal exit, else rolled back),
    the layout made in a new or empty database."""
    _existing_file(path)
    with _errors(path), contextlib.closing(_begin_writing(path)) as db:
        try:
            if not _layout(db, path):
                for statement in _SCHEMA:
                    db.execute(statement)
            yield db
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def _begin_writing(path: Path) -> Any:
    """A connection to ``path`` (made if missing) in WAL mode inside its write transaction (``BEGIN
    IMMEDIATE``), a database of something else refused before anything is written to it. SQLite's busy
    handler waits for another writer's transaction, but some of its lock paths answer "database is locked"
    at once (three processes opening a new library together, one of them turning it to WAL): those are
    tried again every ``BUSY_RETRY_S`` until ``BUSY_TIMEOUT``."""
    sqlite3 = _sqlite(path)
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        db = _connect(path, "rwc")
        try:
            _layout(db, path)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            code = getattr(exc, "sqlite_errorcode", None)  # (with its extended bits: BUSY_RECOVERY, ...)
            busy = "locked" in str(exc) if code is None else code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(BUSY_RETRY_S)
        except BaseException:
            db.close()
            raise


def _existing_file(path: Path) -> bool:
    """Whether ``path`` exists; ``ValueError`` when it cannot be looked at (a folder that cannot be
    read) or is not a regular file (a folder, a FIFO: never opened)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path}: not a regular file")
    return True


def _sqlite(path: Path) -> Any:
    """The ``sqlite3`` module; ``ValueError`` naming ``path`` where this Python lacks it (Pyodide)."""
    try:
        import sqlite3
    except ImportError:
        raise ValueError(
            f"{path}: a library database needs Python's sqlite3 module, which this Python lacks: use a .json library"
        ) from None
    return sqlite3


def _connect(path: Path, mode: str) -> Any:
    sqlite3 = _sqlite(path)
    uri = Path(os.path.abspath(path)).as_uri() + f"?mode={mode}"
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)


def _layout(db: Any, path: Path) -> bool:
    """Whether ``db`` holds a library's table (False: an empty database); ``ValueError`` when it is a
    database of something else, or of a later layout."""
    app = db.execute("PRAGMA application_id").fetchone()[0]
    if app == APPLICATION_ID:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise ValueError(f"{path}: version: expected {SCHEMA_VERSION}, got {version}")
        return True
    if app == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
        return False
    raise ValueError(f"{path}: a SQLite database, but not a fabrik3d pose library")


@contextlib.contextmanager
def _errors(path: Path) -> Iterator[None]:
    """sqlite3's and the system's errors as one-line ``ValueError``s naming ``path``."""
    sqlite3 = _sqlite(path)
    try:
        yield
    except sqlite3.DatabaseError as exc:
        text = str(exc)
        if "not a database" in text or "malformed" in text:
            raise ValueError(f"{path}: not a pose library ({text})") from None
        if "unable to open" in text:
            raise ValueError(f"{path}: cannot open ({text}; does the folder exist, can it be written?)") from None
        raise ValueError(f"{path}: {text}") from None
    except sqlite3.Error as exc:
        raise ValueError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read or write ({exc.strerror or exc})") from None


def _pose(path: Path, name: str, text: str | None, png: Any) -> Pose:
    where = f"{path}: poses[{checks.quoted(name)}]"
    if not isinstance(text, str):
        raise ValueError(f"{where}: not a pose (over {MAX_POSE_CHARS} characters or not text)")
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError(f"{where}: not JSON") from None
    if isinstance(data, dict) and "thumbnail" in data:
        raise ValueError(f"{where}: the thumbnail is kept apart, not in the pose")
    pose = Pose.from_dict(data, where)
    if png is None:
        return pose
    return Pose(pose.bones, pose.twists, pose.pelvis, pose.height, check_thumbnail(png, f"{where}.thumbnail"))


def _png(data: Any) -> bytes | None:
    """A row's thumbnail if it is a PNG (a bad one shows as none on a page; loading the pose refuses it)."""
    return bytes(data) if isinstance(data, bytes) and data.startswith(PNG_SIGNATURE) else None
