"""A loopback BlueBubbles server, written from its source (``bluebubbles-server``'s v1 HTTP
routes, validators and ``MessageSerializer``): the REST API under ``/api/v1`` (server info,
webhooks, ``message/query``, ``message/text``, ``message/attachment``, ``chat/query``,
typing and read marks, attachment downloads), every route behind the server password
(``?password=``, ``?guid=`` or ``?token=``; 401 otherwise), answers as ``{status, message,
data}`` and errors as ``{status, message, error: {type, message}}`` (``errors.ts``).

Messages are rows of Messages' database: each gets the next row number (``originalROWID``)
when stored, and its date may be older than the last one's (``user_says(..., late=...)``: a
message that reached the Mac late). Queries sort by date, as the server's do; attachments
can still be downloading (``transferState`` under 5) until :meth:`downloaded`.

Webhooks as the real one sends them: a JSON ``{"type": "new-message", "data": MESSAGE}``
POSTed once to each registered address, unsigned, never again when it fails (the gateway
being down loses it; the messages stay in the server's database, as in Messages'). Our own
sends become messages too (``isFromMe``). It says no as the server does: the Private API
routes when it is off (500), a request its validators refuse (400), a send refused on cue
(500).

    with FakeBlueBubbles() as server:
        server.user_says("+15551234567", "hello")
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from hermes_testkit.loopback import LoopbackHTTP

__all__ = ["PASSWORD", "FakeBlueBubbles", "Sent"]

PASSWORD = "kit-server-password"
GROUP_STYLE, DM_STYLE = 43, 45
EVENTS = {"*", "new-message", "updated-message", "message-send-error", "typing-indicator"}


@dataclass
class Sent:
    """What the bot sent to a chat."""

    guid: str
    chat_guid: str
    text: str
    files: list[tuple[str, bytes, str]] = field(default_factory=list)
    """(name, content, type) of each attachment."""
    method: str = "apple-script"


class _Refusal(Exception):
    def __init__(self, status: int, message: str, error: str, code: int = 0) -> None:
        super().__init__(message)
        self.status, self.message, self.error, self.code = status, message, error, code


class FakeBlueBubbles(LoopbackHTTP):
    def __init__(self, *, private_api: bool = True) -> None:
        super().__init__()
        self.private_api = private_api
        self.sent: list[Sent] = []
        self.messages: list[dict[str, Any]] = []
        self.chats: dict[str, dict[str, Any]] = {}
        self.webhooks: list[dict[str, Any]] = []
        self.posted: list[tuple[str, int | str]] = []
        """(url, status or error) of each webhook POST."""
        self.typing: list[str] = []
        self.marked_read: list[str] = []
        self.queries = 0
        self.refuse_sends = 0
        """The next this many sends fail (500), as a send AppleScript could not do."""
        self.garble = 0
        """The next this many message queries are answered 200 with a web page (a proxy
        in the way), not the server's JSON."""
        self.not_on_imessage: set[str] = set()
        """Addresses Messages will not send to (a send error with code 22)."""
        self._files: dict[str, tuple[bytes, str, str]] = {}
        self._converted: dict[str, tuple[bytes, str]] = {}
        self._downloading: set[str] = set()
        self.new_chats: list[list[str]] = []
        """The addresses of each chat the bot started (``POST /chat/new``)."""
        self._clock = itertools.count(int(time.time() * 1000))
        self._ids = itertools.count(1)
        self._rows = itertools.count(1)
        self._lock = threading.Lock()
        self._last: dict[str, Any] | None = None

    # --- the people ----------------------------------------------------------------------

    def _chat(self, address: str, group: str | None) -> dict[str, Any]:
        guid = group or f"iMessage;-;{address}"
        chat = self.chats.setdefault(
            guid,
            {
                "guid": guid,
                "chatIdentifier": guid.split(";")[-1],
                "style": GROUP_STYLE if group else DM_STYLE,
                "displayName": "Kit group" if group else "",
            },
        )
        return chat

    def _store(self, message: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.messages.append(message)
            self._last = message
        self._webhook({"type": "new-message", "data": message})
        return message

    def _message(
        self, address: str, text: str, *, group: str | None = None, late: int = 0, **more: Any
    ) -> dict[str, Any]:
        chat = self._chat(address, group)
        return {
            "originalROWID": next(self._rows),
            "guid": str(uuid.uuid4()).upper(),
            "text": text,
            "handle": {"address": address, "service": "iMessage", "country": "us"},
            "handleId": 1,
            "chats": [dict(chat)],
            "attachments": [],
            "isFromMe": False,
            "dateCreated": next(self._clock) - late * 1000,
            "associatedMessageGuid": None,
            "associatedMessageType": None,
            "threadOriginatorGuid": None,
            "itemType": 0,
            "error": 0,
        } | more

    def user_says(
        self,
        address: str,
        text: str,
        *,
        group: str | None = None,
        reply_to: str | None = None,
        late: int = 0,
    ) -> dict[str, Any]:
        """A message (``late``: dated this many seconds before now, as one that reached the
        Mac late, though stored now)."""
        message = self._message(
            address, text, group=group, late=late, threadOriginatorGuid=reply_to
        )
        return self._store(message)

    def user_sends_file(
        self,
        address: str,
        data: bytes,
        name: str,
        mime: str,
        *,
        converted: tuple[bytes, str] | None = None,
        downloading: bool = False,
    ) -> dict[str, Any]:
        """An attachment (``converted``: what the server serves without ``original=true``,
        as it turns a voice note's CAF into MP3 and a HEIC photo into JPEG;
        ``downloading``: not on the Mac's disk yet, until :meth:`downloaded`)."""
        guid = f"att-{uuid.uuid4()}".upper()
        self._files[guid] = (data, mime, name)
        if downloading:
            self._downloading.add(guid)
        if converted is not None:
            self._converted[guid] = converted
        item = {
            "guid": guid,
            "uti": "public.data",
            "mimeType": mime,
            "transferName": name,
            "totalBytes": len(data),
            "transferState": 1 if downloading else 5,
            "hideAttachment": False,
        }
        return self._store(self._message(address, "\ufffc", attachments=[item]))

    def tapback(self, address: str, target: Sent, kind: str) -> None:
        """A tapback (``like``, ``dislike``, ``love``...; ``-like`` takes it back) on a
        message the bot sent."""
        said = {"like": "Liked", "dislike": "Disliked"}.get(kind.lstrip("-"), "Reacted to")
        group = target.chat_guid if ";+;" in target.chat_guid else None
        self._store(
            self._message(
                address,
                f"{said} “{target.text[:40]}”",
                group=group,
                associatedMessageGuid=f"p:0/{target.guid}",
                associatedMessageType=kind,
            )
        )

    def downloaded(self) -> None:
        """Every attachment still downloading is on the Mac's disk now."""
        with self._lock:
            self._downloading.clear()
            for message in self.messages:
                for item in message["attachments"]:
                    item["transferState"] = 5

    def deliver_again(self) -> None:
        """The last message's webhook, POSTed again (a replay)."""
        assert self._last is not None
        self._webhook({"type": "new-message", "data": self._last})

    def sent_to(self, address: str) -> list[Sent]:
        with self._lock:
            return [s for s in self.sent if s.chat_guid.split(";")[-1] == address]

    # --- webhooks ------------------------------------------------------------------------

    def _webhook(self, event: dict[str, Any]) -> None:
        body = json.dumps(event).encode()
        for hook in list(self.webhooks):
            if "*" in hook["events"] or event["type"] in hook["events"]:
                threading.Thread(target=self._post_once, args=(hook["url"], body)).start()

    def _post_once(self, url: str, body: bytes) -> None:
        """Fire and forget, as the server's axios call: a failure is only logged there."""
        request = urllib.request.Request(
            url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                self.posted.append((url, answer.status))
        except Exception as exc:  # noqa: BLE001 - lost, as with BlueBubbles
            self.posted.append((url, getattr(exc, "code", None) or type(exc).__name__))

    # --- serving -------------------------------------------------------------------------

    def _ok(self, handler: BaseHTTPRequestHandler, data: Any, **more: Any) -> None:
        self.reply(handler, 200, {"status": 200, "message": "Success", "data": data} | more)

    def _route(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(handler.path)
        query = parse_qs(url.query)
        given = (query.get("password") or query.get("guid") or query.get("token") or [""])[0]
        try:
            if not url.path.startswith("/api/v1/"):
                raise _Refusal(404, "Not Found", "Route not found")
            if not given.strip():
                raise _Refusal(401, "Unauthorized", "Missing server password!")
            if given.strip() != PASSWORD:
                raise _Refusal(401, "Unauthorized", "Invalid password!")
            path = url.path.removeprefix("/api/v1")
            length = int(handler.headers.get("Content-Length") or 0)
            raw = handler.rfile.read(length) if length else b""
            self._serve(handler, method, path, raw, query)
        except _Refusal as refusal:
            kind = {401: "Authentication Error", 404: "Not Found", 400: "Validation Error"}
            error = {"type": kind.get(refusal.status, "Server Error"), "message": refusal.error}
            body = {"status": refusal.status, "message": refusal.message, "error": error}
            if refusal.code:  # a message Messages would not send: the message, its code
                body["data"] = {"error": refusal.code}
            self.reply(handler, refusal.status, body)

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        self._route(handler, "GET")

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        self._route(handler, "POST")

    def _delete(self, handler: BaseHTTPRequestHandler) -> None:
        self._route(handler, "DELETE")

    def _serve(
        self,
        handler: BaseHTTPRequestHandler,
        method: str,
        path: str,
        raw: bytes,
        query: dict[str, list[str]],
    ) -> None:
        body: dict[str, Any] = {}
        if raw and (handler.headers.get("Content-Type") or "").startswith("application/json"):
            body = json.loads(raw)
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if (method, path) == ("GET", "/ping"):
            self._ok(handler, "pong")
        elif (method, path) == ("GET", "/server/info"):
            info = {
                "server_version": "1.9.9",
                "os_version": "15.1",
                "private_api": self.private_api,
                "helper_connected": self.private_api,
                "detected_imessage": "kit@icloud.com",
            }
            self._ok(handler, info)
        elif parts[0] == "webhook":
            self._webhooks(handler, method, parts, body)
        elif (method, path) == ("POST", "/message/query"):
            self._query(handler, body)
        elif (method, path) == ("POST", "/chat/query"):
            self._ok(handler, list(self.chats.values()))
        elif (method, path) == ("POST", "/chat/new"):
            self._new_chat(handler, body)
        elif (method, path) == ("POST", "/message/text"):
            self._text(handler, body)
        elif (method, path) == ("POST", "/message/attachment"):
            self._attachment(handler, raw)
        elif method == "POST" and len(parts) == 3 and parts[0] == "chat":
            self._private_api_on()
            if parts[1] not in self.chats:
                raise _Refusal(404, "Not Found", "Chat does not exist!")
            (self.typing if parts[2] == "typing" else self.marked_read).append(parts[1])
            self._ok(handler, None)
        elif method == "GET" and len(parts) == 3 and parts[0] == "attachment":
            self._download(handler, parts[1], query)
        else:
            raise _Refusal(404, "Not Found", f"Route not found: {method} {path}")

    def _private_api_on(self) -> None:
        if not self.private_api:
            raise _Refusal(
                500,
                "Server Error",
                "Please make sure you have completed the setup for the Private API, and your "
                "helper is connected!",
            )

    def _webhooks(
        self, handler: BaseHTTPRequestHandler, method: str, parts: list[str], body: dict[str, Any]
    ) -> None:
        if method == "GET":
            self._ok(handler, self.webhooks)
        elif method == "POST":
            url, events = body.get("url"), body.get("events")
            if not url or not isinstance(events, list) or not set(events) <= EVENTS:
                raise _Refusal(400, "Bad Request", "Invalid webhook URL or events")
            for hook in self.webhooks:
                if hook["url"] == url:  # as the server: the row as it was, events unchanged
                    self._ok(handler, hook)
                    return
            hook = {"id": next(self._ids), "url": url, "events": events, "created": time.time()}
            self.webhooks.append(hook)
            self._ok(handler, hook)
        elif method == "DELETE" and len(parts) == 2:
            self.webhooks = [h for h in self.webhooks if str(h["id"]) != parts[1]]
            self._ok(handler, None)
        else:
            raise _Refusal(404, "Not Found", "Route not found")

    def _query(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        self.queries += 1
        if self.garble:
            self.garble -= 1
            page = b"<html><body>Sign in to continue</body></html>"
            self.reply(handler, 200, raw=page, kind="text/html")
            return
        limit, offset = int(body.get("limit") or 100), int(body.get("offset") or 0)
        if not 1 <= limit <= 1000 or offset < 0:
            raise _Refusal(400, "Bad Request", "limit must be from 1 to 1000")
        with_ = {str(w).lower() for w in body.get("with") or ()}
        with self._lock:
            found = list(self.messages)
        if body.get("after") is not None:
            found = [m for m in found if m["dateCreated"] >= int(body["after"])]
        if body.get("before") is not None:
            found = [m for m in found if m["dateCreated"] <= int(body["before"])]
        for clause in body.get("where") or ():
            found = [m for m in found if _holds(clause, m)]
        if body.get("chatGuid"):
            found = [m for m in found if m["chats"][0]["guid"] == body["chatGuid"]]
        found.sort(key=lambda m: m["dateCreated"], reverse=body.get("sort", "DESC") != "ASC")
        # As TypeORM's limit over the server's joins: it counts SQL rows, a message once per
        # attachment (and chat), so a message may come cut short of its attachments.
        shown_page: list[dict[str, Any]] = []
        used = 0
        for message in found[offset:]:
            if used >= limit:
                break
            shown = dict(message)
            if not with_ & {"chat", "chats", "chat.participants"}:
                shown["chats"] = []
            if not with_ & {"attachment", "attachments"}:
                shown["attachments"] = []
            chats = max(1, len(shown["chats"]))
            attachments = max(1, len(shown["attachments"]))
            room = (limit - used) // chats or 1
            if shown["attachments"] and attachments > room:
                shown["attachments"] = shown["attachments"][:room]
            used += min(attachments, room) * chats
            shown_page.append(shown)
        count = len(shown_page)
        metadata = {"offset": offset, "limit": limit, "total": len(found), "count": count}
        self._ok(handler, shown_page, metadata=metadata)

    def _sending(self, chat_guid: str, method: str, temp_guid: str) -> None:
        if not chat_guid:
            raise _Refusal(400, "Bad Request", "A chatGuid is required")
        if method not in ("apple-script", "private-api"):
            raise _Refusal(400, "Bad Request", "Invalid send method")
        if method == "private-api":
            self._private_api_on()
        elif not temp_guid:
            raise _Refusal(400, "Bad Request", "A tempGuid is required with apple-script")
        if chat_guid not in self.chats and (";+;" in chat_guid or method == "private-api"):
            # AppleScript can start a person's chat from its guid; the Private API cannot.
            raise _Refusal(500, "Server Error", f"Chat does not exist: {chat_guid}")
        if self.refuse_sends:
            self.refuse_sends -= 1
            raise _Refusal(500, "Message Send Error", "Failed to send message (AppleScript)")
        if self.not_on_imessage and chat_guid.rsplit(";", maxsplit=1)[-1] in self.not_on_imessage:
            said = "Message failed to send! Error: (22) not on iMessage"
            raise _Refusal(500, "Message Send Error", said, code=22)

    def _mine(self, sent: Sent) -> dict[str, Any]:
        chat = self.chats.get(sent.chat_guid) or self._chat(sent.chat_guid.split(";")[-1], None)
        message = self._message("", sent.text, guid=sent.guid, isFromMe=True)
        message["chats"], message["handle"] = [dict(chat)], None
        with self._lock:
            self.sent.append(sent)
        self._store(message)
        return message

    def _text(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if "message" not in body:
            raise _Refusal(400, "Bad Request", "A message is required")
        method = str(body.get("method") or "apple-script")
        self._sending(str(body.get("chatGuid") or ""), method, str(body.get("tempGuid") or ""))
        if method == "apple-script" and not str(body["message"]).strip():
            raise _Refusal(400, "Bad Request", "A message is required with apple-script")
        sent = Sent(str(uuid.uuid4()).upper(), body["chatGuid"], str(body["message"]), [], method)
        self._ok(handler, self._mine(sent))

    def _new_chat(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        addresses = body.get("addresses")
        if not isinstance(addresses, list) or not addresses:
            raise _Refusal(400, "Bad Request", "addresses is required")
        chat = self._chat(str(addresses[0]), None)
        if body.get("message"):  # its first message is sent as any other
            method = str(body.get("method") or "apple-script")
            self._sending(chat["guid"], method, str(body.get("tempGuid") or ""))
        self.new_chats.append([str(a) for a in addresses])
        data = dict(chat)
        if body.get("message"):
            sent = Sent(str(uuid.uuid4()).upper(), chat["guid"], str(body["message"]))
            data["messages"] = [self._mine(sent)]
        self._ok(handler, data)

    def _attachment(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        header = f"Content-Type: {handler.headers.get('Content-Type')}\r\n\r\n".encode()
        form = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(header + raw)
        fields: dict[str, Any] = {}
        for part in form.iter_parts():
            name = str(part.get_param("name", header="content-disposition"))
            payload = part.get_payload(decode=True)
            fields[name] = (part.get_filename(), payload, part.get_content_type())
        file = fields.get("attachment")
        if file is None or not file[1]:
            raise _Refusal(400, "Bad Request", "Attachment not provided or was empty!")

        def text(name: str) -> str:
            return bytes((fields.get(name) or (None, b"", ""))[1]).decode()

        if not text("name"):
            raise _Refusal(400, "Bad Request", "An attachment name is required")
        method = text("method") or "apple-script"
        self._sending(text("chatGuid"), method, text("tempGuid"))
        sent = Sent(
            str(uuid.uuid4()).upper(),
            text("chatGuid"),
            "",
            [(text("name"), file[1], file[2])],
            method,
        )
        self._ok(handler, self._mine(sent))

    def _download(
        self, handler: BaseHTTPRequestHandler, guid: str, query: dict[str, list[str]]
    ) -> None:
        found = self._files.get(guid)
        if found is None:
            raise _Refusal(404, "Not Found", "Attachment does not exist!")
        if guid in self._downloading:
            raise _Refusal(500, "Server Error", "Attachment does not exist in disk!")
        data, mime = found[0], found[1]
        original = (query.get("original") or ["false"])[0].lower() in ("true", "1")
        if guid in self._converted and not original:
            data, mime = self._converted[guid]
        self.reply(handler, 200, raw=data, kind=mime)


def _holds(clause: dict[str, Any], message: dict[str, Any]) -> bool:
    """A ``where`` clause on the row number (``message.ROWID > :name``, or ``>=``, ``<``,
    ``<=``), the one form these tests' clients send; the real server passes any SQL on."""
    column, operator, name = str(clause.get("statement") or "").split()
    operators = (">", ">=", "<", "<=")
    if column != "message.ROWID" or operator not in operators or not name.startswith(":"):
        raise _Refusal(500, "Server Error", f"the kit serves no where clause {clause!r}")
    bound = int(clause["args"][name[1:]])
    row = int(message["originalROWID"])
    return {
        ">": row > bound,
        ">=": row >= bound,
        "<": row < bound,
        "<=": row <= bound,
    }[operator]
