"""The WeCom adapter: a self-built app (自建应用). WeCom posts each message to the
gateway's listener, encrypted and signed (:mod:`.callbacks`); replies go out through the
send API (``message/send``) as the app, since an agent's answer takes longer than the five
seconds WeCom waits for a passive reply. A typed answer to an approval is the exception:
its outcome is the callback's own (encrypted) reply.

What delivery it can promise: a callback is answered 200 once its message is stored (on a
failure 500, and WeCom posts it again); WeCom also posts again when the answer is slow,
and the message keeps its MsgId: it is answered once."""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_commons.byte_split import split_utf8
from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_wecom.api import CredentialsRefused, WeComApi, WeComError
from hermes_plugin_platform_wecom.callbacks import (
    MAX_BODY,
    Refused,
    checked_echo,
    checked_message,
    encrypted_reply,
)
from hermes_plugin_platform_wecom.reading import Fetch, message_key, read_message
from hermes_plugin_platform_wecom.settings import WeComSettings
from hermes_sdk.platform import (
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    TypedAnswers,
)

if TYPE_CHECKING:
    from aiohttp import web

    from hermes_sdk.media import Attachment

__all__ = ["WeComAdapter"]

log = logging.getLogger("hermes.wecom")

MAX_MESSAGE_BYTES = 2048
"""WeCom takes 2,048 bytes of UTF-8 a text or Markdown message."""
REFUSAL_LOG_SECONDS = 60.0
HANDLED_KEPT = 2048
PER_PERSON_MINUTE = 30
"""WeCom takes 30 messages a minute from an app to one person (it drops the rest)."""
LIMITS = {"image": 10 << 20, "voice": 2 << 20, "video": 10 << 20, "file": 20 << 20}
"""Temporary media's size limits; an image is JPG or PNG, a voice message AMR."""


