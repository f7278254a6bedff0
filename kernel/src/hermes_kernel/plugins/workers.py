"""Threads for calls into plugin code that may never return.

asyncio's default executor and ``concurrent.futures`` join their threads when the process
leaves, so one hook or tool handler stuck in a thread would hold up ``hermes`` at exit for
as long as it is stuck. These workers are daemon threads: a call past its deadline is
abandoned (Python cannot kill a thread), its thread runs on unobserved, and the process
still leaves. A worker is reused once its call returns; a new one starts when every worker
is busy, so a stuck call never delays the next one.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["PluginExit", "Workers", "plugin_workers"]

T = TypeVar("T")

_Job = tuple["Future[Any]", Callable[[], Any]]


class PluginExit(Exception):
    """A call raised ``SystemExit`` or ``KeyboardInterrupt``: contained like any error (as
    itself it would end the event loop that awaits it)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


class Workers:
    """A growing set of daemon threads sharing one queue of calls."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._started = 0

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn()`` in a worker; what it raises is the future's (``SystemExit`` and
        ``KeyboardInterrupt`` as :class:`PluginExit`)."""
        future: Future[T] = Future()
        with self._lock:
            self._jobs.put((future, fn))
            if self._idle:
                self._idle -= 1  # a waiting worker takes it
                return future
            self._started += 1
            number = self._started
        threading.Thread(target=self._work, name=f"{self.prefix}-{number}", daemon=True).start()
        return future

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker, in a copy of the caller's context (as ``asyncio.to_thread``:
        ``report_progress`` finds its tool call), awaited from the event loop."""
        context = contextvars.copy_context()
        return await asyncio.wrap_future(self.submit(lambda: context.run(fn)))

    def _work(self) -> None:
        while True:
            future, fn = self._jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except Exception as exc:  # noqa: BLE001 - the caller's to judge
                    future.set_exception(exc)
                except BaseException as exc:  # noqa: BLE001 - plugin code: SystemExit included
                    future.set_exception(PluginExit(exc))
                else:
                    future.set_result(result)
                del future, fn  # nothing of the call outlives it while the worker waits
            with self._lock:
                self._idle += 1


plugin_workers = Workers("hermes-plugin")
"""The process's workers for hooks and tool handlers."""
