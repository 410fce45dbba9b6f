"""The server's memory kept flat over a long session (issue 33, item 10).

What a session frees (the images rendered and sent, the solver's and the baker's arrays, VTK's
buffers, many of them freed on the image-delivery threads) goes back to the C library's allocator,
which keeps it in per-thread arenas instead of returning it to the system: the resident size grows a
little with every burst of work even though nothing is held (``benchmarks/soak_web.py`` measures it).
While the server runs, ``keep_trimmed`` asks the allocator every ``TRIM_EVERY_S`` seconds to return
its free pages (glibc's ``malloc_trim``, on a worker thread: it takes 15-50 ms on a fragmented heap,
which a drag's frames must not wait for); elsewhere (another C library, another system) it does
nothing.

Before the server makes its first threads, ``settle_allocator`` fixes three of glibc's choices that fragment a
long session's heap (``soak_web.py --pages 2 --library``, 16-20 minutes on a busy 2-core machine: left alone, the
main heap at about 190 MB with 80 MB of it free in holes, the resident size swinging 360-400 MB and a slope of 0.9
MB a minute; settled, 350-379 MB and 0.32 MB a minute after minute 2; with a threshold of 128 KiB, flatter still,
0.01 MB a minute, but see below):

* a block of at least ``MMAP_THRESHOLD`` bytes (a picture's buffers, a bake's arrays) is always mapped on its
  own and unmapped when freed: glibc otherwise raises that threshold to the largest block freed, up to 32 MB,
  and puts later large blocks in the heap, where they leave holes. A drag frame's buffers (a 1280 x 800
  image, 3-4 MB) stay below it, in the heap, reused from frame to frame without page faults (a threshold of
  128 KiB faulted ten times as many pages and added 2 ms to each frame's JPEG encoding);
* the heap's free top is given back only past ``TRIM_THRESHOLD`` (which a fixed mmap threshold would otherwise
  set to 128 KiB: a frame's buffer returned and faulted in again on every frame); ``keep_trimmed`` returns
  the rest every ``TRIM_EVERY_S``;
* the threads share at most ``ARENAS`` heaps (glibc otherwise makes up to 8 a core, each with holes of its own).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
from collections.abc import Callable, Mapping

TRIM_EVERY_S = 15.0
MMAP_THRESHOLD = 8 << 20  # bytes: a block at least this large is mapped on its own
TRIM_THRESHOLD = 64 << 20  # bytes: the heap's free top kept (for the next frames' buffers) up to this
ARENAS = 2  # heaps the threads share
# glibc's mallopt parameters (malloc.h) and the environment that sets them already (left as the user set it).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
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
    """Fix glibc's mmap threshold at ``MMAP_THRESHOLD``, its trim threshold at ``TRIM_THRESHOLD`` and its heaps
    at ``ARENAS`` (module docstring); whether it did: not where the C library is not glibc, nor where
    ``environ`` sets them already."""
    if _TRIM is None or any(k in environ for k in _USER_SET):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settings = ((_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD), (_M_ARENA_MAX, ARENAS))
    return all([bool(mallopt(key, value)) for key, value in settings])


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
