"""The turn runner on the real runtime (a scripted model): a message becomes a turn whose
reply is recorded with the message done; a chat command runs without the model; a turn
interrupted twice is given up; where nobody can be asked, a dangerous command is denied."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from hermes_plugin_gateway.access import Access
from hermes_plugin_gateway.chat_commands import HELP_INTRO
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.conversation import Conversation
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.platforms import Platforms
from hermes_plugin_gateway.questions import ChatQuestions
from hermes_plugin_gateway.relay import QuestionRelay
from hermes_plugin_gateway.replies import Replies
from hermes_plugin_gateway.schema import SCHEMA
from hermes_plugin_gateway.settings import GatewayConfig
from hermes_plugin_gateway.turns import GIVEN_UP, TurnRunner

from hermes_commons.sending import Deliveries
from hermes_sdk.platform import Inbound
from hermes_sdk.runtime import Runtime, open_runtime
from hermes_testkit import Reply, ScriptedOpenAIServer
from hermes_testkit.frontend_tests import scripted_home

from .conftest import inbound

WORKER = "elsewhere:1:me"


def _runner(runtime: Runtime, cwd: Path) -> tuple[TurnRunner, Ledger]:
    store = runtime.plugin_store(SCHEMA)
    ledger = Ledger(store)
    platforms = Platforms([], lambda name: None, lambda name: None)  # type: ignore[arg-type, return-value]
    questions = ChatQuestions()
    runner = TurnRunner(
        runtime,
        ledger,
        platforms,
        Access({}, Pairings(store)),
        Replies(ledger, Deliveries(ledger.outbox, platforms.adapter), platforms),
        questions,
        QuestionRelay(store, questions, platforms, lambda: WORKER, shared=False),
        GatewayConfig(),
        cwd,
        asyncio.Event(),
    )
    return runner, ledger


def _taken(ledger: Ledger, message: Inbound, state: str | None = None) -> InboxItem:
    ledger.accept_many([(message, "telegram:5")])
    (item,) = Claims(ledger.store, WORKER).claim(None, 1)
    if state is not None:  # as a crash left it
        assert ledger.mark(item.id, state, None, WORKER)
        item = replace(item, state=state)
    return item


def _said(ledger: Ledger) -> list[str]:
    return [entry.text for entry in ledger.outbox.open()]


def _handle(home: Path, cwd: Path, message: Inbound, state: str | None = None) -> list[str]:
    async def scenario() -> list[str]:
        async with open_runtime(home, cwd=cwd) as runtime:
            runner, ledger = _runner(runtime, cwd)
            item = _taken(ledger, message, state)
            await runner.handle(Conversation("telegram:5", item.chat), item)
            assert ledger.open_inbox() == []  # done (or given up) either way
            return _said(ledger)

    return asyncio.run(scenario())


@pytest.fixture
def home(tmp_path: Path, openai_server: ScriptedOpenAIServer, monkeypatch) -> Path:
    return scripted_home(tmp_path, openai_server, monkeypatch)


def test_a_message_becomes_a_turn_and_its_reply_is_recorded(home, tmp_path, openai_server):
    openai_server.queue(Reply.say("Hello from the model."))
    said = _handle(home, tmp_path / "work", inbound())
    assert said == ["Hello from the model."]
    assert [m["content"] for m in openai_server.requests[0].json["messages"][-1:]] == ["hi"]


def test_a_chat_command_runs_without_the_model(home, tmp_path, openai_server):
    message = replace(inbound(), text="/help")
    (said,) = _handle(home, tmp_path / "work", message)
    assert said.startswith(HELP_INTRO) and "/new" in said
    assert openai_server.requests == []


def test_a_turn_interrupted_twice_is_given_up(home, tmp_path, openai_server):
    assert _handle(home, tmp_path / "work", inbound(), state="resuming") == [GIVEN_UP]
    assert openai_server.requests == []


def test_where_nobody_can_be_asked_a_dangerous_command_is_denied(home, tmp_path, openai_server):
    work = tmp_path / "work"
    target = work / "scratch"
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Done.")
    )
    assert _handle(home, work, inbound()) == ["Done."]
    assert oct(target.stat().st_mode)[-3:] != "777"
