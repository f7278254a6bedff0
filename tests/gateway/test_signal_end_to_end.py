"""Signal through a real ``hermes gateway run`` process: the Signal plugin against the
loopback signal-cli daemon, whose event stream keeps what arrives while no gateway is
connected (``--receive-mode=on-connection``) and delivers it when one connects."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_signal.testing import ACCOUNT, FakeSignalCli, Sent

from hermes_testkit import Reply
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes, spoken_ogg

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "+15551234567"
STRANGER = "+15559876543"
GROUP = "a2l0LWdyb3VwLWlk"


@pytest.fixture
def daemon() -> Iterator[FakeSignalCli]:
    with FakeSignalCli() as fake:
        yield fake


@pytest.fixture
def signal_gateway(platform_process, daemon: FakeSignalCli) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only Signal, letting OWNER in; returns once its
    event stream is connected."""
    section = (
        f"  signal:\n    daemon_url: {daemon.url}\n    account: '{ACCOUNT}'\n"
        f"    allowed_users: ['{OWNER}']\n"
    )

    def start(top: str = "", model: str = "", write: bool = True) -> GatewayProcess:
        connected = daemon.connections
        return platform_process(  # type: ignore[no-any-return]
            section,
            ready=lambda: daemon.connections > connected,
            top=top,
            model=model,
            write=write,
        )

    return start


def wait_for(daemon: FakeSignalCli, user: str, text: str, timeout: float = 90) -> Sent:
    found: list[Sent] = []
    wait_until(
        lambda: found.extend(s for s in daemon.sent_to(user) if text in s.text) or found, timeout
    )
    return found[0]


def test_answered_once_a_stranger_costs_nothing_and_a_group_needs_a_mention(
    signal_gateway, daemon, openai_server
):
    openai_server.queue(Reply.say("Hello from Hermes."), Reply.say("Hello, group."))
    signal_gateway()
    daemon.user_says(OWNER, "hi there")
    wait_for(daemon, OWNER, "Hello from Hermes.")
    daemon.deliver_again()  # the same envelope again (a reconnect's overlap)
    daemon.user_says(STRANGER, "let me in")
    wait_for(daemon, STRANGER, "hermes pairing approve")
    daemon.user_says(OWNER, "chatter in the group", group=GROUP)  # not addressed
    daemon.user_says(OWNER, "summarise", group=GROUP, mention=True)
    wait_until(lambda: any(s.group_id == GROUP for s in daemon.sent))
    time.sleep(1.0)
    assert len([s for s in daemon.sent_to(OWNER) if "Hello from" in s.text]) == 1
    assert [t[-1] for t in user_texts(openai_server)] == ["hi there", "@bot summarise"]
    assert any(method == "sendReceipt" for method, _ in daemon.calls)


def test_a_message_sent_while_the_gateway_was_down_is_answered_once(
    signal_gateway, daemon, openai_server
):
    openai_server.queue(Reply.say("first answer"), Reply.say("answered after the restart"))
    gateway = signal_gateway()
    daemon.user_says(OWNER, "one")
    wait_for(daemon, OWNER, "first answer")
    gateway.kill()  # kill -9
    # signal-cli notices the stream is gone at its next write (a keepalive): what arrives
    # before that can be lost, as the plugin's page says; what arrives after stays queued.
    wait_until(lambda: daemon.streams == 0)
    daemon.user_says(OWNER, "two")
    signal_gateway(write=False)
    wait_for(daemon, OWNER, "answered after the restart", timeout=60)
    time.sleep(1.0)
    assert len([s for s in daemon.sent_to(OWNER) if "after the restart" in s.text]) == 1
    assert user_texts(openai_server)[-1] == ["one", "two"]


def test_a_photo_reaches_the_model_as_an_image(signal_gateway, daemon, openai_server):
    openai_server.queue(Reply.say("A red picture."))
    signal_gateway(model="  vision: true\n")
    daemon.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg")
    wait_for(daemon, OWNER, "A red picture.")
    ((mime, _data),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg"


@pytest.mark.usefixtures("speech_tools")
def test_a_voice_note_is_transcribed_and_a_spoken_reply_goes_out_as_one(
    signal_gateway, daemon, openai_server
):
    with ScriptedAudioServer(transcripts=["say good morning out loud"]) as audio:
        openai_server.queue(
            Reply.tool_call("text_to_speech", {"text": "Good morning."}),
            Reply.say("Here it is, spoken."),
        )
        signal_gateway(
            top=f"voice:\n  transcription:\n    base_url: {audio.base_url}\n"
            "agent:\n  add_toolsets: [voice]\n"
        )
        voice = spoken_ogg("say good morning out loud")
        daemon.user_sends_file(OWNER, voice, "voice.ogg", "audio/ogg")
        wait_for(daemon, OWNER, "Here it is, spoken.")
        wait_until(lambda: any(s.files for s in daemon.sent_to(OWNER)))
    sent = openai_server.requests[0].json["messages"][-1]["content"]
    assert sent.endswith("say good morning out loud")
    (note,) = [s for s in daemon.sent_to(OWNER) if s.files]
    assert note.files[0][2] == "audio/ogg" and note.files[0][1][:4] == b"OggS"


def test_an_approval_is_answered_with_a_reaction(signal_gateway, daemon, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    signal_gateway()
    daemon.user_says(OWNER, "open up that folder")
    question = wait_for(daemon, OWNER, "chmod -R 777")
    assert "React 👍 for once" in question.text
    daemon.react(OWNER, question, "👍")
    wait_for(daemon, OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
