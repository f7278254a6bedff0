"""The streamed preview: a reply shown while the model writes it, in one message edited at
most once per interval; the reply itself replaces it through the delivery ledger."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from hermes_sdk.platform import ChatRef, PlatformAdapter

__all__ = ["ReplyStream"]

log = logging.getLogger("hermes.gateway")

WRITING = " …"


class ReplyStream:
    """Shows a reply while the model writes it: one message, edited at most once per
    ``interval``. A failure stops the preview, never the turn."""

    def __init__(
        self, adapter: PlatformAdapter, chat: ChatRef, reply_to: str | None, interval: float
    ) -> None:
        self.adapter = adapter
        self.chat = chat
        self.reply_to = reply_to
        self.interval = interval
        self.text = ""
        self.message_id: str | None = None
        self._shown = ""
        self._task: asyncio.Task[None] | None = None
        self._broken = False

    def feed(self, delta: str) -> None:
        self.text += delta
        if self._task is None and not self._broken:
            self._task = asyncio.ensure_future(self._run())

    def restart(self) -> None:
        """The model is asked again (its stream dropped): the text so far is void."""
        self.text = ""

    async def _run(self) -> None:
        while not self._broken:
            await asyncio.sleep(self.interval)
            await self._show()

    async def _show(self) -> None:
        limit = self.adapter.max_message_chars - len(WRITING)
        preview = self.text.strip()
        if not preview:
            return
        preview = (preview[: limit - 1] + "…" if len(preview) > limit else preview) + WRITING
        if preview == self._shown:
            return
        try:
            if self.message_id is None:
                ids = await self.adapter.send(self.chat, preview, reply_to=self.reply_to)
                self.message_id = ids[0] if ids else None
            else:
                await self.adapter.edit(self.chat, self.message_id, preview)
            self._shown = preview
        except Exception as exc:  # noqa: BLE001 - the final reply still goes through the ledger
            log.info("streaming preview stopped: %s", exc)
            self._broken = True

    async def close(self) -> str | None:
        """Stop previewing; the id of the preview message, which the reply will replace."""
        self._broken = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        return self.message_id
