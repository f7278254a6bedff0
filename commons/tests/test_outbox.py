"""The delivery ledger: an entry goes out once, or again with the duplicate note when it may
have gone out already; failures back off, then are abandoned; one entry at most answers a
message; the sender's lease says whether anything sends."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_commons.leases import LEASES, Leases, new_holder, this_host
from hermes_commons.outbox import OUTBOX, SENDER, Outbox
from hermes_commons.sending import DUPLICATE_NOTE, Deliveries
from hermes_sdk.platform import ChatRef, NotSent
from hermes_sdk.storage import Store, StoreError, open_store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path, OUTBOX) as opened:
        yield opened


def _record(outbox: Outbox, chat: ChatRef, text: str, **options: Any) -> int:
    with outbox.store.write() as cursor:
        return outbox.record_in(cursor, chat, text, **options)


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
    outbox = Outbox(store)
    chat = ChatRef("telegram", "5", "private")
    item = outbox.item(_record(outbox, chat, "ready before the crash"))
    adapter = FakeAdapter()
    deliveries = Deliveries(outbox, lambda name: adapter)
    assert outbox.after_crash() == 0  # pending, never attempted: no doubt about it
    assert asyncio.run(deliveries.deliver(outbox.item(item.id)))
    assert adapter.sent == ["ready before the crash"]
    assert outbox.open() == []


def test_attempting_after_a_crash_is_resent_with_the_note(store):
    outbox = Outbox(store)
    chat = ChatRef("telegram", "5", "private")
    outbox_id = _record(outbox, chat, "maybe sent", preview_id="77")
    outbox.attempting(outbox_id)  # ... and the process died
    assert outbox.after_crash() == 1
    adapter = FakeAdapter()
    (item,) = outbox.open()
    assert item.maybe_sent and item.preview_id is None
    assert asyncio.run(Deliveries(outbox, lambda name: adapter).deliver(item))
    assert adapter.sent == [f"{DUPLICATE_NOTE}\n\nmaybe sent"]


def test_a_reply_goes_out_while_its_attempt_is_synced_and_is_marked_first(store):
    outbox = Outbox(store)
    disk_free = threading.Event()
    real_synced = store.synced

    async def stalled_synced() -> None:
        assert await asyncio.to_thread(disk_free.wait, 10)
        await real_synced()

    store.synced = stalled_synced
    outbox_id = _record(outbox, ChatRef("telegram", "5", "private"), "hello")
    states: list[str] = []

    class WatchingAdapter(FakeAdapter):
        async def send(self, chat, text, *, reply_to=None):
            # A crash from here on must find it marked (in the OS, not yet synced).
            states.append(outbox.item(outbox_id).state)
            disk_free.set()  # the send does not wait for the stalled sync
            return await super().send(chat, text, reply_to=reply_to)

    adapter = WatchingAdapter()
    deliveries = Deliveries(outbox, lambda name: adapter)
    assert asyncio.run(deliveries.deliver(outbox.item(outbox_id)))
    assert states == ["attempting"] and adapter.sent == ["hello"]
    assert outbox.item(outbox_id).state == "delivered"


def test_a_reply_recorded_as_attempting_is_sent_without_another_mark(store):
    outbox = Outbox(store)
    chat = ChatRef("telegram", "5", "private")
    outbox_id = _record(outbox, chat, "hello", attempting=True)
    recorded = outbox.item(outbox_id)
    assert (recorded.state, recorded.attempts) == ("attempting", 1)  # a crash now: the note
    outbox.after_crash()
    assert outbox.item(outbox_id).maybe_sent
    outbox_id = _record(outbox, chat, "again", attempting=True)
    adapter = FakeAdapter()
    item = outbox.item(outbox_id)
    assert asyncio.run(Deliveries(outbox, lambda name: adapter).deliver(item, marked=True))
    sent = outbox.item(outbox_id)
    assert (sent.state, sent.attempts) == ("delivered", 1) and adapter.sent == ["again"]


def test_a_reply_recorded_as_attempting_waits_if_its_platform_is_gone(store):
    outbox = Outbox(store)
    outbox_id = _record(outbox, ChatRef("telegram", "5", "private"), "x", attempting=True)
    deliveries = Deliveries(outbox, lambda name: None)
    assert not asyncio.run(deliveries.deliver(outbox.item(outbox_id), marked=True))
    item = outbox.item(outbox_id)
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
    outbox = Outbox(store, clock)
    adapter = FakeAdapter(failures=1, refuse=refuse)
    deliveries = Deliveries(outbox, lambda name: adapter, clock=clock)
    outbox_id = _record(outbox, ChatRef("telegram", "5", "private"), "hello")
    assert not asyncio.run(deliveries.deliver(outbox.item(outbox_id)))
    assert outbox.item(outbox_id).maybe_sent is not refuse
    clock.now += 600
    assert asyncio.run(deliveries.deliver(outbox.item(outbox_id)))
    assert adapter.sent == [retried_as]


def test_failures_back_off_then_abandon(store):
    clock = Clock()
    outbox = Outbox(store, clock)
    adapter = FakeAdapter(failures=10)
    deliveries = Deliveries(outbox, lambda name: adapter, attempts=3, clock=clock)
    outbox_id = _record(outbox, ChatRef("telegram", "5", "private"), "x")
    for _ in range(3):
        item = outbox.item(outbox_id)
        assert item.state == "pending"
        clock.now += 600
        assert deliveries.due(item)
        assert not asyncio.run(deliveries.deliver(item))
        assert not deliveries.due(outbox.item(outbox_id))  # backs off first
    assert outbox.item(outbox_id).state == "abandoned"
    assert outbox.open() == []


class ClosedWindow(FakeAdapter):
    async def send(self, chat, text, *, reply_to=None):
        raise NotSent("WhatsApp: only an approved template reaches them now", permanent=True)


def test_a_permanent_refusal_is_given_up_at_once_and_says_why(store, caplog):
    clock = Clock()
    outbox = Outbox(store, clock)
    deliveries = Deliveries(outbox, lambda name: ClosedWindow(), attempts=5, clock=clock)
    outbox_id = _record(outbox, ChatRef("whatsapp", "15551234567", "private"), "late reply")
    assert not asyncio.run(deliveries.deliver(outbox.item(outbox_id)))
    assert outbox.item(outbox_id).state == "abandoned"  # after one attempt, not five
    assert "given up: WhatsApp: only an approved template reaches them now" in caplog.text


def test_a_platforms_later_failure_report_is_recorded_against_the_reply(store, caplog):
    outbox = Outbox(store)
    adapter = FakeAdapter()
    deliveries = Deliveries(outbox, lambda name: adapter)
    chat = ChatRef("whatsapp", "15551234567", "private")
    first, second = (_record(outbox, chat, text) for text in ("one", "two"))

    async def main() -> None:
        assert await deliveries.deliver(outbox.item(first))
        assert await deliveries.deliver(outbox.item(second))
        await deliveries.reported("whatsapp", "1", "delivered", "")
        await deliveries.reported("whatsapp", "2", "failed", "131047 Re-engagement message")
        await deliveries.reported("whatsapp", "99", "failed", "sent before a restart")
        await deliveries.reported("telegram", "1", "failed", "another platform's id 1")

    asyncio.run(main())
    assert outbox.item(first).state == "delivered"
    assert outbox.item(second).state == "abandoned"
    [(why,)] = store.query("SELECT last_error FROM outbox_entries WHERE id = ?", (second,))
    assert why == "whatsapp could not deliver it: 131047 Re-engagement message"
    assert "message 99 was not delivered: sent before a restart" in caplog.text


def test_a_failure_reported_at_once_is_not_written_over_by_the_delivered_mark(store):
    outbox = Outbox(store)
    reports: list[asyncio.Task[None]] = []

    class Quick(FakeAdapter):
        async def send(self, chat, text, *, reply_to=None):
            ids = await super().send(chat, text, reply_to=reply_to)

            async def report() -> None:  # as soon as the id is known, before it is marked
                while ("whatsapp", ids[0]) not in deliveries._sent_as:
                    await asyncio.sleep(0)
                await deliveries.reported("whatsapp", ids[0], "failed", "131047")

            reports.append(asyncio.ensure_future(report()))
            return ids

    deliveries = Deliveries(outbox, lambda name: Quick())
    item = _record(outbox, ChatRef("whatsapp", "15551234567", "private"), "late reply")

    async def main() -> None:
        assert await deliveries.deliver(outbox.item(item))
        await asyncio.gather(*reports)

    asyncio.run(main())
    assert outbox.item(item).state == "abandoned"


def test_an_adapter_that_returns_no_ids_still_delivers(store):
    class NoIds(FakeAdapter):
        async def send(self, chat, text, *, reply_to=None):
            self.sent.append(text)

    outbox = Outbox(store)
    adapter = NoIds()
    item = _record(outbox, ChatRef("irc", "#hermes", "group"), "hello")
    assert asyncio.run(Deliveries(outbox, lambda name: adapter).deliver(outbox.item(item)))
    assert outbox.item(item).state == "delivered"


def test_a_reply_too_old_is_abandoned_unsent(store):
    clock = Clock()
    outbox = Outbox(store, clock)
    adapter = FakeAdapter()
    outbox_id = _record(outbox, ChatRef("telegram", "5", "private"), "stale")
    clock.now += 2 * 86_400
    deliveries = Deliveries(outbox, lambda name: adapter, clock=clock)
    assert not asyncio.run(deliveries.deliver(outbox.item(outbox_id)))
    assert adapter.sent == [] and outbox.item(outbox_id).state == "abandoned"


def test_one_entry_at_most_answers_a_message(store):
    outbox = Outbox(store)
    chat = ChatRef("telegram", "5", "private")
    _record(outbox, chat, "the answer", answers="gateway-inbox:1")
    with pytest.raises(StoreError):
        _record(outbox, chat, "the answer again", answers="gateway-inbox:1")
    _record(outbox, chat, "a file of it")  # no key: as many as there are
    assert [item.text for item in outbox.open()] == ["the answer", "a file of it"]


def test_the_sender_lease_says_whether_anything_sends(tmp_path, store):
    outbox = Outbox(store)
    assert outbox.sender() is None
    with open_store(tmp_path, LEASES) as leases_store:
        leases = Leases(leases_store)
        assert leases.take(SENDER, "elsewhere:1:gateway", 30)
        assert outbox.sender() == "elsewhere:1:gateway"
        leases.release(SENDER, "elsewhere:1:gateway")
    assert outbox.sender() is None


def test_a_sender_of_this_host_still_running_counts_while_its_lease_lapsed(tmp_path, store):
    """A gateway whose renewals queue behind a burst of writes still sends: its lease lapsed,
    its process runs. One that is gone does not."""
    clock = Clock()
    outbox = Outbox(store, clock)
    with open_store(tmp_path, LEASES) as leases_store:
        leases = Leases(leases_store, clock)
        assert leases.take(SENDER, new_holder(), 10)
        clock.now += 60
        assert outbox.sender() is not None  # this very process
        leases.release(SENDER, leases.holder(SENDER) or "")
        gone = f"{this_host()}:999999999:1-ab"
        assert leases.take(SENDER, gone, 10)
        assert outbox.sender() == gone  # not expired yet: whoever it is
        clock.now += 60
        assert outbox.sender() is None
