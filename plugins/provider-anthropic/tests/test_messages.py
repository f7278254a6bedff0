"""What the Messages API needs beyond the conformance suite: cache breakpoints, thinking
blocks sent back with their signatures, tool results merged into user turns, cache usage."""

from __future__ import annotations

import asyncio

import pytest
from hermes_plugin_provider_anthropic.client import MessagesProvider, window_in_error

from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    ToolCallRequest,
    ToolSchema,
)
from hermes_testkit import Reply, ScriptedAnthropicServer

TOOL = ToolSchema("lookup", "Look something up.", {"type": "object", "properties": {}})


def ask(
    server: ScriptedAnthropicServer, *messages: ChatMessage, **options: object
) -> ModelResponse:
    settings = ProviderSettings(base_url=server.base_url, api_key="sk-ant-test")
    model = str(options.pop("model", "claude-test"))

    async def run() -> ModelResponse:
        provider = MessagesProvider(settings)
        try:
            return await provider.complete(ModelRequest(model, messages, **options))  # type: ignore[arg-type]
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_headers_and_cache_breakpoints(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.queue(Reply.say("ok"))
    ask(
        anthropic_server,
        ChatMessage("system", "You are Hermes."),
        ChatMessage("user", "first"),
        ChatMessage("assistant", "answer"),
        ChatMessage("user", "second"),
    )
    sent = anthropic_server.requests[0]
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    body = sent.json
    assert body["system"] == [
        {"type": "text", "text": "You are Hermes.", "cache_control": {"type": "ephemeral"}}
    ]
    marked = [turn["role"] for turn in body["messages"] if "cache_control" in turn["content"][-1]]
    assert marked == ["assistant", "user"], "the last two messages carry the breakpoints"
    assert body["max_tokens"] > 0


def test_thinking_blocks_go_back_with_their_signature(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    anthropic_server.queue(
        Reply.tool_call("lookup", {}, thinking="I should look this up."), Reply.say("Found.")
    )
    first = ask(anthropic_server, ChatMessage("user", "go"), tools=(TOOL,))
    assert first.reasoning == "I should look this up."
    assert first.reasoning_details[0]["signature"] == "sig-22"
    call = first.tool_calls[0]
    ask(
        anthropic_server,
        ChatMessage("user", "go"),
        ChatMessage("assistant", "", tool_calls=(call,), reasoning_details=first.reasoning_details),
        ChatMessage("tool", "result text", tool_call_id=call.id, name="lookup"),
        tools=(TOOL,),
    )
    assistant = anthropic_server.requests[1].json["messages"][1]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should look this up.",
        "signature": "sig-22",
    }
    assert assistant["content"][1]["type"] == "tool_use"


def test_parallel_tool_results_share_one_user_turn(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    anthropic_server.queue(Reply.say("done"))
    calls = (ToolCallRequest("t1", "lookup", "{}"), ToolCallRequest("t2", "lookup", "not json"))
    ask(
        anthropic_server,
        ChatMessage("user", "go"),
        ChatMessage("assistant", "", tool_calls=calls),
        ChatMessage("tool", "one", tool_call_id="t1", name="lookup"),
        ChatMessage("tool", "two", tool_call_id="t2", name="lookup"),
        tools=(TOOL,),
    )
    messages = anthropic_server.requests[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["t1", "t2"]
    assert messages[1]["content"][1]["input"] == {}, "unparseable arguments become {}"


def test_cache_usage_is_read_from_the_response(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.queue(
        Reply.say(
            "ok",
            usage={
                "input_tokens": 12,
                "output_tokens": 3,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 40,
            },
        )
    )
    usage = ask(anthropic_server, ChatMessage("user", "hi")).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (12, 900, 40)
    assert usage.output_tokens == 3


def test_forced_tool_choice_is_sent(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.queue(Reply.tool_call("lookup", {}))
    ask(anthropic_server, ChatMessage("user", "go"), tools=(TOOL,), tool_choice="lookup")
    assert anthropic_server.requests[0].json["tool_choice"] == {"type": "tool", "name": "lookup"}


def test_an_error_event_mid_stream_is_classified(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.queue(
        Reply.stream_events(
            ("message_start", {"type": "message_start", "message": {"usage": {}}}),
            (
                "error",
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ),
        )
    )
    with pytest.raises(ProviderError) as caught:
        ask(anthropic_server, ChatMessage("user", "hi"))
    assert caught.value.kind is ErrorKind.OVERLOADED
    assert "Overloaded" in str(caught.value)


def test_a_stream_without_message_stop_is_incomplete(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 1}}}
    anthropic_server.queue(Reply.stream_events(("message_start", start)))
    with pytest.raises(ProviderError) as caught:
        ask(anthropic_server, ChatMessage("user", "hi"))
    assert caught.value.kind is ErrorKind.CONNECTION


def test_whitespace_only_text_is_never_sent_as_a_block(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    anthropic_server.queue(Reply.say("ok"))
    call = ToolCallRequest("t1", "lookup", "{}")
    ask(
        anthropic_server,
        ChatMessage("user", "  "),
        ChatMessage("assistant", "\n\n", tool_calls=(call,)),
        ChatMessage("tool", "found", tool_call_id="t1", name="lookup"),
        tools=(TOOL,),
    )
    messages = anthropic_server.requests[0].json["messages"]
    assert messages[0]["content"][0]["text"] == "(empty)"
    assert [block["type"] for block in messages[1]["content"]] == ["tool_use"]


def test_the_window_a_messages_api_overflow_states_is_read() -> None:
    assert window_in_error("prompt is too long: 210000 tokens > 200000 maximum") == 200_000
    assert window_in_error("prompt is too long") is None


def test_claude_models_report_their_window() -> None:
    provider = MessagesProvider(ProviderSettings(base_url="http://127.0.0.1:9"))
    assert asyncio.run(provider.context_window("claude-haiku-4-5")) == 200_000
    assert asyncio.run(provider.context_window("some-other-model")) is None


def test_another_providers_reasoning_is_not_sent_to_claude(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    anthropic_server.queue(Reply.say("ok"))
    responses_item = {"type": "reasoning", "summary": [], "encrypted_content": "enc-1"}
    answer = ChatMessage("assistant", "before", reasoning_details=(responses_item,))
    ask(anthropic_server, ChatMessage("user", "a"), answer, ChatMessage("user", "b"))
    sent = anthropic_server.requests[0].json["messages"][1]["content"]
    assert [block["type"] for block in sent] == ["text"]


def test_thinking_is_left_out_after_calls_made_without_it(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    anthropic_server.queue(Reply.say("ok"), Reply.say("ok"))
    call = ToolCallRequest("toolu_1", "lookup", "{}")
    unthought = ChatMessage("assistant", "", tool_calls=(call,))
    thought = ChatMessage(
        "assistant",
        "",
        tool_calls=(call,),
        reasoning_details=({"type": "thinking", "thinking": "hm", "signature": "sig-2"},),
    )
    result = ChatMessage("tool", "found", tool_call_id="toolu_1")
    for answer in (unthought, thought):
        ask(
            anthropic_server,
            ChatMessage("user", "look"),
            answer,
            result,
            model="claude-sonnet-4-5",
            tools=[TOOL],
            reasoning_effort="low",
        )
    first, second = (request.json for request in anthropic_server.requests)
    assert "thinking" not in first
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 2048}
