"""A loopback WhatsApp Cloud API, written from Meta's public reference (the messages, media
and webhooks pages) and checked against what pywa, the Python client, sends and reads.

The Graph API side (``/v{version}/{phone_id}/messages``, ``/{phone_id}/media``,
``/{media_id}`` and the media's download address) checks the bearer token, keeps what the
bot sent, and says no as Meta does: a wrong token (190), a refusal on cue, and a free-form
message to someone whose 24-hour window has closed, taken and then reported ``failed``
(131047) in a status webhook. The webhook side plays the people: their messages, files and
button presses are POSTed to the bot's webhook, signed with the app secret, and POSTed
again until the bot answers 200, as Meta does (so a message sent while the gateway is down
arrives when it is back).

    with FakeWhatsApp() as meta:
        meta.webhook_url = "http://127.0.0.1:8644/whatsapp/webhook"
        meta.user_says("15551234567", "hello")
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import hmac
import itertools
import json
import queue
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from hermes_testkit.loopback import LoopbackHTTP

__all__ = ["APP_SECRET", "PHONE_ID", "TOKEN", "VERIFY_TOKEN", "FakeWhatsApp", "SentMessage"]

PHONE_ID = "106540352242922"
TOKEN = "EAAkit-system-user-token"
APP_SECRET = "kit-app-secret-0123456789abcdef"
VERIFY_TOKEN = "kit-verify-token"
WINDOW_SECONDS = 24 * 3600.0
RETRY_SECONDS = 0.2
UPLOADABLE = frozenset(
    {
        "image/jpeg", "image/png", "image/webp",
        "audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg",
        "video/mp4", "video/3gpp",
        "text/plain", "application/pdf", "application/msword", "application/vnd.ms-excel",
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    }
)  # fmt: skip
"""The media types the Cloud API takes (its "Supported media types")."""


def _problem(kind: str, content: dict[str, Any]) -> str | None:
    """What Meta refuses in a message (Parameter value is not valid), or None."""
    if kind == "text" and len(str(content.get("body") or "")) > 4096:
        return "text.body is longer than 4096 characters"
    if kind != "interactive":
        return None
    if len(str((content.get("body") or {}).get("text") or "")) > 1024:
        return "interactive.body.text is longer than 1024 characters"
    action = content.get("action") or {}
    if content.get("type") == "button":
        buttons = [b.get("reply") or {} for b in action.get("buttons") or ()]
        titles = [str(b.get("title") or "") for b in buttons]
        if not 1 <= len(buttons) <= 3:
            return "an interactive message has one to three reply buttons"
        if any(not t or len(t) > 20 for t in titles) or len(set(titles)) != len(titles):
            return "button titles are 1 to 20 characters, and each its own"
        if any(len(str(b.get("id") or "")) > 256 for b in buttons):
            return "a button id is at most 256 characters"
    elif content.get("type") == "list":
        rows = [r for s in action.get("sections") or () for r in s.get("rows") or ()]
        if not 1 <= len(rows) <= 10 or not 1 <= len(str(action.get("button") or "")) <= 20:
            return "a list has one to ten rows and a button of 1 to 20 characters"
        if any(not r.get("title") or len(str(r["title"])) > 24 for r in rows):
            return "a row title is 1 to 24 characters"
        if any(len(str(r.get("description") or "")) > 72 for r in rows):
            return "a row description is at most 72 characters"
        if any(len(str(r.get("id") or "")) > 200 for r in rows):
            return "a row id is at most 200 characters"
    return None


@dataclass
class SentMessage:
    """A message the bot sent, as the person's phone shows it."""

    id: str
    to: str
    type: str
    text: str = ""
    """The text, or an interactive message's body, or a file's caption."""
    buttons: list[tuple[str, str]] = field(default_factory=list)
    """(id, title) of each reply button or list row."""
    file: tuple[str, bytes, str] | None = None
    """(name, content, type) of a file."""
    reply_to: str | None = None


def _graph_error(code: int, message: str, kind: str = "OAuthException") -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": kind,
            "code": code,
            "error_data": {"messaging_product": "whatsapp", "details": message},
            "fbtrace_id": "AkitTrace",
        }
    }


