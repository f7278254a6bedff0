"""One MCP server, kept usable: connected within its ``connect_timeout``, each call within
its ``timeout`` (a call that runs late fails alone and the server is told it was cancelled),
reconnected after it died (backoff from 1 s doubling to 60 s), and given a rest after three
failures in a row (a circuit breaker: 60 s open, then one probe call)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from hermes_commons.redact import redact_text
from hermes_plugin_mcp.offers import Offer, OfferMemory
from hermes_plugin_mcp.results import result_text
from hermes_plugin_mcp.settings import ServerSettings, expand, server_environment

__all__ = ["BREAKER_FAILURES", "BREAKER_SECONDS", "ConnectError", "ServerConnection", "ToolFailed"]

log = logging.getLogger("hermes.mcp")

BREAKER_FAILURES = 3
BREAKER_SECONDS = 60.0
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0
_CONNECTION_CLOSED = -32000


class ConnectError(Exception):
    """The server could not be started or reached; the message says why, in one line."""


class ToolFailed(Exception):
    """A call failed; the message is what the model reads."""


def one_line(exc: BaseException) -> str:
    """The innermost useful message of ``exc`` (task groups wrap what failed), redacted: it
    is also printed by ``hermes mcp test``, which the kernel's redaction does not see."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return redact_text(text)[:300]


