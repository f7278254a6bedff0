"""Reading another program's SQLite database without touching it: opened where it lies,
SQLite would create its ``-shm`` file, take locks, and may checkpoint the write-ahead log
into it. The database (with its log) is copied to a scratch folder, and the copy is read.
Importers read hermes-agent's files this way."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["UnreadableDatabase", "readable_copy"]


class UnreadableDatabase(Exception):
    """The database cannot be read (damaged, or not a database): one line."""


@contextlib.contextmanager
def readable_copy(database: Path) -> Iterator[sqlite3.Connection]:
    """A connection to a copy of ``database`` (and its log), in a scratch folder; rows are
    :class:`sqlite3.Row` (by index or by name). Raises :class:`UnreadableDatabase`."""
    with tempfile.TemporaryDirectory(prefix="hermes-import-") as scratch:
        copy = Path(scratch) / database.name
        try:
            shutil.copyfile(database, copy)
            wal = database.with_name(database.name + "-wal")
            if wal.exists():
                shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        except OSError as exc:
            raise UnreadableDatabase(f"{database}: cannot read: {exc.strerror}") from None
        connection = sqlite3.connect(copy)
        connection.row_factory = sqlite3.Row
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            yield connection
        except sqlite3.DatabaseError as exc:
            raise UnreadableDatabase(f"{database}: not a readable SQLite database: {exc}") from None
        finally:
            connection.close()
