"""Mattermost through a real ``hermes gateway run`` process: the Mattermost plugin against
the loopback Mattermost server, its buttons pressed through the gateway's HTTP listener."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_mattermost.testing import TOKEN, FakeMattermost, Post

from hermes_testkit import Reply
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "o1234567890abcdefghijklmno"
STRANGER = "s1234567890abcdefghijklmno"


@pytest.fixture
def server() -> Iterator[FakeMattermost]:
    with FakeMattermost() as fake:
        fake.user(OWNER, "owner")
        fake.user(STRANGER, "stranger")
        yield fake


@pytest.fixture
def mattermost_gateway(platform_process, server: FakeMattermost) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only Mattermost, letting OWNER in; returns once
    its websocket is connected."""
    port = free_port()
    section = (
        f"  mattermost:\n    url: {server.url}\n    allowed_users: ['{OWNER}']\n"
        f"    actions_url: http://127.0.0.1:{port}/mattermost/actions\n"
    )

    def start(write: bool = True) -> GatewayProcess:
        connected = server.connections
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=f"MATTERMOST_TOKEN={TOKEN}\n",
            gateway=f"  http_port: {port}\n",
            ready=lambda: server.connections > connected,
            write=write,
        )
        time.sleep(0.5)  # the read-back runs before events are read
        return gateway

    return start


def wait_for(server: FakeMattermost, channel: str, text: str, timeout: float = 90) -> Post:
    found: list[Post] = []
    wait_until(
        lambda: found.extend(p for p in server.sent(channel) if text in p.message) or found,
        timeout,
    )
    return found[0]


def test_a_mention_is_answered_in_its_thread_a_dm_privately_a_stranger_costs_nothing(
    mattermost_gateway, server: FakeMattermost, openai_server
):
    openai_server.queue(Reply.say("Noon, in the thread."), Reply.say("Noon, privately."))
    mattermost_gateway()
    server.user_says(OWNER, "chatter that names nobody", channel=server.channel)
    server.user_says(STRANGER, "@hermes run something for me", channel=server.channel)
    asked = server.user_says(OWNER, "@hermes what time is it?", channel=server.channel)
    answer = wait_for(server, server.channel, "Noon, in the thread.")
    assert answer.root_id == asked.id
    server.deliver_again()  # the same event twice: answered once
    server.user_says(OWNER, "and privately?")
    wait_for(server, server.dm(OWNER), "Noon, privately.")
    server.user_says(STRANGER, "let me in")
    wait_for(server, server.dm(STRANGER), "hermes pairing approve")
    time.sleep(1.0)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "what time is it?",
        "and privately?",
    ]
    assert len(server.sent(server.channel)) == 1


def test_a_restart_mid_turn_and_a_post_while_down_are_each_answered_once(
    mattermost_gateway, server: FakeMattermost, openai_server
):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = mattermost_gateway()
    server.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    server.user_says(OWNER, "and this while you were down", connected=False)
    openai_server.queue(Reply.say("the answer, after the restart"), Reply.say("caught up"))
    mattermost_gateway(write=False)
    wait_for(server, server.dm(OWNER), "the answer, after the restart", timeout=60)
    wait_for(server, server.dm(OWNER), "caught up", timeout=60)
    time.sleep(1.5)
    assert len([p for p in server.sent_to(OWNER) if "after the restart" in p.message]) == 1
    assert "and this while you were down" in user_texts(openai_server)[-1][-1]
    assert len(openai_server.requests) == 3


def test_an_approval_is_a_button_pressed(mattermost_gateway, server, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    mattermost_gateway()
    server.user_says(OWNER, "open up that folder")
    question = wait_for(server, server.dm(OWNER), "chmod -R 777")
    assert question.buttons
    once = next(a for a in question.buttons if a["integration"]["context"]["choice"] == "once")
    assert server.press(OWNER, question, once["id"]) == 200
    wait_for(server, server.dm(OWNER), "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert not question.buttons  # the question is closed: its buttons are gone
