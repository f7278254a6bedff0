"""The front door: who may write (the allowlist; a stranger in a DM is given a pairing
code, and nothing of theirs is stored); /stop acted on at once, dropping what waits; a typed
answer to an open question answers it; an adapter cannot pass its messages off as another
platform's."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from hermes_plugin_gateway.access import Access
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.front_door import FrontDoor, PlatformDoor
from hermes_plugin_gateway.intake import Intake
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.questions import Asker, ChatQuestions

from hermes_sdk.platform import ChatRef, Inbound
from hermes_sdk.runtime import Question, QuestionChoice
from hermes_sdk.slash import SlashReply
from hermes_sdk.storage import Store

from .conftest import inbound

OWNER = "5"
WORKER = "elsewhere:1:me"


class Chat:
    """A platform's adapter that records what it is asked to send (not the code under test)."""

    can_edit = True
    max_message_chars = 4096

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.asked: list[str] = []

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        self.sent.append(text)
        return ["1"]

    async def ask(self, chat: ChatRef, question: str, choices: Any, request_id: str) -> None:
        self.asked.append(question)


class Platforms:
    def __init__(self, chat: Chat) -> None:
        self.chat = chat

    def adapter(self, name: str) -> Any:
        return self.chat if name == "telegram" else None


class Runtime:
    """The runtime's /stop as the front door calls it (the runtime is not under test)."""

    def __init__(self) -> None:
        self.stopped: list[str | None] = []

    async def run_slash(self, name: str, args: str, session_id: str | None, **_: Any) -> Any:
        self.stopped.append(session_id)
        return SlashReply(text="nothing is running", stopped=False)


class Dispatch:
    def stop_route(self, key: str) -> None:
        return None


class Replies:
    def __init__(self) -> None:
        self.said: list[str] = []

    async def reply(self, item_id: Any, chat: ChatRef, text: str, **_: Any) -> tuple[int, bool]:
        self.said.append(text)
        return 1, True


def _door(store: Store, stored: list[InboxItem]) -> tuple[FrontDoor, Chat, Replies, ChatQuestions]:
    pairings = Pairings(store)
    chat, replies, questions = Chat(), Replies(), ChatQuestions()
    door = FrontDoor(
        Runtime(),  # type: ignore[arg-type]
        store,
        Access({"telegram": {"allowed_users": [OWNER]}}, pairings),
        pairings,
        Platforms(chat),  # type: ignore[arg-type]
        questions,
        Intake(Ledger(store), stored.append),
        Dispatch(),  # type: ignore[arg-type]
        replies,  # type: ignore[arg-type]
        Claims(store, WORKER),
        group_sessions="per_user",
        http=("127.0.0.1", 0),
    )
    return door, chat, replies, questions


def test_the_owner_is_let_in_and_a_stranger_gets_a_pairing_code(store):
    stored: list[InboxItem] = []
    door, chat, _, _ = _door(store, stored)
    asyncio.run(door.receive(inbound(user=OWNER)))
    assert [item.user_id for item in stored] == [OWNER]
    asyncio.run(door.receive(inbound(user="77", chat_id="77")))
    assert [item.user_id for item in stored] == [OWNER]  # nothing of the stranger's kept
    (said,) = chat.sent
    assert "hermes pairing approve telegram" in said
    asyncio.run(door.receive(inbound(user="78", chat_id="-1", chat_type="group")))
    assert len(chat.sent) == 1  # in a group a stranger is ignored: no code


def test_stop_drops_what_waits_and_says_so(store):
    stored: list[InboxItem] = []
    door, _, replies, _ = _door(store, stored)
    asyncio.run(door.receive(inbound(user=OWNER, message_id="1")))
    asyncio.run(door.receive(inbound(user=OWNER, message_id="2")))
    asyncio.run(door.receive(replace(inbound(user=OWNER, message_id="3"), text="/stop")))
    assert replies.said == ["nothing is running; dropped 2 waiting messages"]
    assert Ledger(store).open_inbox() == []
    assert len(stored) == 2  # /stop itself is never stored


def test_a_typed_answer_answers_the_open_question(store):
    stored: list[InboxItem] = []
    door, chat, _, questions = _door(store, stored)
    answers: list[str | None] = []

    def reply(value: str | None) -> bool:
        answers.append(value)
        return True

    question = Question(
        question_id="q1",
        kind="approval",
        text="Approve this command?",
        choices=(QuestionChoice(value="once", label="Allow once"),),
        command="chmod -R 777 x",
        _reply=reply,
    )

    async def scenario() -> None:
        questions.spawn(Asker(chat, ChatRef("telegram", OWNER, "private"), OWNER), question)
        while not chat.asked:
            await asyncio.sleep(0.01)
        await door.receive(replace(inbound(user=OWNER), text="allow once"))

    asyncio.run(scenario())
    assert answers == ["once"] and stored == []


class _Received:
    def __init__(self) -> None:
        self.messages: list[Inbound] = []

    async def receive(self, message: Inbound) -> None:
        self.messages.append(message)


def test_a_message_labelled_as_another_platform_is_dropped() -> None:
    door: Any = _Received()
    host = PlatformDoor(door, "discord")
    message = Inbound(
        chat=ChatRef("webhook", "c1", "private"), user_id="u1", text="hi", message_id="m1"
    )
    asyncio.run(host.receive(message))
    asyncio.run(host.receive(replace(message, chat=ChatRef("discord", "c1", "private"))))
    assert [m.chat.platform for m in door.messages] == ["discord"]
