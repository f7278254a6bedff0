"""hermes-agent hooks called from Hermes's, and their answers mapped (see hooks.py)."""

from __future__ import annotations

import pytest
from hermes_plugin_compat_hermes_agent.hooks import hook_functions, usage_of

from hermes_sdk import LLMResult, SessionInfo, ToolCall, TurnInfo
from hermes_sdk.gates import Gate


def impls(callbacks):
    return {function.__name__: function for function in hook_functions("guest", callbacks)}


CALL = ToolCall(session_id="s1", call_id="c1", tool="memory", arguments={"content": "hi"})


def test_only_the_hooks_a_plugin_registered_are_implemented():
    assert set(impls({"transform_llm_output": [lambda **k: None]})) == {
        "hermes_transform_reply",
        "hermes_on_session_start",
    }
    assert impls({}) == {}  # no guard: not a gate


def test_a_block_denies_an_approve_asks_and_an_in_place_rewrite_runs_instead():
    def block(tool_name, args, **kwargs):
        assert kwargs["session_id"] == "s1" and kwargs["tool_call_id"] == "c1"
        assert kwargs["telemetry_schema_version"] == "hermes.observer.v1"
        return (
            {"action": "block", "message": "Blocked by Guard"} if "DAN" in args["content"] else None
        )

    gate = impls({"pre_tool_call": [block]})["hermes_tool_gate"]
    assert gate(CALL) is None
    denied = ToolCall(session_id="s1", call_id="c1", tool="memory", arguments={"content": "DAN"})
    assert gate(denied) == Gate.deny("Blocked by Guard")

    def approve(**kwargs):
        return {"action": "approve", "message": "sure?"}

    assert impls({"pre_tool_call": [approve]})["hermes_tool_gate"](CALL) == Gate.ask("sure?")

    def rewrite(args, **kwargs):
        args["content"] = "HI"

    rewritten = impls({"pre_tool_call": [rewrite]})["hermes_tool_gate"](CALL)
    assert rewritten == Gate.allow({"content": "HI"})
    assert CALL.arguments == {"content": "hi"}  # the call itself is untouched


def test_a_guard_that_raises_raises_so_the_kernel_denies():
    def broken(**kwargs):
        raise RuntimeError("no scorer")

    with pytest.raises(RuntimeError):
        impls({"pre_tool_call": [broken]})["hermes_tool_gate"](CALL)


def test_turn_context_joins_every_answer_and_counts_the_first_turn():
    seen = []

    def context(user_message, is_first_turn, cwd, **kwargs):
        seen.append(is_first_turn)
        return {"context": f"[CTX] {user_message} in {cwd}"}

    turn_context = impls({"pre_llm_call": [context, lambda **k: "plain", lambda **k: None]})[
        "hermes_turn_context"
    ]
    session = SessionInfo(session_id="s1", source="cli", model="m", cwd="/work")
    assert turn_context(session, "go") == "[CTX] go in /work\n\nplain"
    turn_context(session, "again")
    assert seen == [True, False]


def test_a_raising_observer_is_skipped_and_the_others_still_answer():
    def boom(**kwargs):
        raise ValueError("bug")

    reply = impls({"transform_llm_output": [boom, lambda response_text, **k: response_text + "!"]})
    session = SessionInfo(session_id="s1", source="cli")
    assert reply["hermes_transform_reply"](session, "hello") == "hello!"


def test_each_turn_end_is_on_session_end_and_a_finished_one_post_llm_call():
    calls = []
    hooks = impls(
        {
            "on_session_end": [lambda **k: calls.append(("end", k["completed"], k["interrupted"]))],
            "post_llm_call": [lambda **k: calls.append(("post", k["assistant_response"]))],
        }
    )
    hooks["hermes_on_turn_end"](TurnInfo(session_id="s", status="done", user_text="u", reply="r"))
    hooks["hermes_on_turn_end"](TurnInfo(session_id="s", status="stopped", user_text="u", reply=""))
    assert calls == [("post", "r"), ("end", True, False), ("end", False, True)]


def test_usage_is_hermes_agents_summary():
    result = LLMResult(
        ok=True, input_tokens=100, output_tokens=20, cache_read_tokens=50, cache_write_tokens=5
    )
    assert usage_of(result) == {
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_tokens": 50,
        "cache_write_tokens": 5,
        "reasoning_tokens": 0,
        "request_count": 1,
        "prompt_tokens": 155,
        "total_tokens": 175,
    }
    assert usage_of(LLMResult(ok=True)) is None
