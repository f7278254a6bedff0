"""The state store on a shared PostgreSQL (``store.url: postgresql://...``), through psycopg 3
and a connection pool, for several front-end workers on several hosts.

It keeps SQLite's semantics rather than inventing new ones: every write transaction first
takes one transaction-scoped advisory lock, so writes are serialized across every process
and host exactly as ``BEGIN IMMEDIATE`` serializes them in state.db, and code that reads and
then writes (the next ``seq``, a lease, a ledger claim) is correct on both engines without
retry loops. Reads never take it. Commits are durable when they return (PostgreSQL's
``synchronous_commit``), so ``durable`` asks nothing more.

The SQL is the store's own, written with ``?`` placeholders: :func:`to_pyformat` turns them
into psycopg's ``%s`` (outside quotes and comments). Values come back as SQLite gives them:
a boolean parameter is stored as an integer, and a ``numeric`` (the ``sum`` of integers) is
an int, or a float when it has a fraction.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, ParamSpec, TypeVar

import psycopg
import psycopg_pool
from psycopg.abc import Buffer
from psycopg.adapt import Dumper, Loader
from psycopg.types.string import StrDumperUnknown

from hermes_kernel.store.backend import Dialect, redacted
from hermes_kernel.store.errors import StoreBusyError, StoreError, WouldBlock

log = logging.getLogger("hermes.store")

P = ParamSpec("P")
T = TypeVar("T")

WRITE_LOCK = 0x4845524D4553  # "HERMES": the advisory lock every write transaction takes
CONNECT_TIMEOUT_SECONDS = 10.0
LOCK_TIMEOUT = "30s"
"""How long a write waits for the lock: transactions are milliseconds, so only a process
stuck inside one holds it this long (and the server ends that one, below)."""
IDLE_IN_TRANSACTION_TIMEOUT = "60s"
"""A process that stops inside a transaction (SIGSTOP, a hung host) loses it, and its lock."""


_DOLLAR_TAG = re.compile(r"\$[A-Za-z_]*\$")


def _literal_end(sql: str, i: int) -> int:
    """Where the quoted string, quoted name, comment or dollar-quoted body starting at ``i``
    ends (the index after it); ``i`` itself if none starts there."""
    char = sql[i]
    if char == "'" and i > 0 and sql[i - 1] in "eE":  # E'...': a backslash escapes
        j = i + 1
        while j < len(sql) and sql[j] != "'":
            j += 2 if sql[j] == "\\" else 1
        return min(j + 1, len(sql))
    if char in "'\"":
        end = sql.find(char, i + 1)  # '' inside a string is two strings back to back
        return len(sql) if end < 0 else end + 1
    if sql.startswith("--", i):
        end = sql.find("\n", i)
        return len(sql) if end < 0 else end
    if sql.startswith("/*", i):
        end = sql.find("*/", i + 2)
        return len(sql) if end < 0 else end + 2
    tag = _DOLLAR_TAG.match(sql, i) if char == "$" else None
    if tag is not None:
        end = sql.find(tag.group(0), tag.end())
        return len(sql) if end < 0 else end + len(tag.group(0))
    return i


@functools.lru_cache(maxsize=1024)
def to_pyformat(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s``, and a literal ``%`` as ``%%``; quoted strings,
    quoted names, comments and dollar-quoted bodies are left as they are (a ``?`` there is
    text). So PostgreSQL's own ``?`` operators (jsonb) cannot be written in the store's SQL:
    use their functions (``jsonb_exists``)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        char = sql[i]
        end = _literal_end(sql, i)
        if end > i:
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif char == "?":
            out.append("%s")
            i += 1
        elif char == "%":
            out.append("%%")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


class _BoolAsInteger(Dumper):
    """True and False as 1 and 0: the store's flag columns are integers, as in SQLite."""

    oid = psycopg.postgres.types["int4"].oid

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


