"""Questions across workers: a turn that runs on a worker without the chat platforms asks
its questions (an approval) through the store, and the worker with the platforms shows them
in the chat and records the answer the user gives.

The asking worker writes the question (``asked``) and reads its row until it is answered,
closed (no) or its time is up. The worker with the platforms takes each asked question of a
platform it runs (``shown``, under its name) and asks it in the chat as its own
(:class:`~.questions.ChatQuestions`: buttons, a typed answer, only the person who wrote);
the answer goes back in the row. A question shown by a worker that is gone is asked again
by the next; one whose turn ended is withdrawn from the chat. No worker answers "no" for a
user it cannot reach while another can.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from hermes_commons.leases import member_sql
from hermes_plugin_gateway.claims import WORKERS
from hermes_plugin_gateway.ledger import InboxItem
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.questions import Asker, ChatQuestions
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import Question, QuestionChoice
from hermes_sdk.storage import Store

__all__ = ["QuestionRelay"]

log = logging.getLogger("hermes.gateway")

ANSWER_POLL_SECONDS = 0.2
_MEMBERS, _GROUP = member_sql(WORKERS)
_COLUMNS = "id, platform, chat, user_id, kind, text, command, choices, timeout_s, created_at"


class QuestionRelay:
    def __init__(
        self,
        store: Store,
        questions: ChatQuestions,
        platforms: Platforms,
        worker: Callable[[], str],
        *,
        shared: bool,
    ) -> None:
        """``worker``: this worker's name now; ``shared``: other workers may serve the store
        (PostgreSQL), so a question this one cannot show may still reach its user."""
        self.store = store
        self.questions = questions
        self.platforms = platforms
        self.worker = worker
        self.shared = shared
        self._shown: set[str] = set()
        self._writes: set[asyncio.Task[Any]] = set()

    def reaches_users(self) -> bool:
        """Whether a question this worker cannot show itself can still be asked."""
        return self.shared

    # --- the asking worker ------------------------------------------------------------------

    async def ask(self, question: Question, item: InboxItem) -> None:
        """Ask ``question`` through the store for the turn of ``item`` and give it the
        answer; no answer in its time is no. Cancelled (the turn ended), it is withdrawn."""
        answered = False
        try:
            await self.store.run(self._write_asked, question, item, self.worker())
            deadline = time.monotonic() + question.timeout_s
            while time.monotonic() < deadline:
                await asyncio.sleep(ANSWER_POLL_SECONDS)
                rows = await self.store.run(
                    self.store.query,
                    "SELECT state, answer FROM gateway_questions WHERE id = ?",
                    (question.question_id,),
                )
                state, answer = rows[0] if rows else ("closed", None)
                if state in {"answered", "closed"}:
                    answered = True
                    _give(question, answer if state == "answered" else None)
                    return
            question.decline()
        except Exception as exc:  # noqa: BLE001 - the store failed: a question nobody sees is a no
            log.warning("gateway: could not ask through the store: %s", exc)
            question.decline()
        finally:
            if not answered:  # timed out, or withdrawn: the chat's question closes too
                with contextlib.suppress(Exception):
                    await self.store.run(self._close, question.question_id)

    def _write_asked(self, question: Question, item: InboxItem, worker: str) -> None:
        choices = [[choice.value, choice.label] for choice in question.choices]
        with self.store.write() as cursor:
            cursor.execute(
                "INSERT INTO gateway_questions (id, inbox_id, platform, chat, user_id, kind, "
                "text, command, choices, timeout_s, asked_by, state, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'asked', ?)",
                (
                    question.question_id,
                    item.id,
                    item.chat.platform,
                    json.dumps(item.chat.as_dict()),
                    item.user_id,
                    question.kind,
                    question.text,
                    question.command,
                    json.dumps(choices),
                    question.timeout_s,
                    worker,
                    time.time(),
                ),
            )

    def _close(self, question_id: str) -> None:
        with self.store.write() as cursor:
            cursor.execute(
                "UPDATE gateway_questions SET state = 'closed' "
                "WHERE id = ? AND state IN ('asked', 'shown')",
                (question_id,),
            )

    # --- the worker with the platforms ------------------------------------------------------

    async def show_asked(self) -> None:
        """Show in the chats the questions other workers asked for the platforms this one
        runs; withdraw those whose turn no longer waits."""
        running = [name for name in self.platforms.states if self.platforms.adapter(name)]
        if not running and not self._shown:
            return
        taken, closed = await self.store.run(self._take, running, sorted(self._shown))
        for question_id in closed:
            self._shown.discard(question_id)
            self.questions.withdraw(question_id)
        for row in taken:
            self._show(row)

    def _take(
        self, platforms: Sequence[str], shown: Sequence[str]
    ) -> tuple[list[tuple[Any, ...]], list[str]]:
        closed: list[str] = []
        if shown:
            marks = ", ".join("?" for _ in shown)
            closed = [
                str(row[0])
                for row in self.store.query(
                    f"SELECT id FROM gateway_questions WHERE id IN ({marks}) "
                    "AND state NOT IN ('asked', 'shown')",
                    tuple(shown),
                )
            ]
        if not platforms:
            return [], closed
        me = self.worker()
        marks = ", ".join("?" for _ in platforms)
        # Asked; or shown by another worker (only the one with the platforms shows them, so
        # that one lost them, or died), or by this one under a name of before: asked again.
        gone = (
            "state IN ('asked', 'shown') AND (created_at + timeout_s < ? "
            f"OR asked_by NOT IN ({_MEMBERS}))"
        )
        now = time.time()
        due = (
            f"SELECT 1 FROM gateway_questions WHERE (platform IN ({marks}) "
            f"AND (state = 'asked' OR (state = 'shown' AND shown_by <> ?))) OR ({gone}) LIMIT 1"
        )
        if not self.store.query(due, (*platforms, me, now, _GROUP)):
            return [], closed  # an idle poll takes no lock
        waiting = (
            f"SELECT {_COLUMNS} FROM gateway_questions WHERE state = 'asked' "
            f"AND platform IN ({marks}) ORDER BY created_at"
        )
        with self.store.write() as cursor:
            # Its time is up, or the worker whose turn asked it is gone: nobody waits for it.
            cursor.execute(
                f"UPDATE gateway_questions SET state = 'closed' WHERE {gone}", (now, _GROUP)
            )
            cursor.execute(
                "UPDATE gateway_questions SET state = 'asked', shown_by = NULL "
                "WHERE state = 'shown' AND shown_by <> ?",
                (me,),
            )
            rows = cursor.execute(waiting, tuple(platforms)).fetchall()
            cursor.executemany(
                "UPDATE gateway_questions SET state = 'shown', shown_by = ? "
                "WHERE id = ? AND state = 'asked'",
                [(me, row[0]) for row in rows],
            )
        # Shown here already (before this worker was renamed): not shown twice.
        return [row for row in rows if str(row[0]) not in self._shown], closed

    def _show(self, row: tuple[Any, ...]) -> None:
        question_id, platform, chat, user_id, kind, text, command, choices = row[:8]
        timeout_s, created_at = float(row[8]), float(row[9])
        adapter = self.platforms.adapter(str(platform))
        if adapter is None:
            return
        question_id = str(question_id)

        def answered(value: str | None) -> bool:
            self._shown.discard(question_id)
            write = asyncio.ensure_future(self.store.run(self._answer, question_id, value))
            self._writes.add(write)
            write.add_done_callback(self._writes.discard)
            return True

        question = Question(
            question_id=question_id,
            kind=kind,
            text=str(text),
            choices=tuple(
                QuestionChoice(value=str(v), label=str(label)) for v, label in json.loads(choices)
            ),
            command=command,
            timeout_s=max(1.0, timeout_s - (time.time() - created_at)),
            _reply=answered,
        )
        self._shown.add(question_id)
        chat_ref = ChatRef.from_dict(json.loads(chat))
        self.questions.spawn(Asker(adapter, chat_ref, str(user_id)), question)

    async def show_typing(self, after_seconds: float) -> None:
        """Show typing in the chats whose turns have run on other workers for over
        ``after_seconds`` (a hint, as their own turns show it here; a quick reply needs
        none, and skipping it saves the platform's API a call)."""
        running = [name for name in self.platforms.states if self.platforms.adapter(name)]
        if not running:
            return
        marks = ", ".join("?" for _ in running)
        rows = await self.store.run(
            self.store.query,
            "SELECT DISTINCT chat FROM gateway_inbox WHERE state IN ('running', 'resuming') "
            f"AND worker IS NOT NULL AND worker <> ? AND platform IN ({marks}) "
            "AND updated_at < ?",
            (self.worker(), *running, time.time() - after_seconds),
        )
        for (chat,) in rows:
            chat_ref = ChatRef.from_dict(json.loads(chat))
            adapter = self.platforms.adapter(chat_ref.platform)
            if adapter is not None:
                with contextlib.suppress(Exception):  # only a hint to the user
                    await adapter.typing(chat_ref)

    def _answer(self, question_id: str, value: str | None) -> None:
        # Only while this worker shows it: one that lost the platforms, whose chat question
        # timed out unseen, must not close it where the next worker shows it again.
        with self.store.write() as cursor:
            cursor.execute(
                "UPDATE gateway_questions SET state = ?, answer = ? "
                "WHERE id = ? AND state = 'shown' AND shown_by = ?",
                ("answered" if value is not None else "closed", value, question_id, self.worker()),
            )


def _give(question: Question, answer: str | None) -> None:
    if answer is None:
        question.decline()
    elif not question.answer(answer):
        question.answer_text(answer)
