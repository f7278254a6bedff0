"""The IRC adapter: a message that names the bot in a channel is answered in the channel (the
asker's nick first, as IRC does); a private message is answered privately; CTCP and
notices are never answered; approvals are a typed choice.

What delivery it can promise: IRC keeps nothing for a client that is away, so what is said
while the gateway is disconnected is not heard (a bouncer such as ZNC or soju in between
keeps it). A line a bouncer or the server's history plays back again carries the same
``msgid`` or ``time`` tag, which gives it the same id, and the gateway admits it once."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hermes_plugin_platform_irc.connection import IrcConnection, NotConnected
from hermes_plugin_platform_irc.settings import IrcSettings
from hermes_plugin_platform_irc.wire import Line, casefold
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
)

__all__ = ["REPLAY_HOURS", "IrcAdapter", "replayed_long_ago"]

log = logging.getLogger("hermes.irc")

BACKOFF_FIRST, BACKOFF_MOST = 2.0, 300.0
STABLE_SECONDS = 300.0
"""A connection that lasted this long was fine: the next reconnect starts fast again."""
RECONNECT_WAIT_SECONDS = 20.0
"""How long a reply waits for a reconnect in progress."""
REPLAY_HOURS = 24
_FORMATTING = re.compile(r"\x03(\d{1,2}(,\d{1,2})?)?|[\x02\x0f\x11\x16\x1d\x1e\x1f]")
_NICK_CHARS = r"A-Za-z0-9\[\]\\`^{}|_-"


class IrcAdapter:
    max_message_chars = 480
    """No IRC line is longer (512 bytes with our source in front); :meth:`send` cuts a
    reply into lines itself."""
    can_edit = False

    def __init__(self, context: PlatformContext) -> None:
        self.settings = IrcSettings.from_context(context)
        self._allowed = tuple(str(user) for user in context.config.get("allowed_users") or ())
        """Allowed nicks (or accounts) as the owner wrote them: a sender is given the id
        of the one the server takes for the same name, by the server's own case rules."""
        self._registered_once = False
        self._closing = False
        self._last_sent: dict[str, str] = {}
        """Each target's last line sent (its id), for the server's refusal of it."""
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self._connection: IrcConnection | None = None
        self._host: PlatformHost | None = None
        self._handing: set[asyncio.Task[None]] = set()
        self._sent = 0

    @property
    def connected(self) -> bool:
        """Registered with the server and able to send."""
        connection = self._connection
        return connection is not None and connection.ready.is_set()

    # --- receiving -------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        self._host = host
        delay = BACKOFF_FIRST
        while True:
            connection = IrcConnection(self.settings, self._heard, self._refused)
            self._connection = connection
            began = time.monotonic()
            try:
                await connection.run()
            except PlatformNotConfigured as exc:
                # Once connected, what looks like a setting is a passing state of the
                # network (SASL gone while services restart, a timed ban): tried again.
                if not (self._registered_once or connection.registered):
                    raise
                log.warning("irc: %s (it worked before: trying again)", exc)
            except (OSError, ConnectionError, TimeoutError) as exc:
                log.warning("irc: %s:%s: %s", self.settings.server, self.settings.port, exc)
            finally:
                self._registered_once = self._registered_once or connection.registered
            if time.monotonic() - began > STABLE_SECONDS:
                delay = BACKOFF_FIRST
            pause = delay * random.uniform(0.8, 1.2)
            log.info("irc: reconnecting in %.0f s", pause)
            await asyncio.sleep(pause)
            delay = min(delay * 2, BACKOFF_MOST)

    def _heard(self, line: Line) -> None:
        """A line the connection did not keep for itself: a PRIVMSG for us is handed over,
        in its chat's order, in a task of its own (the connection reads on)."""
        connection, host = self._connection, self._host
        if line.command != "PRIVMSG" or connection is None or host is None:
            return
        inbound = self._read(connection, line)
        if inbound is None:
            return
        task = asyncio.ensure_future(self._hand_over(host, inbound))
        self._handing.add(task)
        task.add_done_callback(self._handing.discard)

    def _read(self, connection: IrcConnection, line: Line) -> Inbound | None:
        target, text = line.param(0), line.param(1)
        nick = line.nick
        if not nick or ("." in nick and "!" not in line.source):  # a server's own notice
            return None
        if connection.same(nick, connection.nick) or text.startswith("\x01"):
            return None  # our own line echoed, or CTCP (a VERSION probe, an ACTION)
        if replayed_long_ago(line):
            log.info(
                "irc: a line from %s played back from %s is not answered", nick, line.tags["time"]
            )
            return None
        user_id = self._user_id(connection, line)
        if user_id is None:
            return None
        text = _FORMATTING.sub("", text).strip()
        addressed = True
        if connection.is_channel(target):
            chat = ChatRef("irc", casefold(target, connection.casemapping), "group")
            text, addressed = self._addressed(connection, text)
        else:
            chat = ChatRef("irc", casefold(nick, connection.casemapping), "private")
        if not text:
            return None
        return Inbound(
            chat=chat,
            user_id=user_id,
            user_name=nick,
            text=text,
            message_id=f"{nick}/{_message_key(line)}",
            addressed=addressed,
        )

    def _user_id(self, connection: IrcConnection, line: Line) -> str | None:
        if self.settings.identity == "account":
            name = line.tags.get("account", "")
            if not name or name == "*":
                log.info("irc: %s is not logged in to services; not heard", line.nick)
                return None
        else:
            name = line.nick
        mapping = connection.casemapping
        folded = casefold(name, mapping)
        for allowed in self._allowed:
            if casefold(allowed, mapping) == folded:
                return allowed
        return folded

    def _addressed(self, connection: IrcConnection, text: str) -> tuple[str, bool]:
        """Whether ``text`` names the bot (its nick now, or the one configured), in the
        server's case rules, as a word; the text without a leading address."""
        mapping = connection.casemapping
        folded = casefold(text, mapping)  # one character for one: positions stay
        for name in {casefold(connection.nick, mapping), casefold(self.settings.nick, mapping)}:
            pattern = rf"(?<![{_NICK_CHARS}]){re.escape(name)}(?![{_NICK_CHARS}])"
            found = re.search(pattern, folded)
            if found is None:
                continue
            if found.start() == 0:
                return text[found.end() :].lstrip(",: ").strip(), True
            return text, True
        return text, False

    async def _hand_over(self, host: PlatformHost, inbound: Inbound) -> None:
        async def deliver() -> None:
            if await self._typed.answer(host, inbound.chat, inbound.user_id, inbound.text):
                return
            unaddressed = inbound.chat.chat_type == "group" and not inbound.addressed
            if unaddressed and self.settings.require_mention:
                return
            await host.receive(inbound)

        try:
            await self._order.run(inbound.chat, deliver)
        except Exception as exc:  # noqa: BLE001 - one message lost, said loudly
            log.error("irc: a message from %s could not be handed over: %s", inbound.user_name, exc)

    def _refused(self, target: str, why: str) -> None:
        """The server would not deliver to ``target``: the reply last sent there failed."""
        connection, host = self._connection, self._host
        if connection is None or host is None:
            return
        message_id = self._last_sent.pop(casefold(target, connection.casemapping), None)
        if message_id is not None:
            task = asyncio.ensure_future(host.reported(message_id, "failed", why))
            self._handing.add(task)
            task.add_done_callback(self._handing.discard)

    # --- sending ---------------------------------------------------------------------

    async def _up(self) -> IrcConnection:
        """The connection, waiting a while for a reconnect in progress (each refusal costs
        the reply one of the delivery ledger's attempts)."""
        deadline = time.monotonic() + RECONNECT_WAIT_SECONDS
        while True:
            connection = self._connection
            if connection is not None and connection.ready.is_set():
                return connection
            if self._closing or time.monotonic() >= deadline:
                raise NotSent(f"not connected to {self.settings.server}; sent when it is back")
            await asyncio.sleep(0.25)

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        if not chat.chat_id or any(c in chat.chat_id for c in " ,\r\n\0"):
            raise NotSent(f"{chat.chat_id!r} is not an IRC nick or channel", permanent=True)
        connection = await self._up()
        prefix = ""
        if chat.chat_type != "private" and reply_to and "/" in reply_to:
            prefix = f"{reply_to.split('/', 1)[0]}: "
        try:
            count = await connection.say(chat.chat_id, text, prefix)
        except NotConnected as exc:
            if exc.sent == 0:
                raise NotSent(str(exc)) from None
            raise ConnectionError(str(exc)) from None  # some lines went: may repeat them
        ids = []
        for _ in range(count):
            self._sent += 1
            ids.append(f"{chat.chat_id}/{self._sent}")
        self._last_sent[casefold(chat.chat_id, connection.casemapping)] = ids[-1]
        return ids

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("IRC has no edits: the reply is sent whole")

    async def typing(self, chat: ChatRef) -> None:
        """IRC shows no typing (IRCv3's typing tag is a draft few servers relay)."""

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        # IRC shows no Markdown: the choices plain.
        await self.send(
            chat, self._typed.prompt(chat, question, choices, request_id, markdown=False)
        )

    async def aclose(self) -> None:
        self._closing = True  # a send waiting for a reconnect gives up at once
        tasks = list(self._handing)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close("Hermes is leaving")


def replayed_long_ago(line: Line, now: datetime | None = None) -> bool:
    """Whether a bouncer or the server's history plays back a line older than
    :data:`REPLAY_HOURS`: the gateway forgets ids after a week, and such a line is no
    longer a question to answer."""
    stamp = line.tags.get("time")
    if not stamp:
        return False
    try:
        said_at = datetime.fromisoformat(stamp)
    except ValueError:
        return False
    if said_at.tzinfo is None:
        said_at = said_at.replace(tzinfo=UTC)
    return (now or datetime.now(UTC)) - said_at > timedelta(hours=REPLAY_HOURS)


def _message_key(line: Line) -> str:
    """The server's id for the line (IRCv3 msgid), else one made of its time tag (a replay
    keeps both), else a fresh one (nothing replays a line without them)."""
    if line.tags.get("msgid"):
        return line.tags["msgid"]
    stamp = line.tags.get("time")
    if stamp:
        digest = hashlib.sha256(f"{stamp}\0{line.source}\0{line.params}".encode()).hexdigest()
        return f"t{digest[:20]}"
    return f"n{time.time_ns()}"
