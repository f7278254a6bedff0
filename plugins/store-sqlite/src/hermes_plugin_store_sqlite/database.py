"""Open state.db safely: WAL, foreign keys, a busy timeout, migrations, and write
transactions that take the lock up front (``BEGIN IMMEDIATE``) and retry a bounded number
of times with jitter when another process holds it.

One connection per :class:`Database`, guarded by a lock, so worker threads can share it;
apsw releases the GIL while SQLite works. Code on an event loop calls the store through
:meth:`Database.run`, which does the work right there when it cannot wait (the usual case,
and much cheaper than a thread hop under load) and in a worker thread when it would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import apsw

from hermes_plugin_store_sqlite import search
from hermes_plugin_store_sqlite.group_sync import GroupSync
from hermes_plugin_store_sqlite.schema import MIGRATIONS
from hermes_sdk.storage import ForeignStoreError, StoreBusyError, StoreError, StoreSchema
from hermes_sdk.store_engine import Cursor, MessageRow, WouldBlock

BUSY_TIMEOUT_MS = 2_000
"""How long SQLite itself waits for a lock before reporting busy."""
WRITE_ATTEMPTS = 5
"""Busy reports we absorb (with jittered backoff) before giving up on a write."""

CHECKPOINT_PAGES = 10_000
"""The write-ahead log is copied into the database once it holds this many pages (about
40 MB), by a background thread on a connection of its own: done inside a commit, as SQLite
does by default, it made one commit in a thousand take milliseconds (more while the disk is
busy), and on an event loop that stalls every conversation. That thread also starts the log
over, so it stays about this long instead of growing.

Ten times SQLite's default, because a checkpoint is not free for writers either: starting
the log over syncs its new header while holding the write lock. While the disk stalls (on
shared hosts it does, for hundreds of milliseconds) every write waits for that sync. A
longer log starts over ten times less often, and a page changed many times is copied once."""
CATCH_UP_ATTEMPTS = 3
"""PASSIVE checkpoints after the bulk, to copy what was committed meanwhile, before one that
stops writers (see :meth:`Database._copy_log`)."""
INLINE_LOCK_WAIT_SECONDS = 0.005
"""How long an event loop waits for a worker thread of this process to finish with the
connection before handing its own operation to a thread too. Going to a thread at once
would queue behind that worker and make the next caller do the same (a convoy)."""

log = logging.getLogger("hermes.store")

_sync_data = getattr(os, "fdatasync", os.fsync)
"""The data and the size, not the file's times (as SQLite syncs): the log is rewritten in
place after each checkpoint, so most syncs then need no commit of the filesystem's journal,
which every other write to the disk, ours on the event loop included, would wait behind.
macOS has no fdatasync."""

COLUMN_TYPES: dict[str, str] = {
    "id": "INTEGER PRIMARY KEY",
    "text": "TEXT",
    "integer": "INTEGER",
    "real": "REAL",
}
"""Declared column types (:class:`hermes_sdk.tables.ColumnType`) in SQLite's SQL."""

P = ParamSpec("P")
T = TypeVar("T")


class SqliteCursor(apsw.Cursor):
    """apsw's cursor, with what :class:`~hermes_sdk.store_engine.Cursor` adds."""

    def changes(self) -> int:
        return int(self.connection.changes())


def _scalar(cursor: Cursor, sql: str, bindings: Sequence[Any] = ()) -> Any:
    rows = cursor.execute(sql, bindings).fetchall()
    return rows[0][0] if rows else None


def _retry_delay(attempt: int) -> float:
    # Exponential backoff with full jitter, so waiting processes do not retry in step.
    return random.uniform(0, min(1.0, 0.05 * 2**attempt))


