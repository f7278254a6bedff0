"""The WhatsApp bridge adapter: a personal WhatsApp account through hermes-agent's bridge
(``scripts/whatsapp-bridge/bridge.js``, Baileys), over its HTTP API on this machine.

What delivery it can promise: the bridge confirms each message to WhatsApp as it takes it,
keeps what it took in memory (the newest 100), and ``GET /messages`` hands that over and
forgets it. So messages that arrive while the gateway is down wait in the bridge, if the
bridge keeps running (run it as a service of its own), and are answered when the gateway
is back; a bridge that restarts loses what it held. What the adapter took is kept here
until it is stored: one that fails holds the rest (nothing more is taken meanwhile) and is
tried again, given up after ``GIVE_UP_SECONDS`` (said in the log); what a stopping gateway
still held is named in the log. A message handed over twice keeps its id, which the
gateway admits once. The Cloud API platform is the one that can promise more."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files
from hermes_commons.sending import send_in_parts
from hermes_plugin_platform_whatsapp_bridge.reading import File, People, Said, Voted, read_event
from hermes_plugin_platform_whatsapp_bridge.settings import BridgeSettings
from hermes_sdk.media import Attachment
from hermes_sdk.platform import (
    ButtonPress,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    TypedAnswers,
    split_message,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["BridgeAdapter"]

log = logging.getLogger("hermes.whatsapp_bridge")

MAX_MESSAGE_CHARS = 4000
"""The bridge splits at 4,096 after its own prefix (self-chat mode): shorter parts here."""
SEND_SECONDS = 200.0
"""The bridge sends one message at a time, each part within 60 s, 300 ms apart: a reply
may wait behind others."""
MEDIA_SECONDS = 600.0
BACKLOG_KEPT = 2000
"""Messages taken and held here while one fails (in memory: lost if the gateway dies)."""
GIVE_UP_SECONDS = 600.0
"""A message whose hand-over keeps failing this long is given up (the bridge keeps only
100 messages: past that, waiting loses newer ones instead)."""
MAX_POLL_OPTIONS = 12
MAX_OPTION_CHARS = 100
"""WhatsApp's limit for a poll option's text."""
RETRY_SECONDS = 2.0
POLLS_KEPT = 256
_KINDS = {"image": "image", "video": "video", "audio": "audio"}


class BridgeAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False
    pairs_by_default = False
    """A personal account: everyone who writes to it is someone the owner knows, and
    would get a pairing code. A person gets one only with ``pairing: true``; otherwise
    the owner lists them in allowed_users."""

    def __init__(self, context: PlatformContext) -> None:
        self.settings = BridgeSettings.from_context(context)
        self.media = context.media()
        self.people = People(self.settings.session)
        self._http: httpx.AsyncClient | None = None
        self._typed = TypedAnswers()
        self._polls: OrderedDict[str, tuple[str, tuple[Choice, ...]]] = OrderedDict()
        """Questions by the id of the poll that asks them: a vote in it answers."""
        self._chats: dict[str, str] = {}
        """A person's number -> the WhatsApp id their private chat came in."""
        self._connected: bool | None = None
        self._backlog: deque[dict[str, Any]] = deque()
        """Events taken from the bridge and not yet stored: the bridge has forgotten them."""

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(
                base_url=self.settings.bridge_url, timeout=httpx.Timeout(30.0, connect=5.0)
            )
        return self._http

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        await self._check_bridge()
        failures = 0
        while True:
            if self._backlog:
                await self._hand_over_backlog(host)
                continue
            try:
                self._backlog.extend(await self._drain())
                failures = 0
            except Exception as exc:  # noqa: BLE001 - the bridge restarting: polled again
                failures += 1
                if failures in (1, 30):
                    log.warning("whatsapp_bridge: the bridge does not answer (%s)", exc)
                await asyncio.sleep(min(RETRY_SECONDS * failures, 30.0))
                continue
            if not self._backlog:
                await asyncio.sleep(self.settings.poll_seconds)

    async def _check_bridge(self) -> None:
        """One line when the bridge is not running (the gateway tries again); a warning
        when it runs but is not linked to WhatsApp."""
        import httpx

        try:
            answer = await self._client().get("/health")
            health = answer.json()
        except (httpx.HTTPError, ValueError):
            port = self.settings.bridge_url.rsplit(":", 1)[-1]
            raise RuntimeError(
                f"the WhatsApp bridge does not answer at {self.settings.bridge_url}: start it "
                f"(WHATSAPP_DM_POLICY=pairing node scripts/whatsapp-bridge/bridge.js --port "
                f"{port} --session {self.settings.session} --mode bot, from hermes-agent)"
            ) from None
        self._note_connection(str((health or {}).get("status")) == "connected")

    def _note_connection(self, connected: bool) -> None:
        if connected == self._connected:
            return
        self._connected = connected
        if connected:
            log.info("whatsapp_bridge: the bridge is linked to WhatsApp")
        else:
            log.warning(
                "whatsapp_bridge: the bridge is not connected to WhatsApp (reconnecting, or "
                "logged out: link it again with hermes-agent's `hermes whatsapp`); replies wait"
            )

    async def _drain(self) -> list[dict[str, Any]]:
        answer = await self._client().get("/messages")
        answer.raise_for_status()
        events = answer.json()
        return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []

    async def _hand_over_backlog(self, host: PlatformHost) -> None:
        """The events taken, in order, each removed once stored. One whose hand-over fails
        is tried again, less often as time passes, until ``GIVE_UP_SECONDS`` (then said in
        the log): the bridge will not give it again."""
        began, attempt = time.monotonic(), 0
        while self._backlog:
            event = self._backlog[0]
            try:
                await self._take(host, event)
            except Exception as exc:  # noqa: BLE001 - tried again; then said, loudly
                if time.monotonic() - began < GIVE_UP_SECONDS:
                    log.warning("whatsapp_bridge: a message could not be handed over (%s)", exc)
                    await asyncio.sleep(min(RETRY_SECONDS * 2**attempt, 60.0))
                    attempt += 1
                    await self._keep_draining()
                    continue
                log.error(
                    "whatsapp_bridge: a message from %s (%s) could not be handed over and is "
                    "lost: %s",
                    event.get("senderName") or "someone",
                    event.get("messageId"),
                    exc,
                )
            self._backlog.popleft()
            self._forget_files(event)
            began, attempt = time.monotonic(), 0

    async def _keep_draining(self) -> None:
        """While a message waits to be stored, take what came after it too: the bridge
        keeps only its newest 100, and would drop the older ones."""
        if len(self._backlog) >= BACKLOG_KEPT:
            return
        with contextlib.suppress(Exception):  # the bridge away: the next round tries
            self._backlog.extend(await self._drain())

    def _forget_files(self, event: dict[str, Any]) -> None:
        """The files the bridge wrote for an event, once it is handed over (read into
        Hermes' media cache, or not wanted): otherwise they pile up there for good."""
        for path in event.get("mediaUrls") or ():
            found = self._bridge_file(str(path))
            if found is not None:
                with contextlib.suppress(OSError):
                    found.unlink()

    async def _take(self, host: PlatformHost, event: dict[str, Any]) -> None:
        read = read_event(
            event,
            self.people,
            mentions=self.settings.mentions,
            require_mention=self.settings.require_mention,
        )
        if read is not None and read.chat.chat_type == "group" and not self.settings.groups:
            return  # groups are off (platforms.whatsapp_bridge.groups)
        if isinstance(read, Voted):
            await self._voted(host, read)
        elif isinstance(read, Said):
            await self._said(host, read)

    async def _said(self, host: PlatformHost, said: Said) -> None:
        inbound = said.inbound
        if inbound.chat.chat_type == "private":
            self._chats[inbound.user_id] = said.chat_jid
        typed = (inbound.chat, inbound.user_id, inbound.text)
        if not said.files and await self._typed.answer(host, *typed):
            return  # an answer to a question listed in a message
        if inbound.chat.chat_type == "group" and not inbound.addressed:
            return
        files = [self._incoming(file) for file in said.files]
        await hand_over_with_files(
            host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
        )

    async def _voted(self, host: PlatformHost, voted: Voted) -> None:
        asked = self._polls.get(voted.poll_id)
        if asked is None:
            return
        request_id, options = asked
        chosen = [c for c in options if c.label in voted.options]
        if len(chosen) != 1:
            return
        press = ButtonPress(
            chat=voted.chat, user_id=voted.user_id, request_id=request_id, choice=chosen[0].value
        )
        await host.pressed(press)
        if not host.question_open(request_id):
            self._polls.pop(voted.poll_id, None)

    def _bridge_file(self, given: str) -> Path | None:
        """``given`` as a file in the bridge's media folders (links resolved), else None."""
        path = Path(given).resolve()
        if any(path.is_relative_to(d.resolve()) for d in self.settings.media_dirs):
            return path
        return None

    def _incoming(self, file: File) -> IncomingFile:
        """A file the bridge wrote to disk: read only from its media folders (an event
        naming another path is refused), only a regular file, never past the limit."""

        async def download(limit: int) -> bytes:
            path = self._bridge_file(file.path)
            if path is None:
                raise ValueError("the bridge wrote it outside platforms.whatsapp_bridge.media_dirs")
            return await asyncio.to_thread(_read_regular, path, limit)

        return IncomingFile(name=file.name, declared=file.mime, size=None, download=download)

    # --- sending -------------------------------------------------------------------------

    def _jid(self, chat: ChatRef) -> str:
        """A group's WhatsApp id is its chat id; a person's is the one they wrote from,
        else their number's."""
        if "@" in chat.chat_id:
            return chat.chat_id
        return self._chats.get(chat.chat_id) or f"{chat.chat_id.lstrip('+')}@s.whatsapp.net"

    async def _post(self, path: str, timeout: float = SEND_SECONDS, **body: Any) -> dict[str, Any]:
        """The bridge's answer; a refusal as :class:`NotSent` (not linked to WhatsApp, or
        not running: tried again; a request it will never take: not). A send that timed
        out, there or here, may have gone out: that is a plain error."""
        import httpx

        try:
            answer = await self._client().post(path, json=body, timeout=timeout)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise NotSent(f"the WhatsApp bridge is not running: {exc}") from None
        except httpx.HTTPError as exc:
            raise RuntimeError(f"the WhatsApp bridge did not answer in time: {exc}") from None
        try:
            data = answer.json()
        except ValueError:
            data = {}
        data = data if isinstance(data, dict) else {}
        if answer.status_code == 503:
            self._note_connection(False)
            raise NotSent("the WhatsApp bridge is not connected to WhatsApp")
        said = str(data.get("error") or answer.reason_phrase)
        if answer.status_code >= 500:  # its send timed out: it may still go out
            raise RuntimeError(f"the WhatsApp bridge could not send it: {said}")
        if answer.status_code != 200:
            raise NotSent(
                f"the WhatsApp bridge refused it ({answer.status_code}): {said}",
                permanent=400 <= answer.status_code < 500,
            )
        self._note_connection(True)
        return data

    async def _send_text(self, jid: str, text: str) -> str:
        sent = await self._post("/send", chatId=jid, message=text)
        return str(sent.get("messageId") or "")

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        jid = self._jid(chat)
        parts = split_message(text, MAX_MESSAGE_CHARS)
        return await send_in_parts(parts, lambda part: self._send_text(jid, part))

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("the WhatsApp bridge adapter edits no messages: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        with contextlib.suppress(Exception):  # a courtesy
            await self._post("/typing", timeout=5.0, chatId=self._jid(chat))

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question, then a WhatsApp poll of its choices (a vote answers); typing a
        choice's word works too, and is the way when the poll cannot be sent, and in a
        group (where the bridge names the poll's maker, the bot, as every voter)."""
        self._typed.asked(chat, choices, request_id)
        lines = "\n".join(f"{c.value} - {c.label}" for c in choices)
        labels = [_option(c.label) for c in choices]
        pollable = (
            chat.chat_type != "group"
            and 2 <= len(labels) <= MAX_POLL_OPTIONS
            and all(labels)
            and len(set(labels)) == len(labels)
        )
        hint = "Vote in the poll below, or reply with one of:" if pollable else "Reply with one of:"
        await self.send(chat, f"{question}\n\n{hint}\n{lines}")
        if not pollable:
            return
        try:
            sent = await self._post(
                "/send-poll",
                chatId=self._jid(chat),
                question="Your answer?",
                options=labels,
                selectableCount=1,
            )
        except Exception as exc:  # noqa: BLE001 - the question is out: the word answers it
            log.info("whatsapp_bridge: no poll for a question (%s): the word is the answer", exc)
            return
        options = tuple(Choice(c.value, label) for c, label in zip(choices, labels, strict=True))
        self._polls[str(sent.get("messageId"))] = (request_id, options)
        while len(self._polls) > POLLS_KEPT:
            self._polls.popitem(last=False)

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """The file as WhatsApp's own kind of message (a picture, a video, a voice note, a
        document). The bridge reads it from disk: Hermes' media cache, on this machine."""
        if not attachment.exists():
            raise NotSent(f"{attachment.name} is no longer in the media cache", permanent=True)
        body: dict[str, Any] = {
            "chatId": self._jid(chat),
            "filePath": str(Path(attachment.path).resolve()),
            "mediaType": _KINDS.get(attachment.kind, "document"),
            "fileName": attachment.name or Path(attachment.path).name,
        }
        if caption:
            body["caption"] = caption
        sent = await self._post("/send-media", timeout=MEDIA_SECONDS, **body)
        ids = [str(sent.get("messageId") or "")]
        if caption and body["mediaType"] == "audio":  # a voice note carries no caption
            ids += await self.send(chat, caption)
        return ids

    async def aclose(self) -> None:
        if self._backlog:  # taken from the bridge, which has forgotten them
            log.error(
                "whatsapp_bridge: stopping with %d message(s) taken from the bridge and not "
                "handed over; they are lost: %s",
                len(self._backlog),
                ", ".join(str(e.get("messageId")) for e in self._backlog),
            )
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()


def _option(label: str) -> str:
    """A choice's label as a poll option: trimmed (as the bridge trims it), and cut to
    WhatsApp's length."""
    label = " ".join(label.split())
    return label if len(label) <= MAX_OPTION_CHARS else label[: MAX_OPTION_CHARS - 1] + "…"


def _read_regular(path: Path, limit: int) -> bytes:
    """A regular file's content, up to ``limit`` bytes (a pipe or a device is refused)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe must not block the open
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ValueError("it is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"it is over {limit} bytes")
    return data
