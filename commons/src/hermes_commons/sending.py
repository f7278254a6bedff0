"""Sending from the delivery ledger (:mod:`hermes_commons.outbox`): each entry marked
attempting before it is sent and delivered after, retried with backoff, abandoned (logged)
after too many attempts or too long; a chat's entries in order, chats at once, and a few
sends at a time per platform (one held back by its API holds up no other)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from hermes_commons.outbox import Outbox, OutboxItem
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef, MessageGone, NotSent, PlatformAdapter, split_message

__all__ = ["DUPLICATE_NOTE", "SENDS_AT_ONCE", "Deliveries", "PartlySent", "send_in_parts"]

log = logging.getLogger("hermes.outbox")

SENT_IDS_KEPT = 4096
"""Replies whose platform message ids are remembered, for the platform's later reports."""
SENDS_AT_ONCE = 16
"""Entries sent at once to one platform; also the most of them that the death of the
sending process can send twice."""
DUPLICATE_NOTE = "↻ _Hermes restarted while sending this reply; it may be a duplicate._"


class PartlySent(Exception):
    """A reply some of whose parts went out before one was refused: not a refusal of the
    whole (its retry says it may repeat what went out)."""


async def send_in_parts(
    parts: Sequence[str], send_one: Callable[[str], Awaitable[str]]
) -> list[str]:
    """Send a reply's parts in order, for an adapter's ``send``; their ids. A refusal
    (:class:`NotSent`) of the first part is the reply's; of a later one, it becomes
    :class:`PartlySent`."""
    ids: list[str] = []
    for part in parts:
        try:
            ids.append(await send_one(part))
        except NotSent as exc:
            if not ids:
                raise
            said = f"{exc} (after {len(ids)} of its parts went out)"
            if exc.permanent:  # sending it again cannot help: given up, not sent twice
                raise NotSent(said, permanent=True) from None
            raise PartlySent(said) from None
    return ids


async def _quietly_synced(sync: asyncio.Future[None]) -> None:
    """Wait for a sync started before a send; its failure is logged, since the message has
    gone out (or failed) by now either way."""
    try:
        await sync
    except Exception as exc:  # noqa: BLE001 - the next sync reports it again where it matters
        log.warning("outbox: an attempt could not be synced to disk: %s", exc)


