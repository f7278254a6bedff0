"""How Feishu's events reach the adapter, through lark-oapi's own dispatcher: over the long
connection (the SDK's ``lark.ws.Client``, in a thread of its own) or as HTTP callbacks
(checked here first: the verification token, the signature, the encrypt key's AES).

The SDK calls its handlers synchronously; they run the adapter's coroutine on the
gateway's loop and wait for it, so an event is acknowledged once its message is stored (a
failure answers 500, and Feishu delivers the event again). lark-oapi takes seconds to
import: it is imported in a worker thread, never on the gateway's loop."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from hermes_plugin_platform_feishu.settings import FeishuSettings
from hermes_sdk.platform import PlatformNotConfigured

if TYPE_CHECKING:
    from lark_oapi import EventDispatcherHandler

__all__ = ["LongConnection", "Refused", "checked_callback", "dispatcher", "load_sdk"]

log = logging.getLogger("hermes.feishu")

OnEvent = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any] | None]]
STORE_WAIT_SECONDS = 8.0
"""How long an event's acknowledgement waits for its message to be stored. Feishu sends
an event again when it is not acknowledged within seconds; a message whose files are still
downloading past this is acknowledged and handed over when they are in."""
PRESS_WAIT_SECONDS = 8.0


async def load_sdk() -> None:
    """Import lark-oapi off the loop (it loads every API's models: about 2 s)."""
    import importlib

    await asyncio.to_thread(importlib.import_module, "lark_oapi")
    sdk_log = logging.getLogger("Lark")
    for handler in list(sdk_log.handlers):  # its own stdout handler: the gateway's log only
        sdk_log.removeHandler(handler)


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
            done.result(STORE_WAIT_SECONDS)  # raises: acknowledged as failed, sent again
        except FutureTimeout:
            log.info("feishu: a message is still being read; acknowledged meanwhile")

    def press(data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        event = json.loads(lark.JSON.marshal(data.event) or "{}")
        done = asyncio.run_coroutine_threadsafe(on_press(event), loop)
        return P2CardActionTriggerResponse(done.result(PRESS_WAIT_SECONDS) or {})

    builder = lark.EventDispatcherHandler.builder(settings.encrypt_key, settings.verification_token)
    builder.register_p2_customized_event("im.message.receive_v1", message)
    builder.register_p2_card_action_trigger(press)
    return builder.build()


class Refused(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def checked_callback(body: bytes, headers: Mapping[str, str], settings: FeishuSettings) -> str:
    """Check an HTTP callback as Feishu signs it, before the SDK dispatches it: it decrypts
    with the encrypt key (the SDK's AES), carries the verification token, and (with an
    encrypt key) its ``X-Lark-Signature`` is the SHA-256 of timestamp, nonce, key and body.
    Returns the event's type; raises :class:`Refused` with the status to answer."""
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
    kind = str(header.get("event_type") or event.get("type") or "")
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
    return kind


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
            error = await ended
        finally:
            await asyncio.to_thread(started.wait, 10)
            self._halt()
            await asyncio.to_thread(thread.join, 10)
        if error is not None:
            from lark_oapi.ws.exception import ClientException

            if isinstance(error, ClientException):
                raise PlatformNotConfigured(
                    f"Feishu refused the app's long connection ({error}): check "
                    "FEISHU_APP_ID and FEISHU_APP_SECRET, and that the app subscribes to "
                    "events over the long connection"
                ) from None
            raise error
        raise ConnectionError("the long connection ended")

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
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:  # the receiving and pinging loops first: no reconnect, no noise
            task.cancel()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        connection = client._conn
        with contextlib.suppress(Exception):
            if connection is not None:
                loop.run_until_complete(asyncio.wait_for(connection.close(), 5))
        loop.close()
