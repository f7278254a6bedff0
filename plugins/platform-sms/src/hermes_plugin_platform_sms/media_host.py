"""Files for MMS: Twilio sends a picture only from a public address it fetches itself, so a
file the agent sends is served on the gateway's listener under the webhook's path, at an
address with 32 random bytes in it, for 15 minutes, then forgotten."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

__all__ = ["MediaHost"]

KEPT_SECONDS = 15 * 60.0
HELD_BYTES = 64 * 1024 * 1024
"""At most this much is served at once (the oldest files go first)."""


@dataclass(frozen=True)
class _Served:
    data: bytes
    mime: str
    until: float


class MediaHost:
    def __init__(self, webhook_url: str, clock: Callable[[], float] = time.monotonic) -> None:
        parts = urlsplit(webhook_url)  # the webhook's own address, never its query
        self._base = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/media/"
        self._clock = clock
        self._files: dict[str, _Served] = {}

    def serve(self, data: bytes, mime: str, name: str) -> str:
        """The public address ``data`` is fetched from, for a while."""
        self._forget_old()
        while (
            self._files and sum(len(s.data) for s in self._files.values()) + len(data) > HELD_BYTES
        ):
            del self._files[next(iter(self._files))]
        token = secrets.token_urlsafe(32)
        self._files[token] = _Served(data, mime, self._clock() + KEPT_SECONDS)
        return f"{self._base}{token}/{quote(name)}"

    def fetch(self, tail: str) -> tuple[bytes, str] | None:
        """The file at ``TOKEN/NAME`` (what follows ``/media/``), if still served."""
        self._forget_old()
        served = self._files.get(tail.partition("/")[0])
        return (served.data, served.mime) if served is not None else None

    def _forget_old(self) -> None:
        now = self._clock()
        for token in [t for t, s in self._files.items() if s.until <= now]:
            del self._files[token]
