"""The ``voice:`` section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings

__all__ = ["SpeechSettings", "TranscriptionSettings", "VoiceSettings", "settings_from"]

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class TranscriptionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(
        default=None,
        pattern=r"^https?://",
        description="An OpenAI-compatible server's base URL (ends in /v1): a local whisper "
        "server, or https://api.openai.com/v1. Unset: voice notes are not transcribed here.",
    )
    model: str = Field(default="whisper-1", description="The speech-to-text model.")
    api_key_env: str | None = Field(
        default=None, pattern=_ENV_NAME, description="The .env variable holding its key."
    )
    language: str | None = Field(
        default=None, description="ISO-639-1 code (en, de ...); unset: detected."
    )
    timeout_seconds: float = Field(default=120.0, gt=0, le=900)


class SpeechSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Literal["espeak-ng", "openai-compatible"] = Field(
        default="espeak-ng",
        description="espeak-ng: offline, robotic (apt-get install espeak-ng); "
        "openai-compatible: base_url's /audio/speech.",
    )
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    model: str = "tts-1"
    voice: str = Field(default="alloy", description="The server's voice name.")
    api_key_env: str | None = Field(default=None, pattern=_ENV_NAME)
    espeak_voice: str = Field(default="en", description="espeak-ng's -v (en, en-us, de ...).")
    max_chars: int = Field(default=4000, ge=10, le=100_000, description="Longest text spoken.")
    reply_to_voice: bool = Field(
        default=False,
        description="Answer a voice message with a voice message too (text_to_speech, with "
        "the voice toolset added), as well as in text.",
    )
    timeout_seconds: float = Field(default=120.0, gt=0, le=900)


class VoiceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transcription: TranscriptionSettings = Field(default_factory=TranscriptionSettings)
    speech: SpeechSettings = Field(default_factory=SpeechSettings)


def settings_from(config: Mapping[str, Any]) -> VoiceSettings:
    """``voice:`` from config.yaml as loaded (validated by the kernel before this runs)."""
    return section_settings("voice", VoiceSettings, config.get("voice"))
