"""QQ's bot platform on loopback for tests, from the bot API's public reference
(tencent-connect/bot-docs, api-v2) and qq-botpy's source, which talks to it unmodified:

- ``POST /app/getAppAccessToken``: ``access_token`` and ``expires_in`` (a string, as QQ sends
  it); a wrong secret refused;
- ``GET /users/@me`` and ``GET /gateway/bot`` (the WebSocket's URL and session limits),
  every answer's Content-Type exactly ``application/json`` (botpy reads nothing else);
- the gateway: Hello (op 10), Identify (op 2: the token and the intents checked; 4004 for a
  bad token), READY, heartbeats (op 1, answered op 11), Resume (op 6: what was missed
  replayed, then RESUMED), dispatches (op 0) with a rising ``s``; a dropped connection;
- the message API's passive-reply rules: a message needs the ``msg_id`` of one it answers,
  within an hour (direct) or five minutes (group, channel), five replies at most
  (40034128); a ``msg_id`` and ``msg_seq`` used twice is deduplicated (40054005); a
  proactive message refused (40034024); a link not registered refused (304003); rate
  limits (22009); close codes at Identify (4914, 4915).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

import aiohttp
from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["GROUP", "FakeQQ", "Sent"]

GROUP = "GROUPOPENID0001"
CHANNEL = "1234567"
GUILD = "7654321"
BOT_ID = "11223344"
WINDOWS = {"users": 3600.0, "groups": 300.0, "channels": 300.0, "dms": 300.0}
REPLIES_TO_ONE = 5
INTENTS = (1 << 25) | (1 << 30) | (1 << 12)


@dataclass
class Sent:
    """A message the bot sent: where (``users/OPENID``, ``groups/ID`` ...), its text."""

    target: str
    text: str
    msg_id: str
    msg_seq: int
    message_id: str


def _json(data: Any, status: int = 200) -> web.Response:
    # Exactly application/json, without "; charset": botpy parses nothing else.
    return web.Response(
        body=json.dumps(data, ensure_ascii=False).encode(),
        status=status,
        headers={"Content-Type": "application/json"},
    )


class FakeQQ:
    """QQ for one bot (``app_id``/``client_secret``)."""

    def __init__(self) -> None:
        self.app_id = str(100000 + secrets.randbelow(899999))
        self.client_secret = secrets.token_urlsafe(24)
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.token_grants = 0
        self.identified: list[dict[str, Any]] = []
        self.connections = 0
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = 0
        self._events: list[dict[str, Any]] = []
        self._delivered: set[int] = set()
        self._session = ""
        self.sent: list[Sent] = []
        self._received: dict[str, tuple[str, float]] = {}
        """People's message ids: where, and when (for the passive windows)."""
        self._used: set[tuple[str, int]] = set()
        self._replies: dict[str, int] = {}
        self.files: dict[str, tuple[bytes, str]] = {}
        self.allowed_links: set[str] = set()
        """Links registered for the bot in QQ's console (any other is refused)."""
        self.close_identify_with = 0
        """A close code every Identify gets (4914: offline, 4915: banned)."""
        self._limited = 0
        self._last: dict[str, Any] | None = None
        app = web.Application()
        app.router.add_post("/app/getAppAccessToken", self._token)
        app.router.add_get("/users/@me", self._me)
        app.router.add_get("/gateway/bot", self._gateway_bot)
        app.router.add_get("/gateway", self._gateway_bot)
        app.router.add_get("/websocket", self._socket)
        app.router.add_post("/v2/users/{id}/messages", self._message)
        app.router.add_post("/v2/groups/{id}/messages", self._message)
        app.router.add_post("/channels/{id}/messages", self._message)
        app.router.add_post("/dms/{id}/messages", self._message)
        app.router.add_get("/files/{name}", self._file)
        self._server = LoopbackApp(app, "fake-qq")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def open_sockets(self) -> int:
        return len(self._sockets)

    @property
    def token_url(self) -> str:
        return f"{self.url}/app/getAppAccessToken"

    def sent_to(self, target: str) -> list[Sent]:
        """What the bot sent to ``users/OPENID``, ``groups/ID``, ``channels/ID`` or ``dms/ID``."""
        with self._lock:
            return [m for m in self.sent if m.target == target]

    def limit(self, times: int = 1) -> None:
        self._limited = times

    def age(self, message_id: str, seconds: float) -> None:
        """Make a person's message ``seconds`` older (past a passive window)."""
        with self._lock:
            where, at = self._received[message_id]
            self._received[message_id] = (where, at - seconds)

    # --- what people do ------------------------------------------------------------------

    def user_says(
        self,
        openid: str,
        text: str = "",
        *,
        group: str = "",
        channel: str = "",
        dms: str = "",
        attachments: list[dict[str, Any]] | None = None,
    ) -> str:
        """``openid`` writes to the bot: directly, or @-mentioning it in ``group``, a guild
        ``channel`` or the guild ``dms``; returns the message's id."""
        message_id = f"ROBOT1.0_{secrets.token_urlsafe(12)}"
        data: dict[str, Any] = {
            "id": message_id,
            "content": text,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+08:00"),
            "attachments": attachments or [],
        }
        if group:
            kind, where = "GROUP_AT_MESSAGE_CREATE", f"groups/{group}"
            data.update(group_openid=group, content=f" {text}")
            data["author"] = {"member_openid": openid}
        elif channel:
            kind, where = "AT_MESSAGE_CREATE", f"channels/{channel}"
            data.update(channel_id=channel, guild_id=GUILD, content=f"<@!{BOT_ID}> {text}")
            data["author"] = {"id": openid, "username": openid.title(), "bot": False}
        elif dms:
            kind, where = "DIRECT_MESSAGE_CREATE", f"dms/{dms}"
            data.update(channel_id=CHANNEL, guild_id=dms)
            data["author"] = {"id": openid, "username": openid.title(), "bot": False}
        else:
            kind, where = "C2C_MESSAGE_CREATE", f"users/{openid}"
            data["author"] = {"user_openid": openid}
        with self._lock:
            self._received[message_id] = (where, time.time())
        self.dispatch(kind, data)
        return message_id

    def user_sends_file(self, openid: str, data: bytes, name: str, mime: str, **where: str) -> str:
        """A file (an image, as QQ's clients send one) kept here and named in an
        attachment."""
        with self._lock:
            self.files[name] = (data, mime)
        attachment = {"content_type": mime, "filename": name, "url": f"{self.url}/files/{name}"}
        return self.user_says(openid, attachments=[attachment], **where)

    def dispatch(self, kind: str, data: dict[str, Any]) -> None:
        self._server.call(self._dispatch(kind, data))

    def deliver_again(self) -> None:
        """The last event once more (as a resume that replays more than was missed)."""
        assert self._last is not None
        self._delivered.discard(self._last["s"])
        self._server.call(self._send_frame(self._last))

    def drop_connections(self) -> None:
        async def drop() -> None:
            for socket in list(self._sockets):
                await socket.close()

        self._server.call(drop())

    async def _dispatch(self, kind: str, data: dict[str, Any]) -> None:
        self._seq += 1
        frame = {
            "op": 0,
            "s": self._seq,
            "t": kind,
            "id": f"{kind}:{secrets.token_hex(8)}",
            "d": data,
        }
        self._events.append(frame)
        self._last = frame
        await self._send_frame(frame)

    async def _send_frame(self, frame: dict[str, Any]) -> None:
        for _ in range(100):  # a moment for a client that is reconnecting
            if self._sockets:
                break
            await asyncio.sleep(0.1)
        if frame["s"] in self._delivered:  # a resume replayed it meanwhile
            return
        self._delivered.add(frame["s"])
        await self._sockets[-1].send_str(json.dumps(frame, ensure_ascii=False))

    # --- the token and the gateway ----------------------------------------------------------

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        if (body.get("appId"), body.get("clientSecret")) != (self.app_id, self.client_secret):
            return _json({"code": 100016, "message": "invalid appid or secret"}, 400)
        token = secrets.token_urlsafe(24)
        with self._lock:
            self.tokens.add(token)
            self.token_grants += 1
        return _json({"access_token": token, "expires_in": "7200"})

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        return header.startswith("QQBot ") and header[6:] in self.tokens

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _json({"code": 11244, "message": "token not exist or expire"}, 401)
        return _json({"id": BOT_ID, "username": "Hermes", "avatar": "", "bot": True})

    async def _gateway_bot(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _json({"code": 11244, "message": "token not exist or expire"}, 401)
        limit = {"total": 1000, "remaining": 999, "reset_after": 86400000, "max_concurrency": 1}
        address = f"ws://127.0.0.1:{self._server.port}/websocket"
        return _json({"url": address, "shards": 1, "session_start_limit": limit})

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.connections += 1
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        try:
            async for message in socket:
                if message.type != aiohttp.WSMsgType.TEXT:
                    continue
                frame = json.loads(message.data)
                await self._on_frame(socket, frame)
        finally:
            if socket in self._sockets:
                self._sockets.remove(socket)
        return socket

    async def _on_frame(self, socket: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        op, data = frame.get("op"), frame.get("d") or {}
        if op == 1:
            await socket.send_str(json.dumps({"op": 11}))
        elif op == 2:
            self.identified.append(data)
            token = str(data.get("token") or "")
            if not token.startswith("QQBot ") or token[6:] not in self.tokens:
                await socket.close(code=4004, message=b"invalid token")
                return
            if self.close_identify_with:
                await socket.close(code=self.close_identify_with, message=b"refused")
                return
            if int(data.get("intents") or 0) & ~INTENTS:
                await socket.close(code=4014, message=b"disallowed intents")
                return
            self._session = secrets.token_hex(8)
            self._sockets.append(socket)
            self._seq += 1
            ready = {
                "version": 1,
                "session_id": self._session,
                "user": {"id": BOT_ID, "username": "Hermes", "bot": True},
                "shard": [0, 1],
            }
            await socket.send_str(
                json.dumps({"op": 0, "s": self._seq, "t": "READY", "id": "", "d": ready})
            )
        elif op == 6:
            self._sockets.append(socket)
            missed = [e for e in self._events if e["s"] > int(data.get("seq") or 0)]
            for event in missed:
                self._delivered.add(event["s"])
                await socket.send_str(json.dumps(event, ensure_ascii=False))
            self._seq += 1
            await socket.send_str(json.dumps({"op": 0, "s": self._seq, "t": "RESUMED", "d": ""}))

    # --- the message API ---------------------------------------------------------------------

    async def _message(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _json({"code": 11244, "message": "token not exist or expire"}, 401)
        if self._limited > 0:
            self._limited -= 1
            return _json({"code": 22009, "message": "msg limit exceed"}, 400)
        kind = request.path.split("/")[-3]
        target = f"{kind}/{request.match_info['id']}"
        body = await request.json()
        msg_id, seq = str(body.get("msg_id") or ""), int(body.get("msg_seq") or 1)
        content = str(body.get("content") or "")
        if "://" in content and not any(link in content for link in self.allowed_links):
            return _json({"code": 304003, "message": "url not allowed"}, 400)
        with self._lock:
            found = self._received.get(msg_id)
            if not msg_id or found is None or found[0] != target:
                return _json({"code": 40034024, "message": "主动消息失败, 无权限"}, 400)
            if time.time() - found[1] > WINDOWS[kind]:
                return _json({"code": 40034128, "message": "被动回复时间或次数超限"}, 400)
            if (msg_id, seq) in self._used:
                return _json({"code": 40054005, "message": "消息被去重\uff0c请检查请求msgseq"}, 400)
            if self._replies.get(msg_id, 0) >= REPLIES_TO_ONE:
                return _json({"code": 40034128, "message": "被动回复时间或次数超限"}, 400)
            self._used.add((msg_id, seq))
            self._replies[msg_id] = self._replies.get(msg_id, 0) + 1
            message_id = f"BOTMSG{next(self._ids)}"
            self.sent.append(Sent(target, str(body.get("content") or ""), msg_id, seq, message_id))
        return _json({"id": message_id, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+08:00")})

    async def _file(self, request: web.Request) -> web.Response:
        data, mime = self.files[request.match_info["name"]]
        return web.Response(body=data, content_type=mime)
