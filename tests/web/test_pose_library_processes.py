"""The web app's pose library with other programs (issue 53, items 2, 5 and 6): two web apps and a script
save 300 poses each into the default library at once and lose none; the old default JSON file is
imported once and kept; an unreadable ``~/.fabrik3d`` (as a user who is not root) is a problem under
the library field, and ``fabrik3d serve`` still starts. Real processes; the web controller without a
browser."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT
from fabrik3d_web.document import poses
from fabrik3d_web.document.controller import Controller

import fabrik3d
from fabrik3d.model.pose_library import Pose

NOBODY = 65534
N = 300

# A web app's controller saving N poses named TAG-i into the default library (``~/.fabrik3d/poses.db``).
APP_WRITER = textwrap.dedent(
    """
    import os, sys, time
    from fabrik3d_web.document.controller import Controller
    tag, n, start = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    c = Controller()
    c.library_rows()  # (as the app does when it starts: the old default is imported now)
    open(start + "-" + tag, "w").close()
    while not os.path.exists(start):
        time.sleep(0.005)
    for i in range(n):
        c.save_library_pose(f"{tag}-{i:03d}", b"\\x89PNG\\r\\n\\x1a\\n" + tag.encode())
    """
)
# A script saving N poses into the same file with the library's own call.
SCRIPT_WRITER = textwrap.dedent(
    """
    import os, sys, time
    import fabrik3d
    tag, n, start = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    pose = fabrik3d.starter_poses()["wave"]
    path = os.path.expanduser("~/.fabrik3d/poses.db")
    while not os.path.exists(start):
        time.sleep(0.005)
    for i in range(n):
        fabrik3d.save_pose(path, f"{tag}-{i:03d}", pose)
    """
)


def old_default(home: Path) -> Path:
    """``home``'s old default library (a JSON file of two poses)."""
    folder = home / ".fabrik3d"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "poses.json"
    fabrik3d.save_pose(path, "old one", Pose({"elbow_l": (0.0, 1.0, 0.0)}))
    fabrik3d.save_pose(path, "old two", Pose({"knee_r": (0.0, -1.0, 0.0)}))
    return path


def test_two_web_apps_and_a_script_save_900_poses_into_the_default_library_and_lose_none(tmp_path: Path) -> None:
    old = old_default(tmp_path)
    before = old.read_bytes()
    start = tmp_path / "start"
    env = dict(os.environ, HOME=str(tmp_path))
    runs = [(APP_WRITER, "app1"), (APP_WRITER, "app2"), (SCRIPT_WRITER, "script")]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, tag, str(N), str(start)], cwd=ROOT, env=env, stderr=subprocess.PIPE
        )
        for code, tag in runs
    ]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"start-{tag}").exists() for tag in ("app1", "app2")):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "the apps did not start"
        time.sleep(0.05)
    start.touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
    got = fabrik3d.load_library(tmp_path / ".fabrik3d" / "poses.db")
    for _, tag in runs:
        assert [k for k in got if k.startswith(tag + "-")] == [f"{tag}-{i:03d}" for i in range(N)]
    assert len(got) == 3 * N + 2 and list(got)[:2] == ["old one", "old two"]  # (the old default, imported once)
    assert old.read_bytes() == before  # (kept as it was)


def test_the_old_default_json_library_is_imported_once_and_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    old = old_default(tmp_path)
    before = old.read_bytes()
    c = Controller()
    c.library_path = poses.DEFAULT_LIBRARY.expanduser()
    assert c.library_path == tmp_path / ".fabrik3d" / "poses.db"
    rows, problem = c.library_rows()
    assert problem == "" and [r["name"] for r in rows if r["saved"]] == ["old one", "old two"]
    assert c.library_total == 2
    c.delete_library_pose("old one")
    c.save_library_pose("new")
    again = Controller()
    again.library_path = poses.DEFAULT_LIBRARY.expanduser()
    rows, _ = again.library_rows()
    assert [r["name"] for r in rows if r["saved"]] == ["old two", "new"]  # (not imported a second time)
    assert old.read_bytes() == before
    again.apply_library_pose("old two", True, ["legs"])
    # a folder means its poses.db when it holds one, else its poses.json (as before)
    c.set_library_path(str(tmp_path / ".fabrik3d"))
    assert c.library_path == tmp_path / ".fabrik3d" / "poses.db"
    c.set_library_path(str(tmp_path))
    assert c.library_path == tmp_path / "poses.json"


