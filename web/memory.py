"""The server's memory kept flat over a long session (issue 33, item 10).

What a session frees (the images rendered and sent, the solver's and the baker's arrays, VTK's
buffers, many of them freed on the image-delivery threads) goes back to the C library's allocator,
which keeps it in per-thread arenas instead of returning it to the system: the resident size grows a
little with every burst of work even though nothing is held (``benchmarks/soak_web.py`` measures it).
While the server runs, ``keep_trimmed`` asks the allocator every ``TRIM_EVERY_S`` seconds to return
its free pages (glibc's ``malloc_trim``, on a worker thread: it takes 15-50 ms on a fragmented heap,
which a drag's frames must not wait for); elsewhere (another C library, another system) it does
nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable

TRIM_EVERY_S = 15.0


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
