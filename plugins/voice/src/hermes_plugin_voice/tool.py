"""``text_to_speech(text)``: the text spoken and sent to the user as a voice message."""

from __future__ import annotations

import asyncio

from hermes_plugin_voice.settings import settings_from
from hermes_plugin_voice.speech import duration_seconds, speak, to_voice_note
from hermes_sdk.media import MediaCache
from hermes_sdk.tooling import ToolContext

__all__ = ["text_to_speech"]


def _spoken_note(text: str, context: ToolContext) -> str:
    settings = settings_from(context.config).speech
    if not text.strip():
        raise ValueError("text is empty: give the words to speak")
    if len(text) > settings.max_chars:
        raise ValueError(
            f"text is {len(text)} characters, over voice.speech.max_chars ({settings.max_chars}): "
            "speak a shorter answer"
        )
    wav = speak(text, settings, context.secret)
    seconds = duration_seconds(wav)
    note = to_voice_note(wav, settings.timeout_seconds)
    cache = MediaCache.of_home(context.home, context.config)
    attachment = cache.ingest(note, name="reply.ogg", declared="audio/ogg")
    context.send_file(attachment)
    length = f"{seconds:.1f} s" if seconds is not None else "audio"
    return f"Spoken ({length}, {settings.provider}) and sent to the user as a voice message."


async def text_to_speech(text: str, *, context: ToolContext) -> str:
    return await asyncio.to_thread(_spoken_note, text, context)
