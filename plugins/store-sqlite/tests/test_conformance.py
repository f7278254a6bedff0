"""The SQLite engine passes the store engines' conformance suite, and registers as the
standard bundle's engine for a store in the home."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_store_sqlite
from hermes_plugin_store_sqlite import open_state_db, state_db_path
from hermes_plugin_store_sqlite.database import Database

from hermes_sdk.store_engine import StoreTarget
from hermes_testkit import StoreEngineTests


class TestSqliteEngine(StoreEngineTests):
    def open_database(self, target: StoreTarget) -> Database:
        return open_state_db(target)


def test_it_keeps_state_db_in_the_home_when_store_url_is_unset(tmp_path: Path) -> None:
    (spec,) = hermes_plugin_store_sqlite.hermes_store_engines()
    target = StoreTarget(tmp_path, None, None, 8)
    assert spec.in_home and spec.name == "sqlite" and "sqlite" in spec.schemes
    assert spec.locate is not None and spec.locate(target) == state_db_path(tmp_path)
    assert not state_db_path(tmp_path).exists()  # locating makes nothing
    spec.factory(target).close()
    assert state_db_path(tmp_path).exists()
