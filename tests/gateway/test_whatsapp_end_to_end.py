"""WhatsApp through a real ``hermes gateway run`` process: the WhatsApp plugin (pywa,
unmodified) against the loopback Cloud API, whose people's messages reach the gateway as
signed webhooks, and are POSTed again until the gateway answers 200, as Meta does."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_whatsapp.testing import (
    APP_SECRET,
    PHONE_ID,
    TOKEN,
    VERIFY_TOKEN,
    FakeWhatsApp,
    SentMessage,
)

from hermes_testkit import Reply
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes, spoken_ogg
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "15551234567"
STRANGER = "15559876543"
SECRETS = (
    f"WHATSAPP_CLOUD_ACCESS_TOKEN={TOKEN}\nWHATSAPP_CLOUD_PHONE_NUMBER_ID={PHONE_ID}\n"
    f"WHATSAPP_CLOUD_APP_SECRET={APP_SECRET}\nWHATSAPP_CLOUD_VERIFY_TOKEN={VERIFY_TOKEN}\n"
)


@pytest.fixture
def meta() -> Iterator[FakeWhatsApp]:
    with FakeWhatsApp() as fake:
        yield fake


@pytest.fixture
def whatsapp_gateway(platform_process, meta: FakeWhatsApp) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only WhatsApp, letting OWNER in; returns once the
    webhook answers Meta's verification."""
    port = free_port()
    meta.webhook_url = f"http://127.0.0.1:{port}/whatsapp/webhook"
    section = f"  whatsapp:\n    api_url: {meta.api_url}\n    allowed_users: ['{OWNER}']\n"

    def start(top: str = "", model: str = "", write: bool = True) -> GatewayProcess:
        return platform_process(  # type: ignore[no-any-return]
            section,
            ready=lambda: _verified(meta.webhook_url),
            dotenv=SECRETS,
            top=top,
            model=model,
            gateway=f"  http_port: {port}\n",
            write=write,
        )

    return start


def _verified(url: str | None) -> bool:
    query = f"hub.mode=subscribe&hub.verify_token={VERIFY_TOKEN}&hub.challenge=42"
    try:
        with urllib.request.urlopen(f"{url}?{query}", timeout=5) as answer:
            return answer.read() == b"42"
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def wait_for(meta: FakeWhatsApp, user: str, text: str, timeout: float = 90) -> SentMessage:
    found: list[SentMessage] = []
    wait_until(lambda: found.extend(m for m in meta.sent(user) if text in m.text) or found, timeout)
    return found[0]


def _signed_message(text: str) -> bytes:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_ID},
        "messages": [
            {"from": OWNER, "id": f"wamid.{text}", "type": "text", "text": {"body": text}}
        ],
    }
    change = {"field": "messages", "value": value}
    return json.dumps(
        {"object": "whatsapp_business_account", "entry": [{"changes": [change]}]}
    ).encode()


def test_answered_once_strangers_cost_nothing_and_unsigned_posts_get_401(
    whatsapp_gateway, meta, openai_server
):
    openai_server.queue(Reply.say("Hello from **Hermes**."))
    whatsapp_gateway()
    meta.user_says(OWNER, "hi there")
    reply = wait_for(meta, OWNER, "Hello from")
    assert reply.text == "Hello from *Hermes*."  # WhatsApp's bold
    meta.deliver_again()  # Meta's redelivery of a change already taken
    body = _signed_message("forged")
    answers = [
        meta.post(body, None),
        meta.post(body, meta.sign(body, "not-the-app-secret")),
        meta.post(body, meta.sign(body, "the-secret-before-it-was-rotated")),
    ]
    assert answers == [401, 401, 401]
    meta.user_says(STRANGER, "let me in")
    offer = wait_for(meta, STRANGER, "hermes pairing approve")
    assert "whatsapp" in offer.text
    time.sleep(1.0)
    assert len([m for m in meta.sent(OWNER) if "Hello from" in m.text]) == 1
    assert user_texts(openai_server) == [["hi there"]]  # one model call, for the owner only
    assert meta.reads  # a read receipt (with typing) went out


def test_a_message_sent_while_the_gateway_was_down_is_answered_once(
    whatsapp_gateway, meta, openai_server
):
    openai_server.queue(Reply.say("first answer"), Reply.say("answered after the restart"))
    gateway = whatsapp_gateway()
    meta.user_says(OWNER, "one")
    wait_for(meta, OWNER, "first answer")
    gateway.kill()  # kill -9
    meta.user_says(OWNER, "two")  # Meta gets no 200 and keeps POSTing
    time.sleep(1.0)
    whatsapp_gateway(write=False)
    wait_for(meta, OWNER, "answered after the restart", timeout=60)
    time.sleep(1.0)
    assert len([m for m in meta.sent(OWNER) if "after the restart" in m.text]) == 1
    assert user_texts(openai_server)[-1] == ["one", "two"]
    assert 0 in meta.webhook_answers  # it did find the gateway down


def test_a_photo_reaches_the_model_as_an_image(whatsapp_gateway, meta, openai_server):
    openai_server.queue(Reply.say("A red picture."))
    whatsapp_gateway(model="  vision: true\n")
    meta.user_sends_file(OWNER, photo_bytes(), "photo.jpg", "image/jpeg", caption="what is this?")
    wait_for(meta, OWNER, "A red picture.")
    body = openai_server.requests[0].json
    assert body["messages"][-1]["content"][0] == {"type": "text", "text": "what is this?"}
    ((mime, _data),) = images_in(body)
    assert mime == "image/jpeg"


@pytest.mark.usefixtures("speech_tools")
def test_a_voice_note_is_transcribed_and_a_spoken_reply_goes_out_as_one(
    whatsapp_gateway, meta, openai_server
):
    spoken = "Good morning. Your first meeting is at ten."
    with ScriptedAudioServer(transcripts=["say good morning out loud"]) as audio:
        openai_server.queue(
            Reply.tool_call("text_to_speech", {"text": spoken}), Reply.say("Here it is, spoken.")
        )
        whatsapp_gateway(
            top=f"voice:\n  transcription:\n    base_url: {audio.base_url}\n"
            "agent:\n  add_toolsets: [voice]\n"
        )
        meta.user_sends_file(
            OWNER, spoken_ogg("say good morning out loud"), "v.ogg", "audio/ogg", voice=True
        )
        wait_for(meta, OWNER, "Here it is, spoken.")
        wait_until(lambda: any(m.file for m in meta.sent(OWNER)))
    sent = openai_server.requests[0].json["messages"][-1]["content"]
    assert sent.startswith("[audio: voice-note.ogg, audio/ogg,")
    assert sent.endswith("say good morning out loud")
    (note,) = [m for m in meta.sent(OWNER) if m.file]
    assert note.type == "audio" and note.file is not None and note.file[2] == "audio/ogg"


def test_an_approval_is_answered_with_whatsapps_own_control(
    whatsapp_gateway, meta, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    whatsapp_gateway()
    meta.user_says(OWNER, "open up that folder")
    question = wait_for(meta, OWNER, "chmod -R 777")
    assert question.type == "interactive" and question.buttons
    once = next(choice for choice, _title in question.buttons if choice.endswith(":once"))
    assert oct(target.stat().st_mode)[-3:] != "777"
    meta.press(OWNER, question, once)
    wait_for(meta, OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
