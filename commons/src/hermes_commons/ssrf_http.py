"""An httpx client whose every connection goes through the SSRF guard
(:mod:`hermes_commons.ssrf`): the address judged is the address connected to, so a name cannot
resolve to something else between the check and the connect. For every outbound request a
plugin makes to a URL it did not choose itself (web tools, webhook callbacks, a browser's
downloads).

Importing this imports httpx (``hermes-sdk[http]``).
"""

from __future__ import annotations

import asyncio
import typing
from dataclasses import dataclass
from urllib.parse import urljoin

import httpcore
import httpx

from hermes_commons.ssrf import Refused, SsrfGuard

__all__ = ["MAX_REDIRECTS", "USER_AGENT", "Fetched", "fetch", "guarded_client"]

MAX_REDIRECTS = 5

USER_AGENT = "Mozilla/5.0 (compatible; Hermes-agent web tools)"


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to the addresses the guard returns for a host: the check and the
    connection use one resolution. TLS still verifies the certificate for the host name."""

    def __init__(self, guard: SsrfGuard) -> None:
        self.guard = guard
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await asyncio.to_thread(self.guard.addresses, host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise Refused("refused: unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_client(
    guard: SsrfGuard, timeout: float, user_agent: str = USER_AGENT
) -> httpx.AsyncClient:
    """An httpx client whose every connection passes ``guard`` (no proxies from the
    environment: a proxy would connect on our behalf, unjudged). Redirects are not
    followed: follow them by hand, so that every hop is judged again."""
    transport = httpx.AsyncHTTPTransport(trust_env=False)
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=20,
        network_backend=_GuardedBackend(guard),
    )
    return httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": user_agent},
    )


@dataclass(frozen=True)
class Fetched:
    """A response read through the guard."""

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
) -> Fetched:
    """GET (or ``method``) ``url`` with a :func:`guarded_client`, following up to
    MAX_REDIRECTS redirects by hand so each hop is judged again, and reading the body only
    up to ``max_bytes``. Refused (one line) for what the guard does not let through."""
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
            return Fetched(
                url=str(response.url),
                status=response.status_code,
                content_type=kind.split(";")[0].strip().lower(),
                charset=response.charset_encoding,
                body=body,
                truncated=truncated,
            )
    raise Refused(f"refused {url[:200]}: more than {MAX_REDIRECTS} redirects")
