"""QQ through a real ``hermes gateway run`` process: QQ on loopback dispatches messages over
its gateway (qq-botpy's client in the gateway) and takes passive replies through its
message API."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_qqbot.testing import GROUP, FakeQQ, Sent

from hermes_testkit import Reply
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes

from .conftest import GatewayProcess, first_sent, user_texts, wait_until

OWNER = "OPENIDOWNER001"
STRANGER = "OPENIDSTRANGER"


@pytest.fixture
def qq() -> Iterator[FakeQQ]:
    with FakeQQ() as fake:
        yield fake


@pytest.fixture
def qq_gateway(platform_process, qq: FakeQQ) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only QQ, letting OWNER in; returns once the bot
    has identified on QQ's gateway."""
    section = (
        f"  qqbot:\n    api_url: {qq.url}\n    token_url: {qq.token_url}\n"
        f"    allowed_users: ['{OWNER}']\n"
    )
    dotenv = f"QQ_APP_ID={qq.app_id}\nQQ_CLIENT_SECRET={qq.client_secret}\n"

    def start(write: bool = True) -> GatewayProcess:
        identified = len(qq.identified)
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=dotenv,
            model="  vision: true\n",
            ready=lambda: len(qq.identified) > identified and bool(qq._sockets),
            write=write,
        )
        return gateway

    return start


def wait_for(qq: FakeQQ, target: str, text: str, timeout: float = 90) -> Sent:
    return first_sent(lambda: qq.sent_to(target), text, timeout)


def test_a_dm_a_group_mention_strangers_and_redelivery(
    qq_gateway, qq: FakeQQ, openai_server, hermes
):
    openai_server.queue(Reply.say("你好！私聊的回答。"), Reply.say("群里的回答 👍"))
    qq_gateway()
    qq.user_says(OWNER, "帮我总结一下今天的新闻 📰")
    answer = wait_for(qq, f"users/{OWNER}", "私聊的回答")
    assert answer.msg_id  # a passive reply to the message
    qq.deliver_again()  # the same event again: answered once
    qq.user_says(OWNER, "what did we decide?", group=GROUP)
    wait_for(qq, f"groups/{GROUP}", "群里的回答")
    qq.user_says(STRANGER, "let me in")
    wait_for(qq, f"users/{STRANGER}", "hermes pairing approve")
    qq.user_says(STRANGER, "run something", group=GROUP)
    time.sleep(1.5)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "帮我总结一下今天的新闻 📰",
        "what did we decide?",
    ]
    assert len(qq.sent_to(f"users/{OWNER}")) == 1
    assert len(qq.sent_to(f"groups/{GROUP}")) == 1
    found = hermes("sessions", "search", "新闻")
    assert found.code == 0 and "新闻" in found.out


def test_a_restart_mid_turn_is_answered_once(qq_gateway, qq, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = qq_gateway()
    qq.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    qq_gateway(write=False)
    wait_for(qq, f"users/{OWNER}", "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    sent = [m for m in qq.sent_to(f"users/{OWNER}") if "after the restart" in m.text]
    assert len(sent) == 1 and sent[0].msg_id
    assert len(openai_server.requests) == 2


def test_an_approval_is_the_word_typed_and_an_image_reaches_the_model(
    qq_gateway, qq: FakeQQ, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.say("A red picture."),
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}),
        Reply.say("Opened it."),
    )
    qq_gateway()
    qq.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg")
    wait_for(qq, f"users/{OWNER}", "A red picture.")
    ((mime, _),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"
    qq.user_says(OWNER, "open up that folder")
    wait_for(qq, f"users/{OWNER}", "chmod -R 777")
    qq.user_says(OWNER, "once")
    wait_for(qq, f"users/{OWNER}", "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
