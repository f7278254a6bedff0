"""The Feishu adapter against Feishu on loopback (lark-oapi's own clients talk to it):
callbacks forged every way refused before anything is read, groups and mentions, topics,
cards, idempotent replies, the API's refusals, a dropped long connection, settings."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_feishu.adapter import FeishuAdapter
from hermes_plugin_platform_feishu.settings import FeishuSettings
from hermes_plugin_platform_feishu.testing import GROUP, FakeFeishu

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually
from hermes_testkit.services import free_port

ANN = "ou_ann"
BOB = "ou_bob"
KEY = "encrypt-key-from-the-console"


@pytest.fixture(params=["websocket", "webhook"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeFeishu]:
    key = KEY if request.param == "webhook" else ""
    with FakeFeishu(mode=request.param, encrypt_key=key) as server:
        server.callback_url = f"http://127.0.0.1:{free_port()}/feishu/webhook"
        yield server


@pytest.fixture
def callbacks() -> Iterator[FakeFeishu]:
    with FakeFeishu(mode="webhook", encrypt_key=KEY) as server:
        server.callback_url = f"http://127.0.0.1:{free_port()}/feishu/webhook"
        yield server


def adapter_for(fake: FakeFeishu, home: Path, **config: Any) -> FeishuAdapter:
    secrets = {
        "FEISHU_APP_ID": fake.app_id,
        "FEISHU_APP_SECRET": fake.app_secret,
        "FEISHU_VERIFICATION_TOKEN": fake.verification_token,
    }
    if fake.encrypt_key:
        secrets["FEISHU_ENCRYPT_KEY"] = fake.encrypt_key
    given = {"domain": fake.url, "connection_mode": fake.mode, **config}
    return FeishuAdapter(
        PlatformContext(name="feishu", home=str(home), config=given, secrets=secrets)
    )


def port_of(fake: FakeFeishu) -> int:
    """The port of the listener the fake posts callbacks to (0: any, for none)."""
    return int(fake.callback_url.split(":")[2].split("/")[0]) if fake.callback_url else 0


def running(
    adapter: FeishuAdapter, fake: FakeFeishu, host: RecordingHost | None = None
) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    host = host or RecordingHost(port_of(fake))
    # lark-oapi takes seconds to import (longer on a busy machine), before anything.
    if fake.mode == "webhook":
        return adapter_running(adapter, host, lambda: host.listening, timeout=40)
    return adapter_running(adapter, host, lambda: fake.connections > 0, timeout=40)


class AskerOnly(RecordingHost):
    """A gateway whose questions only ``asker``'s press answers."""

    def __init__(self, port: int, asker: str) -> None:
        super().__init__(port)
        self.asker = asker

    def question_open(self, request_id: str) -> bool:
        return not any(p.request_id == request_id and p.user_id == self.asker for p in self.presses)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_forged_callbacks_are_refused_before_anything_is_read(
    callbacks: FakeFeishu, tmp_path: Path
) -> None:
    fake = callbacks

    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path), fake) as host:
            said = fake._event("im.message.receive_v1", {})
            forged: dict[str, dict[str, Any]] = {
                "a wrong signature": {"signature": "0" * 64},
                "a wrong verification token": {"token": "guessed"},
                "another encrypt key": {"key": "someone-elses-key"},
                "ciphertext that is not": {"garbled": True},
                "no encryption": {"key": ""},
            }
            for why, how in forged.items():
                status, _ = await asyncio.to_thread(fake.post, said, **how)
                assert status in (400, 401), why
            status, _ = await asyncio.to_thread(fake.user_says, ANN, "the real one")
            assert status == 200
            await eventually(lambda: host.messages)
            assert [m.text for m in host.messages] == ["the real one"]
            status, answer = await asyncio.to_thread(fake.verify_url, "a-challenge")
            assert (status, answer) == (200, {"challenge": "a-challenge"})
            forged_challenge = {"type": "url_verification", "challenge": "x", "token": "guessed"}
            assert (await asyncio.to_thread(fake.post, forged_challenge))[0] == 401

    run(scenario)


