"""Conversations through the real Discord plugin (unmodified discord.py), the SDK's Discord
server on loopback and the scripted model: DMs, mentions answered in threads, approval
buttons, and a connection that drops, resumes and delivers events twice."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_discord.testing import FakeDiscord, SentMessage

from hermes_testkit import Reply

from .conftest import RunningGateway, user_texts, wait_until

OWNER = "1200000000000000042"
STRANGER = "1200000000000000777"


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with FakeDiscord() as server:
        yield server


@pytest.fixture
def discord_gateway(one_platform_gateway, discord: FakeDiscord) -> Callable[..., RunningGateway]:
    """Start the gateway with only Discord, letting OWNER in."""

    def start(extra: str = "", gateway: str = "  stream: false\n") -> RunningGateway:
        section = (
            f"  discord:\n    api_url: {discord.api_url}\n    gateway_url: {discord.gateway_url}\n"
            f"    allowed_users: ['{OWNER}']\n{extra}"
        )
        started = one_platform_gateway(section, f"DISCORD_BOT_TOKEN={discord.token}\n", gateway)
        discord.wait_until_connected()
        return started

    return start


def replies(discord: FakeDiscord, channel: str, text: str) -> list[SentMessage]:
    return [m for m in discord.sent(channel) if text in m.content]


def test_a_dm_is_answered_and_a_stranger_gets_a_pairing_code(
    discord_gateway, discord, openai_server, hermes
):
    openai_server.queue(Reply.say("Hello from **Hermes**.", delay_seconds=1))
    gateway = discord_gateway()
    discord.user_says(OWNER, "hi there")
    dm = discord.dm_channel(OWNER)
    reply = discord.wait_for_message(dm, "Hello from **Hermes**.")
    assert reply.reply_to is not None  # answers the user's message
    assert dm in discord.typing, "typing was shown while the model took a second"
    (session,) = gateway.sessions("discord")
    assert session.user_scope == f"discord:{OWNER}"
    assert discord.token not in Path(hermes.home, "state.db").read_bytes().decode("latin-1")

    discord.user_says(STRANGER, "let me in")
    offer = discord.wait_for_message(discord.dm_channel(STRANGER), "hermes pairing approve")
    assert "discord" in offer.content
    assert len(openai_server.requests) == 1


def test_a_mention_in_a_channel_is_answered_in_its_thread(discord_gateway, discord, openai_server):
    openai_server.queue(Reply.say("Here, in a thread."), Reply.say("Still in the thread."))
    gateway = discord_gateway()
    channel = discord.channel_id
    discord.user_says(OWNER, "chatter not for the bot", channel_id=channel)
    asked = discord.user_says(OWNER, "summarise the plan", channel_id=channel, mention=True)
    reply = discord.wait_for_message(asked, "Here, in a thread.")
    assert reply.channel_id == asked  # the thread started from the message has its id
    assert user_texts(openai_server) == [["summarise the plan"]]  # no chatter, no <@bot>

    discord.user_says(OWNER, "and the next step?", channel_id=asked)  # no mention needed
    discord.wait_for_message(asked, "Still in the thread.")
    assert user_texts(openai_server)[-1] == ["summarise the plan", "and the next step?"]
    assert len(gateway.sessions("discord")) == 1  # the thread is one session
    assert discord.sent(channel) == []  # nothing was posted in the channel itself


def test_an_approval_by_button_and_a_strangers_press_is_refused(
    discord_gateway, discord, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    discord_gateway("    group_toolsets: [terminal]\n")  # a channel gets no shell unless widened
    asked = discord.user_says(
        OWNER, "open up that folder", channel_id=discord.channel_id, mention=True
    )
    question = discord.wait_for_message(asked, "Approve this command?")
    assert "chmod -R 777" in question.content and question.buttons
    once = next(b["custom_id"] for b in question.buttons if b["custom_id"].endswith(":once"))

    discord.press(STRANGER, question, once)
    wait_until(lambda: discord.callbacks)
    refusal = discord.callbacks[-1]
    assert refusal["type"] == 4 and refusal["data"]["flags"] == 64  # only the presser sees it
    assert "Only the person" in refusal["data"]["content"]
    assert "\n" not in refusal["data"]["content"].strip()
    time.sleep(0.3)
    assert question.buttons, "the buttons stay for the person asked"
    assert oct(target.stat().st_mode)[-3:] != "777"

    discord.press(OWNER, question, once)
    discord.wait_for_message(asked, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert discord.callbacks[-1]["type"] == 7 and question.buttons == []  # answered: gone


def test_a_dropped_connection_resumes_without_losing_a_message(
    discord_gateway, discord, openai_server
):
    openai_server.queue(Reply.say("first answer"), Reply.say("said while you were away"))
    discord_gateway()
    dm = discord.dm_channel(OWNER)
    discord.user_says(OWNER, "one")
    discord.wait_for_message(dm, "first answer")
    discord.drop()
    discord.user_says(OWNER, "two")  # while the bot is disconnected
    discord.wait_for_message(dm, "said while you were away")
    assert (discord.identifies, discord.resumes) == (1, 1)  # resumed, not a new session
    assert user_texts(openai_server)[-1] == ["one", "two"]


def test_an_event_delivered_twice_is_answered_once(discord_gateway, discord, openai_server):
    openai_server.queue(Reply.say("only once"), Reply.say("second message"))
    discord_gateway()
    dm = discord.dm_channel(OWNER)
    discord.user_says(OWNER, "hello")
    discord.wait_for_message(dm, "only once")
    discord.deliver_again()  # the same MESSAGE_CREATE, a new sequence number
    discord.replay_on_resume(3)  # and RESUME replays what the bot already had
    discord.drop()
    wait_until(lambda: discord.resumes == 1 and discord.connected())
    discord.user_says(OWNER, "next")
    discord.wait_for_message(dm, "second message")
    time.sleep(0.5)
    assert len(replies(discord, dm, "only once")) == 1
    assert len(openai_server.requests) == 2


def test_a_reconnect_while_a_turn_runs_gives_one_reply(discord_gateway, discord, openai_server):
    openai_server.queue(Reply.say("after the reconnect", delay_seconds=2))
    discord_gateway()
    dm = discord.dm_channel(OWNER)
    discord.user_says(OWNER, "take your time")
    wait_until(lambda: openai_server.requests)  # the turn runs
    discord.replay_on_resume(2)  # the message in flight comes again
    discord.drop()
    discord.wait_for_message(dm, "after the reconnect")
    time.sleep(0.5)
    assert len(replies(discord, dm, "after the reconnect")) == 1
    assert len(openai_server.requests) == 1
    assert discord.resumes == 1


def test_a_session_that_cannot_resume_reads_back_the_gap(discord_gateway, discord, openai_server):
    openai_server.queue(Reply.say("first answer"), Reply.say("read back after the gap"))
    discord_gateway()
    time.sleep(1.0)  # past on_ready: the first session is fully up
    dm = discord.dm_channel(OWNER)
    discord.user_says(OWNER, "one")
    discord.wait_for_message(dm, "first answer")
    discord.expire_on_resume = True  # Discord forgot the session: no replay of the gap
    discord.drop()
    discord.user_says(OWNER, "two")  # said while the bot was away
    discord.wait_for_message(dm, "read back after the gap", timeout=40)
    assert discord.identifies == 2  # a new session, not a resumed one
    assert user_texts(openai_server)[-1] == ["one", "two"]
    time.sleep(0.5)
    assert len(openai_server.requests) == 2  # nothing answered twice


def test_a_restart_reads_back_what_was_said_while_hermes_was_down(
    discord_gateway, discord, openai_server
):
    # Discord replays nothing to a new session: what was said while Hermes was stopped is
    # read back from where the last run left each chat (HERMES_HOME/platforms/discord).
    openai_server.queue(
        Reply.say("before the restart"), Reply.say("read back: two"), Reply.say("read back: 3")
    )
    gateway = discord_gateway()
    dm = discord.dm_channel(OWNER)
    discord.user_says(OWNER, "one")
    discord.wait_for_message(dm, "before the restart")
    gateway.stop()
    discord.user_says(OWNER, "two, while Hermes was down")
    discord.user_says(OWNER, "three, also while down")
    discord_gateway()
    discord.wait_for_message(dm, "read back: 3", timeout=40)
    assert user_texts(openai_server)[-1] == [
        "one",
        "two, while Hermes was down",
        "three, also while down",
    ]
    time.sleep(0.5)
    assert len(openai_server.requests) == 3  # "one" was not read back and answered again
