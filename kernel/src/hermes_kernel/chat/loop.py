"""Running a chat's event loop so that leaving never hangs.

A tool that ignores a stop (a handler blocked in a thread) keeps its worker thread busy;
asyncio.run, and the interpreter at exit, would wait for it however long it takes. The chat
runs blocking work on its own named pool instead, and when such a thread is still running
at the end, the process leaves without it: its call is already recorded as effect unknown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class _WorkerPool(ThreadPoolExecutor):
    """A thread pool that knows how many of its jobs are still running."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="hermes-chat-worker")
        self._lock = threading.Lock()
        self.running = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        def counted() -> Any:
            with self._lock:
                self.running += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.running -= 1

        return super().submit(counted)


_pools: list[_WorkerPool] = []


def run_chat(main: Coroutine[Any, Any, int]) -> int:
    loop = asyncio.new_event_loop()
    pool = _WorkerPool()
    _pools.append(pool)
    loop.set_default_executor(pool)
    try:
        return loop.run_until_complete(main)
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        pool.shutdown(wait=False, cancel_futures=True)


def stray_jobs() -> int:
    """Jobs of finished chats still running in a worker thread (a tool that ignored a stop)."""
    return sum(pool.running for pool in _pools)


def leave_now_if_stuck(code: int, cleanup: Callable[[], None]) -> None:
    """If a tool thread is still running, clean up and exit at once with ``code``."""
    if not stray_jobs():
        _pools.clear()
        return
    with contextlib.suppress(Exception):
        cleanup()
    print("hermes: a tool was still running; left without waiting for it", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
