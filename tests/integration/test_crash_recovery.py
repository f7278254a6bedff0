"""Crash tests: a child process running a turn is killed with SIGKILL at each persistence
boundary of a tool round; after a restart the transcript is valid (every call has exactly
one result) and a side-effecting call that may have run is reported UNKNOWN, never run twice.

The kill points are reached through real extension points (observer hooks and the tool
itself), not through test hooks in the engine.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import hermes_plugin_provider_openai
import pytest
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.engine.models import ModelRoute, RetryPolicy
from hermes_kernel.engine.turn import EngineSettings, TurnEngine
from hermes_kernel.store.state import StateStore
from hermes_sdk import Kind, ToolSpec
from hermes_sdk.models import ProviderSettings
from hermes_testkit import Reply

CHILD = """
import asyncio, os, signal, sys
from pathlib import Path

import hermes_plugin_provider_openai
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.engine.turn import NoObserver, TurnEngine
from hermes_kernel.store.state import StateStore
from hermes_plugin_store_sqlite.database import Database
from hermes_sdk import ToolSpec
from hermes_sdk.models import ProviderSettings

db, home, base_url, session_id, boundary, effects = sys.argv[1:7]


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def act(note=""):
    if boundary == "mid_tool" or (boundary == "second_round" and note == "second"):
        die()  # killed while the tool is running, before its effect
    with open(effects, "a") as handle:
        handle.write(note + "\\n")  # the side effect
    if boundary == "before_result":
        die()  # the effect happened; its result was never saved
    return "acted"


class KillAt(NoObserver):
    def post_llm_call(self, call, result):
        if boundary == "before_assistant" and result.ok:
            die()  # the model answered; nothing of its answer is saved yet

    def pre_tool_call(self, call):
        if boundary == "after_assistant":
            die()  # the assistant message is saved; the tool has not started

    def post_tool_call(self, call, result):
        if boundary == "after_result":
            die()  # the result is saved


