"""SMS through a real ``hermes gateway run`` process: the SMS plugin (the official twilio
library, unmodified) against the loopback Twilio, which POSTs each text once, signed by
the same library, as Twilio does (and does not POST again when the gateway is down)."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_sms.testing import ACCOUNT_SID, AUTH_TOKEN, NUMBER, FakeTwilio

from hermes_testkit import Reply
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import photo_bytes, spoken_ogg
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "+15551234567"
STRANGER = "+15559876543"
SECRETS = (
    f"TWILIO_ACCOUNT_SID={ACCOUNT_SID}\nTWILIO_AUTH_TOKEN={AUTH_TOKEN}\n"
    f"TWILIO_PHONE_NUMBER={NUMBER}\n"
)


@pytest.fixture
def twilio() -> Iterator[FakeTwilio]:
    with FakeTwilio() as fake:
        yield fake


def _listening(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=5)
    except urllib.error.HTTPError:
        return True  # it answers (405: texts are POSTed)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False
    return True


@pytest.fixture
def sms_gateway(platform_process, twilio: FakeTwilio) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only SMS, letting OWNER in; returns once the
    webhook listens."""
    port = free_port()
    twilio.webhook_url = f"http://127.0.0.1:{port}/sms/webhook"
    section = (
        f"  sms:\n    api_url: {twilio.api_url}\n    webhook_url: {twilio.webhook_url}\n"
        f"    allowed_users: ['{OWNER}']\n"
    )

    def start(top: str = "", model: str = "", write: bool = True) -> GatewayProcess:
        return platform_process(  # type: ignore[no-any-return]
            section,
            ready=lambda: _listening(str(twilio.webhook_url)),
            dotenv=SECRETS,
            top=top,
            model=model,
            gateway=f"  http_port: {port}\n",
            write=write,
        )

    return start


def test_answered_once_strangers_cost_nothing_and_unsigned_posts_get_401(
    sms_gateway, twilio, openai_server
):
    openai_server.queue(Reply.say("Hello from **Hermes**."))
    sms_gateway()
    asked = twilio.user_texts(OWNER, "hi there")
    assert twilio.wait_for(OWNER, "Hello from").body == "Hello from Hermes."  # plain text
    twilio.deliver(asked)  # the same text POSTed again
    url = str(twilio.webhook_url)
    forged = {"From": OWNER, "To": NUMBER, "Body": "forged", "MessageSid": "SM" + "e" * 32}
    assert [
        twilio.post(forged, None)[0],
        twilio.post(forged, twilio.sign(url, forged, "not-the-auth-token"))[0],
        twilio.post(forged, twilio.sign(url, forged, "the-token-before-it-was-rotated"))[0],
    ] == [401, 401, 401]
    twilio.user_texts(STRANGER, "who is this?")
    twilio.user_texts(OWNER, "HELP")  # Twilio's Advanced Opt-Out answers it: not the model
    wait_until(lambda: len(twilio.webhook_answers) >= 4)
    time.sleep(1.0)
    assert len([t for t in twilio.sent(OWNER) if "Hello from" in t.body]) == 1
    assert twilio.sent(STRANGER) == []  # no pairing text by default: texts cost money
    assert user_texts(openai_server) == [["hi there"]]  # one model call, the owner's


def test_a_text_sent_while_the_gateway_was_down_is_answered_once(
    sms_gateway, twilio, openai_server
):
    openai_server.queue(Reply.say("first answer"), Reply.say("answered after the restart"))
    gateway = sms_gateway()
    twilio.user_texts(OWNER, "one")
    twilio.wait_for(OWNER, "first answer")
    gateway.kill()  # kill -9
    twilio.user_texts(OWNER, "two")  # nothing listens: Twilio does not try again
    wait_until(lambda: twilio.webhook_answers[-1][0] == 0)
    sms_gateway(write=False)
    twilio.wait_for(OWNER, "answered after the restart", timeout=60)
    time.sleep(1.0)
    assert len([t for t in twilio.sent(OWNER) if "after the restart" in t.body]) == 1
    assert user_texts(openai_server)[-1] == ["one", "two"]


def test_an_mms_picture_reaches_the_model_as_an_image(sms_gateway, twilio, openai_server):
    openai_server.queue(Reply.say("A red picture."))
    sms_gateway(model="  vision: true\n")
    twilio.user_texts(OWNER, "what is this?", files=[(photo_bytes(), "image/jpeg")])
    twilio.wait_for(OWNER, "A red picture.")
    body = openai_server.requests[0].json
    assert body["messages"][-1]["content"][0] == {"type": "text", "text": "what is this?"}
    ((mime, _data),) = images_in(body)
    assert mime == "image/jpeg"


@pytest.mark.usefixtures("speech_tools")
def test_a_voice_mms_is_transcribed_and_a_spoken_reply_goes_out_as_an_mms(
    sms_gateway, twilio, openai_server
):
    with ScriptedAudioServer(transcripts=["say good morning out loud"]) as audio:
        openai_server.queue(
            Reply.tool_call("text_to_speech", {"text": "Good morning."}),
            Reply.say("Here it is, spoken."),
        )
        sms_gateway(
            top=f"voice:\n  transcription:\n    base_url: {audio.base_url}\n"
            "agent:\n  add_toolsets: [voice]\n"
        )
        twilio.user_texts(OWNER, "", files=[(spoken_ogg("say good morning out loud"), "audio/ogg")])
        twilio.wait_for(OWNER, "Here it is, spoken.")
        wait_until(lambda: any(t.media for t in twilio.sent(OWNER)))
    sent = openai_server.requests[0].json["messages"][-1]["content"]
    assert sent.endswith("say good morning out loud")
    (mms,) = [t for t in twilio.sent(OWNER) if t.media]
    assert mms.media[0][2] == "audio/ogg" and mms.media[0][1][:4] == b"OggS"


def test_an_approval_is_answered_by_texting_the_choice(
    sms_gateway, twilio, openai_server, tmp_path
):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    sms_gateway()
    twilio.user_texts(OWNER, "open up that folder")
    question = twilio.wait_for(OWNER, "chmod -R 777")
    assert "Text back one of" in question.body and "once - Allow this command once" in question.body
    assert oct(target.stat().st_mode)[-3:] != "777"
    twilio.user_texts(OWNER, "once")
    twilio.wait_for(OWNER, "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
