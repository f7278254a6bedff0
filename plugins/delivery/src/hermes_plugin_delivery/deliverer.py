"""``Runtime.deliver`` for any process (``hermes cron run``, ``hermes serve``, a script): the
message is recorded in the delivery ledger, and the process that runs the chat platforms
sends it within a second or two. With nothing sending from the ledger it is refused, with
the command that starts what sends. (The gateway's own process delivers straight to its
platforms: it gives its runtime a deliverer of its own.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hermes_commons.outbox import OUTBOX, Outbox
from hermes_sdk import Kind
from hermes_sdk.delivery import DeliveryContext
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import Delivery, DeliveryUnavailable

__all__ = ["NOTHING_SENDS", "LedgerDelivery"]

NOTHING_SENDS = "nothing sends messages to chats for {home} now; start it with: hermes gateway run"


class LedgerDelivery:
    """A runtime's :class:`~hermes_sdk.delivery.Deliverer`."""

    def __init__(self, context: DeliveryContext) -> None:
        self._context = context
        self._platforms: frozenset[str] | None = None

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        if self._platforms is None:
            specs = await asyncio.to_thread(self._context.provided.of, Kind.PLATFORM)
            self._platforms = frozenset(spec.name for spec in specs)
        if platform not in self._platforms:
            installed = ", ".join(sorted(self._platforms)) or "none"
            raise DeliveryUnavailable(
                f"no platform {platform!r} is installed (installed: {installed})"
            )
        store = self._context.store(OUTBOX)
        outbox = Outbox(store)
        if await store.run(outbox.sender) is None:
            raise DeliveryUnavailable(NOTHING_SENDS.format(home=Path(self._context.home)))
        chat = ChatRef(platform=platform, chat_id=chat_id, chat_type="private")
        delivery_id = await store.run(outbox.record, chat, text)
        return Delivery(delivery_id=delivery_id, state="queued")
