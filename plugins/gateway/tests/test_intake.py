"""The intake: a burst of messages in one transaction, each queued once committed and
confirmed to its platform once synced."""

from __future__ import annotations

import asyncio
import threading

import pytest
from hermes_plugin_gateway.intake import Intake
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.schema import SCHEMA

from hermes_sdk.storage import StoreError, open_store

from .conftest import inbound


def test_the_intake_stores_a_burst_in_one_transaction_in_order(store, monkeypatch):
    ledger = Ledger(store)
    writes: list[int] = []
    real_accept_many = Ledger.accept_many

    def counting(self, messages, worker=None):
        writes.append(len(messages))
        return real_accept_many(self, messages, worker)

    monkeypatch.setattr(Ledger, "accept_many", counting)
    queued: list[str] = []
    intake = Intake(ledger, lambda item: queued.append(item.message_id))

    async def burst():
        return await asyncio.gather(
            *(
                intake.accept(inbound(chat_id=str(n), user=str(n), message_id="1"), f"k{n}")
                for n in range(5)
            ),
            intake.accept(inbound(chat_id="0", user="0", message_id="1"), "k0"),  # again
        )

    stored = asyncio.run(burst())
    assert writes == [6]  # one transaction, so one disk sync, for the burst
    assert [item.chat.chat_id for item in stored[:5]] == ["0", "1", "2", "3", "4"]
    assert [item.id for item in stored[:5]] == sorted(item.id for item in stored[:5])
    assert stored[5] is None and queued == ["1"] * 5  # the repeat is neither stored nor queued
    assert [i.chat.chat_id for i in ledger.open_inbox()] == ["0", "1", "2", "3", "4"]


def test_a_message_is_queued_once_committed_and_confirmed_once_synced(home, store):
    ledger = Ledger(store)
    disk_free = threading.Event()
    real_synced = store.synced

    async def stalled_synced() -> None:  # the disk stalls until the test lets it go
        assert await asyncio.to_thread(disk_free.wait, 10)
        await real_synced()

    store.synced = stalled_synced
    queued: list[InboxItem] = []
    intake = Intake(ledger, queued.append)

    async def main() -> InboxItem | None:
        accepted = asyncio.ensure_future(intake.accept(inbound(), "k"))
        async with asyncio.timeout(5):
            while not queued:
                await asyncio.sleep(0.01)
        # Its turn may start: the message is committed (another connection reads it) ...
        with open_store(home, SCHEMA) as other:
            assert [i.id for i in Ledger(other).open_inbox()] == [queued[0].id]
        await asyncio.sleep(0.1)
        assert not accepted.done()  # ... but the platform hears of it only after the sync
        disk_free.set()
        return await asyncio.wait_for(accepted, 5)

    assert asyncio.run(main()) == queued[0]


def test_a_failed_sync_reaches_the_sender(store):
    async def failing_synced() -> None:
        raise StoreError("state.db: could not save (sync failed: I/O error)")

    store.synced = failing_synced
    intake = Intake(Ledger(store), lambda item: None)
    with pytest.raises(StoreError, match="sync failed"):
        asyncio.run(intake.accept(inbound(), "k"))


def test_a_failed_intake_write_reaches_every_sender_and_queues_nothing(store):
    ledger = Ledger(store)
    queued: list[InboxItem] = []
    intake = Intake(ledger, queued.append)
    with store.write() as cursor:
        cursor.execute("DROP TABLE gateway_inbox")

    async def burst():
        return await asyncio.gather(
            intake.accept(inbound(chat_id="1"), "k1"),
            intake.accept(inbound(chat_id="2"), "k2"),
            return_exceptions=True,
        )

    errors = asyncio.run(burst())
    assert all(isinstance(e, StoreError) and "could not save" in str(e) for e in errors)
    assert queued == []
