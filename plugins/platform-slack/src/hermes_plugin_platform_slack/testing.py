"""A Slack workspace on loopback, for testing a Slack adapter and the gateway without Slack.

It serves what the unmodified slack_sdk client uses (the wire format is taken from Slack's
API documentation and slack_sdk's source):

* the Web API, ``POST /api/<method>`` with arguments as JSON, form or query string and the
  token as ``Authorization: Bearer``: ``auth.test``, ``apps.connections.open`` (app token),
  ``chat.postMessage``, ``chat.update`` (``message_not_found``), ``chat.postEphemeral``,
  ``conversations.open``, ``conversations.history`` and ``conversations.replies`` (query or
  form arguments only, a JSON body ignored as Slack ignores it there; newest
  or oldest first as Slack pages them, ``oldest`` exclusive, a cursor);
  ``{"ok": false, "error": ...}`` for what Slack refuses;
* Socket Mode: the WebSocket ``apps.connections.open`` hands out, a ``hello``, then event
  envelopes (``events_api``, ``interactive``) that the app acknowledges by ``envelope_id``.
  An envelope not acknowledged within :attr:`FakeSlack.ack_seconds` is delivered again with
  ``retry_attempt`` + 1, on whatever connection is open then; by default for ever and at
  once on a reconnect, or, after :meth:`FakeSlack.limit_redelivery`, as Slack does: three
  retries on its schedule, then the event is dropped.

Saying no, each switched on by a test: :meth:`FakeSlack.revoke_app_token`,
:meth:`FakeSlack.limit_redelivery`, :meth:`FakeSlack.go_down` (no Socket Mode connection
until :meth:`FakeSlack.come_back`) and :meth:`FakeSlack.rate_limit` (HTTP 429,
``ratelimited``, with ``Retry-After``).

A message in a channel that mentions the bot arrives twice, as a ``message`` and an
``app_mention`` event with different event ids, as it does for an app subscribed to both.
Text is escaped the Slack way (``&amp;``, ``&lt;``, ``&gt;``); :meth:`SentMessage.visible`
is what a person sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import itertools
import json
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import WSMsgType, web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["APP_TOKEN", "BOT_TOKEN", "FakeSlack", "SentMessage"]

BOT_TOKEN = "xoxb-test-fake-slack-bot-token"
_NO_JSON = frozenset({"conversations.history", "conversations.replies"})
"""Read methods that take their arguments as a query or a form only."""
APP_TOKEN = "xapp-test-fake-slack-app-token"
MAX_TEXT_CHARS = 40_000


@dataclass
class SentMessage:
    """A message the bot posted, as it stands now (``edits`` keeps earlier texts)."""

    ts: str
    channel: str
    text: str
    """As sent: mrkdwn, escaped."""
    thread_ts: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)

    @property
    def visible(self) -> str:
        return html.unescape(self.text)

    def buttons(self) -> list[dict[str, Any]]:
        return [
            element
            for block in self.blocks
            if block.get("type") == "actions"
            for element in block.get("elements") or ()
            if element.get("type") == "button"
        ]


@dataclass
class _Envelope:
    id: str
    kind: str
    payload: dict[str, Any]
    attempt: int = 0
    sent_at: float = 0.0
    first_sent_at: float = 0.0


class FakeSlack:
    """The fake workspace; a context manager listening on 127.0.0.1 (an ephemeral port).

    One public channel (:attr:`channel`), the bot (:attr:`bot_user`) and whoever a test makes
    speak (any ``U...`` id)."""

    def __init__(self, ack_seconds: float = 3.0) -> None:
        self.team = "T0TEST"
        self.bot_user = "U0HERMES"
        self.bot_id = "B0HERMES"
        self.channel = "C0GENERAL"
        self.ack_seconds = ack_seconds
        self._lock = threading.Condition()
        self._clock = itertools.count(1)
        self._dms: dict[str, str] = {}
        self._sockets: list[web.WebSocketResponse] = []
        self._unacked: dict[str, _Envelope] = {}
        self.messages: dict[tuple[str, str], SentMessage] = {}
        self.ephemeral: list[dict[str, Any]] = []
        """chat.postEphemeral calls: ``{"channel", "user", "text", "thread_ts"?}``."""
        self.acks: list[str] = []
        self.deliveries: list[dict[str, Any]] = []
        """Every envelope sent, with its ``retry_attempt``."""
        self.connections = 0
        self.app_token_refused = ""
        """Set by :meth:`revoke_app_token`: what apps.connections.open answers instead."""
        self.redelivery: tuple[float, ...] | None = None
        """Set by :meth:`limit_redelivery`: each retry's delay after the one before."""
        self.dropped: list[dict[str, Any]] = []
        """Events Slack gave up on (their payloads) after the last retry."""
        self.down = False
        self._rate_limits: dict[str, list[float]] = {}
        self.history: dict[str, list[dict[str, Any]]] = {}
        """Every message of each conversation, oldest first, as conversations.history has
        them (people's and the bot's)."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._web_api)
        app.router.add_get("/api/{method}", self._web_api)  # read methods, as Slack takes
        app.router.add_get("/link/", self._socket)
        app.router.add_get("/files-pri/{path:.*}", self._file)
        self._files: dict[str, bytes] = {}
        self.downloads: list[str] = []
        """File paths downloaded with the bot token, in order."""
        self._server = LoopbackApp(app, "fake-slack")
        self._retrier: asyncio.Task[None] | None = None

    def __enter__(self) -> Self:
        self._server.start()
        self._retrier = self._server.call(self._start_retrier())
        return self

    def __exit__(self, *exc: object) -> None:
        retrier = self._retrier
        if retrier is not None:
            self._server.loop.call_soon_threadsafe(retrier.cancel)
        self._server.stop()

    @property
    def api_url(self) -> str:
        return f"{self._server.url}/api/"

    def revoke_app_token(self, error: str = "token_revoked") -> None:
        """The app-level token no longer opens Socket Mode connections (revoked from the
        app's page, or the app uninstalled): apps.connections.open answers ``error``, and
        the open sockets are closed, as Slack closes them."""
        self.app_token_refused = error
        for socket in list(self._sockets):
            self._server.call(socket.close())

    # --- saying no ------------------------------------------------------------------------

    def limit_redelivery(self, delays: tuple[float, ...] = (0.0, 60.0, 300.0)) -> None:
        """Redeliver as Slack does: an event not acknowledged in time is retried
        ``len(delays)`` times, each ``delays[n]`` seconds after the previous attempt timed
        out (Slack: at once, after a minute, after five), whether or not the app is connected
        then; after the last it is dropped. A reconnect brings nothing back by itself."""
        self.redelivery = tuple(delays)

    def go_down(self) -> None:
        """An outage: the app's connections close and no new one opens until
        :meth:`come_back` (apps.connections.open hands out URLs that refuse)."""
        self.down = True
        self.drop()

    def come_back(self) -> None:
        self.down = False

    def rate_limit(self, method: str, calls: int = 1, retry_after: float = 1.0) -> None:
        """The next ``calls`` calls of ``method`` answer HTTP 429 ``ratelimited`` with
        ``Retry-After: retry_after`` (whole seconds, rounded up, as Slack sends them)."""
        self._rate_limits[method] = [retry_after] * calls

    # --- people --------------------------------------------------------------------------

    def _ts(self) -> str:
        return f"{1_800_000_000 + next(self._clock)}.000100"

    def dm_channel(self, user: str) -> str:
        with self._lock:
            return self._dms.setdefault(user, f"D0{user[1:]}")

    def user_says(
        self,
        user: str,
        text: str,
        *,
        channel: str | None = None,
        mention: bool = False,
        thread_ts: str | None = None,
        files: list[dict[str, Any]] | None = None,
    ) -> str:
        """``user`` writes ``text`` in a DM with the bot, or in ``channel`` (a thread of it
        with ``thread_ts``). ``mention`` puts ``<@bot>`` in front. Returns the message's ts."""
        ts = self._ts()
        where = channel or self.dm_channel(user)
        escaped = html.escape(text, quote=False)
        written = f"<@{self.bot_user}> {escaped}" if mention else escaped
        event: dict[str, Any] = {
            "type": "message",
            "channel": where,
            "channel_type": "channel" if channel else "im",
            "user": user,
            "text": written,
            "ts": ts,
            "event_ts": ts,
            "team": self.team,
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        if files:
            event["subtype"] = "file_share"
            event["files"] = files
        self._remember(where, event)
        self._event(event)
        if mention and channel:
            self._event({**event, "type": "app_mention"})
        return ts

    def file(self, data: bytes, name: str, mimetype: str) -> dict[str, Any]:
        """An uploaded file as Slack describes it in a ``file_share`` event: its
        ``url_private_download`` needs the bot token (without it Slack answers its sign-in
        page, an HTML 200, as here)."""
        file_id = f"F0{next(self._clock):06d}"
        path = f"{self.team}-{file_id}/download/{name}"
        with self._lock:
            self._files[path] = data
        url = f"{self._server.url}/files-pri/{path}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "size": len(data),
            "mode": "hosted",
            "url_private": url,
            "url_private_download": url,
        }

    def user_sends_file(
        self, user: str, data: bytes, name: str, mimetype: str, text: str = ""
    ) -> str:
        """``user`` uploads a file in their DM with the bot; returns the message's ts."""
        return self.user_says(user, text, files=[self.file(data, name, mimetype)])

    async def _file(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if token != BOT_TOKEN:
            page = (
                "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"
            )
            return web.Response(text=page, content_type="text/html")
        with self._lock:
            data = self._files.get(path)
            if data is not None:
                self.downloads.append(path)
        if data is None:
            return web.Response(status=404, text="file_not_found")
        return web.Response(body=data, content_type="application/octet-stream")

    def _event(self, event: Mapping[str, Any]) -> None:
        self._deliver(
            "events_api",
            {
                "type": "event_callback",
                "team_id": self.team,
                "api_app_id": "A0HERMES",
                "event_id": f"Ev{uuid.uuid4().hex[:10]}",
                "event_time": int(time.time()),
                "authorizations": [
                    {"team_id": self.team, "user_id": self.bot_user, "is_bot": True}
                ],
                "event": dict(event),
            },
        )

    def press(self, user: str, message: SentMessage, action_id: str) -> None:
        """``user`` presses the button ``action_id`` under ``message``."""
        (button,) = [b for b in message.buttons() if b.get("action_id") == action_id]
        container: dict[str, Any] = {
            "type": "message",
            "message_ts": message.ts,
            "channel_id": message.channel,
            "is_ephemeral": False,
        }
        if message.thread_ts is not None:
            container["thread_ts"] = message.thread_ts
        self._deliver(
            "interactive",
            {
                "type": "block_actions",
                "user": {"id": user, "username": user.lower(), "team_id": self.team},
                "api_app_id": "A0HERMES",
                "team": {"id": self.team, "domain": "test"},
                "channel": {"id": message.channel, "name": "general"},
                "container": container,
                "message": {
                    "type": "message",
                    "user": self.bot_user,
                    "bot_id": self.bot_id,
                    "ts": message.ts,
                    "text": message.text,
                    "blocks": message.blocks,
                    **({"thread_ts": message.thread_ts} if message.thread_ts else {}),
                },
                "actions": [
                    {
                        "type": "button",
                        "action_id": action_id,
                        "block_id": "choices",
                        "value": button.get("value", ""),
                        "action_ts": self._ts(),
                    }
                ],
                "response_url": f"{self._server.url}/respond",
                "trigger_id": uuid.uuid4().hex,
                "state": {"values": {}},
            },
        )

    # --- breaking things -----------------------------------------------------------------

    def drop(self) -> None:
        """Close the app's Socket Mode connections as a network failure would."""
        for socket in list(self._sockets):
            self._server.call(socket.close(code=1011))

    def refresh(self) -> None:
        """Ask the app to reconnect, as Slack does every few hours (``disconnect``)."""
        message = {"type": "disconnect", "reason": "refresh_requested", "debug_info": {}}
        for socket in list(self._sockets):
            self._server.call(socket.send_str(json.dumps(message)))

    def deliver_again(self) -> None:
        """Deliver the last event envelope again, even though it was acknowledged."""
        with self._lock:
            last = next((d for d in reversed(self.deliveries) if d["type"] == "events_api"), None)
        if last is not None:
            envelope = _Envelope(str(last["envelope_id"]), "events_api", last["payload"])
            envelope.attempt = int(last["retry_attempt"]) + 1
            self._server.call(self._send(envelope))

    def connected(self) -> bool:
        return bool(self._sockets)

    def wait_until_connected(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self._sockets:
            if time.monotonic() > deadline:
                raise TimeoutError("the app never opened a Socket Mode connection")
            time.sleep(0.02)

    def unacknowledged(self) -> int:
        return len(self._unacked)

    # --- what the bot did ----------------------------------------------------------------

    def sent(self, channel: str, thread_ts: str | None = None) -> list[SentMessage]:
        with self._lock:
            return [
                m
                for m in self.messages.values()
                if m.channel == channel and (thread_ts is None or m.thread_ts == thread_ts)
            ]

    def wait_for_message(
        self, channel: str, containing: str = "", timeout: float = 20.0
    ) -> SentMessage:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for message in self.messages.values():
                    if message.channel == channel and containing in message.visible:
                        return message
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [m.visible for m in self.messages.values()]
                    raise TimeoutError(f"no message with {containing!r} in {channel}: {seen}")
                self._lock.wait(left)

    # --- Socket Mode ---------------------------------------------------------------------

    def _deliver(self, kind: str, payload: dict[str, Any]) -> None:
        envelope = _Envelope(str(uuid.uuid4()), kind, payload)
        with self._lock:
            self._unacked[envelope.id] = envelope
        self._server.call(self._send(envelope))

    async def _send(self, envelope: _Envelope) -> None:
        envelope.sent_at = time.monotonic()
        envelope.first_sent_at = envelope.first_sent_at or envelope.sent_at
        frame = {
            "envelope_id": envelope.id,
            "type": envelope.kind,
            "payload": envelope.payload,
            "accepts_response_payload": False,
            "retry_attempt": envelope.attempt,
            "retry_reason": "timeout" if envelope.attempt else "",
        }
        with self._lock:
            self.deliveries.append(frame)
        for socket in list(self._sockets):
            if not socket.closed:
                await socket.send_str(json.dumps(frame))
                return  # one connection gets it, as Slack spreads envelopes

    async def _start_retrier(self) -> asyncio.Task[None]:
        return asyncio.ensure_future(self._retry_unacknowledged())

    async def _retry_unacknowledged(self) -> None:
        while True:
            await asyncio.sleep(0.05)
            now = time.monotonic()
            for envelope in list(self._unacked.values()):
                timed_out = now - envelope.sent_at > self.ack_seconds
                if self.redelivery is None:
                    if self._sockets and timed_out:
                        envelope.attempt += 1
                        with contextlib.suppress(Exception):  # a socket closing meanwhile
                            await self._send(envelope)
                    continue
                if envelope.attempt >= len(self.redelivery):
                    if timed_out:  # Slack gives up
                        with self._lock:
                            self._unacked.pop(envelope.id, None)
                            self.dropped.append(envelope.payload)
                    continue
                if now - envelope.sent_at >= self.ack_seconds + self.redelivery[envelope.attempt]:
                    envelope.attempt += 1
                    with contextlib.suppress(Exception):
                        await self._send(envelope)  # to no one, when the app is not connected

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            return web.Response(status=503, text="upstream unavailable")
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        self.connections += 1
        await socket.send_str(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": len(self._sockets) + 1,
                    "debug_info": {"host": "fake-slack", "approximate_connection_time": 18060},
                    "connection_info": {"app_id": "A0HERMES"},
                }
            )
        )
        self._sockets.append(socket)
        if self.redelivery is None:  # what the last connection left, at once
            for envelope in list(self._unacked.values()):
                await self._send(envelope)
        try:
            async for frame in socket:
                if frame.type != WSMsgType.TEXT:
                    continue
                try:
                    message = json.loads(frame.data)
                except ValueError:
                    continue
                envelope_id = message.get("envelope_id") if isinstance(message, dict) else None
                if envelope_id:
                    with self._lock:
                        self.acks.append(str(envelope_id))
                        self._unacked.pop(str(envelope_id), None)
        finally:
            self._sockets.remove(socket)
        return socket

    # --- the Web API ---------------------------------------------------------------------

    async def _web_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        arguments: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                if method not in _NO_JSON:  # Slack ignores a JSON body there
                    arguments.update(await request.json())
            else:
                arguments.update(await request.post())
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        token = token or str(arguments.get("token") or "")
        wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != wanted:
            return _answer({"ok": False, "error": "invalid_auth"})
        if method == "apps.connections.open" and self.app_token_refused:
            return _answer({"ok": False, "error": self.app_token_refused})
        limits = self._rate_limits.get(method)
        if limits:
            seconds = limits.pop(0)
            return web.Response(
                status=429,
                body=json.dumps({"ok": False, "error": "ratelimited"}).encode(),
                content_type="application/json",
                headers={"Retry-After": str(max(1, int(-(-seconds // 1))))},
            )
        handler = getattr(self, "_api_" + method.replace(".", "_"), None)
        if handler is None:
            return _answer({"ok": False, "error": "unknown_method"})
        result: dict[str, Any] = handler(arguments)
        return _answer(result)

    def _api_auth_test(self, _: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://test.slack.com/",
            "team": "Test",
            "user": "hermes",
            "team_id": self.team,
            "user_id": self.bot_user,
            "bot_id": self.bot_id,
        }

    def _api_apps_connections_open(self, _: Mapping[str, Any]) -> dict[str, Any]:
        ticket = uuid.uuid4().hex
        return {"ok": True, "url": f"ws://127.0.0.1:{self._server.port}/link/?ticket={ticket}"}

    def _known(self, channel: str) -> bool:
        return channel == self.channel or channel in self._dms.values()

    def _api_conversations_open(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        user = str(arguments.get("users") or "").split(",")[0]
        if not user.startswith("U"):
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "channel": {"id": self.dm_channel(user)}}

    def _api_chat_postMessage(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        channel = str(arguments.get("channel") or "")
        if channel.startswith("U"):  # a user's id: Slack posts in the app's DM with them
            channel = self.dm_channel(channel)
        if not self._known(channel):
            return {"ok": False, "error": "channel_not_found"}
        text = str(arguments.get("text") or "")
        if len(text) > MAX_TEXT_CHARS:
            return {"ok": False, "error": "msg_too_long"}
        thread_ts = arguments.get("thread_ts")
        message = SentMessage(
            ts=self._ts(),
            channel=channel,
            text=text,
            thread_ts=str(thread_ts) if thread_ts else None,
            blocks=_blocks(arguments.get("blocks")),
        )
        with self._lock:
            self.messages[(channel, message.ts)] = message
            self._lock.notify_all()
        self._remember(channel, self._as_event(message))
        return {
            "ok": True,
            "channel": channel,
            "ts": message.ts,
            "message": self._as_event(message),
        }

    def _api_chat_update(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        key = (str(arguments.get("channel") or ""), str(arguments.get("ts") or ""))
        with self._lock:
            message = self.messages.get(key)
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            text = str(arguments.get("text") or "")
            if text != message.text:
                message.edits.append(message.text)
                message.text = text
            if "blocks" in arguments:
                message.blocks = _blocks(arguments.get("blocks"))
            self._lock.notify_all()
        return {"ok": True, "channel": key[0], "ts": key[1], "text": message.text}

    def _api_chat_postEphemeral(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.ephemeral.append(dict(arguments))
            self._lock.notify_all()
        return {"ok": True, "message_ts": self._ts()}

    def _remember(self, channel: str, event: Mapping[str, Any]) -> None:
        kept = {k: v for k, v in event.items() if k not in ("channel", "channel_type", "event_ts")}
        with self._lock:
            self.history.setdefault(channel, []).append(kept)

    def _page(
        self, messages: list[dict[str, Any]], arguments: Mapping[str, Any], newest_first: bool
    ) -> dict[str, Any]:
        oldest = float(arguments.get("oldest") or 0)
        inclusive = str(arguments.get("inclusive") or "").lower() in ("1", "true")
        chosen = [
            m
            for m in messages
            if float(m["ts"]) > oldest or (inclusive and float(m["ts"]) == oldest)
        ]
        if newest_first:
            chosen.reverse()
        start = int(str(arguments.get("cursor") or "0") or 0)
        limit = max(1, min(int(arguments.get("limit") or 100), 999))
        page = chosen[start : start + limit]
        more = start + limit < len(chosen)
        return {
            "ok": True,
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _api_conversations_history(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        channel = str(arguments.get("channel") or "")
        if not self._known(channel):
            return {"ok": False, "error": "channel_not_found"}
        with self._lock:
            top = [
                m for m in self.history.get(channel, ()) if m.get("thread_ts") in (None, m["ts"])
            ]
        return self._page(top, arguments, newest_first=True)

    def _api_conversations_replies(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        channel, parent = str(arguments.get("channel") or ""), str(arguments.get("ts") or "")
        if not self._known(channel):
            return {"ok": False, "error": "channel_not_found"}
        with self._lock:
            thread = [
                m
                for m in self.history.get(channel, ())
                if m["ts"] == parent or m.get("thread_ts") == parent
            ]
        if not thread:
            return {"ok": False, "error": "thread_not_found"}
        answer = self._page(thread[1:], arguments, newest_first=False)
        answer["messages"] = [thread[0], *answer["messages"]]  # the parent always comes first
        return answer

    def _as_event(self, message: SentMessage) -> dict[str, Any]:
        return {
            "type": "message",
            "user": self.bot_user,
            "bot_id": self.bot_id,
            "text": message.text,
            "ts": message.ts,
            **({"thread_ts": message.thread_ts} if message.thread_ts else {}),
        }


def _blocks(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        value = json.loads(value) if value else []
    return [dict(block) for block in value or ()]


def _answer(data: Mapping[str, Any]) -> web.Response:
    return web.Response(body=json.dumps(data).encode(), content_type="application/json")
