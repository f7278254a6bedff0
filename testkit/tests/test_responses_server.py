"""The scripted Responses API server, driven by the official ``openai`` client: its typed
objects and its stream accumulator read what the server writes, so the server cannot drift
from the wire format the real service speaks."""

from __future__ import annotations

import json

import openai
import pytest

from hermes_testkit import Reply, ScriptedResponsesServer

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def client(server: ScriptedResponsesServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


def test_a_tool_round_trip_reads_as_the_official_client_reads_it() -> None:
    with ScriptedResponsesServer() as server:
        server.queue(
            Reply.tool_call("get_weather", {"city": "Oslo"}, thinking="Look it up."),
            Reply.say("Sunny in Oslo."),
        )
        api = client(server)
        first = api.responses.create(
            model="test-model",
            input=[{"role": "user", "content": "Weather in Oslo?"}],
            tools=[WEATHER],  # type: ignore[list-item]
            store=False,
            include=["reasoning.encrypted_content"],
        )
        reasoning, call = first.output
        assert reasoning.type == "reasoning" and reasoning.encrypted_content
        assert call.type == "function_call" and call.name == "get_weather"
        assert json.loads(call.arguments) == {"city": "Oslo"}
        second = api.responses.create(
            model="test-model",
            input=[
                {"role": "user", "content": "Weather in Oslo?"},
                reasoning.model_dump(exclude_none=True),  # type: ignore[list-item]
                call.model_dump(exclude_none=True),  # type: ignore[list-item]
                {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
            ],
            store=False,
        )
        assert second.output_text == "Sunny in Oslo."
        assert second.usage is not None and second.usage.total_tokens > 0


def test_a_stream_accumulates_into_the_same_response() -> None:
    with ScriptedResponsesServer() as server:
        server.queue(
            Reply.tool_call("get_weather", {"city": "Oslo"}, text="Checking.", chunk_size=3)
        )
        with client(server).responses.stream(
            model="test-model",
            input="Weather in Oslo?",
            tools=[WEATHER],  # type: ignore[list-item]
        ) as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert "response.function_call_arguments.delta" in kinds
    assert final.output_text == "Checking."
    (call,) = [item for item in final.output if item.type == "function_call"]
    assert json.loads(call.arguments) == {"city": "Oslo"}


def test_an_answer_to_no_call_is_refused_as_the_service_refuses_it() -> None:
    with ScriptedResponsesServer() as server:
        server.queue(Reply.say("never sent"))
        with pytest.raises(openai.BadRequestError) as refused:
            client(server).responses.create(
                model="test-model",
                input=[{"type": "function_call_output", "call_id": "call_x", "output": "?"}],
            )
    assert "No tool call found for function call output with call_id call_x" in str(refused.value)


def test_a_context_overflow_is_openais_error() -> None:
    with ScriptedResponsesServer() as server:
        server.context_window = 10
        with pytest.raises(openai.BadRequestError) as refused:
            client(server).responses.create(model="test-model", input="x" * 400)
    assert refused.value.code == "context_length_exceeded"
