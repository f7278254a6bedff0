"""Scheduling background reviews: which reviews a turn triggers, one at a time, the rest wait
(bounded), none is lost to a busy moment."""

from __future__ import annotations

import asyncio

from hermes_kernel.engine.run import TurnResult
from hermes_kernel.learning.review import REVIEW_QUEUE, Reviews
from hermes_kernel.learning.triggers import LearningSettings
from hermes_kernel.store.state import StateStore
from hermes_sdk import ReviewSpec, ToolSpec

LONG_TURN = TurnResult("done it", "done", tool_calls=6)  # worth a lesson review
SHORT_TURN = TurnResult("hi", "done", tool_calls=0)


def tool(name: str, *, read_only: bool = False) -> ToolSpec:
    return ToolSpec(name=name, description="d", handler=lambda: "", parallel_safe=read_only)


LESSON = ReviewSpec(
    name="notes",
    trigger="lesson",
    instructions="Keep the method.",
    tools=frozenset({"note_write", "note_list"}),
    keeps_with=frozenset({"note_write"}),
    read_only_tools=True,
)
PERIODIC = ReviewSpec(
    name="profile",
    trigger="periodic",
    instructions="Keep what the user said about themselves.",
    tools=frozenset({"profile_write"}),
    keeps_with=frozenset({"profile_write"}),
)
TOOLS = {
    "note_write": tool("note_write"),
    "profile_write": tool("profile_write"),
    "look": tool("look", read_only=True),
    "shell": tool("shell"),
}


class Scheduled(Reviews):
    """Reviews whose running is a recording (the scheduling is what is tested here)."""

    def __init__(
        self,
        store: StateStore,
        specs: tuple[ReviewSpec, ...] = (LESSON,),
        settings: LearningSettings | None = None,
    ) -> None:
        super().__init__(
            store,
            lambda tools: None,  # type: ignore[arg-type,return-value]  # never called: _run is
            TOOLS,
            settings or LearningSettings(),
            specs=specs,
        )
        self.ran: list[str] = []
        self.reviewed: list[tuple[str, str, set[str]]] = []
        self.go_on = asyncio.Event()

    async def _run(self, session, spec, reason, tools):  # type: ignore[no-untyped-def]
        self.ran.append(session.id)
        self.reviewed.append((spec.name, reason, set(tools)))
        await self.go_on.wait()


def test_reviews_triggered_while_one_runs_wait_their_turn(store):
    sessions = [store.sessions.create("cli", model="m", provider="p") for _ in range(3)]

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
        store.sessions.create("cli", model="m", provider="p") for _ in range(REVIEW_QUEUE + 3)
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


def test_a_review_gets_the_tools_it_names_and_read_only_ones_never_the_others(store):
    session = store.sessions.create("cli", model="m", provider="p")

    async def main() -> list[tuple[str, str, set[str]]]:
        reviews = Scheduled(store)
        reviews.go_on.set()
        reviews.after_turn(session, "tidy my files", LONG_TURN)
        await reviews.drain(timeout=5)
        return reviews.reviewed

    (reviewed,) = asyncio.run(main())
    # note_list is not installed; look is read-only; shell and profile_write are not its own.
    assert reviewed == ("notes", "it took 6 tool calls", {"note_write", "look"})


def test_a_review_whose_keeping_tool_is_missing_does_not_run(store):
    session = store.sessions.create("cli", model="m", provider="p")
    orphan = ReviewSpec(
        name="orphan",
        trigger="lesson",
        instructions="Keep it.",
        tools=frozenset({"gone_write"}),
        keeps_with=frozenset({"gone_write"}),
        read_only_tools=True,
    )

    async def main() -> str | None:
        return Scheduled(store, (orphan,)).after_turn(session, "tidy my files", LONG_TURN)

    assert asyncio.run(main()) is None


def test_periodic_reviews_come_every_n_user_turns_unless_a_lesson_review_runs(store):
    session = store.sessions.create("cli", model="m", provider="p")
    settings = LearningSettings(nudge_every_turns=2)

    async def main() -> list[tuple[str, str, set[str]]]:
        reviews = Scheduled(store, (LESSON, PERIODIC), settings)
        reviews.go_on.set()
        for turn in range(1, 5):
            store.messages.append(session.id, "user", f"turn {turn}")
            result = LONG_TURN if turn == 4 else SHORT_TURN
            reviews.after_turn(session, f"turn {turn}", result)
            await reviews.drain(timeout=5)
        return reviews.reviewed

    # Turn 2 is the periodic one's; turn 4 is due too, but taught something: lesson only.
    assert asyncio.run(main()) == [
        ("profile", "every 2 user turns", {"profile_write"}),
        ("notes", "it took 6 tool calls", {"note_write", "look"}),
    ]


def test_no_review_of_a_review_and_none_without_specs(store):
    review = store.sessions.create("review", model="m", provider="p")
    chat = store.sessions.create("cli", model="m", provider="p")

    async def main() -> tuple[str | None, str | None]:
        return (
            Scheduled(store).after_turn(review, "tidy my files", LONG_TURN),
            Scheduled(store, ()).after_turn(chat, "tidy my files", LONG_TURN),
        )

    assert asyncio.run(main()) == (None, None)
