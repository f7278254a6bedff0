"""DingTalk on loopback for tests, from its public Stream mode protocol (the
open-dingtalk developerpedia) and the API reference, driven by dingtalk-stream unmodified:

- Stream mode: ``POST /v1.0/gateway/connections/open`` (the app's id and secret checked,
  its subscriptions recorded) answers an endpoint and a single-use ticket; the WebSocket
  at ``/connect?ticket=`` carries JSON frames: CALLBACK frames pushed (the robot topic's
  messages) and their acknowledgements collected by
  ``messageId``; SYSTEM pings; a SYSTEM ``disconnect`` or a dropped socket makes the client
  come back;
- the token endpoint (``/v1.0/oauth2/accessToken``: ``accessToken``, ``expireIn``) and the
  API's ``x-acs-dingtalk-access-token`` header, refused as ``InvalidAuthentication``;
- each message's session webhook (``errcode``/``errmsg``); the robot's sends to a person
  (``oToMessages/batchSend``, unknown staff ids listed as invalid) and to a group
  (``groupMessages/send``), with their rate limits; file downloads by code.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Self

import aiohttp
from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["GROUP", "FakeDingTalk", "Sent"]

GROUP = "cidTeamGroup=="
ROBOT_TOPIC = "/v1.0/im/bot/messages/get"
ACK_SECONDS = 5.0
SESSION_MINUTES = 90


@dataclass
class Sent:
    """A message the robot sent: through a session webhook or the robot's API."""

    chat_id: str
    via: str
    text: str
    message_id: str


@dataclass
class _Person:
    staff_id: str
    dingtalk_id: str
    nick: str
    in_organisation: bool = True
    p2p: str = field(default="")


