"""The voice plugin against the kit's OpenAI-compatible audio server and the real espeak-ng
and ffmpeg: a voice note is uploaded as the protocol wants it and its transcript returned;
a spoken reply is an OGG/Opus file ffprobe reads as audio of a plausible length."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import hermes_plugin_voice
import pytest
from hermes_plugin_voice.speech import SpeechFailed, duration_seconds
from hermes_plugin_voice.tool import text_to_speech
from hermes_plugin_voice.transcription import VOICE_REPLY_HINT, OpenAICompatibleTranscriber

from hermes_sdk.media import Attachment, MediaCache
from hermes_sdk.tooling import ToolContext
from hermes_sdk.transcription import TranscriberContext, TranscriberUnavailable
from hermes_testkit import PluginTests
from hermes_testkit.audio_server import ScriptedAudioServer
from hermes_testkit.media_files import spoken_ogg

needs_speech = pytest.mark.usefixtures("speech_tools")


class TestPlugin(PluginTests):
    plugin = hermes_plugin_voice
    pyproject = Path(__file__).parents[1] / "pyproject.toml"


def _transcriber(config: dict[str, Any], secrets: dict[str, str] | None = None) -> Any:
    return OpenAICompatibleTranscriber(
        TranscriberContext(home="/nowhere", config=config, secrets=(secrets or {}).get)
    )


def _voice_note(tmp_path: Path) -> Attachment:
    data = spoken_ogg("water the plants")
    return MediaCache(tmp_path / "media").ingest(data, name="voice.ogg", declared="audio/ogg")


@needs_speech
def test_a_voice_note_is_uploaded_as_multipart_and_transcribed(tmp_path: Path) -> None:
    with ScriptedAudioServer(transcripts=["water the plants"]) as audio:
        transcriber = _transcriber(
            {"voice": {"transcription": {"base_url": audio.base_url, "api_key_env": "STT_KEY"}}},
            {"STT_KEY": "sk-stt"},
        )
        note = _voice_note(tmp_path)

        async def transcribed() -> str:
            try:
                return str(await transcriber.transcribe(note))
            finally:
                await transcriber.aclose()

        assert asyncio.run(transcribed()) == "water the plants"
        (upload,) = audio.uploads
        assert upload.model == "whisper-1" and upload.fields["response_format"] == "json"
        assert upload.filename == "voice.ogg" and upload.content_type == "audio/ogg"
        assert upload.data == Path(note.path).read_bytes() and upload.data.startswith(b"OggS")
        assert upload.authorization == "Bearer sk-stt"


@needs_speech
def test_with_reply_to_voice_the_transcript_asks_for_a_spoken_answer(tmp_path: Path) -> None:
    with ScriptedAudioServer(transcripts=["what time is it"]) as audio:
        config = {
            "voice": {
                "transcription": {"base_url": audio.base_url},
                "speech": {"reply_to_voice": True},
            }
        }
        transcriber = _transcriber(config)
        note = _voice_note(tmp_path)

        async def transcribed() -> str:
            try:
                return str(await transcriber.transcribe(note))
            finally:
                await transcriber.aclose()

        text = asyncio.run(transcribed())
    assert text == f"what time is it\n{VOICE_REPLY_HINT}"


def test_without_a_server_it_says_what_to_set() -> None:
    with pytest.raises(TranscriberUnavailable, match=r"set voice\.transcription\.base_url"):
        asyncio.run(
            _transcriber({}).transcribe(
                Attachment(kind="audio", mime="audio/ogg", size=1, path="/x")
            )
        )


@needs_speech
def test_a_server_error_is_one_line(tmp_path: Path) -> None:
    with ScriptedAudioServer(fail_with=(401, "Incorrect API key provided: sk-***")) as audio:
        transcriber = _transcriber({"voice": {"transcription": {"base_url": audio.base_url}}})
        with pytest.raises(RuntimeError) as caught:
            asyncio.run(transcriber.transcribe(_voice_note(tmp_path)))
        assert str(caught.value) == "the server answered 401: Incorrect API key provided: sk-***"


def _context(tmp_path: Path, config: dict[str, Any], sent: list[Attachment]) -> ToolContext:
    return ToolContext(
        session_id="s", home=str(tmp_path), cwd=str(tmp_path), config=config, send=sent.append
    )


def _probe(path: str) -> tuple[str, float]:
    said = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name:format=duration",
         "-of", "csv=p=0", path],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return said[0], float(said[1])


@needs_speech
def test_espeak_speaks_a_reply_as_an_ogg_opus_voice_note(tmp_path: Path) -> None:
    sent: list[Attachment] = []
    text = "Your plants were watered this morning. The next time is tomorrow at nine."
    result = asyncio.run(text_to_speech(text, context=_context(tmp_path, {}, sent)))
    assert result.startswith("Spoken (") and "espeak-ng" in result
    (note,) = sent
    assert note.kind == "audio" and note.mime == "audio/ogg" and note.name == "reply.ogg"
    codec, seconds = _probe(note.path)
    assert codec == "opus"
    assert 2.0 < seconds < 12.0, seconds  # about 15 words at espeak's 175 words a minute


@needs_speech
def test_an_openai_compatible_speech_server_is_used_when_chosen(tmp_path: Path) -> None:
    sent: list[Attachment] = []
    with ScriptedAudioServer() as audio:
        config = {"voice": {"speech": {"provider": "openai-compatible", "base_url": audio.base_url,
                                       "voice": "nova"}}}  # fmt: skip
        asyncio.run(text_to_speech("x" * 50, context=_context(tmp_path, config, sent)))
        (request,) = audio.speech_requests
        assert request.body == {"model": "tts-1", "input": "x" * 50, "voice": "nova",
                                "response_format": "wav"}  # fmt: skip
    codec, seconds = _probe(sent[0].path)
    assert codec == "opus" and abs(seconds - 3.0) < 0.3  # the server's 3 s tone


def test_an_empty_or_too_long_text_is_refused(tmp_path: Path) -> None:
    sent: list[Attachment] = []
    context = _context(tmp_path, {"voice": {"speech": {"max_chars": 10}}}, sent)
    with pytest.raises(ValueError, match="text is empty"):
        asyncio.run(text_to_speech("  ", context=context))
    with pytest.raises(ValueError, match=r"over voice\.speech\.max_chars"):
        asyncio.run(text_to_speech("a" * 11, context=context))
    assert sent == []


def test_a_missing_program_says_what_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    with pytest.raises(SpeechFailed, match=r"espeak-ng is not installed \(apt-get install"):
        asyncio.run(text_to_speech("hello", context=_context(tmp_path, {}, [])))
    assert duration_seconds(b"not audio") is None


def test_a_piped_wavs_length_is_read_from_its_size() -> None:
    from hermes_testkit.audio_server import tone_wav

    wav = bytearray(tone_wav(2.0))
    wav[40:44] = (0x7FFFFFFF).to_bytes(4, "little")  # as a WAV written to a pipe says
    assert duration_seconds(bytes(wav)) == pytest.approx(2.0, abs=0.01)


def test_doctor_says_what_voice_can_do_here(tmp_path: Path, monkeypatch) -> None:
    from hermes_plugin_voice.health import voice_findings

    from hermes_sdk.health import HealthContext

    def findings(config: dict[str, Any]) -> list[tuple[str, str]]:
        context = HealthContext(home=str(tmp_path), config=config)
        return [(f.level, f.message) for f in voice_findings(context)]

    assert findings({}) == [
        ("ok", "voice notes are not transcribed (voice.transcription.base_url turns it on)")
    ]
    monkeypatch.setenv("PATH", str(tmp_path))
    spoken = {
        "agent": {"add_toolsets": ["voice"]},
        "voice": {"transcription": {"base_url": "http://w/v1"}},
    }
    assert findings(spoken) == [
        ("ok", "voice notes are transcribed by http://w/v1"),
        ("warning", "text_to_speech needs ffmpeg, espeak-ng, which is not on PATH"),
    ]
