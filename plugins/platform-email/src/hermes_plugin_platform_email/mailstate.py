"""What the email platform keeps in HERMES_HOME/platforms/email/state.db: how far each
folder has been read (UIDVALIDITY and the last UID handed over, so a restart neither
replays nor skips a message), the thread of every message seen or sent (for threading
and sessions), and the replies sent per thread (the loop brake)."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MailState", "Threaded"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS folders (
    folder TEXT PRIMARY KEY, uidvalidity INTEGER NOT NULL, last_uid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    message_id TEXT PRIMARY KEY, thread TEXT NOT NULL, subject TEXT NOT NULL,
    refs TEXT NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages (thread, at);
CREATE TABLE IF NOT EXISTS replies (thread TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS replies_by_thread ON replies (thread, at);
"""
KEEP_SECONDS = 180 * 86_400


@dataclass(frozen=True, slots=True)
class Threaded:
    message_id: str
    thread: str
    subject: str
    references: tuple[str, ...]


class MailState:
    def __init__(self, home: str) -> None:
        folder = Path(home) / "platforms" / "email"
        folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            folder / "state.db", check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def position(self, folder: str) -> tuple[int, int] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT uidvalidity, last_uid FROM folders WHERE folder = ?", (folder,)
            ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def advance(self, folder: str, uidvalidity: int, last_uid: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO folders VALUES (?, ?, ?) ON CONFLICT (folder) DO UPDATE SET "
                "uidvalidity = excluded.uidvalidity, last_uid = excluded.last_uid",
                (folder, uidvalidity, last_uid),
            )

    def thread_of(self, message_id: str | None, references: tuple[str, ...]) -> str:
        """The thread a new message belongs to: that of the newest message it refers to
        that is known here, else the first of its References (the thread's first message),
        else its own id (it starts a thread)."""
        for known in [*reversed(references)]:
            found = self.message(known)
            if found is not None:
                return found.thread
        return references[0] if references else (message_id or "")

    def remember(self, message: Threaded) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO messages VALUES (?, ?, ?, ?, ?)",
                (
                    message.message_id,
                    message.thread,
                    message.subject,
                    " ".join(message.references),
                    time.time(),
                ),
            )

    def message(self, message_id: str) -> Threaded | None:
        with self._lock:
            row = self._db.execute(
                "SELECT message_id, thread, subject, refs FROM messages WHERE message_id = ?",
                (message_id,),
            ).fetchone()
        return _threaded(row)

    def latest_in(self, thread: str) -> Threaded | None:
        with self._lock:
            row = self._db.execute(
                "SELECT message_id, thread, subject, refs FROM messages WHERE thread = ? "
                "ORDER BY at DESC, rowid DESC LIMIT 1",
                (thread,),
            ).fetchone()
        return _threaded(row)

    def replies_within(self, thread: str, seconds: float) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT count(*) FROM replies WHERE thread = ? AND at > ?",
                (thread, time.time() - seconds),
            ).fetchone()
        return int(row[0])

    def replied(self, thread: str) -> None:
        now = time.time()
        with self._lock:
            self._db.execute("INSERT INTO replies VALUES (?, ?)", (thread, now))
            self._db.execute("DELETE FROM replies WHERE at < ?", (now - 86_400,))
            self._db.execute("DELETE FROM messages WHERE at < ?", (now - KEEP_SECONDS,))

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _threaded(row: tuple[object, ...] | None) -> Threaded | None:
    if row is None:
        return None
    refs = str(row[3])
    return Threaded(str(row[0]), str(row[1]), str(row[2]), tuple(refs.split()) if refs else ())
