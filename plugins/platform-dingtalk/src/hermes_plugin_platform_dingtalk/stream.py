"""Stream mode through DingTalk's official ``dingtalk-stream`` client, run on an event loop
and thread of its own: its ``start()`` loops for good, swallows cancellation, and makes
synchronous HTTP calls (opening a connection) on the loop that runs it.

Its handler hands each robot message to the adapter on the gateway's loop and waits for it
without blocking the client's loop (each frame is a task of its own there): it is
acknowledged once stored. DingTalk does not push a robot message again, so one that could
not be taken is acknowledged as failed and logged with its id."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from hermes_commons.library_logs import adopt
from hermes_commons.own_loop import cancel_all
from hermes_plugin_platform_dingtalk.settings import DingTalkSettings

__all__ = ["ROBOT_TOPIC", "StreamConnection", "load_sdk"]

log = logging.getLogger("hermes.dingtalk")

ROBOT_TOPIC = "/v1.0/im/bot/messages/get"
OnCallback = Callable[[dict[str, Any]], Coroutine[Any, Any, Any]]
DOWN_SECONDS = 180.0
"""A stream down this long is ended, and the gateway starts the platform again (the
client itself retries forever, saying nothing but a log line)."""


class _Quieter(logging.Filter):
    """The client's chatter that is no news: every ping DingTalk sends is an "unknown
    message topic" warning, and a stop it was asked for an error."""

    stopping = False

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith("unknown message topic, topic=ping"):
            return False
        return not (self.stopping and message.startswith("[start] network exception"))


_QUIETER = _Quieter()


async def load_sdk() -> None:
    import importlib

    adopt("dingtalk_stream", "hermes.dingtalk.sdk")  # before it makes its own handlers
    for name in ("dingtalk_stream.client", "dingtalk_stream.handler"):
        if _QUIETER not in logging.getLogger(name).filters:
            logging.getLogger(name).addFilter(_QUIETER)
    await asyncio.to_thread(importlib.import_module, "dingtalk_stream")


class StreamConnection:
    def __init__(self, settings: DingTalkSettings, on_message: OnCallback) -> None:
        self.settings = settings
        self.on_message = on_message
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None

    def _handler(self, gateway: asyncio.AbstractEventLoop) -> Any:
        import dingtalk_stream
        from dingtalk_stream import AckMessage

        on_message = self.on_message

        class Robot(dingtalk_stream.CallbackHandler):  # type: ignore[misc]
            async def process(self, callback: Any) -> tuple[int, str]:
                data = dict(callback.data)
                done = asyncio.run_coroutine_threadsafe(on_message(data), gateway)
                try:
                    await asyncio.wrap_future(done)
                except Exception as exc:
                    log.warning(
                        "dingtalk: message %s could not be taken (%s)",
                        data.get("msgId"),
                        exc,
                        exc_info=True,
                    )
                    return AckMessage.STATUS_SYSTEM_EXCEPTION, "not stored"
                return AckMessage.STATUS_OK, "OK"

        return Robot()

    async def run(self) -> None:
        """Until cancelled; :class:`ConnectionError` when the stream stays down or the
        client's thread ends."""
        gateway = asyncio.get_running_loop()
        robot = self._handler(gateway)
        started = threading.Event()
        thread = threading.Thread(
            target=self._serve, args=(started, robot), daemon=True, name="dingtalk-stream"
        )
        thread.start()
        _QUIETER.stopping = False
        try:
            await asyncio.to_thread(started.wait, 10)
            await self._watch(thread)
        finally:
            await asyncio.to_thread(started.wait, 10)  # cancelled before it began: still stop
            _QUIETER.stopping = True
            self._halt()
            # The client opens connections with a synchronous call (no timeout) on its loop:
            # a stop waits for it at most this long, and the daemon thread ends after.
            await asyncio.to_thread(thread.join, 10)

    async def _watch(self, thread: threading.Thread) -> None:
        down_since: float | None = None
        while True:
            await asyncio.sleep(1.0)
            if not thread.is_alive():
                raise ConnectionError("the stream client stopped")
            socket = getattr(self._client, "websocket", None)
            up = socket is not None and _open(socket)
            now = time.monotonic()
            if up:
                down_since = None
            elif down_since is None:
                down_since = now
            elif now - down_since > DOWN_SECONDS:
                raise ConnectionError(f"the stream has been down for {DOWN_SECONDS:.0f} s")

    def _serve(self, started: threading.Event, robot: Any) -> None:
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
    cancel_all(loop, wait=0.5)
    socket = getattr(client, "websocket", None)
    with contextlib.suppress(Exception):
        if socket is not None:
            loop.run_until_complete(asyncio.wait_for(socket.close(), 5))
    loop.close()
