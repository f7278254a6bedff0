"""``follow_turn``: the one fold of a turn's events every front-end uses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from hermes_sdk.following import CUT_OFF, TurnWatcher, follow_turn, trouble
from hermes_sdk.runtime import (
    Notice,
    Question,
    QuestionChoice,
    RuntimeTurn,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    TurnEvent,
)


class ScriptedTurn(RuntimeTurn):
    """A turn that yields the events given (a stand-in for the runtime's, whose events the
    front-ends' own tests take from the real one)."""

    def __init__(self, events: Sequence[TurnEvent], *, hang: bool = False) -> None:
        self.session_id = "s1"
        self.events = list(events)
        self.hang = hang
        self.stopped = False
        self.ended = TurnEnded(session_id="s1", status="done", reply="from result()")

    async def _events(self) -> AsyncIterator[TurnEvent]:
        for event in self.events:
            yield event
        if self.hang:
            await asyncio.sleep(3600)

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        return self._events()

    async def result(self) -> TurnEnded:
        return self.ended

    def interrupt(self) -> None:
        pass

    def stop(self) -> None:
        self.stopped = True

    @property
    def done(self) -> bool:
        return False


def _question(answers: list[str | None]) -> Question:
    return Question(
        question_id="q1",
        kind="approval",
        text="run rm?",
        choices=(QuestionChoice(value="once", label="once"),),
        _reply=lambda value: answers.append(value) or True,
    )


END = TurnEnded(session_id="s1", status="done", reply="ok")


def test_a_restart_is_taken_back_where_it_can_be_and_said_where_it_cannot() -> None:
    events = [TextDelta(text="par"), TextDelta(text="", restarted=True), TextDelta(text="all"), END]
    shown: list[str] = []
    ended = asyncio.run(
        follow_turn(
            ScriptedTurn(events),
            TurnWatcher(on_text=shown.append, on_restart=lambda: shown.append("<restart>")),
        )
    )
    assert shown == ["par", "<restart>", "all"] and ended is END
    streamed: list[str] = []

    async def send(text: str) -> None:  # a coroutine callback is awaited
        streamed.append(text)

    asyncio.run(follow_turn(ScriptedTurn(events), TurnWatcher(on_text=send)))
    assert streamed == ["par", CUT_OFF, "all"]


def test_tools_notices_and_the_end_each_reach_their_callback_in_order() -> None:
    started = ToolStarted(call_id="c1", tool="terminal")
    finished = ToolFinished(call_id="c1", tool="terminal", ok=True, content="done")
    seen: list[object] = []
    watcher = TurnWatcher(
        on_notice=seen.append,
        on_tool_started=seen.append,
        on_tool_finished=seen.append,
        on_end=seen.append,
    )
    events = [Notice(text="retrying"), started, finished, END]
    asyncio.run(follow_turn(ScriptedTurn(events), watcher))
    assert seen == ["retrying", started, finished, END]
    assert watcher.tool_calls == [finished]


def test_a_question_nobody_takes_is_declined_and_one_taken_is_handed_over() -> None:
    answers: list[str | None] = []
    asyncio.run(follow_turn(ScriptedTurn([_question(answers), END]), TurnWatcher()))
    assert answers == [None]  # declined: unanswered means no
    taken: list[Question] = []
    asyncio.run(
        follow_turn(ScriptedTurn([_question(answers), END]), TurnWatcher(on_question=taken.append))
    )
    assert len(taken) == 1 and answers == [None]


def test_a_turn_whose_events_stop_short_ends_with_its_result() -> None:
    ends: list[TurnEnded] = []
    turn = ScriptedTurn([TextDelta(text="hi")])
    ended = asyncio.run(follow_turn(turn, TurnWatcher(on_end=ends.append)))
    assert ended.reply == "from result()" and ends == [ended]


def test_a_follower_that_leaves_stops_the_turn_only_when_asked() -> None:
    def fail(_text: str) -> None:
        raise ConnectionError("the client went away")

    for stop_if_left in (True, False):
        turn = ScriptedTurn([TextDelta(text="hi"), END])
        with pytest.raises(ConnectionError):
            asyncio.run(follow_turn(turn, TurnWatcher(on_text=fail), stop_if_left=stop_if_left))
        assert turn.stopped is stop_if_left


def test_trouble_is_one_line_for_a_failed_turn_and_none_for_a_finished_or_stopped_one() -> None:
    assert trouble(END) is None
    assert trouble(TurnEnded(session_id="s", status="stopped", reply="")) is None
    failed = TurnEnded(session_id="s", status="error", reply="", error="model unreachable")
    assert trouble(failed) == "⚠️ model unreachable"
    assert trouble(TurnEnded(session_id="s", status="budget", reply="")) == "⚠️ budget"