class ServerConnection:
    def __init__(
        self,
        name: str,
        settings: ServerSettings,
        secrets: Mapping[str, str],
        cwd: str,
        log_folder: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        memory: OfferMemory | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self.secrets = secrets
        self.cwd = cwd
        self.log_folder = log_folder
        self.clock = clock
        self.memory = memory
        self.client: Any = None
        self.offer: Offer | None = None
        """What the server offers: as listed when it first connected, or remembered from an
        earlier run (then it is not started until a call needs it)."""
        self.error: str | None = None
        """Why the server is down, when it is."""
        self.failures = 0
        self.open_until = 0.0
        self.retry_at = 0.0
        self.backoff = BACKOFF_FIRST
        self.progress: Callable[[str, str], None] | None = None
        """Told (tool, message) for each progress notification of a call; unset, the
        chat's live area shows it beside the running call."""
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._errlog: TextIO | None = None
        self._reconnecting: asyncio.Lock | None = None

    # --- connecting --------------------------------------------------------------------------

    async def connect(self) -> None:
        """Start (or reach) the server and list its tools; ConnectError when it does not
        answer within ``connect_timeout``."""
        await self._stop()
        self._closing = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._serve(ready))
        seconds = self.settings.connect_timeout
        try:
            async with asyncio.timeout(seconds):
                await asyncio.shield(ready)
        except TimeoutError:
            await self._stop()
            self.error = f"no answer within {seconds:.0f} s (connect_timeout)"
            self._forget()
            raise ConnectError(self.error) from None
        except ConnectError as exc:
            await self._stop()
            self.error = str(exc)
            self._forget()
            raise
        self.error = None

    def _forget(self) -> None:
        """A server that failed to start is not listed from memory at the next start: it is
        started then, so its failure is said up front."""
        if self.memory is not None:
            self.memory.forget(self.name)

    def _transport(self) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        settings = self.settings
        if settings.command is not None:
            parameters = StdioServerParameters(
                command=settings.command,
                args=[expand(arg, self.secrets) for arg in settings.args],
                env=server_environment(settings, self.secrets),
                cwd=settings.cwd or self.cwd,
            )
            return stdio_client(parameters, errlog=self._server_log())
        assert settings.url is not None
        headers = {key: expand(value, self.secrets) for key, value in settings.headers.items()}
        if settings.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(settings.url, headers=headers, timeout=settings.connect_timeout)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        return streamable_http_client(settings.url, http_client=create_mcp_http_client(headers))

    def _server_log(self) -> TextIO:
        """Where a stdio server's stderr goes: HERMES_HOME/logs/mcp-NAME.log, not the screen."""
        if self._errlog is None:
            import os

            if self.log_folder is not None:
                self.log_folder.mkdir(parents=True, exist_ok=True)
                self._errlog = (self.log_folder / f"mcp-{self.name}.log").open("a")
            else:
                self._errlog = open(os.devnull, "w")  # noqa: SIM115 - closed in aclose
        return self._errlog

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """Hold the connection open (its context must be left by the task that entered it)."""
        from mcp import Client
        from mcp_types import Implementation

        try:
            async with Client(
                self._transport(),
                client_info=Implementation(name="hermes", version="0.1"),
                cache=None,
            ) as client:
                listed: list[Any] = []
                cursor: str | None = None
                while True:  # every page of the listing
                    page = await client.list_tools(cursor=cursor)
                    listed += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self.offer = Offer.of(listed, client.server_capabilities)
                if self.memory is not None:
                    self.memory.remember(self.name, self.settings, self.offer)
                self.client = client
                if not ready.done():
                    ready.set_result(None)
                await self._closing.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - a server that fails is reported, not raised
            reason = one_line(exc)
            if not ready.done():
                ready.set_exception(ConnectError(reason))
            else:
                self.error = f"it stopped: {reason}"
                log.warning("MCP server %s stopped: %s", self.name, reason)
        finally:
            self.client = None

    async def _stop(self) -> None:
        task, self._task = self._task, None
        self.client = None
        if task is None:
            return
        self._closing.set()
        try:
            async with asyncio.timeout(5):
                await asyncio.shield(task)
        except (TimeoutError, Exception):  # noqa: BLE001 - it is being left anyway
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def aclose(self) -> None:
        await self._stop()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # --- calling --------------------------------------------------------------------------

    def _fail(self) -> None:
        self.failures += 1
        if self.failures >= BREAKER_FAILURES:
            self.open_until = self.clock() + BREAKER_SECONDS

    async def _usable(self) -> Any:
        """The connected client: reconnected (with backoff) when the server died."""
        now = self.clock()
        if now < self.open_until:
            raise ToolFailed(
                f"MCP server {self.name!r} failed {self.failures} times in a row; it is tried "
                f"again in {self.open_until - now:.0f} s. Tell the user; do not improvise it."
            )
        if self.client is not None:
            return self.client
        if self._reconnecting is None:
            self._reconnecting = asyncio.Lock()
        async with self._reconnecting:
            # Another task may have connected while this one waited for the lock; mypy keeps
            # the narrowing from before the wait, so it takes this branch for unreachable.
            if self.client is not None:
                return self.client  # type: ignore[unreachable]
            if now < self.retry_at:
                raise ToolFailed(
                    f"MCP server {self.name!r} is down ({self.error}); it is reconnected in "
                    f"{self.retry_at - now:.0f} s"
                )
            if self._task is None:  # not running (remembered, or stopped): say why it waits
                from hermes_sdk.tooling import progress_reporter

                progress_reporter()(f"starting MCP server {self.name}")
            try:
                await self.connect()
            except ConnectError as exc:
                self._fail()
                self.retry_at = self.clock() + self.backoff
                self.backoff = min(self.backoff * 2, BACKOFF_MAX)
                raise ToolFailed(f"MCP server {self.name!r} could not be reached: {exc}") from None
            self.backoff = BACKOFF_FIRST
            log.info("MCP server %s reconnected", self.name)
            return self.client

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """The tool's result as text; ToolFailed (what the model reads) when it fails."""
        from mcp.shared.exceptions import MCPError

        from hermes_sdk.tooling import progress_reporter

        client = await self._usable()
        seconds = self.settings.timeout
        # Progress arrives on the SDK's own reader task: report to this call's chat line.
        shown = progress_reporter()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            share = f"{done:g}/{total:g}" if total else f"{done:g}"
            line = f"{message or 'working'} ({share})"
            if self.progress is not None:
                self.progress(tool, line)
            else:
                shown(line)

        try:
            async with asyncio.timeout(seconds):
                result = await client.call_tool(tool, dict(arguments), progress_callback=progress)
        except TimeoutError:
            self._fail()  # cancelling the request told the server (notifications/cancelled)
            raise ToolFailed(
                f"timed out after {seconds:.0f} s (mcp_servers.{self.name}.timeout); the call "
                "was cancelled, its effect is unknown"
            ) from None
        except MCPError as exc:
            if exc.code == _CONNECTION_CLOSED:
                self._fail()
                await self._stop()
                self.error = f"the connection closed: {exc.message}"
                raise ToolFailed(
                    f"MCP server {self.name!r} stopped during the call ({self.error}); its effect "
                    "is unknown. It is restarted on the next call."
                ) from None
            raise ToolFailed(f"MCP error {exc.code}: {exc.message}") from None
        except (OSError, EOFError, BaseExceptionGroup) as exc:
            self._fail()
            await self._stop()
            self.error = one_line(exc)
            raise ToolFailed(
                f"MCP server {self.name!r} failed during the call ({self.error}); its effect is "
                "unknown. It is restarted on the next call."
            ) from None
        self.failures = 0
        text = result_text(result)
        if result.is_error:
            raise ToolFailed(text)  # the kernel redacts every result the model reads
        return text

    async def request(self, method: str, **arguments: Any) -> Any:
        """list_resources, read_resource, list_prompts or get_prompt, under the same rules."""
        from mcp.shared.exceptions import MCPError

        client = await self._usable()
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await getattr(client, method)(**arguments)
        except TimeoutError:
            self._fail()
            raise ToolFailed(f"timed out after {self.settings.timeout:.0f} s") from None
        except MCPError as exc:
            if exc.code == _CONNECTION_CLOSED:
                self._fail()
                await self._stop()
            raise ToolFailed(f"MCP error {exc.code}: {exc.message}") from None
