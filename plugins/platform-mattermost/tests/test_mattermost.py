"""The Mattermost adapter against the loopback server: channels and threads, the read-back
after a reconnect, signed buttons, the server's refusals, settings."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hermes_plugin_platform_mattermost.adapter import MattermostAdapter
from hermes_plugin_platform_mattermost.testing import TOKEN, FakeMattermost

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually
from hermes_testkit.services import free_port

ALICE = "a1234567890abcdefghijklmno"
BOB = "b1234567890abcdefghijklmno"


@pytest.fixture
def fake() -> Iterator[FakeMattermost]:
    with FakeMattermost() as server:
        server.user(ALICE, "alice")
        server.user(BOB, "bob")
        yield server


def adapter_for(
    fake: FakeMattermost, home: Path, port: int = 0, **config: Any
) -> MattermostAdapter:
    settings: dict[str, Any] = {"url": fake.url, **config}
    if port:
        settings["actions_url"] = f"http://127.0.0.1:{port}/mattermost/actions"
    context = PlatformContext(
        name="mattermost", home=str(home), config=settings, secrets={"MATTERMOST_TOKEN": TOKEN}
    )
    return MattermostAdapter(context)


@contextlib.asynccontextmanager
async def running(
    adapter: MattermostAdapter, fake: FakeMattermost, port: int = 0
) -> AsyncIterator[RecordingHost]:
    connected = fake.connections
    ready = lambda: fake.connections > connected  # noqa: E731 - read before the connection
    async with adapter_running(adapter, RecordingHost(port), ready) as host:
        await asyncio.sleep(0.2)  # the read-back
        yield host


def handed(host: RecordingHost) -> list[str]:
    """The texts handed over, each message once: the read-back's margin hands a few over
    again, with the same id, and the gateway admits an id once."""
    return list({m.message_id: m.text for m in host.messages}.values())


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_a_mention_in_a_channel_is_answered_in_its_thread_which_then_needs_none(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            fake.user_says(ALICE, "chatter for everyone", channel=fake.channel)
            fake.user_says(ALICE, "@hermes2 is another bot", channel=fake.channel)
            asked = fake.user_says(ALICE, "@Hermes, what is the time?", channel=fake.channel)
            first = await eventually(lambda: host.messages and host.messages[0])
            assert first.text == "what is the time?" and first.message_id == asked.id
            assert first.chat == ChatRef("mattermost", fake.channel, "channel", asked.id)
            assert first.user_name == "alice"
            await adapter.send(first.chat, "Noon.")
            (reply,) = fake.sent(fake.channel)
            assert (reply.root_id, reply.message) == (asked.id, "Noon.")
            fake.user_says(BOB, "and the date?", channel=fake.channel, root_id=asked.id)
            second = await eventually(lambda: len(host.messages) > 1 and host.messages[1])
            assert second.addressed and second.chat.thread_id == asked.id
            await asyncio.sleep(0.2)
            assert len(host.messages) == 2

    run(scenario)


def test_flat_replies_and_answering_every_post(fake: FakeMattermost, tmp_path: Path) -> None:
    adapter = adapter_for(fake, tmp_path, reply_mode="off", require_mention=False)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            fake.user_says(ALICE, "no mention here", channel=fake.channel)
            message = await eventually(lambda: host.messages and host.messages[0])
            assert message.chat.thread_id is None and not message.addressed
            await adapter.send(message.chat, "flat")
            assert fake.sent(fake.channel)[0].root_id == ""

    run(scenario)


def test_what_was_said_while_disconnected_is_read_back_once_and_history_never(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    fake.user_says(ALICE, "from before Hermes ever started", connected=False)

    async def scenario() -> None:
        adapter = adapter_for(fake, tmp_path)
        async with running(adapter, fake) as host:
            fake.user_says(ALICE, "one")
            await eventually(lambda: host.messages)
            fake.drop()  # the server restarts: the websocket goes
            fake.down = True
            await asyncio.sleep(0.3)
            fake.user_says(ALICE, "two, while the socket was down", connected=False)
            fake.user_says(BOB, "three, a new direct chat", connected=False)
            fake.down = False
            await eventually(lambda: len(host.messages) >= 3, timeout=20)
            await asyncio.sleep(0.3)
            assert handed(host) == [
                "one",
                "two, while the socket was down",
                "three, a new direct chat",
            ]
            before = {m.message_id for m in host.messages}
        # A restart: read back from the positions kept on disk; nothing new but "four"
        # (what the margin hands over again keeps its id, which the gateway has).
        again = adapter_for(fake, tmp_path)
        async with running(again, fake) as host:
            fake.user_says(ALICE, "four")
            await eventually(lambda: any(m.text == "four" for m in host.messages))
            await asyncio.sleep(0.3)
            assert [m.text for m in host.messages if m.message_id not in before] == ["four"]

    run(scenario)


def test_buttons_answer_and_go_a_forged_press_is_refused(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    port = free_port()
    adapter = adapter_for(fake, tmp_path, port)
    chat = ChatRef("mattermost", fake.dm(ALICE), "private")
    choices = [Choice("once", "Allow once"), Choice("deny", "Deny")]

    async def scenario() -> None:
        async with running(adapter, fake, port) as host:
            await adapter.ask(chat, "Run `rm -r build`?", choices, "q1")
            (post,) = fake.sent_to(ALICE)
            assert [a["name"] for a in post.buttons] == ["Allow once", "Deny"]
            assert all(a["id"].isalnum() for a in post.buttons)  # the server's route needs it
            url = post.buttons[1]["integration"]["url"]
            forged = {**post.buttons[1]["integration"]["context"], "choice": "once"}
            async with aiohttp.ClientSession() as session:
                body = {"user_id": BOB, "context": forged}
                async with session.post(url, json=body) as response:
                    assert response.status == 403
            assert not host.presses
            fake.press_later(ALICE, post, post.buttons[1]["id"])
            press = await eventually(lambda: host.presses and host.presses[0])
            assert (press.user_id, press.request_id, press.choice) == (ALICE, "q1", "deny")
            assert press.chat == chat
            await eventually(lambda: fake.press_statuses == [200])
            assert not post.buttons and "Run `rm -r build`?" in post.message  # closed

    run(scenario)


def test_the_servers_refusals_are_told_apart(fake: FakeMattermost, tmp_path: Path) -> None:
    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("mattermost", fake.channel, "channel")

    async def scenario() -> None:
        async with running(adapter, fake):
            fake.rate_limit(posts=1, retry_after=3)
            with pytest.raises(NotSent, match="retry after 3") as limited:
                await adapter.send(chat, "hello")
            assert not limited.value.permanent
            fake.refused_channels.add(fake.channel)
            with pytest.raises(NotSent, match="permissions") as refused:
                await adapter.send(chat, "hello")
            assert refused.value.permanent
            # A thread whose first post was deleted meanwhile: the reply goes to the channel.
            thread = ChatRef("mattermost", fake.dm(ALICE), "private", "deletedroot")
            await adapter.send(thread, "still said")
            (flat,) = fake.sent_to(ALICE)
            assert (flat.message, flat.root_id) == ("still said", "")

    run(scenario)


def test_a_revoked_token_stops_the_platform_with_one_line(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        host = RecordingHost()
        task = asyncio.ensure_future(adapter.run(host))
        await eventually(lambda: fake.connections > 0)
        fake.revoke_token()
        fake.drop()  # and the socket goes: the next handshake gets 401
        with pytest.raises(PlatformNotConfigured, match="refused MATTERMOST_TOKEN") as raised:
            await asyncio.wait_for(task, 20)
        assert "\n" not in str(raised.value)
        await adapter.aclose()

    run(scenario)


@pytest.mark.parametrize(
    ("config", "secrets", "error"),
    [
        ({}, {"MATTERMOST_TOKEN": "t"}, "platforms.mattermost.url"),
        ({"url": "https://chat.example.org"}, {}, "MATTERMOST_TOKEN"),
        (
            {"url": "https://chat.example.org", "reply_mode": "nested"},
            {"MATTERMOST_TOKEN": "t"},
            "thread or flat",
        ),
        (
            {"url": "https://chat.example.org", "actions_url": "http://10.0.0.5:8644"},
            {"MATTERMOST_TOKEN": "t"},
            "a path of its own",
        ),
    ],
)
def test_a_wrong_setting_is_one_line_saying_what_to_fix(
    tmp_path: Path, config: dict[str, Any], secrets: dict[str, str], error: str
) -> None:
    context = PlatformContext(name="mattermost", home=str(tmp_path), config=config, secrets=secrets)
    with pytest.raises(PlatformNotConfigured, match=error) as raised:
        MattermostAdapter(context)
    assert "\n" not in str(raised.value)


def test_a_post_in_the_same_millisecond_and_more_than_a_thousand_are_all_read_back(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            first = fake.user_says(ALICE, "stored")
            await eventually(lambda: host.messages)
            fake.drop()
            fake.down = True
            await asyncio.sleep(0.3)
            # Made in the same millisecond as the one stored (or committed after it).
            fake.user_says(ALICE, "same millisecond", connected=False, at=first.create_at)
            for number in range(1100):  # past the 1,000 that ?since= returns
                fake.user_says(BOB, f"missed {number}", connected=False)
            fake.down = False
            await eventually(lambda: len(set(handed(host))) >= 1102, timeout=60)
            texts = handed(host)
            assert "same millisecond" in texts
            assert [t for t in texts if t.startswith("missed")] == [
                f"missed {n}" for n in range(1100)
            ]

    run(scenario)


def test_a_post_that_could_not_be_stored_is_read_back_without_a_reconnect(
    fake: FakeMattermost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugin_platform_mattermost import adapter as adapter_module

    monkeypatch.setattr(adapter_module, "QUIET_SECONDS", 0.3)
    adapter = adapter_for(fake, tmp_path)

    class Failing(RecordingHost):
        failures = 1

        async def receive(self, message: Any) -> None:
            if self.failures:
                self.failures -= 1
                raise OSError("the disk is full")
            await super().receive(message)

    async def scenario() -> None:
        host = Failing()
        connected = fake.connections
        task = asyncio.ensure_future(adapter.run(host))
        try:
            await eventually(lambda: fake.connections > connected)
            await asyncio.sleep(0.2)
            fake.user_says(ALICE, "keep this")
            await eventually(lambda: handed(host) == ["keep this"], timeout=10)
            assert fake.connections == connected + 1  # the same connection read it back
        finally:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            await adapter.aclose()

    run(scenario)


def test_a_token_revoked_while_connected_stops_the_platform_though_the_socket_stays(
    fake: FakeMattermost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugin_platform_mattermost import adapter as adapter_module

    monkeypatch.setattr(adapter_module, "QUIET_SECONDS", 0.3)
    monkeypatch.setattr(adapter_module, "CHECK_SECONDS", 0.5)
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        host = RecordingHost()
        task = asyncio.ensure_future(adapter.run(host))
        await eventually(lambda: fake.connections > 0)
        fake.revoke_token()  # the real server keeps the socket open, silent
        with pytest.raises(PlatformNotConfigured, match="refused MATTERMOST_TOKEN"):
            await asyncio.wait_for(task, 20)
        await adapter.aclose()

    run(scenario)


def test_a_question_asked_before_a_restart_closes_when_answered_after_it(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    port = free_port()
    chat = ChatRef("mattermost", fake.dm(ALICE), "private")

    async def scenario() -> None:
        asker = adapter_for(fake, tmp_path, port)
        async with running(asker, fake, port):
            await asker.ask(
                chat, "Deploy now?", [Choice("once", "Yes"), Choice("deny", "No")], "q9"
            )
        answerer = adapter_for(fake, tmp_path, port)
        async with running(answerer, fake, port) as host:
            (post,) = fake.sent_to(ALICE)
            fake.press_later(ALICE, post, post.buttons[0]["id"])
            await eventually(lambda: host.presses)
            await eventually(lambda: not post.buttons)
            assert post.message.startswith("Deploy now?")

    run(scenario)


def test_a_channel_the_server_would_not_read_back_is_held_and_read_again(
    fake: FakeMattermost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugin_platform_mattermost import adapter as adapter_module

    monkeypatch.setattr(adapter_module, "QUIET_SECONDS", 0.3)
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            fake.user_says(ALICE, "first")
            await eventually(lambda: host.messages)
            fake.drop()
            fake.down = True
            await asyncio.sleep(0.3)
            fake.user_says(ALICE, "while away", connected=False)
            fake.limit_reads(1)  # the read-back of the channel gets 429 once
            fake.down = False
            await eventually(lambda: fake.connections >= 2)
            fake.user_says(ALICE, "live, after")
            await eventually(lambda: "while away" in handed(host), timeout=10)
            assert not adapter._reread and not adapter.positions.held()  # nothing left over
            assert handed(host) == ["first", "live, after", "while away"] or handed(host) == [
                "first",
                "while away",
                "live, after",
            ]

    run(scenario)


def test_a_typed_answer_read_back_again_is_not_a_new_message(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("mattermost", fake.dm(ALICE), "private")

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            await adapter.ask(chat, "Go?", [Choice("once", "Yes"), Choice("deny", "No")], "q5")
            fake.user_says(ALICE, "deny")
            await eventually(lambda: host.presses)
            fake.drop()  # the reconnect reads the last minute back, "deny" with it
            await eventually(lambda: fake.connections >= 2)
            await asyncio.sleep(0.5)
            assert not host.messages and len(host.presses) == 1

    run(scenario)
