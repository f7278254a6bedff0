"""The Bot API over httpx: one method call, flood control, and errors that never show the
token (it is part of every URL)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from hermes_commons.http_transport import pooled_transport
from hermes_commons.redact import HiddenInHttpLogs
from hermes_sdk.platform import NotSent

__all__ = ["BotApi", "TelegramError", "TelegramUnreachable"]

log = logging.getLogger("hermes.telegram")


class TelegramError(NotSent):
    """Telegram answered ``ok: false``: it did not take the call."""

    def __init__(self, method: str, code: int, description: str) -> None:
        super().__init__(f"{method}: {code} {description}")
        self.code = code
        self.description = description

    @property
    def unparsable(self) -> bool:
        return self.code == 400 and "can't parse entities" in self.description

    @property
    def not_modified(self) -> bool:
        return self.code == 400 and "message is not modified" in self.description

    @property
    def gone(self) -> bool:
        return self.code == 400 and (
            "message to edit not found" in self.description
            or "message can't be edited" in self.description
        )


class TelegramUnreachable(Exception):
    """No answer from the Bot API (network, timeout, not JSON)."""


POSTING = frozenset(
    {
        "sendMessage",
        "editMessageText",
        "editMessageReplyMarkup",
        "sendPhoto",
        "sendDocument",
        "sendAudio",
        "sendVoice",
        "sendVideo",
    }
)
"""What Telegram counts against a chat's flood limit (a message, or an edit of one)."""
GROUP_PER_MINUTE = 20
"""Telegram takes 20 posts a minute from a bot in one group."""
GROUP_BURST = 3
"""Posted at once before the pace sets in: a reply split in three goes without a wait."""


class _GroupPace:
    """Posts to one group, paced under its limit before Telegram says 429: a burst of
    ``GROUP_BURST``, then evenly, so no minute ever holds more than the limit."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.tokens = float(GROUP_BURST)
        self.at = time.monotonic()

    def resume_at(self, until: float) -> None:
        """Telegram said 429 anyway: no slot before ``until``, and no burst after it."""
        self.tokens = min(self.tokens, 0.0)
        self.at = max(self.at, until)

    def wait(self) -> float:
        """Take a slot: how long to wait for it (0: now)."""
        now = time.monotonic()
        self.tokens = min(GROUP_BURST, self.tokens + (now - self.at) / self.every)
        self.at = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens * self.every


def _chat_key(method: str, params: dict[str, Any]) -> object:
    """What a 429 pauses: the chat a post goes to (Telegram limits each chat), else only
    that method; polling is never held up by a busy chat."""
    chat_id = params.get("chat_id")
    return chat_id if chat_id is not None else ("method", method)


class BotApi:
    """Calls Bot API methods. Telegram limits posts per chat: posts to a group are paced
    under ``group_per_minute`` (a burst of 3, then evenly: one every 3.5 s at 20 a minute);
    a 429 pauses the calls for that chat alone (others, and polling, go on) for
    ``retry_after`` seconds, up to ``max_flood_wait`` per call; then the error is raised.
    ``minute``: its length in seconds (shorter in tests)."""

    def __init__(
        self,
        token: str,
        api_url: str,
        *,
        timeout: float = 30.0,
        max_flood_wait: float = 300.0,
        group_per_minute: int = GROUP_PER_MINUTE,
        minute: float = 60.0,
    ) -> None:
        self._base = f"{api_url.rstrip('/')}/bot{token}/"
        self._files = f"{api_url.rstrip('/')}/file/bot{token}/"
        self._client = httpx.AsyncClient(
            timeout=timeout,
            transport=pooled_transport(
                httpx.Limits(max_connections=256, max_keepalive_connections=256)
            ),
        )
        self._max_flood_wait = max_flood_wait
        self._paused_until: dict[object, float] = {}
        self._groups: dict[object, _GroupPace] = {}
        self._group_every = minute / max(1, group_per_minute - GROUP_BURST)
        # httpx logs every request URL, and the token is in it.
        self._hide = HiddenInHttpLogs(token, "<token>").attach()

    async def call(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        return await self._answered(
            method,
            params,
            lambda: self._client.post(
                self._base + method,
                json=params,
                timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
            ),
        )

    async def _answered(
        self,
        method: str,
        params: dict[str, Any],
        request: Callable[[], Awaitable[httpx.Response]],
    ) -> Any:
        """``request`` made (again after each 429 of its chat) until Telegram takes it."""
        key = _chat_key(method, params)
        waited = 0.0
        while True:
            pause = self._paused_until.get(key, 0.0) - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            await self._paced(method, params)  # each attempt, a retry after a 429 too
            try:
                response = await request()
                data = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                # str(exc) may carry the URL, and with it the token: name the kind only.
                raise TelegramUnreachable(f"{method}: {type(exc).__name__}") from None
            if not isinstance(data, dict):
                raise TelegramUnreachable(f"{method}: not a Bot API answer")
            if data.get("ok"):
                return data.get("result")
            code = int(data.get("error_code") or response.status_code)
            description = str(data.get("description") or "no description")
            retry_after = (data.get("parameters") or {}).get("retry_after")
            if code == 429 and retry_after is not None:
                delay = float(retry_after)
                if waited + delay > self._max_flood_wait:
                    raise TelegramError(method, code, description)
                log.warning(
                    "telegram flood control: %s to %s waits %s s", method, _spoken(key), delay
                )
                until = max(self._paused_until.get(key, 0.0), time.monotonic() + delay)
                self._paused_until[key] = until
                pace = self._groups.get(key)
                if pace is not None:
                    pace.resume_at(until)  # what waited with it goes one by one, no burst
                waited += delay
                continue
            raise TelegramError(method, code, description)

    async def _paced(self, method: str, params: dict[str, Any]) -> None:
        chat_id = params.get("chat_id")
        if method not in POSTING or not isinstance(chat_id, int) or chat_id >= 0:
            return  # a private chat takes short bursts; a 429 there pauses it alone
        delay = self._groups.setdefault(chat_id, _GroupPace(self._group_every)).wait()
        if delay > 0:
            await asyncio.sleep(delay)

    async def download(self, file_id: str, limit: int) -> bytes:
        """A file users sent (getFile, then its path), read up to ``limit`` bytes; raises
        TelegramError (too big, gone) or TelegramUnreachable."""
        found = await self.call("getFile", {"file_id": file_id})
        path = str((found or {}).get("file_path") or "")
        if not path:
            raise TelegramError("getFile", 400, "no file_path for this file")
        chunks: list[bytes] = []
        size = 0
        try:
            async with self._client.stream("GET", self._files + path, timeout=120) as response:
                if response.status_code != 200:
                    raise TelegramError("download", response.status_code, "the file was not served")
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise TelegramError("download", 413, f"the file is over {limit} bytes")
                    chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise TelegramUnreachable(f"download: {type(exc).__name__}") from None
        return b"".join(chunks)

    async def upload(
        self,
        method: str,
        params: dict[str, Any],
        field: str,
        file: tuple[str, bytes, str],
    ) -> Any:
        """A method whose ``field`` is a file (sendVoice ...), as a multipart upload; the
        other parameters are form fields. Errors as :meth:`call` raises them."""
        form = {
            key: value if isinstance(value, str) else json.dumps(value)
            for key, value in params.items()
        }
        return await self._answered(
            method,
            params,
            lambda: self._client.post(
                self._base + method, data=form, files={field: file}, timeout=120
            ),
        )

    async def aclose(self) -> None:
        await self._client.aclose()
        self._hide.detach()


def _spoken(key: object) -> str:
    return f"chat {key}" if not isinstance(key, tuple) else "the bot"
