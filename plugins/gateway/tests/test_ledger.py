"""The gateway's inbox: a message is stored once, however often its platform sends it."""

from __future__ import annotations

from hermes_plugin_gateway.ledger import Ledger

from .conftest import Clock, inbound


def test_a_message_is_stored_once(store):
    ledger = Ledger(store)
    assert ledger.accept(inbound(), "k") is not None
    assert ledger.accept(inbound(), "k") is None  # the platform sent it again
    assert [i.text for i in ledger.open_inbox()] == ["hi"]


def test_a_message_whose_reply_the_ledger_holds_is_kept(store):
    """SQLite may give a deleted message's id to the next one: while the ledger still holds
    a reply to it, the message is kept, so a new message never takes its id."""
    clock = Clock()
    ledger = Ledger(store, clock)
    answered, waiting = (ledger.accept(inbound(message_id=m), "k") for m in ("1", "2"))
    assert answered is not None and waiting is not None
    ledger.reply_ready(answered.id, answered.chat, "sent long ago")
    ledger.outbox.delivered(*[entry.id for entry in ledger.outbox.open()])
    ledger.reply_ready(waiting.id, waiting.chat, "still to send")  # its platform is away
    clock.now += 8 * 86_400
    ledger.prune()
    kept = {row[0] for row in store.query("SELECT id FROM gateway_inbox")}
    assert kept == {waiting.id}
