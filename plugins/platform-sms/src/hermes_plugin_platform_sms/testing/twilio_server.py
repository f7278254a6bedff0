"""A loopback Twilio, written from Twilio's public reference (the Messages and Media
resources, incoming-message webhooks, Advanced Opt-Out and the error codes) and checked
against what the official ``twilio`` library sends and reads.

The REST side (``/2010-04-01/Accounts/{sid}/Messages.json``, its Media, a media file's
content behind a redirect to a file store) checks HTTP basic auth with the account's sid
and token, keeps every text (the people's too, for listing), fetches an MMS's
``MediaUrl`` itself as Twilio does, and says no as Twilio does: wrong credentials (20003),
a body over 1,600 characters (21617), a number that texted STOP (21610), a refusal on cue.
The people's side POSTs each text to the webhook once, as Twilio does (it does not retry a
gateway that is down: the text is still in the log, to be listed), signed with
``X-Twilio-Signature`` by the official library's own ``RequestValidator``.

    with FakeTwilio() as twilio:
        twilio.webhook_url = "http://127.0.0.1:8644/sms/webhook"
        twilio.user_texts("+15551234567", "hello")
"""

from __future__ import annotations

import base64
import itertools
import queue
import secrets
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from hermes_testkit.loopback import LoopbackHTTP

__all__ = ["ACCOUNT_SID", "AUTH_TOKEN", "NUMBER", "FakeTwilio", "Text"]

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
AUTH_TOKEN = "kit-auth-token-0123456789abcdef"
NUMBER = "+15550001111"
OPT_OUT = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
OPT_IN = {"START", "YES", "UNSTOP"}


@dataclass
class Text:
    """A text in the account's log: a person's (inbound) or the bot's (outbound-api)."""

    sid: str
    sender: str
    to: str
    body: str
    direction: str
    date_sent: datetime
    media: list[tuple[str, bytes, str]] = field(default_factory=list)
    """(media sid, content, type) of each file."""


def _page(uri: str, count: int) -> dict[str, Any]:
    """A list's paging, as Twilio writes it (everything on one page here)."""
    return {
        "next_page_uri": None,
        "page": 0,
        "page_size": max(count, 50),
        "start": 0,
        "end": max(0, count - 1),
        "uri": uri,
        "first_page_uri": uri,
        "previous_page_uri": None,
    }


def _error(status: int, code: int, message: str) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }


