"""Voice: voice notes users send are transcribed (an OpenAI-compatible speech-to-text
server), and ``text_to_speech`` speaks a reply as a voice message (espeak-ng offline, or an
OpenAI-compatible speech server), encoded by ffmpeg as OGG/Opus.

Importing this is cheap: httpx loads on the first transcription, and nothing runs until a
voice note arrives or the tool is called. The ``voice`` toolset is opt-in (its schema would
cost every request tokens): ``agent.add_toolsets: [voice]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ConfigSectionSpec, ToolsetSpec, ToolSpec, TranscriberSpec, hookimpl
from hermes_sdk.health import Finding, HealthContext

TOOLSET = "voice"


async def _speak(text: str, *, context: Any) -> str:
    from hermes_plugin_voice.tool import text_to_speech

    return await text_to_speech(text, context=context)


@hookimpl
def hermes_transcribers() -> Iterator[TranscriberSpec]:
    yield TranscriberSpec(
        name="openai-compatible",
        description="speech-to-text through an OpenAI-compatible /audio/transcriptions server",
        factory="hermes_plugin_voice.transcription:OpenAICompatibleTranscriber",
    )


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name=TOOLSET, description="speak replies as voice messages", opt_in=True)


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="text_to_speech",
        description="Speak a text aloud and send it to the user as a voice message (a voice "
        "note in chat apps). Use it when the user asks for a spoken or audio answer, or spoke "
        "to you in a voice message and would rather listen. Keep it short and conversational.",
        handler=_speak,
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "the words to speak"}},
            "required": ["text"],
        },
        toolset=TOOLSET,
        takes_context=True,
        timeout_seconds=300,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="voice",
        description="Voice notes and spoken replies",
        model="hermes_plugin_voice.settings:VoiceSettings",
    )


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_voice.health import voice_findings

    yield from voice_findings(context)