factory = next(iter(hermes_plugin_provider_openai.hermes_providers())).factory
route = ModelRoute("scripted", factory(ProviderSettings(base_url=base_url, timeout_seconds=5)), "test-model")
tools = {
    "act": ToolSpec(name="act", handler=act, description="changes the world"),
    "look": ToolSpec(name="look", handler=lambda note="": "seen", description="reads", parallel_safe=True),
}
engine = TurnEngine(StateStore(Database(Path(db))), [route], tools, Path(home), observer=KillAt())
asyncio.run(engine.run_turn(session_id, "do the thing"))
print("the turn finished without being killed", flush=True)
"""

BOUNDARIES = ["before_assistant", "after_assistant", "mid_tool", "before_result", "after_result"]


@pytest.fixture
def provider_factory(register_plugin):
    return register_plugin(hermes_plugin_provider_openai).provided(Kind.PROVIDER)["openai"].factory


def restart_engine(tmp_path: Path, base_url: str, factory, effects: Path) -> TurnEngine:
    def act(note: str = "") -> str:
        with effects.open("a") as handle:
            handle.write(f"RE-RUN {note}\n")
        return "acted"

    route = ModelRoute(
        "scripted", factory(ProviderSettings(base_url=base_url, timeout_seconds=5)), "test-model"
    )
    tools = {
        "act": ToolSpec(name="act", handler=act, description="changes the world"),
        "look": ToolSpec(
            name="look", handler=lambda note="": "seen", description="reads", parallel_safe=True
        ),
    }
    return TurnEngine(
        StateStore(Database(tmp_path / "state.db")),
        [route],
        tools,
        tmp_path / "home",
        settings=EngineSettings(retry=RetryPolicy(attempts=1)),
    )


def crash(tmp_path: Path, base_url: str, session_id: str, boundary: str, effects: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            str(tmp_path / "state.db"),
            str(tmp_path / "home"),
            base_url,
            session_id,
            boundary,
            str(effects),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)


def assert_valid(engine: TurnEngine, session_id: str) -> dict[str, list[str]]:
    """Every tool call has exactly one result, among the tool messages right after its
    assistant message (servers reuse ids across rounds). Returns call id -> dispositions,
    in round order."""
    messages = engine.store.messages.of_session(session_id)
    results: dict[str, list[str]] = {}
    for position, message in enumerate(messages):
        if not message.tool_calls:
            continue
        answers = []
        for later in messages[position + 1 :]:
            if later.role != "tool":
                break
            answers.append(later)
        calls = [c["id"] for c in message.tool_calls]
        assert sorted(a.tool_call_id for a in answers) == sorted(calls), "one result per call"
        for answer in answers:
            results.setdefault(answer.tool_call_id, []).append(answer.disposition)
    assert all(
        m.role != "tool"
        or any(m.tool_call_id in (c["id"] for c in (p.tool_calls or [])) for p in messages)
        for m in messages
    )
    return results


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_a_killed_turn_resumes_with_a_valid_transcript(
    tmp_path, openai_server, provider_factory, boundary
):
    effects = tmp_path / "effects.txt"
    effects.touch()
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    session = engine.start_session("cli")
    openai_server.queue(Reply.tool_call("act", {"note": "first"}))
    crash(tmp_path, openai_server.base_url, session.id, boundary, effects)

    openai_server.queue(Reply.say("recovered"))
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    engine.resume_session(session.id)
    result = asyncio.run(engine.run_turn(session.id, "what happened?"))
    assert (result.status, result.text) == ("done", "recovered")

    results = assert_valid(engine, session.id)
    ran = effects.read_text().splitlines()
    assert not any(line.startswith("RE-RUN") for line in ran), "nothing ran twice"
    expected = {
        "before_assistant": {},  # nothing was saved: nothing to repair
        "after_assistant": {"call_0": ["unknown"]},  # it cannot know the tool did not start
        "mid_tool": {"call_0": ["unknown"]},
        "before_result": {"call_0": ["unknown"]},
        "after_result": {"call_0": ["ok"]},
    }[boundary]
    assert results == expected
    assert ran == (
        [] if boundary in {"before_assistant", "after_assistant", "mid_tool"} else ["first"]
    )
    last_request = openai_server.requests[-1].json["messages"]
    if expected.get("call_0") == ["unknown"]:
        tool_message = next(m for m in last_request if m["role"] == "tool")
        assert "effect UNKNOWN" in tool_message["content"], "the model is told"


def test_a_read_only_call_cut_off_is_skipped_not_unknown(tmp_path, openai_server, provider_factory):
    effects = tmp_path / "effects.txt"
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    session = engine.start_session("cli")
    openai_server.queue(Reply.tool_call("look", {"note": "x"}))
    crash(tmp_path, openai_server.base_url, session.id, "after_assistant", effects)
    openai_server.queue(Reply.say("ok"))
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    asyncio.run(engine.run_turn(session.id, "again"))
    assert assert_valid(engine, session.id) == {"call_0": ["skipped"]}


def test_the_killed_process_lease_does_not_block_the_restart(
    tmp_path, openai_server, provider_factory
):
    effects = tmp_path / "effects.txt"
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    session = engine.start_session("cli")
    openai_server.queue(Reply.tool_call("act", {"note": "x"}))
    crash(tmp_path, openai_server.base_url, session.id, "mid_tool", effects)
    holder = engine.store.leases.holder(session.id)
    assert holder is not None and holder.split(":")[1] != str(os.getpid()), (
        "the dead child still holds it"
    )
    openai_server.queue(Reply.say("ok"))
    assert asyncio.run(engine.run_turn(session.id, "go")).status == "done"


def test_a_crash_in_a_later_round_is_repaired_although_ids_repeat(
    tmp_path, openai_server, provider_factory
):
    """Both rounds' calls are called call_0: the repair matches results round by round."""
    effects = tmp_path / "effects.txt"
    effects.touch()
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    session = engine.start_session("cli")
    openai_server.queue(
        Reply.tool_call("act", {"note": "first"}), Reply.tool_call("act", {"note": "second"})
    )
    crash(tmp_path, openai_server.base_url, session.id, "second_round", effects)
    openai_server.queue(Reply.say("recovered"))
    engine = restart_engine(tmp_path, openai_server.base_url, provider_factory, effects)
    assert asyncio.run(engine.run_turn(session.id, "again")).status == "done"
    assert assert_valid(engine, session.id) == {"call_0": ["ok", "unknown"]}
    assert effects.read_text().splitlines() == ["first"]
