"""The WhatsApp bridge adapter against the loopback bridge: what waited in the bridge is
answered at start, a failed hand-over is tried again in place, polls answer questions,
groups answer a mention or a reply, privacy ids read as numbers, files are read only from
the bridge's media folders, and each refusal is one line."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_whatsapp_bridge.adapter import BridgeAdapter
from hermes_plugin_platform_whatsapp_bridge.reading import People, read_event
from hermes_plugin_platform_whatsapp_bridge.testing import FakeBridge

from hermes_sdk.media import MediaCache
from hermes_sdk.platform import (
    ChatRef,
    Choice,
    Inbound,
    NotSent,
    PlatformContext,
    PlatformNotConfigured,
)
from hermes_testkit.platform_tests import RecordingHost, eventually
from hermes_testkit.services import free_port

ANN = "15551234567"
GROUP = "120363040000000000@g.us"
APPROVAL = [Choice("once", "Allow once"), Choice("always", "Always"), Choice("deny", "Deny")]


def _context(home: Path, bridge: FakeBridge | None, **config: Any) -> PlatformContext:
    base: dict[str, Any] = {"bridge_url": f"http://127.0.0.1:{free_port()}"}
    if bridge is not None:
        base = {"bridge_url": bridge.url, "media_dirs": [str(bridge.media_dir)]}
    return PlatformContext(name="whatsapp_bridge", home=str(home), config=base | config)


def _running(
    home: Path,
    bridge: FakeBridge,
    scenario: Callable[[BridgeAdapter, RecordingHost], Awaitable[None]],
    host: RecordingHost | None = None,
    **config: Any,
) -> None:
    async def main() -> None:
        adapter = BridgeAdapter(_context(home, bridge, poll_seconds=0.2, **config))
        recording = host or RecordingHost()
        task = asyncio.ensure_future(adapter.run(recording))
        try:
            await eventually(lambda: bridge.drains > 0)
            await scenario(adapter, recording)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await adapter.aclose()

    asyncio.run(main())


@pytest.fixture
def bridge(tmp_path: Path):  # type: ignore[no-untyped-def]
    media = tmp_path / "image_cache"
    media.mkdir()
    with FakeBridge(media) as fake:
        yield fake


def test_what_waited_in_the_bridge_is_answered_at_start(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    bridge.user_says(ANN, "sent while the gateway was down")

    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        await eventually(lambda: host.messages)
        message = host.messages[0]
        assert (message.text, message.user_id, message.chat.chat_id) == (
            "sent while the gateway was down",
            ANN,
            ANN,
        )
        await adapter.send(message.chat, "got it")

    _running(tmp_path, bridge, scenario)
    assert [(s.chat_id, s.text) for s in bridge.sent] == [(f"{ANN}@s.whatsapp.net", "got it")]


def test_a_hand_over_that_fails_is_tried_again_in_place(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    class Flaky(RecordingHost):
        failures = 1

        async def receive(self, message: Inbound) -> None:
            if self.failures:
                self.failures -= 1
                raise OSError("disk full")
            await super().receive(message)

    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        bridge.user_says(ANN, "first")
        bridge.user_says(ANN, "second")
        await eventually(lambda: len(host.messages) >= 2)
        assert [m.text for m in host.messages] == ["first", "second"]

    _running(tmp_path, bridge, scenario, host=Flaky())


def test_a_poll_vote_answers_the_question(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        chat = ChatRef(platform="whatsapp_bridge", chat_id=ANN, chat_type="private")
        await adapter.ask(chat, "Run `ls`?", APPROVAL, "req-1")
        question, poll = bridge.sent_to(ANN)[-2:]
        assert "Vote in the poll below" in question.text and "deny - Deny" in question.text
        assert poll.poll == ("Your answer?", ["Allow once", "Always", "Deny"])
        bridge.vote(ANN, poll, None)  # a vote taken back: nothing
        bridge.vote(ANN, poll, "Deny")
        await eventually(lambda: host.presses)
        assert (host.presses[0].choice, host.presses[0].request_id) == ("deny", "req-1")
        assert host.messages == []  # a vote is no message

    _running(tmp_path, bridge, scenario)


def test_a_long_choice_is_cut_to_whatsapps_limit_and_still_answers(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        chat = ChatRef(platform="whatsapp_bridge", chat_id=ANN, chat_type="private")
        long = "Allow every command like this one " + "x" * 120
        await adapter.ask(chat, "Run it?", [Choice("session", long), Choice("deny", "Deny")], "r")
        poll = bridge.sent_to(ANN)[-1]
        assert poll.poll is not None and len(poll.poll[1][0]) == 100
        bridge.vote(ANN, poll, poll.poll[1][0])
        await eventually(lambda: host.presses)
        assert host.presses[0].choice == "session"

    _running(tmp_path, bridge, scenario)


def test_a_question_with_too_many_choices_is_answered_by_its_word(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        chat = ChatRef(platform="whatsapp_bridge", chat_id=ANN, chat_type="private")
        many = [Choice(f"c{n}", f"Choice {n}") for n in range(13)]
        await adapter.ask(chat, "Which?", many, "req-2")
        assert [s.poll for s in bridge.sent_to(ANN)] == [None]
        bridge.user_says(ANN, "c7")
        await eventually(lambda: host.presses)
        assert host.presses[0].choice == "c7"

    _running(tmp_path, bridge, scenario)


def test_a_group_answers_a_mention_or_a_reply_to_the_bot(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        bridge.user_says(ANN, "lunch at noon?", group=GROUP)
        bridge.user_says(ANN, "what is 2+2?", group=GROUP, mention=True)
        await eventually(lambda: host.messages)
        group = ChatRef(platform="whatsapp_bridge", chat_id=GROUP, chat_type="group")
        await adapter.send(group, "4")
        bridge.user_says(ANN, "and times 3?", group=GROUP, reply_to=bridge.sent[-1])
        await eventually(lambda: len(host.messages) >= 2)
        await asyncio.sleep(0.3)
        said = [(m.text, m.user_id, m.chat.chat_id) for m in host.messages]
        assert said == [("what is 2+2?", ANN, GROUP), ("and times 3?", ANN, GROUP)]

    _running(tmp_path, bridge, scenario)
    assert bridge.sent[0].chat_id == GROUP


def test_a_privacy_id_reads_as_the_number_the_session_knows(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir()
    (session / "lid-mapping-98765432101_reverse.json").write_text(json.dumps(ANN))
    people = People(session)
    event = {
        "messageId": "M1",
        "chatId": "98765432101@lid",
        "senderId": "98765432101@lid",
        "body": "hi",
    }
    read = read_event(event, people)
    assert read is not None and read.inbound.user_id == ANN  # type: ignore[union-attr]
    assert read.chat_jid == "98765432101@lid"  # type: ignore[union-attr]
    event |= {"messageId": "M2", "chatId": "11122233344@lid", "senderId": "11122233344@lid"}
    assert read_event(event, people).inbound.user_id == "11122233344@lid"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "more",
    [
        {"chatId": "status@broadcast"},
        {"fromOwner": True},
        {"mediaType": "reaction", "body": "[Reaction: 👍 to X]"},
        {"mediaType": "sticker", "body": "[Sticker]"},
        {"body": "  "},
    ],
)
def test_what_is_not_a_message_to_the_bot_is_passed_over(
    tmp_path: Path, more: dict[str, Any]
) -> None:
    event = {"messageId": "M1", "chatId": f"{ANN}@s.whatsapp.net", "body": "hi"} | more
    assert read_event(event, People(tmp_path)) is None


def test_a_file_outside_the_bridges_folders_is_not_read(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "secret.txt"
    secret.write_text("the key")

    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        event = bridge._event(ANN, "", hasMedia=True, mediaType="document", mediaUrls=[str(secret)])
        bridge._deliver(event | {"fileName": "secret.txt", "mime": "text/plain"})
        await eventually(lambda: host.messages)
        assert "could not be downloaded" in host.messages[0].text
        assert "outside platforms.whatsapp_bridge.media_dirs" in host.messages[0].text
        assert host.messages[0].attachments == ()

    _running(tmp_path, bridge, scenario)


def test_a_bridge_not_linked_to_whatsapp_refuses_sends_to_retry(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        adapter = BridgeAdapter(_context(tmp_path, bridge))
        chat = ChatRef(platform="whatsapp_bridge", chat_id=ANN, chat_type="private")
        try:
            bridge.connected = False
            with pytest.raises(NotSent, match="not connected to WhatsApp") as waiting:
                await adapter.send(chat, "hello")
            assert not waiting.value.permanent
            bridge.connected = True
            attachment = MediaCache(tmp_path / "media").ingest(
                b"%PDF-1.4\n" + b"x" * 64, name="a.pdf"
            )
            Path(attachment.path).unlink()
            with pytest.raises(NotSent) as gone:
                await adapter.send_file(chat, attachment)
            assert gone.value.permanent
        finally:
            await adapter.aclose()

    asyncio.run(main())


def test_a_voice_note_goes_out_with_its_caption_after_it(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        adapter = BridgeAdapter(_context(tmp_path, bridge))
        chat = ChatRef(platform="whatsapp_bridge", chat_id=ANN, chat_type="private")
        ogg = b"OggS" + b"\x00" * 200
        attachment = MediaCache(tmp_path / "media").ingest(ogg, name="reply.ogg")
        try:
            assert len(await adapter.send_file(chat, attachment, caption="listen")) == 2
        finally:
            await adapter.aclose()

    asyncio.run(main())
    first, second = bridge.sent_to(ANN)
    assert first.file is not None and first.file[2] == "audio" and second.text == "listen"


def test_a_bridge_not_running_is_one_line_with_the_command_to_start_it(tmp_path: Path) -> None:
    async def main() -> str:
        adapter = BridgeAdapter(_context(tmp_path, None))
        try:
            with pytest.raises(RuntimeError) as down:  # not a setting: the gateway retries
                await adapter.run(RecordingHost())
            return str(down.value)
        finally:
            await adapter.aclose()

    said = asyncio.run(main())
    assert "does not answer" in said and "bridge.js --port" in said and "\n" not in said


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"bridge_url": "http://192.168.1.5:3000"}, "on this machine"),
        ({"bridge_url": "http://127.0.0.1:notaport"}, "on this machine"),
        ({"media_dirs": "/tmp"}, "a list of folders"),
        ({"poll_seconds": 0}, "poll_seconds"),
        ({"mention_patterns": ["(oops"]}, "not a regular expression"),
    ],
)
def test_bad_settings_are_one_line(tmp_path: Path, config: dict[str, Any], says: str) -> None:
    context = PlatformContext(name="whatsapp_bridge", home=str(tmp_path), config=config)
    with pytest.raises(PlatformNotConfigured, match=says) as refused:
        BridgeAdapter(context)
    assert "\n" not in str(refused.value)


def test_hermes_agents_bridge_port_is_understood(tmp_path: Path) -> None:
    context = PlatformContext(
        name="whatsapp_bridge", home=str(tmp_path), config={"bridge_port": 3111}
    )
    assert BridgeAdapter(context).settings.bridge_url == "http://127.0.0.1:3111"


def test_a_group_question_is_answered_by_its_word_not_a_poll(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    # In a group the bridge names the poll's maker (the bot) as every voter.
    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        group = ChatRef(platform="whatsapp_bridge", chat_id=GROUP, chat_type="group")
        await adapter.ask(group, "Run `ls`?", APPROVAL, "req-g")
        assert [s.poll for s in bridge.sent] == [None]
        assert "Reply with one of:" in bridge.sent[0].text

    _running(tmp_path, bridge, scenario)


def test_the_bridges_files_are_removed_once_handed_over(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    from hermes_testkit.media_files import photo_bytes

    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        bridge.user_sends_file(ANN, photo_bytes((40, 30)), "p.jpg", "image/jpeg", kind="image")
        bridge.user_sends_file("15550009999", b"%PDF-1.4 stranger", "x.pdf", "application/pdf")
        await eventually(lambda: host.messages)
        await asyncio.sleep(0.3)
        assert [a.kind for a in host.messages[0].attachments] == ["image"]

    _running(tmp_path, bridge, scenario)
    assert list(bridge.media_dir.iterdir()) == []  # read, or not wanted: none left behind


def test_a_pipe_in_the_bridges_folder_is_not_read(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    import os

    pipe = bridge.media_dir / "doc_000000000000_pipe.pdf"
    os.mkfifo(pipe)

    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        event = bridge._event(ANN, "", hasMedia=True, mediaType="document", mediaUrls=[str(pipe)])
        bridge._deliver(event | {"fileName": "pipe.pdf", "mime": "application/pdf"})
        await eventually(lambda: host.messages)
        assert "not a regular file" in host.messages[0].text

    _running(tmp_path, bridge, scenario)


def test_a_send_that_timed_out_in_the_bridge_may_have_gone_out(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        adapter = BridgeAdapter(_context(tmp_path, bridge))
        chat = ChatRef(platform="whatsapp_bridge", chat_id=ANN, chat_type="private")
        try:
            bridge.timeouts = 1
            with pytest.raises(Exception, match="timed out") as unsure:
                await adapter.send(chat, "hello")
            # Not NotSent: the gateway retries it noting it may be a duplicate.
            assert not isinstance(unsure.value, NotSent)
        finally:
            await adapter.aclose()

    asyncio.run(main())


def test_groups_can_be_turned_off(tmp_path: Path, bridge) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: BridgeAdapter, host: RecordingHost) -> None:
        bridge.user_says(ANN, "summarise", group=GROUP, mention=True)
        bridge.user_says(ANN, "and in private?")
        await eventually(lambda: host.messages)
        await asyncio.sleep(0.3)
        assert [m.text for m in host.messages] == ["and in private?"]

    _running(tmp_path, bridge, scenario, groups=False)
