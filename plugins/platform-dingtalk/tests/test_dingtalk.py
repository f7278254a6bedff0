"""The DingTalk adapter against DingTalk on loopback (dingtalk-stream talks to it): groups
and mentions, session webhooks and the robot's API, typed approvals, voice and rich text,
refusals, reconnects, a message that cannot be taken, settings."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_dingtalk.adapter import DingTalkAdapter
from hermes_plugin_platform_dingtalk.settings import DingTalkSettings
from hermes_plugin_platform_dingtalk.testing import GROUP, FakeDingTalk

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually


@pytest.fixture
def fake() -> Any:
    with FakeDingTalk() as server:
        yield server


def adapter_for(fake: FakeDingTalk, home: Path, **config: Any) -> DingTalkAdapter:
    secrets = {"DINGTALK_CLIENT_ID": fake.client_id, "DINGTALK_CLIENT_SECRET": fake.client_secret}
    given = {"api_url": fake.url, **config}
    return DingTalkAdapter(
        PlatformContext(name="dingtalk", home=str(home), config=given, secrets=secrets)
    )


def running(
    adapter: DingTalkAdapter, fake: FakeDingTalk, host: RecordingHost | None = None
) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    return adapter_running(adapter, host or RecordingHost(), lambda: fake.connections > 0)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_a_group_answers_a_mention_and_replies_through_the_session_webhook(
    fake: FakeDingTalk, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            assert [s["topic"] for s in fake.subscriptions] == ["/v1.0/im/bot/messages/get"]
            await asyncio.to_thread(fake.user_says, "ann", "闲聊", group=GROUP, mention=False)
            said = "帮我总结一下 📋 (mixed: Ελληνικά, русский)"
            assert await asyncio.to_thread(fake.user_says, "ann", said, group=GROUP) == 200
            await eventually(lambda: host.messages)
            await asyncio.sleep(0.3)
            (message,) = host.messages
            assert (message.text, message.chat) == (said, ChatRef("dingtalk", GROUP, "group"))
            await adapter.send(message.chat, "好的 ✅")
            (sent,) = fake.sent_to(GROUP)
            assert (sent.via, sent.text) == ("webhook", "好的 ✅")

    run(scenario)


def test_without_a_live_webhook_the_robot_api_sends(fake: FakeDingTalk, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            await asyncio.to_thread(fake.user_says, "ann", "hi", session_minutes=2)
            message = await eventually(lambda: host.messages and host.messages[0])
            await adapter.send(message.chat, "via the API")  # two minutes left: not used
            await adapter.send(ChatRef("dingtalk", GROUP, "group"), "to the group")
            assert [(m.via, m.text) for m in fake.sent] == [
                ("api", "via the API"),
                ("api", "to the group"),
            ]
            fake.limit(1)
            with pytest.raises(NotSent) as limited:
                await adapter.send(message.chat, "too fast")
            assert not limited.value.permanent
            with pytest.raises(NotSent) as nowhere:
                await adapter.send(ChatRef("dingtalk", "cidElsewhere==", "group"), "hello?")
            assert nowhere.value.permanent
            grants = fake.token_grants
            fake.revoke_tokens()
            assert await adapter.send(message.chat, "after the token was revoked")
            assert fake.token_grants == grants + 1

    run(scenario)


def test_someone_outside_the_organisation_is_answered_by_webhook_only(
    fake: FakeDingTalk, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            outsider = fake.person("guest", in_organisation=False)
            await asyncio.to_thread(fake.user_says, "guest", "hello")
            message = await eventually(lambda: host.messages and host.messages[0])
            assert message.user_id == outsider.dingtalk_id
            assert await adapter.send(message.chat, "hello back")
            adapter._webhooks.clear()  # as after a restart
            with pytest.raises(NotSent, match="outside") as refused:
                await adapter.send(message.chat, "later")
            assert refused.value.permanent

    run(scenario)


def test_voice_rich_text_and_a_long_chinese_reply(fake: FakeDingTalk, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            voice = {"downloadCode": "x", "duration": 3, "recognition": "明天开会吗"}
            await asyncio.to_thread(fake.user_says, "ann", kind="audio", content=voice)
            await eventually(lambda: host.messages)
            assert host.messages[0].text == "明天开会吗"
            rich = {"richText": [{"text": "看看这个"}, {"type": "picture", "downloadCode": "nope"}]}
            await asyncio.to_thread(fake.user_says, "ann", kind="richText", content=rich)
            await eventually(lambda: len(host.messages) == 2)
            assert host.messages[1].text.startswith("看看这个")
            assert "could not be downloaded" in host.messages[1].text
            longer = "汉字" * 2500 + "👍🏽"
            parts = await adapter.send(host.messages[0].chat, longer)
            seen = [m.text for m in fake.sent_to("ann")]
            assert len(parts) == 2 and all(len(t) <= adapter.max_message_chars for t in seen)
            assert "".join(seen) == longer

    run(scenario)


def test_an_approval_is_typed_in_a_group_with_the_mention(
    fake: FakeDingTalk, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            chat = ChatRef("dingtalk", GROUP, "group")
            choices = [Choice("once", "Allow"), Choice("deny", "Deny")]
            await adapter.ask(chat, "Run `rm -rf build`?", choices, "req1")
            assert "**once**" in fake.sent_to(GROUP)[0].text
            assert await asyncio.to_thread(fake.user_says, "ann", "once", group=GROUP) == 200
            await eventually(lambda: host.presses)
            assert [(p.user_id, p.choice, p.chat) for p in host.presses] == [("ann", "once", chat)]
            assert host.messages == []

    run(scenario)


def test_a_home_chat_that_is_a_group_and_a_webhook_too_fast(
    fake: FakeDingTalk, tmp_path: Path
) -> None:
    """A scheduled job's home chat comes as private: a conversation id is still a group's.
    A session webhook saying "too fast" is kept, and that part goes by the robot API."""

    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            await adapter.send(ChatRef("dingtalk", GROUP, "private"), "每日提醒")
            assert [(m.chat_id, m.via) for m in fake.sent] == [(GROUP, "api")]
            await asyncio.to_thread(fake.user_says, "ann", "hi")
            message = await eventually(lambda: host.messages and host.messages[0])
            fake.limit(1)
            await adapter.send(message.chat, "too fast for the webhook")
            assert (fake.sent[-1].via, fake.sent[-1].text) == ("api", "too fast for the webhook")
            await adapter.send(message.chat, "now")
            assert fake.sent[-1].via == "webhook"  # kept

    run(scenario)


def test_a_message_that_cannot_be_taken_is_acknowledged_as_failed_and_logged(
    fake: FakeDingTalk, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(RecordingHost):
        async def receive(self, message: Any) -> None:
            raise OSError("the disk is full")

    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake, Broken()):
            with caplog.at_level("INFO"):
                assert await asyncio.to_thread(fake.ping) == 200
                assert await asyncio.to_thread(fake.user_says, "ann", "hello") == 500

    run(scenario)
    assert any("could not be taken" in r.getMessage() for r in caplog.records)
    assert not any("unknown message topic" in r.getMessage() for r in caplog.records)


def test_the_stream_comes_back_after_a_disconnect(fake: FakeDingTalk, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake) as host:
            await asyncio.to_thread(fake.disconnect)
            await eventually(lambda: fake.connections >= 2, timeout=20)
            await asyncio.to_thread(fake.user_says, "ann", "still there?")
            await eventually(lambda: host.messages)

    run(scenario)


def test_wrong_credentials_are_a_setting_to_fix(fake: FakeDingTalk, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        object.__setattr__(adapter.settings, "client_secret", "wrong")
        with pytest.raises(PlatformNotConfigured, match="DINGTALK_CLIENT_SECRET"):
            await adapter.run(RecordingHost())
        await adapter.aclose()

    run(scenario)


def test_a_webhook_elsewhere_than_dingtalk_is_not_followed(tmp_path: Path) -> None:
    context = PlatformContext(
        name="dingtalk",
        home=str(tmp_path),
        secrets={"DINGTALK_CLIENT_ID": "dingx", "DINGTALK_CLIENT_SECRET": "s"},
    )
    settings = DingTalkSettings.from_context(context)
    assert settings.takes_webhook("https://oapi.dingtalk.com/robot/sendBySession?session=x")
    for url in (
        "http://oapi.dingtalk.com/robot/sendBySession",
        "https://dingtalk.com.evil.example/robot",
        "https://169.254.169.254/latest",
    ):
        assert not settings.takes_webhook(url), url


@pytest.mark.parametrize(
    ("config", "secrets", "wanted"),
    [
        ({}, {"DINGTALK_CLIENT_ID": "dingx"}, "DINGTALK_CLIENT_SECRET"),
        ({"api_url": "api.dingtalk.com"}, {}, "api_url"),
    ],
)
def test_settings_say_what_to_fix(
    config: dict[str, Any], secrets: dict[str, str], wanted: str, tmp_path: Path
) -> None:
    given = {"DINGTALK_CLIENT_ID": "dingx", "DINGTALK_CLIENT_SECRET": "s", **secrets}
    if wanted == "DINGTALK_CLIENT_SECRET":
        given.pop("DINGTALK_CLIENT_SECRET")
    context = PlatformContext(name="dingtalk", home=str(tmp_path), config=config, secrets=given)
    with pytest.raises(PlatformNotConfigured, match=wanted) as raised:
        DingTalkSettings.from_context(context)
    assert "\n" not in str(raised.value)


def test_the_official_client_replies_through_the_fakes_session_webhook(
    fake: FakeDingTalk,
) -> None:
    """dingtalk-stream's own ChatbotHandler.reply_text (as a user's robot would answer)
    posts to the session webhook the fake gave: the fake speaks it as the SDK does."""
    import dingtalk_stream

    captured: list[Any] = []
    fake.person("ann")

    async def scenario() -> None:
        class Echo(dingtalk_stream.ChatbotHandler):  # type: ignore[misc]
            async def process(self, callback: Any) -> tuple[int, str]:
                incoming = dingtalk_stream.ChatbotMessage.from_dict(callback.data)
                captured.append(incoming)
                await asyncio.to_thread(self.reply_text, "回声", incoming)
                return dingtalk_stream.AckMessage.STATUS_OK, "OK"

        dingtalk_stream.DingTalkStreamClient.OPEN_CONNECTION_API = (
            f"{fake.url}/v1.0/gateway/connections/open"
        )
        client = dingtalk_stream.DingTalkStreamClient(
            dingtalk_stream.Credential(fake.client_id, fake.client_secret)
        )
        client.register_callback_handler(dingtalk_stream.ChatbotMessage.TOPIC, Echo())
        task = asyncio.ensure_future(client.start())
        await eventually(lambda: fake.connections > 0, timeout=20)
        await asyncio.to_thread(fake.user_says, "ann", "你好")
        await eventually(lambda: fake.sent_to("ann"))
        for _ in range(10):  # start() catches a cancellation and sleeps: cancel that too
            task.cancel()
            finished, _ = await asyncio.wait({task}, timeout=0.5)
            if finished:
                break

    run(scenario)
    assert captured[0].text.content == "你好"
    assert [m.text for m in fake.sent_to("ann")] == ["回声"]
