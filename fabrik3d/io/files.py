"""File helpers shared by the writers: atomic writes (streamed or not) and bounded reads."""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from fabrik3d import checks

T = TypeVar("T")

# Files larger than this are refused while they are read.
MAX_FILE_BYTES = 64 * 1024 * 1024
# How much of the target's name a temporary file's name keeps (``write_atomic``).
TEMP_STEM = 32


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    A failure never leaves a half-written file at ``path`` nor a temporary behind (``atomic_file``).

    Raises:
        ValueError: for an empty name, or when the folder does not exist or cannot be written.
    """
    with atomic_file(path) as fh:
        fh.write(data)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new contents into, streamed; on a normal exit it replaces
    ``path`` at once (a rename), on an exception it is removed and ``path`` is left as it was.

    The file is unnamed while it is written (``O_TMPFILE`` where the system has it), so a kill -9
    leaves nothing; it gets a name (``temp_name``) only for the rename, or the whole time where the
    system lacks unnamed files. A temporary that a killed writer left is removed by the next write
    to the same file (``remove_stale``).

    A symbolic link at ``path`` stays a link: the file it leads to is written (``written_path``). A
    file replaced keeps its mode (permission bits) and, where the writer may set them, its owner and
    group; a new file gets the mode the user's umask gives (``0o666`` less the umask), as ``open`` would.

    Raises:
        ValueError: for an empty name, or when the folder does not exist or cannot be written.
    """
    if not os.fspath(path) or Path(path).name in ("", ".", ".."):
        raise ValueError(f"{os.fspath(path)!r}: not a file name")
    target = written_path(path)
    folder = target.parent if str(target.parent) else Path(".")
    remove_stale(target)
    fd, tmp = _open_temp(target, folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            _keep_mode(fh.fileno(), target)  # (the temporary is private until now)
            if tmp is None:  # unnamed: a name for the rename
                tmp = temp_name(target, folder)
                _link_unnamed(fh.fileno(), tmp)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            _remove(tmp)
        raise ValueError(f"{target}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        if tmp is not None:
            _remove(tmp)
        raise


def written_path(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or where ``path`` is a symbolic link
    (a chain of them, or one whose target does not exist yet), the file the links lead to."""
    p = Path(path)
    if not p.is_symlink():
        return p
    return Path(os.path.realpath(p))


def _keep_mode(fd: int, target: Path) -> None:
    """Give the new contents open at ``fd`` the mode (and, where allowed, the owner) of the file
    ``target`` they replace, or for a new file ``0o666`` less the umask."""
    try:
        old = os.stat(target)
    except OSError:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(OSError):  # (not the owner's to give: the file becomes the writer's)
            os.fchown(fd, old.st_uid, old.st_gid)


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (``/proc/self/status``);
    else set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_name(target: Path, folder: Path) -> str:
    """A fresh temporary name beside ``target``: ``.NAME.PID.RANDOM.tmp`` (``NAME``: at most
    ``TEMP_STEM`` characters of its name, so that a legal long name plus this does not pass 255 bytes)."""
    return str(folder / f".{target.name[:TEMP_STEM]}.{os.getpid()}.{secrets.token_hex(6)}.tmp")


def remove_stale(target: Path, prefix: bool = False) -> None:
    """Remove the temporaries (``temp_name``) beside ``target`` whose writer is no longer running (a
    writer killed mid-write); those of running processes are left alone. With ``prefix``, those of
    every file whose name starts with ``target``'s name."""
    folder = target.parent if str(target.parent) else Path(".")
    head = f".{target.name[:TEMP_STEM]}" + ("" if prefix else ".")
    try:
        names = [e.name for e in os.scandir(folder) if e.name.startswith(head) and e.name.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        parts = name[: -len(".tmp")].rsplit(".", 2)  # (".NAME", PID, RANDOM)
        if len(parts) == 3 and parts[1].isdigit() and not _running(int(parts[1])):
            _remove(str(folder / name))


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def _link_unnamed(fd: int, name: str) -> None:
    """Give the unnamed file open at ``fd`` the name ``name``: linkat(2) of ``/proc/self/fd/FD`` with
    AT_SYMLINK_FOLLOW, as open(2) shows for O_TMPFILE (``os.link`` calls linkat only when given a
    folder descriptor)."""
    root = os.open("/", os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", name, src_dir_fd=root, follow_symlinks=True)
    finally:
        os.close(root)


def _open_temp(target: Path, folder: Path) -> tuple[int, str | None]:
    """An open descriptor for the new contents: unnamed (``O_TMPFILE``, name ``None``) where the system
    and the file system allow, else a fresh ``temp_name`` created exclusively."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(folder, flag | os.O_WRONLY, 0o600), None
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOTSUP):
                raise ValueError(f"{target}: cannot write here ({exc.strerror or exc})") from None
    for _ in range(100):
        tmp = temp_name(target, folder)
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise ValueError(f"{target}: cannot write here ({exc.strerror or exc})") from None
    raise ValueError(f"{target}: cannot write here (no free temporary name)")


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    The file is opened without blocking (a FIFO cannot hang the caller), checked to be a regular
    file on the opened descriptor (not a device such as /dev/zero, a FIFO or a folder), and read
    with the limit enforced while reading (a file growing past it, or lying about its size as
    /proc files do, is refused too).

    Raises:
        ValueError: naming the file, when it is missing, unreadable, not a regular file, or larger
            than ``limit`` bytes.
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ValueError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{p}: not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"{p}: file is too large (over {limit} bytes)")
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"{p}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def inside(
    folder: str | os.PathLike[str],
    name: str,
    where: str,
    allowed: str = "relative paths inside the file's folder are read",
    shown: str | None = None,
) -> Path:
    """The file that the relative path ``name`` names in ``folder``; nothing is opened.

    Only relative paths that resolve inside that folder are taken: ``name`` is refused when it is
    absolute, has a scheme or a drive, a backslash, a ``..`` part or a NUL, or when the path, symlinks
    resolved, leads out of the folder; the ``ValueError`` names ``where`` and quotes ``shown`` (default
    ``name``, at most 80 characters). Nothing outside is opened, so the error tells nothing of what is there.
    """
    said = checks.quoted(name if shown is None else shown)
    parts = name.split("/")
    if (
        not name
        or name.startswith("/")
        or "\\" in name
        or "\0" in name
        or ":" in parts[0]
        or any(part == ".." for part in parts)
    ):
        raise ValueError(f"{where}: only {allowed}, got {said}")
    base = os.path.realpath(folder)
    path = os.path.realpath(os.path.join(base, name))
    if os.path.commonpath([base, path]) != base:
        raise ValueError(f"{where}: {said} leads out of the file's folder")
    return Path(path)


def parse_json(text: str | bytes, source: str, build: Callable[[Any], T]) -> T:
    """``build`` applied to the data of JSON ``text``; a ``ValueError`` (the text is not valid
    JSON, or ``build`` rejects its data) is prefixed with ``source``. Python's cyclic garbage
    collector pauses meanwhile (``collecting_paused``)."""
    with collecting_paused():
        try:
            data = json.loads(text)
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer of over 4300 digits
            raise ValueError(f"{source}: not valid JSON ({exc})") from None
        except RecursionError:
            raise ValueError(f"{source}: JSON nested too deeply") from None
        try:
            return build(data)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None


@contextlib.contextmanager
def collecting_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (as it was after): reading a file makes many objects
    and no cycles, and the collector's passes over them took 40% of reading 10^5 keys."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
