"""The streamed preview: a reply shown while the model writes it, in one message edited at
most once per interval; the reply itself replaces it through the delivery ledger."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from hermes_sdk.platform import ChatRef, PlatformAdapter

__all__ = ["WRITING", "Preview", "ReplyStream", "StreamedText", "shown_text"]

log = logging.getLogger("hermes.gateway")

WRITING = " …"


def shown_text(text: str, max_chars: int) -> str | None:
    """A preview as the chat shows it: cut to the platform's limit, marked as still being
    written; None while there is nothing to show."""
    limit = max_chars - len(WRITING)
    preview = text.strip()
    if not preview:
        return None
    return (preview[: limit - 1] + "…" if len(preview) > limit else preview) + WRITING


class Preview(Protocol):
    """A turn's reply shown while it is written: here (:class:`ReplyStream`) or by the worker
    with the platforms (:class:`~.relayed_preview.RelayedStream`)."""

    def feed(self, delta: str) -> None: ...

    def restart(self) -> None: ...

    async def close(self) -> str | None:
        """Stop; what the reply names as the preview it replaces (None: nothing shown)."""
        ...


class StreamedText:
    """The text so far of a reply the model writes, and the one task that shows it every
    ``interval`` (:meth:`_run`, started by the first text)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.text = ""
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
        raise NotImplementedError


class ReplyStream(StreamedText):
    """Shows a reply while the model writes it: one message, edited at most once per
    ``interval``. A failure stops the preview, never the turn."""

    def __init__(
        self, adapter: PlatformAdapter, chat: ChatRef, reply_to: str | None, interval: float
    ) -> None:
        super().__init__(interval)
        self.adapter = adapter
        self.chat = chat
        self.reply_to = reply_to
        self.message_id: str | None = None
        self._shown = ""

    async def _run(self) -> None:
        while not self._broken:
            await asyncio.sleep(self.interval)
            await self._show()

    async def _show(self) -> None:
        preview = shown_text(self.text, self.adapter.max_message_chars)
        if preview is None or preview == self._shown:
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
