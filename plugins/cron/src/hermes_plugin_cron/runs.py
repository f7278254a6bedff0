"""The run log: HERMES_HOME/cron/runs.db (SQLite), where every due instant has one record.

A record's ``status`` is ``queued`` (claimed, waiting for a slot), ``running``, then one of
``completed``, ``failed`` (with the reason), ``skipped`` (paused, another run still going),
``missed`` (the scheduler was not running: with the catch-up policy that applied) or
``unknown`` (the process ended while it ran: its effect is unknown, and it is never rerun).
``UNIQUE(job_id, due_at)`` makes a second claim of the same instant impossible, and the
claim and the job's next instant (its cursor) are written in one transaction.

Manual runs (``hermes cron run``) are records too, with ``trigger`` ``manual``; while a
gateway runs the scheduler, the command leaves a request here and waits for its record.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Batch", "Claim", "Run", "RunLog"]

ENDED = ("completed", "failed", "skipped", "missed", "unknown")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    job_id TEXT NOT NULL,
    job_name TEXT NOT NULL,
    due_at REAL NOT NULL,
    trigger TEXT NOT NULL DEFAULT 'schedule',
    status TEXT NOT NULL,
    reason TEXT,
    claimed_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    owner INTEGER,
    session_id TEXT,
    output_path TEXT,
    delivery TEXT,
    UNIQUE (job_id, due_at, trigger)
);
CREATE INDEX IF NOT EXISTS runs_by_job ON runs (job_id, due_at);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
CREATE TABLE IF NOT EXISTS cursors (job_id TEXT PRIMARY KEY, next_due REAL);
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY,
    job_id TEXT NOT NULL,
    requested_at REAL NOT NULL,
    run_id INTEGER
);
CREATE TABLE IF NOT EXISTS marks (name TEXT PRIMARY KEY, at REAL NOT NULL);
"""


@dataclass(frozen=True)
class Run:
    id: int
    job_id: str
    job_name: str
    due_at: float
    trigger: str
    status: str
    reason: str | None
    claimed_at: float
    started_at: float | None
    finished_at: float | None
    session_id: str | None
    output_path: str | None
    delivery: str | None

    @property
    def ended(self) -> bool:
        return self.status in ENDED


_COLUMNS = (
    "id, job_id, job_name, due_at, trigger, status, reason, claimed_at, started_at, "
    "finished_at, session_id, output_path, delivery"
)


@dataclass(frozen=True)
class Batch:
    """One job's part of a tick: its claims, and its cursor before and after."""

    job_id: str
    job_name: str
    claims: list[Claim]
    next_due: float | None
    expected: float | None


@dataclass(frozen=True)
class Claim:
    """One record to write for a due instant."""

    due_at: float
    status: str  # queued | skipped | missed
    reason: str | None = None
    trigger: str = "schedule"


