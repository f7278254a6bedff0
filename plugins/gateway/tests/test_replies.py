"""Replies, on SQLite and on PostgreSQL: a reply is recorded with its message done and sent
at once where its platform runs; where it does not, it waits in the ledger and goes when
it does; a worker that no longer holds the message records and sends nothing; a message to
a platform that is not enabled is refused in one line."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.ledger import Ledger
from hermes_plugin_gateway.replies import Replies

from hermes_commons.sending import Deliveries
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import DeliveryUnavailable
from hermes_sdk.storage import Store

from .conftest import inbound

WORKER = "elsewhere:1:me"
CHAT = ChatRef("telegram", "5", "private")


class Chat:
    """A platform's adapter that records what it is asked to send (not the code under
    test)."""

    can_edit = True
    max_message_chars = 4096

    def __init__(self) -> None:
        self.sent: list[tuple[str, str | None]] = []

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        self.sent.append((text, reply_to))
        return [str(len(self.sent))]


class Platforms:
    """Which platforms run here, as the replies read it."""

    def __init__(self) -> None:
        self.states = {"telegram": None}
        self.running: Chat | None = None

    def adapter(self, name: str) -> Any:
        return self.running if name == "telegram" else None


def _replies(store: Store) -> tuple[Replies, Platforms, Ledger]:
    ledger, platforms = Ledger(store), Platforms()
    deliveries = Deliveries(ledger.outbox, platforms.adapter)
    return Replies(ledger, deliveries, platforms), platforms, ledger  # type: ignore[arg-type]


def _taken(store: Store) -> int:
    Ledger(store).accept_many([(inbound(), "telegram:5")])
    (item,) = Claims(store, WORKER).claim(None, 1)
    return item.id


def _states(store: Store) -> list[str]:
    return [str(row[0]) for row in store.query("SELECT state FROM outbox_entries ORDER BY id")]


def test_a_reply_is_recorded_with_its_message_done_and_sent(shared):
    replies, platforms, ledger = _replies(shared)
    chat = platforms.running = Chat()
    item_id = _taken(shared)
    outbox_id, sent = asyncio.run(
        replies.reply(item_id, CHAT, "Hello.", worker=WORKER, reply_to="1")
    )
    assert outbox_id and sent
    assert chat.sent == [("Hello.", "1")]
    assert ledger.open_inbox() == [] and _states(shared) == ["delivered"]


def test_a_reply_waits_for_its_platform_and_goes_when_it_runs(shared):
    replies, platforms, ledger = _replies(shared)
    item_id = _taken(shared)
    _, sent = asyncio.run(replies.reply(item_id, CHAT, "Later.", worker=WORKER))
    assert not sent and _states(shared) == ["pending"]
    assert ledger.open_inbox() == []  # the message is done: only the sending waits
    chat = platforms.running = Chat()
    asyncio.run(replies.send_due("telegram"))
    assert chat.sent == [("Later.", None)] and _states(shared) == ["delivered"]


def test_a_worker_that_lost_the_message_records_and_sends_nothing(shared):
    replies, platforms, ledger = _replies(shared)
    chat = platforms.running = Chat()
    item_id = _taken(shared)
    Claims(shared, WORKER).leave()  # taken for dead: the message went back
    assert asyncio.run(replies.reply(item_id, CHAT, "Late.", worker=WORKER)) == (0, False)
    assert chat.sent == [] and _states(shared) == []
    assert [item.id for item in ledger.open_inbox()] == [item_id]


def test_a_message_to_a_platform_not_enabled_is_refused_in_one_line(shared):
    replies, _, _ = _replies(shared)
    with pytest.raises(DeliveryUnavailable, match=r"no platform 'signal' runs in this gateway"):
        asyncio.run(replies.deliver("signal", "5", "hi"))
    delivery = asyncio.run(replies.deliver("telegram", "5", "queued for later"))
    assert delivery.state == "queued" and _states(shared) == ["pending"]
