"""Every connection a browser context opens passes the web tools' SSRF guard.

Each context is given a SOCKS5 proxy of its own on loopback (Playwright passes Chromium
``<-loopback>``, so loopback goes through it too). Chromium sends the proxy names, not
addresses, so the guard resolves each name, judges every address, and the connection goes
to the very address it judged: a name cannot rebind between the check and the connect.
Judging connections rather than intercepting requests (``page.route``) also covers what
routing misses: the later hops of a redirect, WebSockets, service workers, beacons.

Why by hand: Chromium needs only SOCKS5's CONNECT without authentication (RFC 1928: two
short messages each way, then a byte pipe); the Python SOCKS servers we found are general
forwarders with no place to judge and pin the address, so using one would mean this much
code around it and a dependency besides.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import struct
from collections.abc import Callable

from hermes_commons.ssrf import Refused, SsrfGuard, Unresolved

__all__ = ["GuardProxy"]

log = logging.getLogger(__name__)

_NO_AUTH, _NO_METHOD = 0x00, 0xFF
_CONNECT = 0x01
_SUCCEEDED, _NOT_ALLOWED, _UNREACHABLE, _BAD_COMMAND, _BAD_ADDRESS = 0x00, 0x02, 0x04, 0x07, 0x08
_CHUNK = 64 * 1024


class _Malformed(Exception):
    """A client that does not speak SOCKS5 as Chromium does."""


class GuardProxy:
    """A SOCKS5 listener for one browser context. ``refused(line, judged)`` is told each
    refusal in one line (the guard's reason); ``judged`` is False for a name that does not
    resolve, which is no judgement on the host. ``start()`` gives the proxy's URL."""

    def __init__(
        self,
        guard: SsrfGuard,
        refused: Callable[[str, str, bool], None],
        connect_timeout: float = 15.0,
    ) -> None:
        self._guard = guard
        self._refused = refused
        self._connect_timeout = connect_timeout
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connections = 0

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"socks5://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # start_server runs each client in a task of its own
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (_Malformed, asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            pass
        except asyncio.CancelledError:
            pass  # closed with its context; ending quietly spares asyncio's callback a raise
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        version, count = await reader.readexactly(2)
        methods = await reader.readexactly(count)
        if version != 5:
            raise _Malformed(f"SOCKS version {version}")
        if _NO_AUTH not in methods:
            writer.write(bytes([5, _NO_METHOD]))
            return
        writer.write(bytes([5, _NO_AUTH]))
        version, command, _reserved, kind = await reader.readexactly(4)
        host = await _read_host(reader, kind)
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if host is None:
            await _reply(writer, _BAD_ADDRESS)
            return
        if command != _CONNECT:
            await _reply(writer, _BAD_COMMAND)
            return
        try:
            addresses = await asyncio.to_thread(self._guard.addresses, host, port)
        except Refused as exc:
            self._refused(host, f"{exc} (port {port})", not isinstance(exc, Unresolved))
            await _reply(writer, _NOT_ALLOWED)
            return
        upstream = await self._connect(addresses, port)
        if upstream is None:
            await _reply(writer, _UNREACHABLE)
            return
        self.connections += 1
        await _reply(writer, _SUCCEEDED)
        up_reader, up_writer = upstream
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def _connect(
        self, addresses: list[str], port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to the first judged address that answers (never to a name: the
        name was resolved once, when it was judged)."""
        for address in addresses:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(address, port), self._connect_timeout
                )
            except (OSError, TimeoutError) as exc:
                log.debug("browser connection to %s:%s failed: %s", address, port, exc)
        return None


async def _read_host(reader: asyncio.StreamReader, kind: int) -> str | None:
    if kind == 0x01:
        return str(ipaddress.IPv4Address(await reader.readexactly(4)))
    if kind == 0x04:
        return str(ipaddress.IPv6Address(await reader.readexactly(16)))
    if kind == 0x03:
        (length,) = await reader.readexactly(1)
        name = await reader.readexactly(length)
        return name.decode("ascii", errors="replace")  # Chromium sends names punycoded
    return None


async def _reply(writer: asyncio.StreamWriter, code: int) -> None:
    writer.write(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
    await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes one way until the sender is done; then the other side is told (a half close
    where the transport has one, so a request's end does not cut its answer)."""
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        else:
            writer.close()
    except (ConnectionError, OSError):
        writer.close()
