"""Questions in the chat: only the person asked may answer, by button or by typing a choice;
no answer in time, or /stop, is a no, and the chat is told when time ran out."""

from __future__ import annotations

import asyncio
import dataclasses

from hermes_plugin_gateway.questions import Asker, ChatQuestions, question_text

from hermes_sdk.platform import ButtonPress, ChatRef
from hermes_sdk.runtime import Question, QuestionChoice

CHAT = ChatRef("telegram", "5", "private")
CHOICES = (
    QuestionChoice(value="once", label="Allow once"),
    QuestionChoice(value="deny", label="Deny"),
)


class RecordingAdapter:
    """Records what the gateway shows (a platform, not the code under test)."""

    max_message_chars = 4096
    can_edit = True

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str], str]] = []
        self.said: list[str] = []

    async def ask(self, chat, question, choices, request_id):
        self.asked.append((question, [c.value for c in choices], request_id))

    async def send(self, chat, text, *, reply_to=None):
        self.said.append(text)
        return ["1"]


def approval(answers: list[str | None], timeout_s: float = 5.0) -> Question:
    def reply(value: str | None) -> bool:
        if answers:
            return False  # answered already: closed
        answers.append(value)
        return True

    return Question(
        question_id="q1",
        kind="approval",
        text="Approve this command? It changes permissions recursively.\n\nchmod -R 777 x",
        choices=CHOICES,
        command="chmod -R 777 x",
        timeout_s=timeout_s,
        _reply=reply,
    )


async def asked(questions: ChatQuestions, adapter: RecordingAdapter, question: Question):
    task = asyncio.ensure_future(questions.ask(Asker(adapter, CHAT, "42"), question))
    while not adapter.asked:
        await asyncio.sleep(0.01)
    return task


def test_an_approval_shows_its_command_in_a_code_block():
    text = question_text(approval([]))
    assert text.startswith("⚠️ Approve this command? It changes permissions recursively.")
    assert text.endswith("```\nchmod -R 777 x\n```")


def test_a_command_with_backticks_stays_whole_in_its_code_block():
    from dataclasses import replace

    from markdown_it import MarkdownIt

    command = "cat > README.md <<EOF\n```\nrm a*b*c \\$HOME\n```\nEOF"
    text = question_text(replace(approval([]), command=command))
    fences = [t for t in MarkdownIt().parse(text) if t.type == "fence"]
    assert [f.content for f in fences] == [command + "\n"]  # one block, the command whole


def test_only_the_person_asked_answers_by_button():
    answers: list[str | None] = []

    async def scenario() -> tuple[str, str, str, bool]:
        questions, adapter = ChatQuestions(), RecordingAdapter()
        task = await asked(questions, adapter, approval(answers))
        stranger = questions.pressed(
            ButtonPress(chat=CHAT, request_id="q1", user_id="7", choice="once")
        )
        owner = questions.pressed(
            ButtonPress(chat=CHAT, request_id="q1", user_id="42", choice="once")
        )
        again = questions.pressed(
            ButtonPress(chat=CHAT, request_id="q1", user_id="42", choice="deny")
        )
        await asyncio.wait_for(task, 5)
        return stranger, owner, again, questions.is_open("q1")

    stranger, owner, again, still_open = asyncio.run(scenario())
    assert stranger == "Only the person who asked can answer this."
    assert owner == "Allow once" and answers == ["once"]
    assert again == "This question is no longer open." and not still_open


def test_a_typed_choice_answers_and_stop_says_no():
    typed: list[str | None] = []
    stopped: list[str | None] = []

    async def scenario() -> tuple[bool, bool]:
        questions, adapter = ChatQuestions(), RecordingAdapter()
        task = await asked(questions, adapter, approval(typed))
        elsewhere = questions.typed(ChatRef("telegram", "6", "private"), "42", "deny")
        here = questions.typed(CHAT, "42", "Deny")
        await asyncio.wait_for(task, 5)
        second = await asked(questions, RecordingAdapter(), approval(stopped))
        questions.cancel(CHAT)
        await asyncio.wait_for(second, 5)
        return elsewhere, here

    elsewhere, here = asyncio.run(scenario())
    assert not elsewhere and here and typed == ["deny"]
    assert stopped == [None]  # declined: the command does not run


def test_no_answer_in_time_is_a_no_and_the_chat_is_told():
    answers: list[str | None] = []

    async def scenario() -> RecordingAdapter:
        questions, adapter = ChatQuestions(), RecordingAdapter()
        task = await asked(questions, adapter, approval(answers, timeout_s=0.2))
        await asyncio.wait_for(task, 5)
        return adapter

    adapter = asyncio.run(scenario())
    assert answers == [None]
    assert adapter.said == ["No answer within 0 s: taken as no."]  # 0.2 s, rounded


def test_a_chats_user_cannot_save_a_rule_to_the_owners_config():
    """ "Always" (and "exactly this command, always") write approvals.allow in the owner's
    config.yaml: a chat's user is offered neither, and pressing or typing one is refused."""
    answers: list[str | None] = []
    every = (
        QuestionChoice(value="once", label="Allow this command once"),
        QuestionChoice(value="session", label="Allow every command that ..., for this session"),
        QuestionChoice(value="command", label="Always allow exactly this command"),
        QuestionChoice(value="always", label="Always allow every command that ..."),
        QuestionChoice(value="deny", label="Deny"),
    )
    question = dataclasses.replace(approval(answers), choices=every)

    async def scenario() -> tuple[list[str], str, bool, str]:
        questions, adapter = ChatQuestions(), RecordingAdapter()
        task = await asked(questions, adapter, question)
        pressed = questions.pressed(
            ButtonPress(chat=CHAT, request_id="q1", user_id="42", choice="always")
        )
        typed = questions.typed(CHAT, "42", "command")
        session = questions.pressed(
            ButtonPress(chat=CHAT, request_id="q1", user_id="42", choice="session")
        )
        await asyncio.wait_for(task, 5)
        return adapter.asked[0][1], pressed, typed, session

    shown, pressed, typed, session = asyncio.run(scenario())
    assert shown == ["once", "session", "deny"]
    assert pressed == "That is not one of the choices." and not typed
    assert session.startswith("Allow every command") and answers == ["session"]
