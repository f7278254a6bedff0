"""Previews across workers, on SQLite and on PostgreSQL: a reply written on a worker without
the platforms is shown while it is written by the worker with them, in one message edited,
and the reply replaces that message, also when a worker that takes the platforms over sends
it; with no preview shown, the reply is a message of its own."""

from __future__ import annotations

import asyncio

from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.relayed_preview import PreviewRelay
from hermes_plugin_gateway.replies import Replies

from hermes_commons.outbox import Outbox
from hermes_commons.sending import Deliveries
from hermes_sdk.storage import Store

from .conftest import inbound
from .test_relay import Running


class Chat:
    """A platform's adapter that records what is shown (not the code under test)."""

    can_edit = True
    max_message_chars = 4096

    def __init__(self) -> None:
        self.said: list[str] = []
        self.edited: list[tuple[str, str]] = []

    async def send(self, chat, text, *, reply_to=None):  # type: ignore[no-untyped-def]
        self.said.append(text)
        return [str(len(self.said))]

    async def edit(self, chat, message_id, text):  # type: ignore[no-untyped-def]
        self.edited.append((message_id, text))


def _item(store: Store) -> InboxItem:
    (item,) = Ledger(store).accept_many([(inbound(user="42"), "telegram:5")])
    assert item is not None
    return item


def _written(store: Store, item: InboxItem) -> str | None:
    rows = store.query("SELECT text FROM gateway_previews WHERE inbox_id = ?", (item.id,))
    return str(rows[0][0]) if rows else None


async def _until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def _sender(store: Store, chat: Chat | None, previews: PreviewRelay) -> Replies:
    running = Running(chat)
    deliveries = Deliveries(Outbox(store), running.adapter, attempts=3)
    return Replies(Ledger(store), deliveries, running, previews)  # type: ignore[arg-type]


def _record_reply(store: Store, item: InboxItem, text: str, preview: str | None) -> int:
    outbox = Outbox(store)
    with store.write() as cursor:
        return outbox.record_in(cursor, item.chat, text, preview_id=preview)


def test_a_reply_written_elsewhere_is_previewed_then_replaces_its_preview(shared):
    chat = Chat()
    item = _item(shared)
    writing = PreviewRelay(shared, Running(None))  # type: ignore[arg-type]
    showing = PreviewRelay(shared, Running(chat))  # type: ignore[arg-type]

    async def scenario() -> str | None:
        stream = writing.stream(item, 0.02)
        stream.feed("Hel")
        await _until(lambda: _written(shared, item) == "Hel")
        await showing.show()
        assert chat.said == ["Hel …"]
        stream.feed("lo")
        await _until(lambda: _written(shared, item) == "Hello")
        await showing.show()
        await showing.show()  # unchanged since: not edited again
        assert chat.edited == [("1", "Hello …")]
        named = await stream.close()
        stream.feed(" again")  # after close: never written
        await asyncio.sleep(0.1)
        assert _written(shared, item) == "Hello"
        _record_reply(shared, item, "Hello there", named)
        await _sender(shared, chat, showing).send_due()
        return named

    assert asyncio.run(scenario()) == f"relayed:{item.id}"
    assert chat.said == ["Hel …"]  # one message in the chat, edited into the reply
    assert chat.edited == [("1", "Hello …"), ("1", "Hello there")]
    assert _written(shared, item) is None  # its row went with it
    assert shared.query("SELECT preview_id, state FROM outbox_entries") == [("1", "delivered")]


def test_a_worker_that_takes_the_platforms_over_edits_the_same_preview(shared):
    chat = Chat()
    item = _item(shared)

    async def scenario() -> None:
        stream = PreviewRelay(shared, Running(None)).stream(item, 0.02)  # type: ignore[arg-type]
        stream.feed("Working on it")
        await _until(lambda: _written(shared, item) == "Working on it")
        await PreviewRelay(shared, Running(chat)).show()  # type: ignore[arg-type]
        # That worker dies; the next one with the platforms knows the message from the store.
        following = PreviewRelay(shared, Running(chat))  # type: ignore[arg-type]
        stream.feed(", nearly done")
        await _until(lambda: (_written(shared, item) or "").endswith("done"))
        await following.show()
        _record_reply(shared, item, "Done.", await stream.close())
        await _sender(shared, chat, following).send_due()

    asyncio.run(scenario())
    assert chat.said == ["Working on it …"]
    assert chat.edited == [("1", "Working on it, nearly done …"), ("1", "Done.")]


def test_a_reply_faster_than_its_preview_is_a_message_of_its_own(shared):
    chat = Chat()
    item = _item(shared)

    async def scenario() -> None:
        showing = PreviewRelay(shared, Running(chat))  # type: ignore[arg-type]
        quick = PreviewRelay(shared, Running(None)).stream(item, 5.0)  # type: ignore[arg-type]
        quick.feed("Hi")
        assert await quick.close() is None  # nothing was written in time
        slow = PreviewRelay(shared, Running(None)).stream(item, 0.02)  # type: ignore[arg-type]
        slow.feed("Hi there")
        await _until(lambda: _written(shared, item) == "Hi there")
        # Written, never shown (the platforms' worker was busy): the reply comes whole.
        _record_reply(shared, item, "Hi there!", await slow.close())
        await _sender(shared, chat, showing).send_due()
        await showing.show()  # a preview settled is not shown afterwards

    asyncio.run(scenario())
    assert chat.said == ["Hi there!"]
    assert chat.edited == []
    assert shared.query("SELECT preview_id FROM outbox_entries") == [(None,)]
