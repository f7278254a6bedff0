"""Fetching through the guard: connections go only to addresses the guard judged (resolved
once, connected to as judged), redirects are followed by hand so every hop is judged again,
and a body is read only up to its cap, so a huge page never sits whole in memory."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from hermes_sdk.ssrf import Refused, SsrfGuard

__all__ = ["MAX_REDIRECTS", "Page", "fetch"]

MAX_REDIRECTS = 5


@dataclass(frozen=True)
class Page:
    url: str
    """Where the content came from (after redirects)."""
    status: int
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    """The body was longer than the cap; only its start was read."""


async def fetch(
    client: httpx.AsyncClient,
    guard: SsrfGuard,
    url: str,
    max_bytes: int,
    *,
    method: str = "GET",
    **request: typing.Any,
) -> Page:
    """GET (or ``method``) ``url`` through the guard, following up to MAX_REDIRECTS
    redirects, each judged; Refused (one line) for what the guard does not let through."""
    for _hop in range(MAX_REDIRECTS + 1):
        guard.check_url(url)
        async with client.stream(method, url, **request) as response:
            if response.is_redirect and "location" in response.headers:
                url = urljoin(url, response.headers["location"])
                method, request = "GET", {}  # a redirect is followed with a plain GET
                continue
            chunks: list[bytes] = []
            size = 0
            truncated = False
            async for chunk in response.aiter_bytes():  # decompressed as it comes
                chunks.append(chunk)
                size += len(chunk)
                if size >= max_bytes:
                    truncated = True
                    break
            body = b"".join(chunks)[:max_bytes]
            kind = response.headers.get("content-type", "")
            return Page(
                url=str(response.url),
                status=response.status_code,
                content_type=kind.split(";")[0].strip().lower(),
                charset=response.charset_encoding,
                body=body,
                truncated=truncated,
            )
    raise Refused(f"refused {url[:200]}: more than {MAX_REDIRECTS} redirects")
