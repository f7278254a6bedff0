"""Storing incoming messages in batches (group commit).

A message must be on disk before the platform is told it arrived, and a disk sync per
message caps how fast a busy gateway takes messages in. So every message that arrives while
one batch is being written, or in the same turn of the event loop, is written by the next
batch: one transaction, in arrival order, for a whole batch of platform updates.

A batch's turns start as soon as it is committed, before the disk sync that makes it
survive a power cut: only the platform's confirmation waits for that sync, so a disk that
stalls for a moment does not hold up the replies. A side-effecting tool's call is synced
before it runs, and the write-ahead log is synced in order, so that sync covers the message
too; a reply's sync runs while it is sent (see ``Deliveries.deliver``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_sdk.platform import Inbound

__all__ = ["Intake"]

_Waiting = tuple[Inbound, str, "asyncio.Future[InboxItem | None]"]
"""A message, its route key, and its sender waiting to hear it is stored."""


class Intake:
    def __init__(self, ledger: Ledger, on_stored: Callable[[InboxItem], None]) -> None:
        """``on_stored`` gets each newly stored message, in order, as soon as its batch is
        committed (even if the platform stopped waiting for it meanwhile)."""
        self._ledger = ledger
        self._on_stored = on_stored
        self.worker: str | None = None
        """The gateway worker taking messages in, recorded with each (its files are on this
        worker's disk)."""
        self._pending: list[_Waiting] = []
        self._writer: asyncio.Task[None] | None = None
        self._confirming: set[asyncio.Task[None]] = set()

    def route(self, key: str) -> str | None:
        """The session the route talks in (in a worker thread: a store read)."""
        return self._ledger.route(key)

    async def accept(self, message: Inbound, route_key: str) -> InboxItem | None:
        """Store the message and sync it to disk; None if it was stored before (a platform
        sending it again). Raises what the store raised if its batch could not be written
        or synced."""
        future: asyncio.Future[InboxItem | None] = asyncio.get_running_loop().create_future()
        self._pending.append((message, route_key, future))
        if self._writer is None:
            self._writer = asyncio.ensure_future(self._write())
        return await future  # cancelled: the message is stored and queued all the same

    async def _write(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    stored = await self._ledger.store.run(
                        self._ledger.accept_many,
                        [(message, key) for message, key, _ in batch],
                        self.worker,
                    )
                except Exception as exc:  # noqa: BLE001 - each sender gets the error
                    _fail(batch, exc)
                    continue
                for item in stored:
                    if item is not None:
                        self._on_stored(item)
                # The next batch is written while this one syncs (a sync covers every commit
                # before it, so the order on disk stays the arrival order).
                confirm = asyncio.ensure_future(self._confirm(batch, stored))
                self._confirming.add(confirm)
                confirm.add_done_callback(self._confirming.discard)
        finally:
            self._writer = None

    async def _confirm(self, batch: list[_Waiting], stored: list[InboxItem | None]) -> None:
        try:
            await self._ledger.store.synced()
        except Exception as exc:  # noqa: BLE001 - each sender gets the error
            _fail(batch, exc)
            return
        for (*_, future), item in zip(batch, stored, strict=True):
            if not future.done():
                future.set_result(item)


def _fail(batch: list[_Waiting], error: Exception) -> None:
    for *_, future in batch:
        if not future.done():
            future.set_exception(error)
