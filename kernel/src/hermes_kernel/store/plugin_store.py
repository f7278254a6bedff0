"""Plugins' own tables in the state store (:mod:`hermes_sdk.storage`): a
:class:`~hermes_sdk.storage.Store` over the kernel's database (whichever engine holds it),
with each schema's migrations tracked by name in ``plugin_schemas``. The kernel knows no
plugin's tables; it only runs their migrations (the ones in the engine's SQL)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar, cast

from hermes_kernel.store.backend import StoreBackend, scalar
from hermes_kernel.store.errors import StoreError
from hermes_sdk.storage import Store, StoreCursor, StoreSchema

__all__ = ["PluginStore", "migrate_schema"]

P = ParamSpec("P")
T = TypeVar("T")


def migrate_schema(db: StoreBackend, schema: StoreSchema) -> None:
    """Bring ``schema``'s tables to its latest version, in one transaction (those of the
    schemas it uses first)."""
    for used in schema.uses:
        migrate_schema(db, used)
    migrations = db.migrations_of(schema)  # in the engine's SQL; StoreError if none
    latest = len(migrations)
    recorded = db.query_value("SELECT version FROM plugin_schemas WHERE name = ?", (schema.name,))
    if recorded is not None and int(recorded) == latest:
        return  # the common case, read without taking the write lock
    with db.write() as cursor:
        current = int(
            scalar(cursor, "SELECT version FROM plugin_schemas WHERE name = ?", (schema.name,)) or 0
        )
        if current > latest:
            raise StoreError(
                f"{db.where}: the tables of {schema.name!r} have version {current}, newer than "
                f"the installed plugin understands ({latest}); upgrade it"
            )
        if current == latest:
            return
        for migration in migrations[current:]:
            cursor.execute(migration)
        cursor.execute(
            "INSERT INTO plugin_schemas (name, version) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET version = excluded.version",
            (schema.name, latest),
        )


class PluginStore(Store):
    """A plugin's view of the store's database; ``owned``: closing it closes the database."""

    def __init__(self, db: StoreBackend, *, owned: bool) -> None:
        self._db = db
        self._owned = owned

    @property
    def where(self) -> str:
        return self._db.where

    @property
    def dialect(self) -> str:
        return self._db.dialect

    @property
    def shared(self) -> bool:
        # An engine of an older SDK does not say: a server's database may be shared.
        return bool(getattr(self._db, "shared", self._db.dialect != "sqlite"))

    @contextmanager
    def write(
        self, durable: bool = False, *, serialized: bool = True, key: str | None = None
    ) -> Iterator[StoreCursor]:
        with self._db.write(durable, serialized=serialized, key=key) as cursor:
            yield cast(StoreCursor, cursor)

    def query(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.query(sql, bindings)

    async def run(self, operation: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._db.run(operation, *args, **kwargs)

    async def synced(self) -> None:
        await self._db.synced()

    def close(self) -> None:
        if self._owned:
            self._db.close()
