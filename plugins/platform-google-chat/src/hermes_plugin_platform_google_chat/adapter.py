"""The Google Chat adapter: an HTTP endpoint Chat app. Google posts each interaction event to
the gateway's listener with a bearer token it signs; replies, edits and the approval card go
out through the Chat API as the app's service account.

What delivery it can promise: an event is answered (200) only once its message is stored;
a request that fails to store gets 500 (Google documents no retry of events: the person
sees that the app did not respond, and writes again); a message that comes twice keeps its
id (``spaces/S/messages/M``) and is answered once. A reply sent again by the ledger carries
the same ``requestId``, and the Chat API answers it with the message it already made."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import aiohttp

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_commons.sending import DUPLICATE_NOTE
from hermes_plugin_platform_google_chat.auth import AppToken, KeyRefused, Refused, Verifier
from hermes_plugin_platform_google_chat.settings import GoogleChatSettings
from hermes_sdk.platform import (
    ButtonPress,
    ChatOrder,
    ChatRef,
    Choice,
    Inbound,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    TypedAnswers,
    split_message,
    unread_attachment_note,
    yes_and_no,
)

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["GoogleChatAdapter"]

log = logging.getLogger("hermes.google_chat")

MAX_MESSAGE_CHARS = 4000
"""The Chat API takes 32,000 bytes; shorter messages read (and edit) better."""
PLATFORM = "google_chat"
CLOSED_KEPT = 512
ANSWER = "hermes_answer"
"""The function a card button calls: the press comes back as a CARD_CLICKED event."""
REFUSAL_LOG_SECONDS = 60.0


class GoogleChatAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        self.settings = GoogleChatSettings.from_context(context)
        self.media = context.media()
        self.verifier = Verifier(
            self.settings.certs_url,
            self.settings.audience,
            project_number=self.settings.project_number is not None,
        )
        self.app_token = AppToken(self.settings.service_account)
        self._session: aiohttp.ClientSession | None = None
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._by_email = {
            str(u).strip().lower(): str(u)
            for u in context.config.get("allowed_users") or ()
            if "@" in str(u)
        }
        """Allowed people listed by email (hermes-agent's way): their ids are the entry."""
        self._refusals_logged = 0.0
        self._closed: OrderedDict[str, None] = OrderedDict()
        """Questions a press here closed: a second press at the same moment does not."""

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        return self._session

    async def run(self, host: PlatformHost) -> None:
        try:
            await self.app_token.token()
        except KeyRefused as exc:
            raise PlatformNotConfigured(
                "the Chat app's service account key was refused by Google's token endpoint "
                f"({exc}): make a new key and set GOOGLE_CHAT_SERVICE_ACCOUNT_JSON to it"
            ) from None
        # Anything else (Google unreachable a moment) is raised: the gateway tries again.
        url = await host.http_route(self.settings.path, self._handler(host))
        log.info(
            "google_chat: events for %s served at %s%s",
            self.settings.endpoint_url,
            url,
            self.settings.path,
        )
        await asyncio.Event().wait()  # events arrive on the listener: nothing else to do

    # --- receiving -------------------------------------------------------------------

    def _handler(self, host: PlatformHost) -> Any:
        from aiohttp import web

        async def event(request: web.Request) -> web.StreamResponse:
            if request.method != "POST":
                return web.json_response({"error": "POST events here"}, status=405)
            try:
                await self.verifier.verify(request.headers.get("Authorization", ""))
            except Refused as exc:
                self._log_refusal(str(exc))
                return web.json_response({"error": "unauthenticated"}, status=401)
            try:
                body = await request.json()
            except ValueError:
                return web.json_response({"error": "not JSON"}, status=400)
            if not isinstance(body, dict):
                return web.json_response({"error": "not an event"}, status=400)
            kind = body.get("type")
            try:
                # The mention that adds the app to a space comes as ADDED_TO_SPACE.
                if kind == "MESSAGE" or (kind == "ADDED_TO_SPACE" and body.get("message")):
                    await self._message(host, body)
                elif kind == "CARD_CLICKED":
                    return web.json_response(await self._clicked(host, body))
            except Exception as exc:  # noqa: BLE001 - 500: sent again, taken then
                log.warning("google_chat: an event could not be taken (%s)", exc)
                return web.json_response({"error": "not stored; send it again"}, status=500)
            return web.json_response({})

        return event

    def _log_refusal(self, why: str) -> None:
        now = time.monotonic()
        if now - self._refusals_logged > REFUSAL_LOG_SECONDS:
            self._refusals_logged = now
            log.warning("google_chat: a request not from Google Chat was refused: %s", why)

    async def _message(self, host: PlatformHost, body: dict[str, Any]) -> None:
        read = read_message(body, self._by_email)
        if read is None:
            return
        inbound, attachments = read
        files = [f for f in (self.incoming(a) for a in attachments) if f is not None]
        drive = [a for a in attachments if self.incoming(a) is None]
        if drive:  # named, so the agent can say it was not read
            notes = [
                unread_attachment_note(f"a Google Drive file, {a.get('contentName') or 'unnamed'}")
                for a in drive
            ]
            inbound = replace(inbound, text="\n".join([inbound.text, *notes]).strip())

        async def deliver() -> None:
            typed = (inbound.chat, inbound.user_id, inbound.text)
            if not files and await self._typed.answer(host, *typed):
                return
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, deliver)

    def incoming(self, attachment: dict[str, Any]) -> IncomingFile | None:
        resource = str((attachment.get("attachmentDataRef") or {}).get("resourceName") or "")
        if not resource:
            return None  # a Drive file: only the Drive API reads it

        async def download(limit: int) -> bytes:
            token = await self.app_token.token()
            url = f"{self.settings.api_url}/v1/media/{quote(resource, safe='/')}?alt=media"
            headers = {"Authorization": f"Bearer {token}"}
            async with self._http().get(url, headers=headers) as response:
                if response.status == 401:
                    self.app_token.forget()
                if response.status >= 400:
                    raise ValueError(f"the Chat API would not give it ({response.status})")
                return await read_capped(response.content.iter_chunked(65536), limit)

        return IncomingFile(
            name=str(attachment.get("contentName") or "file"),
            declared=str(attachment.get("contentType") or "") or None,
            size=None,
            download=download,
        )

    async def _clicked(self, host: PlatformHost, body: dict[str, Any]) -> dict[str, Any]:
        """A card's button: the press of a question's choice, by whoever pressed it."""
        action = body.get("action") or {}
        if action.get("actionMethodName") != ANSWER:
            return {}
        params = {str(p.get("key")): str(p.get("value")) for p in action.get("parameters") or ()}
        user = body.get("user") or {}
        chat = _chat_of(body.get("space") or {}, body.get("message") or {})
        press = ButtonPress(
            chat=chat,
            user_id=_user_id(user, self._by_email),
            request_id=params.get("request", ""),
            choice=params.get("choice", ""),
        )
        was_open = host.question_open(press.request_id)
        toast = await host.pressed(press)
        viewer = {"name": str(user.get("name") or "")}
        first_to_close = press.request_id not in self._closed  # no await since: one wins
        if host.question_open(press.request_id) or not was_open or not first_to_close:
            # Not this press's to close (someone else's, or one late): told privately, and
            # the card keeps what it says.
            return {"privateMessageViewer": viewer, "text": toast}
        self._closed[press.request_id] = None
        while len(self._closed) > CLOSED_KEPT:
            self._closed.popitem(last=False)
        self._typed.settle(press.request_id, False)
        shown = str((body.get("message") or {}).get("text") or "")
        asked = shown.split("\n\nReply with one of", maxsplit=1)[0] or "The question"
        who = str(user.get("displayName") or press.user_id)
        outcome = f"{toast} ({who})"
        return {
            "actionResponse": {"type": "UPDATE_MESSAGE"},
            "text": f"{asked}\n\n{outcome}",
            "cardsV2": [answered_card(press.request_id, outcome)],
        }

    # --- sending ---------------------------------------------------------------------

    async def _call(
        self, method: str, path: str, body: dict[str, Any], params: dict[str, str]
    ) -> dict[str, Any]:
        token = await self.app_token.token()
        headers = {"Authorization": f"Bearer {token}"}
        url = f"{self.settings.api_url}/v1/{path}"
        async with self._http().request(
            method, url, json=body, params=params, headers=headers
        ) as response:
            raw = await response.read()
            try:
                answer = json.loads(raw) if raw else {}
            except ValueError:
                answer = None
            if response.status < 400 and isinstance(answer, dict):
                return answer
            error = answer.get("error") if isinstance(answer, dict) else None
            if not isinstance(error, dict):  # a proxy's page, not the API's google.rpc.Status
                error = {"message": raw.decode("utf-8", errors="replace")[:200]}
            status, message = response.status, str(error.get("message") or "")
            if status == 401:
                self.app_token.forget()
            raise _ChatError(status, str(error.get("status") or ""), message)

    async def _create(self, chat: ChatRef, body: dict[str, Any], request_id: str | None) -> str:
        params = {}
        if chat.thread_id:
            body = {**body, "thread": {"name": chat.thread_id}}
            params["messageReplyOption"] = "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
        if request_id:
            params["requestId"] = request_id
        try:
            made = await self._call("POST", f"{chat.chat_id}/messages", body, params)
        except _ChatError as exc:
            if exc.status >= 500 and not request_id:
                raise ConnectionError(f"Google Chat answered {exc}") from None  # maybe made
            raise exc.not_sent() from None
        except KeyRefused as exc:
            raise NotSent(f"no access token for the Chat API: {exc}") from None
        return str(made.get("name") or "")

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        """A reply sent again carries the same request ids as the first time (the note a
        retry puts in front is left out: the API gives back what it made, and it was no
        duplicate)."""
        if reply_to and text.startswith(DUPLICATE_NOTE):
            text = text[len(DUPLICATE_NOTE) :].lstrip("\n")
        ids = []
        for number, part in enumerate(split_message(text, MAX_MESSAGE_CHARS)):
            request_id = None
            if reply_to:  # the same part of the same reply: the API gives back the first
                key = f"{chat.chat_id}\0{reply_to}\0{number}\0{part}".encode()
                request_id = hashlib.sha256(key).hexdigest()[:40]
            try:
                ids.append(await self._create(chat, {"text": to_chat_markup(part)}, request_id))
            except NotSent:
                if not ids:
                    raise
                raise ConnectionError(f"a part of the reply was refused after {len(ids)}") from None
        return ids

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        if not message_id.startswith("spaces/"):
            raise MessageGone(f"{message_id!r} is not a Google Chat message")
        body = {"text": to_chat_markup(text)}
        try:
            await self._call("PATCH", message_id, body, {"updateMask": "text"})
        except _ChatError as exc:
            if exc.status in (403, 404):
                raise MessageGone(str(exc)) from None
            raise exc.not_sent() from None

    async def typing(self, chat: ChatRef) -> None:
        """Google Chat shows apps no typing indicator."""

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """A card with a button per choice; the word typed back answers too."""
        text = self._typed.prompt(chat, question, choices, request_id)
        meaning = yes_and_no(choices)
        buttons = []
        for choice in choices:
            button: dict[str, Any] = {
                "text": choice.label,
                "onClick": {
                    "action": {
                        "function": ANSWER,
                        "parameters": [
                            {"key": "request", "value": request_id},
                            {"key": "choice", "value": choice.value},
                        ],
                    }
                },
            }
            if meaning is not None and choice is meaning[0]:
                button["type"] = "FILLED"
            buttons.append(button)
        card = {
            "cardId": f"question-{request_id}"[:60],
            "card": {"sections": [{"widgets": [{"buttonList": {"buttons": buttons}}]}]},
        }
        await self._create(chat, {"text": to_chat_markup(text), "cardsV2": [card]}, None)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class _ChatError(Exception):
    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}".strip())
        self.status = status

    def not_sent(self) -> NotSent:
        """Tried again: a rate limit, a server error, a token gone stale; given up: what
        the same message will always get (the app removed from the space, no such space)."""
        if self.status in (400, 403, 404):
            return NotSent(f"Google Chat refused the message: {self}", permanent=True)
        return NotSent(f"Google Chat did not take the message: {self}")


