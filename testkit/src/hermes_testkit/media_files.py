"""Files a person would send, for tests of anything that takes attachments: a phone's photo
with camera metadata, a program disguised as a picture, and speech (espeak-ng and ffmpeg,
Debian packages, when installed).

Needs the SDK's ``media`` extra (Pillow)."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["disguised_program", "photo_bytes", "speech_available", "spoken", "spoken_ogg"]


def photo_bytes(size: tuple[int, int] = (3000, 2000), color: str = "red") -> bytes:
    """A JPEG as a phone writes it: camera make, a GPS block, and an orientation tag saying
    it must be turned (6: 90 degrees clockwise), so it is shown portrait."""
    from PIL import Image

    exif = Image.Exif()
    exif[0x010F] = "SecretPhoneMaker"  # Make
    exif[0x0112] = 6  # Orientation
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0)}  # GPSInfo
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "JPEG", exif=exif, quality=90)
    return buffer.getvalue()


def disguised_program() -> bytes:
    """A real program (this machine's ``true``, an ELF executable), to name as a picture."""
    return Path(shutil.which("true") or "/bin/true").read_bytes()


def speech_available() -> str | None:
    """None when espeak-ng and ffmpeg are installed, else what to install."""
    missing = [tool for tool in ("espeak-ng", "ffmpeg") if shutil.which(tool) is None]
    return f"apt-get install {' '.join(missing)}" if missing else None


_OPUS = ["-c:a", "libopus", "-ar", "48000"]
_ENCODERS = {"ogg": _OPUS, "mp3": ["-c:a", "libmp3lame"], "caf": _OPUS}
"""An iPhone's voice note is Opus in Apple's CAF (iOS 17 on)."""


def spoken(text: str, container: str = "ogg") -> bytes:
    """``text`` spoken by espeak-ng, as a mono voice note: ``ogg`` (Opus, 48 kHz),
    ``mp3``, or ``caf`` (Opus, as iMessage records them)."""
    with tempfile.TemporaryDirectory() as folder:
        wav, out = Path(folder, "speech.wav"), Path(folder, f"speech.{container}")
        subprocess.run(["espeak-ng", "-w", str(wav), text], check=True, capture_output=True)
        encode = ["ffmpeg", "-loglevel", "error", "-i", str(wav), *_ENCODERS[container]]
        subprocess.run([*encode, "-ac", "1", str(out)], check=True, capture_output=True)
        return out.read_bytes()


def spoken_ogg(text: str) -> bytes:
    """``text`` spoken by espeak-ng, as an OGG/Opus voice note (mono, 48 kHz)."""
    return spoken(text, "ogg")