class _TextWithoutNul(StrDumperUnknown):
    """Text with any NUL character as U+FFFD: PostgreSQL's text cannot hold NUL, which
    SQLite stores (a tool's binary output, a pasted message); refusing the row would lose
    the whole write, a front-end's batch of messages with it."""

    def dump(self, obj: Any) -> Buffer | None:
        return super().dump(obj.replace("\x00", "\ufffd") if "\x00" in obj else obj)


class _NumericAsNumber(Loader):
    """A ``numeric`` as an int when whole (``sum`` of integers), else a float."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


def _connection_settings(url: str) -> dict[str, Any]:
    """What every connection is opened with: the URL's own settings win (a keyword given
    to psycopg would override them), and ours are added to its ``options``."""
    try:
        given = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        given = {}
    ours = (
        f"-c lock_timeout={LOCK_TIMEOUT} "
        f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_TIMEOUT} -c TimeZone=UTC"
    )
    settings: dict[str, Any] = {
        "autocommit": True,
        "options": f"{given['options']} {ours}" if given.get("options") else ours,
    }
    if "connect_timeout" not in given:
        settings["connect_timeout"] = int(CONNECT_TIMEOUT_SECONDS)
    if "application_name" not in given:
        settings["application_name"] = "hermes"
    return settings


class PostgresCursor:
    """psycopg's cursor behind the store's :class:`~hermes_kernel.store.backend.Cursor`."""

    def __init__(self, cursor: psycopg.Cursor[tuple[Any, ...]]) -> None:
        self._cursor = cursor

    def execute(self, statements: str, bindings: Sequence[Any] = (), /) -> PostgresCursor:
        if bindings:
            self._cursor.execute(to_pyformat(statements), tuple(bindings))
        else:
            self._cursor.execute(statements.encode())  # several statements, no placeholders
        return self

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]], /) -> None:
        self._cursor.executemany(to_pyformat(statement), [tuple(row) for row in rows])

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._cursor.fetchall() if self._cursor.description is not None else []

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._cursor.fetchone() if self._cursor.description is not None else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())

    def changes(self) -> int:
        return max(0, self._cursor.rowcount)


class PostgresDatabase:
    """The state store in a PostgreSQL database (a
    :class:`~hermes_kernel.store.backend.StoreBackend`)."""

    dialect = Dialect.POSTGRESQL

    def __init__(
        self,
        url: str,
        *,
        password: str | None = None,
        pool_size: int = 8,
        migrations: Sequence[str] | None = None,
    ) -> None:
        self.url = url
        self._local = threading.local()  # .connection: this thread's write transaction
        self._threads = ThreadPoolExecutor(max(1, pool_size), thread_name_prefix="hermes-store")
        kwargs = _connection_settings(url)
        if password:
            kwargs["password"] = password
        self._check_reachable(kwargs)  # one line with the driver's reason, at once
        self._pool = psycopg_pool.ConnectionPool(
            url,
            kwargs=kwargs,
            min_size=1,
            max_size=max(1, pool_size),
            configure=self._configure,
            check=psycopg_pool.ConnectionPool.check_connection,
            timeout=CONNECT_TIMEOUT_SECONDS,
            reconnect_timeout=CONNECT_TIMEOUT_SECONDS,
            name="hermes-store",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
        except psycopg_pool.PoolTimeout:
            self._pool.close(timeout=0)
            raise self._unreachable("no connection within the time allowed") from None
        except BaseException:
            self._pool.close(timeout=0)
            raise
        try:
            from hermes_kernel.store.schema_postgresql import MIGRATIONS, migrate

            migrate(self, MIGRATIONS if migrations is None else migrations)
        except BaseException:
            self._pool.close(timeout=0)
            raise

    def _check_reachable(self, kwargs: dict[str, Any]) -> None:
        """One direct connection first: the pool retries a refused login for its whole
        timeout and then says only that it timed out."""
        try:
            psycopg.connect(self.url, **kwargs).close()
        except psycopg.Error as exc:
            raise self._unreachable(_first_line(exc)) from None

    def _unreachable(self, reason: str) -> StoreError:
        return StoreError(
            f"cannot reach the state store at {self.where}: {reason}; check store.url "
            "(and HERMES_STORE_PASSWORD in .env), and that PostgreSQL runs"
        )

    @staticmethod
    def _configure(connection: psycopg.Connection[Any]) -> None:
        connection.adapters.register_dumper(bool, _BoolAsInteger)
        connection.adapters.register_dumper(str, _TextWithoutNul)
        connection.adapters.register_loader("numeric", _NumericAsNumber)

    @property
    def where(self) -> str:
        return redacted(self.url)

    @property
    def version(self) -> int:
        from hermes_kernel.store.schema_postgresql import current_version

        return current_version(self)

    # --- transactions -----------------------------------------------------------------

    @contextmanager
    def write(
        self, durable: bool = False, wait: bool = True, *, serialized: bool = True
    ) -> Iterator[PostgresCursor]:
        """A write transaction, serialized with every other write of every process (see the
        module's doc); committed on success, rolled back on any exception. ``wait=False``
        raises :class:`WouldBlock` at once when another transaction holds the lock.
        ``serialized=False`` takes no lock: for a write that reads nothing it changes (only
        row locks order it), which then never queues behind the others."""
        if getattr(self._local, "connection", None) is not None:
            raise StoreError(f"{self.where}: a write transaction inside another (a bug)")
        try:
            with self._pool.connection() as connection, connection.transaction():
                if serialized:
                    lock = "pg_advisory_xact_lock" if wait else "pg_try_advisory_xact_lock"
                    row = connection.execute(f"SELECT {lock}({WRITE_LOCK})").fetchone()
                    if not wait and row is not None and row[0] is False:
                        raise WouldBlock
                self._local.connection = connection
                try:
                    yield PostgresCursor(connection.cursor())
                finally:
                    self._local.connection = None
        except psycopg.errors.LockNotAvailable:
            raise StoreBusyError(
                f"{self.where}: another process held the store's write lock for "
                f"{LOCK_TIMEOUT}; try again, or look for a stuck hermes process"
            ) from None
        except psycopg_pool.PoolTimeout:
            raise self._no_free_connection() from None
        except psycopg.Error as exc:
            raise StoreError(f"{self.where}: could not save: {_first_line(exc)}") from exc

    def query(
        self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Run a read-only statement and return all rows (inside this thread's write
        transaction, if one is open, so it sees what that transaction wrote)."""
        params = tuple(bindings) if not isinstance(bindings, dict) else bindings
        statement = to_pyformat(sql) if params else sql
        open_write = getattr(self._local, "connection", None)
        try:
            if open_write is not None:
                rows: list[tuple[Any, ...]] = open_write.execute(
                    statement, params or None
                ).fetchall()
                return rows
            with self._pool.connection() as connection:
                cursor = connection.execute(statement, params or None)
                return cursor.fetchall() if cursor.description is not None else []
        except psycopg_pool.PoolTimeout:
            raise self._no_free_connection() from None
        except psycopg.Error as exc:
            raise StoreError(f"{self.where}: could not read: {_first_line(exc)}") from exc

    def _no_free_connection(self) -> StoreBusyError:
        return StoreBusyError(
            f"{self.where}: no free connection to the state store; raise store.pool_size "
            "or check that PostgreSQL is reachable"
        )

    def query_value(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> Any:
        rows = self.query(sql, bindings)
        return rows[0][0] if rows else None

    async def run(self, operation: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A store operation for an event loop: in a worker thread, since every statement
        waits for the network. The threads are the store's own, one per pooled connection:
        in the loop's default executor (six threads on two cores, shared with tools and
        every other ``to_thread``) store calls queued behind each other and everything
        else."""
        call = functools.partial(operation, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._threads, call)

    async def synced(self) -> None:
        """Every commit is durable when it returns."""

    def close(self) -> None:
        self._threads.shutdown(wait=False)
        self._pool.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
