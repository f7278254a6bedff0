"""QQ's WebSocket gateway through qq-botpy's ``Client``, on an event loop and thread of its
own: botpy never cancels the connection tasks it starts, sets its loop's exception handler,
and reconnects forever, so a loop it owns alone is what can be stopped whole. Set for it,
none of its code changed:

- its access token comes from :class:`~.api.QQApi` (one cache, at the configured token
  URL; botpy's own fetch is a fixed URL and wants ``expires_in`` as a string);
- its REST base is the configured API (``Route``'s class attributes; one bot a process);
- its HTTP client and WebSocket are given a TLS context that verifies the server, where
  botpy's own is a bare ``SSLContext()`` that verifies nothing (an attacker between the
  gateway and QQ could otherwise take the bot's token and write its events);
- its WebSocket's close codes and frames are watched: a refusal only the user can fix
  (QQ closing with 4914 or 4915, disallowed intents, a token refused again and again) ends
  the run with :class:`PlatformNotConfigured`; a connection silent past its heartbeats ends
  it too, and the gateway starts the platform again."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from hermes_commons.library_logs import adopt
from hermes_commons.own_loop import cancel_all
from hermes_plugin_platform_qqbot.api import QQApi
from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["EVENTS", "GatewayClient", "load_sdk"]

log = logging.getLogger("hermes.qqbot")

EVENTS = (
    "c2c_message_create",
    "group_at_message_create",
    "at_message_create",
    "direct_message_create",
)
OnEvent = Callable[[str, Any], Coroutine[Any, Any, None]]
FATAL = {
    4914: "the bot is offline or may only be used in its sandbox (set sandbox: true)",
    4915: "QQ has banned the bot",
    4013: "the bot asked for events it may not have (intents)",
    4014: "the bot asked for events it may not have (intents)",
}
TOKEN_REFUSED = 4004
TOKEN_REFUSALS_BEFORE_GIVING_UP = 3
SILENT_SECONDS = 120.0
"""botpy beats every 30 s and QQ answers each: nothing heard this long is a dead link."""


async def load_sdk() -> None:
    """Import qq-botpy off the loop, taking back the handler its import puts on the root
    logger (``logging.basicConfig``): Hermes's log is its own."""
    import importlib

    root = logging.getLogger()
    before = list(root.handlers)
    await asyncio.to_thread(importlib.import_module, "botpy")
    for handler in list(root.handlers):
        if handler not in before:
            root.removeHandler(handler)


def _verifying_context() -> ssl.SSLContext:
    return ssl.create_default_context()


