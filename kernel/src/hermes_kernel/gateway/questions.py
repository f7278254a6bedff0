"""Questions to the user in the chat: approvals of dangerous commands and tools' questions.

Tools run in worker threads and wait (blocking) for the answer; the question is shown on
the gateway's event loop, with buttons where the platform has them, and a typed reply that
names a choice counts too. Only the person whose message started the turn may answer. No
answer in time means no (deny).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_kernel.safety.approval import Answer, ApprovalRequest
from hermes_kernel.tooling.environment import Ask
from hermes_sdk.platform import ButtonPress, ChatRef, Choice, PlatformAdapter

__all__ = ["Asker", "ChatQuestions"]

log = logging.getLogger("hermes.gateway")

APPROVAL_CHOICES = (
    Choice(Answer.ONCE.value, "Allow once"),
    Choice(Answer.SESSION.value, "Allow for this session"),
    Choice(Answer.DENY.value, "Deny"),
)


@dataclass(frozen=True)
class Asker:
    """Where to ask for one running turn, and who may answer."""

    adapter: PlatformAdapter
    chat: ChatRef
    user_id: str


@dataclass
class _Pending:
    chat: ChatRef
    user_id: str
    choices: Sequence[Choice]
    answer: asyncio.Future[str]


class ChatQuestions:
    def __init__(self, timeout_seconds: float) -> None:
        self.timeout = timeout_seconds
        self.loop: asyncio.AbstractEventLoop | None = None
        self.askers: dict[str, Asker] = {}
        """Session id -> where its running turn can ask."""
        self._pending: dict[str, _Pending] = {}

    # --- from tools (worker threads) -------------------------------------------------------

    def approver(self, request: ApprovalRequest) -> Answer | None:
        question = (
            f"⚠️ **Approve this command?** It {request.reason}.\n\n```\n{request.command}\n```"
        )
        answer = self._ask_blocking(request.session_id, question, APPROVAL_CHOICES)
        return Answer(answer) if answer else None

    def ask_for(self, session_id: str) -> Ask:
        def ask(question: str, choices: Sequence[str]) -> str | None:
            options = [Choice(str(i), choice) for i, choice in enumerate(choices)]
            answer = self._ask_blocking(session_id, question, options)
            return list(choices)[int(answer)] if answer else None

        return ask

    def _ask_blocking(
        self, session_id: str, question: str, choices: Sequence[Choice]
    ) -> str | None:
        asker, loop = self.askers.get(session_id), self.loop
        if asker is None or loop is None:
            return None  # nobody to ask (a background review, a resumed turn): no
        future = asyncio.run_coroutine_threadsafe(self.ask(asker, question, choices), loop)
        try:
            return future.result(self.timeout + 10)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            return None
        except Exception as exc:  # noqa: BLE001 - a failed question is a "no", never a crash
            log.warning("could not ask in the chat: %s", exc)
            return None

    # --- on the event loop -----------------------------------------------------------------

    async def ask(self, asker: Asker, question: str, choices: Sequence[Choice]) -> str | None:
        request_id = secrets.token_hex(6)
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(asker.chat, asker.user_id, choices, answer)
        try:
            await asker.adapter.ask(asker.chat, question, choices, request_id)
            return await asyncio.wait_for(answer, self.timeout) or None
        except TimeoutError:
            await _say(asker, f"No answer within {self.timeout:.0f} s: taken as no.")
            return None
        finally:
            self._pending.pop(request_id, None)

    def pressed(self, press: ButtonPress) -> str:
        pending = self._pending.get(press.request_id)
        if pending is None or pending.answer.done():
            return "This question is no longer open."
        if press.user_id != pending.user_id:
            return "Only the person who asked can answer this."
        choice = next((c for c in pending.choices if c.value == press.choice), None)
        if choice is None:
            return "That is not one of the choices."
        pending.answer.set_result(choice.value)
        return choice.label

    def is_open(self, request_id: str) -> bool:
        pending = self._pending.get(request_id)
        return pending is not None and not pending.answer.done()

    def typed(self, chat: ChatRef, user_id: str, text: str) -> bool:
        """A typed reply that answers an open question in this chat; True if it did."""
        wanted = text.strip().lower().lstrip("/")
        for pending in self._pending.values():
            if pending.chat != chat or pending.user_id != user_id or pending.answer.done():
                continue
            for choice in pending.choices:
                if wanted in {choice.value.lower(), choice.label.lower()}:
                    pending.answer.set_result(choice.value)
                    return True
        return False

    def cancel(self, chat: ChatRef) -> None:
        """``/stop``: open questions in this chat are answered no."""
        for pending in self._pending.values():
            if pending.chat == chat and not pending.answer.done():
                pending.answer.set_result("")  # no answer: no


async def _say(asker: Asker, text: str) -> None:
    try:
        await asker.adapter.send(asker.chat, text)
    except Exception as exc:  # noqa: BLE001 - a note the user may miss; nothing depends on it
        log.info("could not send a note: %s", exc)
