"""The WeCom adapter against WeCom on loopback: callbacks forged every way refused before
anything is read, the URL check, a typed approval answered with an encrypted reply, replies
cut by bytes, the API's refusals, settings; and wechatpy and the fake agreeing on the
crypto both ways."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_wecom.adapter import WeComAdapter
from hermes_plugin_platform_wecom.settings import WeComSettings
from hermes_plugin_platform_wecom.testing import FakeWeCom

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually
from hermes_testkit.services import free_port

ANN = "ZhangSan"


@pytest.fixture
def fake() -> Iterator[FakeWeCom]:
    with FakeWeCom() as server:
        server.callback_url = f"http://127.0.0.1:{free_port()}/wecom/callback"
        yield server


def running(
    adapter: WeComAdapter, fake: FakeWeCom, host: RecordingHost | None = None
) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    port = int(fake.callback_url.split(":")[2].split("/")[0])
    host = host or RecordingHost(port)
    return adapter_running(adapter, host, lambda: host.listening)


def adapter_for(fake: FakeWeCom, home: Path) -> WeComAdapter:
    return WeComAdapter(fake.context(str(home)))


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_forged_callbacks_are_refused_before_anything_is_read(
    fake: FakeWeCom, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake) as host:
            assert await asyncio.to_thread(fake.verify_url) == (200, "echoed")
            status, _ = await asyncio.to_thread(fake.verify_url, token="guessed")
            assert status == 401
            said = {
                "ToUserName": fake.corp_id,
                "FromUserName": ANN,
                "CreateTime": "1",
                "MsgType": "text",
                "Content": "forged",
                "MsgId": "1",
            }
            other_key = "A" * 43
            for why, how in {
                "a wrong signature": {"signature": "0" * 40},
                "a wrong token": {"token": "guessed"},
                "another key": {"aes_key": other_key},
                "another corp": {"corp_id": "wwsomeoneelse"},
            }.items():
                status, _ = await asyncio.to_thread(lambda how=how: fake.post(said, **how))
                assert status in (400, 401), why
            assert await asyncio.to_thread(fake.user_says, ANN, "真的消息") == (200, "")
            await eventually(lambda: host.messages)
            assert [m.text for m in host.messages] == ["真的消息"]

    run(scenario)


def test_a_typed_choice_is_answered_in_the_callbacks_encrypted_reply(
    fake: FakeWeCom, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            chat = ChatRef("wecom", ANN, "private")
            await adapter.ask(
                chat,
                "Run `rm -rf build`?",
                [Choice("once", "Allow"), Choice("deny", "Deny")],
                "req1",
            )
            assert "one of: once, deny" in fake.sent_to(ANN)[0].text  # no asterisks in text
            status, body = await asyncio.to_thread(fake.user_says, ANN, "once")
            assert status == 200
            reply = fake.open_reply(body)  # signature checked, decrypted
            again, body_again = await asyncio.to_thread(fake.deliver_again)  # WeCom's retry
            assert again == 200 and fake.open_reply(body_again)["Content"] == reply["Content"]
            assert (reply["ToUserName"], reply["MsgType"], reply["Content"]) == (
                ANN,
                "text",
                "noted",
            )
            assert [(p.request_id, p.choice) for p in host.presses] == [("req1", "once")]
            assert host.messages == []

    run(scenario)


def test_replies_are_cut_by_bytes_and_refusals_say_what_to_do(
    fake: FakeWeCom, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake):
            chat = ChatRef("wecom", ANN, "private")
            text = "企业微信的消息最多两千零四十八个字节。" * 158  # 3,002 characters
            parts = await adapter.send(chat, text)
            seen = [m.text for m in fake.sent_to(ANN)]
            assert len(parts) == len(seen) == 5
            assert all(len(t.encode()) <= 2048 for t in seen) and "".join(seen) == text
            fake.limit(1)
            with pytest.raises(NotSent) as limited:
                await adapter.send(chat, "too fast")
            assert not limited.value.permanent
            grants = fake.token_grants
            fake.revoke_tokens()
            assert await adapter.send(chat, "after the token was revoked")
            assert fake.token_grants == grants + 1
            fake.members = {"LiSi"}
            with pytest.raises(NotSent, match="visible range") as outside:
                await adapter.send(chat, "to someone the app cannot see")
            assert outside.value.permanent
            fake.members = set()
            fake.untrusted_ip = True
            with pytest.raises(NotSent, match="Trusted IP") as untrusted:
                await adapter.send(chat, "from an untrusted server")
            assert untrusted.value.permanent

    run(scenario)


def test_voice_and_events(fake: FakeWeCom, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake) as host:
            await asyncio.to_thread(fake.user_says, ANN, MsgType="event", Event="enter_agent")
            amr = b"#!AMR\n" + bytes(64)
            await asyncio.to_thread(
                fake.user_sends_file, ANN, amr, "voice.amr", "audio/amr", kind="voice"
            )
            await eventually(lambda: host.messages)
            (message,) = host.messages
            assert message.attachments and message.attachments[0].kind == "audio"

    run(scenario)


def test_wechatpy_and_the_fake_agree_on_the_crypto(fake: FakeWeCom) -> None:
    from wechatpy.enterprise.crypto import WeChatCrypto

    crypto = WeChatCrypto(fake.token, fake.aes_key, fake.corp_id)
    encrypted = fake.encrypt("<xml><Content><![CDATA[你好]]></Content></xml>")
    signature = fake.sign("1700000000", "n0nce", encrypted)
    body = f"<xml><Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>"
    assert "你好" in crypto.decrypt_message(body, signature, "1700000000", "n0nce")
    reply = crypto.encrypt_message("<xml><Content>回复</Content></xml>", "n0nce", "1700000000")
    assert "回复" in fake.decrypt(reply.split("<Encrypt><![CDATA[")[1].split("]]>")[0])


def test_the_app_refused_is_a_setting_to_fix(fake: FakeWeCom, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        object.__setattr__(adapter.settings, "corp_secret", "wrong")
        with pytest.raises(PlatformNotConfigured, match="WECOM_CALLBACK_CORP_SECRET"):
            await adapter.run(RecordingHost())
        await adapter.aclose()

    run(scenario)


@pytest.mark.parametrize(
    ("config", "secrets", "wanted"),
    [
        ({"agent_id": ""}, {}, "agent_id"),
        ({"agent_id": "app"}, {}, "AgentId"),
        ({}, {"WECOM_CALLBACK_ENCODING_AES_KEY": "short"}, "43 characters"),
        ({"message_format": "html"}, {}, "message_format"),
        ({"callback_path": "/"}, {}, "callback_path"),
    ],
)
def test_settings_say_what_to_fix(
    config: dict[str, Any], secrets: dict[str, str], wanted: str, tmp_path: Path
) -> None:
    given_config = {"corp_id": "ww1", "agent_id": "1000002", **config}
    given = {
        "WECOM_CALLBACK_CORP_SECRET": "s",
        "WECOM_CALLBACK_TOKEN": "t",
        "WECOM_CALLBACK_ENCODING_AES_KEY": "a" * 43,
        **secrets,
    }
    context = PlatformContext(name="wecom", home=str(tmp_path), config=given_config, secrets=given)
    with pytest.raises(PlatformNotConfigured, match=wanted) as raised:
        WeComSettings.from_context(context)
    assert "\n" not in str(raised.value)


def test_a_callback_posted_again_later_or_for_another_app_is_refused(
    fake: FakeWeCom, tmp_path: Path
) -> None:
    import time

    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake) as host:
            said = {
                "ToUserName": fake.corp_id,
                "FromUserName": ANN,
                "CreateTime": "1",
                "MsgType": "text",
                "Content": "recorded",
                "MsgId": "99",
            }
            old = str(int(time.time()) - 3600)
            assert (await asyncio.to_thread(lambda: fake.post(said, stamp=old)))[0] == 401
            other_app = {**said, "AgentID": "1000099", "MsgId": "100"}
            assert (await asyncio.to_thread(fake.post, other_app))[0] == 400
            await asyncio.sleep(0.2)
            assert host.messages == []

    run(scenario)


def test_a_file_keeps_its_chinese_name_and_an_odd_image_goes_as_a_file(
    fake: FakeWeCom, tmp_path: Path
) -> None:
    from hermes_sdk.media import MediaCache

    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake):
            chat = ChatRef("wecom", ANN, "private")
            cache = MediaCache.of_home(tmp_path)
            report = cache.ingest(b"%PDF-1.4\n% report\n", name="季度报告.pdf")
            await adapter.send_file(chat, report)
            import io

            from PIL import Image

            buffer = io.BytesIO()
            Image.new("RGB", (8, 8), "red").save(buffer, "WEBP")
            webp = cache.ingest(buffer.getvalue(), name="picture.webp")
            await adapter.send_file(chat, webp)
            assert [
                (m.kind, name)
                for m, (name, _) in zip(fake.sent_to(ANN), fake.files_to(ANN), strict=True)
            ] == [
                ("file", "季度报告.pdf"),
                ("file", "picture.webp"),
            ]

    run(scenario)


def test_replies_to_one_person_keep_to_thirty_a_minute(
    fake: FakeWeCom, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugin_platform_wecom import adapter as module

    monkeypatch.setattr(module, "PER_PERSON_MINUTE", 2)
    waited: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        waited.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(module.asyncio, "sleep", sleep)

    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake):
            chat = ChatRef("wecom", ANN, "private")
            for n in range(3):
                await adapter.send(chat, f"part {n}")
            assert len(fake.sent_to(ANN)) == 3
            assert len([w for w in waited if w > 50]) == 1  # the third waited its minute

    run(scenario)


def test_a_body_that_comes_in_pieces_is_read_whole(fake: FakeWeCom, tmp_path: Path) -> None:
    """A long message's callback arrives in more than one TCP segment: all of it is read."""
    import time
    from urllib.parse import urlencode

    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake) as host:
            text = "很长的消息" * 600
            inner = (
                f"<xml><ToUserName><![CDATA[{fake.corp_id}]]></ToUserName>"
                f"<FromUserName><![CDATA[{ANN}]]></FromUserName><CreateTime>1</CreateTime>"
                f"<MsgType><![CDATA[text]]></MsgType><Content><![CDATA[{text}]]></Content>"
                f"<MsgId>555</MsgId><AgentID>{fake.agent_id}</AgentID></xml>"
            )
            encrypted = fake.encrypt(inner)
            stamp, nonce = str(int(time.time())), "n0nce"
            query = urlencode(
                {
                    "msg_signature": fake.sign(stamp, nonce, encrypted),
                    "timestamp": stamp,
                    "nonce": nonce,
                }
            )
            body = f"<xml><Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>".encode()
            port = int(fake.callback_url.split(":")[2].split("/")[0])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            head = (
                f"POST /wecom/callback?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode()
            writer.write(head + body[:1000])
            await writer.drain()
            await asyncio.sleep(0.2)
            writer.write(body[1000:])
            await writer.drain()
            status_line = await reader.readline()
            writer.close()
            assert b" 200 " in status_line
            await eventually(lambda: host.messages)
            assert host.messages[0].text == text

    run(scenario)
