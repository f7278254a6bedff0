"""The gateway's inbox: a message is stored once, however often its platform sends it."""

from __future__ import annotations

from hermes_plugin_gateway.ledger import Ledger

from .conftest import inbound


def test_a_message_is_stored_once(store):
    ledger = Ledger(store)
    assert ledger.accept(inbound(), "k") is not None
    assert ledger.accept(inbound(), "k") is None  # the platform sent it again
    assert [i.text for i in ledger.open_inbox()] == ["hi"]
