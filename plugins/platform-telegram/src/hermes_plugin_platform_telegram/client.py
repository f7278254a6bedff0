"""The Bot API over httpx: one method call, flood control, and errors that never show the
token (it is part of every URL)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import httpx

from hermes_commons.http_transport import pooled_transport
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


class _HideToken(logging.Filter):
    """httpx logs every request URL, and the token is in it."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self.token in message:
            record.msg, record.args = message.replace(self.token, "<token>"), None
        return True


class BotApi:
    """Calls Bot API methods. A 429 pauses every call of this bot for ``retry_after``
    seconds (Telegram's flood control), up to ``max_flood_wait`` per call; then the error is
    raised."""

    def __init__(
        self, token: str, api_url: str, *, timeout: float = 30.0, max_flood_wait: float = 300.0
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
        self._paused_until = 0.0
        self._hide = _HideToken(token)
        for name in ("httpx", "httpcore"):
            logging.getLogger(name).addFilter(self._hide)

    async def call(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        waited = 0.0
        while True:
            pause = self._paused_until - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            try:
                response = await self._client.post(
                    self._base + method,
                    json=params,
                    timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
                )
                data = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                # str(exc) may carry the URL, and with it the token: name the kind only.
                raise TelegramUnreachable(f"{method}: {type(exc).__name__}") from None
            if data.get("ok"):
                return data.get("result")
            code = int(data.get("error_code") or response.status_code)
            description = str(data.get("description") or "no description")
            retry_after = (data.get("parameters") or {}).get("retry_after")
            if code == 429 and retry_after is not None:
                delay = float(retry_after)
                if waited + delay > self._max_flood_wait:
                    raise TelegramError(method, code, description)
                log.warning("telegram flood control: %s waits %s s", method, retry_after)
                self._paused_until = max(self._paused_until, time.monotonic() + delay)
                waited += delay
                continue
            raise TelegramError(method, code, description)

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
        try:
            response = await self._client.post(
                self._base + method, data=form, files={field: file}, timeout=120
            )
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise TelegramUnreachable(f"{method}: {type(exc).__name__}") from None
        if data.get("ok"):
            return data.get("result")
        code = int(data.get("error_code") or response.status_code)
        raise TelegramError(method, code, str(data.get("description") or "no description"))

    async def aclose(self) -> None:
        await self._client.aclose()
        for name in ("httpx", "httpcore"):
            logging.getLogger(name).removeFilter(self._hide)
