"""What the kernel needs of a store engine: the database that holds the state store (sessions,
messages, usage, plugins' tables), whichever engine keeps it. An engine plugin yields a
:class:`~hermes_sdk.specs.StoreEngineSpec` whose factory opens a :class:`Database` for a
:class:`StoreTarget`.

The kernel writes its SQL once, with ``?`` placeholders, in the subset every engine runs
alike; what cannot be written that way (full-text search, day arithmetic, the catalog of
tables, plugins' migrations in the engine's own SQL) it asks the database for, through the
methods below. A write transaction is serialized against every other, in every process,
as SQLite's ``BEGIN IMMEDIATE`` does: code that reads and then writes (the next ``seq``, a
lease) stays correct on every engine without retry loops. One that names a ``key`` is
serialized with the writes of that key and with every unkeyed write only, where the engine
can tell them apart (a server's database, where many workers write at once). The engine
also owns the kernel's tables in its SQL, migrated when it opens. Failures are
:class:`~hermes_sdk.storage.StoreError` (one line), :class:`~hermes_sdk.storage.StoreBusyError`
when another process held the lock too long, and
:class:`~hermes_sdk.storage.ForeignStoreError` for a database another tool made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, NamedTuple, ParamSpec, Protocol, TypeVar

from hermes_sdk.storage import StoreSchema

__all__ = ["Cursor", "Database", "MessageRow", "Rows", "StoreTarget", "WouldBlock"]

P = ParamSpec("P")
T = TypeVar("T")

MessageRow = tuple[int, str, str, float, str | None]
"""A message a search found: id, session id, role, created at, its text."""


class WouldBlock(Exception):
    """A write asked not to wait (``wait=False``) found the database busy; nothing was
    written."""


class StoreTarget(NamedTuple):
    """Where the state store is to be kept, as config.yaml and .env say."""

    home: Path
    """HERMES_HOME: an engine that keeps its files in the home keeps them here."""
    url: str | None
    """``store.url``; None when unset."""
    password: str | None
    """``HERMES_STORE_PASSWORD`` from the environment or .env; never in the URL."""
    pool_size: int
    """``store.pool_size``: connections this process may keep to a server."""


class Rows(Protocol):
    """What a statement returned."""

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def fetchone(self) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


class Cursor(Protocol):
    """The cursor of a write transaction."""

    def execute(self, statements: str, bindings: Sequence[Any] = ..., /) -> Rows:
        """Run SQL with ``?`` placeholders."""
        ...

    def changes(self) -> int:
        """Rows the last INSERT, UPDATE or DELETE changed."""
        ...

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]], /) -> Any:
        """Run one statement for each row of bindings (one round trip for many rows where
        the engine can)."""
        ...


class Database(Protocol):
    """A database holding the state store, its kernel tables at the engine's latest version."""

    dialect: str
    """Which SQL the statements run as (``"sqlite"``, ``"postgresql"``): what a plugin's
    :attr:`~hermes_sdk.storage.Store.dialect` says."""
    shared: bool
    """Whether processes of other homes and hosts may open it too (a server's database):
    what :attr:`~hermes_sdk.storage.Store.shared` says."""

    @property
    def where(self) -> str:
        """Where it is, for messages: a path, or a URL without its password."""
        ...

    @property
    def version(self) -> int:
        """The version of the kernel's tables."""
        ...

    def write(
        self,
        durable: bool = False,
        wait: bool = True,
        *,
        serialized: bool = True,
        key: str | None = None,
    ) -> AbstractContextManager[Cursor]:
        """One write transaction: committed when the block ends, rolled back if it raises.
        ``durable``: the commit survives a power cut before this returns. ``wait=False``:
        raise :class:`WouldBlock` at once rather than wait for a lock. ``serialized=False``:
        the write reads nothing that decides what it writes, so it need not queue behind
        the lock that orders every other write (where the engine has one to skip).
        ``key``: what the write reads to decide what it writes belongs to that key alone
        (one session's messages and turn lease, one named lease), so it need only wait for
        writes of the same key and for unkeyed ones (an engine that serializes every write
        may ignore it)."""
        ...

    def query(
        self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Every row of a read-only statement."""
        ...

    def query_value(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """The first column of the first row, or None."""
        ...

    async def run(self, operation: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a short store operation for an event loop: right there when nothing makes it
        wait, else in a worker thread (it may be started over there, so it makes at most one
        write transaction, or is safe to run again)."""
        ...

    async def synced(self) -> None:
        """Return once every commit so far survives a power cut."""
        ...

    def close(self) -> None: ...

    # --- what the kernel's SQL cannot say alike on every engine -----------------------------

    def index_pending(self) -> int:
        """Bring the full-text index up to date with the messages saved since it last was;
        how many were added (0 for an engine that indexes each row as it is written)."""
        ...

    def find_words(
        self, terms: Sequence[str], scope: str, bindings: Sequence[Any], limit: int
    ) -> list[MessageRow]:
        """Messages holding every one of ``terms`` (words, any case, diacritics folded),
        best first among the newest matches. ``scope`` is AND-clauses over the alias ``m``
        (messages) with its ``bindings``."""
        ...

    def find_substrings(
        self, text: str, scope: str, bindings: Sequence[Any], limit: int
    ) -> list[MessageRow]:
        """Messages holding ``text`` anywhere (any case; CJK and code), newest first."""
        ...

    def local_day(self, column: str) -> str:
        """An SQL expression for the local day (``YYYY-MM-DD``) of ``column``, a Unix time."""
        ...

    def tables(self, prefix: str) -> list[str]:
        """The tables whose names start with ``prefix``, in the order they were made."""
        ...

    def columns(self, table: str) -> list[str]:
        """The columns a row of ``table`` can be inserted with (not generated ones)."""
        ...

    def copied(self, table: str) -> None:
        """Rows were copied into ``table`` with their ids: new rows must get ids past them."""
        ...

    def migrations_of(self, schema: StoreSchema) -> tuple[str, ...]:
        """``schema``'s migrations in this engine's SQL; StoreError in one line when the
        plugin gives none for it."""
        ...
