"""Reading the logs in HERMES_HOME/logs: records filtered by level and component, read on
from a cursor (``hermes logs -f`` and the dashboard's live tail both read them this way)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LEVELS", "AtLeast", "Record", "level_of", "read_after"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
CHUNK_BYTES = 1 << 20
"""The most one read takes from a file (a burst is read over a few asks)."""


def level_of(line: str) -> str | None:
    """The level of a record's first line ("2026-12-01 09:21:03,123 WARNING hermes...");
    None for a continuation line (a traceback)."""
    parts = line.split(" ", 3)
    return parts[2] if len(parts) > 2 and parts[2] in LEVELS else None


def component_of(line: str) -> str:
    """The logger's name of a record's first line (``hermes.runtime``)."""
    parts = line.split(" ", 3)
    return parts[3].split(":", 1)[0] if len(parts) > 3 else ""


class AtLeast:
    """Keeps the lines of records at ``minimum`` or above (and of ``component``, when
    given); a traceback's lines go with the record they belong to."""

    def __init__(self, minimum: int, component: str = "") -> None:
        self.minimum = minimum
        self.component = component
        self.keeping = True
        self.level = ""
        self.source = ""

    def __call__(self, line: str) -> bool:
        level = level_of(line)
        if level is not None:
            self.level, self.source = level, component_of(line)
            self.keeping = LEVELS.index(level) >= self.minimum and (
                not self.component or self.source.startswith(self.component)
            )
        return self.keeping


@dataclass(frozen=True, slots=True)
class Record:
    text: str
    level: str
    component: str


def _kept(lines: Iterable[str], wanted: AtLeast) -> Iterator[Record]:
    for line in lines:
        text = line.rstrip("\r\n")
        if wanted(text):
            yield Record(text, wanted.level, wanted.source)


def read_after(path: Path, cursor: str, wanted: AtLeast, limit: int) -> tuple[list[Record], str]:
    """The records after ``cursor`` (``"INODE:OFFSET"``) and the cursor to read on from;
    with no cursor, the last ``limit``. Read on, it stops after ``limit`` records (the next
    ask goes on from there: a burst is never skipped). A rotated file (another inode, or a
    shorter one) is read from its start; a line still being written waits for the next
    ask, unless it alone is longer than a read (then it comes as it is)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return [], ""
    inode, _, offset_text = cursor.partition(":")
    offset = int(offset_text) if offset_text.isdigit() else 0
    if cursor and (inode != str(stat.st_ino) or stat.st_size < offset):
        offset = 0
    if not cursor:
        offset = max(0, stat.st_size - CHUNK_BYTES)
    with path.open("rb") as log:
        log.seek(offset)
        chunk = log.read(CHUNK_BYTES)
    end = chunk.rfind(b"\n") + 1
    if end == 0 and len(chunk) == CHUNK_BYTES:
        end = len(chunk)  # one line longer than a read: taken whole, never stuck on it
    lines = chunk[:end].splitlines(keepends=True)
    if not cursor:
        if offset > 0 and lines:
            lines = lines[1:]  # began mid-line
        records = deque(_kept((line.decode("utf-8", "replace") for line in lines), wanted), limit)
        return list(records), f"{stat.st_ino}:{offset + end}"
    taken: list[Record] = []
    consumed = 0
    for line in lines:
        consumed += len(line)
        text = line.decode("utf-8", errors="replace").rstrip("\r\n")
        if wanted(text):
            taken.append(Record(text, wanted.level, wanted.source))
            if len(taken) >= limit:
                break
    return taken, f"{stat.st_ino}:{offset + consumed}"


def log_names(folder: Path, known: Iterable[str]) -> list[str]:
    """The logs a home has (and the ones every home has), by name."""
    found = (
        {entry.name[:-4] for entry in os.scandir(folder) if entry.name.endswith(".log")}
        if folder.is_dir()
        else set()
    )
    return sorted({*known, *found})
