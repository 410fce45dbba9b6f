"""The server gives freed memory back to the system while it runs (issue 33, item 10;
``benchmarks/soak_web.py`` measures the slope over a session): ``fabrik3d_web.memory``."""

from __future__ import annotations

import asyncio
import ctypes.util
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