class Deliveries:
    def __init__(
        self,
        outbox: Outbox,
        adapter_for: Callable[[str], PlatformAdapter | None],
        *,
        attempts: int = 5,
        max_age_seconds: float = 86_400.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.outbox = outbox
        self.adapter_for = adapter_for
        self.attempts = attempts
        self.max_age = max_age_seconds
        self._now = clock
        self._in_flight: set[int] = set()
        self._marking: set[int] = set()
        self._sending: dict[str, asyncio.Semaphore] = {}
        """Per platform: one held back by its API (a flood wait) holds up no other."""
        self._delivered: list[tuple[int, asyncio.Future[None]]] = []
        self._recorder: asyncio.Task[None] | None = None
        self._sent_as: OrderedDict[tuple[str, str], int] = OrderedDict()
        """(platform, message id) -> the reply that sent it, for the platform's reports."""

    async def reported(self, platform: str, message_id: str, status: str, detail: str) -> None:
        """A platform's later report on a message it took (see ``PlatformHost.reported``):
        a failure is recorded against the reply, which is given up (sending it again as it
        was would fail alike: the platform says why)."""
        item_id = self._sent_as.get((platform, message_id))
        if status != "failed":
            log.debug("%s: message %s %s", platform, message_id, status)
            return
        said = f"{platform} could not deliver it: {detail or 'no reason given'}"
        if item_id is None:
            log.warning("%s: message %s was not delivered: %s", platform, message_id, detail)
            return
        for _ in range(600):  # a quick report must not be written over by the delivered mark
            if item_id not in self._in_flight:
                break
            await asyncio.sleep(0.05)
        await self.outbox.store.run(self.outbox.failed, item_id, said, abandon=True)
        log.error("reply %d to %s not delivered after all: %s", item_id, platform, detail)

    def _remember(self, platform: str, item_id: int, message_ids: object) -> None:
        if not isinstance(message_ids, list | tuple):
            return  # an adapter that returns no ids: nothing to match its reports to
        for message_id in message_ids:
            self._sent_as[(platform, str(message_id))] = item_id
        while len(self._sent_as) > SENT_IDS_KEPT:
            self._sent_as.popitem(last=False)

    async def deliver_due(self, items: list[OutboxItem]) -> None:
        """Send every reply of ``items`` that is due, with one write marking them all
        attempted: each chat's in order, the chats at once (a slow platform API must not
        make each chat wait for the one before)."""
        due = [item for item in items if self.due(item) and self.adapter_for(item.chat.platform)]
        if not due:
            return
        ids = {item.id for item in due}
        self._marking |= ids  # not due for a second caller meanwhile
        try:
            await self.outbox.store.run(self.outbox.attempting, *ids)
        finally:
            self._marking -= ids
        chats: dict[tuple[str, str], list[OutboxItem]] = {}
        for item in due:  # a chat's replies in order (a reply, then its files)
            chats.setdefault((item.chat.platform, item.chat.chat_id), []).append(item)

        async def in_order(items: list[OutboxItem]) -> None:
            for item in items:
                await self.deliver(item, marked=True)

        for failure in await asyncio.gather(
            *(in_order(items) for items in chats.values()), return_exceptions=True
        ):
            if isinstance(failure, Exception):
                log.warning("gateway: a reply could not be sent: %s", failure)

    def due(self, item: OutboxItem) -> bool:
        """Whether a pending reply should be tried now: at once the first time, then after
        10 s, 20 s, 40 s ... (at most 5 minutes) since the last attempt."""
        if item.id in self._in_flight or item.id in self._marking:
            return False
        if item.attempts == 0:
            return True
        return self._now() - item.updated_at >= min(300.0, 5.0 * 2.0**item.attempts)

    async def deliver(self, item: OutboxItem, *, marked: bool = False) -> bool:
        """Try to send one reply; True once it is delivered. ``marked``: the reply was
        recorded as being attempted (``Ledger.reply_ready(attempting=True)``), so this
        attempt needs no mark of its own."""
        if item.id in self._in_flight:
            return False
        adapter = self.adapter_for(item.chat.platform)
        if adapter is None:
            if marked:  # not attempted after all: back to pending, for when it runs
                await self.outbox.store.run(
                    self.outbox.failed, item.id, "the platform is not running", abandon=False
                )
            return False  # the platform is not running; tried again when it is
        too_old = self._now() - item.created_at > self.max_age
        if item.attempts >= self.attempts or too_old:
            why = "too old" if too_old else f"{item.attempts} failed attempts"
            log.error("reply %d to %s abandoned (%s)", item.id, item.chat.platform, why)
            await self.outbox.store.run(self.outbox.failed, item.id, why, abandon=True)
            return False
        self._in_flight.add(item.id)
        try:
            # A reply out but not yet marked delivered goes again (marked) if this process
            # dies: so few are ever sent at once that a kill can repeat at most that many.
            sending = self._sending.setdefault(item.chat.platform, asyncio.Semaphore(SENDS_AT_ONCE))
            async with sending:
                if not marked:
                    await self.outbox.store.run(self.outbox.attempting, item.id)
                # From here a crash of the process resends with the duplicate note. Surviving a
                # power cut too needs the mark synced: that runs while the reply is sent rather
                # than before, since on a disk that stalls it could hold up every reply.
                synced = asyncio.ensure_future(self.outbox.store.synced())
                try:
                    await self._send(adapter, item)
                except Exception as exc:  # noqa: BLE001 - recorded; retried with backoff
                    never = isinstance(exc, NotSent) and exc.permanent  # no retry can help
                    last = never or item.attempts + 1 >= self.attempts
                    log.warning(
                        "reply %d not delivered (attempt %d): %s", item.id, item.attempts + 1, exc
                    )
                    # Unless the platform refused it, it may have gone out (a timeout after
                    # Telegram took it): the retry then says it may be a duplicate.
                    await self.outbox.store.run(
                        self.outbox.failed,
                        item.id,
                        str(exc),
                        abandon=last,
                        maybe_sent=not isinstance(exc, NotSent),
                    )
                    if never:
                        log.error("reply %d to %s given up: %s", item.id, item.chat.platform, exc)
                    elif last:
                        log.error(
                            "reply %d to %s abandoned after %d attempts",
                            item.id,
                            item.chat.platform,
                            self.attempts,
                        )
                    return False
                finally:
                    await _quietly_synced(synced)
                await self._record_delivered(item.id)
                retry = f" (attempt {item.attempts + 1})" if item.attempts else ""
                log.info("reply %d delivered to %s%s", item.id, item.chat.platform, retry)
                return True
        finally:
            self._in_flight.discard(item.id)

    async def _record_delivered(self, item_id: int) -> None:
        """Record a reply as delivered, in one write with every other that went out while
        the last such write ran: until it is recorded, the death of this process sends it
        again (marked as a possible duplicate), so under load this write must not queue."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._delivered.append((item_id, future))
        if self._recorder is None:
            self._recorder = asyncio.ensure_future(self._record())
        await future

    async def _record(self) -> None:
        try:
            while self._delivered:
                batch, self._delivered = self._delivered, []
                try:
                    await self.outbox.store.run(self.outbox.delivered, *(i for i, _ in batch))
                except Exception as exc:  # noqa: BLE001 - each sender gets the error
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
        finally:
            self._recorder = None

    async def _send(self, adapter: PlatformAdapter, item: OutboxItem) -> None:
        platform = item.chat.platform
        if item.attachment is not None:
            sent = await _send_file(adapter, item.chat, item.attachment, item.text or None)
            self._remember(platform, item.id, sent)
            return
        text = f"{DUPLICATE_NOTE}\n\n{item.text}" if item.maybe_sent else item.text
        if item.preview_id and adapter.can_edit:
            chunks = split_message(text, adapter.max_message_chars)
            try:
                await adapter.edit(item.chat, item.preview_id, chunks[0])
            except MessageGone:
                pass  # the user deleted the preview: send the whole reply anew
            else:
                for chunk in chunks[1:]:
                    self._remember(platform, item.id, await adapter.send(item.chat, chunk))
                return
        self._remember(
            platform, item.id, await adapter.send(item.chat, text, reply_to=item.reply_to)
        )


async def _send_file(
    adapter: PlatformAdapter, chat: ChatRef, attachment: Attachment, caption: str | None
) -> list[str]:
    """A file through the adapter's optional ``send_file``; where it has none, or the file
    is no longer kept, the user gets a line saying so instead."""
    send_file = getattr(adapter, "send_file", None)
    if not attachment.exists():
        return await adapter.send(chat, f"({attachment.label()} was made but is no longer kept)")
    if send_file is None:
        return await adapter.send(
            chat, f"(Hermes made {attachment.label()}, which {chat.platform} cannot receive here)"
        )
    sent = await send_file(chat, attachment, caption=caption)
    return [str(i) for i in sent] if isinstance(sent, list) else []
