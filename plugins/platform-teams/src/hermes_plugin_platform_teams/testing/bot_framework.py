"""The Bot Framework on loopback for tests, from its REST API reference (Authentication;
Connector API) and Teams' activity schema:

- the Bot Connector posting activities to the bot's messaging endpoint, each with a JWT
  signed as the Bot Framework signs them (``iss`` https://api.botframework.com, ``aud`` the
  app id, ``serviceurl``), and tokens that must be refused: another key, expired, another
  bot's, another issuer, another service URL, a key not endorsed for Teams;
- the OpenID metadata and its keys (JWKs with ``endorsements``);
- the tenant's token endpoint (client credentials; ``invalid_client`` for a wrong secret);
- the Bot Connector's conversations API: send, reply, update (``PUT``), typing; with
  Teams' refusals: 401 for a token it did not issue, 403 ``BotNotInConversationRoster``,
  404 for an unknown activity, 429 ``Throttled`` with Retry-After.
"""

from __future__ import annotations

import datetime
import itertools
import json
import secrets
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qs

import jwt
from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["APP_ID", "APP_PASSWORD", "TENANT_ID", "Activity", "FakeBotFramework"]

APP_ID = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
APP_PASSWORD = "bot-secret-value"
TENANT_ID = "72f988bf-86f1-41af-91ab-2d7cd011db47"
ISSUER = "https://api.botframework.com"
CARD = "application/vnd.microsoft.card.adaptive"
FILE_INFO = "application/vnd.microsoft.teams.card.file.info"


def _rsa_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Activity:
    """What the bot sent to a conversation through the connector."""

    id: str
    conversation: str
    type: str
    text: str = ""
    attachments: list[dict[str, Any]] = field(default_factory=list)
    reply_to: str = ""
    updates: int = 0

    @property
    def card(self) -> dict[str, Any] | None:
        for attachment in self.attachments:
            if attachment.get("contentType") == "application/vnd.microsoft.card.adaptive":
                return dict(attachment["content"])
        return None

    @property
    def visible(self) -> str:
        """What the user sees: the text, or a card's text blocks."""
        card = self.card
        if card is None:
            return self.text
        blocks = [
            str(b.get("text") or "") for b in card.get("body") or () if b.get("type") == "TextBlock"
        ]
        return "\n".join([self.text, *blocks]).strip()

    @property
    def buttons(self) -> list[dict[str, Any]]:
        card = self.card
        return list((card or {}).get("actions") or ())