def test_the_panel_pages_through_a_library_and_an_apply_reads_one_pose(tmp_path: Path) -> None:
    path = tmp_path / "many.db"
    pose = Pose({"elbow_l": (0.0, 1.0, 0.0)})
    for i in range(120):
        fabrik3d.save_pose(path, f"p{i:03d}", pose)
    c = Controller()
    c.set_library_path(str(path))
    pages = []
    for offset in (0, 50, 100, 500):
        c.set_library_offset(offset)
        rows, problem = c.library_rows()
        assert problem == ""
        pages.append([r["name"] for r in rows if r["saved"]])
    assert [len(p) for p in pages] == [50, 50, 20, 20]  # (past the end: the last page)
    assert pages[1][0] == "p050" and c.library_offset == 100 and c.library_total == 120
    assert len([r for r in rows if not r["saved"]]) == len(fabrik3d.starter_poses())
    with pytest.raises(ValueError, match="a page starts at a row number"):
        c.set_library_offset(-50)
    with pytest.raises(ValueError, match="parts are some of"):
        c.apply_library_pose("p001", True, [["arms"]])  # (was TypeError: unhashable)
    c.apply_library_pose("p119", True)
    with pytest.raises(ValueError, match="a file or folder name is at most 255 bytes"):
        c.set_library_path("/tmp/" + "x" * 300 + "/poses.json")  # (was OSError: File name too long)
    assert c.library_path == path  # (refused: the library stays the one the panel shows)


# As a user who is not root, with ``~/.fabrik3d`` at mode 000: the controller's library list and save.
UNREADABLE = textwrap.dedent(
    """
    import json
    from fabrik3d_web.document.controller import Controller
    c = Controller()
    rows, problem = c.library_rows()
    out = {"path": str(c.library_path), "problem": problem, "saved": [r["name"] for r in rows if r["saved"]]}
    for name, call in (("save", lambda: c.save_library_pose("x")), ("apply", lambda: c.apply_library_pose("x", True))):
        try:
            call()
            out[name] = "ok"
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out))
    """
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def as_a_user() -> list[str]:
    """The command prefix that runs as a user who is not root (nothing when this is not root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: root reads a mode-000 folder, so the test needs another user")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@pytest.fixture
def unreadable_home():
    """A home folder whose ``.fabrik3d`` is at mode 000 (owned by the user the test runs as)."""
    prefix = as_a_user()
    home = Path(tempfile.mkdtemp(prefix="fabrik3d-home-"))
    (home / ".fabrik3d").mkdir()
    if prefix:
        for p in (home, home / ".fabrik3d"):
            os.chown(p, NOBODY, NOBODY)
    (home / ".fabrik3d").chmod(0o000)
    try:
        yield home, prefix
    finally:
        (home / ".fabrik3d").chmod(0o700)
        shutil.rmtree(home)


def test_an_unreadable_library_folder_is_a_problem_under_the_field_not_a_traceback(unreadable_home) -> None:
    home, prefix = unreadable_home
    env = dict(os.environ, HOME=str(home))
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", UNREADABLE], cwd="/", env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    library = str(home / ".fabrik3d" / "poses.db")
    assert out["path"] == library and out["saved"] == []
    assert out["problem"].startswith(library) and "Permission denied" in out["problem"], out
    for call in ("save", "apply"):
        assert out[call].startswith(f"ValueError: {library}") and "Permission denied" in out[call], out[call]


def test_fabrik3d_serve_starts_with_an_unreadable_library_folder(unreadable_home) -> None:
    home, prefix = unreadable_home
    env = dict(os.environ, HOME=str(home), PYTHONUNBUFFERED="1")
    cmd = [*prefix, sys.executable, "-m", "fabrik3d.cli", "serve", "--no-browser", "--port", str(free_port())]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and proc.poll() is None:
                log.seek(0)
                if b"the web UI is at" in log.read():
                    break
                time.sleep(0.2)
            log.seek(0)
            said = log.read().decode(errors="replace")
            assert proc.poll() is None and "the web UI is at" in said, said[-2000:]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
