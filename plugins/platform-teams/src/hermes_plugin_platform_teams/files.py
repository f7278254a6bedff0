"""Files to a person in Teams: the file consent flow (Teams' "Send and receive files" with a
bot, personal chats only).

The bot offers the file with a consent card (its name, size, a description); when the
person accepts, Teams posts a ``fileConsent/invoke`` with an upload URL in their OneDrive;
the bot uploads there (``PUT`` with ``Content-Range``, in pieces for a large file) and then
posts a file info card that shows the file in the chat. A declined offer, or one not
answered in a day, is forgotten."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from hermes_plugin_platform_teams.reading import chat_of
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef, NotSent

__all__ = ["FileOffers"]

log = logging.getLogger("hermes.teams")

CONSENT = "application/vnd.microsoft.teams.card.file.consent"
INFO = "application/vnd.microsoft.teams.card.file.info"
PIECE = 32 * 320 * 1024
"""10 MiB: a whole multiple of 320 KiB, as OneDrive's upload sessions want their pieces."""
KEPT = 64
OFFER_SECONDS = 24 * 3600.0
MAX_BYTES = 250 * 1024 * 1024


@dataclass(frozen=True)
class _Offer:
    chat: ChatRef
    attachment: Attachment
    made: float


class FileOffers:
    def __init__(
        self,
        session: Callable[[], aiohttp.ClientSession],
        post: Callable[[ChatRef, dict[str, Any]], Awaitable[str]],
    ) -> None:
        self._session = session
        self._post = post
        self._offers: OrderedDict[str, _Offer] = OrderedDict()
        self._uploads: set[asyncio.Task[None]] = set()

    async def offer(self, chat: ChatRef, attachment: Attachment, caption: str | None) -> str:
        size = attachment.size
        if size <= 0:
            raise NotSent(f"{attachment.name} is empty: nothing to send", permanent=True)
        if size > MAX_BYTES:
            raise NotSent(f"{attachment.name} is over {MAX_BYTES // 2**20} MiB", permanent=True)
        token = uuid.uuid4().hex
        now = time.monotonic()
        for key in [k for k, o in self._offers.items() if now - o.made > OFFER_SECONDS]:
            del self._offers[key]
        self._offers[token] = _Offer(chat, attachment, now)
        while len(self._offers) > KEPT:
            self._offers.popitem(last=False)
        card = {
            "contentType": CONSENT,
            "name": attachment.name or "file",
            "content": {
                "description": caption or attachment.name or "A file from Hermes",
                "sizeInBytes": size,
                "acceptContext": {"hermes_file": token},
                "declineContext": {"hermes_file": token},
            },
        }
        return await self._post(chat, {"type": "message", "attachments": [card]})

    def answered(self, activity: dict[str, Any]) -> None:
        """The person's answer to an offer: on accept, the upload starts (after the invoke
        is answered: Teams waits on it)."""
        value = activity.get("value")
        value = value if isinstance(value, dict) else {}
        context = value.get("context")
        token = str((context if isinstance(context, dict) else {}).get("hermes_file") or "")
        offer = self._offers.pop(token, None)
        if offer is not None and time.monotonic() - offer.made > OFFER_SECONDS:
            offer = None  # a day old: forgotten, as the docs say
        if offer is None or offer.chat.chat_id != chat_of(activity).chat_id:
            log.info("teams: an answer to a file offer not known here (or from elsewhere)")
            return
        if value.get("action") != "accept":
            log.info("teams: %s declined %s", offer.chat.chat_id, offer.attachment.name)
            return
        task = asyncio.ensure_future(self._upload(offer, value.get("uploadInfo") or {}))
        self._uploads.add(task)
        task.add_done_callback(self._uploads.discard)

    async def _upload(self, offer: _Offer, info: dict[str, Any]) -> None:
        url = str(info.get("uploadUrl") or "")
        try:
            data = await asyncio.to_thread(offer.attachment.read_bytes)
            total = len(data)
            for start in range(0, max(total, 1), PIECE):
                piece = data[start : start + PIECE]
                headers = {
                    "Content-Length": str(len(piece)),
                    "Content-Range": f"bytes {start}-{start + len(piece) - 1}/{total}",
                }
                async with self._session().put(url, data=piece, headers=headers) as response:
                    if response.status >= 400:
                        raise ValueError(f"OneDrive refused the upload ({response.status})")
            shown = {
                "contentType": INFO,
                "contentUrl": info.get("contentUrl"),
                "name": info.get("name") or offer.attachment.name,
                "content": {"uniqueId": info.get("uniqueId"), "fileType": info.get("fileType")},
            }
            await self._post(offer.chat, {"type": "message", "attachments": [shown]})
        except Exception as exc:  # noqa: BLE001 - said in the chat, and logged
            log.warning("teams: %s could not be uploaded: %s", offer.attachment.name, exc)
            note = f"{offer.attachment.name} could not be uploaded to your OneDrive ({exc})."
            try:
                await self._post(offer.chat, {"type": "message", "text": note})
            except Exception as again:  # noqa: BLE001 - the log has it
                log.info("teams: could not say so: %s", again)

    async def aclose(self) -> None:
        tasks = list(self._uploads)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
