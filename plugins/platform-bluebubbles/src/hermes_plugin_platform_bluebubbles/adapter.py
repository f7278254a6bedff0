"""The BlueBubbles adapter: iMessage through a BlueBubbles server on a Mac, over its REST
API (``/api/v1``, the server password as the ``password`` query parameter).

Exactly once, without trusting webhooks: BlueBubbles posts each new message to a webhook
once, unsigned, and never again if that fails. So a webhook here only wakes the reader: it
reads the server's messages (``POST /api/v1/message/query``) past the last one it stood on,
by the row number Messages' database gives each message as it stores it (``ROWID``, which
only grows: a message that reached the Mac late comes after, whatever its date), and hands
each over in order. Where it stands is kept in ``platforms/bluebubbles/read.json``; a message
whose hand-over failed holds it there until it is stored. The server is also read every
``poll_seconds`` (a webhook lost to a proxy costs a delay, not a message), and at start
(what came while the gateway was down). A forged webhook can only wake the reader. Message
ids are the messages' guids, which the gateway admits once."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from hermes_commons.platform_files import IncomingFile, hand_over_with_files, read_capped
from hermes_commons.read_positions import ReadPositions
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_bluebubbles.reading import Attached, Said, Tapback, read_message
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
    import httpx
    from aiohttp import web

__all__ = ["BlueBubblesAdapter"]

log = logging.getLogger("hermes.bluebubbles")

MAX_MESSAGE_CHARS = 4000
MAX_FILE_BYTES = 100 * 1024 * 1024
"""iMessage's limit for one attachment."""
UPLOAD_SECONDS = 300.0
PAGE = 200
POLL_WITH_WEBHOOK = 30.0
POLL_WITHOUT = 5.0
RETRY_SECONDS = 5.0
SEEN_KEPT = 2000
HAND_OVER_TRIES = 5
ASKED_KEPT = 256
SENT_KEPT = 512
EVERYTHING = "messages"
"""The one conversation of the read positions: the server is read as a whole."""
LIKE, DISLIKE = "like", "dislike"


class ServerRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"BlueBubbles answered {status}: {message}")
        self.status = status


class BlueBubblesAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = BlueBubblesSettings.from_context(context)
        self.media = context.media()
        self.positions = ReadPositions(
            Path(context.home) / "platforms" / "bluebubbles" / "read.json",
            newer=_newer_row,
            previous=_row_before,
        )
        self.webhook_token = hmac.new(
            self.settings.password.encode(), b"hermes bluebubbles webhook", hashlib.sha256
        ).hexdigest()[:32]
        """What the registered webhook address carries (not the password itself, which
        would let whoever reads a proxy's log drive the Mac)."""
        self.listening_url: str | None = None
        self._http: httpx.AsyncClient | None = None
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
        self._failures: dict[str, int] = {}
        """Failed hand-overs by message guid: one that always fails is skipped, not read
        again forever."""

    # --- the server ----------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(
                base_url=self.settings.server_url,
                params={"password": self.settings.password},
                timeout=httpx.Timeout(30.0, connect=10.0),
            )
        return self._http

    async def _api(self, method: str, path: str, **fields: Any) -> Any:
        """The ``data`` of the server's answer; :class:`ServerRefused` for an error."""
        answer = await self._client().request(method, f"/api/v1{path}", **fields)
        try:
            body = answer.json()
        except ValueError:
            body = {}
        if not 200 <= answer.status_code < 300:
            said = body.get("message") if isinstance(body, dict) else None
            error = body.get("error") if isinstance(body, dict) else None
            if isinstance(error, dict) and error.get("error"):
                said = f"{said}: {error['error']}" if said else str(error["error"])
            raise ServerRefused(answer.status_code, str(said or answer.reason_phrase))
        return body.get("data") if isinstance(body, dict) else None

    async def _check_server(self) -> None:
        """One line when the password is wrong; a server that does not answer is retried
        (the Mac may be asleep or starting)."""
        import httpx

        try:
            info = await self._api("GET", "/server/info")
        except ServerRefused as exc:
            if exc.status == 401:
                raise PlatformNotConfigured(
                    "BlueBubbles refused the password (401): set BLUEBUBBLES_PASSWORD to the "
                    "server password (BlueBubbles > Settings > Connection)"
                ) from None
            raise
        except httpx.HTTPError:
            raise RuntimeError(
                f"the BlueBubbles server does not answer at {self.settings.server_url}: is "
                "BlueBubbles running on the Mac, and is the address reachable from here?"
            ) from None
        info = info if isinstance(info, dict) else {}
        self._private_api = bool(info.get("private_api")) and bool(info.get("helper_connected"))
        if not self._private_api:
            log.info(
                "bluebubbles: the server's Private API is off: no typing, read receipts or "
                "replies in a thread (BlueBubbles > Settings > Private API)"
            )

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
        while True:
            self._wake.clear()
            wait = poll
            try:
                await self._read(host)
            except Exception as exc:  # noqa: BLE001 - read again soon
                log.warning("bluebubbles: reading the server's messages failed: %s", exc)
                wait = max(poll, RETRY_SECONDS)
            if self.positions.held():
                wait = min(wait, RETRY_SECONDS)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    async def _newest_row(self) -> int:
        newest = await self._api(
            "POST", "/message/query", json={"sort": "DESC", "limit": 1, "with": []}
        )
        if isinstance(newest, list) and newest and isinstance(newest[0], dict):
            return int(newest[0].get("originalROWID") or 0)
        return 0

    async def _start_where_the_server_is(self) -> None:
        """The first start reads from the server's newest message, not its whole history;
        a server whose database starts over (a new Mac) is read from its own newest."""
        newest = await self._newest_row()
        stood = self.positions.get(EVERYTHING)
        if stood is not None and int(stood) <= newest:
            return
        if stood is not None:
            log.warning(
                "bluebubbles: the server's newest message (%d) is before where the reader "
                "stood (%s): its database is a new one; reading from its newest",
                newest,
                stood,
            )
        self.positions.restart(EVERYTHING, str(newest))
        self.positions.save()

    async def _register(self, webhook: str) -> None:
        """The webhook, with this gateway's token, for new messages: added unless it is
        there; one with an old token (a changed password) is removed."""
        address = f"{webhook}?token={self.webhook_token}"
        found = await self._api("GET", "/webhook")
        present = False
        for hook in found if isinstance(found, list) else ():
            url, events = str(hook.get("url") or ""), hook.get("events") or []
            if url.split("?", maxsplit=1)[0] != webhook:
                continue
            if url == address and ("*" in events or "new-message" in events):
                present = True
            else:
                await self._api("DELETE", f"/webhook/{hook.get('id')}")
        if not present:
            await self._api("POST", "/webhook", json={"url": address, "events": ["new-message"]})
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

    async def _read(self, host: PlatformHost) -> None:
        """Hand over the server's messages from where the reader stands, oldest first; stop
        at one whose hand-over fails (held there, read again soon)."""
        since = int(self.positions.get(EVERYTHING) or 0)
        offset = 0
        try:
            while True:
                page = await self._api(
                    "POST",
                    "/message/query",
                    json={
                        "with": ["chat", "attachment"],
                        "where": [{"statement": "message.ROWID > :row", "args": {"row": since}}],
                        "sort": "ASC",
                        "limit": PAGE,
                        "offset": offset,
                    },
                )
                records = [r for r in page or () if isinstance(r, dict)]
                for record in records:
                    if not await self._take_recorded(host, record):
                        return
                if len(records) < PAGE:
                    return
                offset += PAGE
        finally:
            self.positions.save()

    async def _take_recorded(self, host: PlatformHost, record: dict[str, Any]) -> bool:
        """Whether the reader goes on past ``record``."""
        guid, stamp = str(record.get("guid") or ""), str(int(record.get("originalROWID") or 0))
        if not guid or guid in self._seen:
            return True
        try:
            await self._take(host, record)
        except Exception as exc:  # noqa: BLE001 - held; read again soon, then given up
            tries = self._failures.pop(guid, 0) + 1
            if tries < HAND_OVER_TRIES:
                log.warning("bluebubbles: a message could not be handed over (%s); again soon", exc)
                self._failures[guid] = tries
                self.positions.failed(EVERYTHING, stamp)
                return False
            log.error(
                "bluebubbles: a message from %s could not be handed over %d times and is "
                "skipped: %s",
                (record.get("handle") or {}).get("address"),
                tries,
                exc,
            )
        self._failures.pop(guid, None)
        self.positions.saw(EVERYTHING, stamp)
        self._seen[guid] = None
        while len(self._seen) > SEEN_KEPT:
            self._seen.popitem(last=False)
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
            await self._said(host, read)

    async def _said(self, host: PlatformHost, said: Said) -> None:
        inbound = said.inbound
        if inbound.chat.chat_type == "private":
            self._dm_chats[inbound.user_id] = said.chat_guid
        press = self._typed.press_for(
            inbound.chat, inbound.user_id, inbound.text, host.question_open
        )
        if press is not None and not said.files:
            await host.pressed(press)
            self._typed.settle(press.request_id, host.question_open(press.request_id))
            return
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
                await self._api("POST", f"/chat/{quote(said.chat_guid, safe='')}/read")
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
            async with self._client().stream("GET", path, timeout=UPLOAD_SECONDS) as answer:
                if answer.status_code != 200:
                    raise ValueError(f"BlueBubbles answered {answer.status_code}")
                return await read_capped(answer.aiter_bytes(), limit)

        return IncomingFile(name=file.name, declared=file.mime, size=file.size, download=download)

    # --- sending -------------------------------------------------------------------------

    async def _chat_guid(self, chat: ChatRef) -> str:
        """A group's guid is its chat id; a person's chat is the one they wrote in, else
        the server's chat with them, else a new iMessage chat."""
        if chat.chat_type == "group" or ";" in chat.chat_id:
            return chat.chat_id
        known = self._dm_chats.get(chat.chat_id)
        if known is None:
            with contextlib.suppress(Exception):
                chats = await self._api("POST", "/chat/query", json={"limit": 1000, "with": []})
                for found in chats or ():
                    if found.get("chatIdentifier") == chat.chat_id and ";-;" in found.get("guid"):
                        known = str(found["guid"])
                        break
            known = known or f"iMessage;-;{chat.chat_id}"
            self._dm_chats[chat.chat_id] = known
        return known

    def _method(self) -> str:
        return "private-api" if self._private_api else "apple-script"

    async def _sent_guid(self, sending: Any) -> str:
        """The sent message's guid; a refusal as :class:`NotSent` (a wrong password or a
        request the server will never take: not tried again)."""
        import httpx

        try:
            data = await sending
        except ServerRefused as exc:
            permanent = exc.status in (400, 401, 404, 413)
            if exc.status == 401:
                raise NotSent(
                    "BlueBubbles refused the password (401): check BLUEBUBBLES_PASSWORD",
                    permanent=True,
                ) from None
            raise NotSent(str(exc), permanent=permanent) from None
        except httpx.HTTPError as exc:
            raise NotSent(f"the BlueBubbles server did not answer: {exc}") from None
        guid = str((data or {}).get("guid") or "") if isinstance(data, dict) else ""
        if guid:
            self._sent[guid] = None
            while len(self._sent) > SENT_KEPT:
                self._sent.popitem(last=False)
        return guid or "sent"

    async def _send_text(self, chat_guid: str, text: str) -> str:
        body = {
            "chatGuid": chat_guid,
            "tempGuid": f"temp-{uuid.uuid4()}",
            "message": text,
            "method": self._method(),
        }
        return await self._sent_guid(self._api("POST", "/message/text", json=body))

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        chat_guid = await self._chat_guid(chat)
        parts = split_message(text, MAX_MESSAGE_CHARS)
        return await send_in_parts(parts, lambda part: self._send_text(chat_guid, part))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("the BlueBubbles adapter edits no messages: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        if not self._private_api:
            return
        try:
            chat_guid = await self._chat_guid(chat)
            await self._api("POST", f"/chat/{quote(chat_guid, safe='')}/typing")
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
        data = await asyncio.to_thread(attachment.read_bytes)
        if len(data) > MAX_FILE_BYTES:
            raise NotSent(
                f"iMessage takes files up to 100 MiB; {attachment.name} is larger", permanent=True
            )
        chat_guid = await self._chat_guid(chat)
        name = attachment.name or "file"
        form = {
            "chatGuid": chat_guid,
            "name": name,
            "tempGuid": f"temp-{uuid.uuid4()}",
            "method": self._method(),
        }
        upload = {"attachment": (name, data, attachment.mime or "application/octet-stream")}
        sending = self._api(
            "POST", "/message/attachment", data=form, files=upload, timeout=UPLOAD_SECONDS
        )
        sent = [await self._sent_guid(sending)]
        if caption:  # an iMessage attachment carries no caption: it follows as a message
            sent += await self.send(chat, caption)
        return sent

    async def aclose(self) -> None:
        for task in list(self._receipts):
            task.cancel()
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()


def _newer_row(a: str, b: str) -> bool:
    return int(a) > int(b)


def _row_before(a: str) -> str:
    return str(int(a) - 1)


def _loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")
