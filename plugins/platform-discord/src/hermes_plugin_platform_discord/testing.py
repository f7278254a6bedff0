"""A Discord server on loopback, for testing a Discord adapter and the gateway without Discord.

It serves the two halves of Discord's bot API, as the unmodified discord.py client uses them
(the wire format is taken from Discord's developer documentation and discord.py's source):

* the gateway WebSocket, with plain JSON text frames: HELLO, heartbeats and their ACKs,
  IDENTIFY -> READY and GUILD_CREATE, dispatches numbered by ``s``, RESUME (the dispatches
  after the client's sequence, then RESUMED) on the session's ``resume_gateway_url``;
* the REST endpoints a bot adapter uses, under ``/api/v10``: ``users/@me``,
  ``oauth2/applications/@me``, sending and editing messages (404 ``Unknown Message``, code
  10008), typing, DM channels, threads started from a message (the thread's id is the
  message's, as on Discord; a second start is refused with code 160004), and interaction
  callbacks.

Tests act as people (:meth:`FakeDiscord.user_says`, :meth:`FakeDiscord.press`), break the
connection (:meth:`FakeDiscord.drop`, events that arrive meanwhile are replayed on RESUME),
deliver an event twice (:meth:`FakeDiscord.replay_on_resume`, :meth:`FakeDiscord.deliver_again`),
say no (:meth:`FakeDiscord.refuse_threads`, :meth:`FakeDiscord.rate_limit` with Discord's
429 body and headers, ``Via`` included, per route or global, :meth:`FakeDiscord.fail_after_create`),
make the connection misbehave (:meth:`FakeDiscord.ask_to_reconnect`, op 7;
:meth:`FakeDiscord.go_zombie`, heartbeats no longer acknowledged), forward messages
(:meth:`FakeDiscord.user_forwards`), and read what the bot did (:meth:`FakeDiscord.sent`,
:attr:`FakeDiscord.typing`,
:attr:`FakeDiscord.callbacks`). Point discord.py at it with :meth:`FakeDiscord.point_discord_py`
(``Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY``, the only two base URLs it has).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import WSMsgType, web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["DEFAULT_TOKEN", "FakeDiscord", "SentMessage"]

DEFAULT_TOKEN = "TEST.fake-discord-bot.token"
MAX_MESSAGE_CHARS = 2000
_EPOCH_ISO = "2026-01-01T00:00:00+00:00"


def _json(data: Any, status: int = 200) -> web.Response:
    # Exactly application/json: discord.py parses a body as JSON only for that content type.
    return web.Response(
        status=status, body=json.dumps(data).encode(), headers={"Content-Type": "application/json"}
    )


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"message": message, "code": code}, status)


@dataclass
class SentMessage:
    """A message the bot sent, as it stands now (``edits`` keeps earlier texts)."""

    id: str
    channel_id: str
    content: str
    buttons: list[dict[str, Any]] = field(default_factory=list)
    """The buttons shown under it: ``{"custom_id", "label"}``."""
    reply_to: str | None = None
    edits: list[str] = field(default_factory=list)


@dataclass
class _Session:
    id: str
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Every dispatch of the session, with its sequence number."""
    socket: web.WebSocketResponse | None = None
    seq: int = 0


