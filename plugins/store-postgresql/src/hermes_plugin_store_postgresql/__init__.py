"""The state store in a shared PostgreSQL (``store.url: postgresql://USER@HOST/DB``), for a
team's gateway workers on several hosts: psycopg 3 with a connection pool, each write
serialized by the advisory lock its decision needs (the store's, or a session's or a
lease's key), search through a ``tsvector`` and ``pg_trgm``. The driver is imported only
when a command opens the store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from hermes_sdk import StoreEngineSpec, hookimpl
from hermes_sdk.store_engine import StoreTarget

if TYPE_CHECKING:
    from hermes_plugin_store_postgresql.database import PostgresDatabase

__all__ = ["hermes_store_engines", "open_postgresql"]


def open_postgresql(target: StoreTarget) -> PostgresDatabase:
    from hermes_plugin_store_postgresql.database import PostgresDatabase

    if target.url is None:
        raise ValueError("the PostgreSQL store engine needs store.url")
    return PostgresDatabase(target.url, password=target.password, pool_size=target.pool_size)


@hookimpl
def hermes_store_engines() -> Iterator[StoreEngineSpec]:
    yield StoreEngineSpec(
        name="postgresql",
        description="A shared PostgreSQL (14 or later) named by store.url, for workers on "
        "several hosts.",
        schemes=("postgresql", "postgres"),
        factory=open_postgresql,
    )