class GatewayClient:
    """One botpy client for the bot, run in a thread; :meth:`run` until cancelled."""

    def __init__(self, api: QQApi, on_event: OnEvent, on_ready: Callable[[str], None]) -> None:
        self.api = api
        self.on_event = on_event
        self.on_ready = on_ready
        self._loop: asyncio.AbstractEventLoop | None = None
        self._heard = time.monotonic()
        self._refusals = 0
        self._fatal: str | None = None

    async def run(self) -> None:
        gateway = asyncio.get_running_loop()
        started = threading.Event()
        ended: asyncio.Future[BaseException | None] = gateway.create_future()

        def finished(error: BaseException | None) -> None:
            gateway.call_soon_threadsafe(
                lambda: ended.done() or ended.set_result(error)  # type: ignore[func-returns-value]
            )

        thread = threading.Thread(
            target=self._serve, args=(gateway, started, finished), daemon=True, name="qqbot-gateway"
        )
        thread.start()
        try:
            await self._watch(ended)
        finally:
            await asyncio.to_thread(started.wait, 10)
            self._halt()
            await asyncio.to_thread(thread.join, 10)

    async def _watch(self, ended: asyncio.Future[BaseException | None]) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                error = await asyncio.wait_for(asyncio.shield(ended), 1.0)
                raise ConnectionError(f"QQ's gateway client stopped: {error}")
            if self._fatal is not None:
                raise PlatformNotConfigured(f"QQ closed the bot's connection: {self._fatal}")
            if time.monotonic() - self._heard > SILENT_SECONDS:
                raise ConnectionError(f"nothing from QQ's gateway for {SILENT_SECONDS:.0f} s")

    def _serve(
        self,
        gateway: asyncio.AbstractEventLoop,
        started: threading.Event,
        finished: Callable[[BaseException | None], None],
    ) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        error: BaseException | None = None
        client: Any = None
        try:
            client = self._client(gateway)
            started.set()
            settings = self.api.settings
            loop.run_until_complete(
                client.start(appid=settings.app_id, secret=settings.client_secret)
            )
        except RuntimeError as exc:
            if "stopped" not in str(exc):  # not the stop _halt asked for
                error = exc
        except BaseException as exc:  # noqa: BLE001 - handed to run(), which raises it
            error = exc
        finally:
            started.set()
            _wind_down(loop, client)
            finished(error)

    def _halt(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed meanwhile
                loop.call_soon_threadsafe(loop.stop)

    def _client(self, gateway: asyncio.AbstractEventLoop) -> Any:
        """The botpy client, made on its own loop (botpy reads the loop when made)."""
        import botpy
        from botpy import client as client_module
        from botpy import gateway as gateway_module
        from botpy import http, robot

        watcher = self
        api = self.api
        gateway_module.SSLContext = http.SSLContext = _verifying_context
        parts = urlsplit(api.settings.api_url)
        http.Route.SCHEME = parts.scheme
        http.Route.DOMAIN = http.Route.SANDBOX_DOMAIN = parts.netloc

        def on_gateway(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
            return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, gateway))

        class Token(robot.Token):  # type: ignore[misc]
            async def update_access_token(self) -> None:
                self.access_token, expires = await on_gateway(api.token())
                self.expires_in = int(expires)

        class Socket(gateway_module.BotWebSocket):  # type: ignore[misc]
            async def on_message(self, ws: Any, message: Any) -> None:
                watcher._heard = time.monotonic()
                await super().on_message(ws, message)

            async def on_closed(self, code: int, message: Any) -> None:
                watcher._closed(code, self._session["token"])
                await super().on_closed(code, message)

        client_module.BotWebSocket = Socket  # what botpy's client connects with

        class Client(botpy.Client):  # type: ignore[misc]
            async def start(self, appid: str, secret: str, ret_coro: bool = False) -> Any:
                token = Token(appid, secret)
                self.ret_coro = ret_coro
                await self._async_setup_hook()
                await self._bot_login(token)
                return await self._bot_init(token)

            async def on_ready(self) -> None:
                watcher._refusals = 0
                gateway.call_soon_threadsafe(watcher.on_ready, str(self.robot.id))

            async def on_error(self, event_method: str, *args: Any, **kwargs: Any) -> None:
                log.warning("qqbot: %s failed", event_method, exc_info=True)

        for event in EVENTS:

            async def handler(self: Any, message: Any, _event: str = event) -> None:
                watcher._heard = time.monotonic()
                await on_gateway(watcher.on_event(_event, message))

            setattr(Client, f"on_{event}", handler)
        intents = botpy.Intents(
            public_messages=True, public_guild_messages=True, direct_message=True
        )
        made = Client(intents=intents, bot_log=None, ext_handlers=False)
        adopt("botpy", "hermes.qqbot.sdk")  # after: the client clears botpy's handlers
        return made

    def _closed(self, code: int, token: Any) -> None:
        """A close of QQ's: one only the user can fix ends the run; a token refused is
        fetched anew (botpy would ask the cache for the same one)."""
        if code in FATAL:
            self._fatal = f"{code}: {FATAL[code]}"
        elif code == TOKEN_REFUSED:
            self._refusals += 1
            refused = str(getattr(token, "access_token", "") or "")
            self.api.forget(refused)
            if self._refusals >= TOKEN_REFUSALS_BEFORE_GIVING_UP:
                self._fatal = f"{code}: the bot's token was refused (check QQ_CLIENT_SECRET)"
        if code not in (1000, 1001):
            log.info("qqbot: QQ closed the connection (%s)", code)


def _wind_down(loop: asyncio.AbstractEventLoop, client: Any) -> None:
    """Cancel every task of botpy's loop (its connection, heartbeat and event tasks), and
    close its HTTP session."""
    cancel_all(loop)
    with contextlib.suppress(Exception):
        if client is not None:
            loop.run_until_complete(client.http.close())
        loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
