"""The openai provider against a real HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import asyncio
import json

import hermes_plugin_provider_openai
import pytest

from hermes_sdk import Kind
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ProviderError,
    ProviderSettings,
    ToolCallRequest,
    ToolSchema,
)
from hermes_testkit import Reply

ECHO = ToolSchema(
    "echo", "repeat text", {"type": "object", "properties": {"text": {"type": "string"}}}
)


@pytest.fixture
def make_provider(register_plugin, openai_server):
    spec = register_plugin(hermes_plugin_provider_openai).provided(Kind.PROVIDER)["openai"]

    def make(**settings):
        options = {
            "base_url": openai_server.base_url,
            "api_key": "sk-test-key",
            "timeout_seconds": 5,
        }
        return spec.factory(ProviderSettings(**{**options, **settings}))

    return make


def complete(provider, messages=None, tools=(), on_text=None):
    request = ModelRequest(
        model="test-model", messages=messages or [ChatMessage("user", "hi")], tools=tools
    )

    async def run():
        try:
            return await provider.complete(request, on_text)
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_streams_text_and_reports_usage(make_provider, openai_server):
    openai_server.queue(
        Reply.say(
            "Hello there, friend.",
            usage={
                "prompt_tokens": 30,
                "completion_tokens": 7,
                "cached_tokens": 20,
                "reasoning_tokens": 2,
            },
        )
    )
    pieces = []
    provider = make_provider()
    assert isinstance(provider, ModelProvider)
    response = complete(provider, on_text=pieces.append)
    assert response.content == "Hello there, friend." and len(pieces) > 1
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.cache_read_tokens) == (10, 20)
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (7, 2)
    sent = openai_server.requests[0]
    assert sent.headers["authorization"] == "Bearer sk-test-key"
    assert sent.json["stream"] is True and sent.json["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("repeat_ids", [False, True])
def test_assembles_tool_calls_streamed_in_pieces(make_provider, openai_server, repeat_ids):
    arguments = {"text": "a fairly long argument that arrives in many pieces"}
    openai_server.queue(Reply.tool_call("echo", arguments, chunk_size=3, repeat_ids=repeat_ids))
    response = complete(make_provider(), tools=[ECHO])
    [call] = response.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("call_0", "echo", arguments)
    assert response.finish_reason == "tool_calls"
    assert openai_server.requests[0].json["tools"][0]["function"]["name"] == "echo"


def test_non_streaming_mode(make_provider, openai_server):
    openai_server.queue(Reply.calls([("echo", {"text": "1"}), ("echo", {"text": "2"})]))
    response = complete(make_provider(stream=False), tools=[ECHO])
    assert [json.loads(c.arguments)["text"] for c in response.tool_calls] == ["1", "2"]
    assert openai_server.requests[0].json["stream"] is False


def test_tool_history_is_sent_with_empty_content_not_null(make_provider, openai_server):
    openai_server.queue(Reply.say("ok"))
    history = [
        ChatMessage("system", "be brief"),
        ChatMessage("user", "echo hi"),
        ChatMessage("assistant", "", tool_calls=(ToolCallRequest("c1", "echo", '{"text": "hi"}'),)),
        ChatMessage("tool", "hi", tool_call_id="c1", name="echo"),
    ]
    complete(make_provider(), messages=history)
    sent = openai_server.requests[0].json["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "echo", "arguments": '{"text": "hi"}'},
            }
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "c1", "content": "hi"}


@pytest.mark.parametrize(
    ("reply", "kind", "retryable", "retry_after"),
    [
        (Reply.error(401), ErrorKind.AUTH, False, None),
        (Reply.error(402), ErrorKind.BILLING, False, None),
        (Reply.error(413), ErrorKind.PAYLOAD_TOO_LARGE, False, None),
        (Reply.error(429, retry_after=7), ErrorKind.RATE_LIMIT, True, 7.0),
        (Reply.error(500), ErrorKind.SERVER, True, None),
        (Reply.error(503), ErrorKind.OVERLOADED, True, None),
        (Reply.error(529), ErrorKind.OVERLOADED, True, None),
        (
            Reply.error(
                400, '{"error": {"message": "This model\'s maximum context length is 8192"}}'
            ),
            ErrorKind.CONTEXT_OVERFLOW,
            False,
            None,
        ),
        (
            Reply.error(400, '{"error": {"message": "flagged by our content policy"}}'),
            ErrorKind.CONTENT_POLICY,
            False,
            None,
        ),
        (Reply.error(400), ErrorKind.BAD_REQUEST, False, None),
        (Reply.malformed(), ErrorKind.BAD_RESPONSE, True, None),
        (
            Reply.cut("a reply that never finishes", after_chunks=3),
            ErrorKind.CONNECTION,
            True,
            None,
        ),
    ],
)
def test_failures_are_classified(make_provider, openai_server, reply, kind, retryable, retry_after):
    for stream in (True, False):
        openai_server.queue(reply)
        with pytest.raises(ProviderError) as raised:
            complete(make_provider(stream=stream))
        error = raised.value
        assert (error.kind, error.retryable, error.retry_after) == (kind, retryable, retry_after), (
            stream
        )
        assert "\n" not in str(error)


def test_a_hang_is_a_timeout(make_provider, openai_server):
    openai_server.queue(Reply.hang(5))
    with pytest.raises(ProviderError) as raised:
        complete(make_provider(timeout_seconds=0.3))
    assert raised.value.kind is ErrorKind.TIMEOUT and raised.value.retryable
    assert "within 0.3 s" in str(raised.value)


def test_nothing_listening_is_a_connection_error(make_provider):
    with pytest.raises(ProviderError) as raised:
        complete(make_provider(base_url="http://127.0.0.1:9/v1"))
    assert raised.value.kind is ErrorKind.CONNECTION
    assert "nothing answers at http://127.0.0.1:9/v1 (is the server running" in str(raised.value)


def chunk(delta, finish=None):
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_servers_that_bend_the_protocol(make_provider, openai_server):
    # No "index" on tool-call pieces: a new id starts a new call.
    openai_server.queue(
        Reply.stream_events(
            chunk({"tool_calls": [{"id": "a", "function": {"name": "p", "arguments": '{"x":'}}]}),
            chunk({"tool_calls": [{"function": {"arguments": "1}"}}]}),
            chunk({"tool_calls": [{"id": "b", "function": {"name": "q", "arguments": "{}"}}]}),
            chunk({}, "tool_calls"),
        )
    )
    calls = complete(make_provider()).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("a", "p", '{"x":1}'), ("b", "q", "{}")]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply.raw(200, '{"not": "a stream"}'), ErrorKind.BAD_RESPONSE),
        (
            Reply.stream_events(
                {"error": {"message": "maximum context length exceeded", "code": 400}}
            ),
            ErrorKind.CONTEXT_OVERFLOW,
        ),
        (Reply.stream_events({"error": "overloaded", "choices": []}), ErrorKind.SERVER),
    ],
)
def test_odd_streams_are_classified(make_provider, openai_server, reply, kind):
    openai_server.queue(reply)
    with pytest.raises(ProviderError) as raised:
        complete(make_provider())
    assert raised.value.kind is kind


def test_a_non_streamed_reply_with_a_broken_tool_call_is_a_bad_response(
    make_provider, openai_server
):
    body = {"choices": [{"message": {"tool_calls": [{"id": "x"}]}, "finish_reason": "tool_calls"}]}
    openai_server.queue(Reply.raw(200, json.dumps(body)))
    with pytest.raises(ProviderError) as raised:
        complete(make_provider(stream=False))
    assert raised.value.kind is ErrorKind.BAD_RESPONSE


def test_the_wire_cache_gives_what_a_fresh_conversion_gives_as_histories_change():
    from hermes_plugin_provider_openai.client import WireCache, _message

    cache = WireCache()
    first = [ChatMessage("system", "s"), ChatMessage("user", "a")]
    grown = [*first, ChatMessage("assistant", "b"), ChatMessage("user", "c")]
    other = [ChatMessage("system", "s"), ChatMessage("user", "another session")]
    edited = [first[0], ChatMessage("user", "a, compressed"), *grown[2:]]
    for history in (first, grown, other, grown, edited, first[:1]):
        assert cache.messages(history) == [_message(m) for m in history]
