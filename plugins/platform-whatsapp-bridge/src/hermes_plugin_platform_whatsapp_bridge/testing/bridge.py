"""A loopback WhatsApp bridge, written from hermes-agent 0.19's ``bridge.js`` and
``bridge_helpers.js`` (Baileys underneath): ``GET /health``, ``GET /messages`` (the queue,
handed over and forgotten at once, the newest 100 kept), ``POST /send``, ``/send-media``
(a file path on this machine), ``/send-poll``, ``/typing`` and ``GET /chat/ID``; loopback
Host headers only. Events have ``extractBridgeEvent``'s fields, and the files people send
are written to a media folder, as the bridge writes them.

It says no as the bridge does: 503 while it is not connected to WhatsApp, 400 for a request
missing its fields, 404 for a file that is not there; a poll with fewer than 2 options. It
filters as the bridge does in bot mode: a message passes only with ``dm_policy="pairing"``
(its ``WHATSAPP_DM_POLICY``, which the docs have users set) or from a number in
``allowed_users`` (its ``WHATSAPP_ALLOWED_USERS``).

    with FakeBridge(media_dir) as bridge:
        bridge.user_says("15551234567", "hello")
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from hermes_testkit.loopback import LoopbackHTTP

__all__ = ["BOT", "FakeBridge", "Sent"]

BOT = "15550001111"
"""The linked account's number."""
MAX_QUEUE = 100
_KIND = {"image": ("img_", "image"), "audio": ("aud_", "audio"), "ptt": ("aud_", "ptt")}


@dataclass
class Sent:
    """What the bot sent through the bridge."""

    message_id: str
    chat_id: str
    text: str = ""
    file: tuple[str, bytes, str] | None = None
    """(file name, content, media type) of a file sent."""
    poll: tuple[str, list[str]] | None = None
    """(question, options) of a poll."""


@dataclass
class _Person:
    number: str
    lid: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)


