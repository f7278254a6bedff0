"""QQ's WebSocket gateway through qq-botpy's ``Client``, on the gateway's own loop (botpy is
asyncio through and through). Three things are set for it, none of its code changed:

- its access token comes from :class:`~.api.QQApi` (one cache, at the configured token
  URL; botpy's own fetch is a fixed URL and wants ``expires_in`` as a string);
- its REST base is the configured API (``Route``'s class attributes; one bot a process);
- its HTTP client and WebSocket are given a TLS context that verifies the server, where
  botpy's own is a bare ``SSLContext()`` that verifies nothing (an attacker between the
  gateway and QQ could otherwise take the bot's token and write its events)."""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from hermes_commons.library_logs import adopt
from hermes_plugin_platform_qqbot.api import QQApi

__all__ = ["EVENTS", "make_client"]

EVENTS = (
    "c2c_message_create",
    "group_at_message_create",
    "at_message_create",
    "direct_message_create",
)
OnEvent = Callable[[str, Any], Coroutine[Any, Any, None]]


def _verifying_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def make_client(api: QQApi, on_event: OnEvent, on_ready: Callable[[str], None]) -> Any:
    """A botpy client (made on a running loop) whose message events go to ``on_event``."""
    import botpy
    from botpy import gateway, http, robot

    gateway.SSLContext = http.SSLContext = _verifying_context  # what it connects with
    parts = urlsplit(api.settings.api_url)
    http.Route.SCHEME = parts.scheme
    http.Route.DOMAIN = http.Route.SANDBOX_DOMAIN = parts.netloc

    class Token(robot.Token):  # type: ignore[misc]
        async def update_access_token(self) -> None:
            self.access_token, expires = await api.token()
            self.expires_in = int(expires)

    class Client(botpy.Client):  # type: ignore[misc]
        async def start(self, appid: str, secret: str, ret_coro: bool = False) -> Any:
            token = Token(appid, secret)
            self.ret_coro = ret_coro
            await self._async_setup_hook()
            await self._bot_login(token)
            return await self._bot_init(token)

        async def on_ready(self) -> None:
            on_ready(str(self.robot.id))

        async def on_error(self, event_method: str, *args: Any, **kwargs: Any) -> None:
            logging.getLogger("hermes.qqbot").warning(
                "qqbot: %s failed", event_method, exc_info=True
            )

    for event in EVENTS:

        async def handler(self: Any, message: Any, _event: str = event) -> None:
            await on_event(_event, message)

        setattr(Client, f"on_{event}", handler)
    intents = botpy.Intents(public_messages=True, public_guild_messages=True, direct_message=True)
    client = Client(intents=intents, bot_log=None, ext_handlers=False)
    adopt("botpy", "hermes.qqbot.sdk")  # after: the client clears botpy's handlers
    return client
