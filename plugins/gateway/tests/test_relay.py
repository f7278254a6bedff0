"""Questions across workers, on SQLite and on PostgreSQL: a question asked on a worker
without the platforms is shown by the one with them and the answer the user gives reaches
the turn; one the turn stops waiting for is withdrawn from the chat; one shown by a worker
that died is shown again by the next; one nobody answers in time is a no."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.questions import ChatQuestions
from hermes_plugin_gateway.relay import QuestionRelay

from hermes_sdk.platform import ButtonPress, ChatRef
from hermes_sdk.runtime import Question, QuestionChoice
from hermes_sdk.storage import Store

from .conftest import inbound

ASKING = "elsewhere:1:asking"
SHOWING = "elsewhere:2:showing"
CHOICES = (
    QuestionChoice(value="once", label="Allow once"),
    QuestionChoice(value="deny", label="Deny"),
)


class Chat:
    """A platform's adapter that records what is shown (not the code under test)."""

    can_edit = True
    max_message_chars = 4096

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.said: list[str] = []
        self.typed: list[str] = []

    async def ask(self, chat, question, choices, request_id):  # type: ignore[no-untyped-def]
        self.asked.append((question, request_id))

    async def send(self, chat, text, *, reply_to=None):  # type: ignore[no-untyped-def]
        self.said.append(text)
        return ["1"]

    async def typing(self, chat):  # type: ignore[no-untyped-def]
        self.typed.append(chat.chat_id)


class Running:
    """The platforms as the relay reads them: which run here, and their adapters."""

    def __init__(self, adapter: Chat | None) -> None:
        self.states = {"telegram": None}
        self._adapter = adapter

    def adapter(self, name: str) -> Any:
        return self._adapter if name == "telegram" else None


def _question(answers: list[str | None], question_id: str = "q1", timeout_s: float = 10.0):
    def reply(value: str | None) -> bool:
        answers.append(value)
        return True

    return Question(
        question_id=question_id,
        kind="approval",
        text="Approve this command?",
        choices=CHOICES,
        command="chmod -R 777 x",
        timeout_s=timeout_s,
        _reply=reply,
    )


def _item(store: Store) -> InboxItem:
    (item,) = Ledger(store).accept_many([(inbound(user="42"), "telegram:5")])
    assert item is not None
    return item


def _relays(store: Store, chat: Chat) -> tuple[QuestionRelay, QuestionRelay, ChatQuestions]:
    _members(store, ASKING, SHOWING)
    questions = ChatQuestions()
    asking = QuestionRelay(store, ChatQuestions(), Running(None), lambda: ASKING, shared=True)
    showing = QuestionRelay(store, questions, Running(chat), lambda: SHOWING, shared=True)
    return asking, showing, questions


def _members(store: Store, *workers: str) -> None:
    """The workers, alive (a question whose asking worker is gone is closed)."""
    for worker in workers:
        Claims(store, worker).pulse()


async def _until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def _state(store: Store, question_id: str = "q1") -> tuple[str, str | None]:
    (row,) = store.query("SELECT state, answer FROM gateway_questions WHERE id = ?", (question_id,))
    return str(row[0]), row[1]


def test_a_question_asked_elsewhere_is_shown_and_the_press_answers_it(shared):
    chat = Chat()
    asking, showing, questions = _relays(shared, chat)
    item = _item(shared)
    answers: list[str | None] = []

    async def scenario() -> None:
        asked = asyncio.ensure_future(asking.ask(_question(answers), item))
        await _until(lambda: shared.query("SELECT 1 FROM gateway_questions"))
        await showing.show_asked()
        await _until(lambda: chat.asked)
        assert chat.asked == [("⚠️ Approve this command?\n\n```\nchmod -R 777 x\n```", "q1")]
        chat_ref = ChatRef("telegram", "5", "private")
        refused = questions.pressed(
            ButtonPress(chat=chat_ref, user_id="7", request_id="q1", choice="once")
        )
        assert refused == "Only the person who asked can answer this."
        press = ButtonPress(chat=chat_ref, user_id="42", request_id="q1", choice="once")
        assert questions.pressed(press) == "Allow once"
        await asyncio.wait_for(asked, 10)

    asyncio.run(scenario())
    assert answers == ["once"]
    assert _state(shared) == ("answered", "once")


