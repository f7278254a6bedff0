"""Dispatch, on SQLite and on PostgreSQL: each conversation answered one message at a time
and in order, conversations side by side up to the cap, a message whose handling fails
closed with a word to the chat (its conversation goes on), and /stop dropping what waits."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.conversation import Conversation
from hermes_plugin_gateway.dispatch import FAILED, Dispatch
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.standing import Standing

from hermes_sdk.platform import ChatRef
from hermes_sdk.storage import Store

from .conftest import inbound

WORKER = "elsewhere:1:me"


class Runner:
    """The next stage as dispatch sees it: answers each message it is handed (records the
    reply in the ledger, as the turn runner does), holding those it is told to."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.handled: list[tuple[str, str]] = []
        self.running: set[str] = set()
        self.most_at_once = 0
        self.release = asyncio.Event()
        self.fail: set[str] = set()

    async def handle(self, conversation: Conversation, item: InboxItem) -> None:
        self.running.add(item.route_key)
        self.most_at_once = max(self.most_at_once, len(self.running))
        try:
            await self.release.wait()
            if item.message_id in self.fail:
                raise RuntimeError("the runner broke")
            await self.ledger.store.run(
                self.ledger.reply_ready, item.id, item.chat, "ok", worker=item.worker
            )
            # Counted once its reply is recorded: a test that stops at the count must not
            # cancel that write (PostgreSQL on a loaded machine took long enough to lose it).
            self.handled.append((item.route_key, item.message_id))
        finally:
            self.running.discard(item.route_key)


class Replies:
    def __init__(self) -> None:
        self.said: list[tuple[ChatRef, str]] = []

    async def reply(self, item_id: Any, chat: ChatRef, text: str, **_: Any) -> tuple[int, bool]:
        self.said.append((chat, text))
        return 1, True


class NoPlatforms:
    states: ClassVar[dict[str, Any]] = {}

    def adapter(self, name: str) -> None:
        return None


def _dispatch(store: Store, turns: int = 8) -> tuple[Dispatch, Runner, Replies]:
    ledger = Ledger(store)
    runner, replies = Runner(ledger), Replies()
    standing = Standing(NoPlatforms())  # type: ignore[arg-type]
    standing.decided.set()
    dispatch = Dispatch(
        Claims(store, WORKER),
        ledger,
        runner,  # type: ignore[arg-type]
        replies,  # type: ignore[arg-type]
        standing,
        turns=turns,
        stopping=asyncio.Event(),
    )
    return dispatch, runner, replies


def _store(store: Store, *messages: tuple[str, str]) -> None:
    Ledger(store).accept_many(
        [(inbound(chat_id=route, user=route, message_id=mid), route) for route, mid in messages]
    )


async def _until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def test_a_conversation_runs_in_order_and_conversations_side_by_side_up_to_the_cap(shared):
    _store(shared, ("a", "1"), ("b", "1"), ("a", "2"), ("c", "1"), ("a", "3"))

    async def scenario() -> tuple[Runner, Dispatch]:
        dispatch, runner, _ = _dispatch(shared, turns=2)
        loop = asyncio.ensure_future(dispatch.run())
        dispatch.wake()
        await _until(lambda: len(runner.running) == 2)
        runner.release.set()
        await _until(lambda: len(runner.handled) == 5)
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
        return runner, dispatch

    runner, dispatch = asyncio.run(scenario())
    assert [mid for route, mid in runner.handled if route == "a"] == ["1", "2", "3"]
    assert runner.most_at_once == 2
    assert dispatch.conversations == {}
    assert Ledger(shared).open_inbox() == []


def test_a_message_whose_handling_fails_is_closed_and_its_conversation_goes_on(shared):
    _store(shared, ("a", "1"), ("a", "2"))

    async def scenario() -> tuple[Runner, Replies]:
        dispatch, runner, replies = _dispatch(shared)
        runner.fail.add("1")
        runner.release.set()
        loop = asyncio.ensure_future(dispatch.run())
        dispatch.wake()
        await _until(lambda: runner.handled)
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
        return runner, replies

    runner, replies = asyncio.run(scenario())
    assert runner.handled == [("a", "2")]
    assert [text for _, text in replies.said] == [FAILED]
    (state,) = shared.query("SELECT state FROM gateway_inbox WHERE message_id = '1'")[0]
    assert state == "failed"


class Turn:
    session_id = "s1"

    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


def test_stop_drops_a_message_waiting_for_its_turn_and_names_a_running_turn(shared):
    _store(shared, ("a", "1"))

    async def scenario() -> None:
        dispatch, runner, _ = _dispatch(shared)
        loop = asyncio.ensure_future(dispatch.run())
        dispatch.wake()
        await _until(lambda: runner.running)
        conversation = dispatch.conversations["a"]
        # In hand, its turn not started (waiting for a slot): dropped, no session to stop.
        assert dispatch.stop_route("a") is None
        assert conversation.dropped == {conversation.current}
        # Its turn running: the runtime is to stop that session.
        turn = conversation.turn = Turn()  # type: ignore[assignment]
        assert dispatch.stop_route("a") == "s1" and conversation.stopped_by_user
        # A /stop that reached this worker through the store, and a worker taken for dead.
        conversation.stopped_by_user = False
        dispatch.stop_turns([conversation.current or 0])
        assert conversation.stopped_by_user and turn.stopped
        turn.stopped = False
        dispatch.stop_turns([], all_turns=True)
        assert turn.stopped
        conversation.turn = None
        runner.release.set()
        await _until(lambda: not runner.running)
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)

    asyncio.run(scenario())
