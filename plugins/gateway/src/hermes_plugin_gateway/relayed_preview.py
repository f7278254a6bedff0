"""Previews across workers: a reply written on a worker without the chat platforms is shown
while it is written by the worker with them, and the reply then replaces that preview, as
on one worker (:mod:`.preview`).

The writing worker puts the text so far in ``gateway_previews`` at most once per interval
(:class:`RelayedStream`); its reply names the preview ``relayed:INBOX_ID`` instead of a
message. The worker with the platforms shows each row in its chat, one message edited
(:meth:`PreviewRelay.show`), and before it sends a reply that names a relayed preview it
puts the id of the message it showed in its place (:meth:`PreviewRelay.settle`): then the
preview is no longer shown, its row goes, and a retry of the reply edits the same message.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
from typing import Any

from hermes_commons.outbox import OutboxItem
from hermes_plugin_gateway.ledger import InboxItem
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.preview import StreamedText, shown_text
from hermes_sdk.platform import ChatRef
from hermes_sdk.storage import Store

__all__ = ["RELAYED", "PreviewRelay", "RelayedStream"]

log = logging.getLogger("hermes.gateway")

RELAYED = "relayed:"
"""How a reply names a preview the worker with the platforms shows: ``relayed:INBOX_ID``."""
FORGET_SECONDS = 3600.0
"""A preview left this long unchanged is one whose worker died without a reply: removed."""


class RelayedStream(StreamedText):
    """A turn's preview on a worker without its platform: the text so far, written to the
    store at most once per ``interval``. A failure stops the preview, never the turn."""

    def __init__(self, store: Store, item: InboxItem, interval: float) -> None:
        super().__init__(interval)
        self.store = store
        self.item = item
        self._written = ""
        self._closing = asyncio.Event()

    async def _run(self) -> None:
        while not self._broken:
            with contextlib.suppress(TimeoutError):  # (wait_for can lose a cancel on 3.11)
                async with asyncio.timeout(self.interval):
                    await self._closing.wait()
            if self._closing.is_set():
                return  # a write under way has finished: none comes after the reply
            text = self.text.strip()
            if not text or text == self._written:
                continue
            try:
                await self.store.run(self._write, text)
            except Exception as exc:  # noqa: BLE001 - the reply still goes through the ledger
                log.info("relayed preview stopped: %s", exc)
                self._broken = True
            else:
                self._written = text

    def _write(self, text: str) -> None:
        item = self.item
        # Sets one row of this turn's own: nothing read decides it, so no write lock.
        with self.store.write(serialized=False) as cursor:
            cursor.execute(
                "INSERT INTO gateway_previews (inbox_id, platform, chat, reply_to, text, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (inbox_id) DO UPDATE SET "
                "text = excluded.text, updated_at = excluded.updated_at",
                (
                    item.id,
                    item.chat.platform,
                    json.dumps(item.chat.as_dict()),
                    item.message_id,
                    text,
                    time.time(),
                ),
            )

    async def close(self) -> str | None:
        """Stop writing; what the reply names as its preview (None: none was written)."""
        self._closing.set()
        if self._task is not None:
            await self._task
        return f"{RELAYED}{self.item.id}" if self._written else None


class PreviewRelay:
    """The worker with the platforms: shows the previews written elsewhere, and settles the
    replies that name them."""

    def __init__(self, store: Store, platforms: Platforms) -> None:
        self.store = store
        self.platforms = platforms
        self._messages: dict[int, str] = {}
        self._shown: dict[int, str] = {}
        self._settled: dict[int, float] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._forgot_at = 0.0

    def stream(self, item: InboxItem, interval: float) -> RelayedStream:
        return RelayedStream(self.store, item, interval)

    async def show(self) -> None:
        """Show or update, in its chat, each preview of a platform that runs here."""
        running = [name for name in self.platforms.states if self.platforms.adapter(name)]
        if not running:
            return
        await self._forget_stale()
        marks = ", ".join("?" for _ in running)
        rows = await self.store.run(
            self.store.query,
            "SELECT inbox_id, chat, reply_to, text, message_id FROM gateway_previews "
            f"WHERE platform IN ({marks})",
            tuple(running),
        )
        self._forget_gone({int(row[0]) for row in rows})
        for row in rows:
            inbox_id = int(row[0])
            if inbox_id not in self._settled and self._shown.get(inbox_id) != row[3]:
                async with self._lock(inbox_id):
                    if inbox_id not in self._settled:  # settled while this one waited
                        await self._show(inbox_id, row)

    async def _show(self, inbox_id: int, row: tuple[Any, ...]) -> None:
        chat = ChatRef.from_dict(json.loads(row[1]))
        adapter = self.platforms.adapter(chat.platform)
        if adapter is None or not adapter.can_edit:
            return
        text = shown_text(str(row[3]), adapter.max_message_chars)
        if text is None:
            return
        message_id = self._messages.get(inbox_id) or row[4]
        try:
            if message_id is None:
                ids = await adapter.send(chat, text, reply_to=row[2])
                if not ids:
                    return
                self._messages[inbox_id] = message_id = ids[0]
                await self.store.run(self._record, inbox_id, message_id)
            else:
                await adapter.edit(chat, str(message_id), text)
        except Exception as exc:  # noqa: BLE001 - only a preview: the reply still comes
            log.info("relayed preview not shown: %s", exc)
            return
        self._shown[inbox_id] = str(row[3])

    def _record(self, inbox_id: int, message_id: str) -> None:
        # A worker that takes the platforms over edits the same message.
        with self.store.write(serialized=False) as cursor:
            cursor.execute(
                "UPDATE gateway_previews SET message_id = ? WHERE inbox_id = ?",
                (message_id, inbox_id),
            )

    async def settle(self, item: OutboxItem) -> OutboxItem:
        """``item`` as it is sent: a relayed preview it names replaced by the message that
        shows it (None when none was shown), in the ledger too."""
        if not (item.preview_id or "").startswith(RELAYED):
            return item
        inbox_id = int(str(item.preview_id).removeprefix(RELAYED))
        async with self._lock(inbox_id):
            self._settled[inbox_id] = time.monotonic()
            message_id = self._messages.pop(inbox_id, None)
            message_id = await self.store.run(self._settle, item.id, inbox_id, message_id)
        self._shown.pop(inbox_id, None)
        self._locks.pop(inbox_id, None)
        return dataclasses.replace(item, preview_id=message_id)

    def _settle(self, outbox_id: int, inbox_id: int, message_id: str | None) -> str | None:
        with self.store.write(serialized=False) as cursor:
            if message_id is None:
                rows = cursor.execute(
                    "SELECT message_id FROM gateway_previews WHERE inbox_id = ?", (inbox_id,)
                ).fetchall()
                message_id = rows[0][0] if rows else None
            cursor.execute("DELETE FROM gateway_previews WHERE inbox_id = ?", (inbox_id,))
            cursor.execute(
                "UPDATE outbox_entries SET preview_id = ? WHERE id = ?", (message_id, outbox_id)
            )
        return message_id

    def _forget_gone(self, present: set[int]) -> None:
        """What this worker remembers of previews whose rows are gone (settled elsewhere,
        or removed as stale)."""
        for inbox_id in [k for k in self._shown if k not in present]:
            lock = self._locks.get(inbox_id)
            if lock is None or not lock.locked():
                self._shown.pop(inbox_id, None)
                self._messages.pop(inbox_id, None)
                self._locks.pop(inbox_id, None)

    def _lock(self, inbox_id: int) -> asyncio.Lock:
        return self._locks.setdefault(inbox_id, asyncio.Lock())

    async def _forget_stale(self) -> None:
        now = time.monotonic()
        if now - self._forgot_at < 60:
            return
        self._forgot_at = now
        self._settled = {k: at for k, at in self._settled.items() if now - at < FORGET_SECONDS}
        with contextlib.suppress(Exception):  # tidying only: next minute again
            await self.store.run(self._delete_stale, time.time() - FORGET_SECONDS)

    def _delete_stale(self, before: float) -> None:
        with self.store.write(serialized=False) as cursor:
            cursor.execute("DELETE FROM gateway_previews WHERE updated_at < ?", (before,))