def test_a_question_the_turn_stops_waiting_for_is_withdrawn(shared):
    chat = Chat()
    asking, showing, questions = _relays(shared, chat)
    item = _item(shared)

    async def scenario() -> None:
        asked = asyncio.ensure_future(asking.ask(_question([]), item))
        await _until(lambda: shared.query("SELECT 1 FROM gateway_questions"))
        await showing.show_asked()
        await _until(lambda: questions.is_open("q1"))
        asked.cancel()  # the turn ended (stopped) on the asking worker
        await asyncio.gather(asked, return_exceptions=True)
        assert _state(shared)[0] == "closed"
        await showing.show_asked()
        await _until(lambda: not questions.is_open("q1"))

    asyncio.run(scenario())


def test_a_question_shown_by_a_worker_that_died_is_shown_again(shared):
    first, second = Chat(), Chat()
    asking = QuestionRelay(shared, ChatQuestions(), Running(None), lambda: ASKING, shared=True)
    gone = "elsewhere:3:gone"  # no member of the workers (it died, and was judged so)
    dead = QuestionRelay(shared, ChatQuestions(), Running(first), lambda: gone, shared=True)
    alive = QuestionRelay(shared, ChatQuestions(), Running(second), lambda: SHOWING, shared=True)
    _members(shared, ASKING, SHOWING)
    item = _item(shared)

    async def scenario() -> None:
        asked = asyncio.ensure_future(asking.ask(_question([]), item))
        await _until(lambda: shared.query("SELECT 1 FROM gateway_questions"))
        await dead.show_asked()
        await _until(lambda: first.asked)
        assert _state(shared)[0] == "shown"
        await alive.show_asked()
        await _until(lambda: second.asked)
        asked.cancel()
        await asyncio.gather(asked, return_exceptions=True)

    asyncio.run(scenario())
    (shown_by,) = shared.query("SELECT shown_by FROM gateway_questions")[0]
    assert shown_by == SHOWING


def test_no_answer_in_time_is_a_no(shared):
    asking = QuestionRelay(shared, ChatQuestions(), Running(None), lambda: ASKING, shared=True)
    item = _item(shared)
    answers: list[str | None] = []
    asyncio.run(asking.ask(_question(answers, timeout_s=0.5), item))
    assert answers == [None]
    assert _state(shared) == ("closed", None)
    (row,) = shared.query("SELECT chat, choices FROM gateway_questions")
    assert ChatRef.from_dict(json.loads(row[0])).chat_id == "5"
    assert json.loads(row[1]) == [["once", "Allow once"], ["deny", "Deny"]]


def test_a_store_of_its_own_reaches_nobody_else():
    store: Any = None  # never touched
    relay = QuestionRelay(store, ChatQuestions(), Running(None), lambda: ASKING, shared=False)
    assert not relay.reaches_users()


def test_a_question_whose_worker_is_gone_is_closed_not_shown(shared):
    chat = Chat()
    asking, showing, _ = _relays(shared, chat)
    item = _item(shared)

    async def scenario() -> None:
        asked = asyncio.ensure_future(asking.ask(_question([]), item))
        await _until(lambda: shared.query("SELECT 1 FROM gateway_questions"))
        asked.cancel()  # as if its worker died: nothing of it runs any more
        await asyncio.gather(asked, return_exceptions=True)
        with shared.write() as cursor:  # ... and it was too quick to say so
            cursor.execute("UPDATE gateway_questions SET state = 'asked'")
        Claims(shared, ASKING).leave()  # judged gone
        await showing.show_asked()

    asyncio.run(scenario())
    assert chat.asked == [] and _state(shared)[0] == "closed"


def test_typing_shows_in_chats_whose_turns_run_elsewhere_for_a_while(shared):
    chat = Chat()
    _, showing, _ = _relays(shared, chat)
    ledger = Ledger(shared)
    ledger.accept_many([(inbound(chat_id=c, user=c), f"telegram:{c}") for c in ("7", "8")])
    for item in Claims(shared, ASKING).claim(None, 2):
        assert ledger.mark(item.id, "running", "s", ASKING)
    with shared.write() as cursor:  # the turn in chat 7 began a while ago
        cursor.execute("UPDATE gateway_inbox SET updated_at = updated_at - 5 WHERE chat_id = '7'")
    asyncio.run(showing.show_typing(0.5))
    assert chat.typed == ["7"]  # chat 8's turn may end before typing would show


def test_a_store_that_fails_makes_the_question_a_no(shared):
    asking = QuestionRelay(shared, ChatQuestions(), Running(None), lambda: ASKING, shared=True)
    item = _item(shared)
    with shared.write() as cursor:
        cursor.execute("DROP TABLE gateway_questions")
    answers: list[str | None] = []
    asyncio.run(asking.ask(_question(answers), item))
    assert answers == [None]
