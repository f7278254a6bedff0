"""The Discord adapter, on discord.py: its gateway connection (heartbeats, RESUME after a drop,
backoff) brings messages and button presses; replies go out over REST, split at 2,000
characters, in Markdown, which Discord renders itself.

Exactly once: discord.py resumes a dropped session, and Discord replays the events of the
gap, sometimes ones already seen. When Discord cannot resume (the session expired), and
after a restart, the adapter reads back what was said meanwhile in the chats it heard from
in the last week, from the newest message it handed over (kept in
``HERMES_HOME/platforms/discord/read.json``). Each message
keeps its Discord id as ``message_id``, and the gateway's ledger admits an id once, so a
replay or a read-back never costs a second turn. A message answered in a server channel
gets a thread whose id is the message's own, so even a message delivered twice opens one
thread, one session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes_commons.platform_files import hand_over_with_files
from hermes_commons.read_positions import ReadPositions
from hermes_plugin_platform_discord.reading import chat_of, incoming_files, read_message
from hermes_plugin_platform_discord.settings import DiscordSettings
from hermes_sdk.platform import (
    ButtonPress,
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    split_message,
)

if TYPE_CHECKING:
    import discord

__all__ = ["DiscordAdapter"]

log = logging.getLogger("hermes.discord")

MAX_MESSAGE_CHARS = 2000
THREAD_NAME_CHARS = 80
THREAD_ARCHIVE_MINUTES: Literal[1440] = 1440
_THREAD_EXISTS = 160004  # "A thread has already been created for this message"
_NO_THREAD_HERE = {50013, 50024}
"""Missing Permissions (an override removes Create Public Threads), Cannot execute action on
this channel type (a voice channel's text chat): the reply goes in the channel instead."""
_UNKNOWN_CHANNEL = 10003
CLOSE_SECONDS = 10.0
CATCH_UP_MESSAGES = 50
"""Per chat, at most this many messages are read back after a session that could not be
resumed, or a restart."""
CATCH_UP_WINDOW_SECONDS = 7 * 24 * 3600
"""Chats heard from within this are read back."""
SAVE_SECONDS = 30.0


REMEMBERED = 1024
"""How many thread names and known threads are kept (the oldest are forgotten first; a
forgotten thread is looked up again, and started only if Discord has none)."""


def _remember(memory: dict[str, Any], key: str, value: Any) -> None:
    memory[key] = value
    while len(memory) > REMEMBERED:
        del memory[next(iter(memory))]


def _not_sent(exc: BaseException) -> bool:
    """A refusal (4xx other than rate limits): retrying the same message cannot help."""
    import discord

    status = getattr(exc, "status", 0)
    return isinstance(exc, discord.HTTPException) and 400 <= status < 500 and status != 429


class DiscordAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True
    heartbeat_timeout = 60.0
    """Seconds with nothing from Discord (not even a heartbeat's ACK) before the connection
    is taken for a zombie, closed and resumed: discord.py's default, over one heartbeat
    interval (41.25 s) as Discord's documentation asks."""

    def __init__(self, context: PlatformContext) -> None:
        self.settings = DiscordSettings.from_context(context)
        self.media = context.media()
        self._client: discord.Client | None = None
        self._logged_in = False
        self._order = ChatOrder()  # the library runs each event as a task: keep chat order
        # Both bounded: a gateway runs for months, and only recent threads matter here.
        self._thread_names: dict[str, str] = {}  # message id -> the thread name it would get
        self._threads: dict[str, None] = {}  # threads known to exist, oldest first
        self._unthreaded: dict[str, None] = {}  # messages whose thread was refused
        self._dm_of_user: dict[str, int] = {}  # a user's id -> the DM opened with them
        self.read = ReadPositions(
            Path(context.home) / "platforms" / "discord" / "read.json",
            lambda a, b: int(a) > int(b),
            lambda a: str(int(a) - 1),
        )  # channel -> the newest message handed over
        self._to_read_back: list[tuple[str, str]] = []  # as it stood when a session began
        self._reader: tuple[discord.Client, Callable[[discord.Message], Awaitable[None]]] | None = (
            None
        )

    # --- the client ----------------------------------------------------------------------

    def _point_at_server(self) -> None:
        """A test server's URLs, when configured: discord.py keeps both as class attributes."""
        import discord.gateway
        import discord.http
        import yarl

        if self.settings.api_url is not None:
            discord.http.Route.BASE = self.settings.api_url
        if self.settings.gateway_url is not None:
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.settings.gateway_url)

    def _new_client(self) -> discord.Client:
        import discord

        self._point_at_server()
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: enabled in the Developer Portal too
        return discord.Client(
            intents=intents,
            # A DM or a mention is answered as soon as the guilds are in, not 2 s later.
            guild_ready_timeout=0.5,
            max_messages=None,  # no message cache: the gateway's store has them
            heartbeat_timeout=self.heartbeat_timeout,
            allowed_mentions=discord.AllowedMentions.none(),  # a reply never pings @everyone
        )

    async def _ready_client(self) -> discord.Client:
        """The client, logged in for REST (``hermes send`` sends without the gateway)."""
        import discord

        if self._client is None:
            self._client = self._new_client()
        if not self._logged_in:
            try:
                await self._client.login(self.settings.token)
            except discord.LoginFailure:
                raise RuntimeError(
                    "Discord refused the bot token (401 Unauthorized); reset it in the "
                    "Developer Portal and set DISCORD_BOT_TOKEN again"
                ) from None
            self._logged_in = True
        return self._client

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        import discord

        client = await self._ready_client()
        bot_id = client.user.id if client.user is not None else 0

        async def on_connect() -> None:
            # A new session, not a resumed one (or the first after a restart): the gap was
            # not replayed. Where each chat stood now, before any live message moves it.
            self._to_read_back = self.read.active(CATCH_UP_WINDOW_SECONDS)

        async def on_ready() -> None:
            log.info("discord: connected as %s (%d servers)", client.user, len(client.guilds))
            snapshot, self._to_read_back = self._to_read_back, []
            await self._catch_up(client, on_message, snapshot)

        async def on_resumed() -> None:
            log.info("discord: the session resumed")

        async def on_message(message: discord.Message) -> None:
            inbound = read_message(
                message,
                bot_id,
                allowed_guilds=self.settings.allowed_guilds,
                require_mention=self.settings.require_mention,
            )
            channel = str(message.channel.id)
            if inbound is None:
                if channel in self.read:  # chatter: no need to read it back
                    self.read.saw(channel, str(message.id))
                return
            if inbound.chat.thread_id == inbound.message_id:
                _remember(self._thread_names, inbound.message_id, inbound.text[:THREAD_NAME_CHARS])
            files = incoming_files(message)
            await self.read.storing(
                channel,
                str(message.id),
                self._order.run(
                    inbound.chat,
                    lambda: hand_over_with_files(
                        host,
                        inbound,
                        files,
                        self.media,
                        lambda line: self.send(inbound.chat, line, reply_to=inbound.message_id),
                    ),
                ),
            )

        async def on_interaction(interaction: discord.Interaction) -> None:
            if interaction.type is discord.InteractionType.component:
                await self._pressed(host, interaction)

        self._reader = (client, on_message)
        for handler in (on_connect, on_ready, on_resumed, on_message, on_interaction):
            client.event(handler)
        # In a task of its own, watched rather than awaited: on Python 3.11, discord.py's
        # reconnect loop can swallow a cancel (asyncio.wait_for loses one that arrives as
        # the connection drops) and sleep on into its backoff. Stopping must not wait for
        # that: the platform's task ends at once, and closing the client ends the loop.
        connecting = asyncio.ensure_future(client.connect(reconnect=True))
        saving = asyncio.ensure_future(self._save_every(SAVE_SECONDS))
        try:
            await asyncio.wait({connecting})
            connecting.result()
        except discord.PrivilegedIntentsRequired:
            raise RuntimeError(
                "Discord refused the Message Content intent; turn it on in the Developer "
                "Portal (your application > Bot > Privileged Gateway Intents)"
            ) from None
        finally:
            saving.cancel()
            connecting.cancel()
            await self.aclose()
            if not connecting.done():  # closed, it leaves its loop; bounded all the same
                await asyncio.wait({connecting}, timeout=CLOSE_SECONDS)

    async def _catch_up(
        self,
        client: discord.Client,
        on_message: Callable[[discord.Message], Awaitable[None]],
        snapshot: list[tuple[str, str]],
    ) -> None:
        """After a session Discord could not resume, or a restart, read what was said
        meanwhile in the chats of ``snapshot`` from where each stood, and hand it over like
        any message. What was handed over already keeps its id, so the gateway's ledger
        admits none twice; a message that cannot be handed over holds its chat there."""
        import discord

        for channel_id, after in snapshot:
            try:
                channel = await client.fetch_channel(int(channel_id))
                if not isinstance(channel, discord.abc.Messageable):
                    continue
                missed = [
                    message
                    async for message in channel.history(
                        after=discord.Object(int(after)),
                        limit=CATCH_UP_MESSAGES + 1,
                        oldest_first=True,
                    )
                ]
            except discord.HTTPException as exc:
                log.info("discord: could not catch up on channel %s: %s", channel_id, exc)
                continue
            if len(missed) > CATCH_UP_MESSAGES:
                log.warning(
                    "discord: more than %d messages in %s while away; the first %d are read back",
                    CATCH_UP_MESSAGES,
                    channel_id,
                    CATCH_UP_MESSAGES,
                )
                missed = missed[:CATCH_UP_MESSAGES]
            if missed:
                log.info("discord: catching up on %d message(s) in %s", len(missed), channel_id)
            for message in missed:
                try:
                    await on_message(message)
                except Exception as exc:  # noqa: BLE001 - held there; read back later
                    log.warning("discord: could not hand over a message of %s: %s", channel_id, exc)
                    break
        self.read.save()

    async def _save_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self.read.save()
            reader = self._reader
            if self.read.held() and reader is not None:  # a hand-over failed: try again
                await self._catch_up(*reader, self.read.active(CATCH_UP_WINDOW_SECONDS))

    async def _pressed(self, host: PlatformHost, interaction: discord.Interaction) -> None:
        import discord

        data: Any = interaction.data or {}
        request_id, _, choice = str(data.get("custom_id") or "").rpartition(":")
        chat = chat_of(interaction.channel)
        if not request_id or chat is None:
            return
        press = ButtonPress(
            chat=chat, user_id=str(interaction.user.id), request_id=request_id, choice=choice
        )
        toast = await host.pressed(press)
        try:
            if host.question_open(request_id):
                # Not the answer (someone else pressed): say so to that person only, and
                # leave the buttons for the one asked.
                await interaction.response.send_message(toast[:MAX_MESSAGE_CHARS], ephemeral=True)
                return
            asked = interaction.message.content if interaction.message is not None else ""
            answered = f"{asked}\n\n*{toast}*" if toast else asked
            await interaction.response.edit_message(content=answered[:MAX_MESSAGE_CHARS], view=None)
        except discord.HTTPException as exc:  # the press counted; showing it is a courtesy
            log.info("discord: could not show the answer to a press: %s", exc)

    # --- sending -------------------------------------------------------------------------

    async def _target(self, client: discord.Client, chat: ChatRef) -> int:
        """The channel to post in; a thread for an answered channel message is started
        first (once: its id is the message's, and a second start is refused)."""
        import discord

        if chat.thread_id is None or chat.thread_id in self._unthreaded:
            return int(chat.chat_id)
        thread = chat.thread_id
        if chat.chat_type == "group" and thread not in self._threads:
            known = client.get_channel(int(thread))
            if known is None:
                name = self._thread_names.pop(thread, "") or "Hermes"
                try:
                    await client.http.start_thread_with_message(
                        int(chat.chat_id),
                        int(thread),
                        name=name,
                        auto_archive_duration=THREAD_ARCHIVE_MINUTES,
                        reason=None,
                    )
                except discord.HTTPException as exc:
                    if exc.code in _NO_THREAD_HERE:
                        log.info(
                            "discord: no thread allowed in channel %s (%s); answering in the "
                            "channel",
                            chat.chat_id,
                            exc.text or exc.code,
                        )
                        _remember(self._unthreaded, thread, None)
                        return int(chat.chat_id)
                    if exc.code != _THREAD_EXISTS:
                        raise
            _remember(self._threads, thread, None)
        return int(thread)

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        import discord

        client = await self._ready_client()
        try:
            target = await self._target(client, chat)
            if chat.chat_type == "private" and chat.chat_id in self._dm_of_user:
                target = self._dm_of_user[chat.chat_id]
            channel = client.get_partial_messageable(target)
            ids: list[str] = []
            for number, chunk in enumerate(split_message(text, MAX_MESSAGE_CHARS)):
                reference = None
                # In a thread started from the message, the message itself opens the thread.
                in_its_thread = reply_to == chat.thread_id and target == int(reply_to or 0)
                if number == 0 and reply_to is not None and not in_its_thread:
                    reference = discord.MessageReference(
                        message_id=int(reply_to), channel_id=target, fail_if_not_exists=False
                    )
                try:
                    sent = await channel.send(chunk, reference=reference)  # type: ignore[arg-type]
                except discord.NotFound as exc:
                    if exc.code != _UNKNOWN_CHANNEL or chat.chat_type != "private" or ids:
                        raise
                    # A user's id rather than a DM channel's (``hermes send --to
                    # discord:USER``): open the DM with that user and send there.
                    opened = await client.http.start_private_message(int(chat.chat_id))
                    target = self._dm_of_user[chat.chat_id] = int(opened["id"])
                    channel = client.get_partial_messageable(target)
                    sent = await channel.send(chunk, reference=reference)  # type: ignore[arg-type]
                ids.append(str(sent.id))
            if chat.thread_id is not None and str(target) not in self.read:
                # A thread the bot opened: its replies are read back from here after a
                # restart (the channel's history does not hold a thread's messages).
                self.read.saw(str(target), ids[0])
            return ids
        except discord.HTTPException as exc:
            if _not_sent(exc):
                raise NotSent(f"Discord refused the message: {exc.text or exc}") from None
            raise

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        import discord

        client = await self._ready_client()
        thread = chat.thread_id if chat.thread_id not in self._unthreaded else None
        target = int(thread or chat.chat_id)
        message = client.get_partial_messageable(target).get_partial_message(int(message_id))
        try:
            await message.edit(content=text[:MAX_MESSAGE_CHARS])
        except discord.NotFound:
            raise MessageGone(f"Discord message {message_id} no longer exists") from None

    async def typing(self, chat: ChatRef) -> None:
        client = await self._ready_client()
        await client.http.send_typing(await self._target(client, chat))

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        import discord

        client = await self._ready_client()
        view = discord.ui.View(timeout=None)
        for choice in choices:
            view.add_item(
                discord.ui.Button(
                    label=choice.label[:80],
                    custom_id=f"{request_id}:{choice.value}"[:100],
                    style=discord.ButtonStyle.secondary,
                )
            )
        channel = client.get_partial_messageable(await self._target(client, chat))
        await channel.send(question[:MAX_MESSAGE_CHARS], view=view)
        # Presses are read from the interaction itself (on_interaction), which a restart
        # does not forget; the view object is not needed after sending.
        view.stop()

    async def aclose(self) -> None:
        self.read.save()
        client, self._client, self._logged_in = self._client, None, False
        if client is not None:
            # Bounded: a close handshake Discord never answers must not hold the gateway's
            # stop (or a platform's restart). Not wait_for: on its timeout it waits for the
            # close it cancels to end, and discord.py's close can go on past a cancel.
            closing = asyncio.ensure_future(client.close())
            done, _ = await asyncio.wait({closing}, timeout=CLOSE_SECONDS)
            if not done:
                closing.cancel()
                log.warning(
                    "discord: closing the connection took over %s s; left it", CLOSE_SECONDS
                )
            elif not closing.cancelled() and closing.exception() is not None:
                log.info("discord: closing: %s", closing.exception())
