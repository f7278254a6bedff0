"""The Signal adapter: signal-cli's HTTP daemon, its event stream
(``GET /api/v1/events``, server-sent events) for what arrives, JSON-RPC for what goes out.

What delivery it can promise: signal-cli acknowledges a message to Signal's server before
any client has it. Run the daemon with ``--receive-mode=on-connection``: then messages
that arrive while no event stream is connected stay queued at Signal's server until the
adapter connects again, so a gateway restart loses nothing; a message in flight while the
stream breaks unnoticed (up to the 15 s keepalive) can be lost, which signal-cli cannot
prevent. A message handed over twice (a reconnect's overlap) keeps its id (sender and
timestamp), which the gateway admits once."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from hermes_commons.platform_files import IncomingFile, hand_over_with_files
from hermes_commons.sending import send_in_parts
from hermes_commons.sse import SSEDecoder
from hermes_plugin_platform_signal.reading import (
    GROUP_PREFIX,
    Attached,
    Me,
    Reacted,
    Said,
    read_envelope,
)
from hermes_plugin_platform_signal.rpc import NO_ACCOUNT, RATE_LIMITED, RpcClient, RpcError
from hermes_plugin_platform_signal.settings import SignalSettings
from hermes_plugin_platform_signal.styles import to_signal
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

__all__ = ["SignalAdapter"]

log = logging.getLogger("hermes.signal")

MAX_MESSAGE_CHARS = 2000
MAX_FILE_BYTES = 100 * 1024 * 1024
"""Signal's limit for one attachment."""
UPLOAD_SECONDS = 300.0
HAND_OVER_TRIES = 5
UNTRUSTED = -4
"""Signal takes longer texts (as an attachment past 2,000); shorter parts read better."""
RECONNECT_SECONDS = 2.0
ASKED_KEPT = 256
YES, NO = "👍", "👎"


class SignalAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = SignalSettings.from_context(context)
        self.media = context.media()
        self.me = Me(self.settings.account)
        self._http: httpx.AsyncClient | None = None
        self._rpc: RpcClient | None = None
        self._order = ChatOrder()
        self._receipts: set[asyncio.Task[None]] = set()
        self._typed = TypedAnswers()
        self._asked: OrderedDict[int, tuple[str, tuple[Choice, ...]]] = OrderedDict()
        """Questions by the timestamp of the message that asked them: a 👍 or 👎 on it
        answers."""

    def _client(self) -> RpcClient:
        if self._rpc is None:
            import httpx

            # The event stream sends a keepalive every 15 s: a read that waits 60 s is a
            # connection that died without a word.
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0, read=60.0))
            self._rpc = RpcClient(self.settings.daemon_url, self._http)
        return self._rpc

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        await self._check_daemon()
        while True:
            try:
                await self._listen(host)
            except Exception as exc:  # noqa: BLE001 - reconnect: messages wait at Signal
                log.info("signal: the event stream broke (%s); reconnecting", exc)
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _check_daemon(self) -> None:
        """One line with the command to fix it when the daemon is not running or does not
        have this account."""
        import httpx

        self._client()
        assert self._http is not None
        where = self.settings.daemon_url.split("://")[-1].split("@")[-1]
        try:
            await self._client().call("listGroups", account=self.settings.account)
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 421:
                raise PlatformNotConfigured(
                    "signal-cli refused the request's Host (421): use http://127.0.0.1:PORT or "
                    "http://localhost:PORT in platforms.signal.daemon_url"
                ) from None
            raise
        except httpx.HTTPError:
            # Not a setting: the daemon may start after the gateway (retried with backoff).
            raise RuntimeError(
                f"signal-cli's daemon does not answer at {where}: start it with signal-cli -a "
                f"{self.settings.account} daemon --http {where} --receive-mode=on-connection"
            ) from None
        except RpcError as exc:
            if exc.code != NO_ACCOUNT:
                raise
            raise PlatformNotConfigured(
                f"signal-cli has no registered account {self.settings.account} ({exc.message}): "
                f"register or link it (signal-cli -a {self.settings.account} register, or "
                "signal-cli link)"
            ) from None

    async def _listen(self, host: PlatformHost) -> None:
        assert self._http is not None
        url = f"{self.settings.daemon_url}/api/v1/events"
        params = {"account": self.settings.account}
        decoder = SSEDecoder()
        async with self._http.stream("GET", url, params=params, timeout=None) as stream:
            stream.raise_for_status()
            log.info("signal: listening as %s", self.settings.account)
            async for line in stream.aiter_lines():
                event = decoder.feed(line)
                if event is None or event[0] != "receive":
                    continue
                try:
                    received = json.loads(event[1])
                except ValueError:
                    continue
                account = received.get("account")
                if account and account != self.settings.account:
                    raise PlatformNotConfigured(
                        f"signal-cli at {self.settings.daemon_url} runs for {account}, not "
                        f"{self.settings.account}: set platforms.signal.account, or start it "
                        f"with -a {self.settings.account}"
                    )
                await self._hand_over_surely(host, received.get("envelope") or {})

    async def _hand_over_surely(self, host: PlatformHost, envelope: dict[str, Any]) -> None:
        """signal-cli has already told Signal it has this message: it will not come again,
        so a hand-over that fails is tried again here, a few times, before it is given up
        (said in the log)."""
        for attempt in range(HAND_OVER_TRIES):
            try:
                await self._take(host, envelope)
                return
            except Exception as exc:  # noqa: BLE001 - tried again; then said, loudly
                if attempt == HAND_OVER_TRIES - 1:
                    log.error(
                        "signal: a message from %s could not be handed over and is lost: %s",
                        envelope.get("sourceNumber") or envelope.get("sourceUuid"),
                        exc,
                    )
                    return
                await asyncio.sleep(2.0**attempt)

    async def _take(self, host: PlatformHost, envelope: dict[str, Any]) -> None:
        read = read_envelope(envelope, self.me, self.settings.require_mention)
        if isinstance(read, Reacted):
            await self._reacted(host, read)
        elif isinstance(read, Said):
            await self._said(host, read)

    async def _said(self, host: PlatformHost, said: Said) -> None:
        inbound = said.inbound
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
        task = asyncio.ensure_future(self._receipt(host, said))
        self._receipts.add(task)
        task.add_done_callback(self._receipts.discard)

    async def _receipt(self, host: PlatformHost, said: Said) -> None:
        try:
            if await host.allows(said.inbound.user_id):
                await self._client().call(
                    "sendReceipt",
                    account=self.settings.account,
                    recipient=said.sender,
                    targetTimestamp=said.timestamp,
                    type="read",
                )
        except Exception as exc:  # noqa: BLE001 - a courtesy
            log.debug("signal: no read receipt: %s", exc)

    async def _reacted(self, host: PlatformHost, reacted: Reacted) -> None:
        asked = self._asked.get(reacted.target_timestamp)
        if asked is None or reacted.removed:
            return
        request_id, choices = asked
        meaning = yes_and_no(choices)
        if meaning is None:
            return
        if reacted.emoji.startswith(YES):  # any skin tone
            choice = meaning[0]
        elif reacted.emoji.startswith(NO):
            choice = meaning[1]
        else:
            return
        press = ButtonPress(
            chat=reacted.chat, user_id=reacted.user_id, request_id=request_id, choice=choice.value
        )
        await host.pressed(press)
        if not host.question_open(request_id):
            self._asked.pop(reacted.target_timestamp, None)

    def _incoming(self, file: Attached) -> IncomingFile:
        async def download(limit: int) -> bytes:
            if file.size is not None and file.size > limit:
                raise ValueError(f"it is over {limit} bytes")
            got = await self._client().call(
                "getAttachment", account=self.settings.account, id=file.attachment_id
            )
            data = base64.b64decode(str((got or {}).get("data") or ""))
            if len(data) > limit:
                raise ValueError(f"it is over {limit} bytes")
            return data

        return IncomingFile(name=file.name, declared=file.mime, size=file.size, download=download)

    # --- sending -------------------------------------------------------------------------

    def _to(self, chat: ChatRef) -> dict[str, Any]:
        """A group by its id (``group:ID``, as hermes-agent writes it: a delivery from a
        scheduled job names no chat type), a person by number or service id."""
        if chat.chat_id.startswith(GROUP_PREFIX):
            return {"account": self.settings.account, "groupId": chat.chat_id[len(GROUP_PREFIX) :]}
        return {"account": self.settings.account, "recipient": [chat.chat_id]}

    async def _send(self, chat: ChatRef, timeout: float | None = None, **fields: Any) -> str:
        try:
            sent = await self._client().call("send", timeout=timeout, **self._to(chat), **fields)
        except RpcError as exc:
            if exc.code == RATE_LIMITED:
                raise NotSent(f"{exc} (retry after {exc.retry_after or '?'} s)") from None
            if exc.code == UNTRUSTED:
                raise NotSent(
                    f"{exc}: their safety number changed; trust it with signal-cli -a "
                    f"{self.settings.account} trust -a {chat.chat_id}",
                    permanent=True,
                ) from None
            raise NotSent(str(exc)) from None
        return str((sent or {}).get("timestamp"))

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        """The text split first, then each part's Markdown turned into Signal's styles."""
        parts = split_message(text, MAX_MESSAGE_CHARS)
        return await send_in_parts(parts, lambda part: self._send(chat, **_styled(part)))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("the Signal adapter edits no messages: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        try:
            await self._client().call("sendTyping", **self._to(chat))
        except Exception as exc:  # noqa: BLE001 - a courtesy
            log.debug("signal: no typing: %s", exc)

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question with each choice's word; a 👍 on it is the first choice, a 👎 the
        last, and typing the word works too."""
        self._typed.asked(chat, choices, request_id)
        lines = "\n".join(f"{c.value} - {c.label}" for c in choices)
        hint = "Reply with one of:"
        meaning = yes_and_no(choices)
        if meaning is not None:  # an approval
            said = f"React {YES} for {meaning[0].value}, {NO} for {meaning[1].value}"
            hint = f"{said}, or reply with one of:"
        for stamp in await self.send(chat, f"{question}\n\n{hint}\n{lines}"):
            self._asked[int(stamp)] = (request_id, tuple(choices))
        while len(self._asked) > ASKED_KEPT:
            self._asked.popitem(last=False)

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        data = await asyncio.to_thread(attachment.read_bytes)
        if len(data) > MAX_FILE_BYTES:
            raise NotSent(
                f"Signal takes files up to 100 MiB; {attachment.name} is larger", permanent=True
            )
        encoded = base64.b64encode(data).decode()
        # signal-cli reads a data URI with a pattern and URL-decodes its parts.
        mime = attachment.mime.split(";")[0].strip() or "application/octet-stream"
        name = quote(attachment.name or "file", safe="")
        uri = f"data:{mime};filename={name};base64,{encoded}"
        fields = {**_styled(caption or ""), "attachments": [uri]}
        return [await self._send(chat, timeout=UPLOAD_SECONDS, **fields)]

    async def aclose(self) -> None:
        for task in list(self._receipts):
            task.cancel()
        http, self._http, self._rpc = self._http, None, None
        if http is not None:
            await http.aclose()


def _styled(markdown: str) -> dict[str, Any]:
    """``message`` and, where there is any, ``textStyle`` for signal-cli's ``send``."""
    text, styles = to_signal(markdown)
    return {"message": text, "textStyle": styles} if styles else {"message": text}
