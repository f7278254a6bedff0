"""What the Responses API needs beyond the conformance suite: reasoning items sent back with
their encrypted content before the calls they led to, a cut-short reply read as ``length``,
errors inside a stream classified as their HTTP twins, tool choice in the API's own form."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hermes_plugin_provider_responses.client import ResponsesProvider

from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    ToolSchema,
)
from hermes_testkit import Reply, ScriptedResponsesServer

TOOL = ToolSchema("lookup", "Look something up.", {"type": "object", "properties": {}})


def ask(
    server: ScriptedResponsesServer,
    *messages: ChatMessage,
    stream: bool = True,
    options: dict[str, Any] | None = None,
    **request: Any,
) -> ModelResponse:
    settings = ProviderSettings(
        base_url=server.base_url, api_key="sk-test", stream=stream, options=options or {}
    )

    async def run() -> ModelResponse:
        provider = ResponsesProvider(settings)
        try:
            return await provider.complete(ModelRequest("gpt-5", messages, **request))
        finally:
            await provider.aclose()

    return asyncio.run(run())


@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_goes_back_with_the_calls_it_led_to(stream: bool) -> None:
    with ScriptedResponsesServer() as server:
        server.queue(Reply.tool_call("lookup", {}, thinking="Need to look."), Reply.say("Done."))
        question = ChatMessage("user", "look it up")
        first = ask(server, question, stream=stream, tools=[TOOL], tool_choice="lookup")
        assert first.reasoning == "Need to look." and first.finish_reason == "tool_calls"
        (call,) = first.tool_calls
        answer = ChatMessage(
            "assistant", "", tool_calls=first.tool_calls, reasoning_details=first.reasoning_details
        )
        result = ChatMessage("tool", "found", tool_call_id=call.id)
        second = ask(server, question, answer, result, stream=stream, tools=[TOOL])
        assert second.content == "Done."
        sent = server.requests[1].json["input"]
    assert server.requests[0].json["tool_choice"] == {"type": "function", "name": "lookup"}
    assert [item.get("type", "message") for item in sent] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert sent[1]["encrypted_content"] == "enc-13" and sent[3]["call_id"] == call.id


@pytest.mark.parametrize("stream", [True, False])
def test_a_reply_cut_by_max_output_tokens_is_length(stream: bool) -> None:
    with ScriptedResponsesServer() as server:
        server.queue(Reply("text", text="Half an ans", finish_reason="length"))
        response = ask(server, ChatMessage("user", "go"), stream=stream, max_tokens=5)
        assert server.requests[0].json["max_output_tokens"] == 5
    assert (response.content, response.finish_reason) == ("Half an ans", "length")


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        (
            {
                "type": "error",
                "code": "rate_limit_exceeded",
                "message": "Slow down.",
                "param": None,
            },
            ErrorKind.RATE_LIMIT,
        ),
        (
            {
                "type": "response.failed",
                "response": {"error": {"code": "server_error", "message": "Something broke."}},
            },
            ErrorKind.SERVER,
        ),
    ],
)
def test_an_error_inside_a_stream_is_classified(event: dict[str, Any], kind: ErrorKind) -> None:
    with ScriptedResponsesServer() as server:
        server.queue(Reply.stream_events((event["type"], event)))
        with pytest.raises(ProviderError) as raised:
            ask(server, ChatMessage("user", "go"))
    assert raised.value.kind is kind


def test_a_stream_that_ends_without_its_response_is_a_dropped_connection() -> None:
    with ScriptedResponsesServer() as server:
        partial = {"type": "response.output_text.delta", "delta": "Hel", "output_index": 0}
        server.queue(Reply.stream_events(("response.output_text.delta", partial)))
        with pytest.raises(ProviderError) as raised:
            ask(server, ChatMessage("user", "go"))
    assert raised.value.kind is ErrorKind.CONNECTION