class Database:
    """A connection to state.db with the kernel's tables at their latest version (a
    :class:`~hermes_sdk.store_engine.Database`)."""

    dialect = "sqlite"
    shared = False  # a file of the home: its own processes on this host alone

    def __init__(
        self,
        path: Path,
        migrations: Sequence[str] = MIGRATIONS,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        write_attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        self.path = path
        self._wal = Path(f"{path}-wal")
        self._write_attempts = write_attempts
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.RLock()
        self._thread = threading.local()  # .no_wait: set while Database.run tries inline
        self.checkpoint_pages = CHECKPOINT_PAGES
        self._checkpoint_at = CHECKPOINT_PAGES
        self._checkpointing = threading.Lock()
        self._group_sync: GroupSync | None = None  # made by the first durable run()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = apsw.Connection(str(path))
            self._conn.cursor_factory = SqliteCursor
            self._conn.set_busy_timeout(busy_timeout_ms)
            self._refuse_foreign()  # before journal_mode, which would rewrite its header
            # journal_mode needs the database readable: this is where a non-database fails.
            self._conn.execute("PRAGMA journal_mode=WAL").fetchall()
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoints
            self._conn.execute("PRAGMA wal_autocheckpoint=0")  # see CHECKPOINT_PAGES
            self._conn.set_wal_hook(self._wal_grew)
        except apsw.NotADBError:
            raise StoreError(
                f"{path} is not a SQLite database (or is damaged); move it aside and Hermes "
                "will create a new one"
            ) from None
        except (apsw.CantOpenError, apsw.ReadOnlyError, OSError) as exc:
            raise StoreError(f"{path}: cannot open the state store: {exc}") from None
        self._migrate(migrations)

    # --- schema -----------------------------------------------------------------------

    def _refuse_foreign(self) -> None:
        """A database with tables of its own and no version of ours is another tool's: it is
        refused, and left as it was (our migrations set the version with the first tables,
        in one transaction)."""
        row = self._conn.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), "
            "EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table')"
        ).fetchone()
        if row is not None and row[0] == 0 and row[1]:
            self._conn.close()
            raise ForeignStoreError(str(self.path))

    @property
    def where(self) -> str:
        return str(self.path)

    @property
    def version(self) -> int:
        return int(self.query_value("PRAGMA user_version") or 0)

    def _migrate(self, migrations: Sequence[str]) -> None:
        latest = len(migrations)
        with self.write() as cursor:
            current = int(_scalar(cursor, "PRAGMA user_version"))
            if current > latest:
                raise StoreError(
                    f"{self.path} has schema version {current}, newer than this Hermes "
                    f"understands ({latest}); upgrade Hermes (hermes update), or point "
                    "HERMES_HOME elsewhere"
                )
            for version in range(current, latest):
                cursor.execute(migrations[version])
                cursor.execute(f"PRAGMA user_version = {version + 1}")

    # --- transactions -----------------------------------------------------------------

    def _begin(self, cursor: apsw.Cursor, wait: bool) -> None:
        if not wait:
            self._conn.set_busy_timeout(0)
            try:
                cursor.execute("BEGIN IMMEDIATE")
            except apsw.BusyError:
                raise WouldBlock from None
            finally:
                self._conn.set_busy_timeout(self._busy_timeout_ms)
            return
        for attempt in range(self._write_attempts):
            try:
                cursor.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError:
                if attempt == self._write_attempts - 1:
                    raise StoreBusyError(
                        f"{self.path} stayed locked by another process; try again, or "
                        "look for a stuck hermes process"
                    ) from None
                time.sleep(_retry_delay(attempt))

    @contextmanager
    def write(
        self,
        durable: bool = False,
        wait: bool = True,
        *,
        serialized: bool = True,
        key: str | None = None,
    ) -> Iterator[SqliteCursor]:
        """A write transaction: taken with BEGIN IMMEDIATE, committed on success, rolled back
        on any exception (every one serialized: ``serialized=False`` and ``key`` change
        nothing here).
        Raises StoreBusyError after bounded retries of a held lock, and StoreError for any
        other database failure (disk full, I/O error ...).

        ``durable`` syncs this commit to disk before returning: use it for writes that must
        survive a power cut, such as an assistant message whose tools are about to run.
        Other commits survive a crash of the process, not the OS. The sync happens after the
        connection is free again (see :meth:`sync`), and under :meth:`run` in the sync
        thread, one sync for every commit waiting then (:class:`GroupSync`), so a disk that
        stalls for a moment stalls neither other writers nor a loop.

        ``wait=False`` never waits for a lock (this process's or another's): it raises
        :class:`WouldBlock` at once instead, so an event loop can write inline when the
        database is free and hand the write to a thread when it is not.
        """
        inline = self._no_wait()
        wait = wait and not inline
        self._take_lock(wait, inline)
        try:
            cursor = SqliteCursor(self._conn)
            self._begin(cursor, wait)
            try:
                yield cursor
                cursor.execute("COMMIT")
            except BaseException as exc:
                if not self._conn.getautocommit():  # SQLite may have rolled back already
                    cursor.execute("ROLLBACK")
                if isinstance(exc, apsw.Error):
                    raise StoreError(f"{self.path}: could not save: {exc}") from exc
                raise
        finally:
            self._lock.release()
        if durable:
            if inline:
                self._thread.sync_owed = True  # Database.run waits for the sync thread
            else:
                self.sync()

    def sync(self) -> None:
        """Make every commit so far survive a power cut.

        In WAL mode a commit is frames appended to the ``-wal`` file, so syncing that file
        is what ``synchronous=FULL`` does at each commit; done here instead, it runs without
        holding the connection, and one sync covers every commit made before it. Without a
        WAL file, the last checkpoint has already synced everything into the database."""
        try:
            self._sync_file(self._wal)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"{self.path}: could not save (sync failed: {exc})") from None

    @staticmethod
    def _sync_file(path: Path) -> None:
        fd = os.open(path, os.O_RDWR)
        try:
            _sync_data(fd)
        finally:
            os.close(fd)

    def query(
        self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Run a read-only statement and return all rows."""
        inline = self._no_wait()
        self._take_lock(not inline, inline)
        try:
            return list(self._conn.execute(sql, bindings))
        finally:
            self._lock.release()

    def query_value(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> Any:
        rows = self.query(sql, bindings)
        return rows[0][0] if rows else None

    # --- from an event loop ---------------------------------------------------------------

    def _no_wait(self) -> bool:
        return bool(getattr(self._thread, "no_wait", False))

    def _take_lock(self, wait: bool, inline: bool) -> None:
        if wait:
            self._lock.acquire()
        elif inline:
            if not self._lock.acquire(timeout=INLINE_LOCK_WAIT_SECONDS):
                raise WouldBlock
        elif not self._lock.acquire(blocking=False):
            raise WouldBlock

    async def run(self, operation: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a short store operation for an event loop: right here when nothing would make
        it wait long (no other process writes, the disk syncs fast, a worker thread of ours
        is done with the connection within a few milliseconds), else in a worker thread.
        Each of its reads and writes raises WouldBlock rather than wait, and the operation
        starts over in the thread; so it must make at most one write transaction, or be
        safe to run again (as a repair that re-reads is)."""
        local = self._thread
        local.no_wait, local.sync_owed = True, False
        try:
            result = operation(*args, **kwargs)
            blocked = False
        except WouldBlock:
            blocked = True
        finally:
            sync_owed = local.sync_owed
            local.no_wait = local.sync_owed = False  # before any await: the loop goes on
        if blocked:
            return await asyncio.to_thread(operation, *args, **kwargs)
        if sync_owed:
            await self.synced()
        return result

    async def synced(self) -> None:
        """For an event loop: return once every commit made so far survives a power cut
        (a sync that started after this call, shared with everyone waiting then)."""
        if self._group_sync is None:
            self._group_sync = GroupSync(self.sync)
        await self._group_sync.wait()

    # --- checkpoints ----------------------------------------------------------------------

    def _wal_grew(self, _connection: apsw.Connection, _name: str, pages: int) -> int:
        """After each commit: start a checkpoint in the background when the log is long."""
        if pages < self.checkpoint_pages:
            self._checkpoint_at = self.checkpoint_pages  # the log restarted after a checkpoint
        elif pages >= self._checkpoint_at and self._checkpointing.acquire(blocking=False):
            # Next time only after as many pages more, should readers keep this one short.
            self._checkpoint_at = pages + self.checkpoint_pages
            threading.Thread(target=self._checkpoint, name="hermes-checkpoint", daemon=True).start()
        return apsw.SQLITE_OK

    def _checkpoint(self) -> None:
        try:
            connection = apsw.Connection(str(self.path))
            try:
                connection.set_busy_timeout(self._busy_timeout_ms)
                connection.execute("PRAGMA wal_autocheckpoint=0")
                self._copy_log(connection)
                self._start_log_over(connection)
            finally:
                connection.close()
        except (apsw.Error, OSError) as exc:  # the next one tries again; the log stays valid
            log.warning("%s: checkpoint failed: %s", self.path, exc)
        finally:
            self._checkpointing.release()

    def _copy_log(self, connection: apsw.Connection) -> None:
        """Copy the log into the database without stopping writers where possible.

        A PASSIVE checkpoint copies what was committed when it started; the database file
        is then synced without any lock held; a few more PASSIVE ones copy what came
        meanwhile (little) until the log is all copied. Only a log that keeps ahead of
        that gets a RESTART checkpoint, which makes writers wait while it syncs."""
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        self._sync_file(self.path)
        for _ in range(CATCH_UP_ATTEMPTS):
            _busy, log_pages, copied = connection.execute(
                "PRAGMA wal_checkpoint(PASSIVE)"
            ).fetchall()[0]
            if log_pages == copied:
                return
        connection.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()

    def _start_log_over(self, connection: apsw.Connection) -> None:
        """Make the first commit into the copied log here, in the checkpoint's thread.

        That commit starts the log over, and SQLite syncs the log's new header in it: made
        by an event loop's commit, a disk that stalls would stall the loop. The write sets
        the schema version to what it is (one page); should another commit come first, it
        starts the log over instead, and this one is a harmless page more."""
        with contextlib.closing(connection.cursor()) as cursor:
            try:
                cursor.execute("BEGIN IMMEDIATE")
            except apsw.BusyError:
                return  # another process writes: its commit starts the log over
            try:
                version = int(cursor.execute("PRAGMA user_version").fetchall()[0][0] or 0)
                cursor.execute(f"PRAGMA user_version = {version}")
                cursor.execute("COMMIT")
            except BaseException:
                if not connection.getautocommit():
                    cursor.execute("ROLLBACK")
                raise

    # --- what differs between engines -----------------------------------------------------

    def index_pending(self) -> int:
        return search.index_pending(self)

    def find_words(
        self, terms: Sequence[str], scope: str, bindings: Sequence[Any], limit: int
    ) -> list[MessageRow]:
        return search.find_words(self, terms, scope, bindings, limit)

    def find_substrings(
        self, text: str, scope: str, bindings: Sequence[Any], limit: int
    ) -> list[MessageRow]:
        return search.find_substrings(self, text, scope, bindings, limit)

    def local_day(self, column: str) -> str:
        return f"date({column}, 'unixepoch', 'localtime')"

    def tables(self, prefix: str) -> list[str]:
        rows = self.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ? "
            "ORDER BY rowid",
            (len(prefix), prefix),
        )
        return [str(row[0]) for row in rows]

    def columns(self, table: str) -> list[str]:
        return [str(row[1]) for row in self.query(f"PRAGMA table_info({table})")]

    def copied(self, table: str) -> None:
        """SQLite gives a new row the id after the largest: nothing to move."""

    def migrations_of(self, schema: StoreSchema) -> tuple[str, ...]:
        if schema.declared:
            from hermes_sdk.tables import render_versions  # only a declared schema needs it

            return render_versions(schema.declared, COLUMN_TYPES)
        return schema.migrations

    def close(self) -> None:
        with self._lock:
            self._conn.close()
