"""Plugin storage: tables of a plugin's own in the home's state store (SQLite), with
migrations of its own, written the way the kernel writes sessions.

A plugin that keeps durable state (a gateway's delivery ledger and pairings, say) declares
its tables once, and every store engine makes them in its own SQL (:mod:`hermes_sdk.tables`)::

    SCHEMA = StoreSchema(name="notes", declared=(
        (Table("notes_items", (
            Column("id", ColumnType.ID), Column("text", ColumnType.TEXT, required=True),
        )),),
    ))

and gets a :class:`Store` where it runs: ``runtime.plugin_store(SCHEMA)`` in a front-end (it shares
the runtime's connection, so the plugin's writes and the agent's never wait for each other
across connections), or ``open_store(home, SCHEMA)`` anywhere else (a command, a test), which
it closes. Each migration runs once, in order, in the transaction that records it; the
version is kept per schema name, so plugins never collide. Name your tables after your
schema (``notes_items``): the kernel's own tables and other plugins' share the database.

Statements have ``?`` placeholders. A home may keep its store in PostgreSQL instead
(``store.url``: a team's gateway workers on several hosts share it); a plugin whose schema
is SQL ``migrations`` runs there only if it gives the same tables in PostgreSQL's SQL too
(``postgresql=``; declared tables need nothing more), and its statements are run with ``?``
placeholders there as well: write them in the SQL both engines share (``CAST(? AS TEXT) IS
NULL`` where SQLite would accept a bare ``? IS NULL``), and ask :attr:`Store.dialect` where
they cannot be. On both, every write transaction is serialized with every other (in every
process, on every host): read, then write, in one transaction, and nothing changes in
between. A write whose decisions concern one thing only (a named lease, one chat's rows)
may say so with ``key=``: on PostgreSQL it then waits only for writes of that key and for
unkeyed ones, so many workers write side by side. A write transaction takes its lock up
front and is retried a bounded number of times while another process holds it; a failure
to save is :class:`StoreError`, one line.
Fields and methods may be added in minor SDK versions.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    from hermes_sdk.tables import Step

__all__ = [
    "STORE_ENTRY_POINTS",
    "ForeignStoreError",
    "Store",
    "StoreBusyError",
    "StoreCursor",
    "StoreError",
    "StoreSchema",
    "open_store",
]

STORE_ENTRY_POINTS = "hermes.store"
"""The entry point group through which the kernel offers :func:`open_store`."""

P = ParamSpec("P")
T = TypeVar("T")


class StoreError(Exception):
    """The store could not be read or saved (locked too long, disk full, a schema newer than
    this Hermes knows); the message says what happened, in one line."""


class StoreBusyError(StoreError):
    """Another process held the write lock for longer than the engine is willing to wait."""


class ForeignStoreError(StoreError):
    """The store is not a Hermes store (it has tables, but no schema version of ours: another
    tool's, met by accident): refused before anything is written, and left as it was."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.problem = f"{where}: not a Hermes state store (it has tables, but no version of ours)"
        self.fix = (
            "point HERMES_HOME at another folder, or move the file aside and Hermes will "
            "create a new one"
        )
        super().__init__(f"{self.problem}: {self.fix}")


@dataclass(frozen=True, slots=True)
class StoreSchema:
    """A plugin's tables: ``declared`` versions (tables declared once, made by every store
    engine in its own SQL; see :mod:`hermes_sdk.tables`), or SQL ``migrations``, where
    ``migrations[n]`` moves them from version ``n`` to ``n + 1``. Never edit a version that
    was released; add one."""

    name: str
    """Whose tables these are (the plugin's name); also the prefix of their names."""
    migrations: tuple[str, ...] = ()
    """SQLite's SQL scripts (several statements each allowed), applied in order."""
    postgresql: tuple[str, ...] = ()
    """The same tables in PostgreSQL's SQL, versioned on their own (PostgreSQL's version 1
    may hold what SQLite reached in several); empty: this plugin cannot run on a store in
    PostgreSQL, and says so in one line when a home is set up that way."""
    declared: tuple[tuple[Step, ...], ...] = ()
    """The versions as steps, for every engine: give these or ``migrations``, not both."""
    uses: tuple[StoreSchema, ...] = ()
    """Schemas whose tables these migrations read or fill (a version that moves rows into a
    shared table): made, or brought up to date, first."""

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"a store schema needs a plain name, got {self.name!r}")
        if bool(self.declared) == bool(self.migrations or self.postgresql):
            raise ValueError(
                f"store schema {self.name!r}: give its versions as declared steps, or as SQL "
                "migrations, not both (and not neither)"
            )
        if self.declared:
            from hermes_sdk.tables import check

            for version in self.declared:
                for step in version:
                    check(step)


