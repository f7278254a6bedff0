"""Dispatch: stored messages taken from the inbox (:class:`~.claims.Claims`: the oldest open
one of each route, as many as there are free turn slots) and queued per conversation, each
conversation answered one message at a time by the turn runner.

Woken when this worker stores a message or finishes one; among workers it also polls, for
messages others took in. The worker with the platforms takes only connected platforms'
messages (a turn resumed there can stream and ask); the others take any platform's: their
replies wait in the ledger for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from hermes_commons.supervision import one_line
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.conversation import Conversation
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.replies import Replies
from hermes_plugin_gateway.standing import Standing
from hermes_plugin_gateway.turns import TurnRunner

__all__ = ["Dispatch"]

log = logging.getLogger("hermes.gateway")

IDLE_POLL_SECONDS = 1.0
SHARED_POLL_SECONDS = 0.1
"""Workers sharing a store look this often for messages another worker took in. A gateway
alone is woken instead."""
FAILED = "⚠️ Something went wrong on my side; the error is in the gateway's log."


class Dispatch:
    def __init__(
        self,
        claims: Claims,
        ledger: Ledger,
        runner: TurnRunner,
        replies: Replies,
        standing: Standing,
        *,
        turns: int,
        stopping: asyncio.Event,
    ) -> None:
        """``standing``: whose messages this worker takes, and whether it polls (other
        workers serve the store); it starts once that is decided."""
        self.claims = claims
        self.ledger = ledger
        self.runner = runner
        self.replies = replies
        self.turns = turns
        self.standing = standing
        self.stopping = stopping
        self.conversations: dict[str, Conversation] = {}
        self._in_hand: dict[int, str] = {}
        """Each message taken and not finished, with the name it was taken under."""
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        """Take messages to run until cancelled."""
        await self.standing.decided.wait()
        while not self.stopping.is_set():
            poll = SHARED_POLL_SECONDS if self.standing.peers else IDLE_POLL_SECONDS
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll):  # wait_for may swallow a cancel (3.11)
                    await self._wake.wait()
            self._wake.clear()
            if any(name != self.claims.worker for name in self._in_hand.values()):
                continue  # renamed: what it held under its old name must end first
            free = self.turns - len(self.conversations)
            try:
                taken = self.standing.platforms_taken()
                items = await self.claims.store.run(self.claims.claim, taken, free)
            except Exception as exc:  # noqa: BLE001 - the store may be back at the next poll
                log.warning("gateway: could not take messages from the inbox: %s", one_line(exc))
                await asyncio.sleep(IDLE_POLL_SECONDS)
                continue
            for item in items:
                self._enqueue(item)

    def _enqueue(self, item: InboxItem) -> None:
        conversation = self.conversations.get(item.route_key)
        if conversation is None:
            conversation = Conversation(item.route_key, item.chat)
            self.conversations[item.route_key] = conversation
        self._in_hand[item.id] = item.worker or self.claims.worker
        conversation.queue.append(item)
        if conversation.task is None:
            conversation.task = asyncio.ensure_future(self._drain(conversation))

    async def _drain(self, conversation: Conversation) -> None:
        try:
            while conversation.queue and not self.stopping.is_set():
                item = conversation.queue.popleft()  # /stop empties the queue
                conversation.current = item.id
                try:
                    await self.runner.handle(conversation, item)
                except Exception:
                    log.exception("gateway: message %d failed", item.id)
                    if await self._settle_failed(item):
                        with contextlib.suppress(Exception):
                            await self.replies.reply(None, item.chat, FAILED)
                finally:
                    self._in_hand.pop(item.id, None)
        finally:
            conversation.task = None
            if not conversation.queue:
                self.conversations.pop(conversation.key, None)
            self.wake()  # a turn slot is free, and this route's next message may run

    async def _settle_failed(self, item: InboxItem) -> bool:
        """Close a message whose handling failed, so its chat's next message may run: tried
        again while the store fails (the failure may have been the store's), until this
        gateway stops. Whether this worker closed it (else another holds it, or it is
        closed already)."""
        while not self.stopping.is_set():
            try:
                return bool(
                    await self.ledger.store.run(
                        self.ledger.mark, item.id, "failed", None, item.worker
                    )
                )
            except Exception as exc:  # noqa: BLE001 - the store may be back in a moment
                log.warning("gateway: message %d stays open: %s", item.id, one_line(exc))
                await asyncio.sleep(IDLE_POLL_SECONDS * 2)
        return False  # left open: this worker hands it back as it leaves

    # --- stopping ---------------------------------------------------------------------------

    def running_session(self, key: str) -> str | None:
        """The session of the turn the route runs in this worker now, if one does."""
        conversation = self.conversations.get(key)
        turn = conversation.turn if conversation is not None else None
        return turn.session_id if turn is not None and not turn.done else None

    def stop_route(self, key: str) -> str | None:
        """``/stop`` in a chat: its waiting messages are dropped here (the store drops them
        for every worker); the session of the turn it runs here, if one does."""
        conversation = self.conversations.get(key)
        if conversation is None:
            return None
        for waiting in conversation.queue:
            self._in_hand.pop(waiting.id, None)
        conversation.queue.clear()
        if conversation.current is not None and conversation.turn is None:
            conversation.dropped.add(conversation.current)
        if conversation.turn is None:
            return None
        conversation.stopped_by_user = True
        return conversation.turn.session_id

    def stop_turns(self, items: Sequence[int], *, all_turns: bool = False) -> None:
        """Stop the turns of ``items`` (a /stop that reached another worker), or every turn
        (this worker was taken for dead: another resumes them)."""
        for conversation in self.conversations.values():
            if conversation.current in items:
                conversation.stopped_by_user = True  # also while it waits to resume
                if conversation.turn is not None:
                    conversation.turn.stop()
            elif all_turns and conversation.turn is not None:
                conversation.turn.stop()

    async def drain(self, seconds: float) -> None:
        """Shutting down: let running turns finish up to ``seconds``; stop the rest, which
        resume at the next start (or on another worker)."""
        running = [c.task for c in self.conversations.values() if c.task is not None]
        if running:
            log.info("gateway: letting %d running turns finish", len(running))
            await asyncio.wait(running, timeout=seconds)
        for conversation in self.conversations.values():
            if conversation.turn is not None:
                conversation.turn.stop()
        left = [c.task for c in self.conversations.values() if c.task is not None]
        if left:
            await asyncio.wait(left, timeout=10)

    def turns_running(self) -> int:
        return sum(1 for conversation in self.conversations.values() if conversation.turn)
