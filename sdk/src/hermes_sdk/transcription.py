"""Transcribers: what turns a voice note or an audio file into text.

A plugin yields a :class:`~hermes_sdk.specs.TranscriberSpec` from ``hermes_transcribers``.
When a user sends audio, the turn engine builds the transcribers (once per process, with a
:class:`TranscriberContext`) and asks them in order, ``media.transcribers`` in config.yaml
first, then the others by name: the first that answers wins. One that is not set up (no
endpoint, no engine installed) raises :class:`TranscriberUnavailable` and the next is
asked; any other exception is a failure the user is told about in one line. The text is
stored with the message, so a voice note is transcribed once::

    class Whisper:
        def __init__(self, context: TranscriberContext) -> None:
            self.url = context.section("transcription").get("base_url")

        async def transcribe(self, audio: Attachment) -> str:
            if not self.url:
                raise TranscriberUnavailable("set transcription.base_url")
            ...

        async def aclose(self) -> None: ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_sdk.media import Attachment

__all__ = ["Transcriber", "TranscriberContext", "TranscriberUnavailable"]


class TranscriberUnavailable(Exception):
    """This transcriber is not set up here; the message says what would set it up."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriberContext:
    """What a transcriber's factory gets."""

    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    secrets: Callable[[str], str | None] = lambda _name: None
    """A secret by its variable name: the environment, then .env."""

    def section(self, name: str) -> Mapping[str, Any]:
        value = self.config.get(name)
        return value if isinstance(value, Mapping) else {}


class Transcriber(Protocol):
    """What a transcriber's factory returns."""

    async def transcribe(self, audio: Attachment) -> str:
        """The words spoken in ``audio`` (any container ffmpeg reads: OGG/Opus voice notes,
        MP3, M4A, WAV). Raise TranscriberUnavailable when not set up, anything else (one
        line) when it failed."""
        ...

    async def aclose(self) -> None:
        """Release what it holds (an HTTP client); called when the process leaves."""
        ...
