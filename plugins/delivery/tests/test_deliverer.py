"""Runtime.deliver through the delivery ledger, from a process that runs no platform: taken
when something sends from the ledger (recorded, queued), refused in one line when nothing
does or the platform is not installed; nothing is recorded when it is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hermes_plugin_delivery.deliverer import LedgerDelivery

from hermes_commons.leases import LEASES, Leases
from hermes_commons.outbox import OUTBOX, SENDER, Outbox
from hermes_sdk.delivery import DeliveryContext
from hermes_sdk.runtime import DeliveryUnavailable
from hermes_sdk.storage import Store, StoreSchema, open_store


class Installed:
    """What the installed plugins provide, as the deliverer asks (one platform)."""

    def of(self, kind: Any) -> list[Any]:
        return [SimpleNamespace(name="telegram")]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def _deliverer(home: Path, stores: list[Store]) -> LedgerDelivery:
    def store(schema: StoreSchema) -> Store:
        opened = open_store(home, schema)
        stores.append(opened)
        return opened

    return LedgerDelivery(
        DeliveryContext(home=str(home), store=store, provided=Installed())  # type: ignore[arg-type]
    )


def test_nothing_sending_is_refused_with_what_to_start(home):
    stores: list[Store] = []
    deliverer = _deliverer(home, stores)
    with pytest.raises(DeliveryUnavailable, match="start it with: hermes gateway run"):
        asyncio.run(deliverer.deliver("telegram", "42", "hello"))
    assert Outbox(stores[0]).open() == []
    for store in stores:
        store.close()


def test_with_a_sender_the_message_is_recorded_and_queued(home):
    stores: list[Store] = []
    with open_store(home, LEASES) as leases_store:
        assert Leases(leases_store).take(SENDER, "elsewhere:1:gateway", 30)
        delivery = asyncio.run(_deliverer(home, stores).deliver("telegram", "42", "hello"))
    assert delivery.state == "queued"
    (entry,) = Outbox(stores[0]).open()
    assert (entry.id, entry.chat.chat_id, entry.text) == (delivery.delivery_id, "42", "hello")
    for store in stores:
        store.close()


def test_a_platform_not_installed_is_refused_in_one_line(home):
    with pytest.raises(DeliveryUnavailable, match=r"no platform 'pigeon' is installed"):
        asyncio.run(_deliverer(home, []).deliver("pigeon", "42", "hello"))
    with open_store(home, OUTBOX) as store:
        assert Outbox(store).open() == []
