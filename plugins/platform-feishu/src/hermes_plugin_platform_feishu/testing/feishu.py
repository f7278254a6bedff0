"""Feishu's open platform on loopback for tests, from its public API reference and
lark-oapi's source (which talks to it unmodified):

- the long connection: ``POST /callback/ws/endpoint`` (the app's id and secret checked;
  a ``ClientConfig`` with all four keys) and a WebSocket of protobuf ``pbbp2.Frame``
  messages: pings answered with pongs, events pushed as DATA frames with the five headers
  the SDK requires, acknowledgements collected (a card callback's answer rides in one, as
  base64 JSON); a connection can be dropped to see the client come back;
- HTTP callbacks to the app: events encrypted with the encrypt key as Feishu does
  (AES-256-CBC, the key's SHA-256, a random IV in front, base64), signed
  (``X-Lark-Signature``: SHA-256 of timestamp, nonce, key and body) and carrying the
  verification token; ``url_verification``; and forged ones (a wrong signature, token or
  key);
- the API: the tenant token endpoint (top-level ``tenant_access_token`` and ``expire``),
  ``bot/v3/info``, messages created (with ``uuid`` idempotency), replied to (in a thread
  or not) and patched (cards), images and files uploaded, message resources downloaded;
  errors as ``{code, msg}``: 99991663 for a token it did not issue (or revoked), 99991400
  when limited, 230002 for a chat the bot is not in.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

import aiohttp
from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["BOT_OPEN_ID", "FakeFeishu", "Sent"]

APP_ID = "cli_hermes_test"
BOT_OPEN_ID = "ou_hermes_bot"
SERVICE_ID = "7"
GROUP = "oc_team"
ACK_SECONDS = 3.0
"""How long Feishu waits for an event's acknowledgement (or a card callback's answer)."""
CARD_BYTES = 30 * 1024
UUID_CHARS = 50


@dataclass
class Sent:
    """A message the app made through the API."""

    message_id: str
    chat_id: str
    msg_type: str
    content: dict[str, Any]
    reply_to: str = ""
    in_thread: bool = False
    updates: int = 0

    @property
    def text(self) -> str:
        if self.msg_type == "interactive":
            elements = (self.content.get("body") or {}).get("elements") or ()
            return "\n".join(str(e.get("content")) for e in elements if e.get("tag") == "markdown")
        return str(self.content.get("text") or "")

    @property
    def buttons(self) -> list[dict[str, Any]]:
        elements = (self.content.get("body") or {}).get("elements") or ()
        return [e for e in elements if e.get("tag") == "button"]


def _frame(method: int, headers: dict[str, str], payload: bytes = b"") -> bytes:
    from lark_oapi.ws.pb.pbbp2_pb2 import Frame

    frame = Frame()
    frame.SeqID = 0
    frame.LogID = 0
    frame.service = int(SERVICE_ID)
    frame.method = method
    for key, value in headers.items():
        header = frame.headers.add()
        header.key = key
        header.value = value
    if payload:
        frame.payload = payload
    return bytes(frame.SerializeToString())


def encrypt(key: str, plaintext: bytes) -> str:
    """As Feishu encrypts an event (what lark-oapi's AESCipher decrypts)."""
    from Crypto.Cipher import AES

    iv = os.urandom(16)
    pad = 16 - len(plaintext) % 16
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(plaintext + bytes([pad]) * pad)).decode()