class FakeDiscord:
    """The fake Discord; a context manager listening on 127.0.0.1 (an ephemeral port).

    One guild (:attr:`guild_id`) with one text channel (:attr:`channel_id`), a bot user
    (:attr:`bot_id`) and whoever a test makes speak (any numeric user id).
    """

    def __init__(self, token: str = DEFAULT_TOKEN) -> None:
        self.token = token
        self._ids = itertools.count(1_300_000_000_000_000_000)
        self.bot_id = self._snowflake()
        self.guild_id = self._snowflake()
        self.channel_id = self._snowflake()
        self.bot_role_id = self._snowflake()
        """The role Discord manages for the bot in the server (named after it)."""
        self.bot = self._user(self.bot_id, "hermes", bot=True)
        self._lock = threading.Condition()
        self._sessions: dict[str, _Session] = {}
        self._dms: dict[str, str] = {}  # user id -> DM channel id
        self._threads: dict[str, dict[str, Any]] = {}  # thread id -> channel object
        self._users: dict[str, str] = {}  # user id -> name
        self._replays = 0
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self.messages: dict[str, SentMessage] = {}
        self.user_messages: dict[str, dict[str, Any]] = {}
        """What people said: message id -> the MESSAGE_CREATE payload."""
        self.typing: list[str] = []
        """Channel ids the bot showed typing in, in order."""
        self.callbacks: list[dict[str, Any]] = []
        """Interaction responses: ``{"interaction", "user_id", "type", "data"}``."""
        self.identifies = 0
        self.expire_on_resume = False
        """Answer the next RESUME with INVALID_SESSION (``d: false``), as Discord does for a
        session that timed out: the client identifies anew, and the events of the gap are
        not replayed (read them back with GET messages)."""
        self.refuse_intents = False
        """Close an IDENTIFY with 4014, as Discord does when the bot asks for a privileged
        intent (Message Content) the Developer Portal has not turned on."""
        self.resumes = 0
        self.fail_after_creating = 0
        """Set by :meth:`fail_after_create`: posts still to answer 500 once made."""
        self._nonces: dict[tuple[str, str], str] = {}  # (channel, nonce) -> message id
        self.threads_refused: tuple[int, int, str] | None = None
        self.heartbeat_ms = 41250
        """The interval HELLO asks for (Discord's); a zombie test makes it short."""
        self.zombie = False
        self.reconnects_asked = 0
        self._limits: list[tuple[str, str, float, bool]] = []  # method, path prefix, after, global
        self.limited: list[str] = []
        """Each request answered 429, as ``METHOD path``."""
        """Set by :meth:`refuse_threads`: how starting a thread is answered instead."""
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        app.router.add_get("/attachments/{path:.*}", self._attachment)
        self._files: dict[str, bytes] = {}  # CDN path -> content
        self.downloads: list[str] = []
        """CDN paths the bot downloaded, in order."""
        self._server = LoopbackApp(app, "fake-discord")

    # --- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def api_url(self) -> str:
        return f"{self._server.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self._server.port}/gateway"

    def point_discord_py(self) -> Callable[[], None]:
        """Point discord.py's two base URLs here; returns the function that points them back."""
        import discord.gateway
        import discord.http
        import yarl

        route, gateway = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        discord.http.Route.BASE = self.api_url
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)

        def restore() -> None:
            discord.http.Route.BASE = route
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = gateway

        return restore

    # --- people --------------------------------------------------------------------------

    def _snowflake(self) -> str:
        return str(next(self._ids))

    def _user(self, user_id: str, name: str, bot: bool = False) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": user_id,
            "username": name,
            "discriminator": "0",
            "avatar": None,
            "global_name": name.title(),
        }
        if bot:
            user["bot"] = True
        return user

    def person(self, user_id: str | int) -> dict[str, Any]:
        user_id = str(user_id)
        return self._user(user_id, self._users.get(user_id, f"user{user_id[-4:]}"))

    def dm_channel(self, user_id: str | int) -> str:
        with self._lock:
            return self._dms.setdefault(str(user_id), self._snowflake())

    def user_says(
        self,
        user_id: str | int,
        text: str,
        *,
        channel_id: str | None = None,
        mention: bool = False,
        mention_role: bool = False,
        reply_to: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> str:
        """``user_id`` writes ``text``: in a DM with the bot, or in ``channel_id`` (the guild
        channel, or a thread). ``mention`` adds ``<@bot>`` in front, as the client does;
        ``mention_role`` the bot's managed role instead (``<@&role>``, which the client's
        autocomplete offers beside the bot). Returns the message's id."""
        user_id = str(user_id)
        message_id = self._snowflake()
        in_guild = channel_id is not None
        channel = channel_id if in_guild else self.dm_channel(user_id)
        content = f"<@{self.bot_id}> {text}" if mention else text
        if mention_role:
            content = f"<@&{self.bot_role_id}> {content}"
        message: dict[str, Any] = {
            "id": message_id,
            "channel_id": channel,
            "type": 19 if reply_to else 0,
            "content": content,
            "author": self.person(user_id),
            "timestamp": _EPOCH_ISO,
            "edited_timestamp": None,
            "mentions": [self.bot] if mention else [],
            "mention_roles": [self.bot_role_id] if mention_role else [],
            "mention_everyone": False,
            "attachments": [
                {"id": self._snowflake(), "proxy_url": a.get("url", ""), **a}
                for a in attachments or ()
            ],
            "embeds": [],
            "components": [],
            "tts": False,
            "pinned": False,
            "flags": 0,
        }
        if in_guild:
            message["guild_id"] = self.guild_id
            message["member"] = {"roles": [], "flags": 0, "joined_at": _EPOCH_ISO}
        if reply_to is not None:
            message["message_reference"] = {"message_id": reply_to, "channel_id": channel}
            replied = self.messages.get(reply_to)
            if replied is not None:
                message["referenced_message"] = self._as_message(replied)
                message["mentions"] = [*message["mentions"], self.bot]
        self.user_messages[message_id] = message
        self._dispatch("MESSAGE_CREATE", message)
        return message_id

    def user_forwards(
        self,
        user_id: str | int,
        text: str,
        *,
        channel_id: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> str:
        """``user_id`` forwards a message (``text``, with ``attachments``) from elsewhere into
        a DM with the bot, or into ``channel_id``: as Discord sends a forward, an empty
        message whose ``message_reference`` has type 1 (FORWARD) and whose
        ``message_snapshots`` carry the original. Returns the forward's id."""
        user_id = str(user_id)
        original, message_id = self._snowflake(), self._snowflake()
        channel = channel_id or self.dm_channel(user_id)
        message: dict[str, Any] = {
            "id": message_id,
            "channel_id": channel,
            "type": 0,
            "content": "",
            "author": self.person(user_id),
            "timestamp": _EPOCH_ISO,
            "edited_timestamp": None,
            "mentions": [],
            "mention_roles": [],
            "mention_everyone": False,
            "attachments": [],
            "embeds": [],
            "components": [],
            "tts": False,
            "pinned": False,
            "flags": 1 << 14,  # HAS_SNAPSHOT
            "message_reference": {
                "type": 1,
                "message_id": original,
                "channel_id": "1300000000000000999",
                "guild_id": self.guild_id,
            },
            "message_snapshots": [
                {
                    "message": {
                        "type": 0,
                        "content": text,
                        "embeds": [],
                        "attachments": [
                            {"id": self._snowflake(), "proxy_url": a.get("url", ""), **a}
                            for a in attachments or ()
                        ],
                        "timestamp": _EPOCH_ISO,
                        "edited_timestamp": None,
                        "flags": 0,
                        "mentions": [],
                        "mention_roles": [],
                    }
                }
            ],
        }
        if channel_id is not None:
            message["guild_id"] = self.guild_id
            message["member"] = {"roles": [], "flags": 0, "joined_at": _EPOCH_ISO}
        self.user_messages[message_id] = message
        self._dispatch("MESSAGE_CREATE", message)
        return message_id

    def attachment(
        self, channel_id: str, data: bytes, filename: str, content_type: str
    ) -> dict[str, Any]:
        """An uploaded file as Discord describes it in a message, served from the fake CDN
        (``GET /attachments/CHANNEL/ID/NAME``, as cdn.discordapp.com serves them)."""
        attachment_id = self._snowflake()
        path = f"{channel_id}/{attachment_id}/{filename}"
        with self._lock:
            self._files[path] = data
        return {
            "id": attachment_id,
            "filename": filename,
            "size": len(data),
            "url": f"{self._server.url}/attachments/{path}",
            "proxy_url": f"{self._server.url}/attachments/{path}",
            "content_type": content_type,
        }

    def user_sends_file(
        self, user_id: str | int, data: bytes, filename: str, content_type: str, text: str = ""
    ) -> str:
        """``user_id`` uploads a file in their DM with the bot (with ``text`` as its message)."""
        channel = self.dm_channel(user_id)
        return self.user_says(
            user_id, text, attachments=[self.attachment(channel, data, filename, content_type)]
        )

    async def _attachment(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        with self._lock:
            data = self._files.get(path)
            if data is not None:
                self.downloads.append(path)
        if data is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=data, content_type="application/octet-stream")

    def press(self, user_id: str | int, message: SentMessage, custom_id: str) -> str:
        """``user_id`` presses the button ``custom_id`` under ``message``; returns the
        interaction's id (its answer is in :attr:`callbacks`)."""
        user = self.person(user_id)
        interaction_id = self._snowflake()
        in_guild = message.channel_id not in self._dms.values()
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": self.bot_id,
            "type": 3,
            "token": f"itoken-{interaction_id}",
            "version": 1,
            "channel_id": message.channel_id,
            "channel": self._channel_object(message.channel_id),
            "data": {"custom_id": custom_id, "component_type": 2},
            "message": self._as_message(message),
            "attachment_size_limit": 8 * 1024 * 1024,
            "entitlements": [],
            "authorizing_integration_owners": {},
        }
        if in_guild:
            payload["guild_id"] = self.guild_id
            payload["member"] = {"user": user, "roles": [], "flags": 0, "permissions": "0"}
        else:
            payload["user"] = user
        self._dispatch("INTERACTION_CREATE", payload)
        return interaction_id

    # --- breaking things -----------------------------------------------------------------

    def drop(self, code: int = 1006) -> None:
        """Close the bot's gateway connection as a network failure would; the session stays,
        and what happens until the bot resumes is replayed to it."""
        for session in list(self._sessions.values()):
            socket = session.socket
            session.socket = None
            if socket is not None:
                self._server.call(socket.close(code=4000 if code == 1006 else code))

    def fail_after_create(self, calls: int = 1) -> None:
        """The next ``calls`` posts are made, then answered 500 (Discord's trouble after
        the write): discord.py sends such a post again by itself. As Discord does, a post
        with ``enforce_nonce`` and a nonce it has seen in that channel gets the message the
        nonce made, not a second one."""
        self.fail_after_creating = calls

    def rate_limit(
        self,
        method: str = "POST",
        path: str = "channels/",
        calls: int = 1,
        retry_after: float = 0.5,
        global_limit: bool = False,
    ) -> None:
        """The next ``calls`` requests of ``method`` on a path starting with ``path`` are
        answered as Discord limits them: 429 with ``{"message", "retry_after", "global"}``,
        ``Retry-After``, the ``X-RateLimit-*`` headers (``Global`` and scope ``global`` for a
        global limit) and ``Via: 1.1 google`` (without it discord.py takes a 429 for
        Cloudflare's ban and gives up)."""
        self._limits.extend([(method, path, retry_after, global_limit)] * calls)

    def ask_to_reconnect(self) -> None:
        """Discord's op 7 RECONNECT: the bot must reconnect and resume."""
        for session in list(self._sessions.values()):
            if session.socket is not None:
                self.reconnects_asked += 1
                self._server.call(session.socket.send_str(json.dumps({"op": 7, "d": None})))

    def go_zombie(self) -> None:
        """The connection stays open but heartbeats are no longer acknowledged, and no
        event reaches it, as a half-dead connection: the bot must notice (a heartbeat
        unacknowledged by the next) and reconnect. Ends when it reconnects."""
        self.zombie = True

    def refuse_threads(self, voice_channel: bool = False) -> None:
        """Starting a thread is refused, as Discord refuses it where a channel override
        removes Create Public Threads (403, 50013 Missing Permissions) or in a voice
        channel's text chat, which has none (``voice_channel``: 400, 50024)."""
        self.threads_refused = (
            (400, 50024, "Cannot execute action on this channel type")
            if voice_channel
            else (403, 50013, "Missing Permissions")
        )

    def replay_on_resume(self, count: int) -> None:
        """On the next RESUME, also replay the last ``count`` dispatches the bot already got
        (the disconnect window's events, delivered twice)."""
        self._replays = count

    def deliver_again(self) -> None:
        """Send the last person's message again, with a new sequence number."""
        for session in self._sessions.values():
            for _, event in reversed(session.events):
                if event["t"] == "MESSAGE_CREATE" and event["d"]["id"] in self.user_messages:
                    self._dispatch("MESSAGE_CREATE", event["d"])
                    return

    def connected(self) -> bool:
        return any(session.socket is not None for session in self._sessions.values())

    # --- what the bot did ----------------------------------------------------------------

    def sent(self, channel_id: str) -> list[SentMessage]:
        with self._lock:
            return [m for m in self.messages.values() if m.channel_id == channel_id]

    def wait_for_message(
        self, channel_id: str, containing: str = "", timeout: float = 20.0
    ) -> SentMessage:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for message in self.messages.values():
                    if message.channel_id == channel_id and containing in message.content:
                        return message
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [m.content for m in self.messages.values()]
                    raise TimeoutError(f"no message with {containing!r} in {channel_id}: {seen}")
                self._lock.wait(left)

    def wait_until_connected(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.connected():
            if time.monotonic() > deadline:
                raise TimeoutError("the bot never connected to the fake Discord gateway")
            time.sleep(0.02)

    # --- the gateway ---------------------------------------------------------------------

    def _dispatch(self, name: str, data: Mapping[str, Any]) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            if not sessions:  # before the bot first connects: delivered after its READY
                self._pending.append((name, dict(data)))
                return
        for session in sessions:
            self._server.call(self._send_event(session, name, data))

    async def _send_event(self, session: _Session, name: str, data: Mapping[str, Any]) -> None:
        session.seq += 1
        event = {"op": 0, "t": name, "s": session.seq, "d": dict(data)}
        session.events.append((session.seq, event))
        if session.socket is not None and not session.socket.closed and not self.zombie:
            await session.socket.send_str(json.dumps(event))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        await socket.send_str(
            json.dumps({"op": 10, "d": {"heartbeat_interval": self.heartbeat_ms}})
        )
        session: _Session | None = None
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            op, data = message.get("op"), message.get("d")
            if op == 1:
                if not self.zombie:
                    await socket.send_str(json.dumps({"op": 11}))
            elif op == 2:
                if data.get("token") != self.token:
                    await socket.close(code=4004, message=b"Authentication failed.")
                    break
                if self.refuse_intents:
                    await socket.close(code=4014, message=b"Disallowed intent(s).")
                    break
                self.identifies += 1
                self.zombie = False  # a new connection: the old one was the dead one
                session = _Session(self._snowflake())
                with self._lock:
                    self._sessions = {session.id: session}  # one bot, one live session
                session.socket = socket
                await self._send_event(session, "READY", self._ready(session))
                await self._send_event(session, "GUILD_CREATE", self._guild())
                with self._lock:
                    pending, self._pending = self._pending, []
                for name, event in pending:
                    await self._send_event(session, name, event)
            elif op == 6:
                self.zombie = False  # a new connection: the old one was the dead one
                found = self._sessions.get(str(data.get("session_id")))
                if self.expire_on_resume:
                    self.expire_on_resume = False
                    found = None
                if found is None or data.get("token") != self.token:
                    await socket.send_str(json.dumps({"op": 9, "d": False}))
                    continue
                self.resumes += 1
                session = found
                since = int(data.get("seq") or 0) - self._replays
                self._replays = 0
                session.socket = socket
                for seq, event in list(session.events):
                    if seq > since:
                        await socket.send_str(json.dumps(event))
                session.seq += 1
                resumed = {"op": 0, "t": "RESUMED", "s": session.seq, "d": {}}
                await socket.send_str(json.dumps(resumed))
        if session is not None and session.socket is socket:
            session.socket = None
        return socket

    def _ready(self, session: _Session) -> dict[str, Any]:
        return {
            "v": 10,
            "user": self.bot,
            "session_id": session.id,
            "resume_gateway_url": self.gateway_url,
            "guilds": [{"id": self.guild_id, "unavailable": True}],
            "private_channels": [],
            "application": {"id": self.bot_id, "flags": 0},
        }

    def _guild(self) -> dict[str, Any]:
        return {
            "id": self.guild_id,
            "name": "Test server",
            "unavailable": False,
            "member_count": 2,
            "owner_id": self.bot_id,
            "roles": [
                {"id": self.guild_id, "name": "@everyone", "permissions": "1071698660929"},
                {
                    "id": self.bot_role_id,
                    "name": "hermes",
                    "permissions": "0",
                    "managed": True,
                    "tags": {"bot_id": self.bot_id},
                },
            ],
            "channels": [self._channel_object(self.channel_id)],
            "threads": list(self._threads.values()),
            "members": [
                {"user": self.bot, "roles": [self.bot_role_id], "flags": 0, "joined_at": _EPOCH_ISO}
            ],
        }

    def _channel_object(self, channel_id: str) -> dict[str, Any]:
        if channel_id in self._threads:
            return self._threads[channel_id]
        if channel_id in self._dms.values():
            user = next(u for u, c in self._dms.items() if c == channel_id)
            return {"id": channel_id, "type": 1, "recipients": [self.person(user)]}
        return {
            "id": channel_id,
            "type": 0,
            "guild_id": self.guild_id,
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
        }

    def _as_message(self, message: SentMessage) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": message.id,
            "channel_id": message.channel_id,
            "type": 0,
            "content": message.content,
            "author": self.bot,
            "timestamp": _EPOCH_ISO,
            "edited_timestamp": None,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "components": [
                {"type": 1, "components": [{"type": 2, "style": 2, **b} for b in message.buttons]}
            ]
            if message.buttons
            else [],
            "tts": False,
            "pinned": False,
            "flags": 0,
        }
        if message.channel_id not in self._dms.values():
            payload["guild_id"] = self.guild_id
        return payload

    # --- REST ----------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.Response:
        path = request.match_info["path"].strip("/").split("/")
        if path[0] == "interactions":
            return await self._interaction_callback(path, request)
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _error(401, 0, "401: Unauthorized")
        limited = self._limited(request.method, "/".join(path))
        if limited is not None:
            return limited
        body = await request.json() if request.can_read_body else {}
        match request.method, path:
            case "GET", ["users", "@me"]:
                return _json(self.bot)
            case "GET", ["oauth2", "applications", "@me"]:
                return _json(self._application())
            case "POST", ["users", "@me", "channels"]:
                channel_id = self.dm_channel(str(body["recipient_id"]))
                return _json(self._channel_object(channel_id))
            case "GET", ["channels", channel_id]:
                if not self._known_channel(channel_id):
                    return _error(404, 10003, "Unknown Channel")
                return _json(self._channel_object(channel_id))
            case "GET", ["channels", channel_id, "messages"]:
                return self._history(channel_id, request.query)
            case "POST", ["channels", channel_id, "typing"]:
                if not self._known_channel(channel_id):
                    return _error(404, 10003, "Unknown Channel")
                with self._lock:
                    self.typing.append(channel_id)
                return web.Response(status=204)
            case "POST", ["channels", channel_id, "messages"]:
                return await self._post_message(channel_id, body)
            case "PATCH", ["channels", channel_id, "messages", message_id]:
                return self._edit_message(channel_id, message_id, body)
            case "POST", ["channels", channel_id, "messages", message_id, "threads"]:
                return await self._start_thread(channel_id, message_id, body)
        return _error(404, 0, f"404: Not Found ({request.method} {'/'.join(path)})")

    def _limited(self, method: str, path: str) -> web.Response | None:
        with self._lock:
            found = next(
                (
                    number
                    for number, (verb, prefix, *_) in enumerate(self._limits)
                    if verb == method and path.startswith(prefix)
                ),
                None,
            )
            if found is None:
                return None
            _, _, after, is_global = self._limits.pop(found)
            self.limited.append(f"{method} {path}")
        headers = {
            "Retry-After": str(max(1, int(-(-after // 1)))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + after:.3f}",
            "X-RateLimit-Reset-After": f"{after:.3f}",
            "X-RateLimit-Bucket": "fakebucket"
            + ("global" if is_global else path.split("/", maxsplit=1)[0]),
            "X-RateLimit-Scope": "global" if is_global else "user",
            "Via": "1.1 google",
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        body = {
            "message": "You are being rate limited.",
            "retry_after": after,
            "global": is_global,
        }
        return web.Response(
            status=429, body=json.dumps(body).encode(), content_type="application/json",
            headers=headers,
        )  # fmt: skip

    def _history(self, channel_id: str, query: Mapping[str, str]) -> web.Response:
        """GET messages ``after`` an id: the ``limit`` oldest after it, newest first."""
        if not self._known_channel(channel_id):
            return _error(404, 10003, "Unknown Channel")
        after = int(query.get("after") or 0)
        limit = min(int(query.get("limit") or 50), 100)
        with self._lock:
            said = [m for m in self.user_messages.values() if m["channel_id"] == channel_id]
            said += [
                self._as_message(m) for m in self.messages.values() if m.channel_id == channel_id
            ]
        newer = sorted((m for m in said if int(m["id"]) > after), key=lambda m: int(m["id"]))
        return _json(list(reversed(newer[:limit])))

    def _application(self) -> dict[str, Any]:
        return {
            "id": self.bot_id,
            "name": "Hermes",
            "description": "",
            "icon": None,
            "bot_public": False,
            "bot_require_code_grant": False,
            "owner": self._user(self._snowflake(), "owner"),
            "verify_key": "0" * 64,
            "flags": 0,
        }

    def _known_channel(self, channel_id: str) -> bool:
        return (
            channel_id == self.channel_id
            or channel_id in self._threads
            or channel_id in self._dms.values()
        )

    async def _post_message(self, channel_id: str, body: Mapping[str, Any]) -> web.Response:
        if not self._known_channel(channel_id):
            return _error(404, 10003, "Unknown Channel")
        content = str(body.get("content") or "")
        if len(content) > MAX_MESSAGE_CHARS:
            return _error(
                400, 50035, "Invalid Form Body: content: Must be 2000 or fewer in length."
            )
        nonce = str(body.get("nonce") or "")
        if nonce and body.get("enforce_nonce"):
            with self._lock:
                made = self._nonces.get((channel_id, nonce))
            if made is not None:
                return _json(self._as_message(self.messages[made]))
        reference = body.get("message_reference") or {}
        message = SentMessage(
            id=self._snowflake(),
            channel_id=channel_id,
            content=content,
            buttons=_buttons(body.get("components")),
            reply_to=reference.get("message_id"),
        )
        with self._lock:
            self.messages[message.id] = message
            if nonce:
                self._nonces[(channel_id, nonce)] = message.id
            self._lock.notify_all()
            sessions = list(self._sessions.values())
            failing = self.fail_after_creating > 0
            self.fail_after_creating -= 1 if failing else 0
        payload = self._as_message(message)
        for session in sessions:  # the bot hears its own messages, as on Discord
            await self._send_event(session, "MESSAGE_CREATE", payload)
        if failing:
            return _error(500, 0, "500: Internal Server Error")
        return _json(payload)

    def _edit_message(
        self, channel_id: str, message_id: str, body: Mapping[str, Any]
    ) -> web.Response:
        with self._lock:
            message = self.messages.get(message_id)
            if message is None or message.channel_id != channel_id:
                return _error(404, 10008, "Unknown Message")
            if "content" in body and body["content"] != message.content:
                message.edits.append(message.content)
                message.content = str(body["content"] or "")
            if "components" in body:
                message.buttons = _buttons(body["components"])
            self._lock.notify_all()
        return _json(self._as_message(message))

    async def _start_thread(
        self, channel_id: str, message_id: str, body: Mapping[str, Any]
    ) -> web.Response:
        if self.threads_refused is not None:
            return _error(*self.threads_refused)
        if message_id in self._threads:
            return _error(400, 160004, "A thread has already been created for this message")
        if channel_id != self.channel_id or message_id not in self.user_messages:
            return _error(404, 10008, "Unknown Message")
        thread = {
            "id": message_id,  # a thread started from a message has the message's id
            "type": 11,
            "guild_id": self.guild_id,
            "parent_id": channel_id,
            "owner_id": self.bot_id,
            "name": str(body.get("name") or "thread")[:100],
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": int(body.get("auto_archive_duration") or 1440),
                "archive_timestamp": _EPOCH_ISO,
                "locked": False,
            },
        }
        with self._lock:
            self._threads[message_id] = thread
            sessions = list(self._sessions.values())
        for session in sessions:  # on the server's loop already: no call() here
            await self._send_event(session, "THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread, 201)

    async def _interaction_callback(self, path: list[str], request: web.Request) -> web.Response:
        # POST /interactions/{id}/{token}/callback: authorised by the token in the path.
        if len(path) != 4 or path[3] != "callback" or not path[2].startswith("itoken-"):
            return _error(404, 10062, "Unknown interaction")
        body = await request.json()
        interaction_id = path[1]
        data = body.get("data") or {}
        with self._lock:
            self.callbacks.append({"interaction": interaction_id, **body})
            if body.get("type") == 7:  # UPDATE_MESSAGE: the pressed message changes
                pressed = next(
                    (
                        e["d"]["message"]["id"]
                        for s in self._sessions.values()
                        for _, e in s.events
                        if e["t"] == "INTERACTION_CREATE" and e["d"]["id"] == interaction_id
                    ),
                    None,
                )
                if pressed is not None and pressed in self.messages:
                    message = self.messages[pressed]
                    if "content" in data:
                        message.edits.append(message.content)
                        message.content = str(data["content"] or "")
                    if "components" in data:
                        message.buttons = _buttons(data["components"])
            self._lock.notify_all()
        return _json({"interaction": {"id": interaction_id, "type": 3}})


def _buttons(components: Any) -> list[dict[str, Any]]:
    return [
        {"custom_id": str(item.get("custom_id")), "label": str(item.get("label") or "")}
        for row in components or ()
        for item in row.get("components") or ()
        if item.get("type") == 2
    ]