def _user_id(user: dict[str, Any], by_email: dict[str, str]) -> str:
    """The sender's stable ``users/ID``; or, when ``allowed_users`` lists their email (as
    hermes-agent's allowlists have it), that entry."""
    email = str(user.get("email") or "").strip().lower()
    return by_email.get(email) or str(user.get("name") or email)


def answered_card(request_id: str, outcome: str) -> dict[str, Any]:
    """The card a question's answer leaves: who chose what, no buttons."""
    return {
        "cardId": f"question-{request_id}"[:60],
        "card": {"sections": [{"widgets": [{"textParagraph": {"text": outcome}}]}]},
    }


def _chat_of(space: dict[str, Any], message: dict[str, Any]) -> ChatRef:
    direct = space.get("spaceType") == "DIRECT_MESSAGE" or space.get("type") == "DM"
    thread = str((message.get("thread") or {}).get("name") or "") or None
    if direct:
        return ChatRef(PLATFORM, str(space.get("name") or ""), "private")
    return ChatRef(PLATFORM, str(space.get("name") or ""), "group", thread)


def read_message(
    body: dict[str, Any], by_email: dict[str, str]
) -> tuple[Inbound, list[dict[str, Any]]] | None:
    """A MESSAGE event as the gateway's message and its attachments; None for a bot's."""
    message = body.get("message") or {}
    sender = message.get("sender") or body.get("user") or {}
    if sender.get("type") == "BOT" or not message.get("name"):
        return None
    chat = _chat_of(body.get("space") or {}, message)
    text = str(message.get("argumentText") or message.get("text") or "").strip()
    attachments = [a for a in message.get("attachment") or () if isinstance(a, dict)]
    inbound = Inbound(
        chat=chat,
        user_id=_user_id(sender, by_email),
        user_name=str(sender.get("displayName") or sender.get("name") or ""),
        text=text,
        message_id=str(message["name"]),
        addressed=True,  # in a space, Chat sends an app only what mentions it
    )
    return inbound, attachments


_BOLD = re.compile(r"\*\*(.+?)\*\*")
_LINK = re.compile(r"\[([^\]|]+)\]\((https?://(?:[^()\s]|\([^()\s]*\))+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
_CODE = re.compile(r"(```.*?(?:```|\Z)|`[^`\n]+`)", re.DOTALL)
_MENTION = re.compile(r"<(users/[^>]*)>")


def to_chat_markup(markdown: str) -> str:
    """Markdown as Google Chat writes it: ``*bold*``, ``<url|text>``, a heading in bold;
    code (blocks, an unclosed one while streaming, and inline) left as it is. A model's
    ``<users/all>`` would mention everyone in the space: it is shown, not sent."""
    pieces = _CODE.split(markdown)
    for index in range(0, len(pieces), 2):  # outside code
        piece = _MENTION.sub(r"\1", pieces[index])
        piece = _BOLD.sub(r"*\1*", piece)
        piece = _LINK.sub(r"<\2|\1>", piece)
        pieces[index] = _HEADING.sub(r"*\1*", piece)
    return "".join(pieces)
