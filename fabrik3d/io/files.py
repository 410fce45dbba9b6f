"""File helpers shared by the writers: atomic writes and bounded reads."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# Files larger than this are refused while they are read.
MAX_FILE_BYTES = 64 * 1024 * 1024
# How much of the target's name a temporary file's name keeps (``write_atomic``).
TEMP_STEM = 32


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    A failure never leaves a half-written file at ``path`` nor a temporary behind.

    Raises:
        ValueError: for an empty name, or when the folder does not exist or cannot be written.
    """
    if not os.fspath(path) or Path(path).name in ("", ".", ".."):
        raise ValueError(f"{os.fspath(path)!r}: not a file name")
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:  # the temporary name stays short: a legal long name plus a prefix must not pass 255 bytes
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:TEMP_STEM]}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ValueError(f"{target}: cannot write here ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes the file private; a saved file is not
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise ValueError(f"{target}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        _remove(tmp)
        raise


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


def parse_json(text: str | bytes, source: str, build: Callable[[Any], T]) -> T:
    """``build`` applied to the data of JSON ``text``; a ``ValueError`` (the text is not valid
    JSON, or ``build`` rejects its data) is prefixed with ``source``."""
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


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
