"""A loopback signal-cli daemon in HTTP mode, written from signal-cli's source (its
HttpServerHandler, JSON-RPC commands and ``json/*.java`` envelope forms): ``GET
/api/v1/check``, ``POST /api/v1/rpc`` (send, sendTyping, sendReceipt, sendReaction,
getAttachment, listGroups) and ``GET /api/v1/events`` (server-sent ``receive`` events, a
keepalive comment meanwhile).

It receives as ``--receive-mode=on-connection`` does: what people send while no event
stream is connected stays queued (at Signal's server, in the real one) and is delivered
when one connects. It says no as signal-cli does: an account it does not have (-32602), a
rate limit on cue (-5, with ``retryAfterSeconds``), an unknown attachment.

    with FakeSignalCli() as daemon:
        daemon.user_says("+15551234567", "hello")
"""

from __future__ import annotations

import base64
import itertools
import json
import queue
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_testkit.loopback import LoopbackHTTP

__all__ = ["ACCOUNT", "FakeSignalCli", "Sent"]

ACCOUNT = "+15550002222"
ACCOUNT_UUID = "a1b2c3d4-0000-4000-8000-000000000001"
TEXT_STYLES = frozenset({"BOLD", "ITALIC", "SPOILER", "STRIKETHROUGH", "MONOSPACE"})


@dataclass
class Sent:
    """What the bot sent: to a person (``recipient``) or a group (``group_id``)."""

    timestamp: int
    recipient: str | None
    group_id: str | None
    text: str
    files: list[tuple[str, bytes, str]] = field(default_factory=list)
    """(name, content, type) of each attachment."""
    styles: list[tuple[int, int, str]] = field(default_factory=list)
    """(start, length, style) of each ``textStyle``, in UTF-16 units as signal-cli takes them."""

    def styled(self, style: str) -> list[str]:
        """The pieces of the text shown in ``style``."""
        units = self.text.encode("utf-16-le")
        return [
            units[2 * start : 2 * (start + length)].decode("utf-16-le")
            for start, length, name in self.styles
            if name == style
        ]


