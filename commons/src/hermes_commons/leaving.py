"""Running a front-end command's event loop so that leaving never hangs (the terminal chat,
the gateway: any command that runs turns in the foreground).

A tool that ignores a stop (a handler blocked in a thread) keeps its worker thread busy;
asyncio.run, and the interpreter at exit, would wait for it however long it takes. The
command runs blocking work on its own named pool instead, and when such a thread is still running
at the end, the process leaves without it: its call is already recorded as effect unknown.

A stop signal (SIGTERM, SIGINT) asks the command to stop and save (:class:`Leaving`); if the
process is still there a few seconds later, whatever a plugin thread is doing, it leaves
anyway, with the exit status that names the signal (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["LEAVE_SECONDS", "Leaving", "leave_now_if_stuck", "run_until_done", "stray_jobs"]


class _WorkerPool(ThreadPoolExecutor):
    """A thread pool that knows how many of its jobs are still running."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="hermes-worker")
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


def run_until_done(main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` on a new event loop whose worker threads never hold up the exit."""
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
    """Jobs of finished loops still running in a worker thread (a tool that ignored a stop)."""
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


LEAVE_SECONDS = 4.0
"""After a stop signal, how long the process may take to save and leave on its own."""


class Leaving:
    """What SIGTERM and SIGINT do to a running chat or gateway: the first one calls
    ``stop`` (the turn stops and is saved), and starts a watchdog that
    ends the process ``grace`` seconds later if it is still there; a second one ends it at
    once. Install on the loop that runs the work."""

    def __init__(
        self,
        stop: Callable[[], None],
        grace: float = LEAVE_SECONDS,
        signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM),
    ) -> None:
        self.stop = stop
        self.grace = grace
        self.signals = signals
        self.received: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def code(self) -> int | None:
        """128 + the signal's number once one came (the shell's convention), else None."""
        return None if self.received is None else 128 + self.received

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        for number in self.signals:
            loop.add_signal_handler(number, self._received, number)

    def remove(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            for number in self.signals:
                self._loop.remove_signal_handler(number)
        self._loop = None

    def _received(self, number: int) -> None:
        if self.received is not None:
            _leave_now(128 + number)
        self.received = number
        threading.Thread(
            target=self._watch, args=(128 + number,), name="hermes-leaving", daemon=True
        ).start()
        self.stop()

    def _watch(self, code: int) -> None:
        time.sleep(self.grace)
        print(
            f"hermes: still busy {self.grace:g} s after the stop signal (a plugin thread?); "
            "leaving without it",
            file=sys.stderr,
        )
        _leave_now(code)


def _leave_now(code: int) -> None:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