class StoreCursor(Protocol):
    """The cursor of a write transaction: run statements, read what they return."""

    def execute(self, statements: str, bindings: Sequence[Any] = ..., /) -> Any:
        """Run SQL with ``?`` placeholders; the result iterates rows and has ``fetchall``."""
        ...

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def changes(self) -> int:
        """How many rows the last INSERT, UPDATE or DELETE changed (a claim that found its
        row taken changed none)."""
        ...

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]], /) -> Any:
        """Run one statement for each row of bindings (one round trip on PostgreSQL)."""
        ...


class Store(abc.ABC):
    """A plugin's tables in the state store. Reads and writes are short and synchronous
    (call them from a worker thread, or through :meth:`run` from an event loop)."""

    @abc.abstractmethod
    def write(
        self, durable: bool = False, *, serialized: bool = True, key: str | None = None
    ) -> AbstractContextManager[StoreCursor]:
        """``with store.write() as cursor:`` one transaction: committed when the block ends,
        rolled back if it raises. ``durable`` syncs the commit to disk before returning
        (it survives a power cut, not only a crash of the process); without it a commit
        survives a crash, and the next durable commit or :meth:`synced` covers it too.
        ``serialized=False``: this write reads nothing that decides what it writes (it only
        sets a row's state), so on PostgreSQL it skips the lock that orders every other
        write and never queues behind them (SQLite serializes every write all the same).
        ``key``: what this write reads to decide what it writes belongs to that key alone
        (``"lease:NAME"``, one chat's rows): on PostgreSQL it waits only for writes of the
        same key and for writes without one, which in turn wait for it."""

    @abc.abstractmethod
    def query(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a read-only statement."""

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``: which SQL the statements run as."""
        return "sqlite"

    @property
    def shared(self) -> bool:
        """Whether processes of other homes, on other hosts, may use this store too (a
        database server's, serving a team's gateway workers); False for a store in the
        home's own files, which only that home's processes on this host reach. What is
        shared is coordinated through :mod:`hermes_commons.leases`, on either."""
        return False

    def query_value(self, sql: str, bindings: Sequence[Any] = ()) -> Any:
        """The first column of the first row, or None."""
        rows = self.query(sql, bindings)
        return rows[0][0] if rows else None

    @abc.abstractmethod
    async def run(self, operation: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a short store operation for an event loop: right there when nothing makes it
        wait (the usual case, far cheaper than a thread hop under load), else in a worker
        thread. The operation may be started over in the thread, so it must make at most
        one write transaction, or be safe to run again."""

    @abc.abstractmethod
    async def synced(self) -> None:
        """For an event loop: return once every commit so far survives a power cut. Waiters
        share one disk sync, so many writers pay for one."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close a store from :func:`open_store`; a runtime's store closes with the runtime
        (closing it is a no-op)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def open_store(home: str | Path, schema: StoreSchema) -> Store:
    """The store of the Hermes home at ``home`` with ``schema``'s tables migrated, on a
    connection of its own (close it, or use it in a ``with`` block). Raises
    :class:`StoreError` if the store cannot be opened or migrated.

    The kernel provides it (entry point group ``hermes.store``), so this needs hermes-kernel
    installed; RuntimeError says so if it is not."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=STORE_ENTRY_POINTS), key=lambda point: point.name)
    if not found:
        raise RuntimeError("no Hermes store is installed: pip install hermes-kernel")
    opener: Callable[[str, StoreSchema], Store] = found[0].load()
    return opener(str(home), schema)
