"""Storing incoming messages in batches (group commit).

A message must be on disk before the platform is told it arrived, and a disk sync per
message caps how fast a busy gateway takes messages in. So every message that arrives while
one batch is being written, or in the same turn of the event loop, is written by the next
batch: one synced transaction, in arrival order, for a whole batch of platform updates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hermes_kernel.gateway.ledger import InboxItem, Ledger
from hermes_sdk.platform import Inbound

__all__ = ["Intake"]


class Intake:
    def __init__(self, ledger: Ledger, on_stored: Callable[[InboxItem], None]) -> None:
        """``on_stored`` gets each newly stored message, in order, as soon as its batch is
        on disk (even if the platform stopped waiting for it meanwhile)."""
        self._ledger = ledger
        self._on_stored = on_stored
        self._pending: list[tuple[Inbound, str, asyncio.Future[InboxItem | None]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def accept(self, message: Inbound, route_key: str) -> InboxItem | None:
        """Store the message; None if it was stored before (a platform sending it again).
        Raises what the store raised if its batch could not be written."""
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
                    stored = await self._ledger.db.run(
                        self._ledger.accept_many, [(message, key) for message, key, _ in batch]
                    )
                except Exception as exc:  # noqa: BLE001 - each sender gets the error
                    for *_, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (*_, future), item in zip(batch, stored, strict=True):
                    if item is not None:
                        self._on_stored(item)
                    if not future.done():
                        future.set_result(item)
        finally:
            self._writer = None
