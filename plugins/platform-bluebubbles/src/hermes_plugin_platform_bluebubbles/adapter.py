"""The BlueBubbles adapter: iMessage through a BlueBubbles server on a Mac, over its REST
API (:mod:`.server`).

Exactly once, without trusting webhooks: BlueBubbles posts each new message to a webhook
once, unsigned, and never again if that fails. So a webhook here only wakes the reader,
which reads the server's messages past the last one handed over, in the order Messages
stored them (:mod:`.reader`), and hands each over in turn. Where it stands is kept in
``platforms/bluebubbles/read.json``; a message whose hand-over failed holds it there and is
tried again (given up, loudly, after hours of failing); a photo the Mac is still
downloading holds it a little while. The server is also read every ``poll_seconds`` (a
webhook lost to a proxy costs a delay, not a message), and at start (what came while the
gateway was down). A forged webhook can only wake the reader. Message ids are the
messages' guids, which the gateway admits once."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_commons.read_positions import ReadPositions
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_bluebubbles.reader import newest_row, rows_after
from hermes_plugin_platform_bluebubbles.reading import Attached, Said, Tapback, read_message
from hermes_plugin_platform_bluebubbles.server import (
    SEND_SECONDS,
    UPLOAD_SECONDS,
    Server,
    ServerGarbled,
    ServerRefused,
)
from hermes_plugin_platform_bluebubbles.settings import BlueBubblesSettings
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
    yes_and_no,
)

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["BlueBubblesAdapter"]

log = logging.getLogger("hermes.bluebubbles")

MAX_MESSAGE_CHARS = 4000
MAX_FILE_BYTES = 100 * 1024 * 1024
"""iMessage's limit for one attachment."""
POLL_WITH_WEBHOOK = 30.0
POLL_WITHOUT = 5.0
RETRY_SECONDS = 5.0
RETRY_MAX_SECONDS = 300.0
GIVE_UP_SECONDS = 6 * 3600.0
"""A message whose hand-over keeps failing this long is skipped (said in the log): the
gateway's store has been down for hours, and the rest must not wait forever."""
DOWNLOAD_WAIT_SECONDS = 120.0
"""How long a message waits for the Mac to finish downloading its attachments."""
SEEN_KEPT = 2000
ASKED_KEPT = 256
SENT_KEPT = 512
EVERYTHING = "messages"
"""The one conversation of the read positions: the server is read as a whole."""
LIKE, DISLIKE = "like", "dislike"
_NEVER_AS_SENT = frozenset({400, 401, 404, 413})


class _NotYet(Exception):
    """The message is not ready to hand over (its photo is still downloading)."""


class BlueBubblesAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False
    pairs_by_default = False
    """Whoever writes to the Mac's Apple ID (text forwarding brings SMS and short codes too)
    would get a pairing code: a person gets one only with ``pairing: true``; otherwise the
    owner lists them in allowed_users."""

    def __init__(self, context: PlatformContext) -> None:
        self.settings = BlueBubblesSettings.from_context(context)
        self.media = context.media()
        self.server = Server(self.settings.server_url, self.settings.password)
        self.positions = ReadPositions(
            Path(context.home) / "platforms" / "bluebubbles" / "read.json",
            newer=lambda a, b: int(a) > int(b),
            previous=lambda a: str(int(a) - 1),
        )
        self.webhook_token = hmac.new(
            self.settings.password.encode(), b"hermes bluebubbles webhook", hashlib.sha256
        ).hexdigest()[:32]
        """What the registered webhook address carries (not the password itself, which
        would let whoever reads a proxy's log drive the Mac)."""
        self.listening_url: str | None = None
        self._private_api = False
        self._wake = asyncio.Event()
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._asked: OrderedDict[str, tuple[str, tuple[Choice, ...]]] = OrderedDict()
        """Questions by the guid of the message that asked them: a tapback on it answers."""
        self._sent: OrderedDict[str, None] = OrderedDict()
        """Guids of the bot's messages: a reply to one in a group is for the bot."""
        self._dm_chats: dict[str, str] = {}
        """A person's address -> the chat guid their messages came in."""
        self._receipts: set[asyncio.Task[None]] = set()
        self._failing: dict[str, float] = {}
        """Messages whose hand-over failed (or waits), by guid: since when."""

    # --- the server ----------------------------------------------------------------------

    async def _check_server(self) -> None:
        """One line when the password is wrong; a server that does not answer is retried
        (the Mac may be asleep or starting)."""
        import httpx

        try:
            info = await self.server.call("GET", "/server/info")
        except ServerRefused as exc:
            if exc.status == 401:
                raise PlatformNotConfigured(
                    "BlueBubbles refused the password (401): set BLUEBUBBLES_PASSWORD to the "
                    "server password (BlueBubbles > Settings > Connection)"
                ) from None
            raise
        except (httpx.HTTPError, ServerGarbled):
            raise RuntimeError(
                f"the BlueBubbles server does not answer at {self.settings.server_url}: is "
                "BlueBubbles running on the Mac, and is the address reachable from here?"
            ) from None
        self._note_private_api(info)

    def _note_private_api(self, info: Any) -> None:
        info = info if isinstance(info, dict) else {}
        private = bool(info.get("private_api")) and bool(info.get("helper_connected"))
        if not private:
            log.info(
                "bluebubbles: the server's Private API is off (or its helper is not "
                "connected): no typing or read receipts, replies sent by AppleScript"
            )
        self._private_api = private

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        await self._check_server()
        base = await host.http_route(self.settings.path, self._serve)
        self.listening_url = base + self.settings.path
        webhook = self.settings.webhook_url
        if webhook is None and _loopback(self.settings.server_url):
            webhook = self.listening_url  # the server runs on this machine
        if webhook is not None:
            await self._register(webhook)
        else:
            log.info(
                "bluebubbles: no webhook (set platforms.bluebubbles.webhook_url to where the "
                "Mac reaches %s): reading the server every %.0f s",
                self.listening_url,
                self.settings.poll_seconds or POLL_WITHOUT,
            )
        poll = self.settings.poll_seconds or (POLL_WITH_WEBHOOK if webhook else POLL_WITHOUT)
        await self._start_where_the_server_is()
        failures = 0
        while True:
            self._wake.clear()
            wait = poll
            try:
                if not await self._read(host):
                    wait = min(poll, RETRY_SECONDS)  # a message holds the reader
                failures = 0
            except Exception as exc:  # noqa: BLE001 - read again soon
                failures += 1
                log.warning("bluebubbles: reading the server's messages failed: %s", exc)
                wait = min(poll, RETRY_SECONDS * 2 ** min(failures, 6))
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow the
            # cancellation that stops the platform when the event is set at that moment.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    async def _start_where_the_server_is(self) -> None:
        """The first start reads from the server's newest message, not its whole history.
        A server whose newest row is before where the reader stood (its last messages
        deleted, or a new Mac) is read from that row: what is there is all older."""
        newest = await newest_row(self.server)
        stood = self.positions.get(EVERYTHING)
        if stood is not None and int(stood) <= newest:
            return
        if stood is not None:
            log.warning(
                "bluebubbles: the server's newest message (row %d) is before where the reader "
                "stood (%s): reading on from it",
                newest,
                stood,
            )
        self.positions.restart(EVERYTHING, str(newest))
        self.positions.save()

    async def _register(self, webhook: str) -> None:
        """The webhook, with this gateway's token, for new messages: added unless it is
        there; one with an old token (a changed password) is removed."""
        address = f"{webhook}?token={self.webhook_token}"
        found = await self.server.call("GET", "/webhook")
        present = False
        for hook in found if isinstance(found, list) else ():
            url, events = str(hook.get("url") or ""), hook.get("events") or []
            if url.split("?", maxsplit=1)[0] != webhook:
                continue
            if url == address and ("*" in events or "new-message" in events):
                present = True
            else:
                await self.server.call("DELETE", f"/webhook/{hook.get('id')}")
        if not present:
            body = {"url": address, "events": ["new-message"]}
            await self.server.call("POST", "/webhook", json=body)
        log.info("bluebubbles: the server posts new messages to %s", webhook)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if request.method != "POST":
            return web.Response(status=405, text="BlueBubbles POSTs its events here")
        token = request.query.get("token", "")
        if not hmac.compare_digest(token.encode(), self.webhook_token.encode()):
            log.warning("bluebubbles: refused a webhook without this gateway's token")
            return web.Response(status=401, text="unknown token")
        self._wake.set()  # what it says is read from the server, not taken from it
        return web.Response(text="ok")

    async def _read(self, host: PlatformHost) -> bool:
        """Hand over the server's messages after where the reader stands, in row order;
        False when one holds it (its hand-over failed, or its photo is downloading)."""
        try:
            while True:
                since = int(self.positions.get(EVERYTHING) or 0)
                rows, more = await rows_after(self.server, since)
                for record in rows:
                    if not await self._take_recorded(host, record):
                        return False
                if not more:
                    return True
        finally:
            self.positions.save()

    async def _take_recorded(self, host: PlatformHost, record: dict[str, Any]) -> bool:
        """Whether the reader goes on past ``record``."""
        guid, row = str(record.get("guid") or ""), str(record["originalROWID"])
        if guid and guid not in self._seen:
            try:
                await self._take(host, record)
            except Exception as exc:  # noqa: BLE001 - held; read again soon, or given up
                if not self._given_up(guid, record, exc):
                    self.positions.failed(EVERYTHING, row)
                    return False
            self._failing.pop(guid, None)
            self._seen[guid] = None
            while len(self._seen) > SEEN_KEPT:
                self._seen.popitem(last=False)
        self.positions.saw(EVERYTHING, row)
        return True

    def _given_up(self, guid: str, record: dict[str, Any], exc: Exception) -> bool:
        """Whether a message that failed (or waits) is given up now."""
        began = self._failing.setdefault(guid, time.monotonic())
        waited = time.monotonic() - began
        if isinstance(exc, _NotYet):
            return False  # past the wait, _take hands it over, naming the file
        if waited < GIVE_UP_SECONDS:
            log.warning("bluebubbles: a message could not be handed over (%s); again soon", exc)
            return False
        handle = record.get("handle")
        who = handle.get("address") if isinstance(handle, dict) else "someone"
        log.error(
            "bluebubbles: a message from %s could not be handed over for %.0f hours and is "
            "skipped: %s",
            who,
            waited / 3600,
            exc,
        )
        return True

    async def _take(self, host: PlatformHost, record: dict[str, Any]) -> None:
        read = read_message(
            record,
            mine=set(self._sent),
            mentions=self.settings.mentions,
            require_mention=self.settings.require_mention,
        )
        if isinstance(read, Tapback):
            await self._tapped(host, read)
        elif isinstance(read, Said):
            downloading = any(not file.ready for file in read.files)
            guid = str(record.get("guid"))
            if downloading and time.monotonic() - self._failing.get(guid, time.monotonic()) < (
                DOWNLOAD_WAIT_SECONDS
            ):
                raise _NotYet("its attachments are still downloading to the Mac")
            await self._said(host, read)

    async def _said(self, host: PlatformHost, said: Said) -> None:
        inbound = said.inbound
        if inbound.chat.chat_type == "private":
            self._dm_chats[inbound.user_id] = said.chat_guid
        typed = (inbound.chat, inbound.user_id, inbound.text)
        if not said.files and await self._typed.answer(host, *typed):
            return  # an answer to a question listed in a message
        if inbound.chat.chat_type == "group" and not inbound.addressed:
            return
        files = [self._incoming(file) for file in said.files]

        async def hand_over() -> None:
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, hand_over)
        if self.settings.read_receipts and self._private_api:
            task = asyncio.ensure_future(self._mark_read(host, said))
            self._receipts.add(task)
            task.add_done_callback(self._receipts.discard)

    async def _mark_read(self, host: PlatformHost, said: Said) -> None:
        try:
            if await host.allows(said.inbound.user_id):
                await self.server.call("POST", f"/chat/{quote(said.chat_guid, safe='')}/read")
        except Exception as exc:  # noqa: BLE001 - a courtesy
            log.debug("bluebubbles: no read receipt: %s", exc)

    async def _tapped(self, host: PlatformHost, tapback: Tapback) -> None:
        asked = self._asked.get(tapback.target)
        if asked is None or tapback.removed or tapback.kind not in (LIKE, DISLIKE):
            return
        request_id, choices = asked
        meaning = yes_and_no(choices)
        if meaning is None:
            return
        choice = meaning[0] if tapback.kind == LIKE else meaning[1]
        press = ButtonPress(
            chat=tapback.chat, user_id=tapback.user_id, request_id=request_id, choice=choice.value
        )
        await host.pressed(press)
        if not host.question_open(request_id):
            self._asked.pop(tapback.target, None)

    def _incoming(self, file: Attached) -> IncomingFile:
        """Downloaded as the server converts it for its own apps: a HEIC photo as JPEG, a
        voice note (CAF) as MP3, which models and transcribers read."""

        async def download(limit: int) -> bytes:
            if file.size is not None and file.size > limit:
                raise ValueError(f"it is over {limit} bytes")
            path = f"/api/v1/attachment/{quote(file.guid, safe='')}/download"
            client = self.server.client()
            async with client.stream("GET", path, timeout=UPLOAD_SECONDS) as answer:
                if answer.status_code != 200:
                    raise ValueError(f"BlueBubbles answered {answer.status_code}")
                return await read_capped(answer.aiter_bytes(), limit)

        return IncomingFile(name=file.name, declared=file.mime, size=file.size, download=download)

    # --- sending -------------------------------------------------------------------------

    async def _chat_guid(self, chat: ChatRef) -> str | None:
        """A group's guid is its chat id; a person's chat is the one they wrote in, else
        the server's chat with them; None: there is none yet."""
        if chat.chat_type == "group" or ";" in chat.chat_id:
            return chat.chat_id
        known = self._dm_chats.get(chat.chat_id)
        if known is None:
            with contextlib.suppress(Exception):
                chats = await self.server.call(
                    "POST", "/chat/query", json={"limit": 1000, "with": []}
                )
                for found in chats if isinstance(chats, list) else ():
                    guid = str(found.get("guid") or "")
                    if found.get("chatIdentifier") == chat.chat_id and ";-;" in guid:
                        known = guid
                        break
            if known is not None:
                self._dm_chats[chat.chat_id] = known
        return known

    def _method(self) -> str:
        return "private-api" if self._private_api else "apple-script"

    async def _sent_guid(self, sending: Awaitable[Any], path: str = "") -> str:
        """The sent message's guid; a refusal as :class:`NotSent` (a wrong password or a
        message Messages will never send: not tried again)."""
        import httpx

        try:
            data = await sending
        except ServerRefused as exc:
            if exc.status == 401:
                raise NotSent(
                    "BlueBubbles refused the password (401): check BLUEBUBBLES_PASSWORD",
                    permanent=True,
                ) from None
            if exc.status >= 500 and self._private_api:
                with contextlib.suppress(Exception):  # its helper may have gone: look again
                    self._note_private_api(await self.server.call("GET", "/server/info"))
            permanent = exc.status in _NEVER_AS_SENT or exc.code != 0
            raise NotSent(str(exc), permanent=permanent) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise NotSent(f"the BlueBubbles server cannot be reached: {exc}") from None
        except (httpx.HTTPError, ServerGarbled) as exc:  # it may have gone out: not NotSent
            raise RuntimeError(f"the BlueBubbles server's answer did not come: {exc}") from None
        data = data if isinstance(data, dict) else {}
        messages = data.get("messages")
        if path == "/chat/new" and isinstance(messages, list) and messages:
            data = messages[0] if isinstance(messages[0], dict) else {}
        guid = str(data.get("guid") or "")
        if guid:
            self._sent[guid] = None
            while len(self._sent) > SENT_KEPT:
                self._sent.popitem(last=False)
        return guid or "sent"

    async def _send_text(self, chat: ChatRef, text: str) -> str:
        chat_guid = await self._chat_guid(chat)
        temp = f"temp-{uuid.uuid4()}"
        timeout = {"timeout": SEND_SECONDS}
        if chat_guid is None:  # a person never written with: a chat of its own, and this
            body = {"addresses": [chat.chat_id], "message": text, "tempGuid": temp}
            sending = self.server.call("POST", "/chat/new", json=body, **timeout)
            guid = await self._sent_guid(sending, "/chat/new")
            self._dm_chats.pop(chat.chat_id, None)  # found by the query next time
            return guid
        body = {"chatGuid": chat_guid, "tempGuid": temp, "message": text, "method": self._method()}
        return await self._sent_guid(
            self.server.call("POST", "/message/text", json=body, **timeout)
        )

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        parts = split_message(text, MAX_MESSAGE_CHARS)
        return await send_in_parts(parts, lambda part: self._send_text(chat, part))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("the BlueBubbles adapter edits no messages: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        if not self._private_api:
            return
        try:
            chat_guid = await self._chat_guid(chat)
            if chat_guid is not None:
                await self.server.call("POST", f"/chat/{quote(chat_guid, safe='')}/typing")
        except Exception as exc:  # noqa: BLE001 - a courtesy
            log.debug("bluebubbles: no typing: %s", exc)

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question with each choice's word; on an approval, a 👍 tapback (Like) is the
        first choice and a 👎 (Dislike) denies; typing the word works too."""
        self._typed.asked(chat, choices, request_id)
        lines = "\n".join(f"{c.value} - {c.label}" for c in choices)
        hint = "Reply with one of:"
        meaning = yes_and_no(choices)
        if meaning is not None:  # an approval
            said = f"Tap back 👍 for {meaning[0].value}, 👎 for {meaning[1].value}"
            hint = f"{said}, or reply with one of:"
        for guid in await self.send(chat, f"{question}\n\n{hint}\n{lines}"):
            self._asked[guid] = (request_id, tuple(choices))
        while len(self._asked) > ASKED_KEPT:
            self._asked.popitem(last=False)

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        if attachment.size > MAX_FILE_BYTES:
            raise NotSent(
                f"iMessage takes files up to 100 MiB; {attachment.name} is larger", permanent=True
            )
        data = await asyncio.to_thread(attachment.read_bytes)
        chat_guid = await self._chat_guid(chat) or f"any;-;{chat.chat_id}"
        name = attachment.name or "file"
        form = {
            "chatGuid": chat_guid,
            "name": name,
            "tempGuid": f"temp-{uuid.uuid4()}",
            "method": self._method(),
        }
        if attachment.mime in ("audio/mpeg", "audio/mp3") and name.endswith(".mp3"):
            form["isAudioMessage"] = "true"  # the server makes it a voice note (CAF)
        upload = {"attachment": (name, data, attachment.mime or "application/octet-stream")}
        sending = self.server.call(
            "POST", "/message/attachment", data=form, files=upload, timeout=UPLOAD_SECONDS
        )
        sent = [await self._sent_guid(sending)]
        if caption:  # an iMessage attachment carries no caption: it follows as a message
            sent += await self.send(chat, caption)
        return sent

    async def aclose(self) -> None:
        for task in list(self._receipts):
            task.cancel()
        await self.server.aclose()


def _loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")
