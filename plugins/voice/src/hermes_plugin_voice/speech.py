"""Text to speech, as a voice note: espeak-ng (offline, a Debian package) or an
OpenAI-compatible ``/audio/speech`` endpoint makes WAV, and ffmpeg encodes it as OGG/Opus,
mono at 48 kHz, the format chat apps play as a voice message.

The programs run with a bare environment (PATH and a locale): no secret of Hermes's
reaches them, and the text goes on stdin, never on a command line."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable

from hermes_plugin_voice.settings import SpeechSettings
from hermes_plugin_voice.transcription import error_line

__all__ = ["SpeechFailed", "duration_seconds", "speak", "to_voice_note"]


class SpeechFailed(RuntimeError):
    """One line saying what to install or set."""


def _environment() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}


def _run(program: str, arguments: list[str], data: bytes, timeout: float) -> bytes:
    path = shutil.which(program)
    if path is None:
        raise SpeechFailed(f"{program} is not installed (apt-get install {_PACKAGES[program]})")
    try:
        done = subprocess.run(
            [path, *arguments],
            input=data,
            capture_output=True,
            timeout=timeout,
            env=_environment(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SpeechFailed(f"{program} did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise SpeechFailed(f"{program} failed: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout


_PACKAGES = {"espeak-ng": "espeak-ng", "ffmpeg": "ffmpeg"}


def _espeak(text: str, settings: SpeechSettings) -> bytes:
    # --stdin: the text is read from standard input; --stdout: WAV to standard output.
    return _run(
        "espeak-ng",
        ["-v", settings.espeak_voice, "--stdin", "--stdout"],
        text.encode(),
        settings.timeout_seconds,
    )


def _remote(text: str, settings: SpeechSettings, key: str | None) -> bytes:
    import httpx

    if not settings.base_url:
        raise SpeechFailed(
            "voice.speech.provider is openai-compatible but voice.speech.base_url is not set"
        )
    url = f"{settings.base_url.rstrip('/')}/audio/speech"
    body = {
        "model": settings.model,
        "input": text,
        "voice": settings.voice,
        "response_format": "wav",
    }
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=settings.timeout_seconds)
    except httpx.HTTPError as exc:
        raise SpeechFailed(f"{url} could not be reached: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise SpeechFailed(error_line(response.status_code, response.text))
    return response.content


def speak(text: str, settings: SpeechSettings, secret: Callable[[str], str | None]) -> bytes:
    """``text`` spoken, as WAV."""
    if settings.provider == "openai-compatible":
        key = secret(settings.api_key_env) if settings.api_key_env else None
        return _remote(text, settings, key)
    return _espeak(text, settings)


def to_voice_note(audio: bytes, timeout: float = 120.0) -> bytes:
    """Any audio ffmpeg reads, as OGG/Opus (mono, 48 kHz, 32 kbit/s, tuned for speech)."""
    return _run(
        "ffmpeg",
        [
            "-loglevel", "error", "-i", "pipe:0",
            "-c:a", "libopus", "-b:a", "32k", "-ac", "1", "-ar", "48000",
            # Level 5 of 10: 25% faster than the default, no difference heard at 32k speech.
            "-application", "voip", "-compression_level", "5", "-f", "ogg", "pipe:1",
        ],
        audio,
        timeout,
    )  # fmt: skip


def duration_seconds(wav: bytes) -> float | None:
    """How long WAV audio plays, from its header's format and the bytes that follow (a WAV
    written to a pipe, as espeak-ng writes it, carries no true length); None when it is not
    a WAV Python reads."""
    import io
    import wave

    try:
        with wave.open(io.BytesIO(wav)) as read:
            per_second = read.getframerate() * read.getnchannels() * read.getsampwidth()
    except (wave.Error, EOFError):
        return None
    data = wav.find(b"data")
    if per_second <= 0 or data < 0:
        return None
    return float(max(0, len(wav) - data - 8) / per_second)
