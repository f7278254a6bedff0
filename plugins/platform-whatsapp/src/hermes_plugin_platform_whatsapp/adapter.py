"""The WhatsApp adapter: Meta's Cloud API, through pywa (the maintained Python client of the
Cloud API) for everything sent, and the gateway's shared HTTP listener for the webhook.

Exactly once: Meta POSTs each change until it gets a 200, for days. The 200 is given only
after every message of the POST is stored by the gateway (each chat's in order, stopping at
the first that fails), so one lost on the way comes again; one that comes again keeps its
id (``wamid``), which the gateway admits once. Every POST is checked against
``X-Hub-Signature-256`` (the app secret's HMAC of the body, in constant time) before
anything is read: 401 otherwise, and no model is asked.

What WhatsApp cannot do is said, not dropped: it edits nothing (replies go whole), takes
only some kinds of files, and after a person's 24-hour window has closed takes only
templates. Each is refused in one line (logged as the reply's failure) rather than lost in
the Cloud API's later "failed".
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_whatsapp.choices import buttons_for, listed
from hermes_plugin_platform_whatsapp.reading import MediaRef, Read, Said, Sent, read_payload
from hermes_plugin_platform_whatsapp.render import to_whatsapp
from hermes_plugin_platform_whatsapp.settings import WhatsAppSettings
from hermes_plugin_platform_whatsapp.windows import Windows
from hermes_sdk.listener import signature_matches
from hermes_sdk.media import Attachment
from hermes_sdk.platform import (
    ButtonPress,
    ChatRef,
    Choice,
    Inbound,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
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
BODY_CHARS = 1024
SAVE_SECONDS = 30.0
REMEMBERED = 10_000
"""Chats whose latest message id is kept (for read receipts), and presses already taken."""
REENGAGEMENT = 131047
"""The Cloud API's code for a message sent outside the 24-hour window."""
_WRONG_AS_SENT = frozenset({100, 131008, 131009, 131026, 131030, 131051, 131053})
"""Refusals of the message as it is (a bad parameter, an undeliverable or unlisted number,
an unsupported type): sending it again cannot help."""
_IMAGES = frozenset({"image/jpeg", "image/png"})
_AUDIO = frozenset({"audio/aac", "audio/mp4", "audio/mpeg", "audio/amr"})
_VIDEO = frozenset({"video/mp4", "video/3gpp"})
_DOCUMENTS = frozenset(
    {
        "application/pdf",
        "text/plain",
        "application/msword",
        "application/vnd.ms-excel",
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    }
)
"""The only documents the Cloud API takes; text of any other kind goes as text/plain."""
_TEXTS = frozenset({"application/json", "application/xml", "application/x-yaml"})


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
        self._later: set[asyncio.Task[None]] = set()
        """Courtesies sent after the 200 (read receipts, a press's confirmation)."""
        self._last_heard: OrderedDict[str, str] = OrderedDict()
        """Each chat's latest message id: what a read receipt and typing attach to."""
        self._pressed: OrderedDict[str, None] = OrderedDict()
        """Button answers already taken (by message id): Meta may POST one again."""

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
        await self._check_credentials()
        base = await host.http_route(self.settings.path, lambda request: self._serve(host, request))
        self.webhook_url = base + self.settings.path
        log.info("whatsapp: webhook at %s", self.webhook_url)
        while True:
            await asyncio.sleep(SAVE_SECONDS)
            self.windows.save()

    async def _check_credentials(self) -> None:
        """One line, before anything listens, when the token or the number is not right."""
        from pywa_async import errors

        try:
            await self._client().get_business_phone_number()
        except errors.AuthorizationError as exc:
            raise PlatformNotConfigured(
                f"WhatsApp refused the access token ({exc.code} {exc.message}): make a system "
                "user's token with whatsapp_business_messaging, in WHATSAPP_CLOUD_ACCESS_TOKEN"
            ) from None
        except errors.WhatsAppError as exc:
            if exc.code != 100:
                raise
            raise PlatformNotConfigured(
                f"WhatsApp knows no number {self.settings.phone_number_id} for this token: set "
                "WHATSAPP_CLOUD_PHONE_NUMBER_ID to the Phone number ID of API Setup"
            ) from None

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
        """Hand over a POST's messages and answers: each chat's in order, stopping at its
        first failure (the rest come again with the POST); chats at once."""
        for sent in read.sent:
            await self._note(host, sent)
        steps: dict[str, list[Callable[[], Awaitable[None]]]] = {}
        for said in read.said:
            self.windows.saw(said.inbound.user_id, said.sent_at)
            steps.setdefault(said.inbound.chat.chat_id, []).append(self._handing(host, said))
        for chosen in read.chosen:
            self.windows.saw(chosen.user_id, chosen.sent_at)
            if chosen.message_id in self._pressed:
                continue  # taken already: Meta sent the POST again
            request_id, _, value = chosen.choice_id.partition(":")
            press = ButtonPress(
                chat=chosen.chat, user_id=chosen.user_id, request_id=request_id, choice=value
            )
            steps.setdefault(chosen.chat.chat_id, []).append(
                self._pressing(host, press, chosen.message_id)
            )

        async def in_order(chat_steps: list[Callable[[], Awaitable[None]]]) -> None:
            for step in chat_steps:
                await step()

        outcomes = await asyncio.gather(
            *(in_order(chat_steps) for chat_steps in steps.values()), return_exceptions=True
        )
        self.windows.save_if_reopened()  # a window a crash must not forget
        for failure in outcomes:
            if isinstance(failure, BaseException):
                raise failure

    def _handing(self, host: PlatformHost, said: Said) -> Callable[[], Awaitable[None]]:
        inbound = said.inbound
        files = [self._incoming(ref) for ref in said.files]

        async def step() -> None:
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )
            self._remember(self._last_heard, inbound.chat.chat_id, inbound.message_id)
            self._later_do(self._mark_read(host, inbound))

        return step

    def _pressing(
        self, host: PlatformHost, press: ButtonPress, message_id: str
    ) -> Callable[[], Awaitable[None]]:
        async def step() -> None:
            toast = await host.pressed(press)
            self._remember(self._pressed, message_id, None)
            if toast and not host.question_open(press.request_id):
                self._later_do(self._quietly_send(press.chat, toast))

        return step

    @staticmethod
    def _remember(kept: OrderedDict[str, Any], key: str, value: Any) -> None:
        kept[key] = value
        kept.move_to_end(key)
        while len(kept) > REMEMBERED:
            kept.popitem(last=False)

    def _later_do(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def _quietly_send(self, chat: ChatRef, text: str) -> None:
        try:
            await self.send(chat, text)
        except Exception as exc:  # noqa: BLE001 - the press counted; the note is a courtesy
            log.info("whatsapp: could not confirm a choice: %s", exc)

    async def _mark_read(self, host: PlatformHost, inbound: Inbound) -> None:
        """The blue ticks, once stored (for those let in: a stranger is answered by pairing,
        or not at all)."""
        try:
            if await host.allows(inbound.user_id):
                await self._client().mark_message_as_read(inbound.message_id)
        except Exception as exc:  # noqa: BLE001 - a courtesy: the message is stored
            log.debug("whatsapp: no read receipt for %s: %s", inbound.message_id, exc)

    async def _note(self, host: PlatformHost, sent: Sent) -> None:
        """A status Meta reports of a message the bot sent, into the delivery ledger (a
        failure against the reply that sent it)."""
        why = ""
        if sent.status == "failed":
            why = "; ".join(sent.errors) or "no reason given"
            if REENGAGEMENT in sent.codes:
                why += " (the 24-hour window had closed: only a template reaches them now)"
        try:
            await host.reported(sent.message_id, sent.status, why)
        except Exception as exc:  # noqa: BLE001 - a report: the message itself is not lost
            log.warning(
                "whatsapp: message %s %s (%s); not recorded: %s",
                sent.message_id,
                sent.status,
                why,
                exc,
            )

    def _incoming(self, ref: MediaRef) -> IncomingFile:
        file: IncomingFile | None = None

        async def download(limit: int) -> bytes:
            assert file is not None
            wa = self._client()
            found = await wa.get_media_url(ref.media_id)
            if found.file_size:  # refused in the user's words, before downloading
                self.media.check_size(file.kind(), int(found.file_size), ref.name)
            return await read_capped(wa.stream_media(found.url), limit)

        file = IncomingFile(
            name=ref.name, declared=ref.mime, size=None, download=download, expect=ref.expect
        )
        return file

    # --- sending -------------------------------------------------------------------------

    def _open(self, chat: ChatRef) -> None:
        closed = self.windows.closed_since(chat.chat_id)
        if closed is not None:
            raise NotSent(
                f"WhatsApp: {chat.chat_id} last wrote over 24 hours ago, so only an approved "
                "template message can reach them now; it goes when they write again",
                permanent=True,
            )

    async def _sending(self, call: Awaitable[Any]) -> str:
        """The sent message's id. pywa raises only for an HTTP error answer, when nothing was
        sent: each is a refusal (retried unless sending it again cannot help)."""
        from pywa_async import errors

        try:
            sent = await call
        except errors.WhatsAppError as exc:
            if exc.code == REENGAGEMENT:
                said = f"WhatsApp: outside the 24-hour window ({exc.message})"
                raise NotSent(said, permanent=True) from None
            said = f"WhatsApp refused it: {exc.code} {exc.message}"
            raise NotSent(said, permanent=exc.code in _WRONG_AS_SENT) from None
        return str(sent.id)

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        self._open(chat)
        wa = self._client()
        quoted = [reply_to]  # the first part quotes what it answers

        async def one(part: str) -> str:
            said = wa.send_message(
                to=chat.chat_id, text=part, reply_to_message_id=quoted.pop() if quoted else None
            )
            return await self._sending(said)

        return await send_in_parts(split_message(to_whatsapp(text), MAX_MESSAGE_CHARS), one)

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
        """Reply buttons (up to three) or a list (up to ten), each choice's word and meaning
        listed in the question (a button's title holds 20 characters); more choices are
        typed. Typing the word works too: the gateway takes it."""
        self._open(chat)
        controls = buttons_for(choices, request_id)
        if controls is None:
            await self.send(chat, f"{question}\n\nReply with one of:\n{listed(choices)}")
            return
        body = to_whatsapp(f"{question}\n\n{listed(choices)}")
        if len(body) > BODY_CHARS:  # the question goes first, whole
            await self.send(chat, question)
            body = to_whatsapp(listed(choices))[:BODY_CHARS]
        await self._sending(
            self._client().send_message(to=chat.chat_id, text=body, buttons=controls)
        )

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """As WhatsApp shows each: a JPEG or PNG as a photo, OGG/Opus as a voice note, AAC,
        MP3, M4A and AMR as audio, MP4 as a video, PDF and Office files as documents, any
        other text as a text document with its name. Anything else is refused in one line."""
        self._open(chat)
        wa = self._client()
        mime = attachment.mime.split(";")[0].strip().lower()
        words = to_whatsapp(caption)[:BODY_CHARS] if caption else None
        to = chat.chat_id
        data = await asyncio.to_thread(attachment.read_bytes)
        if mime in _IMAGES:
            call = wa.send_image(to=to, image=data, caption=words, mime_type=mime)
        elif mime == "audio/ogg":
            call = wa.send_voice(to=to, voice=data, mime_type="audio/ogg")
        elif mime in _AUDIO:
            call = wa.send_audio(to=to, audio=data, mime_type=mime)
        elif mime in _VIDEO:
            call = wa.send_video(to=to, video=data, caption=words, mime_type=mime)
        elif mime in _DOCUMENTS or mime.startswith("text/") or mime in _TEXTS:
            kind = mime if mime in _DOCUMENTS else "text/plain"
            call = wa.send_document(
                to=to, document=data, filename=attachment.name, caption=words, mime_type=kind
            )
        else:
            raise NotSent(
                f"WhatsApp takes no {mime} files ({attachment.name}): photos, voice notes, "
                "audio, MP4 video, PDF, Office and text documents only",
                permanent=True,
            )
        return [await self._sending(call)]

    async def aclose(self) -> None:
        for task in list(self._later):
            task.cancel()
        self.windows.save()
        session, self._session, self._wa = self._session, None, None
        if session is not None:
            await session.aclose()
