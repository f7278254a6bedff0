"""The gateway's state in state.db: pairing limits, routing keys and the delivery ledger."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hermes_kernel.gateway.delivery import DUPLICATE_NOTE, Deliveries
from hermes_kernel.gateway.intake import Intake
from hermes_kernel.gateway.ledger import InboxItem, Ledger
from hermes_kernel.gateway.pairing import CODE_ALPHABET, PairingError, Pairings
from hermes_kernel.gateway.routing import route_key, user_scope
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.state import StateStore
from hermes_sdk.platform import ChatRef, Inbound, NotSent


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_code_is_eight_unambiguous_characters(store):
    code = Pairings(store.db).request("telegram", "1", "@ann")
    assert code is not None and len(code) == 8 and set(code) <= set(CODE_ALPHABET)


def test_one_code_per_user_per_ten_minutes(store):
    clock = Clock()
    pairings = Pairings(store.db, clock)
    first = pairings.request("telegram", "1", "@ann")
    assert pairings.request("telegram", "1", "@ann") is None
    clock.now += 601
    second = pairings.request("telegram", "1", "@ann")
    assert second is not None and second != first
    assert [r.code for r in pairings.pending()] == [second]  # the old code is gone


def test_at_most_three_wait_per_platform(store):
    pairings = Pairings(store.db)
    assert all(pairings.request("telegram", str(n), "") for n in range(3))
    assert pairings.request("telegram", "4", "") is None
    assert pairings.request("discord", "4", "") is not None  # per platform


def test_codes_expire_after_an_hour(store):
    clock = Clock()
    pairings = Pairings(store.db, clock)
    code = pairings.request("telegram", "1", "")
    clock.now += 3601
    with pytest.raises(PairingError, match="expired after an hour"):
        pairings.approve("telegram", code)
    assert not pairings.is_paired("telegram", "1")


def test_five_failures_lock_approving_for_an_hour(store):
    clock = Clock()
    pairings = Pairings(store.db, clock)
    code = pairings.request("telegram", "1", "")
    for _ in range(5):
        with pytest.raises(PairingError, match="no waiting request"):
            pairings.approve("telegram", "WRONGONE")
    with pytest.raises(PairingError, match="locked for 60 more minutes"):
        pairings.approve("telegram", code)  # even the right code
    with pytest.raises(PairingError, match="no waiting request"):
        pairings.approve("discord", "XXXXXXXX")  # other platforms are not locked
    clock.now += 3601
    with pytest.raises(PairingError, match="expired"):
        pairings.approve("telegram", code)  # unlocked, but the code has expired meanwhile


def test_approval_is_case_and_space_tolerant_and_revocable(store):
    pairings = Pairings(store.db)
    code = pairings.request("telegram", "1", "@ann")
    user = pairings.approve("telegram", f" {code[:4].lower()} {code[4:]} ")
    assert (user.user_id, user.user_name) == ("1", "@ann")
    assert pairings.is_paired("telegram", "1") and pairings.pending() == []
    assert pairings.revoke("telegram", "1") and not pairings.is_paired("telegram", "1")


def inbound(chat_type="private", chat_id="5", user="5", thread=None, message_id="1"):
    return Inbound(
        chat=ChatRef("telegram", chat_id, chat_type, thread),
        user_id=user,
        text="hi",
        message_id=message_id,
    )


def test_routing_keys_and_scopes():
    dm = inbound()
    assert (
        route_key(dm) == "telegram:dm:5" and user_scope(dm.chat, "5", route_key(dm)) == "telegram:5"
    )
    group = inbound("group", "-9", "5")
    assert route_key(group) == "telegram:group:-9:5"
    assert user_scope(group.chat, "5", route_key(group)) == "telegram:5"
    assert route_key(group, "shared") == "telegram:group:-9"
    assert user_scope(group.chat, "5", "telegram:group:-9") == "telegram:chat:-9"
    topic = inbound("group", "-9", "5", thread="3")
    assert route_key(topic) == "telegram:thread:-9:3"
    assert user_scope(topic.chat, "5", route_key(topic)) == "telegram:chat:-9"


def test_a_message_is_stored_once(store):
    ledger = Ledger(store.db)
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
    ledger = Ledger(store.db)
    chat = ChatRef("telegram", "5", "private")
    item = ledger.outbox_item(ledger.reply_ready(None, chat, "ready before the crash"))
    adapter = FakeAdapter()
    deliveries = Deliveries(ledger, lambda name: adapter)
    assert ledger.after_crash() == 0  # pending, never attempted: no doubt about it
    assert asyncio.run(deliveries.deliver(ledger.outbox_item(item.id)))
    assert adapter.sent == ["ready before the crash"]
    assert ledger.open_outbox() == []


def test_attempting_after_a_crash_is_resent_with_the_note(store):
    ledger = Ledger(store.db)
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
    ledger = Ledger(store.db)
    disk_free = threading.Event()
    real_sync = store.db.sync

    def stalled_sync() -> None:
        assert disk_free.wait(10)
        real_sync()

    store.db.sync = stalled_sync
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
    ledger = Ledger(store.db)
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
    ledger = Ledger(store.db)
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
    ledger = Ledger(store.db, clock)
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
    ledger = Ledger(store.db, clock)
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
    ledger = Ledger(store.db, clock)
    adapter = FakeAdapter()
    outbox_id = ledger.reply_ready(None, ChatRef("telegram", "5", "private"), "stale")
    clock.now += 2 * 86_400
    deliveries = Deliveries(ledger, lambda name: adapter, clock=clock)
    assert not asyncio.run(deliveries.deliver(ledger.outbox_item(outbox_id)))
    assert adapter.sent == [] and ledger.outbox_item(outbox_id).state == "abandoned"


def test_every_kernel_section_is_a_field_of_the_kernel_config():
    from hermes_kernel.config.controls import KERNEL_SECTIONS
    from hermes_kernel.config.model import KernelConfig

    assert set(KernelConfig.model_fields) == set(KERNEL_SECTIONS)
    empty = KernelConfig.model_validate(dict.fromkeys(KERNEL_SECTIONS))  # "gateway:" alone
    assert empty.gateway.max_concurrent_turns == 16 and empty.platforms == {}


def test_the_intake_stores_a_burst_in_one_transaction_in_order(store, monkeypatch):
    ledger = Ledger(store.db)
    writes: list[int] = []
    real_accept_many = Ledger.accept_many

    def counting(self, messages):
        writes.append(len(messages))
        return real_accept_many(self, messages)

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


def test_a_message_is_queued_once_committed_and_confirmed_once_synced(store):
    ledger = Ledger(store.db)
    disk_free = threading.Event()
    real_sync = store.db.sync

    def stalled_sync() -> None:  # the disk stalls until the test lets it go
        assert disk_free.wait(10)
        real_sync()

    store.db.sync = stalled_sync
    queued: list[InboxItem] = []
    intake = Intake(ledger, queued.append)

    async def main() -> InboxItem | None:
        accepted = asyncio.ensure_future(intake.accept(inbound(), "k"))
        async with asyncio.timeout(5):
            while not queued:
                await asyncio.sleep(0.01)
        # Its turn may start: the message is committed (another connection reads it) ...
        other = StateStore(store.db.path).db
        assert [i.id for i in Ledger(other).open_inbox()] == [queued[0].id]
        other.close()
        await asyncio.sleep(0.1)
        assert not accepted.done()  # ... but the platform hears of it only after the sync
        disk_free.set()
        return await asyncio.wait_for(accepted, 5)

    assert asyncio.run(main()) == queued[0]


def test_a_failed_sync_reaches_the_sender(store):
    def failing_sync() -> None:
        raise StoreError("state.db: could not save (sync failed: I/O error)")

    store.db.sync = failing_sync
    intake = Intake(Ledger(store.db), lambda item: None)
    with pytest.raises(StoreError, match="sync failed"):
        asyncio.run(intake.accept(inbound(), "k"))


def test_a_failed_intake_write_reaches_every_sender_and_queues_nothing(store):
    ledger = Ledger(store.db)
    queued: list[InboxItem] = []
    intake = Intake(ledger, queued.append)
    with store.db.write() as cursor:
        cursor.execute("DROP TABLE gateway_outbox")
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