class FakeBotFramework:
    """Teams behind the Bot Connector, for a bot whose messaging endpoint is
    :attr:`endpoint_url` (set it once the bot's listener is known)."""

    def __init__(self) -> None:
        self.endpoint_url = ""
        self._key_id = secrets.token_hex(10)
        self._key = _rsa_key()
        self._other_key = _rsa_key()
        self._unendorsed_id = secrets.token_hex(10)
        self._lock = threading.RLock()
        self._ids = itertools.count(1_700_000_000_000)
        self.access_tokens: set[str] = set()
        self.token_grants = 0
        self.key_fetches = 0
        self.sent: list[Activity] = []
        self.typing: list[str] = []
        self.not_in: set[str] = set()
        """Conversations the bot was removed from: 403 BotNotInConversationRoster."""
        self._throttled = 0
        self.responses: list[tuple[int, Any]] = []
        self._last: dict[str, Any] | None = None
        self._people: dict[str, str] = {}
        """Personal conversations and whose they are."""
        self.accept_files = True
        """Whether the person accepts a file the bot offers (the consent card)."""
        self.uploads: dict[str, bytearray] = {}
        self._downloads: dict[str, bytes] = {}
        self._inline: dict[str, bytes] = {}
        self.leaked_tokens = 0
        """Requests to OneDrive or SharePoint that carried the bot's token (never should)."""
        self._person = ThreadPoolExecutor(max_workers=1, thread_name_prefix="teams-person")
        app = web.Application(client_max_size=300 * 1024 * 1024)  # OneDrive's pieces
        app.router.add_get("/v1/.well-known/openidconfiguration", self._metadata)
        app.router.add_get("/v1/.well-known/keys", self._keys)
        app.router.add_post("/{tenant}/oauth2/v2.0/token", self._grant)
        base = "/teams/v3/conversations/{conversation}/activities"
        app.router.add_post(base, self._send)
        app.router.add_post(base + "/{reply_to}", self._send)
        app.router.add_put(base + "/{activity}", self._update)
        app.router.add_put("/onedrive/upload/{token}", self._upload)
        app.router.add_get("/sharepoint/download/{token}", self._download)
        app.router.add_get("/teams/v3/attachments/{token}/views/original", self._inline_image)
        self._server = LoopbackApp(app, "fake-bot-framework")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._person.shutdown(wait=False, cancel_futures=True)
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def openid_url(self) -> str:
        return f"{self.url}/v1/.well-known/openidconfiguration"

    @property
    def token_url(self) -> str:
        return f"{self.url}/{TENANT_ID}/oauth2/v2.0/token"

    @property
    def service_url(self) -> str:
        return f"{self.url}/teams/"

    # --- the connector posting to the bot ---------------------------------------------

    def token(self, kind: str = "good") -> str:
        """``good``, or one to refuse: ``forged``, ``expired``, ``not-yet``, ``audience``,
        ``issuer``, ``serviceurl``, ``no-serviceurl``, ``unendorsed`` (a key endorsed for
        another channel), ``unknown-kid``, ``alg-none``."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "aud": APP_ID,
            "serviceurl": self.service_url,
            "nbf": now - 5,
            "exp": now + 3600,
        }
        key, key_id = self._key, self._key_id
        if kind == "forged":
            key = self._other_key
        elif kind == "expired":
            claims |= {"nbf": now - 7200, "exp": now - 3600}
        elif kind == "audience":
            claims["aud"] = str(uuid.uuid4())
        elif kind == "issuer":
            claims["iss"] = "https://sts.windows.net/attacker/"
        elif kind == "serviceurl":
            claims["serviceurl"] = "https://smba.example.org/teams/"
        elif kind == "unendorsed":
            key, key_id = self._other_key, self._unendorsed_id
        elif kind == "unknown-kid":
            key_id = secrets.token_hex(10)
        elif kind == "no-serviceurl":
            del claims["serviceurl"]
        elif kind == "not-yet":
            claims |= {"nbf": now + 3600, "exp": now + 7200}
        elif kind == "alg-none":
            return jwt.encode(claims, "", algorithm="none", headers={"kid": key_id})
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": key_id})

    def post(self, activity: dict[str, Any], token: str | None = None) -> tuple[int, Any]:
        import httpx

        headers = {"Authorization": f"Bearer {token or self.token()}"}
        response = httpx.post(self.endpoint_url, json=activity, headers=headers, timeout=30)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        with self._lock:
            self.responses.append((response.status_code, answer))
            if response.status_code == 200:
                self._last = activity
        return response.status_code, answer

    def conversation(self, user: str, kind: str = "personal") -> str:
        if kind == "personal":
            personal = f"a:1personal{abs(hash(user)) % 10**8}"
            self._people[personal] = user
            return personal
        if kind == "groupChat":
            return "19:groupchat0001@thread.v2"
        return "19:channel0001@thread.tacv2"

    def _activity(self, user: str, kind: str, conversation: str, **fields: Any) -> dict[str, Any]:
        return {
            "type": "message",
            "id": str(next(self._ids)),
            "timestamp": datetime.datetime.now(datetime.UTC).isoformat(),
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": {"id": f"29:{user}", "name": user.title(), "aadObjectId": user},
            "conversation": {"conversationType": kind, "tenantId": TENANT_ID, "id": conversation},
            "recipient": {"id": f"28:{APP_ID}", "name": "Hermes"},
            "channelData": {"tenant": {"id": TENANT_ID}},
            **fields,
        }

    def user_says(
        self,
        user: str,
        text: str,
        *,
        kind: str = "personal",
        mention: bool = False,
        thread: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
        token: str | None = None,
        channel_id: str = "msteams",
    ) -> tuple[int, Any]:
        """``user`` (an Entra object id) writes ``text``: in a personal chat, a group
        chat or a channel (in ``thread``, a root post's id); ``mention`` names the bot."""
        conversation = self.conversation(user, kind)
        if thread:
            conversation = f"{conversation};messageid={thread}"
        body = f"<at>Hermes</at> {text}" if mention else text
        entities: list[dict[str, Any]] = [{"type": "clientInfo", "locale": "en-US"}]
        if mention:
            entities.append(
                {
                    "type": "mention",
                    "mentioned": {"id": f"28:{APP_ID}", "name": "Hermes"},
                    "text": "<at>Hermes</at>",
                }
            )
        activity = self._activity(
            user,
            kind,
            conversation,
            text=body,
            textFormat="plain",
            entities=entities,
            attachments=attachments or [],
        )
        activity["channelId"] = channel_id
        return self.post(activity, token)

    @property
    def last_activity(self) -> dict[str, Any]:
        """The last activity the bot took (200)."""
        assert self._last is not None
        return self._last

    def user_sends_file(self, user: str, data: bytes, name: str, mime: str) -> tuple[int, Any]:
        """``user`` sends a file in their personal chat: Teams puts it in their OneDrive and
        gives the bot a download link (no token needed)."""
        token = secrets.token_hex(8)
        self._downloads[token] = data
        kind = name.rsplit(".", 1)[-1] if "." in name else "bin"
        info = {
            "contentType": "application/vnd.microsoft.teams.file.download.info",
            "contentUrl": f"https://contoso.sharepoint.com/personal/{name}",
            "name": name,
            "content": {
                "downloadUrl": f"{self.url}/sharepoint/download/{token}",
                "uniqueId": token,
                "fileType": kind,
            },
        }
        return self.user_says(user, "", attachments=[info])

    def user_pastes_image(self, user: str, data: bytes) -> tuple[int, Any]:
        """``user`` pastes an image: it stays on the connector, read with the bot's token."""
        token = secrets.token_hex(8)
        self._inline[token] = data
        image = {
            "contentType": "image/png",
            "contentUrl": f"{self.url}/teams/v3/attachments/{token}/views/original",
        }
        return self.user_says(user, "", attachments=[image])

    def files_to(self, conversation: str) -> list[tuple[str, bytes]]:
        """The files the bot sent there (file info cards of uploads that completed)."""
        found = []
        for activity in self.sent_to(conversation):
            for attachment in activity.attachments:
                if (
                    attachment.get("contentType")
                    == "application/vnd.microsoft.teams.card.file.info"
                ):
                    token = str(attachment["content"]["uniqueId"])
                    found.append((str(attachment["name"]), bytes(self.uploads.get(token, b""))))
        return found

    def deliver_again(self) -> tuple[int, Any]:
        """The last activity taken, again (as Teams does when a bot answers late)."""
        assert self._last is not None
        return self.post(self._last)

    def press(
        self, user: str, card: Activity, choice: str, execute: bool = True
    ) -> tuple[int, Any]:
        """``user`` presses ``card``'s button for ``choice``: an ``adaptiveCard/action``
        invoke (``execute``), or, as a client without Universal Actions does, a message
        whose value is the button's data."""
        (button,) = [b for b in card.buttons if b["data"].get("choice") == choice]
        kind = "personal" if card.conversation.startswith("a:") else "channel"
        if execute:
            activity = self._activity(
                user,
                kind,
                card.conversation,
                type="invoke",
                name="adaptiveCard/action",
                replyToId=card.id,
                value={
                    "action": {
                        "type": "Action.Execute",
                        "verb": button["verb"],
                        "data": button["data"],
                    },
                    "trigger": "manual",
                },
            )
        else:
            activity = self._activity(
                user, kind, card.conversation, replyToId=card.id, value=button["fallback"]["data"]
            )
        status, answer = self.post(activity)
        replaced = isinstance(answer, dict) and answer.get("type") == CARD
        if execute and status == 200 and replaced:
            assert isinstance(answer, dict)
            with self._lock:  # Teams replaces the card with the one answered
                card.attachments = [{"contentType": CARD, "content": answer["value"]}]
        return status, answer

    def throttle(self, calls: int = 1) -> None:
        with self._lock:
            self._throttled = calls

    def sent_to(self, conversation: str) -> list[Activity]:
        with self._lock:
            return [a for a in self.sent if a.conversation == conversation and a.type == "message"]

    # --- the Bot Framework's side ----------------------------------------------------

    async def _metadata(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": ISSUER,
                "authorization_endpoint": "https://invalid.botframework.com",
                "jwks_uri": f"{self.url}/v1/.well-known/keys",
                "id_token_signing_alg_values_supported": ["RS256"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            }
        )

    async def _keys(self, request: web.Request) -> web.Response:
        self.key_fetches += 1

        def jwk(key: Any, key_id: str, endorsements: list[str]) -> dict[str, Any]:
            public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            return {**public, "kid": key_id, "use": "sig", "endorsements": endorsements}

        keys = [
            jwk(self._key, self._key_id, ["msteams", "webchat", "skype"]),
            jwk(self._other_key, self._unendorsed_id, ["webchat"]),
        ]
        return web.json_response({"keys": keys})

    async def _grant(self, request: web.Request) -> web.Response:
        form = parse_qs((await request.read()).decode())

        def one(name: str) -> str:
            return (form.get(name) or [""])[0]

        if request.match_info["tenant"] != TENANT_ID:
            return web.json_response(
                {"error": "invalid_request", "error_description": "AADSTS90002: Tenant not found."},
                status=400,
            )
        if one("client_id") != APP_ID or one("client_secret") != APP_PASSWORD:
            return web.json_response(
                {
                    "error": "invalid_client",
                    "error_description": "AADSTS7000215: Invalid client secret provided.",
                },
                status=401,
            )
        if (
            one("grant_type") != "client_credentials"
            or one("scope") != "https://api.botframework.com/.default"
        ):
            return web.json_response({"error": "invalid_scope"}, status=400)
        token = secrets.token_urlsafe(32)
        with self._lock:
            self.access_tokens.add(token)
            self.token_grants += 1
        return web.json_response(
            {
                "token_type": "Bearer",
                "expires_in": 3599,
                "ext_expires_in": 3599,
                "access_token": token,
            }
        )

    def _error(self, status: int, code: str, message: str, **headers: str) -> web.Response:
        return web.json_response(
            {"error": {"code": code, "message": message}}, status=status, headers=headers
        )

    def _check(self, request: web.Request) -> web.Response | None:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer ") or header[7:] not in self.access_tokens:
            return self._error(
                401, "BotNotRegistered", "Authorization has been denied for this request."
            )
        conversation = request.match_info["conversation"].split(";")[0]
        if ";messageid=" in request.match_info["conversation"] and "@thread.v2" in conversation:
            return self._error(400, "BadArgument", "A group chat has no threads.")
        if conversation in self.not_in:
            return self._error(
                403, "BotNotInConversationRoster", "The bot is not part of the conversation roster."
            )
        with self._lock:
            if self._throttled > 0:
                self._throttled -= 1
                return self._error(429, "Throttled", "Too many requests.", **{"Retry-After": "2"})
        return None

    async def _send(self, request: web.Request) -> web.Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        body = json.loads(await request.read())
        conversation = request.match_info["conversation"]
        if body.get("type") == "typing":
            self.typing.append(conversation)
            return web.json_response({})
        made = Activity(
            id=str(next(self._ids)),
            conversation=conversation,
            type=str(body.get("type") or "message"),
            text=str(body.get("text") or ""),
            attachments=list(body.get("attachments") or []),
            reply_to=request.match_info.get("reply_to", ""),
        )
        with self._lock:
            self.sent.append(made)
        for attachment in made.attachments:
            if attachment.get("contentType") == "application/vnd.microsoft.teams.card.file.consent":
                self._person.submit(self._consent, made, attachment)
        return web.json_response({"id": made.id}, status=201)

    def _consent(self, card: Activity, attachment: dict[str, Any]) -> None:
        """The person answers a file consent card (from their own side, after a moment)."""
        content = attachment["content"]
        accepted = self.accept_files
        token = secrets.token_hex(8)
        value: dict[str, Any] = {
            "type": "fileUpload",
            "action": "accept" if accepted else "decline",
            "context": content["acceptContext" if accepted else "declineContext"],
        }
        if accepted:
            self.uploads[token] = bytearray()
            value["uploadInfo"] = {
                "contentUrl": f"https://contoso-my.sharepoint.com/personal/{attachment['name']}",
                "name": attachment["name"],
                "uploadUrl": f"{self.url}/onedrive/upload/{token}",
                "uniqueId": token,
                "fileType": str(attachment["name"]).rsplit(".", 1)[-1],
            }
        person = self._people.get(card.conversation, "someone")
        activity = self._activity(
            person,
            "personal",
            card.conversation,
            type="invoke",
            name="fileConsent/invoke",
            replyToId=card.id,
            value=value,
        )
        self.post(activity)

    async def _upload(self, request: web.Request) -> web.Response:
        """A OneDrive upload session: pieces with Content-Range, in order."""
        token = request.match_info["token"]
        if "Authorization" in request.headers:
            self.leaked_tokens += 1
        if token not in self.uploads:
            return web.json_response({"error": {"code": "itemNotFound"}}, status=404)
        spec = request.headers.get("Content-Range", "")
        data = await request.read()
        try:
            span, total = spec.removeprefix("bytes ").split("/")
            start, end = (int(n) for n in span.split("-"))
        except ValueError:
            return web.json_response({"error": {"code": "invalidRange"}}, status=400)
        received = self.uploads[token]
        last = end + 1 == int(total)
        # OneDrive: in order, the range as long as the body, pieces of 320 KiB multiples.
        if start != len(received) or end - start + 1 != len(data):
            return web.json_response({"error": {"code": "invalidRange"}}, status=416)
        if not last and len(data) % (320 * 1024):
            return web.json_response({"error": {"code": "invalidRange"}}, status=400)
        received.extend(data)
        if len(received) < int(total):
            return web.json_response({"nextExpectedRanges": [f"{len(received)}-"]}, status=202)
        return web.json_response({"id": token, "size": len(received)}, status=201)

    async def _inline_image(self, request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer ") or header[7:] not in self.access_tokens:
            return self._error(401, "Unauthorized", "Authorization has been denied.")
        data = self._inline.get(request.match_info["token"])
        if data is None:
            return self._error(404, "NotFound", "Unknown attachment.")
        return web.Response(body=data, content_type="image/png")

    async def _download(self, request: web.Request) -> web.Response:
        if "Authorization" in request.headers:
            self.leaked_tokens += 1
        data = self._downloads.get(request.match_info["token"])
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    async def _update(self, request: web.Request) -> web.Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        body = json.loads(await request.read())
        with self._lock:
            conversation = request.match_info["conversation"]
            found = [
                a
                for a in self.sent
                if a.id == request.match_info["activity"] and a.conversation == conversation
            ]
            if not found:
                return self._error(404, "ActivityNotFoundInConversation", "Unknown activity.")
            made = found[0]
            made.text = str(body.get("text") or "")
            made.attachments = list(body.get("attachments") or [])
            made.updates += 1
        return web.json_response({"id": made.id})