class FakeSignalCli(LoopbackHTTP):
    http_protocol = "HTTP/1.1"  # the event stream

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Sent] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.rate_limits = 0
        """The next this many sends are rate limited (-5)."""
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._attachments: dict[str, tuple[bytes, str, str]] = {}
        self._clock = itertools.count(int(time.time() * 1000))
        self._last: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self.connections = 0
        self.streams = 0
        """Event streams connected now (one that broke counts until a write finds it)."""

    def _stamp(self) -> int:
        return next(self._clock)

    # --- the people ----------------------------------------------------------------------

    def _envelope(self, user: str, message: dict[str, Any]) -> dict[str, Any]:
        stamp = self._stamp()
        return {
            "account": ACCOUNT,
            "envelope": {
                "source": user,
                "sourceNumber": user,
                "sourceUuid": f"uuid-{user.strip('+')}",
                "sourceName": "Kit Person",
                "sourceDevice": 1,
                "timestamp": stamp,
                "serverReceivedTimestamp": stamp + 5,
                "dataMessage": {"timestamp": stamp, "expiresInSeconds": 0, "viewOnce": False}
                | message,
            },
        }

    def _deliver(self, event: dict[str, Any]) -> dict[str, Any]:
        self._last = event
        self._queue.put(event)
        return event

    def user_says(
        self, user: str, text: str, *, group: str | None = None, mention: bool = False
    ) -> int:
        message: dict[str, Any] = {"message": text}
        if group:
            message["groupInfo"] = {"groupId": group, "groupName": "Kit group", "type": "DELIVER"}
        if mention:
            message["message"] = "\ufffc " + text
            message["mentions"] = [
                {"number": ACCOUNT, "uuid": ACCOUNT_UUID, "start": 0, "length": 1, "name": ACCOUNT}
            ]
        return int(self._deliver(self._envelope(user, message))["envelope"]["timestamp"])

    def user_sends_file(self, user: str, data: bytes, name: str, mime: str) -> int:
        ident = f"att{len(self._attachments) + 1}"
        self._attachments[ident] = (data, mime, name)
        files = [{"contentType": mime, "filename": name, "id": ident, "size": len(data)}]
        return int(
            self._deliver(self._envelope(user, {"attachments": files}))["envelope"]["timestamp"]
        )

    def react(self, user: str, target: Sent, emoji: str) -> None:
        reaction = {
            "emoji": emoji,
            "targetAuthorNumber": ACCOUNT,
            "targetAuthorUuid": ACCOUNT_UUID,
            "targetSentTimestamp": target.timestamp,
            "isRemove": False,
        }
        self._deliver(self._envelope(user, {"reaction": reaction}))

    def deliver_again(self) -> None:
        assert self._last is not None
        self._queue.put(self._last)

    def sent_to(self, user: str) -> list[Sent]:
        with self._lock:
            return [s for s in self.sent if s.recipient == user]

    # --- serving -------------------------------------------------------------------------

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        if url.path == "/api/v1/check":
            handler.send_response(200)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if url.path != "/api/v1/events":
            self.reply(handler, 404, {"error": "not found"})
            return
        account = (parse_qs(url.query).get("account") or [ACCOUNT])[0]
        if account != ACCOUNT:
            self.reply(handler, 400, {"error": "Specified account does not exist"})
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        self.connections += 1
        self.streams += 1
        try:
            while True:
                try:
                    event = self._queue.get(timeout=0.5)
                except queue.Empty:
                    handler.wfile.write(b":\n\n")  # the keepalive comment
                    handler.wfile.flush()
                    continue
                if event is None:
                    return
                line = f"event:receive\ndata:{json.dumps(event)}\n\n".encode()
                try:
                    handler.wfile.write(line)
                    handler.wfile.flush()
                except OSError:
                    return  # acknowledged to Signal already: lost, as with signal-cli
        except OSError:
            return
        finally:
            self.streams -= 1

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        if urlsplit(handler.path).path != "/api/v1/rpc":
            self.reply(handler, 404, {"error": "not found"})
            return
        length = int(handler.headers.get("Content-Length") or 0)
        request = json.loads(handler.rfile.read(length) or b"{}")
        method, params = str(request.get("method")), dict(request.get("params") or {})
        self.calls.append((method, params))
        ident = request.get("id")

        def error(code: int, message: str, data: Any = None) -> None:
            body: dict[str, Any] = {"code": code, "message": message}
            if data is not None:
                body["data"] = data
            self.reply(handler, 200, {"jsonrpc": "2.0", "id": ident, "error": body})

        def result(value: Any) -> None:
            self.reply(handler, 200, {"jsonrpc": "2.0", "id": ident, "result": value})

        if params.get("account", ACCOUNT) != ACCOUNT:
            error(-32602, "Specified account does not exist")
        elif method == "listGroups":
            result([])
        elif method in ("sendTyping", "sendReceipt", "sendReaction"):
            result({})
        elif method == "getAttachment":
            found = self._attachments.get(str(params.get("id")))
            if found is None:
                error(-1, f"Could not find attachment with ID: {params.get('id')}")
            else:
                result({"data": base64.b64encode(found[0]).decode()})
        elif method == "send":
            self._send(params, result, error)
        else:
            error(-32601, "Method not implemented")

    def _send(self, params: dict[str, Any], result: Any, error: Any) -> None:
        recipients = params.get("recipient") or params.get("recipients") or []
        recipient = recipients[0] if isinstance(recipients, list) and recipients else recipients
        if self.rate_limits:
            self.rate_limits -= 1
            failure = {"type": "RATE_LIMIT_FAILURE", "retryAfterSeconds": 30}
            error(
                -5,
                "Failed to send message due to rate limiting",
                {"response": {"results": [failure]}},
            )
            return
        files = []
        for uri in params.get("attachments") or params.get("attachment") or []:
            head, _, payload = str(uri).partition(",")
            parts = head.removeprefix("data:").split(";")
            mime = parts[0]
            name = next(
                (p.removeprefix("filename=") for p in parts if p.startswith("filename=")), ""
            )
            files.append((name, base64.b64decode(payload), mime))
        text = str(params.get("message") or "")
        styles = []
        for given in params.get("textStyle") or params.get("textStyles") or []:
            # As SendCommand.parseTextStyles: (\d+):(\d+):(.+), a known style, else -1.
            found = re.fullmatch(r"(\d+):(\d+):(.+)", str(given))
            if found is None:
                error(-1, f"Invalid textStyle syntax ({given}) expected 'start:length:STYLE'")
                return
            start, length, name = found.groups()
            if name not in TEXT_STYLES:
                error(-1, f"Invalid style: {name}")
                return
            # The kit's own check (signal-cli passes it on): a range past the text is a bug.
            if int(start) + int(length) > len(text.encode("utf-16-le")) // 2:
                error(-1, f"Text style past the text: {given}")
                return
            styles.append((int(start), int(length), name))
        stamp = self._stamp()
        sent = Sent(stamp, recipient or None, params.get("groupId"), text, files, styles)
        with self._lock:
            self.sent.append(sent)
        result(
            {
                "timestamp": stamp,
                "results": [{"type": "SUCCESS", "recipientAddress": {"number": recipient}}],
            }
        )

    # --- life ----------------------------------------------------------------------------

    def _on_stop(self) -> None:
        self._queue.put(None)
