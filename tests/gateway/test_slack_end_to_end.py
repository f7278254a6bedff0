"""Conversations through the real Slack plugin (unmodified slack_sdk), the SDK's Slack server
on loopback (Web API and Socket Mode) and the scripted model: DMs, mentions answered in
threads, Block Kit approvals, and envelopes delivered twice or across a reconnect."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_slack.testing import APP_TOKEN, BOT_TOKEN, FakeSlack, SentMessage

from hermes_testkit import Reply

from .conftest import RunningGateway, user_texts, wait_until

OWNER = "U0OWNER"
STRANGER = "U0STRANGER"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server


@pytest.fixture
def slack_gateway(one_platform_gateway, slack: FakeSlack) -> Callable[..., RunningGateway]:
    """Start the gateway with only Slack, letting OWNER in."""

    def start(extra: str = "", gateway: str = "  stream: false\n") -> RunningGateway:
        section = f"  slack:\n    api_url: {slack.api_url}\n    allowed_users: ['{OWNER}']\n{extra}"
        secrets = f"SLACK_BOT_TOKEN={BOT_TOKEN}\nSLACK_APP_TOKEN={APP_TOKEN}\n"
        started = one_platform_gateway(section, secrets, gateway)
        slack.wait_until_connected()
        return started

    return start


def replies(slack: FakeSlack, channel: str, text: str) -> list[SentMessage]:
    return [m for m in slack.sent(channel) if text in m.visible]


def test_a_dm_is_answered_in_mrkdwn(slack_gateway, slack, openai_server, hermes):
    openai_server.queue(Reply.say("Hello from **Hermes**, see [the docs](https://example.org)."))
    gateway = slack_gateway()
    slack.user_says(OWNER, "hi there & welcome <you>")
    dm = slack.dm_channel(OWNER)
    reply = slack.wait_for_message(dm, "Hello from")
    assert reply.text == "Hello from *Hermes*, see <https://example.org|the docs>."
    assert user_texts(openai_server) == [["hi there & welcome <you>"]]  # unescaped for the model
    (session,) = gateway.sessions("slack")
    assert session.user_scope == f"slack:{OWNER}"
    wait_until(lambda: slack.unacknowledged() == 0)

    slack.user_says(STRANGER, "let me in")
    offer = slack.wait_for_message(slack.dm_channel(STRANGER), "hermes pairing approve")
    assert "slack" in offer.visible and len(openai_server.requests) == 1


def test_a_mention_in_a_channel_is_answered_once_in_its_thread(slack_gateway, slack, openai_server):
    openai_server.queue(Reply.say("Here, in the thread."), Reply.say("Still here."))
    gateway = slack_gateway()
    slack.user_says(OWNER, "chatter not for the bot", channel=slack.channel)
    asked = slack.user_says(OWNER, "summarise the plan", channel=slack.channel, mention=True)
    reply = slack.wait_for_message(slack.channel, "Here, in the thread.")
    assert reply.thread_ts == asked
    slack.user_says(OWNER, "and next?", channel=slack.channel, thread_ts=asked)  # no mention
    slack.wait_for_message(slack.channel, "Still here.")
    time.sleep(0.5)
    # The message and app_mention twins of the mention started one turn, not two.
    assert user_texts(openai_server) == [
        ["summarise the plan"],
        ["summarise the plan", "and next?"],
    ]
    assert len(replies(slack, slack.channel, "Here, in the thread.")) == 1
    assert len(gateway.sessions("slack")) == 1
    assert all(m.thread_ts == asked for m in slack.sent(slack.channel))


def test_an_approval_by_button_and_a_strangers_press_is_refused(
    slack_gateway, slack, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    slack_gateway("    group_toolsets: [terminal]\n")  # a channel gets no shell unless widened
    slack.user_says(OWNER, "open up that folder", channel=slack.channel, mention=True)
    question = slack.wait_for_message(slack.channel, "Approve this command?")
    assert "chmod -R 777" in question.visible
    once = next(b["action_id"] for b in question.buttons() if b["value"].endswith(":once"))

    slack.press(STRANGER, question, once)
    wait_until(lambda: slack.ephemeral)
    (refusal,) = slack.ephemeral
    assert refusal["user"] == STRANGER and "Only the person" in refusal["text"]
    assert refusal["thread_ts"] == question.thread_ts
    time.sleep(0.3)
    assert question.buttons(), "the buttons stay for the person asked"
    assert oct(target.stat().st_mode)[-3:] != "777"

    slack.press(OWNER, question, once)
    slack.wait_for_message(slack.channel, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert question.buttons() == []  # answered: gone


def test_a_dropped_connection_loses_no_message(slack_gateway, slack, openai_server):
    openai_server.queue(Reply.say("first answer"), Reply.say("said while you were away"))
    slack_gateway()
    dm = slack.dm_channel(OWNER)
    slack.user_says(OWNER, "one")
    slack.wait_for_message(dm, "first answer")
    slack.drop()
    slack.user_says(OWNER, "two")  # it may reach no connection: kept until one acknowledges
    slack.wait_for_message(dm, "said while you were away", timeout=30)
    assert slack.connections >= 2
    assert user_texts(openai_server)[-1] == ["one", "two"]
    wait_until(lambda: slack.unacknowledged() == 0)


def test_an_event_delivered_twice_is_answered_once(slack_gateway, slack, openai_server):
    openai_server.queue(Reply.say("only once"), Reply.say("second message"))
    slack_gateway()
    dm = slack.dm_channel(OWNER)
    slack.user_says(OWNER, "hello")
    slack.wait_for_message(dm, "only once")
    slack.deliver_again()  # a redelivery of an envelope already acknowledged
    slack.refresh()  # and a refresh_requested reconnect
    wait_until(lambda: slack.connections >= 2 and slack.connected())
    slack.user_says(OWNER, "next")
    slack.wait_for_message(dm, "second message")
    time.sleep(0.5)
    assert len(replies(slack, dm, "only once")) == 1
    assert len(openai_server.requests) == 2


def test_a_reconnect_while_a_turn_runs_gives_one_reply(slack_gateway, slack, openai_server):
    openai_server.queue(Reply.say("after the reconnect", delay_seconds=2))
    slack_gateway()
    dm = slack.dm_channel(OWNER)
    slack.user_says(OWNER, "take your time")
    wait_until(lambda: openai_server.requests)
    slack.deliver_again()
    slack.drop()
    slack.wait_for_message(dm, "after the reconnect", timeout=30)
    time.sleep(0.5)
    assert len(replies(slack, dm, "after the reconnect")) == 1
    assert len(openai_server.requests) == 1