class FakeDingTalk:
    """DingTalk for one app (``client_id``/``client_secret``) and its robot."""

    def __init__(self) -> None:
        self.client_id = f"ding{secrets.token_hex(6)}"
        self.client_secret = secrets.token_hex(16)
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.token_grants = 0
        self.subscriptions: list[dict[str, Any]] = []
        self._tickets: set[str] = set()
        self.connections = 0
        self._sockets: list[web.WebSocketResponse] = []
        self._acked: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.sent: list[Sent] = []
        self.files: dict[str, tuple[bytes, str]] = {}
        self._sessions: dict[str, tuple[str, float]] = {}
        self.people: dict[str, _Person] = {}
        self._last: dict[str, Any] | None = None
        self._limited = 0
        app = web.Application()
        app.router.add_post("/v1.0/gateway/connections/open", self._open)
        app.router.add_get("/connect", self._socket)
        app.router.add_post("/v1.0/oauth2/accessToken", self._token)
        app.router.add_post("/robot/sendBySession", self._session_send)
        app.router.add_post("/v1.0/robot/oToMessages/batchSend", self._to_people)
        app.router.add_post("/v1.0/robot/groupMessages/send", self._to_group)
        app.router.add_post("/v1.0/robot/messageFiles/download", self._download_url)
        app.router.add_get("/files/{code}", self._file)
        self._server = LoopbackApp(app, "fake-dingtalk")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    # --- people and what they see ----------------------------------------------------

    def person(self, staff_id: str, *, in_organisation: bool = True) -> _Person:
        with self._lock:
            if staff_id not in self.people:
                dingtalk_id = f"$:LWCP_v1:${secrets.token_urlsafe(12)}"
                self.people[staff_id] = _Person(
                    staff_id, dingtalk_id, staff_id.title(), in_organisation, f"cid{staff_id}p2p=="
                )
            return self.people[staff_id]

    def chat_of(self, staff_id: str) -> str:
        """The chat id Hermes uses for its one-to-one chat with ``staff_id``."""
        person = self.person(staff_id)
        return staff_id if person.in_organisation else person.dingtalk_id

    def sent_to(self, chat_id: str) -> list[Sent]:
        with self._lock:
            return [m for m in self.sent if m.chat_id == chat_id]

    def limit(self, times: int = 1) -> None:
        """The next ``times`` sends (API or session webhook) are refused as too fast."""
        self._limited = times

    def revoke_tokens(self) -> None:
        with self._lock:
            self.tokens.clear()

    # --- what people do ------------------------------------------------------------------

    def user_says(
        self,
        staff_id: str,
        text: str = "",
        *,
        group: str = "",
        mention: bool = True,
        kind: str = "text",
        content: dict[str, Any] | None = None,
        session_minutes: float = SESSION_MINUTES,
    ) -> int:
        """``staff_id`` writes to the robot (in ``group``, @-mentioning it if ``mention``);
        returns the acknowledgement's code (0: none within DingTalk's wait)."""
        person = self.person(staff_id)
        conversation = group or person.p2p
        session = secrets.token_urlsafe(16)
        expires = time.time() + session_minutes * 60
        chat_id = group or self.chat_of(staff_id)
        with self._lock:
            self._sessions[session] = (chat_id, expires)
        message: dict[str, Any] = {
            "conversationId": conversation,
            "conversationType": "2" if group else "1",
            "msgId": f"msg{next(self._ids)}{secrets.token_hex(6)}==",
            "msgtype": kind,
            "createAt": int(time.time() * 1000),
            "senderId": person.dingtalk_id,
            "senderNick": person.nick,
            "senderCorpId": "dingcorp",
            "chatbotUserId": "$:LWCP_v1:$robot",
            "chatbotCorpId": "dingcorp",
            "robotCode": self.client_id,
            "isAdmin": False,
            "sessionWebhook": f"{self.url}/robot/sendBySession?session={session}",
            "sessionWebhookExpiredTime": int(expires * 1000),
        }
        if person.in_organisation:
            message["senderStaffId"] = person.staff_id
        if group:
            message["conversationTitle"] = "团队群"
            message["isInAtList"] = mention
            if mention:
                message["atUsers"] = [{"dingtalkId": "$:LWCP_v1:$robot"}]
        if kind == "text":
            message["text"] = {"content": f" {text}" if mention and group else text}
        else:
            message["content"] = content or {}
        return self.push(ROBOT_TOPIC, message)

    def user_sends_file(
        self, staff_id: str, data: bytes, name: str, mime: str, *, picture: bool = False
    ) -> int:
        code = secrets.token_urlsafe(12)
        with self._lock:
            self.files[code] = (data, mime)
        if picture:
            return self.user_says(staff_id, kind="picture", content={"downloadCode": code})
        content = {"downloadCode": code, "fileName": name}
        return self.user_says(staff_id, kind="file", content=content)

    def deliver_again(self) -> int:
        assert self._last is not None
        return self._server.call(self._push_frame(self._last))

    def push(self, topic: str, data: dict[str, Any]) -> int:
        frame = {
            "specVersion": "1.0",
            "type": "CALLBACK",
            "headers": {
                "appId": self.client_id,
                "connectionId": secrets.token_hex(8),
                "contentType": "application/json",
                "messageId": secrets.token_hex(12),
                "time": str(int(time.time() * 1000)),
                "topic": topic,
            },
            "data": json.dumps(data, ensure_ascii=False),
        }
        self._last = frame
        return self._server.call(self._push_frame(frame))

    def ping(self) -> int:
        """A SYSTEM ping, as DingTalk sends to keep the connection; its acknowledgement's
        code."""
        frame = {
            "specVersion": "1.0",
            "type": "SYSTEM",
            "headers": {
                "topic": "ping",
                "messageId": secrets.token_hex(8),
                "contentType": "application/json",
            },
            "data": json.dumps({"opaque": secrets.token_hex(8)}),
        }
        return self._server.call(self._push_frame(frame))

    def disconnect(self) -> None:
        """A SYSTEM ``disconnect``, as DingTalk sends before it moves a connection."""

        async def tell() -> None:
            frame = {
                "specVersion": "1.0",
                "type": "SYSTEM",
                "headers": {"topic": "disconnect", "messageId": secrets.token_hex(8)},
                "data": json.dumps({"reason": "the connection is moving"}),
            }
            for socket in list(self._sockets):
                await socket.send_str(json.dumps(frame))

        self._server.call(tell())

    async def _push_frame(self, frame: dict[str, Any]) -> int:
        for _ in range(100):  # a moment for a client that is reconnecting
            if self._sockets:
                break
            await asyncio.sleep(0.1)
        acked: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acked[frame["headers"]["messageId"]] = acked
        await self._sockets[-1].send_str(json.dumps(frame, ensure_ascii=False))
        try:
            ack = await asyncio.wait_for(acked, ACK_SECONDS)
        except TimeoutError:
            return 0
        return int(ack.get("code") or 0)

    # --- Stream mode ---------------------------------------------------------------------

    async def _open(self, request: web.Request) -> web.Response:
        body = await request.json()
        if (body.get("clientId"), body.get("clientSecret")) != (self.client_id, self.client_secret):
            return web.json_response(
                {"code": "Forbidden.AccessDenied", "message": "invalid clientId or secret"},
                status=403,
            )
        self.subscriptions = list(body.get("subscriptions") or ())
        ticket = secrets.token_hex(16)
        self._tickets.add(ticket)
        return web.json_response(
            {"endpoint": f"ws://127.0.0.1:{self._server.port}/connect", "ticket": ticket}
        )

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:  # single use
            return web.json_response({"code": "InvalidTicket"}, status=401)
        self._tickets.discard(ticket)
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.connections += 1
        self._sockets.append(socket)
        try:
            async for message in socket:
                if message.type != aiohttp.WSMsgType.TEXT:
                    continue
                ack = json.loads(message.data)
                waiting = self._acked.pop((ack.get("headers") or {}).get("messageId", ""), None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(ack)
        finally:
            self._sockets.remove(socket)
        return socket

    def drop_connections(self) -> None:
        async def drop() -> None:
            for socket in list(self._sockets):
                await socket.close()

        self._server.call(drop())

    # --- the API -------------------------------------------------------------------------

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        if (body.get("appKey"), body.get("appSecret")) != (self.client_id, self.client_secret):
            return web.json_response(
                {"code": "invalidClientIdOrSecret", "message": "无效的clientId或者clientSecret"},
                status=400,
            )
        token = secrets.token_hex(16)
        with self._lock:
            self.tokens.add(token)
            self.token_grants += 1
        return web.json_response({"accessToken": token, "expireIn": 7200})

    def _refusal(self, request: web.Request) -> web.Response | None:
        if request.headers.get("x-acs-dingtalk-access-token") not in self.tokens:
            return web.json_response(
                {
                    "code": "InvalidAuthentication",
                    "message": "不合法的access_token",
                    "requestid": "r",
                },
                status=400,
            )
        if self._limited > 0:
            self._limited -= 1
            return web.json_response(
                {"code": "Forbidden.AccessDenied.QpsLimitForApi", "message": "QPS limit"},
                status=403,
            )
        return None

    def _record(self, chat_id: str, via: str, text: str) -> str:
        message_id = f"pqk{next(self._ids)}"
        with self._lock:
            self.sent.append(Sent(chat_id, via, text, message_id))
        return message_id

    async def _session_send(self, request: web.Request) -> web.Response:
        with self._lock:
            found = self._sessions.get(request.query.get("session", ""))
        if found is None or found[1] < time.time():
            return web.json_response({"errcode": 300001, "errmsg": "session is invalid"})
        if self._limited > 0:
            self._limited -= 1
            return web.json_response({"errcode": 130101, "errmsg": "send too fast"})
        body = await request.json()
        kind = body.get("msgtype")
        text = (body.get(kind) or {}).get("text") or (body.get(kind) or {}).get("content") or ""
        self._record(found[0], "webhook", str(text))
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    async def _to_people(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        param = json.loads(body.get("msgParam") or "{}")
        invalid = []
        for staff_id in body.get("userIds") or ():
            person = self.people.get(staff_id)
            if person is None or not person.in_organisation:
                invalid.append(staff_id)
            else:
                self._record(staff_id, "api", str(param.get("text") or param.get("content") or ""))
        return web.json_response(
            {
                "processQueryKey": secrets.token_hex(8),
                "invalidStaffIdList": invalid,
                "flowControlledStaffIdList": [],
            }
        )

    async def _to_group(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        if body.get("openConversationId") != GROUP:
            return web.json_response(
                {"code": "resource.not.found", "message": "robot is not in the group"}, status=400
            )
        param = json.loads(body.get("msgParam") or "{}")
        key = self._record(GROUP, "api", str(param.get("text") or param.get("content") or ""))
        return web.json_response({"processQueryKey": key})

    async def _download_url(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        if body.get("downloadCode") not in self.files or body.get("robotCode") != self.client_id:
            return web.json_response(
                {"code": "invalidParameter", "message": "downloadCode"}, status=400
            )
        return web.json_response({"downloadUrl": f"{self.url}/files/{body['downloadCode']}"})

    async def _file(self, request: web.Request) -> web.Response:
        data, mime = self.files[request.match_info["code"]]
        return web.Response(body=data, content_type=mime)
