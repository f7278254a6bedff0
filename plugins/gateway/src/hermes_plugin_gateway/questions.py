"""Questions to the user in the chat: approvals of dangerous commands and tools' questions.

A turn's :class:`~hermes_sdk.runtime.Question` events are shown in the chat the turn serves,
with buttons where the platform has them; a typed reply that names a choice counts too.
Only the person whose message started the turn may answer. No answer in time means no.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field

from hermes_sdk.platform import ButtonPress, ChatRef, Choice, PlatformAdapter
from hermes_sdk.runtime import SAVING_ANSWERS, Question, QuestionChoice

__all__ = ["Asker", "ChatQuestions", "question_text", "sends_notes"]

log = logging.getLogger("hermes.gateway")


@dataclass(frozen=True)
class Asker:
    """Where to ask for one running turn, and who may answer."""

    adapter: PlatformAdapter
    chat: ChatRef
    user_id: str


@dataclass
class _Pending:
    asker: Asker
    question: Question
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    """Answered here (by a press, a typed reply, or /stop)."""

    def give(self, value: str | None) -> bool:
        given = self.question.answer(value) if value is not None else self.question.decline()
        self.closed.set()
        return given


def question_text(question: Question) -> str:
    """What the chat shows: an approval's command in a code block under its reason."""
    if question.kind == "approval" and question.command:
        reason = question.text.partition("\n\n")[0]
        # A fence longer than any run of backticks in the command: one inside it (a heredoc
        # writing Markdown) must not end the block, and what follows show as formatting.
        longest = max((len(run) for run in re.findall(r"`+", question.command)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"⚠️ {reason}\n\n{fence}\n{question.command}\n{fence}"
    return question.text


def offered(question: Question) -> tuple[QuestionChoice, ...]:
    """The answers a chat's user may give: not those that save a rule to the owner's
    config.yaml (a chat's user is not the owner; the owner changes ``approvals.allow``)."""
    if question.kind != "approval":
        return question.choices
    return tuple(c for c in question.choices if c.value not in SAVING_ANSWERS)


class ChatQuestions:
    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}
        self._asking: set[asyncio.Task[None]] = set()

    def spawn(self, asker: Asker, question: Question) -> None:
        """:meth:`ask` in a task of its own (the turn's events flow on meanwhile)."""
        task = asyncio.ensure_future(self.ask(asker, question))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def ask(self, asker: Asker, question: Question) -> None:
        """Show ``question`` in the chat and wait for its answer (from :meth:`pressed` or
        :meth:`typed`) until its timeout: then it is declined, and the chat told so."""
        pending = self._pending[question.question_id] = _Pending(asker, question)
        choices = [Choice(choice.value, choice.label) for choice in offered(question)]
        try:
            await asker.adapter.ask(
                asker.chat, question_text(question), choices, question.question_id
            )
            await asyncio.wait_for(pending.closed.wait(), question.timeout_s)
        except TimeoutError:
            pending.give(None)  # the turn has likely timed it out itself by now: no either way
            await _say(asker, f"No answer within {question.timeout_s:.0f} s: taken as no.")
        except Exception as exc:  # noqa: BLE001 - a question that cannot be shown is a "no"
            log.warning("could not ask in the chat: %s", exc)
            pending.give(None)
        finally:
            if self._pending.get(question.question_id) is pending:  # not a later ask's
                del self._pending[question.question_id]

    def pressed(self, press: ButtonPress) -> str:
        pending = self._pending.get(press.request_id)
        if pending is None or pending.closed.is_set():
            return "This question is no longer open."
        if press.user_id != pending.asker.user_id:
            return "Only the person who asked can answer this."
        choice = next((c for c in offered(pending.question) if c.value == press.choice), None)
        if choice is None:
            return "That is not one of the choices."
        if not pending.give(choice.value):
            return "This question is no longer open."
        return choice.label

    def is_open(self, request_id: str) -> bool:
        pending = self._pending.get(request_id)
        return pending is not None and not pending.closed.is_set()

    def typed(self, chat: ChatRef, user_id: str, text: str) -> bool:
        """A typed reply that answers an open question in this chat; True if it did."""
        wanted = text.strip().lower().lstrip("/")
        for pending in list(self._pending.values()):
            asker = pending.asker
            if asker.chat != chat or asker.user_id != user_id or pending.closed.is_set():
                continue
            for choice in offered(pending.question):
                if wanted in {choice.value.lower(), choice.label.lower()}:
                    pending.give(choice.value)
                    return True
        return False

    def withdraw(self, question_id: str) -> None:
        """The turn no longer waits for this answer (it ended, on another worker): closed
        here, with nothing given."""
        pending = self._pending.get(question_id)
        if pending is not None:
            pending.closed.set()

    def cancel(self, chat: ChatRef) -> None:
        """``/stop``: open questions in this chat are answered no."""
        for pending in list(self._pending.values()):
            if pending.asker.chat == chat and not pending.closed.is_set():
                pending.give(None)


def sends_notes(adapter: PlatformAdapter) -> bool:
    """Whether the platform takes notes beside the reply (email: one mail per turn)."""
    return getattr(adapter, "sends_notes", True) is not False


async def _say(asker: Asker, text: str) -> None:
    if not sends_notes(asker.adapter):
        return  # the reply says how the turn ended; a note would be one more mail
    try:
        await asker.adapter.send(asker.chat, text)
    except Exception as exc:  # noqa: BLE001 - a note the user may miss; nothing depends on it
        log.info("could not send a note: %s", exc)
