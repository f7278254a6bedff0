"""iMessage through a real ``hermes gateway run`` process: the BlueBubbles plugin against the
loopback BlueBubbles server, whose webhooks are posted once and lost when the gateway is
down, while its messages stay in its database for the gateway to read back."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_bluebubbles.testing import PASSWORD, FakeBlueBubbles, Sent

from hermes_testkit import Reply
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes, spoken
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "+15551234567"
STRANGER = "+15559876543"
GROUP = "iMessage;+;chat4242"


@pytest.fixture
def server() -> Iterator[FakeBlueBubbles]:
    with FakeBlueBubbles() as fake:
        yield fake


@pytest.fixture
def imessage_gateway(platform_process, server: FakeBlueBubbles) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only BlueBubbles, letting OWNER in; returns once it
    has registered its webhook and read where the server stands."""
    port = free_port()
    section = (
        f"  bluebubbles:\n    server_url: {server.url}\n    allowed_users: ['{OWNER}']\n"
        "    poll_seconds: 600\n"  # only the webhooks and the start read, in these tests
    )

    def start(top: str = "", model: str = "", write: bool = True, more: str = "") -> GatewayProcess:
        read = server.queries
        return platform_process(  # type: ignore[no-any-return]
            section + more,
            ready=lambda: server.webhooks and server.queries > read + 2,
            dotenv=f"BLUEBUBBLES_PASSWORD={PASSWORD}\n",
            top=top,
            model=model,
            gateway=f"  http_port: {port}\n",
            write=write,
        )

    return start


def wait_for(server: FakeBlueBubbles, user: str, text: str, timeout: float = 90) -> Sent:
    found: list[Sent] = []
    wait_until(
        lambda: found.extend(s for s in server.sent_to(user) if text in s.text) or found, timeout
    )
    return found[0]


def test_answered_once_a_stranger_costs_nothing_and_a_group_needs_its_wake_word(
    imessage_gateway, server, openai_server
):
    openai_server.queue(Reply.say("Hello from Hermes."), Reply.say("Hello, group."))
    imessage_gateway(more="    pairing: true\n")  # off by default: see the next test
    server.user_says(OWNER, "hi there")
    wait_for(server, OWNER, "Hello from Hermes.")
    server.deliver_again()  # the same webhook again (a replay)
    server.user_says(STRANGER, "let me in")
    wait_for(server, STRANGER, "hermes pairing approve")
    server.user_says(OWNER, "chatter in the group", group=GROUP)  # not addressed
    server.user_says(OWNER, "Hermes, summarise", group=GROUP)
    wait_until(lambda: any(s.chat_guid == GROUP for s in server.sent))
    time.sleep(1.0)
    assert len([s for s in server.sent_to(OWNER) if "Hello from" in s.text]) == 1
    assert [t[-1] for t in user_texts(openai_server)] == ["hi there", "summarise"]
    assert f"iMessage;-;{OWNER}" in server.marked_read


def test_a_message_sent_while_the_gateway_was_down_is_answered_once(
    imessage_gateway, server, openai_server
):
    openai_server.queue(Reply.say("first answer"), Reply.say("answered after the restart"))
    gateway = imessage_gateway()
    server.user_says(OWNER, "one")
    wait_for(server, OWNER, "first answer")
    gateway.kill()  # kill -9
    server.user_says(OWNER, "two")  # its webhook fails and is never sent again
    wait_until(lambda: server.posted and server.posted[-1][1] != 200)
    imessage_gateway(write=False)
    wait_for(server, OWNER, "answered after the restart", timeout=60)
    time.sleep(1.0)
    assert len([s for s in server.sent_to(OWNER) if "after the restart" in s.text]) == 1
    assert user_texts(openai_server)[-1] == ["one", "two"]


def test_a_photo_reaches_the_model_as_an_image(imessage_gateway, server, openai_server):
    openai_server.queue(Reply.say("A red picture."))
    imessage_gateway(model="  vision: true\n")
    server.user_sends_file(OWNER, photo_bytes(), "IMG_0001.jpeg", "image/jpeg")
    wait_for(server, OWNER, "A red picture.")
    ((mime, _data),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"


@pytest.mark.usefixtures("speech_tools")
def test_a_voice_note_is_transcribed_and_a_spoken_reply_goes_out_as_a_file(
    imessage_gateway, server, openai_server
):
    with ScriptedAudioServer(transcripts=["say good morning out loud"]) as audio:
        openai_server.queue(
            Reply.tool_call("text_to_speech", {"text": "Good morning."}),
            Reply.say("Here it is, spoken."),
        )
        imessage_gateway(
            top=f"voice:\n  transcription:\n    base_url: {audio.base_url}\n"
            "agent:\n  add_toolsets: [voice]\n"
        )
        said = "say good morning out loud"
        # An iPhone's voice note is CAF; the server hands it to its clients as MP3.
        server.user_sends_file(
            OWNER,
            spoken(said, "caf"),
            "Audio Message.caf",
            "audio/x-caf",
            converted=(spoken(said, "mp3"), "audio/mp3"),
        )
        wait_for(server, OWNER, "Here it is, spoken.")
        wait_until(lambda: any(s.files for s in server.sent_to(OWNER)))
    sent = openai_server.requests[0].json["messages"][-1]["content"]
    assert sent.endswith("say good morning out loud")
    (note,) = [s for s in server.sent_to(OWNER) if s.files]
    assert note.files[0][1][:4] == b"OggS"


def test_an_approval_is_answered_with_a_tapback(imessage_gateway, server, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    imessage_gateway()
    server.user_says(OWNER, "open up that folder")
    question = wait_for(server, OWNER, "chmod -R 777")
    assert "Tap back 👍 for once" in question.text
    server.tapback(OWNER, question, "like")
    wait_for(server, OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"


def test_without_pairing_a_stranger_gets_nothing_and_costs_nothing(
    imessage_gateway, server, openai_server
):
    openai_server.queue(Reply.say("Hello from Hermes."))
    imessage_gateway()
    server.user_says(STRANGER, "your parcel is waiting: reply YES")
    server.user_says(OWNER, "hi")
    wait_for(server, OWNER, "Hello from Hermes.")
    time.sleep(1.0)
    assert server.sent_to(STRANGER) == []
    assert user_texts(openai_server) == [["hi"]]
