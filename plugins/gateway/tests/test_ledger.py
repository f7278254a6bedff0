"""The delivery ledger: a reply goes out once, or again with the duplicate note when it may
have gone out already; failures back off, then are abandoned."""

from __future__ import annotations

import asyncio
import threading

import pytest
from hermes_plugin_gateway.delivery import DUPLICATE_NOTE, Deliveries
from hermes_plugin_gateway.ledger import Ledger

from hermes_sdk.platform import ChatRef, NotSent

from .conftest import Clock, inbound


def test_a_message_is_stored_once(store):
    ledger = Ledger(store)
    assert ledger.accept(inbound(), "k") is not None
    assert ledger.accept(inbound(), "k") is None  # the platform sent it again
    assert [i.text for i in ledger.open_inbox()] == ["hi"]


class FakeAdapter:
    """A platform that records sends and can fail them (an adapter, not the code under test)."""

    max_message_chars = 4096
    can_edit = True

    def __init__(self, failures=0, refuse=False):
        self.sent: list[str] = []
        self.failures = failures
        self.refuse = refuse

    async def send(self, chat, text, *, reply_to=None):
        if self.failures:
            self.failures -= 1
            if self.refuse:
                raise NotSent("400 Bad Request: chat not found")
            raise ConnectionError("network down")
        self.sent.append(text)
        return [str(len(self.sent))]

    async def edit(self, chat, message_id, text):
        self.sent.append(f"edit {message_id}: {text}")


def test_pending_replies_go_out_once_without_a_note(store):
    ledger = Ledger(store)
    chat = ChatRef("telegram", "5", "private")
    item = ledger.outbox_item(ledger.reply_ready(None, chat, "ready before the crash"))
    adapter = FakeAdapter()
    deliveries = Deliveries(ledger, lambda name: adapter)
    assert ledger.after_crash() == 0  # pending, never attempted: no doubt about it
    assert asyncio.run(deliveries.deliver(ledger.outbox_item(item.id)))
    assert adapter.sent == ["ready before the crash"]
    assert ledger.open_outbox() == []


def test_attempting_after_a_crash_is_resent_with_the_note(store):
    ledger = Ledger(store)
    chat = ChatRef("telegram", "5", "private")
    outbox_id = ledger.reply_ready(None, chat, "maybe sent", preview_id="77")
    ledger.attempting(outbox_id)  # ... and the process died
    assert ledger.after_crash() == 1
    adapter = FakeAdapter()
    (item,) = ledger.open_outbox()
    assert item.maybe_sent and item.preview_id is None
    assert asyncio.run(Deliveries(ledger, lambda name: adapter).deliver(item))
    assert adapter.sent == [f"{DUPLICATE_NOTE}\n\nmaybe sent"]


def test_a_reply_goes_out_while_its_attempt_is_synced_and_is_marked_first(store):
    ledger = Ledger(store)
    disk_free = threading.Event()
    real_synced = store.synced

    async def stalled_synced() -> None:
        assert await asyncio.to_thread(disk_free.wait, 10)
        await real_synced()

    store.synced = stalled_synced
    outbox_id = ledger.reply_ready(None, ChatRef("telegram", "5", "private"), "hello")
    states: list[str] = []

    class WatchingAdapter(FakeAdapter):
        async def send(self, chat, text, *, reply_to=None):
            # A crash from here on must find it marked (in the OS, not yet synced).
            states.append(ledger.outbox_item(outbox_id).state)
            disk_free.set()  # the send does not wait for the stalled sync
            return await super().send(chat, text, reply_to=reply_to)

    adapter = WatchingAdapter()
    deliveries = Deliveries(ledger, lambda name: adapter)
    assert asyncio.run(deliveries.deliver(ledger.outbox_item(outbox_id)))
    assert states == ["attempting"] and adapter.sent == ["hello"]
    assert ledger.outbox_item(outbox_id).state == "delivered"


def test_a_reply_recorded_as_attempting_is_sent_without_another_mark(store):
    ledger = Ledger(store)
    chat = ChatRef("telegram", "5", "private")
    outbox_id = ledger.reply_ready(None, chat, "hello", attempting=True)
    recorded = ledger.outbox_item(outbox_id)
    assert (recorded.state, recorded.attempts) == ("attempting", 1)  # a crash now: the note
    ledger.after_crash()
    assert ledger.outbox_item(outbox_id).maybe_sent
    outbox_id = ledger.reply_ready(None, chat, "again", attempting=True)
    adapter = FakeAdapter()
    item = ledger.outbox_item(outbox_id)
    assert asyncio.run(Deliveries(ledger, lambda name: adapter).deliver(item, marked=True))
    sent = ledger.outbox_item(outbox_id)
    assert (sent.state, sent.attempts) == ("delivered", 1) and adapter.sent == ["again"]


def test_a_reply_recorded_as_attempting_waits_if_its_platform_is_gone(store):
    ledger = Ledger(store)
    outbox_id = ledger.reply_ready(None, ChatRef("telegram", "5", "private"), "x", attempting=True)
    deliveries = Deliveries(ledger, lambda name: None)
    assert not asyncio.run(deliveries.deliver(ledger.outbox_item(outbox_id), marked=True))
    item = ledger.outbox_item(outbox_id)
    assert item.state == "pending" and not item.maybe_sent  # sent when the platform is back


@pytest.mark.parametrize(
    ("refuse", "retried_as"),
    [
        (False, f"{DUPLICATE_NOTE}\n\nhello"),  # no answer: it may have gone out
        (True, "hello"),  # the platform said no: it did not
    ],
)
def test_a_failed_send_is_retried_with_the_note_unless_it_was_refused(store, refuse, retried_as):
    clock = Clock()
    ledger = Ledger(store, clock)
    adapter = FakeAdapter(failures=1, refuse=refuse)
    deliveries = Deliveries(ledger, lambda name: adapter, clock=clock)
    outbox_id = ledger.reply_ready(None, ChatRef("telegram", "5", "private"), "hello")
    assert not asyncio.run(deliveries.deliver(ledger.outbox_item(outbox_id)))
    assert ledger.outbox_item(outbox_id).maybe_sent is not refuse
    clock.now += 600
    assert asyncio.run(deliveries.deliver(ledger.outbox_item(outbox_id)))
    assert adapter.sent == [retried_as]


def test_failures_back_off_then_abandon(store):
    clock = Clock()
    ledger = Ledger(store, clock)
    adapter = FakeAdapter(failures=10)
    deliveries = Deliveries(ledger, lambda name: adapter, attempts=3, clock=clock)
    outbox_id = ledger.reply_ready(None, ChatRef("telegram", "5", "private"), "x")
    for _ in range(3):
        item = ledger.outbox_item(outbox_id)
        assert item.state == "pending"
        clock.now += 600
        assert deliveries.due(item)
        assert not asyncio.run(deliveries.deliver(item))
        assert not deliveries.due(ledger.outbox_item(outbox_id))  # backs off first
    assert ledger.outbox_item(outbox_id).state == "abandoned"
    assert ledger.open_outbox() == []


def test_a_reply_too_old_is_abandoned_unsent(store):
    clock = Clock()
    ledger = Ledger(store, clock)
    adapter = FakeAdapter()
    outbox_id = ledger.reply_ready(None, ChatRef("telegram", "5", "private"), "stale")
    clock.now += 2 * 86_400
    deliveries = Deliveries(ledger, lambda name: adapter, clock=clock)
    assert not asyncio.run(deliveries.deliver(ledger.outbox_item(outbox_id)))
    assert adapter.sent == [] and ledger.outbox_item(outbox_id).state == "abandoned"
