"""An httpx transport that sends over aiohttp: providers keep httpx's client API, and each
request costs a fraction of the CPU.

httpx's own transport (httpcore and h11) parses HTTP in pure Python and keeps its pool in
lists it scans for every request: on our 2-core machines that is 0.8 ms of CPU per request
one at a time, and 1.6 ms with 50 in flight. aiohttp parses in C (llhttp) and keys its pool
by origin: the same requests through this transport cost 0.3-0.5 ms. A gateway makes several
requests per message (the model's, the platform's), so this is most of what HTTP costs it.

Redirects, cookies, content decoding and auth stay httpx's, as do proxies from the
environment (httpx mounts its own transport for them); TLS is verified against certifi's
roots, as httpx does by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Literal, NoReturn

import httpx

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AiohttpTransport", "default_ssl_context", "expect_many_requests", "pooled_transport"]


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context (certifi's roots, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` as set when first asked), built once per process: loading the roots
    takes 20-40 ms, and every client a process opens would otherwise pay it again."""
    return httpx.create_ssl_context()


_MANY_REQUESTS = False


def expect_many_requests(many: bool = True) -> None:
    """Say that this process will make many requests for a long time (the gateway calls it
    as it starts): from then on :func:`pooled_transport` sends over aiohttp. Until then it
    is httpx's own transport, so a one-shot or a chat never imports aiohttp (~130 ms of a
    start-up), for the handful of requests it makes."""
    global _MANY_REQUESTS  # noqa: PLW0603 - one switch for the whole process, set at start
    _MANY_REQUESTS = many


def pooled_transport(
    limits: httpx.Limits,
    ssl_context: ssl.SSLContext | None = None,
    *,
    over: Literal["aiohttp", "httpx"] | None = None,
) -> httpx.AsyncBaseTransport:
    """A transport for requests over kept-alive connections: at most
    ``limits.max_connections`` open at once (the rest wait), each idle one closed after
    ``limits.keepalive_expiry`` seconds. Certificates are verified as httpx does by default,
    unless ``ssl_context`` says otherwise. ``over`` picks the HTTP engine; by default it is
    aiohttp once :func:`expect_many_requests` was called, else httpx's own."""
    context = ssl_context or default_ssl_context()
    if (over or ("aiohttp" if _MANY_REQUESTS else "httpx")) == "aiohttp":
        return AiohttpTransport(limits, context)
    return httpx.AsyncHTTPTransport(verify=context, limits=limits)


def _fail(exc: BaseException, request: httpx.Request) -> NoReturn:
    """Raise the httpx exception that says what went wrong, as httpx's own transport would.

    Messages never include the URL: some APIs (Telegram's) carry a secret in the path."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientResponseError):  # its str() includes the URL
        raise httpx.RemoteProtocolError(exc.message, request=request) from None
    message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    kind: type[httpx.TransportError]
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        kind = httpx.ProxyError
    elif isinstance(exc, aiohttp.ConnectionTimeoutError):
        kind = httpx.ConnectTimeout
    elif isinstance(exc, aiohttp.ClientConnectorError):
        kind = httpx.ConnectError
    elif isinstance(exc, TimeoutError):  # aiohttp's read timeouts are TimeoutErrors too
        kind = httpx.ReadTimeout
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        kind = httpx.RemoteProtocolError
    elif isinstance(exc, aiohttp.InvalidURL):
        kind = httpx.UnsupportedProtocol
    else:  # a payload cut short, a reset connection, anything else aiohttp raises
        kind = httpx.ReadError
    raise kind(message, request=request) from None


@contextlib.contextmanager
def _as_httpx(request: httpx.Request) -> Iterator[None]:
    import aiohttp

    try:
        yield
    except (TimeoutError, aiohttp.ClientError) as exc:
        _fail(exc, request)


class _Body(httpx.AsyncByteStream):
    """A response body as aiohttp receives it: each chunk as soon as it arrives."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx(self._request):
            async for chunk in self._response.content.iter_any():
                yield chunk

    async def aclose(self) -> None:
        # Read to the end, the connection goes back to the pool; cut short, it is closed.
        self._response.release()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Sends httpx requests through one ``aiohttp.ClientSession``, made on the event loop
    of the first request (like every asyncio connection pool, it belongs to that loop).
    ``limits.max_keepalive_connections`` has no equivalent: every connection is kept until
    it has been idle ``keepalive_expiry`` seconds."""

    def __init__(self, limits: httpx.Limits, ssl_context: ssl.SSLContext) -> None:
        self._limits = limits
        self._ssl = ssl_context
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            import aiohttp  # here, not at import: it takes longer to import than httpx

            connector = aiohttp.TCPConnector(
                limit=self._limits.max_connections or 0,
                limit_per_host=0,
                keepalive_timeout=self._limits.keepalive_expiry,
                ssl=self._ssl,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,  # httpx decodes, by the headers it asked with
                cookie_jar=aiohttp.DummyCookieJar(),  # httpx keeps the cookies
                trust_env=False,  # httpx routes environment proxies to its own transport
                timeout=aiohttp.ClientTimeout(total=None),
            )
            # Dropped without aclose (its loop ended first): close it quietly then, instead
            # of aiohttp warning about an unclosed session when it is collected.
            weakref.finalize(self, _abandon, self._session, asyncio.get_running_loop())
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        import aiohttp  # the first request imports it; from then on, a lookup
        import yarl

        timeout = request.extensions.get("timeout", {})
        body = await request.aread()
        with _as_httpx(request):
            response = await self._open().request(
                request.method,
                # As httpx encoded it: yarl would otherwise decode what need not be escaped
                # (Bedrock's "...-v1%3A0"), and a signature made over the path breaks.
                yarl.URL(str(request.url), encoded=True),
                headers=request.headers.multi_items(),
                data=body or None,
                allow_redirects=False,  # httpx follows them, if asked to
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    connect=timeout.get("pool"),
                    sock_connect=timeout.get("connect"),
                    sock_read=timeout.get("read"),
                ),
            )
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_Body(response, request),
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason.encode()}
            if response.reason
            else {"http_version": b"HTTP/1.1"},
        )

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def _abandon(session: aiohttp.ClientSession, loop: asyncio.AbstractEventLoop) -> None:
    """Close the session of a transport that was dropped without ``aclose``, on its loop."""
    if session.closed:
        return
    if not loop.is_closed() and not _running_here(loop):
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(_abandon, session, loop)
        return
    connector = session.connector
    session.detach()  # the session now counts as closed
    if connector is not None:
        # close() shuts the connections at once and returns what is left to wait for:
        # nothing once the loop has ended, else a task that runs on its own.
        steps = connector.close().__await__()
        with contextlib.suppress(StopIteration):
            steps.send(None)


def _running_here(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
