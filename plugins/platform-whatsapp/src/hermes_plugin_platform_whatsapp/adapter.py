"""The WhatsApp adapter: Meta's Cloud API, through pywa (the maintained Python client of the
Cloud API) for everything sent, and the gateway's shared HTTP listener for the webhook.

Exactly once: Meta POSTs each change until it gets a 200, for days. The 200 is given only
after every message of the POST is stored by the gateway, so one lost on the way comes
again; one that comes again keeps its id (``wamid``), which the gateway admits once. Every
POST is checked against ``X-Hub-Signature-256`` (the app secret's HMAC of the body, in
constant time) before anything is read: 401 otherwise, and no model is asked.

What WhatsApp cannot do is said, not dropped: it edits nothing (replies go whole), and a
reply to someone whose 24-hour window has closed needs a template: it is refused in one
line (logged with the reply's failure) rather than lost in the Cloud API's later "failed".
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_plugin_platform_whatsapp.reading import MediaRef, Read, Sent, read_payload
from hermes_plugin_platform_whatsapp.render import to_whatsapp
from hermes_plugin_platform_whatsapp.settings import WhatsAppSettings
from hermes_plugin_platform_whatsapp.windows import Windows
from hermes_sdk.listener import signature_matches
from hermes_sdk.media import Attachment
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
    TypedAnswers,
    choices_prompt,
    split_message,
)

if TYPE_CHECKING:
    import httpx
    from aiohttp import web
    from pywa_async.client import WhatsApp

__all__ = ["WhatsAppAdapter"]

log = logging.getLogger("hermes.whatsapp")

MAX_MESSAGE_CHARS = 4096
"""A text message's body; an interactive message's body holds 1024."""
BUTTON_TITLE_CHARS = 20
ROW_TITLE_CHARS = 24
MAX_BUTTONS = 3
MAX_ROWS = 10
SAVE_SECONDS = 30.0
REENGAGEMENT = 131047
"""The Cloud API's code for a message sent outside the 24-hour window."""
_IMAGES = frozenset({"image/jpeg", "image/png"})
_AUDIO = frozenset({"audio/aac", "audio/mp4", "audio/mpeg", "audio/amr", "audio/ogg"})
"""What WhatsApp plays as audio; anything else goes as a document, named."""


class WhatsAppAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = WhatsAppSettings.from_context(context)
        self.media = context.media()
        self.windows = Windows(context.home)
        self.webhook_url: str | None = None
        """Where Meta is to POST, once it is served."""
        self._wa: WhatsApp | None = None
        self._session: httpx.AsyncClient | None = None
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._receipts: set[asyncio.Task[None]] = set()
        self._last_heard: dict[str, str] = {}
        """Each chat's latest message id: what a read receipt and typing attach to."""

    def _client(self) -> WhatsApp:
        if self._wa is None:
            import httpx
            from pywa_async.client import WhatsApp

            session = self._session = httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0))
            self._wa = WhatsApp(
                phone_id=self.settings.phone_number_id,
                token=self.settings.token,
                session=session,
                api_version=self.settings.api_version,
                validate_updates=False,  # the webhook is read here, signature first
            )
            if self.settings.api_url is not None:  # a test server: pywa names Meta's host
                session.base_url = f"{self.settings.api_url}/v{self.settings.api_version}"
        return self._wa

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        self._client()
        base = await host.http_route(self.settings.path, lambda request: self._serve(host, request))
        self.webhook_url = base + self.settings.path
        log.info(
            "whatsapp: webhook at %s (number %s)", self.webhook_url, self.settings.phone_number_id
        )
        while True:
            await asyncio.sleep(SAVE_SECONDS)
            self.windows.save()

    async def _serve(self, host: PlatformHost, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if request.method == "GET":
            return self._verification(request)
        if request.method != "POST":
            return web.Response(status=405, text="the webhook takes GET (verification) and POST")
        body = await request.read()
        signature = request.headers.get("X-Hub-Signature-256", "")
        if not signature_matches(self.settings.app_secret, body, signature):
            log.warning("whatsapp: refused a webhook POST with a missing or wrong signature")
            return web.Response(status=401, text="invalid signature")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return web.Response(status=400, text="not JSON")
        if not isinstance(payload, Mapping):
            return web.Response(status=400, text="not a webhook payload")
        try:
            await self._take(host, read_payload(payload, self.settings.phone_number_id))
        except Exception as exc:  # noqa: BLE001 - not stored: Meta sends it again
            log.warning("whatsapp: a webhook could not be handed over (%s); Meta retries", exc)
            return web.Response(status=500, text="not stored; send it again")
        return web.Response(status=200)

    def _verification(self, request: web.Request) -> web.StreamResponse:
        """Meta's check of the URL: ``hub.verify_token`` must be ours; ``hub.challenge``
        goes back as it came."""
        from aiohttp import web

        query = request.query
        given = query.get("hub.verify_token", "").encode()
        ours = self.settings.verify_token.encode()
        if query.get("hub.mode") == "subscribe" and hmac.compare_digest(given, ours):
            log.info("whatsapp: Meta verified the webhook's URL")
            return web.Response(status=200, text=query.get("hub.challenge", ""))
        log.warning("whatsapp: refused a webhook verification with the wrong verify token")
        return web.Response(status=403, text="wrong verify token")

    async def _take(self, host: PlatformHost, read: Read) -> None:
        for sent in read.sent:
            self._note(sent)
        hand_overs = []
        for said in read.said:
            self.windows.saw(said.inbound.user_id)
            self._last_heard[said.inbound.chat.chat_id] = said.inbound.message_id
            press = (
                None
                if said.files
                else self._typed.press_for(
                    said.inbound.chat, said.inbound.user_id, said.inbound.text
                )
            )
            if press is not None:
                hand_overs.append(self._press(host, press))
                continue
            files = [self._incoming(ref) for ref in said.files]
            inbound = said.inbound

            async def hand_over(inbound: Any = inbound, files: Any = files) -> None:
                await hand_over_with_files(
                    host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
                )

            hand_overs.append(self._order.run(inbound.chat, hand_over))
        for chosen in read.chosen:
            self.windows.saw(chosen.user_id)
            request_id, _, value = chosen.choice_id.partition(":")
            press = ButtonPress(
                chat=chosen.chat, user_id=chosen.user_id, request_id=request_id, choice=value
            )
            hand_overs.append(self._press(host, press))
        for failure in await asyncio.gather(*hand_overs, return_exceptions=True):
            if isinstance(failure, BaseException):
                raise failure
        # Stored: the blue ticks say so (to the people let in; a stranger's message is
        # answered by pairing, or not at all).
        for said in read.said:
            task = asyncio.ensure_future(self._mark_read(host, said.inbound))
            self._receipts.add(task)
            task.add_done_callback(self._receipts.discard)

    async def _mark_read(self, host: PlatformHost, inbound: Inbound) -> None:
        try:
            if await host.allows(inbound.user_id):
                await self._client().mark_message_as_read(inbound.message_id)
        except Exception as exc:  # noqa: BLE001 - a courtesy: the message is stored
            log.debug("whatsapp: no read receipt for %s: %s", inbound.message_id, exc)

    async def _press(self, host: PlatformHost, press: ButtonPress) -> None:
        toast = await host.pressed(press)
        open_still = host.question_open(press.request_id)
        self._typed.settle(press.request_id, open_still)
        if toast and not open_still:
            try:
                await self.send(press.chat, toast)
            except Exception as exc:  # noqa: BLE001 - the press counted; the note is a courtesy
                log.info("whatsapp: could not confirm a choice: %s", exc)

    def _note(self, sent: Sent) -> None:
        if sent.status != "failed":
            return
        why = "; ".join(sent.errors) or "no reason given"
        if REENGAGEMENT in sent.codes:
            why += " (the 24-hour window had closed: only a template reaches them now)"
        log.warning("whatsapp: message %s to %s failed: %s", sent.message_id, sent.recipient, why)

    def _incoming(self, ref: MediaRef) -> IncomingFile:
        async def download(limit: int) -> bytes:
            wa = self._client()
            found = await wa.get_media_url(ref.media_id)
            if found.file_size and found.file_size > limit:
                raise ValueError(f"it is over {limit} bytes")
            return await read_capped(wa.stream_media(found.url), limit)

        return IncomingFile(
            name=ref.name, declared=ref.mime, size=None, download=download, expect=ref.expect
        )

    # --- sending -------------------------------------------------------------------------

    def _open(self, chat: ChatRef) -> None:
        closed = self.windows.closed_since(chat.chat_id)
        if closed is not None:
            raise NotSent(
                f"WhatsApp: {chat.chat_id} last wrote over 24 hours ago, so only an approved "
                "template message can reach them now; it goes when they write again",
                permanent=True,
            )

    async def _sending(self, call: Any) -> str:
        from pywa_async import errors

        try:
            sent = await call
        except errors.ReEngagementMessage as exc:
            raise NotSent(
                f"WhatsApp: outside the 24-hour window ({exc.message})", permanent=True
            ) from None
        except (errors.SendMessageError, errors.IntegrityError) as exc:
            raise NotSent(f"WhatsApp refused it: {exc.code} {exc.message}") from None
        return str(sent.id)

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        self._open(chat)
        wa = self._client()
        ids = []
        for number, chunk in enumerate(split_message(to_whatsapp(text), MAX_MESSAGE_CHARS)):
            quoted = reply_to if number == 0 else None
            call = wa.send_message(to=chat.chat_id, text=chunk, reply_to_message_id=quoted)
            ids.append(await self._sending(call))
        return ids

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("WhatsApp edits no messages: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        """A read receipt for their latest message, with the typing dots (gone when the reply
        comes, or after 25 s)."""
        heard = self._last_heard.get(chat.chat_id)
        if heard is None:
            return
        with contextlib.suppress(Exception):  # a courtesy: never worth a failed turn
            await self._client().indicate_typing(heard)

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        from pywa.types.callback import Button, Section, SectionList, SectionRow

        self._open(chat)
        self._typed.asked(chat, choices, request_id)  # a typed answer counts too
        body = to_whatsapp(question)
        wa = self._client()
        if len(choices) <= MAX_BUTTONS:
            buttons: Any = [
                Button(title=c.label[:BUTTON_TITLE_CHARS], callback_data=f"{request_id}:{c.value}")
                for c in choices
            ]
        elif len(choices) <= MAX_ROWS:
            rows = [
                SectionRow(title=c.label[:ROW_TITLE_CHARS], callback_data=f"{request_id}:{c.value}")
                for c in choices
            ]
            buttons = SectionList(
                button_title="Choose", sections=[Section(title="Choices", rows=rows)]
            )
        else:
            await self.send(chat, choices_prompt(question, choices))
            return
        if len(body) > 1024:  # an interactive body's limit: the question goes first, whole
            await self.send(chat, question)
            body = "Your answer?"
        await self._sending(wa.send_message(to=chat.chat_id, text=body, buttons=buttons))

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """An image as a photo, OGG/Opus as a voice note, other audio WhatsApp plays as a
        track, anything else as a document with its name."""
        self._open(chat)
        wa = self._client()
        data = await asyncio.to_thread(attachment.read_bytes)
        mime = attachment.mime.split(";")[0]
        words = to_whatsapp(caption)[:1024] if caption else None
        if mime in _IMAGES:
            call = wa.send_image(to=chat.chat_id, image=data, caption=words, mime_type=mime)
        elif mime == "audio/ogg":
            call = wa.send_voice(to=chat.chat_id, voice=data, mime_type="audio/ogg")
        elif mime in _AUDIO:
            call = wa.send_audio(to=chat.chat_id, audio=data, mime_type=mime)
        else:
            call = wa.send_document(
                to=chat.chat_id,
                document=data,
                filename=attachment.name,
                caption=words,
                mime_type=mime,
            )
        return [await self._sending(call)]

    async def aclose(self) -> None:
        for task in list(self._receipts):
            task.cancel()
        self.windows.save()
        session, self._session, self._wa = self._session, None, None
        if session is not None:
            await session.aclose()
