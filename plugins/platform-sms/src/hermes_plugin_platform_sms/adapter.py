"""The SMS adapter: a Twilio number, with the official ``twilio`` library for everything sent
and for checking every webhook's ``X-Twilio-Signature``, and the gateway's shared HTTP
listener for the webhooks.

Exactly once: a text's ``MessageSid`` is its id, which the gateway admits once. Twilio does
not POST a webhook again when the gateway was down or failed to store it, so the texts that
came meanwhile are read back from Twilio's message log: when the platform starts (from
where it last stood) and soon after a hand-over failed.

Carriers' rules come first: STOP and its kin stop every message to that number until it
texts START; HELP gets a short answer; none of them costs a model call. Texts carry no
buttons: a question lists its choices, and a text that is one of them is the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hermes_commons.files import atomic_write_text
from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_plugin_platform_sms.keywords import OptOuts, keyword
from hermes_plugin_platform_sms.media_host import MediaHost
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
SLACK_SECONDS = 120.0
"""Read back from this long before where it last stood: clocks differ."""
_OPTED_OUT = 21610
"""Twilio: "Attempt to send to unsubscribed recipient"."""
_REFUSED = frozenset({21211, 21408, 21612, 21614, 21617, 21606, 30004, 30005, 30006})
"""Numbers and messages Twilio will not take as they are (invalid, unreachable, too long)."""
_TOKEN_REFUSED = frozenset({20003, 20005})


class SmsAdapter:
    can_edit = False
    pairs_by_default = False
    """A text to a stranger costs money and invites spam: a number gets a pairing code only
    with ``platforms.sms.pairing: true``; otherwise the owner lists it in allowed_users."""

    def __init__(self, context: PlatformContext) -> None:
        self.settings = SmsSettings.from_context(context)
        self.max_message_chars = self.settings.max_chars
        self.media = context.media()
        self.optouts = OptOuts(context.home)
        self.files = MediaHost(self.settings.webhook_url)
        self.listening_url: str | None = None
        """Where the webhook is served on the listener, once it is."""
        self._position = Path(context.home) / "platforms" / "sms" / "read.json"
        self._client: Client | None = None
        self._http: Any = None
        self._order = ChatOrder()
        self._handed: OrderedDict[str, None] = OrderedDict()
        """Texts handed over lately (by sid), so a read-back does not fetch their media again."""
        self._read_back_soon = asyncio.Event()
        self._typed = TypedAnswers()
        self._stood_at = 0.0
        self._missing = False
        """A hand-over failed: where the log is read from stays put until it is read back."""

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
        from twilio.base.exceptions import TwilioException

        self._twilio()
        base = await host.http_route(self.settings.path, lambda r: self._serve(host, r))
        self.listening_url = base + self.settings.path
        log.info("sms: webhook at %s (Twilio posts to %s)", self.listening_url, self._public())
        try:
            await self._read_back(host)
        except TwilioException as exc:
            said = str(exc)
            if getattr(exc, "code", None) in _TOKEN_REFUSED or "HTTP 401" in said:
                raise PlatformNotConfigured(
                    "Twilio refused the account's credentials (20003): check "
                    "TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN"
                ) from None
            log.warning("sms: could not read back texts sent while away: %s", said[:200])
            self._missing = True
            self._read_back_soon.set()
        except Exception as exc:  # noqa: BLE001 - the network: tried again soon
            log.warning("sms: could not read back texts sent while away: %s", exc)
            self._missing = True
            self._read_back_soon.set()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._read_back_soon.wait(), timeout=3600)
            self._read_back_soon.clear()
            await asyncio.sleep(READ_BACK_AFTER_FAILURE_SECONDS)
            try:
                await self._read_back(host)
            except Exception as exc:  # noqa: BLE001 - tried again soon
                log.warning("sms: reading back texts failed: %s", exc)
                self._missing = True
                self._read_back_soon.set()

    def _public(self) -> str:
        """The webhook's public address, without the query that may carry a password."""
        return self.settings.webhook_url.split("?")[0]

    def _valid(self, request: web.Request, form: Mapping[str, str]) -> bool:
        from twilio.request_validator import RequestValidator, get_signature_algorithm

        signature = request.headers.get("X-Twilio-Signature", "")
        if not signature:
            return False
        algorithm = get_signature_algorithm(
            request.headers.get("X-Twilio-Webhooks-Signature-Settings", "")
        )
        # The address Twilio was given, with this request's query (Twilio signs both).
        url = self.settings.webhook_url
        if request.query_string:
            url = f"{url.split('?')[0]}?{request.query_string}"
        try:
            return bool(
                RequestValidator(self.settings.signing_secret).validate(
                    url, dict(form), signature, algorithm=algorithm
                )
            )
        except Exception:  # noqa: BLE001 - whatever cannot be checked is not valid
            return False

    async def _serve(self, host: PlatformHost, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        media = request.path.removeprefix(self.settings.path).removeprefix("/media/")
        if request.method == "GET" and media != request.path.removeprefix(self.settings.path):
            found = self.files.fetch(media)
            if found is None:
                return web.Response(status=404, text="no such file (they are kept 15 minutes)")
            return web.Response(body=found[0], content_type=found[1])
        if request.method != "POST":
            return web.Response(status=405, text="Twilio POSTs texts here")
        form = {k: str(v) for k, v in (await request.post()).items()}
        if not self._valid(request, form):
            log.warning("sms: refused a webhook with a missing or wrong X-Twilio-Signature")
            return web.Response(status=401, text="invalid signature")
        if form.get("To") != self.settings.phone_number or not form.get("MessageSid"):
            return web.Response(status=200, text=EMPTY_TWIML, content_type="text/xml")
        try:
            answer = await self._take(host, form)
        except Exception as exc:  # noqa: BLE001 - read back soon: Twilio does not send it again
            log.warning("sms: a text could not be handed over (%s); it is read back soon", exc)
            self._missing = True
            self._read_back_soon.set()
            return web.Response(status=500, text="not stored")
        if not self._missing and time.monotonic() - self._stood_at > 60:
            self._stand(datetime.now(UTC))  # all is in up to now: a restart reads from here
        return web.Response(status=200, text=answer or EMPTY_TWIML, content_type="text/xml")

    async def _take(self, host: PlatformHost, form: Mapping[str, str]) -> str | None:
        """Hand a text over (or honour its keyword); returns TwiML to answer with, if any."""
        sender, sid, text = form.get("From", "").strip(), form["MessageSid"], form.get("Body", "")
        chat = ChatRef(platform="sms", chat_id=sender, chat_type="private")
        said = keyword(text)
        if said == "stop":
            self.optouts.stopped(sender)
            log.info("sms: %s texted STOP: nothing more is sent to it until START", sender)
            return None  # Twilio (Advanced Opt-Out) confirms it to them itself
        if said == "start":
            self.optouts.started(sender)
            return None
        press = self._typed.press_for(chat, sender, text) if not said else None
        if press is not None:  # an answer to a question listed in a text
            await host.pressed(press)
            self._typed.settle(press.request_id, host.question_open(press.request_id))
            return None
        if said == "help":
            from xml.sax.saxutils import escape

            message = f"<Message>{escape(self.settings.help_text)}</Message>"
            return EMPTY_TWIML.replace("<Response>", f"<Response>{message}")
        count = int(form.get("NumMedia") or 0)
        files = [
            self._incoming(
                form.get(f"MediaUrl{i}", ""), form.get(f"MediaContentType{i}"), f"{sid}-{i}"
            )
            for i in range(min(count, 10))
            if form.get(f"MediaUrl{i}")
        ]
        inbound = Inbound(chat=chat, user_id=sender, text=text, message_id=sid)

        async def hand_over() -> None:
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(chat, line)
            )

        await self._order.run(chat, hand_over)
        self._handed[sid] = None
        while len(self._handed) > 4096:
            self._handed.popitem(last=False)
        return None

    def _sends_token_to(self, url: str) -> bool:
        """The account's credentials go only to Twilio's API host (or the one set for a
        test): a media address elsewhere would hand them to a stranger."""
        host = (urlsplit(url).hostname or "").lower()
        if host == "api.twilio.com":
            return True
        configured = self.settings.api_url
        return configured is not None and host == (urlsplit(configured).hostname or "").lower()

    def _incoming(self, url: str, mime: str | None, name: str) -> IncomingFile:
        extension = (mime or "").split("/")[-1].split(";")[0] or "bin"

        async def download(limit: int) -> bytes:
            import httpx

            auth = (self.settings.account_sid, self.settings.auth_token)
            async with httpx.AsyncClient(timeout=30) as http:
                asked = await http.get(url, auth=auth if self._sends_token_to(url) else None)
                if asked.is_redirect:  # to Twilio's file store: without the credentials
                    asked = await http.get(asked.headers["location"])
                if asked.status_code != 200:
                    raise ValueError(f"Twilio answered {asked.status_code}")
                return await read_capped(asked.aiter_bytes(), limit)

        return IncomingFile(name=f"{name}.{extension}", declared=mime, size=None, download=download)

    # --- reading back --------------------------------------------------------------------

    def _since(self) -> datetime | None:
        try:
            stood = json.loads(self._position.read_text(encoding="utf-8"))["since"]
            return datetime.fromisoformat(stood)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _stand(self, at: datetime) -> None:
        atomic_write_text(self._position, json.dumps({"since": at.isoformat()}), sync=False)
        self._stood_at = time.monotonic()

    async def _read_back(self, host: PlatformHost) -> None:
        """Hand over the texts Twilio took while no webhook reached the gateway (by sid:
        the gateway drops those it has), oldest first."""
        now = datetime.now(UTC)
        since = self._since()
        if since is None:  # the first start: from now on, not the number's whole history
            self._stand(now)
            return
        client = self._twilio()
        start = since - timedelta(seconds=SLACK_SECONDS)
        found = await client.messages.list_async(
            to=self.settings.phone_number, date_sent_after=start, limit=1000
        )
        self._missing = False  # from here, a failure is read back again
        missed = sorted(
            (m for m in found if m.direction == "inbound" and m.date_sent and m.date_sent >= start),
            key=lambda m: m.date_sent or now,
        )
        count = 0
        for message in missed:
            if message.sid in self._handed:
                continue
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
            await self._take(host, form)
            count += 1
        self._stand(now)
        if count:
            log.info("sms: read back %d text(s) sent while away", count)

    # --- sending -------------------------------------------------------------------------

    def _reachable(self, chat: ChatRef) -> None:
        if chat.chat_id in self.optouts:
            raise NotSent(
                f"SMS: {chat.chat_id} texted STOP; nothing is sent until they text START",
                permanent=True,
            )

    async def _create(self, **fields: Any) -> str:
        from twilio.base.exceptions import TwilioRestException

        try:
            sent = await self._twilio().messages.create_async(
                from_=self.settings.phone_number, **fields
            )
        except TwilioRestException as exc:
            if exc.code == _OPTED_OUT:
                self.optouts.stopped(str(fields.get("to")))
                raise NotSent(
                    f"SMS: {fields.get('to')} has opted out (21610)", permanent=True
                ) from None
            if exc.code in _REFUSED or (exc.status == 400 and exc.code not in _TOKEN_REFUSED):
                raise NotSent(f"Twilio refused it: {exc.code} {exc.msg}") from None
            raise
        return str(sent.sid)

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        self._reachable(chat)
        return [
            await self._create(to=chat.chat_id, body=chunk)
            for chunk in split_message(to_sms(text), self.max_message_chars)
        ]

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a text message cannot be edited: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        return None  # texts have no typing indicator

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        # The choices to text back; a text that is one of them is the answer.
        await self.send(chat, self._typed.prompt(chat, question, choices, request_id))

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """An MMS with the file (US and Canadian numbers), or, where MMS is off or the file
        too large for it, a text naming it."""
        self._reachable(chat)
        data = await asyncio.to_thread(attachment.read_bytes)
        if not self.settings.mms or len(data) > MMS_BYTES:
            note = (
                f"[{attachment.name}: a file too large to text]"
                if self.settings.mms
                else f"[{attachment.name}]"
            )
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
