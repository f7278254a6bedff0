"""The SMS adapter: a Twilio number, with the official ``twilio`` library for everything sent
and for checking every webhook's ``X-Twilio-Signature``, and the gateway's shared HTTP
listener for the webhooks.

Exactly once: a text's ``MessageSid`` is its id, which the gateway admits once. Twilio does
not POST a webhook again when the gateway was down or failed to store it, so the texts that
came meanwhile are read back from Twilio's message log (``position``): when the platform
starts, and soon after a hand-over failed.

Carriers' rules come first: STOP and its kin stop every message to that number until it
texts START; HELP is answered (by Twilio, or by ``help_text``); none of them costs a model
call. Texts carry no buttons: a question lists its choices, and a text that is one of them
is the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit
from xml.sax.saxutils import escape

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_sms.keywords import HELP, STOP, OptOuts, keyword
from hermes_plugin_platform_sms.media_host import MediaHost
from hermes_plugin_platform_sms.position import Position
from hermes_plugin_platform_sms.render import to_sms
from hermes_plugin_platform_sms.settings import SmsSettings
from hermes_sdk.media import Attachment
from hermes_sdk.platform import (
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
)

if TYPE_CHECKING:
    from aiohttp import web
    from twilio.rest import Client

__all__ = ["SmsAdapter"]

log = logging.getLogger("hermes.sms")

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
MMS_BYTES = 5 * 1024 * 1024
"""Twilio's limit for one MMS's media."""
READ_BACK_AFTER_FAILURE_SECONDS = 30.0
MARGIN = timedelta(minutes=15)
"""Read back from this long before where it last stood: this machine's clock and Twilio's
may differ, and a hand-over may take minutes (its pictures' downloads)."""
_NEVER_AS_SENT = frozenset({21211, 21408, 21606, 21612, 21614, 21617, 21610})
"""Twilio will never take these as they are: an invalid, unreachable, landline or
unsubscribed number, a sender not allowed there, a body too long."""
_OPTED_OUT = 21610
_TOKEN_REFUSED = frozenset({20003, 20005})


class SmsAdapter:
    can_edit = False
    read_back_after_failure = READ_BACK_AFTER_FAILURE_SECONDS
    pairs_by_default = False
    """A text to a stranger costs money and invites spam: a number gets a pairing code only
    with ``platforms.sms.pairing: true``; otherwise the owner lists it in allowed_users."""

    def __init__(self, context: PlatformContext) -> None:
        self.settings = SmsSettings.from_context(context)
        self.max_message_chars = self.settings.max_chars
        self.media = context.media()
        self.optouts = OptOuts(context.home)
        self.files = MediaHost(self.settings.webhook_url)
        self.position = Position(context.home)
        self.listening_url: str | None = None
        """Where the webhook is served on the listener, once it is."""
        self._client: Client | None = None
        self._http: Any = None
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._read_back_soon = asyncio.Event()
        self._taking: set[str] = set()
        """Texts being taken now: a webhook and a read-back must not both take one."""
        self._failures = 0
        """Hand-overs that failed: a read-back that began before one must not clear it."""

    def _twilio(self) -> Client:
        if self._client is None:
            from twilio.http.async_http_client import AsyncTwilioHttpClient
            from twilio.rest import Client

            self._http = AsyncTwilioHttpClient(timeout=30)
            self._client = Client(
                self.settings.account_sid, self.settings.auth_token, http_client=self._http
            )
            if self.settings.api_url is not None:
                self._client.api.base_url = self.settings.api_url
        return self._client

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        await self._check_number()
        base = await host.http_route(self.settings.path, lambda r: self._serve(host, r))
        self.listening_url = base + self.settings.path
        log.info("sms: webhook at %s (Twilio posts to %s)", self.listening_url, self._public())
        if self.position.since is None:  # the first start: from now, not the whole history
            self.position.stand(datetime.now(UTC), force=True)
        else:
            self._read_back_soon.set()
        first = True
        while True:
            if not first:  # soon after a failure; else hourly (a proxy down loses webhooks)
                with contextlib.suppress(TimeoutError):  # (wait_for can lose a cancel on 3.11)
                    async with asyncio.timeout(3600):
                        await self._read_back_soon.wait()
                    await asyncio.sleep(self.read_back_after_failure)
            elif not self._read_back_soon.is_set():
                first = False
                continue
            first = False
            self._read_back_soon.clear()
            try:
                await self._read_back(host)
            except Exception as exc:  # noqa: BLE001 - tried again soon
                log.warning("sms: reading back texts sent while away failed: %s", exc)
                self._read_back_soon.set()

    async def _check_number(self) -> None:
        """One line, before anything listens, when the credentials or the number are not
        right; a warning when Twilio posts the number's texts elsewhere."""
        from twilio.base.exceptions import TwilioException

        try:
            numbers = await self._twilio().incoming_phone_numbers.list_async(
                phone_number=self.settings.phone_number, limit=1
            )
        except TwilioException as exc:
            said = str(exc)
            if getattr(exc, "code", None) in _TOKEN_REFUSED or "HTTP 401" in said:
                raise PlatformNotConfigured(
                    "Twilio refused the account's credentials (20003): check "
                    "TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN"
                ) from None
            raise
        if not numbers:
            raise PlatformNotConfigured(
                f"{self.settings.phone_number} is not a number of this Twilio account: set "
                "TWILIO_PHONE_NUMBER to one of its numbers (console > Phone Numbers)"
            )
        posts_to = str(numbers[0].sms_url or "")
        if posts_to and posts_to != self.settings.webhook_url:
            log.warning(
                "sms: Twilio posts %s's texts to %s, not to webhook_url (%s): set the number's "
                "messaging webhook to webhook_url",
                self.settings.phone_number,
                posts_to.split("?", maxsplit=1)[0],
                self._public(),
            )

    def _public(self) -> str:
        """The webhook's public address, without the query that may carry a password."""
        return self.settings.webhook_url.split("?")[0]

    def _valid(self, request: web.Request, form: Mapping[str, str]) -> bool:
        """Twilio's signature over the address as it was given to Twilio (behind a proxy the
        request's own address differs) and the fields: with the auth token, or with a
        webhook signing key's secret when the request says it is signed with one."""
        from twilio.request_validator import RequestValidator, get_signature_algorithm

        signature = request.headers.get("X-Twilio-Signature", "")
        if not signature:
            return False
        settings_header = request.headers.get("X-Twilio-Webhooks-Signature-Settings", "")
        secret = self.settings.auth_token
        if settings_header:
            if not self.settings.signing_secret:
                return False  # signed with a key Hermes was not given
            secret = self.settings.signing_secret
        try:
            return bool(
                RequestValidator(secret).validate(
                    self.settings.webhook_url,
                    dict(form),
                    signature,
                    algorithm=get_signature_algorithm(settings_header),
                )
            )
        except Exception:  # noqa: BLE001 - whatever cannot be checked is not valid
            return False

    async def _serve(self, host: PlatformHost, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        rest = request.path.removeprefix(self.settings.path)
        if request.method == "GET" and rest.startswith("/media/"):
            found = self.files.fetch(rest.removeprefix("/media/"))
            if found is None:
                return web.Response(status=404, text="no such file (they are kept 15 minutes)")
            headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
            return web.Response(body=found[0], content_type=found[1], headers=headers)
        if request.method != "POST":
            return web.Response(status=405, text="Twilio POSTs texts here")
        form = {k: str(v) for k, v in (await request.post()).items()}
        if not self._valid(request, form):
            log.warning("sms: refused a webhook with a missing or wrong X-Twilio-Signature")
            return web.Response(status=401, text="invalid signature")
        if form.get("To") != self.settings.phone_number or not form.get("MessageSid"):
            return web.Response(status=200, text=EMPTY_TWIML, content_type="text/xml")
        self.position.in_flight += 1
        try:
            answer = await self._take(host, form)
        except Exception as exc:  # noqa: BLE001 - read back soon: Twilio does not send it again
            log.warning("sms: a text could not be handed over (%s); it is read back soon", exc)
            self._failed()
            return web.Response(status=500, text="not stored")
        finally:
            self.position.in_flight -= 1
        self.position.stand(datetime.now(UTC))  # all is in up to now (unless unsure)
        return web.Response(status=200, text=answer or EMPTY_TWIML, content_type="text/xml")

    async def _take(self, host: PlatformHost, form: Mapping[str, str]) -> str | None:
        """Hand a text over (or honour its keyword, or take it as a typed answer); returns
        TwiML to answer with, if any."""
        sender, sid, text = form.get("From", "").strip(), form["MessageSid"], form.get("Body", "")
        if self.position.handed(sid) or sid in self._taking:
            return None  # seen already, or being taken (a read-back's margin, a POST again)
        self._taking.add(sid)
        try:
            answer = await self._honour(host, form, sender, sid, text)
        finally:
            self._taking.discard(sid)
        self.position.took(sid)
        return EMPTY_TWIML.replace("<Response>", f"<Response>{answer}") if answer else None

    async def _honour(
        self, host: PlatformHost, form: Mapping[str, str], sender: str, sid: str, text: str
    ) -> str | None:
        """What a text is: a keyword, a typed answer, or a message for the gateway. Returns
        the TwiML message to answer with, if any."""
        chat = ChatRef(platform="sms", chat_id=sender, chat_type="private")
        said = keyword(text)
        answer: str | None = None
        if said == "stop":
            self.optouts.stopped(sender)
            log.info("sms: %s texted STOP: nothing more is sent to it until START", sender)
        elif said == "start" and sender in self.optouts:
            self.optouts.started(sender)
        elif said == "help":
            if self.settings.help_text:
                answer = f"<Message>{escape(self.settings.help_text)}</Message>"
        elif await self._typed.answer(host, chat, sender, text):
            pass  # an answer to a question listed in a text
        else:
            await self._hand_over(host, chat, form)
        return answer

    async def _hand_over(self, host: PlatformHost, chat: ChatRef, form: Mapping[str, str]) -> None:
        sid = form["MessageSid"]
        count = int(form.get("NumMedia") or 0)
        files = [
            self._incoming(form[f"MediaUrl{i}"], form.get(f"MediaContentType{i}"), f"{sid}-{i}")
            for i in range(min(count, 10))
            if form.get(f"MediaUrl{i}")
        ]
        inbound = Inbound(
            chat=chat, user_id=chat.chat_id, text=form.get("Body", ""), message_id=sid
        )

        async def hand_over() -> None:
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(chat, line)
            )

        await self._order.run(chat, hand_over)

    def _failed(self) -> None:
        self._failures += 1
        self.position.unsure = True
        self._read_back_soon.set()

    def _sends_token_to(self, url: str) -> bool:
        """The account's credentials go only to Twilio's API host over https (or the host
        set for a test): a media address elsewhere would hand them to a stranger."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if host == "api.twilio.com" and parts.scheme == "https":
            return True
        configured = self.settings.api_url
        return configured is not None and host == (urlsplit(configured).hostname or "").lower()

    def _incoming(self, url: str, mime: str | None, name: str) -> IncomingFile:
        extension = (mime or "").split("/")[-1].split(";")[0] or "bin"

        async def download(limit: int) -> bytes:
            import httpx

            auth = (self.settings.account_sid, self.settings.auth_token)
            async with httpx.AsyncClient(timeout=30) as http:
                where, credentials = url, (auth if self._sends_token_to(url) else None)
                for _hop in range(3):  # to Twilio's file store: without the credentials
                    async with http.stream("GET", where, auth=credentials) as answer:
                        if answer.is_redirect:
                            where, credentials = urljoin(where, answer.headers["location"]), None
                            continue
                        if answer.status_code != 200:
                            raise ValueError(f"Twilio answered {answer.status_code}")
                        return await read_capped(answer.aiter_bytes(), limit)
                raise ValueError("Twilio redirected too often")

        return IncomingFile(name=f"{name}.{extension}", declared=mime, size=None, download=download)

    # --- reading back --------------------------------------------------------------------

    async def _read_back(self, host: PlatformHost) -> None:
        """Hand over the texts Twilio took while no webhook reached the gateway, oldest
        first (each once: those handed over lately are known by id), then stand where the
        read began (texts that came meanwhile came by webhook, or are read next time)."""
        self.position.unsure = True  # webhooks must not move the position meanwhile
        failures_before = self._failures
        began = datetime.now(UTC)
        since = self.position.since or began
        client = self._twilio()
        start = since - MARGIN
        found = await client.messages.list_async(
            to=self.settings.phone_number, date_sent_after=start
        )
        missed = sorted(
            (
                m
                for m in found
                if m.direction == "inbound"
                and m.date_sent is not None
                and m.date_sent >= start
                and not self.position.handed(str(m.sid))
            ),
            key=lambda m: m.date_sent or began,
        )
        for message in missed:
            form = {
                "From": str(message.from_),
                "To": str(message.to),
                "Body": str(message.body or ""),
                "MessageSid": str(message.sid),
                "NumMedia": str(message.num_media or 0),
            }
            if int(message.num_media or 0):
                listed = await client.messages(message.sid).media.list_async()
                base = self.settings.api_url or "https://api.twilio.com"
                for number, item in enumerate(listed):
                    form[f"MediaUrl{number}"] = base + str(item.uri).removesuffix(".json")
                    form[f"MediaContentType{number}"] = str(item.content_type)
            try:
                answer = await self._take(host, form)
            except Exception as exc:  # noqa: BLE001 - the others go on; this one is read again
                log.warning("sms: a text read back could not be handed over: %s", exc)
                self._failed()
                continue
            if answer:  # HELP: Twilio's answer to the webhook went nowhere; say it now
                await self._quietly(chat_id=form["From"], text=self.settings.help_text)
        if self._failures != failures_before:
            return  # something failed meanwhile: the position stays, read back again soon
        self.position.unsure = False
        self.position.stand(began - MARGIN, force=True)
        if missed:
            log.info("sms: read back %d text(s) sent while away", len(missed))

    async def _quietly(self, chat_id: str, text: str) -> None:
        with contextlib.suppress(Exception):
            await self._create(to=chat_id, body=to_sms(text))

    # --- sending -------------------------------------------------------------------------

    def _reachable(self, chat: ChatRef) -> None:
        if chat.chat_id in self.optouts:
            raise NotSent(
                f"SMS: {chat.chat_id} texted STOP; nothing is sent until they text START",
                permanent=True,
            )

    async def _create(self, **fields: Any) -> str:
        """The text's sid. Twilio answers an error only for what it did not take: each is
        a refusal (retried, unless sending it again cannot help)."""
        from twilio.base.exceptions import TwilioRestException

        try:
            sent = await self._twilio().messages.create_async(
                from_=self.settings.phone_number, **fields
            )
        except TwilioRestException as exc:
            if exc.code == _OPTED_OUT:
                self.optouts.stopped(str(fields.get("to")))
            said = f"Twilio refused it: {exc.code} {exc.msg}"
            raise NotSent(said, permanent=exc.code in _NEVER_AS_SENT) from None
        return str(sent.sid)

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        self._reachable(chat)
        parts = split_message(to_sms(text), self.max_message_chars)
        return await send_in_parts(parts, lambda part: self._create(to=chat.chat_id, body=part))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a text message cannot be edited: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        return None  # texts have no typing indicator

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question with each choice to text back (its value) and what it means."""
        self._typed.asked(chat, choices, request_id)
        lines = [f"{choice.value} - {choice.label}" for choice in choices]
        if any(choice.value.upper() in STOP | HELP for choice in choices):
            log.warning("sms: a choice is a carrier keyword (STOP, HELP...): texting it is that")
        await self.send(chat, f"{question}\n\nText back one of:\n" + "\n".join(lines))

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """An MMS with the file (US and Canadian numbers), or, where MMS is off or the file
        too large for it, a text naming it."""
        self._reachable(chat)
        data = await asyncio.to_thread(attachment.read_bytes)
        if not self.settings.mms or len(data) > MMS_BYTES:
            why = ": a file too large to text" if self.settings.mms else ""
            note = f"[{attachment.name}{why}]"
            return await self.send(chat, f"{caption}\n\n{note}" if caption else note)
        address = self.files.serve(data, attachment.mime, attachment.name)
        body = to_sms(caption)[: self.max_message_chars] if caption else None
        fields: dict[str, Any] = {"to": chat.chat_id, "media_url": [address]}
        if body:
            fields["body"] = body
        return [await self._create(**fields)]

    async def aclose(self) -> None:
        http, self._http, self._client = self._http, None, None
        if http is not None:
            await http.close()
