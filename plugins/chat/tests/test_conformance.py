"""The chat's conversation layer passes the SDK's front-end suite on the real runtime: the
same session across messages, a stop that stops, approvals shown and answered."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from hermes_plugin_chat.questions import answer_from_line, question_text
from hermes_plugin_chat.session import ChatOptions, ChatSession, TurnWatcher

from hermes_sdk.runtime import Question, open_runtime
from hermes_testkit import FrontendTests


class ChatClient:
    """What a person at the chat does: types a message, answers o or d when asked."""

    def __init__(self, chat: ChatSession) -> None:
        self.chat = chat
        self.approve = True
        self.questions: list[str] = []

    def _answer(self, question: Question) -> None:
        self.questions.append(question_text(question))
        answer_from_line(question, "o" if self.approve else "d")

    async def send(self, text: str) -> str:
        ended = await self.chat.run_turn(text, TurnWatcher(on_question=self._answer), attended=True)
        return ended.reply

    async def stop(self) -> None:
        self.chat.stop()
        await asyncio.sleep(0)


class TestChatFrontend(FrontendTests):
    answers_questions = True

    @contextlib.asynccontextmanager
    async def connect(self, home: Path) -> AsyncIterator[ChatClient]:
        async with open_runtime(home) as runtime:
            chat = await ChatSession.open(runtime, ChatOptions(), os.getcwd())
            try:
                yield ChatClient(chat)
            finally:
                await chat.end("cli_exit")
