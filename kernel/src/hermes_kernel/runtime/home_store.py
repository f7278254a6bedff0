"""A home's store, for code outside any command: a plugin's tables (``hermes_sdk.storage.
open_store``, through the ``hermes.store`` entry point), or the whole state store (a script,
a test). The engine is the one the home's installed plugins provide, as for a command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hermes_kernel.app import App
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.home import DEFAULT_PROFILE
from hermes_kernel.config.settings import Flags
from hermes_kernel.plugins.store_engines import open_database
from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.plugin_store import PluginStore, migrate_schema
from hermes_kernel.store.state import StateStore
from hermes_sdk.storage import Store, StoreSchema

__all__ = ["open_home_store", "open_plugin_store"]

T = TypeVar("T")


def _opened(home: Path, wrap: Callable[[StoreBackend], T]) -> T:
    # ``home`` is the home itself (a profile's, when a caller has one): no profile applies.
    app = App(Flags(home=home, profile=DEFAULT_PROFILE))
    try:
        db = open_database(app.host, home, app.settings.document.data)
    except ConfigError as exc:
        raise StoreError(f"cannot open the store: {'; '.join(exc.problems)}") from None
    finally:
        app.close()
    try:
        return wrap(db)
    except BaseException:
        db.close()
        raise


def open_home_store(home: Path) -> StateStore:
    """The state store of the home at ``home`` (close it); StoreError in one line."""
    return _opened(home, StateStore)


def open_plugin_store(home: str, schema: StoreSchema) -> Store:
    """``hermes_sdk.storage.open_store``: ``schema``'s tables, migrated, in the store of the
    home at ``home``, on a connection of its own."""

    def migrated(db: StoreBackend) -> Store:
        migrate_schema(db, schema)
        return PluginStore(db, owned=True)

    return _opened(Path(home), migrated)
