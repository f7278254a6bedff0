"""The QQ adapter: an official QQ bot (q.qq.com) on QQ's WebSocket gateway (qq-botpy,
:mod:`.gateway_client`). It answers direct messages, groups' and guild channels' @-messages
and guilds' direct messages. QQ takes a bot's message only as a passive reply: within an
hour of a person's direct message, five minutes of a group's or a channel's, at most five
replies to one message, each carrying that message's id (and, in direct chats and groups, a
sequence number); a proactive message is refused.

What delivery it can promise: a message that comes twice (a resumed session replays what it
missed) keeps its id and is answered once. In direct chats and groups a part's sequence
number comes from its text, so a part sent again after an unknown failure is one QQ has
seen, and it is not posted twice; guilds have no such number, and a reply sent again there
carries its "may be a duplicate" note."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files
from hermes_commons.sending import DUPLICATE_NOTE, send_in_parts
from hermes_plugin_platform_qqbot.api import (
    IN_REVIEW,
    URL_REFUSED,
    CredentialsRefused,
    QQApi,
    QQError,
)
from hermes_plugin_platform_qqbot.gateway_client import GatewayClient, load_sdk
from hermes_plugin_platform_qqbot.reading import PASSIVE_SECONDS, Fetch, kind_of, read_event
from hermes_plugin_platform_qqbot.settings import QQSettings
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
    split_message,
)

__all__ = ["QQAdapter"]

log = logging.getLogger("hermes.qqbot")

MAX_MESSAGE_CHARS = 2000
KEPT = 1024
REPLIES_TO_ONE = 5
REPEAT = frozenset({40054005})
"""QQ's "the message was deduplicated": the same message id and sequence number again, so
the part went out before."""
_LINK = re.compile(r"https?://\S+")
_MENTION = re.compile(r"<([@#])")


@dataclass
class _Asked:
    """A message replies answer: when it came, and the replies it has had (their texts in
    order, by sequence number)."""

    message_id: str
    at: float
    sent: dict[int, str] = field(default_factory=dict)

    @property
    def replies(self) -> int:
        return len(self.sent)

    def seq_for(self, text: str, *, again: bool = False) -> int:
        """A part's sequence number, from its text and how many times that text was sent
        to this message before: the same words as a new reply get another number; a part
        sent ``again`` (a retry, after a restart too) the one it had."""
        times = list(self.sent.values()).count(text)
        if again:
            times = max(times - 1, 0)
        digest = hashlib.sha256(f"{self.message_id}\0{text}\0{times}".encode()).digest()
        return int.from_bytes(digest[:4], "big") % 2_000_000_000 + 1


def _defanged(text: str) -> str:
    """Links shown, not linked (QQ refuses a bot's links not registered in its console)."""
    return _LINK.sub(lambda m: m.group().replace("://", "[:]//").replace(".", "[.]"), text)


class QQAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = QQSettings.from_context(context)
        self.media = context.media()
        self.api = QQApi(self.settings)
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._asked: OrderedDict[str, _Asked] = OrderedDict()
        self._by_id: dict[str, _Asked] = {}
        self.bot_id = ""
        self.ready = asyncio.Event()

    async def run(self, host: PlatformHost) -> None:
        try:
            await self.api.token()
        except CredentialsRefused as exc:
            raise PlatformNotConfigured(
                f"QQ refused the bot's credentials ({exc}): set QQ_APP_ID and QQ_CLIENT_SECRET "
                "to the AppID and AppSecret of q.qq.com > your bot > Development settings"
            ) from None
        await load_sdk()
        client = GatewayClient(self.api, functools.partial(self._event, host), self._on_ready)
        log.info("qqbot: connecting to QQ's gateway (%s)", self.settings.api_url)
        await client.run()

    def _on_ready(self, bot_id: str) -> None:
        self.bot_id = bot_id
        self.ready.set()

    # --- receiving -------------------------------------------------------------------

    async def _event(self, host: PlatformHost, event: str, message: Any) -> None:
        read = read_event(event, message, self.bot_id)
        if read is None:
            return
        inbound = read.inbound
        if inbound.message_id not in self._by_id:  # a replay keeps its count
            self._by_id[inbound.message_id] = _Asked(inbound.message_id, time.monotonic())
        self._asked[inbound.chat.chat_id] = self._by_id[inbound.message_id]
        self._asked.move_to_end(inbound.chat.chat_id)
        while len(self._asked) > KEPT:
            self._asked.popitem(last=False)
        while len(self._by_id) > KEPT:
            del self._by_id[next(iter(self._by_id))]
        files = [self._incoming(fetch) for fetch in read.files]

        async def deliver() -> None:
            typed = (inbound.chat, inbound.user_id, inbound.text)
            if not files and await self._typed.answer(host, *typed):
                return
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, deliver)

    def _incoming(self, fetch: Fetch) -> IncomingFile:
        async def download(limit: int) -> bytes:
            if not self.settings.takes_media(fetch.url):
                raise ValueError("it is not on QQ's own servers")
            return await self.api.download(fetch.url, limit)

        return IncomingFile(
            name=fetch.name,
            declared=fetch.declared,
            size=None,
            download=download,
            expect="image" if fetch.expect_image else None,
        )

    # --- sending ---------------------------------------------------------------------

    def _answering(self, chat: ChatRef, reply_to: str | None) -> _Asked | None:
        """The message this send answers: ``reply_to``, or else the chat's latest, whichever
        QQ still takes a reply to (in its window, under five replies)."""
        window = PASSIVE_SECONDS.get(kind_of(chat.chat_id), 300.0)
        named = self._by_id.get(reply_to or "")
        if named is None and reply_to:  # from before a restart: QQ says if it is too late
            named = self._by_id[reply_to] = _Asked(reply_to, time.monotonic())
        for asked in (named, self._asked.get(chat.chat_id)):
            fresh = asked is not None and time.monotonic() - asked.at < window - 5
            if asked is not None and fresh and asked.replies < REPLIES_TO_ONE:
                return asked
        return named  # too late or too many: QQ's refusal says so

    async def _post(
        self, chat: ChatRef, text: str, asked: _Asked | None, *, again: bool = False
    ) -> str:
        kind, _, target = chat.chat_id.partition(":")
        if not target:  # a bare openid (hermes-agent's home channel): a direct chat
            kind, target = "user", chat.chat_id
        paths = {
            "user": f"/v2/users/{target}/messages",
            "group": f"/v2/groups/{target}/messages",
            "channel": f"/channels/{target}/messages",
            "dms": f"/dms/{target}/messages",
        }
        if kind not in paths or not target:
            raise NotSent(
                f"{chat.chat_id!r} is not a QQ chat (user:, group:, channel:, dms:)",
                permanent=True,
            )
        if kind in ("channel", "dms"):  # a guild reads <@id> and <#id> as mentions
            text = _MENTION.sub("<\u200b\\1", text)
        body: dict[str, Any] = {"content": text, "msg_type": 0}
        numbered = asked is not None and kind in ("user", "group")
        for attempt in (1, 2):
            if asked is not None:
                body["msg_id"] = asked.message_id
                if numbered:
                    body["msg_seq"] = asked.seq_for(str(body["content"]), again=again)
            try:
                made = await self.api.call("POST", paths[kind], body)
            except QQError as exc:
                if exc.code in REPEAT or exc.code in IN_REVIEW:
                    made = {}
                elif exc.code in URL_REFUSED and attempt == 1:
                    body["content"] = _defanged(str(body["content"]))
                    continue
                else:
                    raise exc.not_sent() from None
            except CredentialsRefused as exc:
                raise NotSent(f"QQ refused the bot's credentials: {exc}") from None
            seq = int(body.get("msg_seq") or 0)
            if asked is not None:
                asked.sent[seq or len(asked.sent) + 1] = str(body["content"])
            fallback = f"{asked.message_id if asked else ''}#{seq}"
            return str(made.get("id") or fallback)
        raise AssertionError("unreachable")

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        """Each part a passive reply to the message it answers. In direct chats and groups
        a part sent again has the same sequence number (the note a retry puts in front is
        left out, so the text is the same too), and QQ does not post it twice."""
        again = text.startswith(DUPLICATE_NOTE)
        if again and kind_of(chat.chat_id) in ("user", "group"):
            text = text[len(DUPLICATE_NOTE) :].lstrip("\n")
        parts = split_message(text, MAX_MESSAGE_CHARS)

        async def one(part: str) -> str:
            return await self._post(chat, part, self._answering(chat, reply_to), again=again)

        return await send_in_parts(parts, one)

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a QQ bot's messages cannot be edited")

    async def typing(self, chat: ChatRef) -> None:
        """QQ's typing notice needs a message to answer; the reply comes soon enough."""

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """The question with its choices to type: QQ's buttons need a permission QQ gives
        by invitation. In a group, the answer @s the bot."""
        # Plain text: bold's asterisks would show.
        await self.send(
            chat, self._typed.prompt(chat, question, choices, request_id, markdown=False)
        )

    async def aclose(self) -> None:
        await self.api.aclose()
