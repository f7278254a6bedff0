"""The run log: every due instant has one record, in the home's state store (state.db, or
the shared PostgreSQL ``store.url`` names), in tables of this plugin's own (``cron_``).

A record's ``status`` is ``queued`` (claimed, waiting for a slot), ``running``, then one of
``completed``, ``failed`` (with the reason), ``skipped`` (paused, another run still going),
``missed`` (the scheduler was not running: with the catch-up policy that applied) or
``unknown`` (the process ended while it ran: its effect is unknown, and it is never rerun).
``UNIQUE(job_id, due_at, trigger)`` makes a second claim of the same instant impossible, and
the claim and the job's next instant (its cursor) are written in one transaction, which the
store serializes with every other write of every process.

Manual runs (``hermes cron run``) are records too, with ``trigger`` ``manual``; while a
gateway runs the scheduler, the command leaves a request here and waits for its record.

Homes from before kept the log in ``HERMES_HOME/cron/runs.db``: its records are brought into
the store the first time it is opened, and the file is renamed ``runs.db.imported``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hermes_commons.leases import Holder, this_host, this_process
from hermes_sdk.storage import Store, StoreSchema, open_store
from hermes_sdk.tables import Column, ColumnType, Index, Table

__all__ = ["SCHEMA", "Batch", "Claim", "Run", "RunLog"]

ENDED = ("completed", "failed", "skipped", "missed", "unknown")

_TEXT, _REAL, _INTEGER = ColumnType.TEXT, ColumnType.REAL, ColumnType.INTEGER

SCHEMA = StoreSchema(
    name="cron",
    declared=(
        (  # version 1
            Table(
                "cron_runs",
                (
                    Column("id", ColumnType.ID),
                    Column("job_id", _TEXT, required=True),
                    Column("job_name", _TEXT, required=True),
                    Column("due_at", _REAL, required=True),
                    Column("trigger", _TEXT, required=True, default="'schedule'"),
                    Column("status", _TEXT, required=True),
                    Column("reason", _TEXT),
                    Column("claimed_at", _REAL, required=True),
                    Column("started_at", _REAL),
                    Column("finished_at", _REAL),
                    Column("owner", _TEXT),
                    Column("session_id", _TEXT),
                    Column("output_path", _TEXT),
                    Column("delivery", _TEXT),
                ),
                unique=(("job_id", "due_at", "trigger"),),
            ),
            Index("cron_runs_by_job", "cron_runs", ("job_id", "due_at")),
            Index("cron_runs_by_status", "cron_runs", ("status",)),
            Table(
                "cron_cursors",
                (Column("job_id", _TEXT, primary_key=True), Column("next_due", _REAL)),
            ),
            Table(
                "cron_requests",
                (
                    Column("id", ColumnType.ID),
                    Column("job_id", _TEXT, required=True),
                    Column("requested_at", _REAL, required=True),
                    Column("run_id", _INTEGER),
                ),
            ),
            Table(
                "cron_marks",
                (Column("name", _TEXT, primary_key=True), Column("at", _REAL, required=True)),
            ),
        ),
    ),
)
"""The run log's tables (``hermes_store_schemas`` offers it to ``hermes store migrate``)."""

_LEGACY_TABLES = {
    "runs": "cron_runs",
    "cursors": "cron_cursors",
    "requests": "cron_requests",
    "marks": "cron_marks",
}


def _settled_by_me(owner: str, me: str, dead: str | None) -> bool:
    """Whether a run still open under ``owner`` is this scheduler's to settle: the one it
    took the lease over from (``dead``), or a process of this host that is gone. Another
    host's live one only that host can judge; an owner named before owners told the
    process's start (``host:pid``) is of a Hermes since restarted."""
    if owner == me:
        return False
    holder = Holder.parse(owner)
    if dead is not None and _same_process(holder, Holder.parse(dead)):
        return True
    return holder.on_this_host and (not holder.started or holder.is_gone())


