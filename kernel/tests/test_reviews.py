"""Scheduling background reviews: one at a time, the rest wait (bounded), none is lost to a
busy moment."""

from __future__ import annotations

import asyncio

from hermes_kernel.engine.run import TurnResult
from hermes_kernel.learning.review import REVIEW_QUEUE, Reviews
from hermes_kernel.learning.triggers import LearningSettings
from hermes_kernel.store.state import StateStore
from hermes_sdk import ToolSpec

LONG_TURN = TurnResult("done it", "done", tool_calls=6)  # worth a skill review


class Scheduled(Reviews):
    """Reviews whose running is a recording (the scheduling is what is tested here)."""

    def __init__(self, store: StateStore) -> None:
        tool = ToolSpec(name="skill_manage", description="d", handler=lambda: "")
        super().__init__(store, lambda tools: None, {"skill_manage": tool}, LearningSettings())  # type: ignore[arg-type,return-value]
        self.ran: list[str] = []
        self.go_on = asyncio.Event()

    async def _run(self, session, kind, reason, tools):  # type: ignore[no-untyped-def]
        self.ran.append(session.id)
        await self.go_on.wait()


def test_reviews_triggered_while_one_runs_wait_their_turn(store):
    sessions = [store.sessions.create("telegram", model="m", provider="p") for _ in range(3)]

    async def main() -> list[str]:
        reviews = Scheduled(store)
        for session in sessions:
            assert reviews.after_turn(session, "tidy my files", LONG_TURN) is not None
        reviews.after_turn(sessions[1], "again", LONG_TURN)  # still waiting: counted once
        await asyncio.sleep(0)
        assert reviews.ran == [sessions[0].id]  # one at a time
        reviews.go_on.set()
        await reviews.task
        return reviews.ran

    assert asyncio.run(main()) == [s.id for s in sessions]


def test_the_wait_is_bounded_and_dropped_at_exit(store):
    sessions = [
        store.sessions.create("telegram", model="m", provider="p") for _ in range(REVIEW_QUEUE + 3)
    ]

    async def main() -> tuple[list[str], list[str]]:
        reviews = Scheduled(store)
        for session in sessions:
            reviews.after_turn(session, "tidy my files", LONG_TURN)
        await asyncio.sleep(0)
        waiting = [review.session.id for review in reviews._waiting]
        reviews.go_on.set()
        await reviews.drain(timeout=5)
        return waiting, reviews.ran

    waiting, ran = asyncio.run(main())
    # The first runs; of the rest, the newest REVIEW_QUEUE wait (the oldest were dropped).
    assert waiting == [s.id for s in sessions[-REVIEW_QUEUE:]]
    assert ran == [sessions[0].id]  # exit waits for the running one, not for the queue
