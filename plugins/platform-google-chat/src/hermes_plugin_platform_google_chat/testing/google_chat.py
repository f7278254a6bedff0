"""Google Chat on loopback for tests, both sides of an HTTP endpoint app, from the Chat API's
reference (its discovery document) and google-auth's source:

- Chat posting interaction events (MESSAGE, CARD_CLICKED) to the app, each with a bearer
  token signed as Google signs them: an ID token for the endpoint URL
  (``iss`` accounts.google.com, ``email`` chat@system.gserviceaccount.com) or, for a project
  number audience, a token of Chat's own account; and tokens that must be refused (another
  key, expired, another audience, another issuer);
- Google's published keys (x509 certificates by key id, with a Cache-Control max-age);
- the OAuth token endpoint a service account key names (``token_uri``), which checks the
  JWT-bearer assertion google-auth signs with the key;
- the Chat API's messages (create with ``requestId``, ``thread`` and
  ``messageReplyOption``; patch with ``updateMask``) and media download, with its errors
  (google.rpc.Status JSON): 401 for a token it did not issue, 403 for a space the app was
  removed from, 429 RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import datetime
import itertools
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qs

from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["CHAT_EMAIL", "PROJECT_NUMBER", "FakeGoogleChat", "Sent"]

CHAT_EMAIL = "chat@system.gserviceaccount.com"
PROJECT_NUMBER = "123456789012"
TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"


def _key_and_certificate(name: str) -> tuple[str, str]:
    """A new RSA key (PEM) and a self-signed certificate for it (PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .sign(key, hashes.SHA256())
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return pem, certificate.public_bytes(serialization.Encoding.PEM).decode()


def _sign(private_pem: str, key_id: str, claims: dict[str, Any]) -> str:
    from google.auth import crypt, jwt

    # google-auth is untyped: its calls are ignored for mypy, one by one.
    signer = crypt.RSASigner.from_string(private_pem, key_id=key_id)  # type: ignore[no-untyped-call]
    return str(jwt.encode(signer, claims).decode())  # type: ignore[no-untyped-call]


@dataclass
class Sent:
    """A message the app made through the Chat API."""

    name: str
    space: str
    text: str
    thread: str
    cards: list[dict[str, Any]] = field(default_factory=list)

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [
            button
            for card in self.cards
            for section in card["card"].get("sections") or ()
            for widget in section.get("widgets") or ()
            for button in (widget.get("buttonList") or {}).get("buttons") or ()
        ]


class FakeGoogleChat:
    """Chat, Google's keys and token endpoint, for an app whose events go to
    ``endpoint_url`` (set it once the app's listener is known)."""

    def __init__(self, *, project_number: bool = False) -> None:
        self.project_number = project_number
        self.endpoint_url = ""
        self._key_id = secrets.token_hex(8)
        self._key, self._certificate = _key_and_certificate("chat")
        self._other_key, _ = _key_and_certificate("someone else")
        self._account_key_id = secrets.token_hex(8)
        self._account_key, self._account_certificate = _key_and_certificate("hermes app")
        self.client_email = "hermes-app@hermes-test.iam.gserviceaccount.com"
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.access_tokens: set[str] = set()
        self.sent: dict[str, Sent] = {}
        self._requests: dict[str, str] = {}
        self.media: dict[str, bytes] = {}
        self.removed_from: set[str] = set()
        self._limited = 0
        self.key_fetches = 0
        self.token_grants = 0
        self.responses: list[tuple[int, Any]] = []
        """What the app answered each event posted to it (status, JSON)."""
        self._last_event: dict[str, Any] | None = None
        self._emails: dict[str, str] = {}
        self._last_press: tuple[dict[str, Any], Sent] | None = None
        app = web.Application()
        app.router.add_get("/oauth2/v1/certs", self._certs)
        app.router.add_get(f"/service_accounts/v1/metadata/x509/{CHAT_EMAIL}", self._certs)
        app.router.add_post("/token", self._grant)
        app.router.add_post("/v1/spaces/{space}/messages", self._create)
        app.router.add_patch("/v1/spaces/{space}/messages/{message}", self._patch)
        app.router.add_get("/v1/media/{resource:.*}", self._download)
        self._server = LoopbackApp(app, "fake-google-chat")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def certs_url(self) -> str:
        if self.project_number:
            return f"{self.url}/service_accounts/v1/metadata/x509/{CHAT_EMAIL}"
        return f"{self.url}/oauth2/v1/certs"

    def service_account(self) -> dict[str, Any]:
        """The app's service account key, as the Cloud console downloads it."""
        return {
            "type": "service_account",
            "project_id": "hermes-test",
            "private_key_id": self._account_key_id,
            "private_key": self._account_key,
            "client_email": self.client_email,
            "client_id": "1234567890",
            "token_uri": f"{self.url}/token",
        }

    # --- Chat posting events to the app -----------------------------------------------

    def token(self, kind: str = "good") -> str:
        """A bearer token for an event: ``good``, or one to refuse: ``forged`` (another
        key, the same key id), ``expired``, ``audience`` (another app's), ``issuer``,
        ``email`` and ``unverified`` (an ID token not Chat's), ``no-kid``, ``unknown-kid``."""
        now = int(time.time())
        if self.project_number:
            claims: dict[str, Any] = {"iss": CHAT_EMAIL, "aud": PROJECT_NUMBER}
        else:
            claims = {
                "iss": "https://accounts.google.com",
                "aud": self.endpoint_url,
                "email": CHAT_EMAIL,
                "email_verified": True,
                "sub": "1234",
            }
        claims |= {"iat": now, "exp": now + 3600}
        key = self._key
        if kind == "forged":
            key = self._other_key
        elif kind == "expired":
            claims |= {"iat": now - 7200, "exp": now - 3600}
        elif kind == "audience":
            claims["aud"] = "987654321098" if self.project_number else f"{self.endpoint_url}x"
        elif kind == "issuer":
            claims["iss"] = "https://evil.example"
        elif kind == "email":  # a Google ID token, but for someone else than Chat
            claims["email"] = "someone@example.org"
        elif kind == "unverified":
            claims["email_verified"] = False
        key_id = {"no-kid": "", "unknown-kid": secrets.token_hex(8)}.get(kind, self._key_id)
        return _sign(key, key_id, claims)

    def post(self, event: dict[str, Any], token: str | None = None) -> tuple[int, Any]:
        """POST ``event`` to the app as Chat does; (status, JSON answer)."""
        import httpx

        headers = {
            "Authorization": f"Bearer {token or self.token()}",
            "User-Agent": "Google-Dynamite",
        }
        response = httpx.post(self.endpoint_url, json=event, headers=headers, timeout=30)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        with self._lock:
            self.responses.append((response.status_code, answer))
            if response.status_code == 200:
                self._last_event = event
        return response.status_code, answer

    def user_id(self, email: str) -> str:
        """The person's Chat id (``users/NUMBER``), stable whatever their email becomes."""
        user = f"users/{abs(hash(email)) % 10**12}"
        self._emails[user] = email
        return user

    def email_of(self, user_id: str) -> str:
        return self._emails[user_id]

    def dm(self, email: str) -> str:
        return f"spaces/dm{abs(hash(email)) % 10**10}"

    def user_says(
        self,
        email: str,
        text: str,
        *,
        space: str | None = None,
        thread: str | None = None,
        files: tuple[tuple[str, bytes, str], ...] = (),
        token: str | None = None,
    ) -> tuple[int, Any]:
        """``email`` writes ``text`` to the app: in a direct message, or in ``space``
        (with ``@Hermes``, as only mentions reach an app there) in ``thread`` (a new one
        by default); ``files`` are (name, data, type)."""
        number = next(self._ids)
        where = space or self.dm(email)
        message_name = f"{where}/messages/m{number}.m{number}"
        user = {
            "name": self.user_id(email),
            "displayName": email.split("@", maxsplit=1)[0].title(),
            "email": email,
            "type": "HUMAN",
        }
        attachments = []
        for name, data, mime in files:
            resource = f"res{next(self._ids)}"
            self.media[resource] = data
            attachments.append(
                {
                    "name": f"{message_name}/attachments/a{number}",
                    "contentName": name,
                    "contentType": mime,
                    "attachmentDataRef": {"resourceName": resource},
                    "source": "UPLOADED_CONTENT",
                }
            )
        message: dict[str, Any] = {
            "name": message_name,
            "sender": user,
            "createTime": datetime.datetime.now(datetime.UTC).isoformat(),
            "text": text if space is None else f"@Hermes {text}",
            "argumentText": text if space is None else f" {text}",
            "thread": {"name": thread or f"{where}/threads/t{number}"},
            "space": {"name": where},
        }
        if attachments:
            message["attachment"] = attachments
        space_info = (
            {"name": where, "type": "DM", "spaceType": "DIRECT_MESSAGE", "singleUserBotDm": True}
            if space is None
            else {"name": where, "type": "ROOM", "spaceType": "SPACE", "displayName": "Team"}
        )
        event = {
            "type": "MESSAGE",
            "eventTime": message["createTime"],
            "message": message,
            "user": user,
            "space": space_info,
        }
        return self.post(event, token)

    def deliver_again(self) -> tuple[int, Any]:
        """The last event taken, posted again."""
        assert self._last_event is not None
        return self.post(self._last_event)

    def press(self, email: str, message: Sent, choice: str) -> tuple[int, Any]:
        """``email`` presses the card button of ``choice`` on ``message``."""
        (button,) = [
            b
            for b in message.buttons
            if {"key": "choice", "value": choice} in b["onClick"]["action"]["parameters"]
        ]
        action = button["onClick"]["action"]
        space = (
            {"name": message.space, "spaceType": "DIRECT_MESSAGE", "type": "DM"}
            if "/dm" in message.space + "/"
            else {"name": message.space, "spaceType": "SPACE", "type": "ROOM"}
        )
        user = {
            "name": self.user_id(email),
            "displayName": email.split("@", maxsplit=1)[0].title(),
            "email": email,
            "type": "HUMAN",
        }
        event = {
            "type": "CARD_CLICKED",
            "eventTime": datetime.datetime.now(datetime.UTC).isoformat(),
            "message": {
                "name": message.name,
                "text": message.text,
                "sender": {"name": "users/app", "type": "BOT"},
                "thread": {"name": message.thread},
            },
            "user": user,
            "space": space,
            "action": {"actionMethodName": action["function"], "parameters": action["parameters"]},
            "common": {
                "invokedFunction": action["function"],
                "parameters": {p["key"]: p["value"] for p in action["parameters"]},
            },
        }
        self._last_press = (event, message)
        return self._pressed(event, message)

    def press_again(self) -> tuple[int, Any]:
        """The last press, once more (a double click, or a card not yet refreshed)."""
        assert self._last_press is not None
        return self._pressed(*self._last_press)

    def _pressed(self, event: dict[str, Any], message: Sent) -> tuple[int, Any]:
        status, answer = self.post(event)
        if status == 200 and isinstance(answer, dict):
            response_type = (answer.get("actionResponse") or {}).get("type")
            if response_type == "UPDATE_MESSAGE":  # the app's own card message, updated
                with self._lock:
                    message.text = str(answer.get("text", message.text))
                    if "cardsV2" in answer:
                        message.cards = list(answer["cardsV2"] or [])
        return status, answer

    def rate_limit(self, calls: int = 1) -> None:
        with self._lock:
            self._limited = calls

    def sent_to(self, space: str) -> list[Sent]:
        with self._lock:
            return [m for m in self.sent.values() if m.space == space]

    # --- Google's side ---------------------------------------------------------------

    async def _certs(self, request: web.Request) -> web.Response:
        self.key_fetches += 1
        return web.json_response(
            {self._key_id: self._certificate},
            headers={"Cache-Control": "public, max-age=3600, must-revalidate, no-transform"},
        )

    async def _grant(self, request: web.Request) -> web.Response:
        from google.auth import jwt

        form = parse_qs((await request.read()).decode())
        grant = (form.get("grant_type") or [""])[0]
        assertion = (form.get("assertion") or [""])[0]
        if grant != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        try:
            claims = jwt.decode(  # type: ignore[no-untyped-call]
                assertion,
                certs={self._account_key_id: self._account_certificate},
                audience=TOKEN_AUDIENCE,
            )
        except ValueError as exc:
            return web.json_response(
                {"error": "invalid_grant", "error_description": str(exc)}, status=400
            )
        scopes = str(claims.get("scope") or "").split()
        if claims.get("iss") != self.client_email or not any("chat" in s for s in scopes):
            return web.json_response({"error": "invalid_scope"}, status=400)
        token = f"ya29.{secrets.token_urlsafe(24)}"
        with self._lock:
            self.access_tokens.add(token)
            self.token_grants += 1
        return web.json_response(
            {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}
        )

    def _status(self, code: int, status: str, message: str) -> web.Response:
        body = {"error": {"code": code, "message": message, "status": status}}
        return web.json_response(body, status=code)

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        return header.startswith("Bearer ") and header[7:] in self.access_tokens

    async def _create(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._status(401, "UNAUTHENTICATED", "Request had invalid credentials.")
        space = f"spaces/{request.match_info['space']}"
        body = json.loads(await request.read())
        with self._lock:
            if self._limited > 0:
                self._limited -= 1
                return self._status(429, "RESOURCE_EXHAUSTED", "Quota exceeded.")
            if space in self.removed_from:
                return self._status(403, "PERMISSION_DENIED", "The app is not in this space.")
            request_id = request.query.get("requestId")
            if request_id and request_id in self._requests:
                known = self.sent[self._requests[request_id]]
                return web.json_response({"name": known.name, "text": known.text})
            thread = str((body.get("thread") or {}).get("name") or "")
            replying = request.query.get("messageReplyOption", "").startswith("REPLY_MESSAGE")
            number = next(self._ids)
            if not (replying and thread.startswith(f"{space}/threads/")):
                thread = f"{space}/threads/b{number}"
            name = f"{space}/messages/b{number}.b{number}"
            made = Sent(name, space, str(body.get("text") or ""), thread, body.get("cardsV2") or [])
            self.sent[name] = made
            if request_id:
                self._requests[request_id] = name
        return web.json_response({"name": name, "text": made.text, "thread": {"name": thread}})

    async def _patch(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._status(401, "UNAUTHENTICATED", "Request had invalid credentials.")
        name = f"spaces/{request.match_info['space']}/messages/{request.match_info['message']}"
        body = json.loads(await request.read())
        fields = request.query.get("updateMask", "").split(",")
        with self._lock:
            message = self.sent.get(name)
            if message is None:
                return self._status(404, "NOT_FOUND", "Message not found.")
            if "text" in fields:
                message.text = str(body.get("text") or "")
        return web.json_response({"name": name, "text": message.text})

    async def _download(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._status(401, "UNAUTHENTICATED", "Request had invalid credentials.")
        data = self.media.get(request.match_info["resource"])
        if data is None or request.query.get("alt") != "media":
            return self._status(404, "NOT_FOUND", "Attachment not found.")
        return web.Response(body=data, content_type="application/octet-stream")
