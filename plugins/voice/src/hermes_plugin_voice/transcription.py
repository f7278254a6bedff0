"""Speech-to-text through an OpenAI-compatible ``/audio/transcriptions`` endpoint: a local
whisper server (faster-whisper-server, whisper.cpp's server, LocalAI) or OpenAI itself. The
audio is uploaded as it came (an OGG/Opus voice note is a format these servers take)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from hermes_plugin_voice.settings import settings_from
from hermes_sdk.media import Attachment
from hermes_sdk.transcription import TranscriberContext, TranscriberUnavailable

if TYPE_CHECKING:
    import httpx

__all__ = ["VOICE_REPLY_HINT", "OpenAICompatibleTranscriber", "error_line"]

VOICE_REPLY_HINT = (
    "[The user spoke this in a voice message: answer with text_to_speech as well as in text "
    "(voice.speech.reply_to_voice).]"
)

# Names these servers accept (they judge the format by the file name's extension).
_UPLOAD_NAMES = {"audio/ogg": "voice.ogg", "audio/mpeg": "audio.mp3", "audio/x-wav": "audio.wav"}


def error_line(status: int, body: str) -> str:
    """The server's own error message, in one line."""
    import json

    try:
        message = json.loads(body).get("error", {}).get("message")
    except (ValueError, AttributeError):
        message = None
    text = str(message or body or "no details").splitlines()[0][:300]
    return f"the server answered {status}: {text}"


class OpenAICompatibleTranscriber:
    def __init__(self, context: TranscriberContext) -> None:
        voice = settings_from(context.config)
        self.settings = voice.transcription
        self.ask_for_voice = voice.speech.reply_to_voice
        key_variable = self.settings.api_key_env
        self.key = context.secrets(key_variable) if key_variable else None
        self._client: httpx.AsyncClient | None = None

    async def transcribe(self, audio: Attachment) -> str:
        settings = self.settings
        if not settings.base_url:
            raise TranscriberUnavailable(
                "set voice.transcription.base_url to an OpenAI-compatible server "
                "(a local whisper server, or https://api.openai.com/v1)"
            )
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=settings.timeout_seconds)
        fields: dict[str, Any] = {"model": settings.model, "response_format": "json"}
        if settings.language:
            fields["language"] = settings.language
        name = _UPLOAD_NAMES.get(audio.mime, audio.name or "audio.ogg")
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        url = f"{settings.base_url.rstrip('/')}/audio/transcriptions"
        data = await asyncio.to_thread(audio.read_bytes)
        try:
            response = await self._client.post(
                url, data=fields, files={"file": (name, data, audio.mime)}, headers=headers
            )
        except httpx.HTTPError as exc:
            raise RuntimeError(f"{url} could not be reached: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise RuntimeError(error_line(response.status_code, response.text))
        try:
            text = str(response.json()["text"]).strip()
        except (ValueError, KeyError, TypeError):
            raise RuntimeError("the server's answer has no transcript (no 'text')") from None
        if self.ask_for_voice and text:
            text += f"\n{VOICE_REPLY_HINT}"
        return text

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
