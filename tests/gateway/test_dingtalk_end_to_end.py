"""DingTalk through a real ``hermes gateway run`` process: DingTalk on loopback pushes robot
messages over Stream mode (dingtalk-stream's client in the gateway) and takes replies
through session webhooks and the robot's API."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_dingtalk.testing import GROUP, FakeDingTalk, Sent

from hermes_testkit import Reply
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes

from .conftest import GatewayProcess, first_sent, user_texts, wait_until

OWNER = "owner"
STRANGER = "stranger"


@pytest.fixture
def dingtalk() -> Iterator[FakeDingTalk]:
    with FakeDingTalk() as fake:
        yield fake


@pytest.fixture
def dingtalk_gateway(platform_process, dingtalk: FakeDingTalk) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only DingTalk, letting OWNER in; returns once its
    stream is connected."""
    section = f"  dingtalk:\n    api_url: {dingtalk.url}\n    allowed_users: ['{OWNER}']\n"
    dotenv = (
        f"DINGTALK_CLIENT_ID={dingtalk.client_id}\n"
        f"DINGTALK_CLIENT_SECRET={dingtalk.client_secret}\n"
    )

    def start(write: bool = True) -> GatewayProcess:
        connections = dingtalk.connections
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=dotenv,
            model="  vision: true\n",
            ready=lambda: dingtalk.connections > connections and bool(dingtalk._sockets),
            write=write,
        )
        return gateway

    return start


def wait_for(dingtalk: FakeDingTalk, chat: str, text: str, timeout: float = 90) -> Sent:
    return first_sent(lambda: dingtalk.sent_to(chat), text, timeout)


def test_a_dm_a_mention_in_a_group_strangers_and_redelivery(
    dingtalk_gateway, dingtalk: FakeDingTalk, openai_server, hermes
):
    openai_server.queue(Reply.say("你好！私聊的回答。"), Reply.say("群里的回答 👍"))
    dingtalk_gateway()
    assert dingtalk.user_says(OWNER, "请总结今天的周会 📋") == 200
    wait_for(dingtalk, OWNER, "私聊的回答")
    assert dingtalk.deliver_again() == 200  # the same message again: answered once
    dingtalk.user_says(OWNER, "nobody mentioned the robot", group=GROUP, mention=False)
    dingtalk.user_says(OWNER, "what did we decide?", group=GROUP)
    wait_for(dingtalk, GROUP, "群里的回答")
    dingtalk.user_says(STRANGER, "let me in")
    wait_for(dingtalk, STRANGER, "hermes pairing approve")
    dingtalk.user_says(STRANGER, "run something", group=GROUP)
    time.sleep(1.5)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "请总结今天的周会 📋",
        "what did we decide?",
    ]
    assert len(dingtalk.sent_to(OWNER)) == 1
    assert len(dingtalk.sent_to(GROUP)) == 1
    found = hermes("sessions", "search", "周会")
    assert found.code == 0 and "周会" in found.out


def test_a_restart_mid_turn_is_answered_once(dingtalk_gateway, dingtalk, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = dingtalk_gateway()
    dingtalk.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    dingtalk_gateway(write=False)
    wait_for(dingtalk, OWNER, "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    assert len([m for m in dingtalk.sent_to(OWNER) if "after the restart" in m.text]) == 1
    assert len(openai_server.requests) == 2


def test_an_approval_is_the_word_typed_and_a_picture_reaches_the_model(
    dingtalk_gateway, dingtalk: FakeDingTalk, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.say("A red picture."),
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}),
        Reply.say("Opened it."),
    )
    dingtalk_gateway()
    dingtalk.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg", picture=True)
    wait_for(dingtalk, OWNER, "A red picture.")
    ((mime, _),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"
    dingtalk.user_says(OWNER, "open up that folder")
    wait_for(dingtalk, OWNER, "chmod -R 777")
    assert dingtalk.user_says(OWNER, "once") == 200
    wait_for(dingtalk, OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
