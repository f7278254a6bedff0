"""The QQ adapter against QQ on loopback (qq-botpy talks to it): groups, guild channels and
guild DMs, passive replies and their windows, a reply sent again, long Chinese replies,
files from QQ only, a dropped gateway, TLS that verifies, settings."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_qqbot.adapter import QQAdapter
from hermes_plugin_platform_qqbot.settings import QQSettings
from hermes_plugin_platform_qqbot.testing import CHANNEL, GROUP, GUILD, FakeQQ

from hermes_commons.sending import DUPLICATE_NOTE
from hermes_sdk.platform import ChatRef, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.media_files import photo_bytes
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually

ANN = "OPENIDANN0001"


@pytest.fixture
def fake() -> Iterator[FakeQQ]:
    with FakeQQ() as server:
        yield server


def adapter_for(fake: FakeQQ, home: Path) -> QQAdapter:
    config = {"api_url": fake.url, "token_url": fake.token_url}
    secrets = {"QQ_APP_ID": fake.app_id, "QQ_CLIENT_SECRET": fake.client_secret}
    return QQAdapter(PlatformContext(name="qqbot", home=str(home), config=config, secrets=secrets))


def running(adapter: QQAdapter) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    return adapter_running(adapter, RecordingHost(), adapter.ready.is_set)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_groups_channels_and_guild_dms_are_answered_where_they_came_from(
    fake: FakeQQ, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter) as host:
            await asyncio.to_thread(fake.user_says, ANN, "群里的问题 🚀", group=GROUP)
            await asyncio.to_thread(fake.user_says, "1001", "频道里的问题", channel=CHANNEL)
            await asyncio.to_thread(fake.user_says, "1001", "私信", dms=GUILD)
            await eventually(lambda: len(host.messages) == 3)
            chats = [(m.chat, m.text, m.user_id) for m in host.messages]
            assert chats == [
                (ChatRef("qqbot", f"group:{GROUP}", "group"), "群里的问题 🚀", ANN),
                (ChatRef("qqbot", f"channel:{CHANNEL}", "channel"), "频道里的问题", "1001"),
                (ChatRef("qqbot", f"dms:{GUILD}", "private"), "私信", "1001"),
            ]
            for message in host.messages:
                await adapter.send(message.chat, "收到 ✅", reply_to=message.message_id)
            for target in (f"groups/{GROUP}", f"channels/{CHANNEL}", f"dms/{GUILD}"):
                assert [m.text for m in fake.sent_to(target)] == ["收到 ✅"], target

    run(scenario)


def test_passive_replies_a_retry_and_a_long_chinese_reply(fake: FakeQQ, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter) as host:
            await asyncio.to_thread(fake.user_says, ANN, "写一篇长文")
            message = await eventually(lambda: host.messages and host.messages[0])
            text = "这是一个很长的中文回答。" * 250  # 3,000 characters
            first = await adapter.send(message.chat, text, reply_to=message.message_id)
            seen = fake.sent_to(f"users/{ANN}")
            assert len(first) == 2 and len({m.msg_seq for m in seen}) == 2
            assert "".join(m.text for m in seen) == text
            again = await adapter.send(
                message.chat, f"{DUPLICATE_NOTE}\n\n{text}", reply_to=message.message_id
            )
            assert len(again) == 2 and len(fake.sent_to(f"users/{ANN}")) == 2  # not twice
            fake.limit(1)
            with pytest.raises(NotSent) as limited:
                await adapter.send(message.chat, "too fast", reply_to=message.message_id)
            assert not limited.value.permanent
            await asyncio.to_thread(fake.age, message.message_id, 3700)
            adapter._asked.clear()  # no newer message to answer instead
            with pytest.raises(NotSent, match="within a while") as late:
                await adapter.send(message.chat, "an hour later", reply_to=message.message_id)
            assert late.value.permanent

    run(scenario)


def test_images_come_from_qq_only(fake: FakeQQ, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter) as host:
            await asyncio.to_thread(fake.user_sends_file, ANN, photo_bytes(), "p.jpg", "image/jpeg")
            await eventually(lambda: host.messages)
            assert host.messages[0].attachments[0].kind == "image"
            foreign = {
                "content_type": "image/png",
                "filename": "x.png",
                "url": "https://169.254.169.254/x.png",
            }
            await asyncio.to_thread(fake.user_says, ANN, "look", attachments=[foreign])
            await eventually(lambda: len(host.messages) == 2)
            assert not host.messages[1].attachments
            assert "not on QQ's own servers" in host.messages[1].text

    run(scenario)


def test_a_dropped_gateway_resumes_without_repeating(fake: FakeQQ, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter) as host:
            await asyncio.to_thread(fake.user_says, ANN, "one")
            await eventually(lambda: host.messages)
            await asyncio.to_thread(fake.drop_connections)
            await asyncio.to_thread(fake.user_says, ANN, "two")  # waits for the reconnect
            await eventually(lambda: len(host.messages) >= 2, timeout=30)
            await asyncio.sleep(0.5)
            assert [m.text for m in host.messages] == ["one", "two"]
            assert fake.connections >= 2

    run(scenario)


def test_botpy_connects_with_tls_that_verifies(fake: FakeQQ, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter):
            from botpy import gateway, http

            for module in (gateway, http):
                context: Any = module.SSLContext()
                assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname

    run(scenario)


def test_wrong_credentials_are_a_setting_to_fix(fake: FakeQQ, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        object.__setattr__(adapter.settings, "client_secret", "wrong")
        with pytest.raises(PlatformNotConfigured, match="QQ_CLIENT_SECRET"):
            await adapter.run(RecordingHost())
        await adapter.aclose()

    run(scenario)


@pytest.mark.parametrize(
    ("config", "secrets", "wanted"),
    [
        ({}, {"QQ_APP_ID": "1"}, "QQ_CLIENT_SECRET"),
        ({"api_url": "api.sgroup.qq.com"}, {}, "api_url"),
    ],
)
def test_settings_say_what_to_fix(
    config: dict[str, Any], secrets: dict[str, str], wanted: str, tmp_path: Path
) -> None:
    given = {"QQ_APP_ID": "1", "QQ_CLIENT_SECRET": "s", **secrets}
    if wanted == "QQ_CLIENT_SECRET":
        given.pop("QQ_CLIENT_SECRET")
    context = PlatformContext(name="qqbot", home=str(tmp_path), config=config, secrets=given)
    with pytest.raises(PlatformNotConfigured, match=wanted) as raised:
        QQSettings.from_context(context)
    assert "\n" not in str(raised.value)
    sandbox = {"QQ_APP_ID": "1", "QQ_CLIENT_SECRET": "s", "QQ_SANDBOX": "true"}
    context = PlatformContext(name="qqbot", home=str(tmp_path), secrets=sandbox)
    assert QQSettings.from_context(context).api_url == "https://sandbox.api.sgroup.qq.com"


def test_qqs_own_media_hosts_only(tmp_path: Path) -> None:
    context = PlatformContext(
        name="qqbot", home=str(tmp_path), secrets={"QQ_APP_ID": "1", "QQ_CLIENT_SECRET": "s"}
    )
    settings = QQSettings.from_context(context)
    for url in (
        "https://multimedia.nt.qq.com.cn/download?appid=1407&fileid=abc",
        "https://gchat.qpic.cn/qmeetpic/0/0-0-ABC/0",
    ):
        assert settings.takes_media(url), url
    for url in (
        "http://multimedia.nt.qq.com.cn/x",
        "https://bucket-1250000000.cos.ap-guangzhou.myqcloud.com/x",
        "https://qq.com.evil.example/x",
        "https://169.254.169.254/latest",
    ):
        assert not settings.takes_media(url), url


def test_five_replies_to_a_message_then_the_newer_one_links_shown_not_linked(
    fake: FakeQQ, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter) as host:
            first = await asyncio.to_thread(fake.user_says, ANN, "one")
            await eventually(lambda: host.messages)
            chat = host.messages[0].chat
            for n in range(5):
                await adapter.send(chat, f"reply {n}", reply_to=first)
            with pytest.raises(NotSent, match="within a while") as spent:
                await adapter.send(chat, "a sixth", reply_to=first)
            assert spent.value.permanent
            second = await asyncio.to_thread(fake.user_says, ANN, "two")
            await eventually(lambda: len(host.messages) == 2)
            await adapter.send(chat, "a sixth", reply_to=first)  # on the newer message
            assert fake.sent_to(f"users/{ANN}")[-1].msg_id == second
            await adapter.send(chat, "see https://example.org/docs")
            assert fake.sent_to(f"users/{ANN}")[-1].text == "see https[:]//example[.]org/docs"

    run(scenario)


def test_after_a_restart_a_part_sent_again_is_not_posted_twice(
    fake: FakeQQ, tmp_path: Path
) -> None:
    async def scenario() -> None:
        first = adapter_for(fake, tmp_path)
        async with running(first) as host:
            said = await asyncio.to_thread(fake.user_says, ANN, "question")
            await eventually(lambda: host.messages)
            chat = host.messages[0].chat
            await first.send(chat, "the answer", reply_to=said)
        second = adapter_for(fake, tmp_path)  # a new process: nothing remembered
        async with running(second):
            await second.send(chat, f"{DUPLICATE_NOTE}\n\nthe answer", reply_to=said)
        assert [m.text for m in fake.sent_to(f"users/{ANN}")] == ["the answer"]

    run(scenario)


def test_a_stopped_platform_leaves_no_connection_and_a_ban_stops_it(
    fake: FakeQQ, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path)):
            assert fake.open_sockets == 1
        await eventually(lambda: fake.open_sockets == 0)
        fake.close_identify_with = 4915
        adapter = adapter_for(fake, tmp_path)
        with pytest.raises(PlatformNotConfigured, match="banned"):
            await asyncio.wait_for(adapter.run(RecordingHost()), 30)
        await adapter.aclose()

    run(scenario)


def test_a_silent_connection_ends_the_run(
    fake: FakeQQ, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugin_platform_qqbot import gateway_client

    monkeypatch.setattr(gateway_client, "SILENT_SECONDS", 1.5)

    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        with pytest.raises(ConnectionError, match="nothing from QQ"):
            await asyncio.wait_for(adapter.run(RecordingHost()), 30)
        await adapter.aclose()

    run(scenario)


def test_the_same_words_as_a_new_reply_are_posted(fake: FakeQQ, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter) as host:
            said = await asyncio.to_thread(fake.user_says, ANN, "ping")
            await eventually(lambda: host.messages)
            chat = host.messages[0].chat
            await adapter.send(chat, "OK", reply_to=said)
            await adapter.send(chat, "OK", reply_to=said)  # a second answer, not a retry
            assert [m.text for m in fake.sent_to(f"users/{ANN}")] == ["OK", "OK"]

    run(scenario)