class WeComAdapter:
    max_message_chars = MAX_MESSAGE_BYTES
    """WeCom counts bytes, not characters: :meth:`send` cuts by them, so a Latin reply
    goes in parts of up to 2,048 characters and a Chinese one of about 680."""
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = WeComSettings.from_context(context)
        self.media = context.media()
        self.api = WeComApi(self.settings)
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._refusals_logged = 0.0
        self._handled: OrderedDict[str, str | None] = OrderedDict()
        """Messages taken (their key): what each answered, for WeCom's retries."""
        self._running: dict[str, asyncio.Future[str | None]] = {}
        self._sent_at: OrderedDict[str, deque[float]] = OrderedDict()
        self._pacing = asyncio.Lock()

    async def run(self, host: PlatformHost) -> None:
        try:
            await self.api.token()
        except CredentialsRefused as exc:
            raise PlatformNotConfigured(
                f"WeCom refused the app's credentials ({exc}): set platforms.wecom.corp_id to "
                "the Corp ID (My Company) and WECOM_CALLBACK_CORP_SECRET to the app's Secret"
            ) from None
        url = await host.http_route(self.settings.path, self._callbacks(host))
        log.info("wecom: callbacks served at %s%s", url, self.settings.path)
        await asyncio.Event().wait()

    # --- receiving -------------------------------------------------------------------

    def _callbacks(self, host: PlatformHost) -> Any:
        from aiohttp import web

        async def callback(request: web.Request) -> web.StreamResponse:
            query = dict(request.query)
            if (request.content_length or 0) > MAX_BODY:
                return web.Response(status=413, text="the body is too large for a callback")
            try:
                if request.method == "GET":
                    return web.Response(text=checked_echo(self.settings, query))
                if request.method != "POST":
                    return web.Response(status=405, text="GET or POST")
                try:  # the whole body, in as many reads as it comes, but no more than this
                    body = await read_capped(request.content.iter_chunked(65536), MAX_BODY)
                except ValueError:
                    return web.Response(status=413, text="the body is too large for a callback")
                fields = checked_message(self.settings, query, body)
            except Refused as exc:
                self._log_refusal(str(exc))
                return web.Response(status=exc.status, text=str(exc))
            try:
                reply = await self._once(host, fields)
            except Exception as exc:  # noqa: BLE001 - 500: not taken
                log.warning("wecom: a message could not be taken (%s)", exc)
                return web.Response(status=500, text="not stored; send it again")
            if reply is None:
                return web.Response(text="")  # no passive reply: answers go by the API
            to_user = fields.get("FromUserName", "")
            return web.Response(text=encrypted_reply(self.settings, to_user, reply))

        return callback

    def _log_refusal(self, why: str) -> None:
        now = time.monotonic()
        if now - self._refusals_logged > REFUSAL_LOG_SECONDS:
            self._refusals_logged = now
            log.warning("wecom: a callback not from WeCom was refused: %s", why)

    async def _once(self, host: PlatformHost, fields: dict[str, str]) -> str | None:
        """:meth:`_message`, once per message: WeCom posts a callback again when the
        answer takes over five seconds (a file downloading); the retry joins the first, or
        gets what it answered (a typed answer must not become a message of its own)."""
        key = message_key(fields)
        if key in self._handled:
            return self._handled[key]
        running = self._running.get(key)
        if running is not None:  # the retry answers as the first does, when it does
            return await asyncio.shield(running)
        running = asyncio.get_running_loop().create_future()
        self._running[key] = running
        try:
            reply = await self._message(host, fields)
        except asyncio.CancelledError:
            running.cancel()  # the gateway stopping: a waiting retry ends with it
            raise
        except Exception as exc:
            running.set_exception(exc)
            running.exception()  # retrieved: a retry may never ask
            raise
        finally:
            del self._running[key]
        running.set_result(reply)
        self._handled[key] = reply
        while len(self._handled) > HANDLED_KEPT:
            self._handled.popitem(last=False)
        return reply

    async def _message(self, host: PlatformHost, fields: dict[str, str]) -> str | None:
        """Hand the message over; the passive reply's text, for a typed answer."""
        read = read_message(fields)
        if read is None:
            return None
        inbound = read.inbound
        files = [self._incoming(fetch) for fetch in read.files]
        outcome: list[str] = []

        async def deliver() -> None:
            if not files:
                press = self._typed.press_for(
                    inbound.chat, inbound.user_id, inbound.text, host.question_open
                )
                if press is not None:
                    outcome.append(await host.pressed(press))
                    self._typed.settle(press.request_id, host.question_open(press.request_id))
                    return
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, deliver)
        return outcome[0] if outcome else None

    def _incoming(self, fetch: Fetch) -> IncomingFile:
        async def download(limit: int) -> bytes:
            return await self.api.download(fetch.media_id, limit)

        return IncomingFile(
            name=fetch.name,
            declared=mimetypes.guess_type(fetch.name)[0],
            size=None,
            download=download,
            expect="image" if fetch.expect_image else None,
        )

    # --- sending ---------------------------------------------------------------------

    async def _paced(self, user: str) -> None:
        """Wait, if need be, until one more message to ``user`` is within WeCom's rate (one
        send at a time decides, so two waiting cannot both take the same slot)."""
        async with self._pacing:
            sent = self._sent_at.pop(user, None) or deque()
            self._sent_at[user] = sent  # the most recent last: the oldest are let go
            while len(self._sent_at) > HANDLED_KEPT:
                self._sent_at.popitem(last=False)
            now = time.monotonic()
            while sent and now - sent[0] > 60.0:
                sent.popleft()
            if len(sent) >= PER_PERSON_MINUTE:
                await asyncio.sleep(60.0 - (now - sent[0]))
                sent.popleft()  # its minute is over
            sent.append(time.monotonic())

    async def _send(self, chat: ChatRef, kind: str, content: dict[str, Any]) -> str:
        await self._paced(chat.chat_id)
        body = {
            "touser": chat.chat_id,
            "msgtype": kind,
            "agentid": self.settings.agent_id,
            kind: content,
            "safe": 0,
        }
        try:
            made = await self.api.call("cgi-bin/message/send", body=body)
        except WeComError as exc:
            raise exc.not_sent() from None
        except CredentialsRefused as exc:
            raise NotSent(f"WeCom refused the app's credentials: {exc}") from None
        if made.get("invaliduser"):
            raise NotSent(
                f"WeCom has no such person for this app ({made['invaliduser']}): they may be "
                "outside the app's visible range",
                permanent=True,
            )
        return str(made.get("msgid") or "")

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        """Cut by bytes. WeCom's send API takes no idempotency key (its duplicate check
        compares content, and would drop the same short answer given twice), so a reply
        sent again after an unknown failure keeps its "may be a duplicate" note."""
        kind = self.settings.message_format
        parts = split_utf8(text, MAX_MESSAGE_BYTES)
        return await send_in_parts(parts, lambda part: self._send(chat, kind, {"content": part}))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a WeCom app's messages cannot be edited")

    async def typing(self, chat: ChatRef) -> None:
        """WeCom shows an app no typing indicator."""

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question with its choices to type (an app's text messages have no
        buttons); the answer's outcome comes back as the reply to it."""
        markdown = self.settings.message_format == "markdown"  # in text, asterisks show
        await self.send(
            chat, self._typed.prompt(chat, question, choices, request_id, markdown=markdown)
        )

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """An image as an image, AMR audio as a voice message, an MP4 as a video, anything
        else as a file (WeCom's kinds, each with its size limit)."""
        data = await asyncio.to_thread(attachment.read_bytes)
        kind = _kind_for(attachment.kind, attachment.mime)
        if len(data) > LIMITS[kind] and kind != "file":
            kind = "file"
        if len(data) > LIMITS["file"]:
            raise NotSent(
                f"{attachment.name or 'the file'} is {len(data) >> 20} MB: WeCom takes files "
                "up to 20 MB",
                permanent=True,
            )
        try:
            media_id = await self.api.upload(kind, data, attachment.name or "file", attachment.mime)
        except WeComError as exc:
            raise exc.not_sent() from None
        ids = [await self._send(chat, kind, {"media_id": media_id})]
        if caption:
            ids += await self.send(chat, caption)
        return ids

    async def aclose(self) -> None:
        await self.api.aclose()


def _kind_for(kind: str, mime: str) -> str:
    """WeCom's kind for a file: JPG and PNG images, AMR voice, MP4 video; else a file."""
    if kind == "image" and mime in ("image/jpeg", "image/png"):
        return "image"
    if kind == "audio" and mime.lower() == "audio/amr":
        return "voice"
    if kind == "video" and mime == "video/mp4":
        return "video"
    return "file"
