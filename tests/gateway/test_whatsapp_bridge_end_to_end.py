"""A personal WhatsApp account through a real ``hermes gateway run`` process: the bridge
plugin against the loopback bridge (hermes-agent's bridge.js HTTP API), which keeps what
arrives while the gateway is down and hands it over when it polls again."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_whatsapp_bridge.testing import FakeBridge, Sent

from hermes_testkit import Reply
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes, spoken_ogg

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "15551234567"
STRANGER = "15559876543"
GROUP = "120363040000000000@g.us"


@pytest.fixture
def bridge(tmp_path: Path) -> Iterator[FakeBridge]:
    media = tmp_path / "bridge-media"
    media.mkdir()
    with FakeBridge(media) as fake:
        yield fake


@pytest.fixture
def bridge_gateway(platform_process, bridge: FakeBridge) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only the WhatsApp bridge, letting OWNER in;
    returns once it polls the bridge."""
    section = (
        f"  whatsapp_bridge:\n    bridge_url: {bridge.url}\n"
        f"    media_dirs: ['{bridge.media_dir}']\n    allowed_users: ['{OWNER}']\n"
    )

    def start(top: str = "", model: str = "", write: bool = True) -> GatewayProcess:
        polled = bridge.drains
        return platform_process(  # type: ignore[no-any-return]
            section,
            ready=lambda: bridge.drains > polled,
            top=top,
            model=model,
            write=write,
        )

    return start


def wait_for(bridge: FakeBridge, user: str, text: str, timeout: float = 90) -> Sent:
    found: list[Sent] = []
    wait_until(
        lambda: found.extend(s for s in bridge.sent_to(user) if text in s.text) or found, timeout
    )
    return found[0]


def test_answered_once_a_stranger_costs_nothing_and_a_group_needs_a_mention(
    bridge_gateway, bridge, openai_server
):
    openai_server.queue(Reply.say("Hello from Hermes."), Reply.say("Hello, group."))
    bridge_gateway()
    bridge.user_says(OWNER, "hi there")
    wait_for(bridge, OWNER, "Hello from Hermes.")
    bridge.deliver_again()  # the same message again (Baileys replaying it)
    bridge.user_says(STRANGER, "hey, long time no see")  # a contact: not answered
    bridge.user_says(OWNER, "chatter in the group", group=GROUP)  # not addressed
    bridge.user_says(OWNER, "summarise", group=GROUP, mention=True)
    wait_until(lambda: any(s.chat_id == GROUP for s in bridge.sent))
    time.sleep(1.0)
    assert len([s for s in bridge.sent_to(OWNER) if "Hello from" in s.text]) == 1
    assert bridge.sent_to(STRANGER) == []  # no pairing code to the owner's contacts
    assert [t[-1] for t in user_texts(openai_server)] == ["hi there", "summarise"]


def test_a_message_sent_while_the_gateway_was_down_is_answered_once(
    bridge_gateway, bridge, openai_server
):
    openai_server.queue(Reply.say("first answer"), Reply.say("answered after the restart"))
    gateway = bridge_gateway()
    bridge.user_says(OWNER, "one")
    wait_for(bridge, OWNER, "first answer")
    gateway.kill()  # kill -9; the bridge runs on, and keeps what arrives
    bridge.user_says(OWNER, "two")
    bridge_gateway(write=False)
    wait_for(bridge, OWNER, "answered after the restart", timeout=60)
    time.sleep(1.0)
    assert len([s for s in bridge.sent_to(OWNER) if "after the restart" in s.text]) == 1
    assert user_texts(openai_server)[-1] == ["one", "two"]


def test_a_photo_reaches_the_model_as_an_image(bridge_gateway, bridge, openai_server):
    openai_server.queue(Reply.say("A red picture."))
    bridge_gateway(model="  vision: true\n")
    bridge.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg", kind="image")
    wait_for(bridge, OWNER, "A red picture.")
    ((mime, _data),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"


@pytest.mark.usefixtures("speech_tools")
def test_a_voice_note_is_transcribed_and_a_spoken_reply_goes_out_as_one(
    bridge_gateway, bridge, openai_server
):
    with ScriptedAudioServer(transcripts=["say good morning out loud"]) as audio:
        openai_server.queue(
            Reply.tool_call("text_to_speech", {"text": "Good morning."}),
            Reply.say("Here it is, spoken."),
        )
        bridge_gateway(
            top=f"voice:\n  transcription:\n    base_url: {audio.base_url}\n"
            "agent:\n  add_toolsets: [voice]\n"
        )
        voice = spoken_ogg("say good morning out loud")
        bridge.user_sends_file(OWNER, voice, "voice.ogg", "audio/ogg; codecs=opus", kind="ptt")
        wait_for(bridge, OWNER, "Here it is, spoken.")
        wait_until(lambda: any(s.file for s in bridge.sent_to(OWNER)))
    sent = openai_server.requests[0].json["messages"][-1]["content"]
    assert sent.endswith("say good morning out loud")
    (note,) = [s for s in bridge.sent_to(OWNER) if s.file]
    assert note.file is not None and note.file[2] == "audio" and note.file[1][:4] == b"OggS"


def test_an_approval_is_answered_by_a_poll_vote(bridge_gateway, bridge, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    bridge_gateway()
    bridge.user_says(OWNER, "open up that folder")
    wait_for(bridge, OWNER, "chmod -R 777")
    wait_until(lambda: any(s.poll for s in bridge.sent_to(OWNER)))
    (poll,) = [s for s in bridge.sent_to(OWNER) if s.poll]
    assert poll.poll is not None and poll.poll[1][0].startswith("Allow this command once")
    bridge.vote(OWNER, poll, poll.poll[1][0])
    wait_for(bridge, OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