class FakeFeishu:
    """Feishu for one app (``app_id``/``app_secret``) whose bot is :data:`BOT_OPEN_ID`.
    ``mode``: ``websocket`` pushes events over the long connection, ``webhook`` posts them
    to ``callback_url`` (set it once the gateway's listener is known)."""

    def __init__(
        self,
        *,
        mode: str = "websocket",
        encrypt_key: str = "",
        verification_token: str = "v-token",
    ) -> None:
        self.app_id = APP_ID
        self.app_secret = secrets.token_hex(16)
        self.mode = mode
        self.encrypt_key = encrypt_key
        self.verification_token = verification_token
        self.callback_url = ""
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.token_grants = 0
        self.sent: dict[str, Sent] = {}
        self.threads: dict[str, str] = {}
        """Topics (``omt_...``) people wrote in: their chats."""
        self.refuse_connections = False
        """The long connection's endpoint refuses the app (as when its secret was reset)."""
        self.messages: dict[str, str] = {}
        """Users' messages: their chats (a reply to a withdrawn one is refused)."""
        self._uuids: dict[str, str] = {}
        self.files: dict[str, tuple[bytes, str]] = {}
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.groups: set[str] = {GROUP}
        self._limited = 0
        self.connections = 0
        self.pings = 0
        self._sockets: list[web.WebSocketResponse] = []
        self.acks: dict[str, dict[str, Any]] = {}
        self._acked: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.user_agents: list[str] = []
        self._last: dict[str, Any] | None = None
        self.toasts: list[str] = []
        app = web.Application()
        app.router.add_post("/open-apis/auth/v3/tenant_access_token/internal", self._token)
        app.router.add_post("/callback/ws/endpoint", self._endpoint)
        app.router.add_get("/ws", self._socket)
        app.router.add_get("/open-apis/bot/v3/info", self._bot_info)
        app.router.add_post("/open-apis/im/v1/messages", self._create)
        app.router.add_post("/open-apis/im/v1/messages/{id}/reply", self._reply)
        app.router.add_patch("/open-apis/im/v1/messages/{id}", self._patch)
        app.router.add_get("/open-apis/im/v1/messages/{id}/resources/{key}", self._resource)
        app.router.add_post("/open-apis/im/v1/images", self._upload)
        app.router.add_post("/open-apis/im/v1/files", self._upload)
        self._server = LoopbackApp(app, "fake-feishu")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    # --- people and chats --------------------------------------------------------------

    @staticmethod
    def dm(open_id: str) -> str:
        """The p2p chat of the bot with ``open_id``."""
        return f"oc_p2p_{open_id}"

    def sent_to(self, chat_id: str) -> list[Sent]:
        with self._lock:
            return [m for m in self.sent.values() if m.chat_id == chat_id]

    def limit(self, times: int = 1) -> None:
        """The next ``times`` sends are refused as over the rate limit."""
        self._limited = times

    def revoke_tokens(self) -> None:
        with self._lock:
            self.tokens.clear()

    # --- events ------------------------------------------------------------------------

    def _event(self, kind: str, event: dict[str, Any]) -> dict[str, Any]:
        header = {
            "event_id": secrets.token_hex(16),
            "event_type": kind,
            "create_time": str(int(time.time() * 1000)),
            "token": self.verification_token,
            "app_id": self.app_id,
            "tenant_key": "tenant",
        }
        return {"schema": "2.0", "header": header, "event": event}

    def user_says(
        self,
        open_id: str,
        text: str = "",
        *,
        chat: str = "",
        mention: bool = False,
        thread: str = "",
        kind: str = "text",
        content: dict[str, Any] | None = None,
        user_id: str = "",
    ) -> tuple[int, Any]:
        """``open_id`` writes in ``chat`` (default: their p2p chat with the bot),
        mentioning the bot first if ``mention``; returns what the app answered."""
        chat_id = chat or self.dm(open_id)
        mentions = []
        if mention:
            text = f"@_user_1 {text}"
            mentions.append(
                {
                    "key": "@_user_1",
                    "id": {"open_id": BOT_OPEN_ID},
                    "name": "Hermes",
                    "tenant_key": "tenant",
                }
            )
        message_id = f"om_{next(self._ids)}_{secrets.token_hex(4)}"
        message: dict[str, Any] = {
            "message_id": message_id,
            "chat_id": chat_id,
            "chat_type": "group" if chat_id in self.groups else "p2p",
            "message_type": kind,
            "content": json.dumps(
                content if content is not None else {"text": text}, ensure_ascii=False
            ),
            "mentions": mentions,
            "create_time": str(int(time.time() * 1000)),
        }
        with self._lock:
            self.messages[message_id] = chat_id
            if thread:
                message["thread_id"] = thread
                self.threads[thread] = chat_id
        sender = {
            "sender_id": {
                "open_id": open_id,
                "user_id": user_id or None,
                "union_id": f"on_{open_id}",
            },
            "sender_type": "user",
            "tenant_key": "tenant",
        }
        return self.push(
            self._event("im.message.receive_v1", {"sender": sender, "message": message})
        )

    def user_sends_file(
        self,
        open_id: str,
        data: bytes,
        name: str,
        mime: str,
        *,
        chat: str = "",
        image: bool = False,
    ) -> tuple[int, Any]:
        """A file message (its name kept); ``image``: an image message (a photo sent as
        one: no name)."""
        key = f"{'img' if image else 'file'}_{secrets.token_hex(6)}"
        with self._lock:
            self.files[key] = (data, mime)
        content = {"image_key": key} if image else {"file_key": key, "file_name": name}
        return self.user_says(
            open_id, chat=chat, kind="image" if image else "file", content=content
        )

    def press(self, open_id: str, card: Sent, choice: str) -> tuple[int, Any]:
        """``open_id`` presses ``card``'s button for ``choice``; the card is updated with
        what the app answers, as Feishu does."""
        (button,) = [b for b in card.buttons if b["behaviors"][0]["value"].get("choice") == choice]
        event = {
            "operator": {"open_id": open_id, "tenant_key": "tenant"},
            "token": f"c-{secrets.token_hex(8)}",
            "action": {"tag": "button", "value": button["behaviors"][0]["value"]},
            "host": "im_message",
            "context": {"open_message_id": card.message_id, "open_chat_id": card.chat_id},
        }
        status, answer = self.push(self._event("card.action.trigger", event))
        if isinstance(answer, dict):
            if (answer.get("toast") or {}).get("content"):
                self.toasts.append(str(answer["toast"]["content"]))
            if (answer.get("card") or {}).get("type") == "raw":
                with self._lock:
                    card.content = answer["card"]["data"]
                    card.updates += 1
        return status, answer

    def deliver_again(self) -> tuple[int, Any]:
        """The last event once more, as Feishu redelivers one it thinks unacknowledged."""
        assert self._last is not None
        return self.push(self._last)

    def push(self, event: dict[str, Any]) -> tuple[int, Any]:
        """Deliver ``event``: over the long connection (the acknowledgement's code and
        decoded data) or as a callback (the HTTP status and body)."""
        self._last = event
        if self.mode == "websocket":
            return self._server.call(self._push_frame(event))
        return self.post(event)

    def post(
        self,
        event: dict[str, Any],
        *,
        signature: str | None = None,
        token: str | None = None,
        key: str | None = None,
        garbled: bool = False,
    ) -> tuple[int, Any]:
        """POST ``event`` to ``callback_url`` as Feishu does; the keyword arguments forge it
        (another signature, verification token or encrypt key; ciphertext that is not)."""
        if token is not None:
            event = json.loads(json.dumps(event))
            if "header" in event:
                event["header"]["token"] = token
            else:
                event["token"] = token
        body = json.dumps(event, ensure_ascii=False).encode()
        encrypt_key = self.encrypt_key if key is None else key
        if encrypt_key:
            ciphertext = encrypt(encrypt_key, body)
            if garbled:
                ciphertext = base64.b64encode(os.urandom(48)).decode()
            body = json.dumps({"encrypt": ciphertext}).encode()
        stamp, nonce = str(int(time.time())), secrets.token_hex(8)
        headers = {"Content-Type": "application/json; charset=utf-8"}
        headers["X-Lark-Request-Timestamp"] = stamp
        headers["X-Lark-Request-Nonce"] = nonce
        signed = (stamp + nonce + (self.encrypt_key or "")).encode() + body
        headers["X-Lark-Signature"] = signature or hashlib.sha256(signed).hexdigest()
        return self._server.call(self._post(body, headers))

    def verify_url(self, challenge: str = "") -> tuple[int, Any]:
        """The ``url_verification`` Feishu posts when the callback URL is saved."""
        event = {
            "challenge": challenge or secrets.token_hex(8),
            "token": self.verification_token,
            "type": "url_verification",
        }
        return self.post(event)

    async def _post(self, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.callback_url, data=body, headers=headers) as response,
        ):
            raw = await response.read()
            try:
                return response.status, json.loads(raw)
            except ValueError:
                return response.status, raw.decode(errors="replace")

    async def _push_frame(self, event: dict[str, Any]) -> tuple[int, Any]:
        for _ in range(100):  # a moment for a client that is reconnecting
            if self._sockets:
                break
            await asyncio.sleep(0.1)
        socket = self._sockets[-1]
        frame_id = secrets.token_hex(8)
        headers = {"type": "event", "message_id": frame_id, "trace_id": "t", "sum": "1", "seq": "0"}
        acked: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acked[frame_id] = acked
        await socket.send_bytes(_frame(1, headers, json.dumps(event, ensure_ascii=False).encode()))
        try:
            ack = await asyncio.wait_for(acked, ACK_SECONDS)
        except TimeoutError:
            return 0, None
        data = json.loads(base64.b64decode(ack["data"])) if ack.get("data") else None
        return int(ack.get("code", 0)), data

    def drop_connections(self) -> None:
        """Close every long connection, as Feishu does when it moves a client."""

        async def drop() -> None:
            for socket in list(self._sockets):
                await socket.close()

        self._server.call(drop())

    # --- the long connection -------------------------------------------------------------

    def _credentials_ok(self, app_id: object, secret: object) -> bool:
        return app_id == self.app_id and secret == self.app_secret

    async def _endpoint(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.user_agents.append(request.headers.get("User-Agent", ""))
        if self.refuse_connections or not self._credentials_ok(
            body.get("AppID"), body.get("AppSecret")
        ):
            return web.json_response({"code": 10003, "msg": "invalid app_id or app_secret"})
        config = {
            "ReconnectCount": -1,
            "ReconnectInterval": 1,
            "ReconnectNonce": 0,
            "PingInterval": 5,
        }
        address = f"ws://127.0.0.1:{self._server.port}/ws?device_id=d{next(self._ids)}&service_id={SERVICE_ID}"
        return web.json_response(
            {"code": 0, "msg": "ok", "data": {"URL": address, "ClientConfig": config}}
        )

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        from lark_oapi.ws.pb.pbbp2_pb2 import Frame

        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.connections += 1
        self._sockets.append(socket)
        try:
            async for message in socket:
                if message.type != aiohttp.WSMsgType.BINARY:
                    continue
                frame = Frame()
                frame.ParseFromString(message.data)
                headers = {h.key: h.value for h in frame.headers}
                if frame.method == 0 and headers.get("type") == "ping":
                    self.pings += 1
                    await socket.send_bytes(_frame(0, {"type": "pong"}))
                elif frame.method == 1:
                    ack = json.loads(frame.payload or b"{}")
                    self.acks[headers.get("message_id", "")] = ack
                    waiting = self._acked.pop(headers.get("message_id", ""), None)
                    if waiting is not None and not waiting.done():
                        waiting.set_result(ack)
        finally:
            self._sockets.remove(socket)
        return socket

    # --- the API -----------------------------------------------------------------------

    @staticmethod
    def _answer(
        code: int = 0, msg: str = "success", status: int = 200, **more: Any
    ) -> web.Response:
        return web.json_response({"code": code, "msg": msg, **more}, status=status)

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        if not self._credentials_ok(body.get("app_id"), body.get("app_secret")):
            return self._answer(10014, "app secret invalid", 400)
        token = f"t-{secrets.token_hex(12)}"
        with self._lock:
            self.tokens.add(token)
            self.token_grants += 1
        return self._answer(0, "ok", tenant_access_token=token, expire=7200)

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        return header.startswith("Bearer ") and header[7:] in self.tokens

    def _refusal(self, request: web.Request) -> web.Response | None:
        if not self._authorized(request):
            return self._answer(99991663, "Invalid access token for authorization", 400)
        return None

    async def _bot_info(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        bot = {"app_name": "Hermes", "open_id": BOT_OPEN_ID, "activate_status": 2}
        return self._answer(0, "ok", bot=bot)

    def _made(self, body: dict[str, Any], chat_id: str, reply_to: str = "") -> web.Response:
        if self._limited > 0:
            self._limited -= 1
            return self._answer(99991400, "request trigger frequency limit", 400)
        content_bytes = len(str(body.get("content") or "").encode())
        if content_bytes > CARD_BYTES:
            return self._answer(230025, "The message you sent is too long.", 400)
        if len(str(body.get("uuid") or "")) > UUID_CHARS:
            return self._answer(99992402, "field validation failed: uuid", 400)
        with self._lock:
            key = str(body.get("uuid") or "")
            if key and key in self._uuids:  # the same uuid within the hour: the same message
                return self._answer(data={"message_id": self._uuids[key], "chat_id": chat_id})
            if chat_id not in self.groups and not chat_id.startswith("oc_p2p_"):
                return self._answer(230002, "Bot/User can NOT be out of the chat.", 400)
            message_id = f"om_bot_{next(self._ids)}"
            try:
                content = json.loads(str(body.get("content") or "{}"))
            except ValueError:
                return self._answer(230001, "invalid message content", 400)
            self.sent[message_id] = Sent(
                message_id,
                chat_id,
                str(body.get("msg_type") or ""),
                content,
                reply_to,
                bool(body.get("reply_in_thread")),
            )
            if key:
                self._uuids[key] = message_id
        return self._answer(data={"message_id": message_id, "chat_id": chat_id})

    async def _create(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        kind, target = request.query.get("receive_id_type"), str(body.get("receive_id") or "")
        if kind != "chat_id":  # open_id, union_id, user_id, email take one person: not here
            return self._answer(99992402, "field validation failed: receive_id_type", 400)
        return self._made(body, target)

    async def _reply(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        original = request.match_info["id"]
        chat_id = self._chat_of_message(original)
        if not chat_id:
            return self._answer(230011, "The message was withdrawn.", 400)
        return self._made(body, chat_id, reply_to=original)

    def _chat_of_message(self, message_id: str) -> str:
        """The chat of a user's message or the bot's own; '' for one withdrawn."""
        with self._lock:
            if message_id in self.sent:
                return self.sent[message_id].chat_id
            return self.messages.get(message_id, "")

    async def _patch(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        with self._lock:
            message = self.sent.get(request.match_info["id"])
            if message is None:
                return self._answer(230011, "The message was withdrawn.", 400)
            shared = (message.content.get("config") or {}).get("update_multi")
            if message.msg_type != "interactive" or not shared:
                return self._answer(230099, "only shared cards (update_multi) can be patched", 400)
            message.content = json.loads(str(body.get("content") or "{}"))
            message.updates += 1
        return self._answer()

    async def _resource(self, request: web.Request) -> web.StreamResponse:
        if refused := self._refusal(request):
            return refused
        found = self.files.get(request.match_info["key"])
        if found is None or request.query.get("type") not in ("image", "file"):
            return self._answer(234003, "File not in msg.", 400)
        data, mime = found
        return web.Response(
            body=data,
            headers={"Content-Type": mime, "Content-Disposition": 'attachment; filename="file"'},
        )

    async def _upload(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        form = await request.post()
        part = form.get("image") or form.get("file")
        if not isinstance(part, web.FileField):
            return self._answer(234001, "Invalid request param.", 400)
        data = part.file.read()
        image = "image" in form
        key = f"{'img' if image else 'file'}_up_{next(self._ids)}"
        with self._lock:
            self.uploads[key] = (str(form.get("file_name") or part.filename), data)
        return self._answer(data={"image_key" if image else "file_key": key})

    def files_in(self, chat_id: str) -> list[tuple[str, bytes]]:
        """The files and images the app sent to ``chat_id``: (name, content)."""
        found = []
        for message in self.sent_to(chat_id):
            key = message.content.get("file_key") or message.content.get("image_key")
            if message.msg_type in ("file", "audio", "image") and key in self.uploads:
                found.append(self.uploads[str(key)])
        return found
