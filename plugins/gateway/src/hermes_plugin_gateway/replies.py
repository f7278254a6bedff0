"""The last stage: a reply recorded in the delivery ledger (:mod:`hermes_commons.outbox`),
then sent (:mod:`hermes_commons.sending`).

A reply to a message is recorded in the same write that marks the message done, under the
name of the worker that took the message (a worker taken for dead meanwhile records
nothing); then it is sent if its platform runs in this process, or left in the ledger for
the worker that runs the platforms, which sends what is due (:meth:`Replies.send_due`).
"""

from __future__ import annotations

import logging
import time

from hermes_commons.outbox import OutboxItem
from hermes_commons.sending import Deliveries
from hermes_plugin_gateway.ledger import ClaimLost, Ledger
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.relayed_preview import PreviewRelay
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import Delivery, DeliveryUnavailable

__all__ = ["Replies"]

log = logging.getLogger("hermes.gateway")


class Replies:
    def __init__(
        self,
        ledger: Ledger,
        deliveries: Deliveries,
        platforms: Platforms,
        previews: PreviewRelay | None = None,
    ) -> None:
        """``previews``: among workers, the previews shown for turns run elsewhere, which
        their replies replace."""
        self.ledger = ledger
        self.deliveries = deliveries
        self.platforms = platforms
        self.previews = previews

    async def reply(
        self,
        item_id: int | None,
        chat: ChatRef,
        text: str,
        *,
        worker: str | None = None,
        reply_to: str | None = None,
        preview_id: str | None = None,
        attachment: Attachment | None = None,
    ) -> tuple[int, bool]:
        """Record the reply (to the message ``item_id``, taken by ``worker``; None: a
        message of its own) and try to send it: its id (0: not this worker's to answer any
        more), and whether it went. With ``attachment``, the entry sends that file
        (``text``: its caption)."""
        # Recorded as being sent in the same write when the platform runs (one write less
        # on every reply's way out).
        sending = self.platforms.adapter(chat.platform) is not None
        try:
            outbox_id = await self.ledger.store.run(
                self.ledger.reply_ready,
                item_id,
                chat,
                text,
                reply_to=reply_to,
                preview_id=preview_id,
                attempting=sending,
                attachment=attachment,
                worker=worker,
            )
        except ClaimLost as exc:
            log.warning("gateway: %s (stopped, or taken over by another worker)", exc)
            return 0, False
        now = time.time()
        item = OutboxItem(
            outbox_id, chat, reply_to, preview_id, text, "pending", 0, False, now, now, attachment
        )
        if sending:
            (item,) = await self._settled([item])
        return outbox_id, await self.deliveries.deliver(item, marked=sending)

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        """A front-end's message to a chat (``Runtime.deliver`` in this process)."""
        if platform not in self.platforms.states:
            enabled = ", ".join(sorted(self.platforms.states)) or "none"
            raise DeliveryUnavailable(
                f"no platform {platform!r} runs in this gateway (enabled: {enabled})"
            )
        chat = ChatRef(platform=platform, chat_id=chat_id, chat_type="private")
        outbox_id, sent = await self.reply(None, chat, text)
        return Delivery(delivery_id=outbox_id, state="sent" if sent else "queued")

    async def send_due(self, platform: str | None = None) -> None:
        """Send what the ledger holds that is due (``platform``'s alone, or every one's):
        replies other workers recorded, and retries."""
        outbox = self.ledger.outbox
        due = await self._settled(await outbox.store.run(outbox.open, platform))
        await self.deliveries.deliver_due(due)

    async def _settled(self, items: list[OutboxItem]) -> list[OutboxItem]:
        """``items``, each that names a preview shown for a turn run elsewhere made to name
        the message showing it, if this worker sends it."""
        if self.previews is None:
            return items
        return [
            await self.previews.settle(item)
            if self.platforms.adapter(item.chat.platform) is not None
            else item
            for item in items
        ]