class FakeBridge(LoopbackHTTP):
    def __init__(
        self, media_dir: Path, *, dm_policy: str = "pairing", allowed_users: tuple[str, ...] = ()
    ) -> None:
        super().__init__()
        self.media_dir = media_dir
        self.dm_policy, self.allowed_users = dm_policy, allowed_users
        self.filtered = 0
        """Messages the bridge's own filter dropped."""
        self.timeouts = 0
        """The next this many sends time out in the bridge (500), as its 60 s race does:
        the message may still go out."""
        self.connected = True
        self.sent: list[Sent] = []
        self.typing: list[str] = []
        self.drains = 0
        self._queue: deque[dict[str, Any]] = deque(maxlen=MAX_QUEUE)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._last: dict[str, Any] | None = None
        self._started = time.monotonic()

    def _id(self) -> str:
        return f"3EB0{next(self._ids):012X}"

    # --- the people ----------------------------------------------------------------------

    def _event(
        self,
        number: str,
        body: str,
        *,
        group: str | None = None,
        lid: str | None = None,
        **more: Any,
    ) -> dict[str, Any]:
        sender = f"{lid}@lid" if lid else f"{number}@s.whatsapp.net"
        chat = group or sender
        return {
            "messageId": self._id(),
            "chatId": chat,
            "senderId": sender,
            "senderName": "Kit Person",
            "chatName": chat.split("@")[0] if group else "Kit Person",
            "isGroup": bool(group),
            "body": body,
            "hasMedia": False,
            "mediaType": "",
            "mime": "",
            "fileName": "",
            "nativeType": "conversation",
            "nativeMetadata": {},
            "mediaUrls": [],
            "mentionedIds": [],
            "quotedMessageId": None,
            "quotedParticipant": None,
            "quotedRemoteJid": None,
            "quotedText": "",
            "hasQuotedMessage": False,
            "botIds": [f"{BOT}@0@s.whatsapp.net", "77700011122@lid"],
            "timestamp": int(time.time()),
            "fromOwner": False,
        } | more

    def _deliver(self, event: dict[str, Any]) -> dict[str, Any]:
        sender = str(event["senderId"]).split("@")[0]
        passes = self.dm_policy == "pairing" or "*" in self.allowed_users
        if not passes and sender not in self.allowed_users and event["mediaType"] != "poll_update":
            self.filtered += 1  # bot mode: its allowlist, before anything is queued
            return event
        with self._lock:  # the newest 100: an older one is dropped without a word
            self._queue.append(event)
            self._last = event
        return event

    def user_says(
        self,
        number: str,
        text: str,
        *,
        group: str | None = None,
        mention: bool = False,
        reply_to: Sent | None = None,
        lid: str | None = None,
    ) -> dict[str, Any]:
        more: dict[str, Any] = {}
        if mention:
            text = f"@{BOT} {text}"
            more["mentionedIds"] = [f"{BOT}@s.whatsapp.net"]
            more["nativeType"] = "extendedTextMessage"
        if reply_to is not None:
            more |= {
                "quotedMessageId": reply_to.message_id,
                "quotedParticipant": f"{BOT}@s.whatsapp.net",
                "quotedText": reply_to.text,
                "hasQuotedMessage": True,
            }
        return self._deliver(self._event(number, text, group=group, lid=lid, **more))

    def user_sends_file(
        self, number: str, data: bytes, name: str, mime: str, *, kind: str = "document"
    ) -> dict[str, Any]:
        """A file, written to the media folder as the bridge writes it
        (``<prefix>_<12 hex>_<name>``); ``kind``: image, audio, ptt (a voice note), document."""
        prefix, media = _KIND.get(kind, ("doc_", "document"))
        path = self.media_dir / f"{prefix}{secrets.token_hex(6)}_{name}"
        path.write_bytes(data)
        native = {"image": "imageMessage", "ptt": "pttMessage", "audio": "audioMessage"}
        more: dict[str, Any] = {
            "hasMedia": True,
            "mediaType": media,
            "mime": mime,
            "fileName": name if media == "document" else "",
            "nativeType": native.get(kind, "documentMessage"),
            "mediaUrls": [str(path)],
        }
        return self._deliver(self._event(number, f"[{media} received]", **more))

    def vote(self, number: str, poll: Sent, option: str | None) -> None:
        """A vote in one of the bot's polls (None: the vote taken back)."""
        assert poll.poll is not None
        chosen = [option] if option else []
        update = {"pollId": poll.message_id, "selectedOptions": chosen, "aggregation": []}
        more: dict[str, Any] = {
            "messageId": f"{poll.message_id}:update:{int(time.time() * 1000)}",
            "mediaType": "poll_update",
            "nativeType": "pollUpdateMessage",
            "nativeMetadata": {"pollUpdate": update},
            "quotedMessageId": poll.message_id,
            "hasQuotedMessage": True,
            "botIds": [],
        }
        self._deliver(self._event(number, ", ".join(chosen), **more))

    def deliver_again(self) -> None:
        assert self._last is not None
        self._deliver(dict(self._last))

    def sent_to(self, number: str) -> list[Sent]:
        with self._lock:
            return [s for s in self.sent if s.chat_id.split("@")[0] == number]

    # --- serving -------------------------------------------------------------------------

    def _json(self, handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        self.reply(handler, status, body, kind="application/json; charset=utf-8")  # Express's

    def _loopback(self, handler: BaseHTTPRequestHandler) -> bool:
        host = str(handler.headers.get("Host") or "")
        name = (
            host.rsplit(":", 1)[0]
            if not host.startswith("[")
            else host.split("]", maxsplit=1)[0] + "]"
        )
        if not host:
            self._json(handler, 400, {"error": "Missing Host header"})
        elif name not in ("localhost", "127.0.0.1", "[::1]", "::1"):
            said = "Invalid Host header. Bridge accepts loopback hosts only."
            self._json(handler, 400, {"error": said})
        else:
            return True
        return False

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        if not self._loopback(handler):
            return
        path = urlsplit(handler.path).path
        if path == "/health":
            body = {
                "status": "connected" if self.connected else "disconnected",
                "queueLength": len(self._queue),
                "uptime": time.monotonic() - self._started,
                "scriptHash": "0123456789abcdef",
            }
            self._json(handler, 200, body)
        elif path == "/messages":
            with self._lock:  # handed over and forgotten, as the bridge's splice
                events = list(self._queue)
                self._queue.clear()
                self.drains += 1
            self._json(handler, 200, events)
        elif path.startswith("/chat/"):
            chat = unquote(path.removeprefix("/chat/"))
            group = chat.endswith("@g.us")
            self._json(
                handler, 200, {"name": chat.split("@")[0], "isGroup": group, "participants": []}
            )
        else:
            self._json(handler, 404, {"error": "Not Found"})

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        if not self._loopback(handler):
            return
        path = urlsplit(handler.path).path
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError:
            self._json(handler, 400, {"error": "Bad Request"})
            return
        routes = {
            "/send": self._send,
            "/send-media": self._send_media,
            "/send-poll": self._send_poll,
            "/typing": self._typing,
        }
        route = routes.get(path)
        if route is None:
            self._json(handler, 404, {"error": "Not Found"})
        elif not self.connected:
            self._json(
                handler,
                503,
                {"error": "Not connected" if path == "/typing" else "Not connected to WhatsApp"},
            )
        else:
            route(handler, body)

    def _remember(self, sent: Sent) -> None:
        with self._lock:
            self.sent.append(sent)

    def _send(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not body.get("chatId") or not body.get("message"):
            self._json(handler, 400, {"error": "chatId and message are required"})
            return
        if self.timeouts:
            self.timeouts -= 1
            self._json(handler, 500, {"error": "sendMessage timed out after 60s"})
            return
        sent = Sent(self._id(), str(body["chatId"]), str(body["message"]))
        self._remember(sent)
        self._json(
            handler,
            200,
            {"success": True, "messageId": sent.message_id, "messageIds": [sent.message_id]},
        )

    def _send_media(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not body.get("chatId") or not body.get("filePath"):
            self._json(handler, 400, {"error": "chatId and filePath are required"})
            return
        path = Path(str(body["filePath"]))
        if not path.is_file():
            self._json(handler, 404, {"error": f"File not found: {path}"})
            return
        kind = str(body.get("mediaType") or "document")
        name = str(body.get("fileName") or path.name)
        sent = Sent(self._id(), str(body["chatId"]), str(body.get("caption") or ""))
        sent.file = (name, path.read_bytes(), kind)
        self._remember(sent)
        self._json(handler, 200, {"success": True, "messageId": sent.message_id})

    def _send_poll(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        options = [str(o).strip() for o in body.get("options") or () if str(o).strip()]
        if not body.get("chatId") or not body.get("question"):
            self._json(handler, 400, {"error": "chatId, question, and options are required"})
            return
        if not 2 <= len(options) <= 12:
            self._json(handler, 400, {"error": "Poll must have between 2 and 12 options"})
            return
        sent = Sent(self._id(), str(body["chatId"]), poll=(str(body["question"]), options))
        self._remember(sent)
        self._json(handler, 200, {"success": True, "messageId": sent.message_id})

    def _typing(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not body.get("chatId"):
            self._json(handler, 400, {"error": "chatId required"})
            return
        self.typing.append(str(body["chatId"]))
        self._json(handler, 200, {"success": True})
