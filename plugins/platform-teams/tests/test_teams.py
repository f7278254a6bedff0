"""The Teams adapter against the Bot Framework on loopback: who may post (every kind of bad
token), channels and their threads, group chats, mentions, cards pressed both ways, the
connector's refusals, the credentials' refusal, settings."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hermes_plugin_platform_teams.adapter import TeamsAdapter
from hermes_plugin_platform_teams.testing import APP_ID, APP_PASSWORD, TENANT_ID, FakeBotFramework

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually
from hermes_testkit.services import free_port

ANN = "0b8e7f6a-1111-4c2d-9e3f-123456789abc"
BOB = "0b8e7f6a-2222-4c2d-9e3f-123456789abc"


@pytest.fixture
def fake() -> Iterator[FakeBotFramework]:
    with FakeBotFramework() as server:
        server.endpoint_url = f"http://127.0.0.1:{free_port()}/api/messages"
        yield server


def adapter_for(fake: FakeBotFramework, home: Path, **secrets: str) -> TeamsAdapter:
    config = {
        "openid_url": fake.openid_url,
        "token_url": fake.token_url,
        "service_url": fake.service_url,
    }
    given = {
        "TEAMS_CLIENT_ID": APP_ID,
        "TEAMS_CLIENT_SECRET": APP_PASSWORD,
        "TEAMS_TENANT_ID": TENANT_ID,
        **secrets,
    }
    return TeamsAdapter(PlatformContext(name="teams", home=str(home), config=config, secrets=given))


class OnlyAnn(RecordingHost):
    """A gateway that asked Ann: only her press closes the question."""

    def question_open(self, request_id: str) -> bool:
        return all(p.user_id != ANN for p in self.presses)


def running(
    adapter: TeamsAdapter, fake: FakeBotFramework, host: RecordingHost | None = None
) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    host = host or RecordingHost()
    host.http_port = int(fake.endpoint_url.split(":")[2].split("/")[0])
    return adapter_running(adapter, host, lambda: host.listening)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_only_the_bot_connectors_tokens_for_this_bot_get_in(
    fake: FakeBotFramework, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            kinds = ["forged", "expired", "not-yet", "audience", "issuer", "serviceurl"]
            kinds += ["no-serviceurl", "unendorsed", "unknown-kid", "alg-none"]
            for kind in kinds:
                status, _ = await asyncio.to_thread(
                    fake.user_says, ANN, f"a {kind} token", token=fake.token(kind)
                )
                assert status == 401, kind
            for header in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer a.b"}):
                async with aiohttp.ClientSession() as session:
                    activity = {"type": "message", "id": "1", "text": "x", "serviceUrl": "x"}
                    async with session.post(fake.endpoint_url, json=activity, headers=header) as r:
                        assert r.status == 401
            assert not host.messages
            status, _ = await asyncio.to_thread(fake.user_says, ANN, "hello")
            assert status == 200 and [m.text for m in host.messages] == ["hello"]
            fetches = fake.key_fetches
            for _ in range(5):
                await asyncio.to_thread(fake.user_says, ANN, "x", token=fake.token("unknown-kid"))
            assert fake.key_fetches == fetches  # made-up key ids fetch nothing more
            # Web Chat or Direct Line on the same bot: their clients name their own ids.
            status, _ = await asyncio.to_thread(fake.user_says, ANN, "hi", channel_id="webchat")
            assert status == 401 and len(host.messages) == 1

    run(scenario)


def test_a_channel_mention_is_answered_in_its_thread_and_only_a_mention_is_heard(
    fake: FakeBotFramework, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            await asyncio.to_thread(fake.user_says, BOB, "chatter", kind="channel")
            await asyncio.to_thread(
                fake.user_says, BOB, "what is new, <at>Ann</at>?", kind="channel", mention=True
            )
            await asyncio.to_thread(
                fake.user_says,
                ANN,
                "and in the thread",
                kind="channel",
                thread="1699",
                mention=True,
            )
            first, second = host.messages
            assert first.text == "what is new, @Ann?" and first.user_id == BOB
            channel = fake.conversation(BOB, "channel")
            assert first.chat == ChatRef("teams", channel, "channel", first.message_id)
            assert second.chat.thread_id == "1699"
            await adapter.send(first.chat, "Nothing much.")
            (reply,) = fake.sent_to(f"{channel};messageid={first.message_id}")
            assert reply.text == "Nothing much."

    run(scenario)


def test_a_card_answered_by_execute_or_submit_and_not_by_someone_else(
    fake: FakeBotFramework, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("teams", fake.conversation(ANN), "private")
    choices = [Choice("once", "Allow once"), Choice("deny", "Deny")]

    async def scenario() -> None:
        async with running(adapter, fake, OnlyAnn()) as host:
            await adapter.ask(chat, "Run `rm -r build`?", choices, "q1")
            (card,) = fake.sent_to(chat.chat_id)
            assert [b["title"] for b in card.buttons] == ["Allow once", "Deny"]
            assert card.card and card.card["version"] == "1.5"
            status, answer = await asyncio.to_thread(fake.press, BOB, card, "once")
            assert status == 200 and answer["type"] == "application/vnd.microsoft.activity.message"
            assert card.buttons  # still open: Bob was not asked
            status, answer = await asyncio.to_thread(fake.press, ANN, card, "deny")
            assert answer["type"] == "application/vnd.microsoft.card.adaptive"
            assert not card.buttons and "Run `rm -r build`?" in card.visible
            await adapter.ask(chat, "And this?", choices, "q2")
            second = fake.sent_to(chat.chat_id)[-1]
            await asyncio.to_thread(fake.press, ANN, second, "once", False)  # Action.Submit
            await eventually(lambda: second.updates == 1)
            assert not second.buttons
            assert [(p.user_id, p.request_id, p.choice) for p in host.presses] == [
                (BOB, "q1", "once"),
                (ANN, "q1", "deny"),
                (ANN, "q2", "once"),
            ]

    run(scenario)


def test_the_connectors_refusals_are_told_apart(fake: FakeBotFramework, tmp_path: Path) -> None:
    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("teams", fake.conversation(ANN), "private")

    async def scenario() -> None:
        async with running(adapter, fake):
            fake.throttle(1)
            with pytest.raises(NotSent, match="retry after 2") as throttled:
                await adapter.send(chat, "hello")
            assert not throttled.value.permanent
            fake.not_in.add(chat.chat_id)
            with pytest.raises(NotSent, match="BotNotInConversationRoster") as refused:
                await adapter.send(chat, "hello")
            assert refused.value.permanent

    run(scenario)


def test_credentials_microsoft_refuses_stop_the_platform_with_one_line(
    fake: FakeBotFramework, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path, TEAMS_CLIENT_SECRET="wrong")

    async def scenario() -> None:
        with pytest.raises(PlatformNotConfigured, match="AADSTS7000215") as raised:
            async with running(adapter, fake):
                pass
        assert "\n" not in str(raised.value)

    run(scenario)


@pytest.mark.parametrize(
    ("config", "secrets", "error"),
    [
        ({}, {}, "TEAMS_CLIENT_ID"),
        ({}, {"TEAMS_CLIENT_ID": APP_ID}, "TEAMS_CLIENT_SECRET"),
        ({"app_password": "x"}, {"TEAMS_CLIENT_ID": APP_ID}, "belongs in HERMES_HOME/.env"),
        (
            {},
            {"TEAMS_CLIENT_ID": APP_ID, "TEAMS_CLIENT_SECRET": "s", "TEAMS_TENANT_ID": "contoso"},
            "GUID",
        ),
    ],
)
def test_a_wrong_setting_is_one_line_saying_what_to_fix(
    tmp_path: Path, config: dict[str, Any], secrets: dict[str, str], error: str
) -> None:
    context = PlatformContext(name="teams", home=str(tmp_path), config=config, secrets=secrets)
    with pytest.raises(PlatformNotConfigured, match=error) as raised:
        TeamsAdapter(context)
    assert "\n" not in str(raised.value)


def test_files_in_both_ways_the_token_only_to_teams_and_a_declined_offer(
    fake: FakeBotFramework, tmp_path: Path
) -> None:
    from hermes_sdk.media import Attachment

    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("teams", fake.conversation(ANN), "private")
    big = tmp_path / "report.bin"
    big.write_bytes(bytes(range(256)) * (11 * 4096))  # 11 MiB: two pieces
    attachment = Attachment(
        kind="document",
        mime="application/octet-stream",
        size=big.stat().st_size,
        path=str(big),
        name="report.bin",
    )

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
            await asyncio.to_thread(fake.user_pastes_image, ANN, png)
            await asyncio.to_thread(fake.user_sends_file, ANN, b"hello", "notes.txt", "text/plain")
            assert fake.leaked_tokens == 0  # the token went to the connector's host only
            assert len(host.messages) >= 1
            await adapter.send_file(chat, attachment, caption="the report")
            await eventually(lambda: fake.files_to(chat.chat_id), timeout=20)
            assert fake.files_to(chat.chat_id) == [("report.bin", big.read_bytes())]
            fake.accept_files = False
            await adapter.send_file(chat, attachment)
            await asyncio.sleep(0.5)
            assert len(fake.files_to(chat.chat_id)) == 1  # declined: nothing uploaded
            channel = ChatRef("teams", fake.conversation(ANN, "channel"), "channel", "42")
            await adapter.send_file(channel, attachment)
            (note,) = fake.sent_to(f"{channel.chat_id};messageid=42")
            assert "only in a personal chat" in note.text
            assert fake.leaked_tokens == 0

    run(scenario)


def test_an_edit_of_a_gone_message_and_typing(fake: FakeBotFramework, tmp_path: Path) -> None:
    from hermes_sdk.platform import MessageGone

    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("teams", fake.conversation(ANN), "private")

    async def scenario() -> None:
        async with running(adapter, fake):
            (sent,) = await adapter.send(chat, "draft")
            await adapter.edit(chat, sent, "final")
            assert fake.sent_to(chat.chat_id)[0].text == "final"
            with pytest.raises(MessageGone):
                await adapter.edit(chat, "1234", "nothing there")
            await adapter.typing(chat)
            assert fake.typing == [chat.chat_id]

    run(scenario)
