"""The PostgreSQL engine passes the store engines' conformance suite against Debian's
PostgreSQL (started by the SDK's test kit on loopback), and opens only a store.url."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_store_postgresql
import pytest
from hermes_plugin_store_postgresql import open_postgresql
from hermes_plugin_store_postgresql.database import PostgresDatabase

from hermes_sdk.store_engine import StoreTarget
from hermes_testkit import StoreEngineTests


class TestPostgresqlEngine(StoreEngineTests):
    def open_database(self, target: StoreTarget) -> PostgresDatabase:
        return open_postgresql(target)

    def make_target(self, tmp_path: Path, request: pytest.FixtureRequest) -> StoreTarget:
        server = request.getfixturevalue("postgres")
        return StoreTarget(tmp_path, server.create_database(), None, 4)


class TestPostgresqlWithoutPipelines(TestPostgresqlEngine):
    """The same suite where libpq has no pipeline mode (before 14): a write without locks
    then sends its BEGIN in a round trip of its own, before its first statement."""

    def open_database(self, target: StoreTarget) -> PostgresDatabase:
        database = open_postgresql(target)
        database._pipelines = False  # what psycopg.Pipeline.is_supported() says there
        return database


def test_it_opens_postgresql_urls_and_never_a_home(tmp_path: Path) -> None:
    (spec,) = hermes_plugin_store_postgresql.hermes_store_engines()
    assert not spec.in_home and spec.locate is None
    assert set(spec.schemes) == {"postgresql", "postgres"}
    with pytest.raises(ValueError, match=r"needs store\.url"):
        spec.factory(StoreTarget(tmp_path, None, None, 8))
