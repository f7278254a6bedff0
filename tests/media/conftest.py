"""Files a person would send: a phone's photo, a disguised program."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_testkit.media_files import disguised_program, photo_bytes


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "holiday.jpg"
    path.write_bytes(photo_bytes())
    return path


@pytest.fixture
def disguised(tmp_path: Path) -> Path:
    """A real program (ELF) named as a picture."""
    path = tmp_path / "cute-cat.png"
    path.write_bytes(disguised_program())
    return path
