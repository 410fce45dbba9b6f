"""The server gives freed memory back to the system while it runs (issue 33, item 10;
``benchmarks/soak_web.py`` measures the slope over a session): ``fabrik3d_web.memory``."""

from __future__ import annotations

import asyncio
import ctypes.util
import os
import platform
import threading

import pytest
from fabrik3d_web import memory


def test_the_trimming_task_gives_memory_back_again_and_again_off_the_event_loop(monkeypatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(memory, "_TRIM", lambda pad: calls.append((pad, threading.get_ident())) or 1)

    async def session() -> int:
        task = memory.keep_trimmed(every_s=0.01)
        assert task is not None
        await asyncio.sleep(0.2)
        task.cancel()
        return threading.get_ident()

    loop_thread = asyncio.run(session())
    assert len(calls) >= 5 and {pad for pad, _ in calls} == {0}
    assert loop_thread not in {thread for _, thread in calls}  # (a drag's frames do not wait for it)


def test_without_malloc_trim_nothing_is_started(monkeypatch) -> None:
    monkeypatch.setattr(memory, "_TRIM", None)
    assert memory.give_back() is False

    async def session() -> object:
        return memory.keep_trimmed()

    assert asyncio.run(session()) is None


@pytest.mark.skipif(platform.system() != "Linux" or "glibc" not in platform.libc_ver()[0], reason="glibc only")
def test_on_glibc_malloc_trim_is_found_and_runs() -> None:
    assert ctypes.util.find_library("c") is not None
    assert memory.give_back() is True


_MAPPED = """
import ctypes, sys
from fabrik3d_web import memory
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
settled = memory.settle_allocator({}) if sys.argv[1] == "settled" else False
big = bytearray(30 << 20)  # (freed: glibc then puts blocks up to 30 MB in its heap, unless settled)
del big
held = [bytearray(12 << 20) for _ in range(4)]
print(settled, libc.mallinfo2().hblkhd >> 20)
"""


@pytest.mark.skipif(platform.system() != "Linux" or "glibc" not in platform.libc_ver()[0], reason="glibc only")
@pytest.mark.parametrize("how", ["settled", "as glibc starts"])
def test_a_settled_allocator_maps_large_blocks_on_their_own_whatever_was_freed_before(how: str) -> None:
    """``settle_allocator`` (what ``serve`` calls first): after a 30 MB block is freed, four 12 MB blocks are
    still mapped on their own (unmapped when freed, never holes in the heap); glibc left alone puts them in its
    heap. A fresh interpreter each, the real C library."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in memory._USER_SET}
    out = subprocess.run([sys.executable, "-c", _MAPPED, how.split()[0]], capture_output=True, text=True, timeout=120,
                         env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    settled, mapped_mb = out.stdout.split()
    if how == "settled":
        assert settled == "True" and int(mapped_mb) >= 48
    else:
        assert int(mapped_mb) < 48


def test_a_users_own_allocator_settings_are_left_alone() -> None:
    assert memory.settle_allocator({"MALLOC_ARENA_MAX": "4"}) is False
    assert memory.settle_allocator({"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"}) is False