def _same_process(owner: Holder, dead: Holder) -> bool:
    """The owner is the dead scheduler: the same name, or a run's owner from before owners
    were holders (``host:pid``) and that scheduler's holder name of then."""
    if owner == dead:
        return True
    return not owner.token and (owner.host, owner.pid) == (dead.host, dead.pid)


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
    """The run log of a home; ``store`` is this plugin's store (see :meth:`open`)."""

    def __init__(self, store: Store, *, owned: bool = True) -> None:
        self._store = store
        self._owned = owned

    @classmethod
    def open(cls, home: str | Path) -> RunLog:
        """The log in the home's store, with a home's old ``cron/runs.db`` brought in."""
        store = open_store(home, SCHEMA)
        try:
            _import_legacy(store, Path(home) / "cron" / "runs.db")
        except BaseException:
            store.close()
            raise
        return cls(store)

    def close(self) -> None:
        if self._owned:
            self._store.close()

    def _rows(self, sql: str, args: Iterable[object] = ()) -> list[Run]:
        return [Run(*row) for row in self._store.query(sql, tuple(args))]

    # --- cursors and claims ---------------------------------------------------------------

    def cursors(self) -> dict[str, float | None]:
        rows = self._store.query("SELECT job_id, next_due FROM cron_cursors")
        return {str(job_id): next_due for job_id, next_due in rows}

    def set_cursor(self, job_id: str, next_due: float | None) -> None:
        with self._store.write() as cursor:
            cursor.execute(_SET_CURSOR, (job_id, next_due))

    def claim_all(self, batch: list[Batch], now: float) -> dict[str, list[int]]:
        """Write every job's claims and move its cursor, all in one transaction; a job whose
        cursor is no longer what was planned from (another scheduler moved it) is left out.
        Returns, per job written, the ids of its queued records."""
        written: dict[str, list[int]] = {}
        owner = this_process()
        with self._store.write() as cursor:
            for entry in batch:
                rows = cursor.execute(
                    "SELECT next_due FROM cron_cursors WHERE job_id = ?", (entry.job_id,)
                ).fetchall()
                if rows and rows[0][0] != entry.expected:
                    continue
                queued: list[int] = []
                for claim in entry.claims:
                    claimed = cursor.execute(
                        "INSERT INTO cron_runs (job_id, job_name, due_at, trigger, status, "
                        "reason, claimed_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (job_id, due_at, trigger) DO NOTHING RETURNING id",
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
                    ).fetchall()
                    if claim.status == "queued" and claimed:
                        queued.append(int(claimed[0][0]))
                cursor.execute(_SET_CURSOR, (entry.job_id, entry.next_due))
                written[entry.job_id] = queued
        return written

    def claim_manual(self, job_id: str, job_name: str, now: float) -> int:
        """A record for a run asked for by hand (``hermes cron run``), queued."""
        with self._store.write() as cursor:
            rows = cursor.execute(
                "INSERT INTO cron_runs (job_id, job_name, due_at, trigger, status, claimed_at, "
                "owner) VALUES (?, ?, ?, 'manual', 'queued', ?, ?) RETURNING id",
                (job_id, job_name, now, now, this_process()),
            ).fetchall()
            return int(rows[0][0])

    def forget(self, job_id: str) -> None:
        """A removed job's cursor (its records stay, for history)."""
        with self._store.write() as cursor:
            cursor.execute("DELETE FROM cron_cursors WHERE job_id = ?", (job_id,))

    # --- a run's life ----------------------------------------------------------------------

    def start(self, run_id: int) -> None:
        with self._store.write() as cursor:
            cursor.execute(
                "UPDATE cron_runs SET status = 'running', started_at = ?, owner = ? WHERE id = ?",
                (time.time(), this_process(), run_id),
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
        with self._store.write() as cursor:
            cursor.execute(
                "UPDATE cron_runs SET status = ?, reason = ?, finished_at = ?, session_id = "
                "COALESCE(?, session_id), output_path = COALESCE(?, output_path), delivery = "
                "COALESCE(?, delivery) WHERE id = ?",
                (status, reason, time.time(), session_id, output_path, delivery, run_id),
            )

    def abandon(self, run_id: int, reason: str) -> None:
        """A run cut short in this process: ``unknown``, if it had not ended already."""
        with self._store.write() as cursor:
            cursor.execute(
                "UPDATE cron_runs SET status = 'unknown', reason = ?, finished_at = ? "
                "WHERE id = ? AND status IN ('queued', 'running')",
                (reason, time.time(), run_id),
            )

    def note_delivery(self, run_id: int, delivery: str) -> None:
        with self._store.write() as cursor:
            cursor.execute("UPDATE cron_runs SET delivery = ? WHERE id = ?", (delivery, run_id))

    def note_session(self, run_id: int, session_id: str) -> None:
        with self._store.write() as cursor:
            cursor.execute("UPDATE cron_runs SET session_id = ? WHERE id = ?", (session_id, run_id))

    def orphans(self, dead: str | None = None) -> int:
        """Records left active by a process that is gone: a running one becomes ``unknown``
        (it may have acted), a queued one ``missed`` (it never started). Call while holding
        the scheduler lock, so no live scheduler owns them. ``dead``: an owner of another
        host known to be gone (the scheduler this one took the lease over from)."""
        me = this_process()
        changed = 0
        with self._store.write() as cursor:
            for run_id, status, owner in cursor.execute(
                "SELECT id, status, owner FROM cron_runs WHERE status IN ('queued', 'running')"
            ).fetchall():
                if owner and not _settled_by_me(str(owner), me, dead):
                    continue  # ours, or another's that still runs (or another host's)
                if status == "running":
                    new, reason = "unknown", "Hermes stopped while it ran: its effect is unknown"
                else:
                    new, reason = "missed", "Hermes stopped before it could start"
                cursor.execute(
                    "UPDATE cron_runs SET status = ?, reason = ?, finished_at = ? WHERE id = ?",
                    (new, reason, time.time(), run_id),
                )
                changed += 1
        return changed

    # --- reading ----------------------------------------------------------------------------

    def get(self, run_id: int) -> Run | None:
        found = self._rows(f"SELECT {_COLUMNS} FROM cron_runs WHERE id = ?", (run_id,))
        return found[0] if found else None

    def of_job(self, job_id: str, limit: int = 20) -> list[Run]:
        return self._rows(
            f"SELECT {_COLUMNS} FROM cron_runs WHERE job_id = ? "
            "ORDER BY due_at DESC, id DESC LIMIT ?",
            (job_id, limit),
        )

    def active_jobs(self) -> set[str]:
        """Jobs with a run queued or running."""
        rows = self._store.query(
            "SELECT DISTINCT job_id FROM cron_runs WHERE status IN ('queued', 'running')"
        )
        return {str(row[0]) for row in rows}

    def failed_since(self, since: float) -> list[Run]:
        return self._rows(
            f"SELECT {_COLUMNS} FROM cron_runs WHERE status IN ('failed', 'unknown') AND "
            "COALESCE(finished_at, claimed_at) > ? ORDER BY due_at",
            (since,),
        )

    def request(self, job_id: str) -> int:
        with self._store.write() as cursor:
            rows = cursor.execute(
                "INSERT INTO cron_requests (job_id, requested_at) VALUES (?, ?) RETURNING id",
                (job_id, time.time()),
            ).fetchall()
            return int(rows[0][0])

    def open_requests(self) -> list[tuple[int, str]]:
        rows = self._store.query(
            "SELECT id, job_id FROM cron_requests WHERE run_id IS NULL ORDER BY id"
        )
        return [(int(request_id), str(job_id)) for request_id, job_id in rows]

    def answer_request(self, request_id: int, run_id: int) -> None:
        with self._store.write() as cursor:
            cursor.execute("UPDATE cron_requests SET run_id = ? WHERE id = ?", (run_id, request_id))

    def run_of_request(self, request_id: int) -> int | None:
        value = self._store.query_value(
            "SELECT run_id FROM cron_requests WHERE id = ?", (request_id,)
        )
        return None if value is None else int(value)

    def mark(self, name: str, at: float | None = None) -> None:
        with self._store.write() as cursor:
            cursor.execute(
                "INSERT INTO cron_marks (name, at) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET at = excluded.at",
                (name, time.time() if at is None else at),
            )

    def marked(self, name: str) -> float:
        value = self._store.query_value("SELECT at FROM cron_marks WHERE name = ?", (name,))
        return float(value) if value is not None else 0.0


_SET_CURSOR = (
    "INSERT INTO cron_cursors (job_id, next_due) VALUES (?, ?) "
    "ON CONFLICT (job_id) DO UPDATE SET next_due = excluded.next_due"
)


def _import_legacy(store: Store, path: Path) -> None:
    """Bring the records of a home's old ``cron/runs.db`` into the store, once: the file is
    renamed when they are in (a crash before the rename only means the next open finds the
    rows there already and skips them)."""
    if not path.is_file():
        return
    with (
        contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as legacy,
        store.write() as cursor,
    ):
        if cursor.execute("SELECT count(*) FROM cron_runs").fetchall()[0][0]:
            already = True  # brought in before (a crash came before the rename)
        else:
            already = False
            for old, new in _LEGACY_TABLES.items():
                found = _legacy_rows(legacy, old)
                if found is None:
                    continue
                names, rows = found
                marks = ", ".join("?" for _ in names)
                insert = f"INSERT INTO {new} ({', '.join(names)}) VALUES ({marks})"
                if rows:
                    cursor.executemany(insert, rows)
    if store.dialect == "postgresql" and not already:  # ids were copied: move past them
        for table in ("cron_runs", "cron_requests"):
            store.query(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
            )
    with contextlib.suppress(FileNotFoundError):  # another process set it aside first
        path.rename(path.with_name("runs.db.imported"))


def _legacy_rows(
    legacy: sqlite3.Connection, table: str
) -> tuple[list[str], list[tuple[object, ...]]] | None:
    """A table of the old log: its column names and rows (an owner was a pid then: host and
    pid now); None if the old log never had it."""
    try:
        cursor = legacy.execute(f"SELECT * FROM {table}")
    except sqlite3.DatabaseError:
        return None
    names = [column[0] for column in cursor.description]
    rows = [tuple(row) for row in cursor.fetchall()]
    if "owner" in names:
        at = names.index("owner")
        host = this_host()
        rows = [
            (*row[:at], None if row[at] is None else f"{host}:{row[at]}", *row[at + 1 :])
            for row in rows
        ]
    return names, rows
