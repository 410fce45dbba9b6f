"""The server's memory kept flat over a long session (issue 33, item 10).

What a session frees (the images rendered and sent, the solver's and the baker's arrays, VTK's
buffers, many of them freed on the image-delivery threads) goes back to the C library's allocator,
which keeps it in per-thread arenas instead of returning it to the system: the resident size grows a
little with every burst of work even though nothing is held (``benchmarks/soak_web.py`` measures it).
While the server runs, ``keep_trimmed`` asks the allocator every ``TRIM_EVERY_S`` seconds to return
its free pages (glibc's ``malloc_trim``, on a worker thread: it takes 15-50 ms on a fragmented heap,
which a drag's frames must not wait for); elsewhere (another C library, another system) it does
nothing.

Before the server makes its first threads, ``settle_allocator`` fixes two of glibc's choices that fragment a
long session's heap (measured with ``soak_web.py --pages 2 --library``: the main heap at about 190 MB with 80 MB
of it free in holes, the resident size swinging 360-400 MB; with them, a 68 MB heap with 1 MB free): a block of
at least ``MMAP_THRESHOLD`` bytes (an image, a solver's or a baker's array) is always mapped on its own and
unmapped when freed (glibc otherwise raises that threshold to the largest block freed, up to 32 MB, and puts
later large blocks in the heap, where they leave holes), and the threads share at most ``ARENAS`` heaps (glibc
otherwise makes up to 8 a core, each with holes of its own).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
from collections.abc import Callable, Mapping

TRIM_EVERY_S = 15.0
MMAP_THRESHOLD = 128 * 1024  # bytes: a block at least this large is mapped on its own (glibc's default start)
ARENAS = 2  # heaps the threads share
# glibc's mallopt parameters (malloc.h) and the environment that sets them already (left as the user set it).
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8
_USER_SET = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_ARENA_MAX", "GLIBC_TUNABLES")


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim  # type: ignore[no-any-return]


_TRIM = _malloc_trim()


def settle_allocator(environ: Mapping[str, str] = os.environ) -> bool:
    """Fix glibc's mmap threshold at ``MMAP_THRESHOLD`` and its heaps at ``ARENAS`` (module docstring);
    whether it did: not where the C library is not glibc, nor where ``environ`` sets them already."""
    if _TRIM is None or any(k in environ for k in _USER_SET):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_ARENA_MAX, ARENAS))


def give_back() -> bool:
    """Return the allocator's free pages to the system now; whether it could (glibc only)."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


async def _trimming(every_s: float) -> None:
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(every_s)
        await loop.run_in_executor(None, give_back)  # (15-50 ms on a fragmented heap: off the event loop)


def keep_trimmed(every_s: float = TRIM_EVERY_S) -> asyncio.Task[None] | None:
    """Start giving free memory back every ``every_s`` seconds on the running event loop (the server's);
    ``None`` where the C library cannot (nothing to do)."""
    if _TRIM is None:
        return None
    return asyncio.get_running_loop().create_task(_trimming(every_s))
