"""Files through the real Telegram plugin and the fake Bot API: a photo reaches a model that
sees as an image part, and a text-only model as the auxiliary model's description; a
disguised or oversized file gets one line back and never reaches the model; a stranger's
file is never downloaded."""

from __future__ import annotations

import io
import json
import subprocess

import pytest
from PIL import Image

from hermes_testkit import Reply
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import (
    disguised_program,
    photo_bytes,
    spoken_ogg,
)
from hermes_testkit.openai_server import ScriptedOpenAIServer

from .conftest import OWNER

STRANGER = 777


def test_a_photo_reaches_a_vision_model_as_an_image(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("A red picture."))
    running_gateway(model="  vision: true\n")
    telegram.user_sends_photo(OWNER, photo_bytes(), caption="what is this?")
    telegram.wait_for_message(OWNER, "A red picture.")
    body = openai_server.requests[0].json
    user = body["messages"][-1]
    assert user["content"][0] == {"type": "text", "text": "what is this?"}
    ((mime, data),) = images_in(body)
    image = Image.open(io.BytesIO(data))
    assert mime == "image/jpeg" and max(image.size) <= 1568 and not image.getexif()
    assert telegram.downloads == ["files/file_2.jpg"]  # the largest size, not the thumbnail


def test_a_photo_without_a_caption_is_a_message_too(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("Seen."))
    running_gateway(model="  vision: true\n")
    telegram.user_sends_photo(OWNER, photo_bytes())
    telegram.wait_for_message(OWNER, "Seen.")
    content = openai_server.requests[0].json["messages"][-1]["content"]
    assert [part["type"] for part in content] == ["image_url"]


def test_a_photo_reaches_a_text_only_model_as_a_description(
    running_gateway, telegram, openai_server
):
    with ScriptedOpenAIServer() as helper:
        helper.queue(Reply.say("A solid red rectangle."))
        openai_server.queue(Reply.say("It is red."))
        running_gateway(
            top=f"providers:\n  eyes:\n    base_url: {helper.base_url}\n    models: [gpt-4o]\n"
            "auxiliary:\n  provider: eyes\n  model: gpt-4o\n"
        )
        telegram.user_sends_photo(OWNER, photo_bytes(), caption="colour?")
        telegram.wait_for_message(OWNER, "It is red.")
        assert len(images_in(helper.requests[0].json)) == 1
        sent = openai_server.requests[0].json["messages"][-1]["content"]
        assert sent.startswith("colour?\n\n[image: photo.jpg, image/jpeg,")
        assert sent.endswith("(described by gpt-4o)\nA solid red rectangle.")


def test_a_disguised_file_gets_one_line_and_never_reaches_the_model(
    running_gateway, telegram, openai_server
):
    running_gateway()
    telegram.user_sends_document(
        OWNER, disguised_program(), file_name="invoice.pdf", mime_type="application/pdf"
    )
    line = telegram.wait_for_message(OWNER, "invoice.pdf is refused")
    assert line.visible == (
        "invoice.pdf is refused: it is an executable program (application/x-executable) "
        "sent as application/pdf"
    )
    telegram.user_says(OWNER, "still there?")
    openai_server.queue(Reply.say("Yes."))
    telegram.wait_for_message(OWNER, "Yes.")
    assert len(openai_server.requests) == 1  # only the text message


def test_an_oversized_file_is_refused_before_it_is_downloaded(
    running_gateway, telegram, openai_server
):
    running_gateway(top="media:\n  max_mb:\n    document: 1\n")
    telegram.user_sends_document(
        OWNER,
        b"%PDF-1.4 small",
        file_name="big.pdf",
        mime_type="application/pdf",
        file_size=5_000_000,
    )
    line = telegram.wait_for_message(OWNER, "big.pdf is refused")
    assert "5.0 MB is over the 1.0 MB cap for a document (media.max_mb.document)" in line.visible
    assert telegram.downloads == [] and openai_server.requests == []


def test_a_strangers_file_is_not_downloaded(running_gateway, telegram, openai_server):
    running_gateway()
    telegram.user_sends_photo(STRANGER, photo_bytes(), caption="hi")
    telegram.wait_for_message(STRANGER, "pair")  # the pairing answer, as for any message
    assert telegram.downloads == [] and openai_server.requests == []


needs_speech = pytest.mark.usefixtures("speech_tools")


@needs_speech
def test_a_voice_note_is_transcribed_and_answered(running_gateway, telegram, openai_server):
    with ScriptedAudioServer(transcripts=["remind me to water the plants"]) as audio:
        openai_server.queue(Reply.say("I will remind you."))
        running_gateway(top=f"voice:\n  transcription:\n    base_url: {audio.base_url}\n")
        voice = spoken_ogg("remind me to water the plants")
        telegram.user_sends_voice(OWNER, voice, duration=2)
        telegram.wait_for_message(OWNER, "I will remind you.")
        (upload,) = audio.uploads
        assert upload.filename == "voice.ogg" and upload.content_type == "audio/ogg"
        assert upload.data == voice and upload.model == "whisper-1"
        sent = openai_server.requests[0].json["messages"][-1]["content"]
        assert sent.startswith("[audio: voice.ogg, audio/ogg,")
        assert sent.endswith("(transcribed by openai-compatible)\nremind me to water the plants")


def test_a_voice_note_with_no_transcriber_set_up_still_reaches_the_model(
    running_gateway, telegram, openai_server
):
    openai_server.queue(Reply.say("I cannot listen to it."))
    running_gateway()
    telegram.user_sends_voice(OWNER, b"OggS" + bytes(200), duration=1)
    telegram.wait_for_message(OWNER, "I cannot listen to it.")
    sent = openai_server.requests[0].json["messages"][-1]["content"]
    assert sent.startswith("[audio: voice.ogg, audio/ogg,")


@needs_speech
def test_a_spoken_reply_is_delivered_as_a_voice_note(
    running_gateway, telegram, openai_server, tmp_path
):
    spoken = "Good morning. It is sunny, and your first meeting is at ten."
    openai_server.queue(
        Reply.tool_call("text_to_speech", {"text": spoken}),
        Reply.say("Here it is, spoken."),
    )
    running_gateway(top="agent:\n  add_toolsets: [voice]\n")
    telegram.user_says(OWNER, "say good morning out loud")
    telegram.wait_for_message(OWNER, "Here it is, spoken.")
    note = telegram.wait_for_file(OWNER)
    assert note.method == "sendVoice" and note.upload.content_type == "audio/ogg"
    assert note.upload.filename == "reply.ogg"
    path = tmp_path / "received.ogg"
    path.write_bytes(note.upload.data)
    probed = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,channels,sample_rate"
         ":format=duration", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    facts = json.loads(probed.stdout)
    stream = facts["streams"][0]
    assert (stream["codec_name"], stream["channels"], stream["sample_rate"]) == ("opus", 1, "48000")
    assert 2.5 < float(facts["format"]["duration"]) < 12.0  # 12 words at espeak's pace
    tools = [tool["function"]["name"] for tool in openai_server.requests[0].json["tools"]]
    assert "text_to_speech" in tools
