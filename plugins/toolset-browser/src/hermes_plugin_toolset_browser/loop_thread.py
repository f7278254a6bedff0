"""The browser's own event loop, on a thread of its own.

Playwright's objects belong to the event loop that made them, and Hermes runs tools on
more than one loop (the terminal chat starts one per turn; the gateway, a service and an
isolated plugin host each have theirs). So every Playwright call runs here, on one loop that
lives as long as the process, and a tool awaits it from wherever it runs: the session's page
is still open in the next turn.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                # A daemon: a browser that never answers must not keep the process alive.
                threading.Thread(target=run, name=self._name, daemon=True).start()
                ready.wait()
                self._loop = loop
            return self._loop

    def running(self) -> bool:
        return self._loop is not None and self._loop.is_running()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop())

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` on this thread's loop from any other loop; cancelling the
        caller cancels it there too."""
        return await asyncio.wrap_future(self.submit(coroutine))

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coroutine`` there and wait for it here (from a thread with no loop)."""
        return self.submit(coroutine).result(timeout)
