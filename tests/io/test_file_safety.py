"""Files are read only where they should be (issue 15): glTF buffer URIs stay inside the file's
folder, and every loader reads regular files only, bounded while reading, without blocking."""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path

import pytest

import fabrik3d
from fabrik3d.io import files, gltf
from fabrik3d.io.scene import load_scene
from fabrik3d.io.take import load_take
from fabrik3d.model import presets


def external_gltf(folder: Path) -> Path:
    """A humanoid pose as .gltf with its buffer in ``body.bin`` beside it."""
    sk = presets.get("humanoid")
    path = folder / "pose.gltf"
    gltf.export_pose(sk, fabrik3d.solve(sk, {}), path)
    doc = json.loads(path.read_text())
    uri = doc["buffers"][0]["uri"]
    (folder / "body.bin").write_bytes(base64.b64decode(uri.partition(",")[2]))
    doc["buffers"][0]["uri"] = "body.bin"
    path.write_text(json.dumps(doc))
    return path


def with_uri(path: Path, uri: str) -> Path:
    doc = json.loads(path.read_text())
    doc["buffers"][0]["uri"] = uri
    path.write_text(json.dumps(doc))
    return path


def bounded(call, seconds: float = 10.0):
    """``call()`` in a thread; fails the test (instead of hanging it) if it does not return in time."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still reading after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_buffer_beside_the_file_is_read(tmp_path: Path) -> None:
    sk = gltf.import_skeleton(external_gltf(tmp_path))
    assert len(sk) == 65


@pytest.mark.parametrize(
    "uri",
    [
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "../../../../etc/passwd",
        "..%2F..%2F..%2Fetc%2Fpasswd",
        "/proc/self/environ",
        "/dev/zero",
        "file:///etc/passwd",
        "C:\\Windows\\win.ini",
        "sub/../../outside.bin",
        "",
    ],
)
def test_uris_that_leave_the_folder_are_refused_before_anything_is_opened(tmp_path: Path, uri: str) -> None:
    (tmp_path / "outside.bin").write_bytes(b"x" * 1234)
    folder = tmp_path / "model"
    folder.mkdir()
    path = with_uri(external_gltf(folder), uri)
    with pytest.raises(ValueError, match=r"buffers\[0\]\.uri: only data: URIs and relative paths") as err:
        bounded(lambda: gltf.import_skeleton(path))
    assert "1234" not in str(err.value) and "bytes" not in str(err.value)  # nothing told about the outside


def test_symlinks_leading_out_are_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.bin").write_bytes(b"s" * 999)
    folder = tmp_path / "model"
    folder.mkdir()
    path = external_gltf(folder)
    os.symlink(tmp_path / "secret.bin", folder / "link.bin")
    os.symlink("/dev/zero", folder / "zero.bin")
    for name in ("link.bin", "zero.bin"):
        with pytest.raises(ValueError, match=r"leads out of the file's folder"):
            bounded(lambda n=name: gltf.import_skeleton(with_uri(path, n)))
    os.symlink(folder / "body.bin", folder / "inside.bin")  # a link that stays inside is fine
    assert len(gltf.import_skeleton(with_uri(path, "inside.bin"))) == 65


def test_a_fifo_or_a_folder_as_buffer_is_refused_without_blocking(tmp_path: Path) -> None:
    path = external_gltf(tmp_path)
    os.mkfifo(tmp_path / "pipe.bin")
    (tmp_path / "dir.bin").mkdir()
    for name in ("pipe.bin", "dir.bin"):
        with pytest.raises(ValueError, match=r"not a regular file"):
            bounded(lambda n=name: gltf.import_skeleton(with_uri(path, n)))


@pytest.mark.parametrize("load", [load_scene, load_take, gltf.import_skeleton])
def test_loaders_read_regular_files_only(tmp_path: Path, load) -> None:
    os.mkfifo(tmp_path / "fifo")
    for special in ("/dev/zero", str(tmp_path / "fifo"), str(tmp_path)):
        with pytest.raises(ValueError, match=r"not a regular file"):
            bounded(lambda s=special: load(s))


def test_the_size_limit_holds_while_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 5000)
    assert len(files.read_bytes(big, limit=5000)) == 5000
    with pytest.raises(ValueError, match=r"big\.json: file is too large \(over 4999 bytes\)"):
        files.read_bytes(big, limit=4999)


def test_take_times_stay_within_a_day(tmp_path: Path) -> None:
    from fabrik3d.io.take import Take

    sk = presets.get("robot_arm")
    pose = fabrik3d.solve(sk, {})
    frames = [(pose.positions, pose.rotations)] * 2
    assert len(Take.from_frames(sk, frames, [0.0, 86_400.0]).times) == 2
    with pytest.raises(ValueError, match=r"^times\[1\]: must be finite and at least 0 and at most 86400 seconds"):
        Take.from_frames(sk, frames, [0.0, 1e300])


def test_reading_a_file_pauses_the_garbage_collector_and_puts_it_back_as_it_was() -> None:
    import gc

    from fabrik3d.io.files import parse_json

    seen = []
    assert gc.isenabled()
    assert parse_json('{"a": 1}', "f.json", lambda data: seen.append(gc.isenabled()) or data) == {"a": 1}
    with pytest.raises(ValueError, match=r"f\.json: bad"):
        parse_json("[]", "f.json", lambda data: (_ for _ in ()).throw(ValueError("bad")))
    assert seen == [False] and gc.isenabled()  # (back on, after an error too)
    gc.disable()
    try:
        parse_json("[]", "f.json", list)
        assert not gc.isenabled()  # (left off when it was off)
    finally:
        gc.enable()


def test_a_write_through_a_symlink_writes_the_file_it_leads_to(tmp_path: Path) -> None:
    """Issue 53, item 3: saving to a link keeps the link; the real file gets the new contents (a chain
    of links too, and a link whose file does not exist yet)."""
    real = tmp_path / "data" / "poses.json"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    chain = tmp_path / "chain.json"
    chain.symlink_to(link)
    files.write_atomic(chain, b"new")
    assert chain.is_symlink() and link.is_symlink()
    assert real.read_bytes() == b"new"
    dangling = tmp_path / "later.glb"
    dangling.symlink_to(tmp_path / "data" / "later.glb")
    files.write_atomic(dangling, b"made")
    assert dangling.is_symlink() and (tmp_path / "data" / "later.glb").read_bytes() == b"made"
    assert sorted(p.name for p in real.parent.iterdir()) == ["later.glb", "poses.json"]  # (no temporaries)


def test_a_file_written_through_the_cli_export_keeps_its_link(tmp_path: Path) -> None:
    """``fabrik3d export -o link.glb`` writes the file the link leads to (every writer shares io/files)."""
    real = tmp_path / "real.glb"
    real.write_bytes(b"old")
    link = tmp_path / "link.glb"
    link.symlink_to(real)
    sk = presets.get("humanoid")
    gltf.export_pose(sk, fabrik3d.solve(sk, {}), link)
    assert link.is_symlink()
    assert real.read_bytes()[:4] == b"glTF"


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    """Issue 53, item 4: a private file (0600) stays private after a save; an executable bit, a group's
    write bit stay as they were; a new file gets 0666 less the umask."""
    private = tmp_path / "poses.json"
    private.write_bytes(b"old")
    for mode in (0o600, 0o640, 0o664, 0o700):
        private.chmod(mode)
        files.write_atomic(private, b"new")
        assert oct(private.stat().st_mode & 0o7777) == oct(mode)
    old = os.umask(0o077)
    try:
        files.write_atomic(tmp_path / "fresh.bin", b"x")
    finally:
        os.umask(old)
    assert oct((tmp_path / "fresh.bin").stat().st_mode & 0o777) == oct(0o600)
    old = os.umask(0o002)
    try:
        files.write_atomic(tmp_path / "shared.bin", b"x")
    finally:
        os.umask(old)
    assert oct((tmp_path / "shared.bin").stat().st_mode & 0o777) == oct(0o664)
