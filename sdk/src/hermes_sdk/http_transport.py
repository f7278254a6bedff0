"""An httpx transport for many requests over many kept-alive connections.

httpx's default connection pool costs CPU per request that grows with the square of the
connections it keeps (httpcore 1.0: each idle connection is weighed against a list of all of
them, encode/httpcore#924), and its check of each idle connection asks the socket layer for
all of its attributes (``getpeername`` and friends) and polls the socket (#928). A gateway
keeping forty connections to its model server paid about 1.5 ms of CPU per request for that.

So: the same pool with that bookkeeping done in one pass (:class:`LinearConnectionPool`),
over asyncio streams whose "has the server closed this idle connection?" check reads a flag
asyncio already keeps (:class:`AsyncioNetworkBackend`). HTTP/1.1, TLS, timeouts and proxies
(through httpx's mounts) are httpx's and httpcore's own.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Coroutine, Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["AsyncioNetworkBackend", "LinearConnectionPool", "pooled_transport"]

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout("timed out reading from the server") from None
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(buffer)
                await self._writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout("timed out writing to the server") from None
        except OSError as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        # Not waiting for the close: the transport finishes it on its own, and a TLS peer
        # that never answers the close_notify must not hold the caller.
        self._writer.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            self._writer.close()
            raise httpcore.ConnectTimeout("timed out during the TLS handshake") from None
        except OSError as exc:  # ssl.SSLError included
            self._writer.close()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # An idle HTTP/1.1 connection that is readable has been closed by the server:
            # asyncio has already read the end of the stream (or whatever came before it).
            return self._reader.at_eof() or self._writer.is_closing()
        if info == "ssl_object":
            return self._writer.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        if info == "socket":
            return self._writer.get_extra_info("socket")
        return None


class AsyncioNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network layer on asyncio streams."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = (local_address, 0) if local_address else None
        opening = asyncio.open_connection(host, port, local_addr=local)
        return await _connect(opening, f"{host}:{port}", timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        opening = asyncio.open_unix_connection(path)
        return await _connect(opening, path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connect(
    opening: Coroutine[Any, Any, tuple[asyncio.StreamReader, asyncio.StreamWriter]],
    where: str,
    timeout: float | None,
    options: Iterable[SocketOption] | None,
) -> _Stream:
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await opening
    except TimeoutError:
        raise httpcore.ConnectTimeout(f"timed out connecting to {where}") from None
    except OSError as exc:
        raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
    sock: socket.socket | None = writer.get_extra_info("socket")
    for option in options or ():
        if sock is not None:
            sock.setsockopt(*option)
    return _Stream(reader, writer)


class LinearConnectionPool(httpcore.AsyncConnectionPool):
    """httpcore's pool, its bookkeeping in time linear in the connections it holds.

    Overrides the one private method that is quadratic (httpcore 1.0.x, pinned in the SDK's
    ``http`` extra); the behaviour is httpcore's, except that ``max_keepalive_connections``
    counts idle connections, as documented, rather than all of them."""

    def _assign_requests_to_connections(self) -> list[httpcore.AsyncConnectionInterface]:
        closing: list[httpcore.AsyncConnectionInterface] = []
        kept: list[httpcore.AsyncConnectionInterface] = []
        for connection in self._connections:
            if connection.is_closed():
                continue
            if connection.has_expired():
                closing.append(connection)
            else:
                kept.append(connection)
        surplus = sum(1 for c in kept if c.is_idle()) - self._max_keepalive_connections
        if surplus > 0:  # close the oldest idle connections beyond the keep-alive cap
            for connection in kept:
                if surplus and connection.is_idle():
                    closing.append(connection)
                    surplus -= 1
            kept = [c for c in kept if c not in closing]
        self._connections = kept

        for pool_request in [r for r in self._requests if r.is_queued()]:
            origin = pool_request.request.url.origin
            reusable = next(
                (c for c in self._connections if c.can_handle_request(origin) and c.is_available()),
                None,
            )
            if reusable is not None:
                pool_request.assign_to_connection(reusable)
                continue
            if len(self._connections) >= self._max_connections:
                idle = next((c for c in self._connections if c.is_idle()), None)
                if idle is None:
                    continue  # stays queued until a connection frees up
                self._connections.remove(idle)
                closing.append(idle)
            connection = self.create_connection(origin)
            self._connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing


def pooled_transport(
    limits: httpx.Limits, ssl_context: ssl.SSLContext | None = None
) -> httpx.AsyncHTTPTransport:
    """httpx's own transport with :class:`LinearConnectionPool` on
    :class:`AsyncioNetworkBackend` as its pool. Certificates are verified as httpx does by
    default, unless ``ssl_context`` says otherwise."""
    transport = httpx.AsyncHTTPTransport(limits=limits)
    if hasattr(transport, "_pool"):  # a future httpx without it keeps its own pool
        transport._pool = LinearConnectionPool(
            ssl_context=ssl_context or httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncioNetworkBackend(),
        )
    return transport
