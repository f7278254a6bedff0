"""The kernel's mechanism under execute_code: a running tool calls other tools through
ToolContext.tool_caller(). Each call is recorded before it runs as a child of the running
call, passes the tools' own checks and deadlines, is redacted, cannot nest again, and goes
with its parent's message on /undo."""

from __future__ import annotations

import asyncio
import json
import time

from hermes_sdk import ToolSpec
from hermes_sdk.tooling import ToolContext, ToolFailed, Unsupported
from hermes_testkit import Reply


def spec(name, handler, *, takes_context=False, timeout=None, describe=None, **params):
    schema = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in params.items()},
        "required": list(params),
    }
    return ToolSpec(
        name=name,
        description=f"the {name} tool",
        handler=handler,
        parameters=schema,
        takes_context=takes_context,
        timeout_seconds=timeout,
        describe=describe,
    )


def run(engine, session_id, text):
    return asyncio.run(engine.run_turn(session_id, text))


def test_nested_calls_are_recorded_before_they_run_and_keep_the_tools_rules(
    make_engine, openai_server
):
    seen: dict[str, object] = {}

    def shout(text: str) -> str:
        rows = engine.store.nested.of_session(session.id)
        seen["recorded_first"] = [(r.tool_name, r.disposition) for r in rows]
        return text.upper() + " hunter2-secret"

    def slow(seconds: int) -> str:
        time.sleep(seconds)
        return "slept"

    def outer(context: ToolContext) -> str:
        caller = context.tool_caller()
        seen["offered"] = sorted(caller.tools)
        results = [
            caller.call("shout", {"text": "hi"}),
            caller.call("shout", {"text": 5}),  # not a string: the schema refuses it
            caller.call("nothing", {}),
            caller.call("slow", {"seconds": 3}),  # past its 1 s deadline
            caller.call("outer", {}),
        ]
        return json.dumps([[r.tool, r.disposition, r.content[:70]] for r in results])

    openai_server.queue(Reply.tool_call("outer", {}), Reply.say("done"))
    engine = make_engine(
        [
            spec("shout", shout, text="string"),
            spec("slow", slow, timeout=1, seconds="integer"),
            spec("outer", outer, takes_context=True),
        ]
    )
    session = engine.start_session("cli")
    result = run(engine, session.id, "go")
    assert result.status == "done"
    assert seen["offered"] == ["shout", "slow"]  # not itself
    assert seen["recorded_first"] == [("shout", None)]  # its own row, before it ran
    outcome = json.loads(engine.store.messages.of_session(session.id)[2].content)
    assert outcome[0] == ["shout", "ok", "HI <redacted>"]
    assert "hunter2-secret" not in json.dumps(outcome)
    assert outcome[1][:2] == ["shout", "error"] and "schema" in outcome[1][2]
    assert outcome[2][:2] == ["nothing", "error"] and "unknown tool" in outcome[2][2]
    assert outcome[3][:2] == ["slow", "unknown"] and "timed out after 1 s" in outcome[3][2]
    assert outcome[4] == ["outer", "error", "error: outer cannot call itself"]
    rows = engine.store.nested.of_session(session.id)
    assert [(r.position, r.tool_name, r.effect) for r in rows] == [
        (1, "shout", "ok"),
        (2, "shout", "error"),
        (3, "nothing", "error"),
        (4, "slow", "unknown"),
    ]
    assert {r.parent_call_id for r in rows} == {"call_0"}


def test_a_nested_call_cannot_nest_again(make_engine, openai_server):
    def inner(context: ToolContext) -> str:
        try:
            context.tool_caller()
        except Unsupported as exc:
            return f"refused: {exc}"
        return "nested twice"

    def outer(context: ToolContext) -> str:
        return context.tool_caller().call("inner", {}).content

    openai_server.queue(Reply.tool_call("outer", {}), Reply.say("done"))
    engine = make_engine(
        [spec("inner", inner, takes_context=True), spec("outer", outer, takes_context=True)]
    )
    session = engine.start_session("cli")
    run(engine, session.id, "go")
    tool_message = engine.store.messages.of_session(session.id)[2]
    assert tool_message.content == "refused: this run cannot call tools from inside a tool"


def test_undo_takes_the_nested_calls_with_their_parent(make_engine, openai_server):
    def echo(text: str) -> str:
        return text

    def outer(context: ToolContext) -> str:
        return context.tool_caller().call("echo", {"text": "x"}).content

    openai_server.queue(Reply.tool_call("outer", {}), Reply.say("done"))
    engine = make_engine(
        [spec("echo", echo, text="string"), spec("outer", outer, takes_context=True)]
    )
    session = engine.start_session("cli")
    run(engine, session.id, "go")
    assert len(engine.store.nested.of_session(session.id)) == 1
    engine.store.messages.delete_from(session.id, 1)
    assert engine.store.nested.of_session(session.id) == []


def test_a_tool_failed_keeps_its_lines_and_describe_sees_the_other_tools(
    make_engine, openai_server
):
    def fails() -> str:
        raise ToolFailed("first line\n  second line hunter2-secret")

    def describe(tools, config):
        return "calls: " + ", ".join(sorted(tools))

    def broken_describe(tools, config):
        raise RuntimeError("no")

    openai_server.queue(Reply.tool_call("fails", {}), Reply.say("done"))
    engine = make_engine(
        [
            spec("fails", fails, describe=describe),
            spec("plain", fails, describe=broken_describe),
        ]
    )
    session = engine.start_session("cli")
    run(engine, session.id, "go")
    content = engine.store.messages.of_session(session.id)[2].content
    assert content.startswith("error: first line\n  second line ")
    assert "hunter2-secret" not in content
    described = {
        t["function"]["name"]: t["function"]["description"]
        for t in openai_server.requests[0].json["tools"]
    }
    assert described == {"fails": "calls: plain", "plain": "the plain tool"}


def test_a_nested_call_is_gated_with_its_parent_and_observed_as_it_ran(make_engine, openai_server):
    from hermes_kernel.engine.parts import NoObserver

    gated, after = [], []

    class Gate(NoObserver):
        async def tool_gate(self, call):
            gated.append((call.tool, call.parent_call_id))
            if call.tool == "shout":
                return {**call.arguments, "text": "rewritten"}
            return call.arguments

        async def post_tool_call(self, call, result):
            after.append((call.tool, call.parent_call_id, dict(call.arguments)))

    def shout(text: str) -> str:
        return text.upper()

    def outer(context: ToolContext) -> str:
        return context.tool_caller().call("shout", {"text": "hi"}).content

    openai_server.queue(Reply.tool_call("outer", {}), Reply.say("done"))
    engine = make_engine(
        [spec("shout", shout, text="string"), spec("outer", outer, takes_context=True)],
        observer=Gate(),
    )
    session = engine.start_session("cli")
    assert run(engine, session.id, "go").status == "done"
    assert gated == [("outer", None), ("shout", "call_0")]
    assert ("shout", "call_0", {"text": "rewritten"}) in after
    assert engine.store.messages.of_session(session.id)[2].content == "REWRITTEN"