def test_a_group_answers_a_mention_in_its_topic_and_ignores_the_rest(
    fake: FakeFeishu, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            await asyncio.to_thread(fake.user_says, ANN, "chatting among ourselves", chat=GROUP)
            said = "你好 Hermes，总结一下 🚀 (mixed scripts, Ελληνικά)"
            await asyncio.to_thread(
                fake.user_says, ANN, said, chat=GROUP, mention=True, thread="omt_1"
            )
            await eventually(lambda: host.messages)
            await asyncio.sleep(0.3)
            (message,) = host.messages
            assert message.text == said
            assert message.chat == ChatRef("feishu", GROUP, "group", "omt_1")
            await adapter.send(message.chat, "好的 ✅", reply_to=message.message_id)
            (sent,) = fake.sent_to(GROUP)
            assert (sent.reply_to, sent.in_thread, sent.text) == (
                message.message_id,
                True,
                "好的 ✅",
            )

    run(scenario)


def test_require_mention_off_hands_over_every_group_message(
    fake: FakeFeishu, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running(adapter_for(fake, tmp_path, require_mention=False), fake) as host:
            await asyncio.to_thread(fake.user_says, ANN, "no mention here", chat=GROUP)
            await eventually(lambda: host.messages)
            assert host.messages[0].addressed is False

    run(scenario)


def test_a_reply_sent_again_is_the_same_message_and_a_long_chinese_one_is_split(
    fake: FakeFeishu, tmp_path: Path
) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            await asyncio.to_thread(fake.user_says, ANN, "hi")
            message = await eventually(lambda: host.messages and host.messages[0])
            text = "这是一个很长的回答。" * 300 + "结束 👍🏽"
            first = await adapter.send(message.chat, text, reply_to=message.message_id)
            again = await adapter.send(message.chat, text, reply_to=message.message_id)
            assert first == again and len(first) == 1  # 3,004 characters: one card
            longer = "汉字" * 2500  # 5,000 characters, no space or punctuation to cut at
            parts = await adapter.send(message.chat, longer)
            seen = [fake.sent[i].text for i in parts]
            assert len(parts) == 2 and all(len(t) <= adapter.max_message_chars for t in seen)
            assert "".join(seen) == longer
            assert fake.sent[first[0]].text == text

    run(scenario)


def test_refusals_rate_limits_and_a_revoked_token(fake: FakeFeishu, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake):
            chat = ChatRef("feishu", fake.dm(ANN), "private")
            fake.limit(1)
            with pytest.raises(NotSent) as limited:
                await adapter.send(chat, "too fast")
            assert not limited.value.permanent
            with pytest.raises(NotSent) as outside:
                await adapter.send(ChatRef("feishu", "oc_elsewhere", "group"), "hello?")
            assert outside.value.permanent
            grants = fake.token_grants
            fake.revoke_tokens()
            assert await adapter.send(chat, "after the token was rotated")
            assert fake.token_grants == grants + 1

    run(scenario)


def test_a_question_card_answered_by_the_asker_only(fake: FakeFeishu, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake, AskerOnly(port_of(fake), ANN)) as host:
            chat = ChatRef("feishu", GROUP, "group")
            await adapter.ask(
                chat,
                "Run `rm -rf build`?",
                [Choice("once", "Allow"), Choice("deny", "Deny")],
                "req1",
            )
            (card,) = fake.sent_to(GROUP)
            assert [b["text"]["content"] for b in card.buttons] == ["Allow", "Deny"]
            await asyncio.to_thread(fake.press, BOB, card, "once")
            assert card.buttons and card.updates == 0  # not Bob's to answer: left as it was
            await asyncio.to_thread(fake.press, ANN, card, "once")
            assert not card.buttons and card.updates == 1
            assert [(p.user_id, p.choice) for p in host.presses] == [(BOB, "once"), (ANN, "once")]
            assert host.presses[-1].chat == chat

    run(scenario)


def test_the_long_connection_comes_back_when_dropped(tmp_path: Path) -> None:
    async def scenario() -> None:
        with FakeFeishu() as fake:
            async with running(adapter_for(fake, tmp_path), fake) as host:
                await asyncio.to_thread(fake.drop_connections)
                await eventually(lambda: fake.connections >= 2, timeout=20)
                await asyncio.to_thread(fake.user_says, ANN, "still there?")
                await eventually(lambda: host.messages)
                assert any("channel" in agent for agent in fake.user_agents)

    run(scenario)


def test_the_app_refused_is_a_setting_to_fix(tmp_path: Path) -> None:
    async def scenario() -> None:
        with FakeFeishu() as fake:
            adapter = adapter_for(fake, tmp_path)
            object.__setattr__(adapter.settings, "app_secret", "wrong")
            with pytest.raises(PlatformNotConfigured, match="FEISHU_APP_SECRET"):
                await adapter.run(RecordingHost())
            await adapter.aclose()

    run(scenario)


def test_the_official_client_talks_to_the_fake(tmp_path: Path) -> None:
    """lark-oapi's own REST client (as a user's script would use it) gets a token from the
    fake and sends a message through it: the fake speaks the API as the SDK reads it."""
    import lark_oapi as lark
    from lark_oapi.api.im.v1 import CreateMessageRequest, CreateMessageRequestBody

    with FakeFeishu() as fake:
        client = lark.Client.builder().app_id(fake.app_id).app_secret(fake.app_secret)
        client = client.domain(fake.url).build()
        body = CreateMessageRequestBody.builder().receive_id(GROUP).msg_type("text")
        body = body.content(json.dumps({"text": "来自 SDK"})).build()
        request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body)
        response = client.im.v1.message.create(request.build())
        assert response.success(), response.msg
        assert fake.sent[response.data.message_id].text == "来自 SDK"


@pytest.mark.parametrize(
    ("config", "secrets", "wanted"),
    [
        ({}, {"FEISHU_APP_ID": "cli_x"}, "FEISHU_APP_SECRET"),
        ({"connection_mode": "socket"}, {}, "connection_mode"),
        ({"connection_mode": "webhook"}, {}, "FEISHU_ENCRYPT_KEY"),
        ({"domain": "http://open.feishu.cn"}, {}, "domain"),
        ({"webhook_path": "/"}, {}, "webhook_path"),
    ],
)
def test_settings_say_what_to_fix(
    config: dict[str, Any], secrets: dict[str, str], wanted: str, tmp_path: Path
) -> None:
    given = {"FEISHU_APP_ID": "cli_x", "FEISHU_APP_SECRET": "s", **secrets}
    if wanted == "FEISHU_APP_SECRET":
        given.pop("FEISHU_APP_SECRET")
    context = PlatformContext(name="feishu", home=str(tmp_path), config=config, secrets=given)
    with pytest.raises(PlatformNotConfigured, match=wanted) as raised:
        FeishuSettings.from_context(context)
    assert "\n" not in str(raised.value)


def test_lark_is_the_other_domain(tmp_path: Path) -> None:
    secrets = {"FEISHU_APP_ID": "cli_x", "FEISHU_APP_SECRET": "s", "FEISHU_DOMAIN": "lark"}
    context = PlatformContext(name="feishu", home=str(tmp_path), secrets=secrets)
    assert FeishuSettings.from_context(context).base_url == "https://open.larksuite.com"


def test_callbacks_with_an_encrypt_key_alone(tmp_path: Path) -> None:
    """Without a verification token (the console's encryption alone): events in, and a
    request signed with another key or a URL check with a made-up token still refused."""

    async def scenario() -> None:
        with FakeFeishu(mode="webhook", encrypt_key=KEY, verification_token="") as fake:
            fake.callback_url = f"http://127.0.0.1:{free_port()}/feishu/webhook"
            async with running(adapter_for(fake, tmp_path), fake) as host:
                status, answer = await asyncio.to_thread(fake.verify_url, "c-2")
                assert (status, answer) == (200, {"challenge": "c-2"})
                assert (await asyncio.to_thread(fake.user_says, ANN, "密钥"))[0] == 200
                await eventually(lambda: host.messages)
                said = fake._event("im.message.receive_v1", {})
                assert (await asyncio.to_thread(fake.post, said, signature="f" * 64))[0] == 401

    run(scenario)


def test_what_is_sent_to_a_topic_stays_in_it(fake: FakeFeishu, tmp_path: Path) -> None:
    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            await asyncio.to_thread(
                fake.user_says, ANN, "start", chat=GROUP, mention=True, thread="omt_9"
            )
            message = await eventually(lambda: host.messages and host.messages[0])
            await adapter.send(message.chat, "a note without a reply_to")
            long_question = "Run this?\n\n```\n" + "x" * 6000 + "\n```"
            choices = [Choice("once", "Allow"), Choice("deny", "Deny")]
            await adapter.ask(message.chat, long_question, choices, "req-long")
            sent = fake.sent_to(GROUP)
            assert all(m.in_thread for m in sent)
            assert sent[-1].buttons and "above" in sent[-1].text
            assert sum(len(m.text) for m in sent[:-1]) > 6000  # the question, whole

    run(scenario)


def test_a_retry_after_a_crash_within_the_hour_is_the_same_message(
    fake: FakeFeishu, tmp_path: Path
) -> None:
    from hermes_commons.sending import DUPLICATE_NOTE

    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            await asyncio.to_thread(fake.user_says, ANN, "hi")
            message = await eventually(lambda: host.messages and host.messages[0])
            first = await adapter.send(message.chat, "回答", reply_to=message.message_id)
            retried = f"{DUPLICATE_NOTE}\n\n回答"
            assert await adapter.send(message.chat, retried, reply_to=message.message_id) == first
            assert [m.text for m in fake.sent_to(message.chat.chat_id)] == ["回答"]

    run(scenario)


def test_a_long_connection_that_cannot_come_back_ends_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugin_platform_feishu import events

    monkeypatch.setattr(events, "DOWN_SECONDS", 1.0)

    async def scenario() -> None:
        with FakeFeishu() as fake:
            adapter = adapter_for(fake, tmp_path)
            task = asyncio.ensure_future(adapter.run(RecordingHost()))
            await eventually(lambda: fake.connections > 0, timeout=40)
            fake.refuse_connections = True
            await asyncio.to_thread(fake.drop_connections)
            with pytest.raises(ConnectionError, match="down"):
                await asyncio.wait_for(task, 30)
            await adapter.aclose()

    run(scenario)
