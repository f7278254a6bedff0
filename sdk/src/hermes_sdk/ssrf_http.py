"""An httpx client whose every connection goes through the SSRF guard
(:mod:`hermes_sdk.ssrf`): the address judged is the address connected to, so a name cannot
resolve to something else between the check and the connect. For every outbound request a
plugin makes to a URL it did not choose itself (web tools, webhook callbacks, a browser's
downloads).

Importing this imports httpx (``hermes-sdk[http]``).
"""

from __future__ import annotations

import asyncio
import typing

import httpcore
import httpx

from hermes_sdk.ssrf import Refused, SsrfGuard

__all__ = ["USER_AGENT", "guarded_client"]

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
