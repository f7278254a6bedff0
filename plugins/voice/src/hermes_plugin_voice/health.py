"""What ``hermes doctor`` says of voice: whether voice notes can be transcribed here, and
whether spoken replies can be made (espeak-ng and ffmpeg on PATH)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping

from hermes_plugin_voice.settings import settings_from
from hermes_sdk.health import Finding, HealthContext

__all__ = ["voice_findings"]


def voice_findings(context: HealthContext) -> Iterator[Finding]:
    settings = settings_from(context.config)
    url = settings.transcription.base_url
    if url:
        yield Finding(level="ok", message=f"voice notes are transcribed by {url}")
    else:
        # A fact, not a problem: voice is optional.
        yield Finding(
            level="ok",
            message="voice notes are not transcribed (voice.transcription.base_url turns it on)",
        )
    agent = context.config.get("agent")
    added = agent.get("add_toolsets") if isinstance(agent, Mapping) else None
    if "voice" not in (added or ()):
        return
    needed = ["ffmpeg"] + (["espeak-ng"] if settings.speech.provider == "espeak-ng" else [])
    missing = [program for program in needed if shutil.which(program) is None]
    if missing:
        yield Finding(
            level="warning",
            message=f"text_to_speech needs {', '.join(missing)}, which is not on PATH",
            fix=f"apt-get install {' '.join(missing)}",
        )
    else:
        yield Finding(level="ok", message=f"spoken replies by {settings.speech.provider}")
