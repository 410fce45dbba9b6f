"""The pose library as a small database (issue 53, items 2 and 5): writers in separate processes lose
nothing, JSON and database alike; import and export; pages of names and thumbnails; bad files and an
unreadable folder give one line naming the file. Real files and real processes."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

import fabrik3d
from fabrik3d.io import pose_library as library
from fabrik3d.io import pose_store
from fabrik3d.model.pose_library import Pose

PNG = b"\x89PNG\r\n\x1a\n" + b"thumbnail"
NOBODY = 65534

# One writer: waits for the start file, then saves N poses named TAG-i, each its own call.
WRITER = textwrap.dedent(
    """
    import os, sys, time
    from fabrik3d.io import pose_library
    from fabrik3d.model.pose_library import Pose
    path, tag, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    pose = Pose({"elbow_l": (0.0, 1.0, 0.0)}, {"elbow_l": 5.0}, thumbnail=b"\\x89PNG\\r\\n\\x1a\\n" + tag.encode())
    while not os.path.exists(start):
        time.sleep(0.005)
    for i in range(n):
        pose_library.save_pose(path, f"{tag}-{i:03d}", pose)
    """
)


def pose(i: int = 0, thumbnail: bytes | None = None) -> Pose:
    return Pose(
        {"elbow_l": (0.0, 1.0, 0.0), "knee_r": (0.0, -1.0, 0.0)}, {"elbow_l": float(i % 90)}, None, 1.0, thumbnail
    )


def writers(path: Path, tags: list[str], n: int) -> None:
    """``len(tags)`` real writer processes saving ``n`` poses each into ``path``, started together."""
    start = path.parent / "start"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), tag, str(n), str(start)], cwd=ROOT, stderr=subprocess.PIPE
        )
        for tag in tags
    ]
    start.touch()
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err.decode()[-2000:]


@pytest.mark.parametrize(("name", "n"), [("poses.json", 200), ("poses.db", 300)])
def test_three_writer_processes_lose_no_pose(tmp_path: Path, name: str, n: int) -> None:
    path = tmp_path / name
    tags = ["a", "b", "c"]
    writers(path, tags, n)
    got = fabrik3d.load_library(path)
    assert len(got) == 3 * n
    for tag in tags:  # each writer's poses all there, in the order it saved them, with their thumbnails
        mine = [k for k in got if k.startswith(tag + "-")]
        assert mine == [f"{tag}-{i:03d}" for i in range(n)]
        assert got[mine[0]].thumbnail == PNG[:8] + tag.encode()
    assert library.library_page(path).total == 3 * n
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([name, "start"]), left  # no temporary, no lock file, no WAL left behind


def test_a_database_saves_replaces_in_place_refuses_and_deletes(tmp_path: Path) -> None:
    path = tmp_path / "poses.db"
    fabrik3d.save_pose(path, "one", pose(1), thumbnail=PNG)
    fabrik3d.save_pose(path, "two", pose(2))
    fabrik3d.save_pose(path, "one", pose(3))  # replaced in its place; the pose's own thumbnail (none)
    got = fabrik3d.load_library(path)
    assert list(got) == ["one", "two"] and got["one"] == pose(3) and got["one"].thumbnail is None
    with pytest.raises(ValueError, match=r"poses\.db: already has a pose 'two'"):
        fabrik3d.save_pose(path, "two", pose(4), overwrite=False)
    assert library.load_pose(path, "two") == pose(2)
    fabrik3d.delete_pose(path, "one")
    with pytest.raises(ValueError, match=r"poses\.db: no pose 'one'; poses are 'two'"):
        fabrik3d.delete_pose(path, "one")
    with pytest.raises(ValueError, match=r"poses\.db: no pose 'one'"):
        library.load_pose(path, "one")
    assert list(fabrik3d.load_library(path)) == ["two"]
    with sqlite3.connect(path) as db:  # one row per pose: its JSON and its thumbnail apart
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert [r[0] for r in db.execute("SELECT name FROM poses")] == ["two"]


def test_import_and_export_round_trip_in_the_docs_format(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    starters = fabrik3d.starter_poses()
    fabrik3d.save_pose(old, "mine", pose(7), thumbnail=PNG)
    for name in ("T", "wave", "hand fist"):
        fabrik3d.save_pose(old, name, starters[name])
    before = old.read_bytes()
    db = tmp_path / "lib.sqlite"
    fabrik3d.save_pose(db, "wave", pose(1))  # the database had one of the names already: replaced in place
    fabrik3d.save_pose(db, "own", pose(2))
    assert library.import_library(old, db) == 4
    assert old.read_bytes() == before  # (only read)
    got = fabrik3d.load_library(db)
    assert list(got) == ["wave", "own", "mine", "T", "hand fist"]
    assert got["mine"].thumbnail == PNG and got["wave"].to_dict() == starters["wave"].to_dict()
    assert library.import_library(old, db, replace=False) == 0  # (the database's own kept)
    out = tmp_path / "out.json"
    assert library.export_library(db, out) == 5
    data = json.loads(out.read_text())
    assert data["format"] == "fabrik3d poses" and list(data["poses"]) == list(got)
    assert {k: v.to_dict() for k, v in fabrik3d.load_library(out).items()} == {k: v.to_dict() for k, v in got.items()}
    with pytest.raises(ValueError, match=r"a library database's name ends in \.db"):
        library.import_library(old, tmp_path / "x.json")
    with pytest.raises(ValueError, match="export writes a JSON file"):
        library.export_library(db, tmp_path / "x.db")


@pytest.mark.parametrize("name", ["poses.json", "poses.db"])
def test_a_page_holds_fifty_names_and_thumbnails_and_the_count(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    many = tmp_path / "many.json"
    many.write_text(
        json.dumps(fabrik3d.model.pose_library.library_to_dict({f"p{i:03d}": pose(i, PNG) for i in range(120)}))
    )
    if library.is_database(path):
        library.import_library(many, path)
    else:
        shutil.copy(many, path)
    pages = [library.library_page(path, offset) for offset in (0, 50, 100, 150)]
    assert [p.total for p in pages] == [120] * 4
    assert [len(p.rows) for p in pages] == [50, 50, 20, 0]
    assert [n for p in pages for n, _ in p.rows] == [f"p{i:03d}" for i in range(120)]
    assert all(png == PNG for p in pages for _, png in p.rows)
    assert library.library_page(path, 5, 3).rows == (("p005", PNG), ("p006", PNG), ("p007", PNG))
    for offset, limit in ((-1, 50), (0, 10**6), ("1", 50), (True, 50)):
        with pytest.raises(ValueError, match="library page"):
            library.library_page(path, offset, limit)


def test_a_database_page_and_one_pose_read_only_their_rows(tmp_path: Path) -> None:
    path = tmp_path / "poses.db"
    for i in range(60):
        fabrik3d.save_pose(path, f"p{i:02d}", pose(i))
    with sqlite3.connect(path) as db:  # a pose beyond the first page goes bad: a page never parses poses
        db.execute("UPDATE poses SET pose = '{\"bones\": {\"tail\": [0, 1, 0]}}' WHERE name = 'p55'")
    page = library.library_page(path)
    assert page.total == 60 and len(page.rows) == 50
    assert library.load_pose(path, "p10") == pose(10)
    with pytest.raises(ValueError) as err:
        fabrik3d.load_library(path)
    assert str(err.value).startswith(f"{path}: poses['p55'].bones: unknown role 'tail'"), err.value
    with pytest.raises(ValueError, match="unknown role 'tail'"):
        library.load_pose(path, "p55")


def _other_database(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    sqlite3.connect(path).close()


BAD_FILES = [
    ("text.db", lambda p: p.write_text("these are not poses " * 100), "not a pose library (file is not a database)"),
    ("other.sqlite", _other_database, "a SQLite database, but not a fabrik3d pose library"),
    ("folder.db", lambda p: p.mkdir(), "not a regular file"),
]


@pytest.mark.parametrize(("name", "make", "message"), BAD_FILES)
def test_a_bad_library_database_is_one_line_naming_it_and_is_never_written(
    tmp_path: Path, name: str, make, message: str
) -> None:
    path = tmp_path / name
    make(path)
    before = path.read_bytes() if path.is_file() else None
    calls = [
        lambda: fabrik3d.load_library(path),
        lambda: library.library_page(path),
        lambda: library.load_pose(path, "x"),
        lambda: fabrik3d.save_pose(path, "x", pose()),
        lambda: fabrik3d.delete_pose(path, "x"),
        lambda: library.export_library(path, tmp_path / "out.json"),
    ]
    for call in calls:
        with pytest.raises(ValueError) as err:
            call()
        said = str(err.value)
        assert said.startswith(f"{path}: ") and message in said and "\n" not in said, said
    assert (path.read_bytes() if path.is_file() else None) == before
    assert not (tmp_path / "out.json").exists()


def test_a_missing_database_or_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"missing\.db: cannot read \(No such file"):
        fabrik3d.load_library(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()  # (reading never makes one)
    with pytest.raises(ValueError, match=r"nowhere/p\.db: cannot open"):
        fabrik3d.save_pose(tmp_path / "nowhere" / "p.db", "x", pose())
    with pytest.raises(ValueError, match=r"nowhere/p\.json: cannot"):
        fabrik3d.save_pose(tmp_path / "nowhere" / "p.json", "x", pose())
    with pytest.raises(ValueError, match="File name too long"):
        fabrik3d.save_pose(tmp_path / ("x" * 300) / "p.db", "x", pose())
    db = tmp_path / "later.db"
    with sqlite3.connect(db) as con:
        con.execute(f"PRAGMA application_id = {pose_store.APPLICATION_ID}")
        con.execute("PRAGMA user_version = 9")
    with pytest.raises(ValueError, match=r"later\.db: version: expected 1, got 9"):
        fabrik3d.load_library(db)


# An unreadable folder, as a user who is not root (root reads it anyway): each call's outcome as JSON.
PROBE = textwrap.dedent(
    """
    import json, sys
    from fabrik3d.io import pose_library
    from fabrik3d.model.pose_library import Pose
    path = sys.argv[1]
    calls = {
        "save": lambda: pose_library.save_pose(path, "x", Pose()),
        "delete": lambda: pose_library.delete_pose(path, "x"),
        "load": lambda: pose_library.load_library(path),
        "page": lambda: pose_library.library_page(path),
        "one": lambda: pose_library.load_pose(path, "x"),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = ["ok", ""]
        except Exception as exc:
            out[name] = [type(exc).__name__, str(exc)]
    print(json.dumps(out))
    """
)


def as_a_user(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``args`` run as this user, or as ``nobody`` when this is root (``setpriv``)."""
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: root reads a mode-000 folder, so the test needs another user")
        prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return subprocess.run([*prefix, *args], cwd="/", capture_output=True, text=True, timeout=120)


@pytest.fixture
def shared_folder():
    """A folder the other user may use (pytest's own are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="fabrik3d-store-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(0o777) if p.is_dir() else None
        shutil.rmtree(folder)


@pytest.mark.parametrize("name", ["poses.json", "poses.db"])
def test_an_unreadable_folder_is_one_line_naming_the_file_never_a_traceback(shared_folder: Path, name: str) -> None:
    locked = shared_folder / "locked"
    locked.mkdir()
    fabrik3d.save_pose(locked / name, "x", pose())
    if os.geteuid() == 0:
        os.chown(locked, NOBODY, NOBODY)
        os.chown(locked / name, NOBODY, NOBODY)
    locked.chmod(0o000)
    proc = as_a_user([sys.executable, "-c", PROBE, str(locked / name)])
    assert proc.returncode == 0, proc.stderr
    for call, (kind, said) in json.loads(proc.stdout).items():
        assert kind == "ValueError", (call, kind, said)
        assert said.startswith(f"{locked / name}: ") and "Permission denied" in said and "\n" not in said, said


def test_import_fabrik3d_needs_no_sqlite3_and_json_libraries_work_without_it(tmp_path: Path) -> None:
    """Pyodide lacks ``sqlite3``: ``import fabrik3d`` must not load it, JSON libraries work without it,
    and a database says what is missing in one line."""
    code = textwrap.dedent(
        """
        import sys
        import fabrik3d
        from fabrik3d.io import pose_library
        loaded = "sqlite3" in sys.modules
        sys.modules["sqlite3"] = None  # (as where it is missing)
        folder = sys.argv[1]
        fabrik3d.save_pose(folder + "/p.json", "x", fabrik3d.starter_poses()["T"])
        assert list(fabrik3d.load_library(folder + "/p.json")) == ["x"]
        try:
            fabrik3d.save_pose(folder + "/p.db", "x", fabrik3d.starter_poses()["T"])
        except ValueError as exc:
            print(loaded, exc)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"False {tmp_path}/p.db: a library database needs Python's sqlite3"), proc.stdout
