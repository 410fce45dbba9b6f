"""A lock between processes for a file's read-change-write: ``held(path)`` (docs/poses.md).

Where ``fcntl`` exists (Linux, macOS) the lock is ``flock(2)`` on the file's folder (the folder of the
file a symlink leads to: writers through different links share one lock): it needs no file of its own,
holds for a file that does not exist yet, and outlives the atomic rename that replaces the file. A
folder that cannot be opened or locked so (no read permission, some network file systems) is locked
through a lock file in it instead, ``.NAME.lock``, left in place (a lock file removed while another
process waits on it would let two writers in). Windows locks that lock file's first byte
(``msvcrt.locking``). In Pyodide (one process), or where neither exists, a lock inside the process is
all there is. Every writer of the process takes a thread lock first, so that its threads queue rather
than poll.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# How long a writer waits for the lock before giving up, seconds; and its longest sleep between tries.
LOCK_TIMEOUT = 60.0
_MAX_SLEEP = 0.02
_THREADS = threading.Lock()


def lock_file(path: str | os.PathLike[str]) -> Path:
    """The lock file of ``path`` where its folder cannot be locked: ``.NAME.lock`` beside the file that
    ``path`` names, links followed."""
    real = Path(os.path.realpath(path))
    return real.with_name(f".{real.name}.lock")


@contextlib.contextmanager
def held(path: str | os.PathLike[str], timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold ``path``'s lock between processes (and threads) for the ``with`` block.

    Raises:
        ValueError: naming the file, when the lock cannot be taken (a folder that does not exist or
            cannot be written) or another program holds it for ``timeout`` seconds.
    """
    if not os.fspath(path):
        raise ValueError(f"{os.fspath(path)!r}: not a file name")
    deadline = time.monotonic() + timeout
    if not _THREADS.acquire(timeout=timeout):
        raise ValueError(f"{path}: another writer of this program holds the library for over {timeout:g} s")
    try:
        fd = _take(path, deadline, timeout)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # (closing releases the lock)
    finally:
        _THREADS.release()


def _take(path: str | os.PathLike[str], deadline: float, timeout: float) -> int | None:
    """An open descriptor holding the lock (``None`` where only the thread lock exists)."""
    if sys.platform in ("emscripten", "wasi"):  # (Pyodide: one process, and its flock may be a stub)
        return None
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    if fcntl is not None:
        folder = os.path.dirname(os.path.realpath(path)) or "."
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            fd = None
        if fd is not None:
            try:
                _wait(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB), path, deadline, timeout)
                return fd
            except OSError:  # a folder that cannot be locked: the lock file below
                os.close(fd)
            except BaseException:
                os.close(fd)
                raise
        return _by_file(path, lambda fd: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB), deadline, timeout)
    try:
        import msvcrt
    except ImportError:
        return None
    return _by_file(path, lambda fd: msvcrt.locking(fd, msvcrt.LK_NBLCK, 1), deadline, timeout)  # pragma: no cover


def _by_file(path: str | os.PathLike[str], lock: Any, deadline: float, timeout: float) -> int:
    """The lock file (``lock_file``) opened and locked with ``lock(fd)``."""
    name = lock_file(path)
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write here ({exc.strerror or exc})") from None
    try:
        _wait(lambda: lock(fd), path, deadline, timeout)
    except OSError as exc:
        os.close(fd)
        raise ValueError(f"{path}: cannot lock the library ({exc.strerror or exc})") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _wait(attempt: Any, path: str | os.PathLike[str], deadline: float, timeout: float) -> None:
    """Call ``attempt`` until it does not find the lock held (``BlockingIOError``; Windows says
    ``PermissionError``), sleeping a little longer each time; ``ValueError`` past ``deadline``."""
    sleep = 0.0005
    while True:
        try:
            attempt()
            return
        except (BlockingIOError, PermissionError):
            pass
        if time.monotonic() > deadline:
            raise ValueError(f"{path}: another program holds the library's lock for over {timeout:g} s")
        time.sleep(sleep)
        sleep = min(2 * sleep, _MAX_SLEEP)