class RunLog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _rows(self, sql: str, args: Iterable[object] = ()) -> list[Run]:
        with self._lock:
            rows = self._db.execute(sql, tuple(args)).fetchall()
        return [Run(*row) for row in rows]

    # --- cursors and claims ---------------------------------------------------------------

    def cursors(self) -> dict[str, float | None]:
        with self._lock:
            rows = self._db.execute("SELECT job_id, next_due FROM cursors").fetchall()
        return {job_id: next_due for job_id, next_due in rows}

    def set_cursor(self, job_id: str, next_due: float | None) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO cursors VALUES (?, ?)", (job_id, next_due))

    def claim_all(self, batch: list[Batch], now: float) -> dict[str, list[int]]:
        """Write every job's claims and move its cursor, all in one transaction; a job whose
        cursor is no longer what was planned from (another scheduler moved it) is left out.
        Returns, per job written, the ids of its queued records."""
        written: dict[str, list[int]] = {}
        owner = os.getpid()
        with self._write() as db:
            for entry in batch:
                row = db.execute(
                    "SELECT next_due FROM cursors WHERE job_id = ?", (entry.job_id,)
                ).fetchone()
                if row is not None and row[0] != entry.expected:
                    continue
                queued: list[int] = []
                for claim in entry.claims:
                    cursor = db.execute(
                        "INSERT OR IGNORE INTO runs (job_id, job_name, due_at, trigger, status, "
                        "reason, claimed_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            entry.job_id,
                            entry.job_name,
                            claim.due_at,
                            claim.trigger,
                            claim.status,
                            claim.reason,
                            now,
                            owner if claim.status == "queued" else None,
                        ),
                    )
                    if claim.status == "queued" and cursor.rowcount:
                        queued.append(int(cursor.lastrowid or 0))
                db.execute(
                    "INSERT OR REPLACE INTO cursors VALUES (?, ?)", (entry.job_id, entry.next_due)
                )
                written[entry.job_id] = queued
        return written

    def claim_manual(self, job_id: str, job_name: str, now: float) -> int:
        """A record for a run asked for by hand (``hermes cron run``), queued."""
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO runs (job_id, job_name, due_at, trigger, status, claimed_at, "
                "owner) VALUES (?, ?, ?, 'manual', 'queued', ?, ?)",
                (job_id, job_name, now, now, os.getpid()),
            )
            return int(cursor.lastrowid or 0)

    def forget(self, job_id: str) -> None:
        """A removed job's cursor (its records stay, for history)."""
        with self._write() as db:
            db.execute("DELETE FROM cursors WHERE job_id = ?", (job_id,))

    # --- a run's life ----------------------------------------------------------------------

    def start(self, run_id: int) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE runs SET status = 'running', started_at = ?, owner = ? WHERE id = ?",
                (time.time(), os.getpid(), run_id),
            )

    def finish(
        self,
        run_id: int,
        status: str,
        reason: str | None = None,
        *,
        session_id: str | None = None,
        output_path: str | None = None,
        delivery: str | None = None,
    ) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE runs SET status = ?, reason = ?, finished_at = ?, session_id = "
                "COALESCE(?, session_id), output_path = COALESCE(?, output_path), delivery = "
                "COALESCE(?, delivery) WHERE id = ?",
                (status, reason, time.time(), session_id, output_path, delivery, run_id),
            )

    def abandon(self, run_id: int, reason: str) -> None:
        """A run cut short in this process: ``unknown``, if it had not ended already."""
        with self._write() as db:
            db.execute(
                "UPDATE runs SET status = 'unknown', reason = ?, finished_at = ? WHERE id = ? "
                "AND status IN ('queued', 'running')",
                (reason, time.time(), run_id),
            )

    def note_delivery(self, run_id: int, delivery: str) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET delivery = ? WHERE id = ?", (delivery, run_id))

    def note_session(self, run_id: int, session_id: str) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET session_id = ? WHERE id = ?", (session_id, run_id))

    def orphans(self) -> int:
        """Records left active by a process that is gone: a running one becomes ``unknown``
        (it may have acted), a queued one ``missed`` (it never started). Call while holding
        the scheduler lock, so no live scheduler owns them."""
        me = os.getpid()
        changed = 0
        with self._write() as db:
            for run_id, status, owner in db.execute(
                "SELECT id, status, owner FROM runs WHERE status IN ('queued', 'running')"
            ).fetchall():
                if owner == me:
                    continue
                if status == "running":
                    new, reason = "unknown", "Hermes stopped while it ran: its effect is unknown"
                else:
                    new, reason = "missed", "Hermes stopped before it could start"
                db.execute(
                    "UPDATE runs SET status = ?, reason = ?, finished_at = ? WHERE id = ?",
                    (new, reason, time.time(), run_id),
                )
                changed += 1
        return changed

    # --- reading ----------------------------------------------------------------------------

    def get(self, run_id: int) -> Run | None:
        found = self._rows(f"SELECT {_COLUMNS} FROM runs WHERE id = ?", (run_id,))
        return found[0] if found else None

    def of_job(self, job_id: str, limit: int = 20) -> list[Run]:
        return self._rows(
            f"SELECT {_COLUMNS} FROM runs WHERE job_id = ? ORDER BY due_at DESC, id DESC LIMIT ?",
            (job_id, limit),
        )

    def active_jobs(self) -> set[str]:
        """Jobs with a run queued or running."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT job_id FROM runs WHERE status IN ('queued', 'running')"
            ).fetchall()
        return {str(row[0]) for row in rows}

    def failed_since(self, since: float) -> list[Run]:
        return self._rows(
            f"SELECT {_COLUMNS} FROM runs WHERE status IN ('failed', 'unknown') AND "
            "COALESCE(finished_at, claimed_at) > ? ORDER BY due_at",
            (since,),
        )

    def request(self, job_id: str) -> int:
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO requests (job_id, requested_at) VALUES (?, ?)", (job_id, time.time())
            )
            return int(cursor.lastrowid or 0)

    def open_requests(self) -> list[tuple[int, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, job_id FROM requests WHERE run_id IS NULL ORDER BY id"
            ).fetchall()
        return [(int(request_id), str(job_id)) for request_id, job_id in rows]

    def answer_request(self, request_id: int, run_id: int) -> None:
        with self._write() as db:
            db.execute("UPDATE requests SET run_id = ? WHERE id = ?", (run_id, request_id))

    def run_of_request(self, request_id: int) -> int | None:
        with self._lock:
            row = self._db.execute(
                "SELECT run_id FROM requests WHERE id = ?", (request_id,)
            ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def mark(self, name: str, at: float | None = None) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO marks VALUES (?, ?)",
                (name, time.time() if at is None else at),
            )

    def marked(self, name: str) -> float:
        with self._lock:
            row = self._db.execute("SELECT at FROM marks WHERE name = ?", (name,)).fetchone()
        return float(row[0]) if row else 0.0
