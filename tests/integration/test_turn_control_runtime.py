"""Turn control on the runtime contract itself (what every front-end gets), in process:
a branch and a background task never get more tools than their original, a goal set
while a turn runs is not judged against that turn, its judge is paid for, /undo takes a
steered exchange back whole, and a person on a platform cannot start a task with every
tool."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from hermes_sdk.runtime import Runtime, SessionOptions, open_runtime
from hermes_testkit import Reply, ScriptedOpenAIServer


@pytest.fixture
def home(tmp_path: Path, openai_server: ScriptedOpenAIServer, monkeypatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n  nudge_every_turns: 0\n"
    )
    monkeypatch.chdir(tmp_path)
    return path


def run(home: Path, scene: Callable[[Runtime], Awaitable[None]]) -> None:
    async def main() -> None:
        async with open_runtime(home) as runtime:
            await scene(runtime)

    asyncio.run(main())


def tool_names(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.json.get("tools", [])}


def test_a_branch_and_a_background_task_keep_the_originals_narrowed_tools(home, openai_server):
    openai_server.queue(Reply.say("one"), Reply.say("branched"), Reply.say("from the background"))

    async def scene(runtime: Runtime) -> None:
        narrow = SessionOptions(source="telegram", toolsets=("todo",))
        session = await runtime.open_session(narrow)
        await runtime.start_turn(session.session_id, "hi").result()
        allowed = tool_names(openai_server.requests[0])
        assert allowed and "terminal" not in allowed
        branch = await runtime.branch_session(session.session_id)
        assert branch.parent_session_id == session.session_id
        await runtime.start_turn(branch.session_id, "go on").result()
        assert tool_names(openai_server.requests[1]) == allowed
        told: list[str] = []
        reply = await runtime.run_slash(
            "bg", "do it later", session.session_id, user_scope="telegram:7", notify=told.append
        )
        assert "started in the background" in reply.text
        for _ in range(200):
            if told:
                break
            await asyncio.sleep(0.05)
        assert told and "from the background" in told[0]
        assert tool_names(openai_server.requests[2]) == allowed

    run(home, scene)


def test_a_person_without_a_conversation_cannot_start_a_task(home, openai_server):
    async def scene(runtime: Runtime) -> None:
        reply = await runtime.run_slash("bg", "rm -rf everything", None, user_scope="telegram:7")
        assert reply.text.startswith("say something first")
        assert not openai_server.requests

    run(home, scene)


def test_a_goal_set_during_a_turn_waits_for_the_next_and_its_judge_is_paid_for(home, openai_server):
    openai_server.queue(
        Reply.say("word " * 40, chunk_delay_seconds=0.02),
        Reply.say("Tidied."),
        Reply.say("DONE: tidy"),
    )

    async def scene(runtime: Runtime) -> None:
        session = await runtime.open_session(SessionOptions(source="cli"))
        sid = session.session_id
        running = runtime.start_turn(sid, "talk for a while")
        await asyncio.sleep(0.2)
        reply = await runtime.run_slash("goal", "tidy the notes", sid)
        assert reply.send == "tidy the notes" and "once the running turn ends" in reply.text
        await running.result()
        assert len(openai_server.requests) == 1  # that turn's reply was never judged
        before = (await runtime.find_session(sid)).input_tokens
        events = [event async for event in runtime.start_turn(sid, reply.send)]
        assert "goal achieved: tidy" in [getattr(e, "text", "") for e in events]
        judged = openai_server.requests[2].json
        assert "decide whether an assistant has achieved a goal" in judged["messages"][0]["content"]
        after = await runtime.find_session(sid)
        assert after.input_tokens > before  # the judge's call counted with the turn's

    run(home, scene)


def test_undo_takes_a_steered_exchange_back_whole(home, openai_server):
    openai_server.queue(Reply.tool_call("todo", {"todos": []}), Reply.say("Done, in French."))

    async def scene(runtime: Runtime) -> None:
        session = await runtime.open_session(SessionOptions(source="cli"))
        sid = session.session_id
        turn = runtime.start_turn(sid, "plan it")
        assert turn.steer("in French")
        ended = await turn.result()
        assert ended.reply == "Done, in French."
        taken = await runtime.undo(sid)
        assert taken == "plan it"
        assert await runtime.messages(sid) == []
        assert not turn.steer("too late")  # over: the front-end sends it as a message

    run(home, scene)


def test_a_personality_is_this_turns_context_not_the_frozen_prompt(home, openai_server):
    openai_server.queue(Reply.say("Short."), Reply.say("Back to normal."))
    config = (home / "config.yaml").read_text()
    (home / "config.yaml").write_text(
        config.replace("agent:\n", "agent:\n  personalities:\n    haiku: Answer in a haiku.\n")
    )

    async def scene(runtime: Runtime) -> None:
        session = await runtime.open_session(SessionOptions(source="cli"))
        sid = session.session_id
        listing = await runtime.run_slash("personality", "", sid)
        assert "haiku: Answer in a haiku." in listing.text and "concise:" in listing.text
        wrong = await runtime.run_slash("personality", "haikou", sid)
        assert "did you mean 'haiku'?" in wrong.text
        await runtime.run_slash("personality", "haiku", sid)
        await runtime.start_turn(sid, "hello").result()
        first = openai_server.requests[0].json["messages"]
        assert "<personality>\nAnswer in a haiku.\n</personality>" in first[-1]["content"]
        assert "haiku" not in first[0]["content"]  # the system prompt stays as it was
        await runtime.run_slash("personality", "none", sid)
        await runtime.start_turn(sid, "again").result()
        assert "<personality>" not in openai_server.requests[1].json["messages"][-1]["content"]
        stored = await runtime.messages(sid)
        assert stored[0].content == "hello"  # the overlay is never stored as the user's

    run(home, scene)
