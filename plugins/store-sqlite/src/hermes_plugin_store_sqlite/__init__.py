"""The state store in HERMES_HOME/state.db: SQLite through apsw, in WAL mode, with FTS5
word and trigram indexes. The standard bundle's store engine, used when ``store.url`` is
unset; the database module is imported only when a command opens the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_sdk import StoreEngineSpec, hookimpl
from hermes_sdk.store_engine import StoreTarget

if TYPE_CHECKING:
    from hermes_plugin_store_sqlite.database import Database

__all__ = ["hermes_store_engines", "open_state_db", "state_db_path"]

STATE_DB = "state.db"


def state_db_path(home: Path) -> Path:
    return home / STATE_DB


def open_state_db(target: StoreTarget) -> Database:
    from hermes_plugin_store_sqlite.database import Database

    return Database(state_db_path(target.home))


@hookimpl
def hermes_store_engines() -> Iterator[StoreEngineSpec]:
    yield StoreEngineSpec(
        name="sqlite",
        description="state.db in HERMES_HOME (SQLite, WAL, FTS5 word and trigram search).",
        schemes=("sqlite",),
        in_home=True,
        locate=lambda target: state_db_path(target.home),
        factory=open_state_db,
    )
