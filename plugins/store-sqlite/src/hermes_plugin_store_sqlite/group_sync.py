"""Disk syncs shared by everyone waiting for one (group commit, on the syncing side).

A sync makes every commit made before it started survive a power cut. So when many
conversations on an event loop each need their commit synced, one thread can serve them all:
whoever asks while a sync runs waits for the next one, which covers them together. Each
asking for a sync of their own instead fills the worker threads with syncs that all wait on
the same disk (while a checkpoint writes, each takes as long as it does), and every other
hop to a thread queues behind them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable

__all__ = ["GroupSync"]

LINGER_SECONDS = 1.0
"""How long the sync thread waits for another caller before it ends."""


class GroupSync:
    """Runs ``sync`` in a thread of its own, once for every group of callers of :meth:`wait`
    that arrived while the previous one ran."""

    def __init__(self, sync: Callable[[], None], name: str = "hermes-sync") -> None:
        self._sync = sync
        self._name = name
        self._ready = threading.Condition()
        self._next: concurrent.futures.Future[None] | None = None  # the group still forming
        self._running = False

    async def wait(self) -> None:
        """Return once a sync that started after this call has finished; raise what it
        raised."""
        with self._ready:
            if self._next is None:
                self._next = concurrent.futures.Future()
            group = self._next
            if self._running:
                self._ready.notify()
            else:
                self._running = True
                threading.Thread(target=self._serve, name=self._name, daemon=True).start()
        await asyncio.wrap_future(group)

    def _serve(self) -> None:
        # Runs while callers keep arriving; after a second with none it ends, and the next
        # caller starts it again, so an idle store holds no thread.
        while True:
            with self._ready:
                if self._next is None:
                    self._ready.wait(LINGER_SECONDS)
                group, self._next = self._next, None
                if group is None:
                    self._running = False
                    return
            try:
                self._sync()
            except BaseException as exc:  # noqa: BLE001 - every waiter gets the failure
                group.set_exception(exc)
            else:
                group.set_result(None)
