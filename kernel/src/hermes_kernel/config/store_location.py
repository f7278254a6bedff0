"""Where a home's state store is, and opening it: ``state.db`` in HERMES_HOME unless config.yaml's
``store.url`` names a PostgreSQL database (its password, if any, in .env as
``HERMES_STORE_PASSWORD``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import StoreError

if TYPE_CHECKING:
    from hermes_kernel.store.state import StateStore
    from hermes_sdk.storage import Store, StoreSchema

PASSWORD_VARIABLE = "HERMES_STORE_PASSWORD"


@dataclass(frozen=True)
class StoreLocation:
    url: str | None = None
    """None: state.db in the home."""
    password: str | None = None
    pool_size: int = 8


def store_location(home: Path, config: Mapping[str, Any] | None = None) -> StoreLocation:
    """What the home's config.yaml (``config``, when the caller has read it already) and .env
    say."""
    from hermes_kernel.config.settings import load_document

    if config is None:
        config = load_document(home).data
    section: Any = config.get("store") or {}
    url = section.get("url") if isinstance(section, dict) else None
    if not url:
        return StoreLocation()
    return StoreLocation(str(url), store_password(home), int(section.get("pool_size") or 8))


def store_password(home: Path) -> str | None:
    """``HERMES_STORE_PASSWORD`` from the environment or the home's .env (None: none)."""
    from hermes_kernel.config.settings import dotenv_path
    from hermes_sdk.dotenv import read_dotenv

    password = os.environ.get(PASSWORD_VARIABLE) or read_dotenv(dotenv_path(home)).get(
        PASSWORD_VARIABLE
    )
    return password or None


def open_database(home: Path, config: Mapping[str, Any] | None = None) -> StoreBackend:
    """The home's store, open and migrated; StoreError in one line when it cannot be."""
    location = store_location(home, config)
    if location.url is None:
        from hermes_kernel.store.db import Database
        from hermes_kernel.store.state import state_db_path

        return Database(state_db_path(home))
    try:
        from hermes_kernel.store.postgres import PostgresDatabase
    except ImportError:
        raise StoreError(
            "store.url names PostgreSQL, and its driver is not installed: "
            "pip install 'hermes-kernel[postgresql]'"
        ) from None
    return PostgresDatabase(location.url, password=location.password, pool_size=location.pool_size)


def open_state_store(home: Path, config: Mapping[str, Any] | None = None) -> StateStore:
    """The home's store: state.db, or the PostgreSQL database ``store.url`` names."""
    from hermes_kernel.store.state import StateStore

    return StateStore(db=open_database(home, config))


def open_plugin_store(home: str, schema: StoreSchema) -> Store:
    """``hermes_sdk.storage.open_store`` (the ``hermes.store`` entry point)."""
    from hermes_kernel.store.plugin_store import PluginStore, migrate_schema

    db = open_database(Path(home))
    try:
        migrate_schema(db, schema)
    except BaseException:
        db.close()
        raise
    return PluginStore(db, owned=True)
