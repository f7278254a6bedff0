"""What a platform's API client needs when the bot is an *app* with an access token it
fetches itself (Feishu, DingTalk, WeCom, QQ): the token, cached until shortly before it
expires, fetched once however many calls wait for it, and forgotten when the API says it
no longer takes it (a secret rotated in the console); an aiohttp session made on first use;
and an answer's JSON, or one line of what came instead (a proxy's error page)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

__all__ = ["CachedToken", "LazySession", "read_json"]


class CachedToken:
    """``fetch()`` gives a token and its lifetime in seconds; :meth:`get` returns one that
    has at least ``margin`` seconds left (never kept less than ``shortest``)."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[tuple[str, float]]],
        *,
        margin: float = 300.0,
        shortest: float = 60.0,
    ) -> None:
        self._fetch = fetch
        self._margin = margin
        self._shortest = shortest
        self._token = ""
        self._until = 0.0
        self._lock = asyncio.Lock()

    async def get(self) -> str:
        async with self._lock:
            if self._token and time.time() < self._until:
                return self._token
            token, lifetime = await self._fetch()
            self._token = token
            self._until = time.time() + max(lifetime - self._margin, self._shortest)
            return token

    @property
    def expires_at(self) -> float:
        """When the token in hand stops being used (epoch seconds)."""
        return self._until

    def forget(self, token: str) -> None:
        """The API refused ``token``: the next :meth:`get` fetches another (unless one was
        fetched meanwhile)."""
        if self._token == token:
            self._token = ""


class LazySession:
    """An aiohttp session made on first use (on the loop that uses it), closed by
    :meth:`aclose`."""

    def __init__(self, seconds: float = 60.0) -> None:
        self._seconds = seconds
        self._session: aiohttp.ClientSession | None = None

    def __call__(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            timeout = aiohttp.ClientTimeout(total=self._seconds)
            self._session = aiohttp.ClientSession(timeout=timeout)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def read_json(response: aiohttp.ClientResponse) -> tuple[dict[str, Any] | None, str]:
    """The answer's JSON object, or None and one line of what came instead (for the error)."""
    raw = await response.read()
    try:
        answer = json.loads(raw) if raw else {}
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        return answer, ""
    text = " ".join(raw.decode("utf-8", errors="replace")[:200].split())
    return None, text or f"HTTP {response.status}"
