"""Feishu through a real ``hermes gateway run`` process: Feishu on loopback pushes events
over the long connection (lark-oapi's client in the gateway) or posts signed, encrypted
callbacks to the gateway's listener, and takes replies through its IM API."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_feishu.testing import GROUP, FakeFeishu, Sent

from hermes_testkit import Reply
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, first_sent, user_texts, wait_until

OWNER = "ou_owner"
STRANGER = "ou_stranger"
KEY = "the-encrypt-key"


@pytest.fixture(params=["websocket", "webhook"])
def feishu(request: pytest.FixtureRequest) -> Iterator[FakeFeishu]:
    key = KEY if request.param == "webhook" else ""
    with FakeFeishu(mode=request.param, encrypt_key=key) as fake:
        yield fake


@pytest.fixture
def feishu_gateway(platform_process, feishu: FakeFeishu) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only Feishu, letting OWNER in; returns once the
    long connection is up (or the callback path answers on the gateway's listener)."""
    port = free_port()
    feishu.callback_url = f"http://127.0.0.1:{port}/feishu/webhook"
    section = (
        f"  feishu:\n    domain: {feishu.url}\n    connection_mode: {feishu.mode}\n"
        f"    allowed_users: ['{OWNER}']\n"
    )
    dotenv = (
        f"FEISHU_APP_ID={feishu.app_id}\nFEISHU_APP_SECRET={feishu.app_secret}\n"
        f"FEISHU_VERIFICATION_TOKEN={feishu.verification_token}\n"
    )
    if feishu.encrypt_key:
        dotenv += f"FEISHU_ENCRYPT_KEY={feishu.encrypt_key}\n"

    def ready() -> bool:
        if feishu.mode == "websocket":
            return feishu.connections > 0 and bool(feishu._sockets)
        import httpx

        try:
            return httpx.get(feishu.callback_url, timeout=1).status_code == 405
        except httpx.HTTPError:
            return False

    def start(write: bool = True) -> GatewayProcess:
        connections = feishu.connections
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=dotenv,
            gateway=f"  http_port: {port}\n",
            model="  vision: true\n",
            ready=lambda: (
                ready() and (feishu.mode == "webhook" or feishu.connections > connections)
            ),
            write=write,
        )
        return gateway

    return start


def wait_for(feishu: FakeFeishu, chat: str, text: str, timeout: float = 90) -> Sent:
    return first_sent(lambda: feishu.sent_to(chat), text, timeout)


def test_a_dm_a_mention_in_a_group_strangers_and_redelivery(
    feishu_gateway, feishu: FakeFeishu, openai_server, hermes
):
    openai_server.queue(Reply.say("你好！这是私聊的回答。"), Reply.say("群里的回答 👍"))
    feishu_gateway()
    assert feishu.user_says(OWNER, "你好，请总结今天的会议 📋")[0] in (0, 200)
    wait_for(feishu, feishu.dm(OWNER), "私聊的回答")
    assert feishu.deliver_again()[0] in (0, 200)  # the same message again: answered once
    feishu.user_says(OWNER, "nobody mentioned the bot", chat=GROUP)
    feishu.user_says(OWNER, "what did we decide?", chat=GROUP, mention=True)
    answer = wait_for(feishu, GROUP, "群里的回答")
    assert answer.reply_to  # in reply to the mention
    feishu.user_says(STRANGER, "let me in")
    wait_for(feishu, feishu.dm(STRANGER), "hermes pairing approve")
    feishu.user_says(STRANGER, "run something", chat=GROUP, mention=True)
    time.sleep(1.5)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "你好，请总结今天的会议 📋",
        "what did we decide?",
    ]
    assert len(feishu.sent_to(feishu.dm(OWNER))) == 1
    assert len(feishu.sent_to(GROUP)) == 1
    found = hermes("sessions", "search", "会议")
    assert found.code == 0 and "会议" in found.out


@pytest.mark.parametrize("feishu", ["webhook"], indirect=True)
def test_forged_callbacks_cost_nothing(feishu_gateway, feishu: FakeFeishu, openai_server):
    feishu_gateway()
    said = feishu._event("im.message.receive_v1", {})
    for how in ({"signature": "0" * 64}, {"token": "guessed"}, {"garbled": True}):
        status, _ = feishu.post(said, **how)
        assert status in (400, 401), how
    assert feishu.verify_url("c-1") == (200, {"challenge": "c-1"})
    time.sleep(1.0)
    assert openai_server.requests == []


def test_a_restart_mid_turn_is_answered_once(feishu_gateway, feishu: FakeFeishu, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = feishu_gateway()
    feishu.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    feishu_gateway(write=False)
    wait_for(feishu, feishu.dm(OWNER), "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    dm = feishu.sent_to(feishu.dm(OWNER))
    assert len([m for m in dm if "after the restart" in m.text]) == 1
    assert len(openai_server.requests) == 2


def test_an_approval_is_a_card_button_and_a_photo_reaches_the_model(
    feishu_gateway, feishu: FakeFeishu, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.say("A red picture."),
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}),
        Reply.say("Opened it."),
    )
    feishu_gateway()
    feishu.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg", image=True)
    wait_for(feishu, feishu.dm(OWNER), "A red picture.")
    ((mime, _),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"
    feishu.user_says(OWNER, "open up that folder")
    card = wait_for(feishu, feishu.dm(OWNER), "chmod -R 777")
    assert card.buttons
    status, answer = feishu.press(OWNER, card, "once")
    assert status in (0, 200) and answer["card"]["type"] == "raw"
    wait_for(feishu, feishu.dm(OWNER), "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert not card.buttons
