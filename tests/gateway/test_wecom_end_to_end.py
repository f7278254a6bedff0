"""WeCom through a real ``hermes gateway run`` process: WeCom on loopback posts encrypted,
signed callbacks to the gateway's listener and takes replies through its send API."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_wecom.testing import FakeWeCom, Sent

from hermes_testkit import Reply
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, first_sent, user_texts, wait_until

OWNER = "ZhangSan"
STRANGER = "LiSi"


@pytest.fixture
def wecom() -> Iterator[FakeWeCom]:
    with FakeWeCom() as fake:
        yield fake


@pytest.fixture
def wecom_gateway(platform_process, wecom: FakeWeCom) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only WeCom, letting OWNER in; returns once the
    callback URL passes WeCom's check."""
    port = free_port()
    wecom.callback_url = f"http://127.0.0.1:{port}/wecom/callback"
    section = (
        f"  wecom:\n    corp_id: {wecom.corp_id}\n    agent_id: {wecom.agent_id}\n"
        f"    api_url: {wecom.url}\n    allowed_users: ['{OWNER}']\n"
    )
    dotenv = (
        f"WECOM_CALLBACK_CORP_SECRET={wecom.corp_secret}\nWECOM_CALLBACK_TOKEN={wecom.token}\n"
        f"WECOM_CALLBACK_ENCODING_AES_KEY={wecom.aes_key}\n"
    )

    def verified() -> bool:
        try:
            return wecom.verify_url() == (200, "echoed")
        except OSError:
            return False

    def start(write: bool = True) -> GatewayProcess:
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=dotenv,
            gateway=f"  http_port: {port}\n",
            model="  vision: true\n",
            ready=verified,
            write=write,
        )
        return gateway

    return start


def wait_for(wecom: FakeWeCom, user: str, text: str, timeout: float = 90) -> Sent:
    return first_sent(lambda: wecom.sent_to(user), text, timeout)


def test_a_message_redelivery_strangers_forgeries_and_a_long_chinese_reply(
    wecom_gateway, wecom: FakeWeCom, openai_server, hermes
):
    long_answer = "这是一个很长的中文回答，用来检查按字节切分。" * 140  # 3,080 characters
    openai_server.queue(Reply.say(long_answer))
    wecom_gateway()
    said = {
        "ToUserName": wecom.corp_id,
        "FromUserName": OWNER,
        "CreateTime": "1",
        "MsgType": "text",
        "Content": "forged",
        "MsgId": "42",
    }
    assert wecom.post(said, signature="0" * 40)[0] == 401
    assert wecom.post(said, token="a-guessed-token")[0] == 401
    assert wecom.post(said, aes_key="B" * 43)[0] == 400
    assert wecom.user_says(OWNER, "请详细介绍一下企业微信 🏢")[0] == 200
    assert wecom.deliver_again()[0] == 200  # WeCom's retry: answered once
    wait_until(lambda: "".join(m.text for m in wecom.sent_to(OWNER)) == long_answer, 30)
    parts = wecom.sent_to(OWNER)
    assert len(parts) >= 5 and all(len(m.text.encode()) <= 2048 for m in parts)
    wecom.user_says(STRANGER, "let me in")
    wait_for(wecom, STRANGER, "hermes pairing approve")
    time.sleep(1.0)
    assert [texts[-1] for texts in user_texts(openai_server)] == ["请详细介绍一下企业微信 🏢"]
    found = hermes("sessions", "search", "企业微信")
    assert found.code == 0 and "企业微信" in found.out


def test_a_restart_mid_turn_is_answered_once(wecom_gateway, wecom, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = wecom_gateway()
    wecom.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    wecom_gateway(write=False)
    wait_for(wecom, OWNER, "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    assert len([m for m in wecom.sent_to(OWNER) if "after the restart" in m.text]) == 1
    assert len(openai_server.requests) == 2


def test_an_approval_is_a_typed_choice_and_an_image_reaches_the_model(
    wecom_gateway, wecom: FakeWeCom, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.say("A red picture."),
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}),
        Reply.say("Opened it."),
    )
    wecom_gateway()
    wecom.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg", kind="image")
    wait_for(wecom, OWNER, "A red picture.")
    ((mime, _),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"
    wecom.user_says(OWNER, "open up that folder")
    wait_for(wecom, OWNER, "chmod -R 777")
    status, body = wecom.user_says(OWNER, "once")
    assert status == 200 and wecom.open_reply(body)["Content"]  # the outcome, encrypted
    wait_for(wecom, OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
