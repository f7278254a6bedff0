"""hermes_commons.http_transport against a real HTTP/1.1 server on loopback (plain and TLS):
connections are reused, a connection the server closed is replaced, the connection cap holds,
idle connections expire, and failures are httpx's usual exceptions."""

from __future__ import annotations

import asyncio
import gc
import shutil
import ssl
import subprocess
import warnings
from pathlib import Path

import httpx
import pytest

from hermes_commons.http_transport import pooled_transport


class Server:
    """Answers every request with ``ok``; counts connections and how many are open at once."""

    def __init__(self, *, close_after_reply: bool = False, delay: float = 0.0) -> None:
        self.close_after_reply = close_after_reply
        self.delay = delay
        self.targets: list[bytes] = []
        """The request line's target of each request, as it arrived."""
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
                self.targets.append(head.split(b" ", 2)[1])
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
    transport = pooled_transport(limits or httpx.Limits(), over="aiohttp", **kwargs)
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


def test_the_connection_cap_queues_requests_and_idle_connections_expire():
    async def main(fake: Server) -> tuple[list[str], int, int]:
        server, url = await fake.start()
        limits = httpx.Limits(max_connections=3, keepalive_expiry=0.2)
        async with server, client(limits) as http:
            replies = await asyncio.gather(*(http.get(url) for _ in range(9)))
            kept = fake.open
            await asyncio.sleep(1.0)  # the pool looks for expired connections now and then
            return [r.text for r in replies], kept, fake.open

    fake = Server(delay=0.05)
    texts, kept, left = asyncio.run(main(fake))
    assert texts == ["ok"] * 9
    assert fake.most_open == 3 and kept == 3
    assert left == 0


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


def test_a_client_dropped_after_its_loop_ended_closes_without_a_warning(caplog):
    """A CLI runs one event loop per command; a client left open when it ends is closed
    quietly when collected, instead of aiohttp reporting an unclosed session."""

    async def main(fake: Server) -> str:
        server, url = await fake.start()
        async with server:
            http = client()
            return (await http.get(url)).text  # no aclose: its connection stays in the pool

    gc.collect()  # what earlier tests on this worker left is not this client's to answer for
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert asyncio.run(main(Server())) == "ok"
        gc.collect()
    assert not [w for w in caught if "nclosed" in str(w.message)]
    assert "nclosed" not in caplog.text


def test_a_reply_cut_short_is_a_read_error_and_no_reply_a_protocol_error():
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()
        writer.close()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async def main(handler) -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/secret-token/x"
        async with server, client() as http:
            await http.get(url)

    with pytest.raises(httpx.ReadError) as cut_short:
        asyncio.run(main(cut))
    with pytest.raises(httpx.RemoteProtocolError) as no_reply:
        asyncio.run(main(silent))
    for failure in (cut_short.value, no_reply.value):  # never the URL: it may hold a secret
        assert "secret-token" not in str(failure)


def test_httpx_carries_requests_until_the_process_expects_many():
    from hermes_commons import http_transport
    from hermes_commons.http_transport import AiohttpTransport, expect_many_requests

    before = http_transport._MANY_REQUESTS  # a gateway test earlier in this process sets it
    expect_many_requests(False)
    try:
        assert isinstance(pooled_transport(httpx.Limits()), httpx.AsyncHTTPTransport)
        expect_many_requests()
        assert isinstance(pooled_transport(httpx.Limits()), AiohttpTransport)
        assert isinstance(pooled_transport(httpx.Limits(), over="httpx"), httpx.AsyncHTTPTransport)
    finally:
        expect_many_requests(before)


def test_the_url_goes_as_httpx_encoded_it():
    """A signed request (AWS SigV4) is signed over its path as encoded: sent over aiohttp,
    an escape that need not be one (Bedrock's model ids, ``v1%3A0``) must stay escaped."""

    async def main(fake: Server) -> None:
        server, url = await fake.start()
        async with server, client() as http:
            await http.post(f"{url}model/anthropic.claude-v1%3A0/converse?a=b%2Fc", json={})

    fake = Server()
    asyncio.run(main(fake))
    assert fake.targets == [b"/model/anthropic.claude-v1%3A0/converse?a=b%2Fc"]
