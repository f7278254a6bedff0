"""What the store's modules need of a database, whichever engine holds it: SQLite in
HERMES_HOME (:class:`~hermes_kernel.store.db.Database`, the default) or a shared PostgreSQL
(:class:`~hermes_kernel.store.postgres.PostgresDatabase`).

SQL is written once, with ``?`` placeholders, in the subset both engines run alike; the few
places where they differ (full-text search, day arithmetic) ask :attr:`StoreBackend.dialect`.
Every write transaction is serialized against every other, in every process, as SQLite's
``BEGIN IMMEDIATE`` does: code that reads and then writes (the next ``seq``, a lease) stays
correct on both without retry loops.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, ParamSpec, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

P = ParamSpec("P")
T = TypeVar("T")


class Dialect(enum.StrEnum):
    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


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
        """Run one statement for each row of bindings (a copy's batch: one round trip for
        many rows on PostgreSQL)."""
        ...


class StoreBackend(Protocol):
    """A database holding the state store, with its schema at this kernel's version."""

    dialect: Dialect

    @property
    def where(self) -> str:
        """Where it is, for messages: a path, or a URL without its password."""
        ...

    @property
    def version(self) -> int: ...

    def write(
        self, durable: bool = False, wait: bool = True, *, serialized: bool = True
    ) -> AbstractContextManager[Cursor]: ...

    def query(
        self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()
    ) -> list[tuple[Any, ...]]: ...

    def query_value(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> Any: ...

    async def run(self, operation: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T: ...

    async def synced(self) -> None: ...

    def close(self) -> None: ...


def scalar(cursor: Cursor, sql: str, bindings: Sequence[Any] = ()) -> Any:
    """The first column of the first row (None if no row), inside a transaction."""
    rows = cursor.execute(sql, bindings).fetchall()
    return rows[0][0] if rows else None


def redacted(url: str) -> str:
    """The URL without a password (in its user part or its query), for messages and logs."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "(a database URL that cannot be read)"
    if password is not None:
        user, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}")
    if "password=" in parts.query:
        query = "&".join(
            "password=***" if item.startswith("password=") else item
            for item in parts.query.split("&")
        )
        parts = parts._replace(query=query)
    return urlunsplit(parts)
