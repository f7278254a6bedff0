"""What the conformance suite does not cover: servers, mentions, attachments, and the two
set-up mistakes a new user makes (a wrong token, the Message Content intent left off)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_discord.adapter import DiscordAdapter
from hermes_plugin_platform_discord.testing import FakeDiscord

from hermes_sdk.platform import ChatRef, PlatformContext, PlatformNotConfigured
from hermes_testkit.media_files import disguised_program
from hermes_testkit.platform_tests import RecordingHost

PERSON = "1200000000000000042"


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with FakeDiscord() as fake:
        restore = fake.point_discord_py()
        try:
            yield fake
        finally:
            restore()


def context(
    discord: FakeDiscord, home: Path, token: str | None = None, **config: object
) -> PlatformContext:
    return PlatformContext(
        name="discord",
        home=str(home),
        config={"api_url": discord.api_url, "gateway_url": discord.gateway_url, **config},
        secrets={"DISCORD_BOT_TOKEN": token or discord.token},
    )


async def hand_over(adapter: DiscordAdapter, host: RecordingHost, count: int) -> None:
    task = asyncio.ensure_future(adapter.run(host))
    try:
        for _ in range(200):
            if len(host.messages) >= count or task.done():
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # and nothing more
        if task.done():
            task.result()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await adapter.aclose()


def test_in_a_server_only_mentions_and_replies_count(discord, tmp_path):
    host = RecordingHost()
    adapter = DiscordAdapter(context(discord, tmp_path))
    discord.user_says(PERSON, "chatter", channel_id=discord.channel_id)
    asked = discord.user_says(PERSON, "look at this", channel_id=discord.channel_id, mention=True)
    discord.user_sends_file(PERSON, b"%PDF-1.4 notes", "notes.pdf", "application/pdf", "notes")
    asyncio.run(hand_over(adapter, host, 2))
    mention, attachment = host.messages
    assert (mention.text, mention.message_id, mention.chat.thread_id) == (
        "look at this",
        asked,
        asked,
    )
    assert mention.chat.chat_type == "group" and mention.addressed
    assert attachment.text == "notes"
    (pdf,) = attachment.attachments
    assert (pdf.kind, pdf.mime, pdf.name, pdf.size) == (
        "document",
        "application/pdf",
        "notes.pdf",
        14,
    )
    assert Path(pdf.path).read_bytes() == b"%PDF-1.4 notes"
    assert pdf.path.startswith(str(tmp_path / "cache" / "media"))


def test_a_disguised_file_is_refused_in_one_line_in_the_chat(discord, tmp_path):
    host = RecordingHost()
    adapter = DiscordAdapter(context(discord, tmp_path))
    discord.user_sends_file(PERSON, disguised_program(), "cat.png", "image/png")
    discord.user_says(PERSON, "and hello")
    asyncio.run(hand_over(adapter, host, 1))
    assert [m.text for m in host.messages] == ["and hello"]
    (line,) = [m.content for m in discord.messages.values()]
    assert line == (
        "cat.png is refused: it is an executable program (application/x-executable) "
        "sent as image/png"
    )


def test_servers_not_listed_are_ignored(discord, tmp_path):
    host = RecordingHost()
    adapter = DiscordAdapter(context(discord, tmp_path, allowed_guilds=["42"]))
    discord.user_says(PERSON, "hello", channel_id=discord.channel_id, mention=True)
    discord.user_says(PERSON, "a DM still counts")
    asyncio.run(hand_over(adapter, host, 1))
    assert [m.text for m in host.messages] == ["a DM still counts"]


def test_a_wrong_token_is_one_clear_line(discord, tmp_path):
    adapter = DiscordAdapter(context(discord, tmp_path, token="not-the-token"))
    with pytest.raises(RuntimeError, match="refused the bot token") as raised:
        asyncio.run(hand_over(adapter, RecordingHost(), 1))
    assert "\n" not in str(raised.value) and "not-the-token" not in str(raised.value)


def test_the_message_content_intent_left_off_is_one_clear_line(discord, tmp_path):
    discord.refuse_intents = True
    adapter = DiscordAdapter(context(discord, tmp_path))
    with pytest.raises(RuntimeError, match="Message Content intent"):
        asyncio.run(hand_over(adapter, RecordingHost(), 1))


def test_settings_say_what_to_fix(tmp_path):
    with pytest.raises(PlatformNotConfigured, match="numeric ids"):
        DiscordAdapter(
            PlatformContext(
                name="discord",
                home=str(tmp_path),
                config={"allowed_guilds": ["my-server"]},
                secrets={"DISCORD_BOT_TOKEN": "x"},
            )
        )
    with pytest.raises(PlatformNotConfigured, match="ws:// or wss://"):
        DiscordAdapter(
            PlatformContext(
                name="discord",
                home=str(tmp_path),
                config={"gateway_url": "http://example.org"},
                secrets={"DISCORD_BOT_TOKEN": "x"},
            )
        )


def test_a_message_to_a_user_id_opens_the_dm(discord, tmp_path):
    from hermes_sdk.platform import ChatRef

    async def send() -> list[str]:
        adapter = DiscordAdapter(context(discord, tmp_path))
        try:
            return await adapter.send(ChatRef("discord", PERSON, "private"), "from hermes send")
        finally:
            await adapter.aclose()

    assert len(asyncio.run(send())) == 1
    assert [m.content for m in discord.sent(discord.dm_channel(PERSON))] == ["from hermes send"]


def test_what_it_remembers_of_threads_is_bounded():
    from hermes_plugin_platform_discord.adapter import REMEMBERED, _remember

    memory: dict[str, object] = {}
    for number in range(REMEMBERED + 500):
        _remember(memory, str(number), None)
    assert len(memory) == REMEMBERED and "0" not in memory and str(REMEMBERED + 499) in memory


@pytest.mark.parametrize("voice_channel", [False, True], ids=["no-permission", "voice-chat"])
def test_where_no_thread_may_be_started_the_reply_goes_in_the_channel(
    discord, tmp_path, caplog, voice_channel
):
    # Knob: refuse_threads (403 50013 Missing Permissions, or 400 50024 in a voice channel's
    # text chat). The reply, and its preview's edits, go in the channel, answering the message.
    from hermes_sdk.platform import ChatRef

    discord.refuse_threads(voice_channel=voice_channel)
    asked = discord.user_says(PERSON, "hello", channel_id=discord.channel_id, mention=True)
    chat = ChatRef("discord", discord.channel_id, "group", thread_id=asked)

    async def reply() -> None:
        adapter = DiscordAdapter(context(discord, tmp_path))
        try:
            (preview,) = await adapter.send(chat, "Writing …", reply_to=asked)
            await adapter.edit(chat, preview, "Hello there.")
        finally:
            await adapter.aclose()

    caplog.set_level("INFO", logger="hermes.discord")
    asyncio.run(reply())
    (sent,) = discord.sent(discord.channel_id)
    assert sent.content == "Hello there."
    assert (
        str(sent.reply_to) == asked
    )  # it answers the message (in its thread it would not need to)
    said = [r.getMessage() for r in caplog.records if "no thread allowed" in r.getMessage()]
    assert len(said) == 1


def test_a_mention_of_the_bots_own_role_counts_as_a_mention(discord, tmp_path):
    # Knob: user_says(mention_role=True): <@&ROLE> of the role Discord manages for the bot.
    host = RecordingHost()
    adapter = DiscordAdapter(context(discord, tmp_path))
    asked = discord.user_says(PERSON, "hello", channel_id=discord.channel_id, mention_role=True)
    asyncio.run(hand_over(adapter, host, 1))
    (message,) = host.messages
    assert (message.text, message.message_id, message.addressed) == ("hello", asked, True)


def test_a_post_discord_failed_after_making_is_not_made_twice(discord, tmp_path):
    # Knob: fail_after_create (the post is made, then answered 500; discord.py sends it
    # again by itself). discord.py puts an enforced nonce on every post, and Discord (the
    # fake too) answers the second with the first: this holds that in place.
    from hermes_sdk.platform import ChatRef

    discord.fail_after_create()

    async def send() -> list[str]:
        adapter = DiscordAdapter(context(discord, tmp_path))
        try:
            return await adapter.send(ChatRef("discord", PERSON, "private"), "only once")
        finally:
            await adapter.aclose()

    (sent,) = asyncio.run(send())
    posted = discord.sent(discord.dm_channel(PERSON))
    assert [(m.id, m.content) for m in posted] == [(sent, "only once")]


def test_a_forwarded_message_reaches_the_agent_with_its_files(discord, tmp_path):
    # Knob: user_forwards (an empty message whose message_snapshots carry the original).
    host = RecordingHost()
    adapter = DiscordAdapter(context(discord, tmp_path))
    notes = discord.attachment(
        discord.dm_channel(PERSON), b"%PDF-1.4 minutes", "minutes.pdf", "application/pdf"
    )
    forwarded = discord.user_forwards(PERSON, "the meeting moved to 3pm", attachments=[notes])
    discord.user_forwards(PERSON, "forwarded chatter", channel_id=discord.channel_id)
    asyncio.run(hand_over(adapter, host, 1))
    (message,) = host.messages  # the forward in a server channel is chatter, unaddressed
    assert message.message_id == forwarded
    assert message.text == "[Forwarded message]\nthe meeting moved to 3pm"
    (pdf,) = message.attachments
    assert (pdf.name, Path(pdf.path).read_bytes()) == ("minutes.pdf", b"%PDF-1.4 minutes")


async def _until(condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def _running(adapter: DiscordAdapter, host: RecordingHost, scenario) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        task = asyncio.ensure_future(adapter.run(host))
        try:
            await scenario(task)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await adapter.aclose()

    asyncio.run(main())


@pytest.mark.parametrize("global_limit", [False, True])
def test_a_rate_limited_reply_waits_out_discords_429(discord, tmp_path, global_limit):
    # Knob: rate_limit (Discord's 429: its JSON body, Retry-After, X-RateLimit-*, Via).
    adapter = DiscordAdapter(context(discord, tmp_path))
    discord.rate_limit("POST", "channels/", calls=1, retry_after=0.5, global_limit=global_limit)
    chat = ChatRef("discord", discord.dm_channel(PERSON), "private")

    async def send() -> float:
        started = time.monotonic()
        try:
            await adapter.send(chat, "after the limit")
        finally:
            await adapter.aclose()
        return time.monotonic() - started

    waited = asyncio.run(send())
    assert [m.content for m in discord.sent(chat.chat_id)] == ["after the limit"]
    assert len(discord.limited) == 1 and waited >= 0.5


def test_discord_asking_to_reconnect_loses_no_message(discord, tmp_path):
    # Knob: ask_to_reconnect (op 7 RECONNECT): discord.py reconnects and resumes.
    host, adapter = RecordingHost(), DiscordAdapter(context(discord, tmp_path))

    async def scenario(task: asyncio.Task[None]) -> None:
        await _until(discord.connected)
        discord.user_says(PERSON, "before")
        await _until(lambda: len(host.messages) == 1)
        discord.ask_to_reconnect()
        discord.user_says(PERSON, "while reconnecting")
        await _until(lambda: len(host.messages) == 2)
        await asyncio.sleep(0.3)

    _running(adapter, host, scenario)
    assert [m.text for m in host.messages] == ["before", "while reconnecting"]
    assert discord.reconnects_asked == 1 and discord.resumes == 1


def test_a_zombie_connection_is_noticed_and_resumed(discord, tmp_path):
    # Knob: go_zombie (heartbeats no longer acknowledged, nothing delivered) with a short
    # heartbeat; the adapter's heartbeat_timeout shortened to match.
    discord.heartbeat_ms = 300
    host, adapter = RecordingHost(), DiscordAdapter(context(discord, tmp_path))
    adapter.heartbeat_timeout = 1.0

    async def scenario(task: asyncio.Task[None]) -> None:
        await _until(discord.connected)
        discord.go_zombie()
        discord.user_says(PERSON, "said to a dead connection")
        await _until(lambda: len(host.messages) == 1)
        await asyncio.sleep(0.3)

    _running(adapter, host, scenario)
    assert [m.text for m in host.messages] == ["said to a dead connection"]
    assert discord.resumes == 1