class FakeWhatsApp(LoopbackHTTP):
    """Context manager: the Graph API on 127.0.0.1 (an ephemeral port) and a webhook sender."""

    def __init__(self, app_secret: str = APP_SECRET, report_statuses: bool = True) -> None:
        super().__init__()
        self.app_secret = app_secret
        self.report_statuses = report_statuses
        self.webhook_url: str | None = None
        self.messages: list[SentMessage] = []
        self.reads: list[str] = []
        """Message ids marked read (with the typing indicator)."""
        self.webhook_answers: list[int] = []
        """The bot's status code for each webhook POST (0: nothing listened)."""
        self.refusals: list[tuple[int, int, str] | None] = []
        """(HTTP status, Graph error code, message) for the next sends, in order; None
        lets that one through."""
        self.last_wrote: dict[str, float] = {}
        self._media: dict[str, tuple[bytes, str, str]] = {}
        self._ids = itertools.count(1)
        self._last_payload: dict[str, Any] | None = None
        self._outbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._lock = threading.Lock()

    @property
    def api_url(self) -> str:
        return self.url

    def _id(self, prefix: str = "wamid.kit") -> str:
        return f"{prefix}{next(self._ids):06d}"

    # --- the people ----------------------------------------------------------------------

    def _payload(self, value: dict[str, Any]) -> dict[str, Any]:
        metadata = {"display_phone_number": "15550001111", "phone_number_id": PHONE_ID}
        change = {
            "field": "messages",
            "value": {"messaging_product": "whatsapp", "metadata": metadata, **value},
        }
        return {
            "object": "whatsapp_business_account",
            "entry": [{"id": "WABA-KIT", "changes": [change]}],
        }

    def _from(self, user: str, message: dict[str, Any], name: str = "Kit Person") -> str:
        message_id = self._id()
        self.last_wrote[user] = time.time()
        body = {"from": user, "id": message_id, "timestamp": str(int(time.time())), **message}
        contacts = [{"profile": {"name": name}, "wa_id": user}]
        self.deliver(self._payload({"contacts": contacts, "messages": [body]}))
        return message_id

    def user_says_at_once(
        self, user: str, texts: list[str], *, sent_at: float | None = None
    ) -> list[str]:
        """Several messages in one POST, as Meta batches them (``sent_at``: when they were
        written, for a delivery that comes late)."""
        when = sent_at or time.time()
        self.last_wrote[user] = max(self.last_wrote.get(user, 0.0), when)
        bodies = [
            {"from": user, "id": self._id(), "timestamp": str(int(when)), "type": "text",
             "text": {"body": text}}
            for text in texts
        ]  # fmt: skip
        contacts = [{"profile": {"name": "Kit Person"}, "wa_id": user}]
        self.deliver(self._payload({"contacts": contacts, "messages": bodies}))
        return [str(body["id"]) for body in bodies]

    def user_says(self, user: str, text: str, *, reply_to: str | None = None) -> str:
        message: dict[str, Any] = {"type": "text", "text": {"body": text}}
        if reply_to:
            message["context"] = {"from": "15550001111", "id": reply_to}
        return self._from(user, message)

    def user_sends_file(
        self,
        user: str,
        data: bytes,
        name: str,
        mime: str,
        *,
        caption: str = "",
        voice: bool = False,
        as_document: bool = False,
    ) -> str:
        """A photo, a voice note or audio by its type, else (or ``as_document``) a document:
        only a document carries its file's name, as on WhatsApp."""
        media_id = self._id("media.kit")
        self._media[media_id] = (data, mime, name)
        if as_document:
            kind = "document"
        elif mime in ("image/jpeg", "image/png"):
            kind = "image"
        else:
            kind = "audio" if mime.startswith("audio/") else "document"
        body: dict[str, Any] = {
            "id": media_id,
            "mime_type": mime,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        if kind == "document":
            body["filename"] = name
        if kind != "audio" and caption:
            body["caption"] = caption
        if kind == "audio":
            body["voice"] = voice
        return self._from(user, {"type": kind, kind: body})

    def press(self, user: str, message: SentMessage, choice_id: str) -> str:
        title = dict(message.buttons)[choice_id]
        list_row = message.type == "interactive" and message.text.startswith("\x00list")
        kind = "list_reply" if list_row else "button_reply"
        return self._from(
            user,
            {
                "type": "interactive",
                "context": {"from": "15550001111", "id": message.id},
                "interactive": {"type": kind, kind: {"id": choice_id, "title": title}},
            },
        )

    def deliver_again(self) -> None:
        assert self._last_payload is not None, "nothing was delivered yet"
        self.deliver(self._last_payload)

    def deliver(self, payload: dict[str, Any]) -> None:
        """POST ``payload`` to the webhook, signed, until the bot answers 200."""
        self._last_payload = (
            payload
            if "messages" in payload["entry"][0]["changes"][0]["value"]
            else self._last_payload
        )
        self._outbox.put(payload)

    def sign(self, body: bytes, secret: str | None = None) -> str:
        digest = hmac.new((secret or self.app_secret).encode(), body, hashlib.sha256)
        return "sha256=" + digest.hexdigest()

    def post(self, body: bytes, signature: str | None) -> int:
        """One POST of ``body`` as it is, with ``signature`` (None: no header): the status."""
        assert self.webhook_url is not None, "set webhook_url to the bot's webhook first"
        headers = {"Content-Type": "application/json"}
        if signature is not None:
            headers["X-Hub-Signature-256"] = signature
        request = urllib.request.Request(self.webhook_url, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return 0

    def _send_loop(self) -> None:
        while True:
            payload = self._outbox.get()
            if payload is None:
                return
            body = json.dumps(payload).encode()
            while True:
                status = self.post(body, self.sign(body)) if self.webhook_url else 0
                self.webhook_answers.append(status)
                if status == 200:
                    break
                if not self._running:
                    return
                time.sleep(RETRY_SECONDS)  # Meta retries, for days; here every 0.2 s

    # --- what the bot sent ---------------------------------------------------------------

    def sent(self, user: str) -> list[SentMessage]:
        with self._lock:
            return [m for m in self.messages if m.to == user]

    def age_window(self, user: str, hours: float) -> None:
        """``user`` last wrote ``hours`` ago (25: their window has closed)."""
        self.last_wrote[user] = time.time() - hours * 3600

    # --- serving -------------------------------------------------------------------------

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: Any,
        raw: bytes | None = None,
        kind: str = "application/json",
    ) -> None:
        self.reply(handler, status, body, raw=raw, kind=kind)

    def _authorized(self, handler: BaseHTTPRequestHandler) -> bool:
        if handler.headers.get("Authorization") == f"Bearer {TOKEN}":
            return True
        self._send(
            handler,
            401,
            _graph_error(190, "Invalid OAuth access token - Cannot parse access token"),
        )
        return False

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        if not self._authorized(handler):
            return
        path = urlsplit(handler.path).path
        if path.startswith("/download/"):
            found = self._media.get(path.removeprefix("/download/"))
            if found is None:
                self._send(handler, 404, _graph_error(100, "media not found"))
            else:
                self._send(handler, 200, None, raw=found[0], kind=found[1])
            return
        media_id = path.rsplit("/", 1)[-1]
        if media_id == PHONE_ID:  # the number, as a client checks its credentials
            number = {"id": PHONE_ID, "display_phone_number": "+1 555-000-1111"}
            self._send(handler, 200, number | {"verified_name": "Kit", "quality_rating": "GREEN"})
            return
        found = self._media.get(media_id)
        if found is None:
            self._send(
                handler,
                400,
                _graph_error(
                    100, f"Unsupported get request. Object with ID '{media_id}' does not exist"
                ),
            )
            return
        data, mime, _name = found
        self._send(
            handler,
            200,
            {
                "messaging_product": "whatsapp",
                "url": f"{self.api_url}/download/{media_id}",
                "mime_type": mime,
                "sha256": hashlib.sha256(data).hexdigest(),
                "file_size": len(data),
                "id": media_id,
            },
        )

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        if not self._authorized(handler):
            return
        path = urlsplit(handler.path).path
        parts = path.strip("/").split("/")
        if len(parts) != 3 or parts[1] != PHONE_ID:
            self._send(handler, 400, _graph_error(100, f"Unknown path components: {path}"))
            return
        if parts[2] == "media":
            self._upload(handler, raw)
        elif parts[2] == "messages":
            self._message(handler, json.loads(raw or b"{}"))
        else:
            self._send(handler, 400, _graph_error(100, f"Unknown path components: {path}"))

    def _upload(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        header = f"Content-Type: {handler.headers.get('Content-Type')}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(header + raw)
        fields: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (
                part.get_filename(),
                part.get_payload(decode=True),
                part.get_content_type(),
            )
        if "file" not in fields or (fields.get("messaging_product") or (0, b""))[1] != b"whatsapp":
            self._send(
                handler, 400, _graph_error(100, "The parameter messaging_product is required.")
            )
            return
        filename, data, mime = fields["file"]
        if str(mime) not in UPLOADABLE:  # as Meta: its own list of types, nothing else
            said = f"Param file must be a file with one of the following types: {', '.join(sorted(UPLOADABLE))}. Received file of type '{mime}'."  # noqa: E501
            self._send(handler, 400, _graph_error(100, said))
            return
        media_id = self._id("media.up")
        self._media[media_id] = (bytes(data), str(mime), str(filename or "file"))
        self._send(handler, 200, {"id": media_id})

    def _message(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if body.get("messaging_product") != "whatsapp":
            self._send(
                handler, 400, _graph_error(100, "The parameter messaging_product is required.")
            )
            return
        if body.get("status") == "read":
            self.reads.append(str(body.get("message_id")))
            self._send(handler, 200, {"success": True})
            return
        refusal = self.refusals.pop(0) if self.refusals else None
        if refusal is not None:
            status, code, said = refusal
            self._send(handler, status, _graph_error(code, said))
            return
        to, kind = str(body.get("to") or ""), str(body.get("type") or "")
        content = body.get(kind) or {}
        sent = SentMessage(
            id=self._id("wamid.bot"),
            to=to,
            type=kind,
            reply_to=(body.get("context") or {}).get("message_id"),
        )
        problem = _problem(kind, content)
        if problem is not None:
            self._send(handler, 400, _graph_error(131009, problem))
            return
        if kind == "text":
            sent.text = str(content.get("body") or "")
        elif kind == "interactive":
            action = content.get("action") or {}
            sent.text = str((content.get("body") or {}).get("text") or "")
            if content.get("type") == "list":
                sent.text = "\x00list" + sent.text
                rows = [r for s in action.get("sections") or () for r in s.get("rows") or ()]
                sent.buttons = [(str(r["id"]), str(r["title"])) for r in rows]
            else:
                sent.buttons = [
                    (str(b["reply"]["id"]), str(b["reply"]["title"]))
                    for b in action.get("buttons") or ()
                ]
        elif kind in ("image", "document", "audio", "video", "sticker"):
            found = self._media.get(str(content.get("id")))
            if found is None:
                self._send(handler, 400, _graph_error(131053, "Media upload error"))
                return
            data, mime, name = found
            sent.file = (str(content.get("filename") or name), data, mime)
            sent.text = str(content.get("caption") or "")
        else:
            self._send(handler, 400, _graph_error(131051, f"Unsupported message type: {kind}"))
            return
        with self._lock:
            self.messages.append(sent)
        self._send(
            handler,
            200,
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": to, "wa_id": to}],
                "messages": [{"id": sent.id}],
            },
        )
        outside = time.time() - self.last_wrote.get(to, 0.0) >= WINDOW_SECONDS
        if outside:  # taken, then failed: as the Cloud API does
            self._status(sent, "failed", [{"code": 131047, "title": "Re-engagement message"}])
        elif self.report_statuses:
            self._status(sent, "delivered")

    def _status(
        self, sent: SentMessage, status: str, errors: list[dict[str, Any]] | None = None
    ) -> None:
        entry: dict[str, Any] = {
            "id": sent.id,
            "status": status,
            "timestamp": str(int(time.time())),
            "recipient_id": sent.to,
        }
        if errors:
            entry["errors"] = errors
        self._outbox.put(self._payload({"statuses": [entry]}))

    # --- life ----------------------------------------------------------------------------

    def _on_start(self) -> None:
        self._running = True
        self._sender = threading.Thread(target=self._send_loop, daemon=True)
        self._sender.start()

    def _on_stop(self) -> None:
        self._running = False
        self._outbox.put(None)
