"""The gateway's tables: a home from before the gateway was a plugin (the kernel made these
tables then, and recorded no version of them) keeps its routes and pairings."""

from __future__ import annotations

from hermes_plugin_gateway.ledger import Ledger
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.schema import SCHEMA, V1

from hermes_sdk.archive import PairedUser
from hermes_sdk.storage import StoreSchema, open_store

AS_THE_KERNEL_MADE_THEM = StoreSchema(name=SCHEMA.name, migrations=(V1,))


def test_a_home_whose_tables_came_before_the_plugin_keeps_its_routes_and_pairings(home):
    with open_store(home, AS_THE_KERNEL_MADE_THEM) as store:
        Ledger(store).set_route("telegram:dm:5", "20250101_000000_aaaaaa")
        Pairings(store).admit([PairedUser("telegram", "42", "ada", 5.0)])
        with store.write() as cursor:  # as the kernel left them: tables, but no version
            cursor.execute("DELETE FROM plugin_schemas WHERE name = ?", (SCHEMA.name,))
    with open_store(home, SCHEMA) as store:  # the plugin's migrations run over them
        assert Ledger(store).route("telegram:dm:5") == "20250101_000000_aaaaaa"
        assert Pairings(store).is_paired("telegram", "42")
        version = store.query_value(
            "SELECT version FROM plugin_schemas WHERE name = ?", (SCHEMA.name,)
        )
    assert version == len(SCHEMA.migrations)
