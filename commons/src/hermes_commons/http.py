"""httpx plumbing every HTTP model provider needs: a client per event loop, and transport
failures turned into classified :class:`~hermes_sdk.models.ProviderError` s.

Importing this module imports httpx: only providers that depend on httpx use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx

from hermes_commons.http_transport import pooled_transport
from hermes_commons.sse import is_event_stream
from hermes_sdk.models import (
    ErrorKind,
    ProviderError,
    ProviderSettings,
    classify_http_error,
    parse_retry_after,
)

__all__ = [
    "JSON_HEADERS",
    "LoopClient",
    "connect_failure",
    "cut_short",
    "event_stream",
    "raise_for_status",
    "transport_errors",
]

JSON_HEADERS = {"Content-Type": "application/json"}
SSE_HEADERS = {**JSON_HEADERS, "Accept": "text/event-stream", "Cache-Control": "no-store"}


class LoopClient:
    """One ``httpx.AsyncClient`` per event loop: connections belong to the loop that opened
    them, and a provider may serve several loops (a CLI's ``asyncio.run`` per command)."""

    def __init__(self, settings: ProviderSettings, auth_headers: Mapping[str, str]) -> None:
        self._settings = settings
        self._headers = {**settings.headers, **auth_headers}
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            timeout = self._settings.timeout_seconds
            self._client = httpx.AsyncClient(
                base_url=self._settings.base_url.rstrip("/"),
                headers=self._headers,
                timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
                # Keep every connection alive: past the keep-alive cap idle ones are closed,
                # and each concurrent turn then pays for a new connection.
                transport=pooled_transport(
                    httpx.Limits(max_connections=256, max_keepalive_connections=256)
                ),
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None


_NO_NAME = ("name or service not known", "nodename nor servname", "name resolution", "getaddrinfo")
_REFUSED = ("connection refused", "connect call failed", "all connection attempts failed")


def connect_failure(where: str, exc: BaseException) -> str:
    """Why a connection to ``where`` failed, in words a user acts on: the name does not
    resolve (no network, or a mistyped host), nothing listens there, or what the system
    said."""
    said = " ".join(str(exc).split()) or type(exc).__name__
    lowered = said.lower()
    if any(words in lowered for words in _NO_NAME):
        return f"cannot find the host of {where} (no network, or a mistyped host name)"
    if any(words in lowered for words in _REFUSED):
        return f"nothing answers at {where} (is the server running, on that port?)"
    return f"cannot connect to {where}: {said}"


def cut_short(settings: ProviderSettings) -> ProviderError:
    """A stream that ended before its reply was complete: a dropped connection (retried),
    never a short answer."""
    return ProviderError(
        ErrorKind.CONNECTION,
        f"the stream from {settings.base_url} ended before the reply was complete",
    )


@asynccontextmanager
async def transport_errors(settings: ProviderSettings) -> AsyncIterator[None]:
    """Turn what httpx raises inside the block into one-line ProviderErrors."""
    where = settings.base_url
    try:
        yield
    except httpx.TimeoutException:
        raise ProviderError(
            ErrorKind.TIMEOUT, f"no answer from {where} within {settings.timeout_seconds:g} s"
        ) from None
    except httpx.ConnectError as exc:
        raise ProviderError(ErrorKind.CONNECTION, connect_failure(where, exc)) from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
        raise ProviderError(
            ErrorKind.CONNECTION, f"the connection to {where} dropped mid-reply ({exc})"
        ) from None
    except httpx.HTTPError as exc:  # anything else httpx can raise
        raise ProviderError(ErrorKind.CONNECTION, f"request to {where} failed: {exc}") from None


async def raise_for_status(response: httpx.Response) -> None:
    """A classified ProviderError for an HTTP error status, Retry-After included."""
    if response.status_code >= 400:
        body = (await response.aread()).decode("utf-8", "replace")
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        raise classify_http_error(response.status_code, body, retry_after)


@asynccontextmanager
async def event_stream(
    client: httpx.AsyncClient,
    path: str,
    body: bytes,
    settings: ProviderSettings,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[httpx.Response]:
    """POST a JSON ``body`` that asks for a streamed reply; the response, once its status
    and content type say it is an event stream (read it with ``aiter_lines`` and
    :class:`~hermes_commons.sse.SSEDecoder`). ``headers`` adds per-request ones (a token
    that is refreshed)."""
    sent = {**SSE_HEADERS, **headers} if headers else SSE_HEADERS
    async with client.stream("POST", path, content=body, headers=sent) as response:
        await raise_for_status(response)
        if not is_event_stream(response.headers.get("content-type")):
            raise ProviderError(
                ErrorKind.BAD_RESPONSE,
                f"{settings.base_url} answered a streamed request with something that is not "
                "an event stream",
            )
        yield response