class FakeTwilio(LoopbackHTTP):
    """Context manager: Twilio's REST API on 127.0.0.1 (an ephemeral port)."""

    def __init__(self) -> None:
        super().__init__()
        self.webhook_url: str | None = None
        self.log: list[Text] = []
        self.opted_out: set[str] = set()
        self.webhook_answers: list[tuple[int, str]] = []
        """(status, body) of each webhook POST (0: nothing listened)."""
        self.refusals: list[tuple[int, int, str] | None] = []
        """(HTTP status, Twilio error code, message) for the next sends, in order; None
        lets that one through."""
        self.refusals_of_lists = 0
        """The next this many listings of messages fail (HTTP 500)."""
        self.fetched_media: list[str] = []
        """Each MMS MediaUrl Twilio fetched."""
        self._ids = itertools.count(1)
        self._cdn: dict[str, tuple[bytes, str]] = {}
        self._outbox: queue.Queue[Text | None] = queue.Queue()
        self._lock = threading.Lock()

    @property
    def api_url(self) -> str:
        return self.url

    def _sid(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):032x}"

    # --- the people ----------------------------------------------------------------------

    def user_texts(
        self, user: str, body: str, files: list[tuple[bytes, str]] | None = None
    ) -> Text:
        """``user`` texts the number (``files``: (content, type) of an MMS's pictures): it is
        logged, then POSTed to the webhook once. Returns the text."""
        text = Text(self._sid("SM"), user, NUMBER, body, "inbound", datetime.now(UTC))
        for data, mime in files or ():
            text.media.append((self._sid("ME"), data, mime))
        word = body.strip().upper()
        if word in OPT_OUT:  # Advanced Opt-Out: Twilio stops the number, and still POSTs
            self.opted_out.add(user)
        elif word in OPT_IN:
            self.opted_out.discard(user)
        with self._lock:
            self.log.append(text)
        self.deliver(text)
        return text

    def params(self, text: Text) -> dict[str, str]:
        params = {
            "ToCountry": "US",
            "SmsMessageSid": text.sid,
            "NumMedia": str(len(text.media)),
            "SmsSid": text.sid,
            "SmsStatus": "received",
            "Body": text.body,
            "To": text.to,
            "NumSegments": "1",
            "MessageSid": text.sid,
            "AccountSid": ACCOUNT_SID,
            "From": text.sender,
            "ApiVersion": "2010-04-01",
        }
        for number, (media_sid, _data, mime) in enumerate(text.media):
            params[f"MediaUrl{number}"] = f"{self.api_url}{self._media_path(text.sid, media_sid)}"
            params[f"MediaContentType{number}"] = mime
        return params

    def sign(
        self,
        url: str,
        params: dict[str, str],
        token: str = AUTH_TOKEN,
        algorithm: str | None = None,
    ) -> str:
        from twilio.request_validator import RequestValidator

        return str(RequestValidator(token).compute_signature(url, params, algorithm=algorithm))

    def post(
        self, params: dict[str, str], signature: str | None, signature_settings: str | None = None
    ) -> tuple[int, str]:
        """One webhook POST of ``params`` with ``signature`` (None: no header), and a
        webhook signing key's settings header when it is signed with one."""
        assert self.webhook_url is not None, "set webhook_url to the bot's webhook first"
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if signature is not None:
            headers["X-Twilio-Signature"] = signature
        if signature_settings is not None:
            headers["X-Twilio-Webhooks-Signature-Settings"] = signature_settings
        request = urllib.request.Request(
            self.webhook_url, data=urlencode(params).encode(), headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read().decode()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return 0, ""

    def deliver(self, text: Text) -> None:
        """POST ``text`` to the webhook, signed, once, after those before it (from a thread:
        the bot may be on the caller's event loop)."""
        self._outbox.put(text)

    def _send_loop(self) -> None:
        while (text := self._outbox.get()) is not None:
            if self.webhook_url is None:
                self.webhook_answers.append((0, ""))
                continue
            params = self.params(text)
            self.webhook_answers.append(self.post(params, self.sign(self.webhook_url, params)))

    # --- what the bot sent ---------------------------------------------------------------

    def sent(self, user: str) -> list[Text]:
        with self._lock:
            return [t for t in self.log if t.to == user and t.direction == "outbound-api"]

    # --- serving -------------------------------------------------------------------------

    def _media_path(self, message_sid: str, media_sid: str) -> str:
        return f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages/{message_sid}/Media/{media_sid}"

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
        expected = base64.b64encode(f"{ACCOUNT_SID}:{AUTH_TOKEN}".encode()).decode()
        if handler.headers.get("Authorization") == f"Basic {expected}":
            return True
        self._send(handler, 401, _error(401, 20003, "Authenticate"))
        return False

    def _instance(self, text: Text) -> dict[str, Any]:
        when = format_datetime(text.date_sent)
        uri = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages/{text.sid}.json"
        return {
            "sid": text.sid,
            "account_sid": ACCOUNT_SID,
            "from": text.sender,
            "to": text.to,
            "body": text.body,
            "status": "received" if text.direction == "inbound" else "queued",
            "direction": text.direction,
            "num_media": str(len(text.media)),
            "num_segments": str(max(1, -(-len(text.body) // 153))),
            "date_created": when,
            "date_sent": when,
            "date_updated": when,
            "api_version": "2010-04-01",
            "uri": uri,
            "subresource_uris": {"media": uri.replace(".json", "/Media.json")},
        }

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        if url.path.startswith("/cdn/"):  # the file store: no credentials asked
            found = self._cdn.get(url.path.removeprefix("/cdn/"))
            if found is None:
                self._send(handler, 404, _error(404, 20404, "not found"))
            else:
                self._send(handler, 200, None, raw=found[0], kind=found[1])
            return
        if not self._authorized(handler):
            return
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        base = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages"
        if url.path == f"{base}.json":
            self._list(handler, query)
            return
        if url.path == f"/2010-04-01/Accounts/{ACCOUNT_SID}/IncomingPhoneNumbers.json":
            mine = {"sid": "PN" + "0" * 32, "phone_number": NUMBER, "sms_url": self.webhook_url}
            numbers = [mine] if query.get("PhoneNumber") in (None, NUMBER) else []
            self._send(handler, 200, {"incoming_phone_numbers": numbers, **_page(url.path, 1)})
            return
        parts = url.path.removeprefix(base + "/").split("/")
        text = next((t for t in self.log if t.sid == parts[0]), None)
        if text is None or len(parts) < 2:
            self._send(handler, 404, _error(404, 20404, "The requested resource was not found"))
        elif parts[1] == "Media.json":
            items = [
                {
                    "sid": sid,
                    "parent_sid": text.sid,
                    "account_sid": ACCOUNT_SID,
                    "content_type": mime,
                    "uri": self._media_path(text.sid, sid) + ".json",
                }
                for sid, _data, mime in text.media
            ]
            self._send(handler, 200, {"media_list": items, **_page(url.path, len(items))})
        elif parts[1] == "Media" and len(parts) == 3:
            found = next(((d, m) for s, d, m in text.media if s == parts[2]), None)
            if found is None:
                self._send(handler, 404, _error(404, 20404, "The requested resource was not found"))
                return
            key = secrets.token_hex(8)
            self._cdn[key] = found
            handler.send_response(307)  # to the file store, as Twilio does
            handler.send_header("Location", f"{self.api_url}/cdn/{key}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        else:
            self._send(handler, 404, _error(404, 20404, "The requested resource was not found"))

    def _list(self, handler: BaseHTTPRequestHandler, query: dict[str, str]) -> None:
        if self.refusals_of_lists:
            self.refusals_of_lists -= 1
            self._send(handler, 500, _error(500, 20500, "Internal Server Error"))
            return
        with self._lock:
            found = [t for t in self.log if not query.get("To") or t.to == query["To"]]
        after = query.get("DateSent>")
        if after:  # Twilio compares the date only (YYYY-MM-DD): finer is the caller's
            found = [t for t in found if t.date_sent.strftime("%Y-%m-%d") >= after[:10]]
        found.sort(key=lambda t: t.date_sent, reverse=True)  # newest first, as Twilio lists
        size, page = int(query.get("PageSize") or 50), int(query.get("Page") or 0)
        more = len(found) > (page + 1) * size
        found = found[page * size : (page + 1) * size]
        body = {"messages": [self._instance(t) for t in found], **_page(handler.path, len(found))}
        if more:  # the next page, as Twilio links it
            following = {**query, "Page": str(page + 1), "PageSize": str(size)}
            body["next_page_uri"] = f"{urlsplit(handler.path).path}?{urlencode(following)}"
        self._send(handler, 200, body)

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        form = parse_qs(handler.rfile.read(length).decode())
        if not self._authorized(handler):
            return
        if urlsplit(handler.path).path != f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json":
            self._send(handler, 404, _error(404, 20404, "The requested resource was not found"))
            return
        to, sender = form.get("To", [""])[0], form.get("From", [""])[0]
        body, media = form.get("Body", [""])[0], form.get("MediaUrl", [])
        refusal = self.refusals.pop(0) if self.refusals else None
        if refusal is not None:
            status, code, said = refusal
            self._send(handler, status, _error(status, code, said))
            return
        if sender != NUMBER:
            said = "The 'From' phone number provided is not a valid message-capable Twilio number"
            self._send(handler, 400, _error(400, 21606, said))
            return
        if to in self.opted_out:
            self._send(
                handler, 400, _error(400, 21610, "Attempt to send to unsubscribed recipient")
            )
            return
        if len(body) > 1600:
            said = "The concatenated message body exceeds the 1600 character limit"
            self._send(handler, 400, _error(400, 21617, said))
            return
        if not body and not media:
            self._send(handler, 400, _error(400, 21602, "Message body is required."))
            return
        text = Text(self._sid("SM"), sender, to, body, "outbound-api", datetime.now(UTC))
        for address in media:  # Twilio fetches each file itself
            self.fetched_media.append(address)
            try:
                with urllib.request.urlopen(address, timeout=10) as got:
                    data, mime = got.read(), got.headers.get_content_type()
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                self._send(handler, 400, _error(400, 11200, f"could not fetch {address}"))
                return
            text.media.append((self._sid("ME"), data, mime))
        with self._lock:
            self.log.append(text)
        self._send(handler, 201, self._instance(text))

    # --- life ----------------------------------------------------------------------------

    def _on_start(self) -> None:
        threading.Thread(target=self._send_loop, daemon=True).start()

    def _on_stop(self) -> None:
        self._outbox.put(None)

    def wait_for(self, user: str, text: str, timeout: float = 30.0) -> Text:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for sent in self.sent(user):
                if text in sent.body:
                    return sent
            time.sleep(0.02)
        raise AssertionError(
            f"no text with {text!r} to {user}: {[t.body for t in self.sent(user)]}"
        )
