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
        assert server.requests[0].json["max_output_tokens"] == 16  # the API's least
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


def test_reasoning_summaries_an_organisation_may_not_have_are_left_out() -> None:
    refusal = (
        '{"error": {"message": "Your organization must be verified to generate reasoning '
        'summaries.", "type": "invalid_request_error", "param": "reasoning.summary", '
        '"code": "unsupported_value"}}'
    )
    with ScriptedResponsesServer() as server:
        server.queue(Reply.error(400, refusal), Reply.say("Fine without."), Reply.say("Again."))
        settings = ProviderSettings(base_url=server.base_url, api_key="sk-test")

        async def run() -> list[ModelResponse]:
            provider = ResponsesProvider(settings)
            try:
                request = ModelRequest("gpt-5", [ChatMessage("user", "go")])
                return [await provider.complete(request), await provider.complete(request)]
            finally:
                await provider.aclose()

        first, second = asyncio.run(run())
        sent = [request.json.get("reasoning") for request in server.requests]
    assert (first.content, second.content) == ("Fine without.", "Again.")
    assert sent == [{"summary": "auto"}, None, None]  # asked once, then never again


def test_cached_input_is_reported_apart_and_a_reasoning_model_gets_no_temperature() -> None:
    with ScriptedResponsesServer() as server:
        server.queue(Reply.say("ok", usage={"input_tokens": 1000, "cached_tokens": 800}))
        response = ask(server, ChatMessage("user", "go"), temperature=0.0, max_tokens=8)
        sent = server.requests[0].json
    assert (response.usage.input_tokens, response.usage.cache_read_tokens) == (200, 800)
    assert "temperature" not in sent and sent["max_output_tokens"] == 16


def test_another_providers_reasoning_is_not_sent_here() -> None:
    with ScriptedResponsesServer() as server:
        server.queue(Reply.say("ok"))
        claude_thinking = {"type": "thinking", "thinking": "hm", "signature": "sig"}
        lost = {"type": "reasoning", "id": "rs_9", "summary": []}  # no encrypted content
        answer = ChatMessage("assistant", "before", reasoning_details=(claude_thinking, lost))
        ask(server, ChatMessage("user", "a"), answer, ChatMessage("user", "b"))
        sent = server.requests[0].json["input"]
    assert [item.get("type", item.get("role")) for item in sent] == ["user", "assistant", "user"]
