"""An aiohttp application served on loopback from a thread of its own, for the kit's fake
chat services that speak WebSocket as well as HTTP (Discord's gateway, Slack's Socket Mode).

The stdlib HTTP server the Telegram fake uses has no WebSocket; aiohttp has both, on one
port, and is what the official libraries' own clients are built on. Tests stay synchronous:
they call the server's methods from their thread, and :meth:`LoopbackApp.call` runs a
coroutine on the server's loop and waits for its result.

Importing this imports aiohttp (``hermes-sdk[http]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from aiohttp import web

__all__ = ["LoopbackApp"]

T = TypeVar("T")


class LoopbackApp:
    """Serve ``app`` on 127.0.0.1 (an ephemeral port) until :meth:`stop`."""

    def __init__(self, app: web.Application, name: str) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True, name=name)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the loopback server did not start within 30 s")
        if self._error is not None:
            raise self._error

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._open())
        except BaseException as exc:  # noqa: BLE001 - raised again by start() in the test
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self.loop.run_forever()

    async def _open(self) -> None:
        # No access log: a test's output shows only what went wrong.
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.base_events.Server)
        self.port = int(server.sockets[0].getsockname()[1])

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run ``coroutine`` on the server's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        if self._runner is not None:
            runner = self._runner
            with contextlib.suppress(Exception):  # stopping anyway
                self.call(runner.cleanup(), timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
