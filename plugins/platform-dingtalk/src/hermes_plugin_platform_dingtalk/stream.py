"""Stream mode through DingTalk's official ``dingtalk-stream`` client, run on an event loop
and thread of its own: its ``start()`` loops for good, swallows cancellation, and makes
synchronous HTTP calls (opening a connection) on the loop that runs it.

Its handlers hand each callback to the adapter on the gateway's loop and wait for it
without blocking the client's loop (each frame is a task of its own there): a robot
message is acknowledged once stored; a card's press is answered with the press's result."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from hermes_commons.library_logs import adopt
from hermes_plugin_platform_dingtalk.settings import DingTalkSettings

__all__ = ["CARD_TOPIC", "ROBOT_TOPIC", "StreamConnection", "load_sdk"]

log = logging.getLogger("hermes.dingtalk")

ROBOT_TOPIC = "/v1.0/im/bot/messages/get"
CARD_TOPIC = "/v1.0/card/instances/callback"
OnCallback = Callable[[dict[str, Any]], Coroutine[Any, Any, Any]]
DOWN_SECONDS = 180.0
"""A stream down this long is ended, and the gateway starts the platform again (the
client itself retries forever, saying nothing but a log line)."""


async def load_sdk() -> None:
    import importlib

    adopt("dingtalk_stream", "hermes.dingtalk.sdk")  # before it makes its own handlers
    await asyncio.to_thread(importlib.import_module, "dingtalk_stream")


class StreamConnection:
    def __init__(
        self, settings: DingTalkSettings, on_message: OnCallback, on_card: OnCallback
    ) -> None:
        self.settings = settings
        self.on_message = on_message
        self.on_card = on_card
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None

    def _handlers(self, gateway: asyncio.AbstractEventLoop) -> tuple[Any, Any]:
        import dingtalk_stream
        from dingtalk_stream import AckMessage

        on_message, on_card = self.on_message, self.on_card

        class Robot(dingtalk_stream.CallbackHandler):  # type: ignore[misc]
            async def process(self, callback: Any) -> tuple[int, str]:
                done = asyncio.run_coroutine_threadsafe(on_message(dict(callback.data)), gateway)
                await asyncio.wrap_future(done)  # raises: not acknowledged as OK
                return AckMessage.STATUS_OK, "OK"

        class Card(dingtalk_stream.CallbackHandler):  # type: ignore[misc]
            async def process(self, callback: Any) -> tuple[int, Any]:
                done = asyncio.run_coroutine_threadsafe(on_card(dict(callback.data)), gateway)
                return AckMessage.STATUS_OK, await asyncio.wrap_future(done)

        return Robot(), Card()

    async def run(self) -> None:
        """Until cancelled; :class:`ConnectionError` when the stream stays down."""
        gateway = asyncio.get_running_loop()
        robot, card = self._handlers(gateway)
        started = threading.Event()
        thread = threading.Thread(
            target=self._serve, args=(started, robot, card), daemon=True, name="dingtalk-stream"
        )
        thread.start()
        try:
            await asyncio.to_thread(started.wait, 10)
            await self._watch()
        finally:
            self._halt()
            await asyncio.to_thread(thread.join, 10)

    async def _watch(self) -> None:
        down_since: float | None = None
        while True:
            await asyncio.sleep(5.0)
            socket = getattr(self._client, "websocket", None)
            up = socket is not None and _open(socket)
            now = time.monotonic()
            if up:
                down_since = None
            elif down_since is None:
                down_since = now
            elif now - down_since > DOWN_SECONDS:
                raise ConnectionError(f"the stream has been down for {DOWN_SECONDS:.0f} s")

    def _serve(self, started: threading.Event, robot: Any, card: Any) -> None:
        import dingtalk_stream

        # The client opens connections at a class attribute computed at import from
        # DINGTALK_OPENAPI_ENDPOINT: set for the configured API (one app per process).
        opening = f"{self.settings.api_url}/v1.0/gateway/connections/open"
        dingtalk_stream.DingTalkStreamClient.OPEN_CONNECTION_API = opening
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        credential = dingtalk_stream.Credential(
            self.settings.client_id, self.settings.client_secret
        )
        client = dingtalk_stream.DingTalkStreamClient(
            credential, logger=logging.getLogger("dingtalk_stream.client")
        )
        client.register_callback_handler(ROBOT_TOPIC, robot)
        client.register_callback_handler(CARD_TOPIC, card)
        self._loop, self._client = loop, client
        started.set()
        try:
            loop.run_until_complete(client.start())
        except RuntimeError as exc:
            if "stopped" not in str(exc):
                log.warning("dingtalk: the stream client stopped: %s", exc)
        finally:
            _wind_down(loop, client)

    def _halt(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            loop.call_soon_threadsafe(loop.stop)


def _open(socket: Any) -> bool:
    from websockets.protocol import State

    return bool(socket.state is State.OPEN)


def _wind_down(loop: asyncio.AbstractEventLoop, client: Any) -> None:
    """Cancel the client's tasks; its ``start()`` catches one cancellation (and sleeps),
    so each is cancelled until it is done."""
    for _ in range(5):
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        if not tasks:
            break
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait(tasks, timeout=0.5))
    socket = getattr(client, "websocket", None)
    with contextlib.suppress(Exception):
        if socket is not None:
            loop.run_until_complete(asyncio.wait_for(socket.close(), 5))
    loop.close()
