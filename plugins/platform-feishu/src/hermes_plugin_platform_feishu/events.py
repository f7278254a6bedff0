"""How Feishu's events reach the adapter: over the long connection, through lark-oapi's own
client and dispatcher (``lark.ws.Client`` in a thread of its own); or as HTTP callbacks,
checked here (the verification token, the signature, the encrypt key's AES, by the SDK's
own cipher) and handed to the adapter on the gateway's loop.

Over the long connection the SDK calls its handlers synchronously, on its one loop, and
acknowledges an event when the handler returns; they run the adapter's coroutine on the
gateway's loop and wait for it, so an event is acknowledged once its message is stored (a
failure answers 500, and Feishu delivers the event again), but never longer than Feishu's
3 seconds: the wait holds every other event up. lark-oapi takes seconds to import: it is
imported in a worker thread, never on the gateway's loop."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from hermes_commons.library_logs import adopt
from hermes_commons.own_loop import cancel_all
from hermes_plugin_platform_feishu.settings import FeishuSettings
from hermes_sdk.platform import PlatformNotConfigured

if TYPE_CHECKING:
    from lark_oapi import EventDispatcherHandler

__all__ = ["LongConnection", "Refused", "checked_callback", "dispatcher", "load_sdk"]

log = logging.getLogger("hermes.feishu")

OnEvent = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any] | None]]
HANDLER_WAIT_SECONDS = 2.5
"""How long the long connection's acknowledgement of an event waits for the adapter (its
message stored, a press answered): Feishu wants one within 3 seconds, and the SDK handles
nothing else meanwhile. A message whose files are still downloading past this is
acknowledged and handed over once they are in."""
DOWN_SECONDS = 180.0
"""A long connection down this long (the SDK's reconnecting gave up, or hangs) is ended,
and the gateway starts the platform again: a new client, its refusal reported."""


async def load_sdk() -> None:
    """Import lark-oapi off the loop (it loads every API's models: about 2 s)."""
    import importlib

    await asyncio.to_thread(importlib.import_module, "lark_oapi")
    adopt("Lark", "hermes.feishu.sdk")  # lark-oapi prints to stdout otherwise


def dispatcher(
    settings: FeishuSettings,
    loop: asyncio.AbstractEventLoop,
    on_message: OnEvent,
    on_press: OnEvent,
) -> EventDispatcherHandler:
    """lark-oapi's event dispatcher with Hermes's two handlers (after :func:`load_sdk`)."""
    import lark_oapi as lark
    from lark_oapi.event.callback.model.p2_card_action_trigger import (
        P2CardActionTrigger,
        P2CardActionTriggerResponse,
    )
    from lark_oapi.event.custom import CustomizedEvent

    def message(data: CustomizedEvent) -> None:
        done = asyncio.run_coroutine_threadsafe(on_message(dict(data.event or {})), loop)
        try:
            done.result(HANDLER_WAIT_SECONDS)  # raises: acknowledged as failed, sent again
        except FutureTimeout:
            log.info("feishu: a message is still being read; acknowledged meanwhile")

    def press(data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        event = json.loads(lark.JSON.marshal(data.event) or "{}")
        done = asyncio.run_coroutine_threadsafe(on_press(event), loop)
        return P2CardActionTriggerResponse(done.result(HANDLER_WAIT_SECONDS) or {})

    builder = lark.EventDispatcherHandler.builder(settings.encrypt_key, settings.verification_token)
    builder.register_p2_customized_event("im.message.receive_v1", message)
    builder.register_p2_card_action_trigger(press)
    return builder.build()


class Refused(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def checked_callback(
    body: bytes, headers: Mapping[str, str], settings: FeishuSettings
) -> tuple[str, dict[str, Any]]:
    """Check an HTTP callback as Feishu signs it: it decrypts with the encrypt key (the
    SDK's AES), carries the verification token, and (with an encrypt key) its
    ``X-Lark-Signature`` is the SHA-256 of timestamp, nonce, key and body. Returns the
    event's type and the event (decrypted); raises :class:`Refused` with the status to
    answer."""
    from lark_oapi.core.utils import AESCipher

    try:
        outer = json.loads(body)
    except ValueError:
        raise Refused(400, "the body is not JSON") from None
    if not isinstance(outer, dict):
        raise Refused(400, "the body is not an event")
    event: Any = outer
    if "encrypt" in outer:
        if not settings.encrypt_key:
            raise Refused(400, "the event is encrypted, and no FEISHU_ENCRYPT_KEY is set")
        try:
            event = json.loads(AESCipher(settings.encrypt_key).decrypt_str(str(outer["encrypt"])))
        except (ValueError, TypeError):
            raise Refused(400, "the event cannot be decrypted with FEISHU_ENCRYPT_KEY") from None
    elif settings.encrypt_key:  # Feishu encrypts every event once a key is set
        raise Refused(401, "the event is not encrypted, though an encrypt key is set")
    if not isinstance(event, dict):
        raise Refused(400, "the body is not an event")
    header = event.get("header")
    if not isinstance(header, dict):
        header = {}
    inner = event.get("event")
    if not isinstance(inner, dict):
        inner = {}
    kind = str(header.get("event_type") or event.get("type") or inner.get("type") or "")
    token = str(header.get("token") or event.get("token") or "")
    expected = settings.verification_token
    if expected and not hmac.compare_digest(token.encode(), expected.encode()):
        raise Refused(401, "the verification token is wrong")
    if settings.encrypt_key and kind != "url_verification":
        stamp = headers.get("X-Lark-Request-Timestamp", "")
        nonce = headers.get("X-Lark-Request-Nonce", "")
        signed = (stamp + nonce + settings.encrypt_key).encode() + body
        signature = headers.get("X-Lark-Signature", "")
        if not hmac.compare_digest(signature.encode(), hashlib.sha256(signed).hexdigest().encode()):
            raise Refused(401, "the signature is wrong")
    return kind, event


class LongConnection:
    """The SDK's long connection client, run on an event loop and thread of its own: its
    ``start()`` blocks for good, on a module-level loop, calling the handlers inline."""

    def __init__(self, settings: FeishuSettings, events: EventDispatcherHandler) -> None:
        self.settings = settings
        self.events = events
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._thread: threading.Thread | None = None

    async def run(self) -> None:
        """Until cancelled, or until Feishu refuses the app (:class:`PlatformNotConfigured`)."""
        gateway_loop = asyncio.get_running_loop()
        ended: asyncio.Future[BaseException | None] = gateway_loop.create_future()

        def finished(error: BaseException | None) -> None:
            gateway_loop.call_soon_threadsafe(
                lambda: ended.done() or ended.set_result(error)  # type: ignore[func-returns-value]
            )

        started = threading.Event()
        thread = threading.Thread(
            target=self._serve, args=(started, finished), daemon=True, name="feishu-connection"
        )
        self._thread = thread
        thread.start()
        try:
            error = await self._watched(ended)
        finally:
            await asyncio.to_thread(started.wait, 10)
            self._halt()
            await asyncio.to_thread(thread.join, 10)
        if error is not None:
            from lark_oapi.ws.const import EXCEED_CONN_LIMIT
            from lark_oapi.ws.exception import ClientException

            if isinstance(error, ClientException) and error.code != EXCEED_CONN_LIMIT:
                raise PlatformNotConfigured(
                    f"Feishu refused the app's long connection ({error}): check that the "
                    "app receives events over the long connection (Events & Callbacks) and "
                    "that FEISHU_APP_ID and FEISHU_APP_SECRET are its own"
                ) from None
            raise ConnectionError(f"the long connection failed: {error}")
        raise ConnectionError("the long connection ended")

    async def _watched(self, ended: asyncio.Future[BaseException | None]) -> BaseException | None:
        """What the thread ended with; a :class:`ConnectionError` once the connection has
        been down for :data:`DOWN_SECONDS` (the SDK reconnects inside a task of its own,
        which a refusal ends silently)."""
        down_since: float | None = None
        while True:
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(ended), 5.0)
            connected = self._client is not None and self._client._conn is not None
            now = time.monotonic()
            if connected:
                down_since = None
            elif down_since is None:
                down_since = now
            elif now - down_since > DOWN_SECONDS:
                raise ConnectionError(f"the long connection has been down for {DOWN_SECONDS:.0f} s")

    def _serve(
        self, started: threading.Event, finished: Callable[[BaseException | None], None]
    ) -> None:
        from lark_oapi.core.enum import LogLevel
        from lark_oapi.ws import client as ws_module

        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        ws_module.loop = loop  # the SDK schedules everything on this module global
        client = ws_module.Client(
            self.settings.app_id,
            self.settings.app_secret,
            log_level=LogLevel.WARNING,  # INFO logs the connection URL, which holds its ticket
            event_handler=self.events,
            domain=self.settings.base_url,
            # Feishu pushes group mentions over the long connection to clients tagged so
            # (hermes-agent's issue 50656).
            extra_ua_tags=["channel"],
        )
        self._loop, self._client = loop, client
        started.set()
        error: BaseException | None = None
        try:
            client.start()
        except RuntimeError as exc:
            if "stopped" not in str(exc):  # not the stop _halt asked for
                error = exc
        except BaseException as exc:  # noqa: BLE001 - handed to run(), which raises it
            error = exc
        finally:
            self._wind_down(loop, client)
            finished(error)

    def _halt(self) -> None:
        loop, client = self._loop, self._client
        if loop is None or loop.is_closed():
            return

        def halt() -> None:
            client._auto_reconnect = False
            loop.stop()

        with contextlib.suppress(RuntimeError):  # closed meanwhile
            loop.call_soon_threadsafe(halt)

    @staticmethod
    def _wind_down(loop: asyncio.AbstractEventLoop, client: Any) -> None:
        client._auto_reconnect = False
        cancel_all(loop)  # the receiving and pinging loops first: no reconnect, no noise
        connection = client._conn
        with contextlib.suppress(Exception):
            if connection is not None:
                loop.run_until_complete(asyncio.wait_for(connection.close(), 5))
        loop.close()
