"""A scripted OpenAI-compatible audio server on loopback: speech-to-text
(``POST /v1/audio/transcriptions``) and text-to-speech (``POST /v1/audio/speech``).

Local whisper servers (faster-whisper-server, whisper.cpp's server, LocalAI) and OpenAI
speak this protocol. The server checks requests as the service does: a transcription is a
``multipart/form-data`` upload with a ``model`` field and a non-empty ``file`` part whose
name has an audio extension; speech is a JSON body with ``model``, ``input`` and ``voice``.
Every upload is recorded for assertions; a speech request is answered with real audio (a
tone as long as the input is long, as WAV), so what a client converts can be played::

    with ScriptedAudioServer() as audio:
        audio.transcripts.append("remind me to water the plants")
        ... point the transcriber at audio.base_url ...
        upload = audio.uploads[0]
        assert upload.model == "whisper-1" and upload.data.startswith(b"OggS")

Importing this imports aiohttp (``hermes-sdk[http]``).
"""

from __future__ import annotations

import io
import math
import struct
import wave
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import BodyPartReader, web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["ScriptedAudioServer", "SpeechRequest", "TranscriptionUpload", "tone_wav"]

_AUDIO_EXTENSIONS = (
    ".flac",
    ".m4a",
    ".mp3",
    ".mp4",
    ".mpeg",
    ".mpga",
    ".oga",
    ".ogg",
    ".wav",
    ".webm",
    ".opus",
)
_SPEECH_FORMATS = ("mp3", "opus", "aac", "flac", "wav", "pcm")


@dataclass(frozen=True)
class TranscriptionUpload:
    """One transcription request as it arrived."""

    model: str
    filename: str
    content_type: str
    data: bytes
    fields: dict[str, str]
    authorization: str | None


@dataclass(frozen=True)
class SpeechRequest:
    body: dict[str, Any]
    authorization: str | None


def tone_wav(seconds: float, rate: int = 16_000) -> bytes:
    """A 440 Hz tone of ``seconds``, as 16-bit mono WAV."""
    frames = int(seconds * rate)
    samples = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * n / rate))) for n in range(frames)
    )
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples)
    return buffer.getvalue()


@dataclass
class ScriptedAudioServer:
    """Transcripts are answered in order from :attr:`transcripts` (then ``default``)."""

    transcripts: list[str] = field(default_factory=list)
    default_transcript: str = "(the scripted server has no transcript queued)"
    seconds_per_character: float = 0.06
    """How long the spoken answer to a speech request is, per character of its input."""
    uploads: list[TranscriptionUpload] = field(default_factory=list)
    speech_requests: list[SpeechRequest] = field(default_factory=list)
    fail_with: tuple[int, str] | None = None
    """Answer every request with this (status, message), as the service's errors look."""

    def __post_init__(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self._speech)
        self._app = LoopbackApp(app, "scripted-audio")

    @property
    def base_url(self) -> str:
        """What a client's ``base_url`` is set to (it adds ``/audio/...``)."""
        return f"{self._app.url}/v1"

    def start(self) -> Self:
        self._app.start()
        return self

    def stop(self) -> None:
        self._app.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    @staticmethod
    def _error(status: int, message: str) -> web.Response:
        kind = "invalid_request_error" if status < 500 else "server_error"
        return web.json_response(
            {"error": {"message": message, "type": kind, "param": None, "code": None}},
            status=status,
        )

    async def _transcribe(self, request: web.Request) -> web.Response:
        if self.fail_with is not None:
            return self._error(*self.fail_with)
        if not request.content_type.startswith("multipart/form-data"):
            return self._error(400, "Expected multipart/form-data for this endpoint.")
        fields: dict[str, str] = {}
        upload: tuple[str, str, bytes] | None = None
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader) or part.name is None:
                continue
            if part.filename is not None and part.name == "file":
                data = bytes(await part.read())
                content_type = part.headers.get("Content-Type", "application/octet-stream")
                upload = (part.filename, content_type, data)
            else:
                fields[part.name] = await part.text()
        if "model" not in fields:
            return self._error(400, "you must provide a model parameter")
        if upload is None:
            return self._error(400, "Missing required parameter: 'file'.")
        filename, content_type, data = upload
        if not filename.lower().endswith(_AUDIO_EXTENSIONS) or not data:
            return self._error(
                400,
                f"Invalid file format. Supported formats: {[e[1:] for e in _AUDIO_EXTENSIONS]}",
            )
        self.uploads.append(
            TranscriptionUpload(
                fields["model"],
                filename,
                content_type,
                data,
                fields,
                request.headers.get("Authorization"),
            )
        )
        text = self.transcripts.pop(0) if self.transcripts else self.default_transcript
        if fields.get("response_format") == "text":
            return web.Response(text=text)
        return web.json_response({"text": text})

    async def _speech(self, request: web.Request) -> web.Response:
        if self.fail_with is not None:
            return self._error(*self.fail_with)
        try:
            body = await request.json()
        except ValueError:
            return self._error(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return self._error(400, "The body must be a JSON object.")
        for name in ("model", "input", "voice"):
            if not body.get(name):
                return self._error(400, f"Missing required parameter: '{name}'.")
        response_format = body.get("response_format", "mp3")
        if response_format not in _SPEECH_FORMATS:
            return self._error(400, f"Invalid value: '{response_format}'.")
        if response_format != "wav":
            return self._error(
                400, f"this scripted server answers 'wav' only, not {response_format!r}"
            )
        self.speech_requests.append(SpeechRequest(body, request.headers.get("Authorization")))
        seconds = max(0.5, len(str(body["input"])) * self.seconds_per_character)
        return web.Response(body=tone_wav(seconds), content_type="audio/wav")
