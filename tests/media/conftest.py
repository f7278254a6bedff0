"""Files a person would send: photos with camera metadata, a disguised program."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image


def photo_bytes(size: tuple[int, int] = (3000, 2000), color: str = "red") -> bytes:
    """A JPEG as a phone writes it: camera make, a GPS block, and an orientation tag saying
    it must be turned (6: 90 degrees clockwise), so it is shown portrait."""
    exif = Image.Exif()
    exif[0x010F] = "SecretPhoneMaker"  # Make
    exif[0x0112] = 6  # Orientation
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0)}  # GPSInfo
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "JPEG", exif=exif, quality=90)
    return buffer.getvalue()


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "holiday.jpg"
    path.write_bytes(photo_bytes())
    return path


@pytest.fixture
def disguised(tmp_path: Path) -> Path:
    """A real program (ELF) named as a picture."""
    path = tmp_path / "cute-cat.png"
    path.write_bytes(Path("/bin/true").read_bytes())
    return path
