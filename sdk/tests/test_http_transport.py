"""hermes_sdk.http_transport against a real HTTP/1.1 server on loopback (plain and TLS):
connections are reused, a connection the server closed is replaced, the keep-alive and
connection caps hold, and failures are httpx's usual exceptions."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from hermes_sdk.http_transport import pooled_transport


class Server:
    """Answers every request with ``ok``; counts connections and how many are open at once."""

    def __init__(self, *, close_after_reply: bool = False, delay: float = 0.0) -> None:
        self.close_after_reply = close_after_reply
        self.delay = delay
        self.connections = 0
        self.open = 0
        self.most_open = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                await asyncio.sleep(self.delay)
                # No "Connection: close": a server that just hangs up on an idle connection.
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
                if self.close_after_reply:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open -= 1
            writer.close()

    async def start(self, ssl_context: ssl.SSLContext | None = None) -> tuple[asyncio.Server, str]:
        server = await asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=ssl_context)
        port = server.sockets[0].getsockname()[1]
        return server, f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}/"


def client(limits: httpx.Limits | None = None, **kwargs) -> httpx.AsyncClient:
    transport = pooled_transport(limits or httpx.Limits(), **kwargs)
    return httpx.AsyncClient(transport=transport, timeout=5)


def test_sequential_requests_share_one_connection():
    async def main(fake: Server) -> list[str]:
        server, url = await fake.start()
        async with server, client() as http:
            return [(await http.post(url, json={"n": n})).text for n in range(20)]

    fake = Server()
    assert asyncio.run(main(fake)) == ["ok"] * 20
    assert fake.connections == 1


def test_a_connection_the_server_closed_while_idle_is_replaced():
    async def main(fake: Server) -> list[str]:
        server, url = await fake.start()
        async with server, client() as http:
            first = await http.get(url)
            await asyncio.sleep(0.1)  # the server hangs up on the idle connection
            second = await http.get(url)
            return [first.text, second.text]

    fake = Server(close_after_reply=True)
    assert asyncio.run(main(fake)) == ["ok", "ok"]
    assert fake.connections == 2


def test_the_connection_cap_queues_requests_and_the_keepalive_cap_closes_idle_ones():
    async def main(fake: Server) -> tuple[list[str], int]:
        server, url = await fake.start()
        limits = httpx.Limits(max_connections=3, max_keepalive_connections=1)
        async with server:
            http = client(limits)
            try:
                replies = await asyncio.gather(*(http.get(url) for _ in range(9)))
                await asyncio.sleep(0.1)
                pool = http._transport._pool  # type: ignore[attr-defined]
                kept = len(pool.connections)
            finally:
                await http.aclose()
        return [r.text for r in replies], kept

    fake = Server(delay=0.05)
    texts, kept = asyncio.run(main(fake))
    assert texts == ["ok"] * 9
    assert fake.most_open <= 3
    assert kept == 1


def test_failures_are_httpx_exceptions():
    async def refused() -> None:
        async with client() as http:
            await http.get("http://127.0.0.1:9/")  # discard port: nothing listens

    with pytest.raises(httpx.ConnectError):
        asyncio.run(refused())

    async def slow(fake: Server) -> None:
        server, url = await fake.start()
        async with server, client() as http:
            await http.get(url, timeout=httpx.Timeout(5, read=0.1))

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(slow(Server(delay=1.0)))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")
def test_tls_is_verified_and_works(tmp_path: Path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))

    async def main(fake: Server, context: ssl.SSLContext | None) -> list[str]:
        server, url = await fake.start(server_context)
        async with server, client(ssl_context=context) as http:
            return [(await http.get(url)).text for _ in range(3)]

    fake = Server()
    assert asyncio.run(main(fake, trusting)) == ["ok"] * 3
    assert fake.connections == 1
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(main(Server(), None))  # the default trust store does not know it
