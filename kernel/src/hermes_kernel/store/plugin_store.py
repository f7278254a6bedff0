"""Plugins' own tables in state.db (:mod:`hermes_sdk.storage`): a :class:`~hermes_sdk.storage.Store`
over the kernel's :class:`Database`, with each schema's migrations tracked by name in
``plugin_schemas``. The kernel knows no plugin's tables; it only runs their migrations."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from hermes_kernel.store.db import Database, scalar
from hermes_kernel.store.errors import StoreError
from hermes_sdk.storage import Store, StoreCursor, StoreSchema

__all__ = ["PluginStore", "migrate_schema", "open_store"]

P = ParamSpec("P")
T = TypeVar("T")


def migrate_schema(db: Database, schema: StoreSchema) -> None:
    """Bring ``schema``'s tables to its latest version, in one transaction."""
    latest = len(schema.migrations)
    with db.write() as cursor:
        current = int(
            scalar(cursor, "SELECT version FROM plugin_schemas WHERE name = ?", (schema.name,)) or 0
        )
        if current > latest:
            raise StoreError(
                f"{db.path}: the tables of {schema.name!r} have version {current}, newer than "
                f"the installed plugin understands ({latest}); upgrade it"
            )
        if current == latest:
            return
        for migration in schema.migrations[current:]:
            cursor.execute(migration)
        cursor.execute(
            "INSERT INTO plugin_schemas (name, version) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET version = excluded.version",
            (schema.name, latest),
        )


class PluginStore(Store):
    """A plugin's view of a :class:`Database`; ``owned``: closing it closes the database."""

    def __init__(self, db: Database, *, owned: bool) -> None:
        self._db = db
        self._owned = owned

    @property
    def path(self) -> Path:
        return self._db.path

    @contextmanager
    def write(self, durable: bool = False) -> Iterator[StoreCursor]:
        with self._db.write(durable) as cursor:
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


def open_store(home: str, schema: StoreSchema) -> Store:
    """``hermes_sdk.storage.open_store`` (the ``hermes.store`` entry point)."""
    from hermes_kernel.store.state import state_db_path

    db = Database(state_db_path(Path(home)))
    try:
        migrate_schema(db, schema)
    except BaseException:
        db.close()
        raise
    return PluginStore(db, owned=True)
