"""The Microsoft Teams adapter: a bot of the Azure Bot Service. The Bot Connector posts each
activity to the gateway's listener with a JWT it signs (checked before anything else);
replies, edits, typing and approval cards go back through the connector at the activity's
``serviceUrl`` with the app's own token.

What delivery it can promise: an activity is answered 200 only once its message is stored;
one that fails to store gets 500, and Teams sends it again (it does for a bot that does
not answer within about 15 seconds), with the same id, which the gateway admits once.
Where each conversation's replies go (its ``serviceUrl``) is kept in
``HERMES_HOME/platforms/teams/conversations.json``, for scheduled jobs after a restart."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import aiohttp

from hermes_commons.files import atomic_write_text
from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_plugin_platform_teams.auth import (
    BotToken,
    ChannelVerifier,
    KeysUnavailable,
    Refused,
    TokenRefused,
)
from hermes_plugin_platform_teams.cards import ANSWER, answered_card, question_card
from hermes_plugin_platform_teams.files import FileOffers
from hermes_plugin_platform_teams.reading import (
    DOWNLOAD_INFO,
    chat_of,
    conversation_id,
    read_activity,
)
from hermes_plugin_platform_teams.settings import TeamsSettings
from hermes_sdk.media import Attachment
from hermes_sdk.platform import (
    ButtonPress,
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    TypedAnswers,
    split_message,
)

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["TeamsAdapter"]

log = logging.getLogger("hermes.teams")

MAX_MESSAGE_CHARS = 4000
"""Teams takes about 100 KB; shorter messages read (and edit) better."""
CONVERSATIONS_KEPT = 2000
REFUSAL_LOG_SECONDS = 60.0
CARD = "application/vnd.microsoft.card.adaptive"


class TeamsAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        self.settings = TeamsSettings.from_context(context)
        self.media = context.media()
        self.verifier = ChannelVerifier(self.settings.openid_url, self.settings.app_id)
        self.token = BotToken(
            self.settings.token_url, self.settings.app_id, self.settings.app_password
        )
        self._session: aiohttp.ClientSession | None = None
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._services_file = Path(context.home) / "platforms" / "teams" / "conversations.json"
        self._services: dict[str, str] = _load(self._services_file)
        self._refusals_logged = 0.0
        self._files = FileOffers(self._http, self._post)

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        return self._session

    async def run(self, host: PlatformHost) -> None:
        try:
            await self.token.get(self._http())
        except TokenRefused as exc:
            raise PlatformNotConfigured(
                f"Microsoft's token endpoint refused the bot's app id and secret ({exc}): check "
                "TEAMS_CLIENT_ID, TEAMS_CLIENT_SECRET and TEAMS_TENANT_ID"
            ) from None
        await host.http_route(self.settings.path, self._handler(host))
        log.info("teams: the messaging endpoint is served at %s", self.settings.path)
        await asyncio.Event().wait()  # activities arrive on the listener

    # --- receiving -------------------------------------------------------------------

    def _handler(self, host: PlatformHost) -> Any:
        from aiohttp import web

        async def activity(request: web.Request) -> web.StreamResponse:
            if request.method != "POST":
                return web.json_response({"error": "POST activities here"}, status=405)
            try:
                body = await request.json()
            except ValueError:
                return web.json_response({"error": "not JSON"}, status=400)
            if not isinstance(body, dict):
                return web.json_response({"error": "not an activity"}, status=400)
            try:
                await self.verifier.verify(request.headers.get("Authorization", ""), body)
            except Refused as exc:
                self._log_refusal(str(exc))
                return web.json_response({"error": "Unauthorized"}, status=401)
            except KeysUnavailable as exc:
                self._log_refusal(str(exc))
                return web.json_response({"error": "try again"}, status=503)
            self._remember(body)
            try:
                answer = await self._take(host, body)
            except NotImplementedInvoke as exc:  # a messaging extension, a sign-in ...
                return web.json_response({"error": f"{exc} is not handled"}, status=501)
            except Exception as exc:  # noqa: BLE001 - 500: Teams sends it again
                log.warning("teams: an activity could not be taken (%s)", exc)
                return web.json_response({"error": "not stored; send it again"}, status=500)
            return web.json_response(answer if answer is not None else {})

        return activity

    def _log_refusal(self, why: str) -> None:
        now = time.monotonic()
        if now - self._refusals_logged > REFUSAL_LOG_SECONDS:
            self._refusals_logged = now
            log.warning("teams: a request not from the Bot Connector was refused: %s", why)

    def _remember(self, activity: dict[str, Any]) -> None:
        """The conversation's service URL, for replies to it later (a scheduled job)."""
        service = str(activity.get("serviceUrl") or "")
        chat = chat_of(activity)
        if not service or not chat.chat_id:
            return
        known = self._services.pop(chat.chat_id, None)
        self._services[chat.chat_id] = service  # the most recently heard from kept last
        if known == service:
            return  # only an order changed: written with the next change
        while len(self._services) > CONVERSATIONS_KEPT:
            del self._services[next(iter(self._services))]
        try:
            self._services_file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self._services_file, json.dumps(self._services), sync=False)
        except OSError as exc:
            log.warning("teams: could not save %s: %s", self._services_file, exc)

    async def _take(self, host: PlatformHost, activity: dict[str, Any]) -> dict[str, Any] | None:
        kind, name = activity.get("type"), activity.get("name")
        if kind == "invoke" and name == "adaptiveCard/action":
            return await self._executed(host, activity)
        if kind == "invoke" and name == "fileConsent/invoke":
            self._files.answered(activity)  # uploads after the answer: Teams waits on it
            return None
        if kind == "invoke":
            raise NotImplementedInvoke(str(name))
        if kind != "message":
            return None
        value = activity.get("value")
        if isinstance(value, dict) and not activity.get("text") and ANSWER in value:
            await self._submitted(host, activity, value)
            return None
        said = read_activity(activity)
        if said is None:
            return None
        inbound = said.inbound
        files = [f for f in (self._incoming(activity, a) for a in said.files) if f is not None]

        async def deliver() -> None:
            typed = (inbound.chat, inbound.user_id, inbound.text)
            if not files and await self._typed.answer(host, *typed):
                return
            unaddressed = inbound.chat.chat_type != "private" and not inbound.addressed
            if unaddressed and self.settings.require_mention:
                return
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, deliver)
        return None

    def _incoming(
        self, activity: dict[str, Any], attachment: dict[str, Any]
    ) -> IncomingFile | None:
        """A file sent in a personal chat (its download URL, no token), or an image pasted
        in (on the connector: read with the bot's token, which goes to no other host)."""
        if attachment.get("contentType") == DOWNLOAD_INFO:
            content = attachment.get("content") or {}
            url, token_host = str(content.get("downloadUrl") or ""), ""
            name = str(attachment.get("name") or f"file.{content.get('fileType') or 'bin'}")
            declared = None
        else:
            url = str(attachment.get("contentUrl") or "")
            token_host = urlsplit(str(activity.get("serviceUrl") or "")).netloc
            name = str(attachment.get("name") or "image")
            declared = str(attachment.get("contentType") or "") or None
        if urlsplit(url).scheme not in ("http", "https"):
            return None

        async def download(limit: int) -> bytes:
            headers = {}
            if token_host and urlsplit(url).netloc == token_host:
                headers["Authorization"] = f"Bearer {await self.token.get(self._http())}"
            async with self._http().get(url, headers=headers) as response:
                if response.status >= 400:
                    raise ValueError(f"Teams would not give it ({response.status})")
                return await read_capped(response.content.iter_chunked(65536), limit)

        return IncomingFile(name=name, declared=declared, size=None, download=download)

    async def _press(
        self, host: PlatformHost, activity: dict[str, Any], data: dict[str, Any]
    ) -> tuple[str, bool]:
        sender = activity.get("from") or {}
        press = ButtonPress(
            chat=chat_of(activity),
            user_id=str(sender.get("aadObjectId") or sender.get("id") or ""),
            request_id=str(data.get(ANSWER) or ""),
            choice=str(data.get("choice") or ""),
        )
        toast = await host.pressed(press)
        still = host.question_open(press.request_id)
        if not still:
            self._typed.settle(press.request_id, False)
        who = str(sender.get("name") or press.user_id)
        return f"{toast} ({who})", still

    async def _executed(self, host: PlatformHost, activity: dict[str, Any]) -> dict[str, Any]:
        """Action.Execute: the press answered in the invoke's response, the card replaced
        when the question is closed."""
        value = activity.get("value")
        action = (value.get("action") if isinstance(value, dict) else None) or {}
        data = action.get("data") if isinstance(action, dict) else None
        if not isinstance(data, dict) or action.get("verb") != ANSWER:
            return {
                "statusCode": 200,
                "type": "application/vnd.microsoft.activity.message",
                "value": "",
            }
        said, still = await self._press(host, activity, data)
        if still:
            return {
                "statusCode": 200,
                "type": "application/vnd.microsoft.activity.message",
                "value": said,
            }
        card = answered_card(str(data.get("question") or ""), said)
        return {"statusCode": 200, "type": CARD, "value": card}

    async def _submitted(
        self, host: PlatformHost, activity: dict[str, Any], data: dict[str, Any]
    ) -> None:
        """Action.Submit (a client without Universal Actions): the card is replaced by an
        update of the message it is in."""
        said, still = await self._press(host, activity, data)
        card_id = str(activity.get("replyToId") or "")
        if still or not card_id:
            return
        chat = chat_of(activity)
        body = {
            "type": "message",
            "id": card_id,
            "attachments": [
                {
                    "contentType": CARD,
                    "content": answered_card(str(data.get("question") or ""), said),
                }
            ],
        }
        try:
            await self._connector("PUT", chat, f"activities/{quote(card_id, safe='')}", body)
        except (_ConnectorError, NotSent) as exc:
            log.info("teams: could not close the question's card: %s", exc)

    # --- sending ---------------------------------------------------------------------

    async def _connector(
        self, method: str, chat: ChatRef, path: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        service = self._services.get(chat.chat_id) or self.settings.service_url
        conversation = quote(conversation_id(chat), safe=":@;=")
        url = f"{service.rstrip('/')}/v3/conversations/{conversation}/{path}"
        try:
            token = await self.token.get(self._http())
        except (TokenRefused, aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
            raise NotSent(f"no token for the Bot Connector ({exc}): nothing was sent") from None
        headers = {"Authorization": f"Bearer {token}"}
        async with self._http().request(method, url, json=body, headers=headers) as response:
            raw = await response.read()
            try:
                answer = json.loads(raw) if raw else {}
            except ValueError:
                answer = {}
            if response.status < 300:
                return answer if isinstance(answer, dict) else {}
            error = (answer.get("error") if isinstance(answer, dict) else None) or {}
            if response.status == 401:
                self.token.forget()
            retry = response.headers.get("Retry-After")
            raise _ConnectorError(
                response.status,
                str(error.get("code") or ""),
                str(error.get("message") or ""),
                retry,
            )

    async def _post(self, chat: ChatRef, body: dict[str, Any]) -> str:
        try:
            made = await self._connector("POST", chat, "activities", body)
        except _ConnectorError as exc:
            raise exc.not_sent() from None
        return str(made.get("id") or "")

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        ids: list[str] = []
        for part in split_message(text, MAX_MESSAGE_CHARS):
            body = {"type": "message", "text": part, "textFormat": "markdown"}
            try:
                ids.append(await self._post(chat, body))
            except NotSent:
                if not ids:
                    raise
                raise ConnectionError(f"a part of the reply was refused after {len(ids)}") from None
        return ids

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        body = {"type": "message", "id": message_id, "text": text, "textFormat": "markdown"}
        try:
            await self._connector("PUT", chat, f"activities/{quote(message_id, safe='')}", body)
        except _ConnectorError as exc:
            if exc.status in (403, 404):
                raise MessageGone(str(exc)) from None
            raise exc.not_sent() from None

    async def typing(self, chat: ChatRef) -> None:
        try:
            await self._connector("POST", chat, "activities", {"type": "typing"})
        except Exception as exc:  # noqa: BLE001 - a courtesy
            log.debug("teams: no typing: %s", exc)

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """An Adaptive Card: the question, a button per choice (Action.Execute, with
        Action.Submit for older clients), and the words to type instead."""
        self._typed.asked(chat, choices, request_id)
        card = question_card(question, choices, request_id)
        await self._post(
            chat, {"type": "message", "attachments": [{"contentType": CARD, "content": card}]}
        )

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """In a personal chat: Teams' file consent card; the file is uploaded to the
        user's OneDrive when they accept. Elsewhere Teams takes no file from a bot: the
        reply names it."""
        if chat.chat_type != "private":
            name = attachment.name or "a file"
            note = (
                f"(A file was made, {name}: Teams lets a bot send files only in a personal chat.)"
            )
            return await self.send(chat, f"{caption}\n\n{note}" if caption else note)
        return [await self._files.offer(chat, attachment, caption)]

    async def aclose(self) -> None:
        await self._files.aclose()
        if self._session is not None:
            await self._session.close()
            self._session = None


class NotImplementedInvoke(Exception):
    """An invoke this bot does not handle (answered 501, as the Bot Framework SDKs do)."""


class _ConnectorError(Exception):
    def __init__(self, status: int, code: str, message: str, retry_after: str | None) -> None:
        super().__init__(f"{status} {code}: {message}".strip())
        self.status = status
        self.retry_after = retry_after

    def not_sent(self) -> Exception:
        """Teams' own rules: 412, 429 (after Retry-After) and 503 are tried again; 400, 403
        (not in the conversation, blocked, disabled), 404 and 413 never will pass; a 500,
        502 or 504 may have come after the message was made (not a refusal: its retry
        says it may be a duplicate)."""
        if self.status in (412, 429, 503, 401):
            wait = f" (retry after {self.retry_after} s)" if self.retry_after else ""
            return NotSent(f"Teams did not take the message: {self}{wait}")
        if self.status in (400, 403, 404, 413):
            return NotSent(f"Teams refused the message: {self}", permanent=True)
        return ConnectionError(f"Teams answered {self}")


def _load(path: Path) -> dict[str, str]:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
