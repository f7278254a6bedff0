"""What Gemini needs beyond the conformance suite, against the kit's server (which refuses
what the service refuses): a step's tool results in one turn, Gemini 3's thought signatures
sent back, thinking and safety settings in the API's form, a wrong key, a blocked prompt,
and Vertex's sign-in renewed once, or refused in one line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_provider_gemini import google_sign_in
from hermes_plugin_provider_gemini.client import GeminiProvider, VertexProvider
from hermes_plugin_provider_gemini.testing import ScriptedGeminiServer

from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    ToolSchema,
)
from hermes_testkit import Reply

TOOL = ToolSchema("lookup", "Look something up.", {"type": "object", "properties": {}})
QUESTION = ChatMessage("user", "look it up")


def ask(
    provider: ModelProvider, model: str, *messages: ChatMessage, **request: Any
) -> ModelResponse:
    async def run() -> ModelResponse:
        try:
            return await provider.complete(ModelRequest(model, messages, **request))
        finally:
            await provider.aclose()

    return asyncio.run(run())


def gemini(server: ScriptedGeminiServer, stream: bool = True, **options: Any) -> GeminiProvider:
    settings = ProviderSettings(
        base_url=server.base_url, api_key="kit-key", stream=stream, options=options
    )
    return GeminiProvider(settings)


def answered(first: ModelResponse, *outputs: str) -> tuple[ChatMessage, ...]:
    """The assistant's calls and a tool message per call, as the engine writes them."""
    call = ChatMessage(
        "assistant",
        first.content,
        tool_calls=first.tool_calls,
        reasoning_details=first.reasoning_details,
    )
    results = [
        ChatMessage("tool", output, tool_call_id=made.id)
        for made, output in zip(first.tool_calls, outputs, strict=True)
    ]
    return (call, *results)


@pytest.mark.parametrize("stream", [True, False])
def test_a_steps_results_go_back_in_one_turn_with_the_calls_signature(stream: bool) -> None:
    with ScriptedGeminiServer() as server:
        server.queue(
            Reply.calls([("lookup", {"q": "a"}), ("lookup", {"q": "b"})], thinking="Two."),
            Reply.say("Both found."),
        )
        model = "gemini-3-pro-preview"  # refuses a call sent back without its signature
        first = ask(gemini(server, stream), model, QUESTION, tools=[TOOL])
        assert [json.loads(c.arguments) for c in first.tool_calls] == [{"q": "a"}, {"q": "b"}]
        assert first.reasoning == "Two." and first.finish_reason == "tool_calls"
        history = (QUESTION, *answered(first, "found a", '{"hits": 2}'))
        second = ask(gemini(server, stream), model, *history, tools=[TOOL])
        sent = server.requests[1].json["contents"]
    assert second.content == "Both found."
    assert [turn["role"] for turn in sent] == ["user", "model", "user"]
    calls, results = sent[1]["parts"], sent[2]["parts"]
    assert calls[0]["thoughtSignature"] and "thoughtSignature" not in calls[1]
    assert [part["functionResponse"] for part in results] == [
        {"name": "lookup", "response": {"result": "found a"}},
        {"name": "lookup", "response": {"hits": 2}},  # a JSON object goes as it is
    ]
    assert all("thought" not in part for turn in sent for part in turn["parts"])


def test_a_call_without_its_signature_is_refused_as_gemini_3_refuses_it() -> None:
    """What the signature check above protects against: the kit's server says no."""
    with ScriptedGeminiServer() as server:
        server.queue(Reply.tool_call("lookup", {}))
        first = ask(gemini(server), "gemini-3-pro-preview", QUESTION, tools=[TOOL])
        call, result = answered(first, "found")
        unsigned = ChatMessage("assistant", "", tool_calls=call.tool_calls)
        with pytest.raises(ProviderError) as raised:
            ask(gemini(server), "gemini-3-pro-preview", QUESTION, unsigned, result, tools=[TOOL])
    assert raised.value.kind is ErrorKind.BAD_REQUEST
    assert "thought_signature" in str(raised.value)


@pytest.mark.parametrize(
    ("model", "effort", "config"),
    [
        ("gemini-2.5-flash", "high", {"includeThoughts": True, "thinkingBudget": 24576}),
        ("gemini-2.5-flash", "none", {"includeThoughts": False, "thinkingBudget": 0}),
        ("gemini-2.5-pro", "none", {"includeThoughts": False, "thinkingBudget": 128}),
        ("gemini-3-pro-preview", "high", {"includeThoughts": True, "thinkingLevel": "high"}),
        ("gemini-3-flash-preview", "minimal", {"includeThoughts": True, "thinkingLevel": "low"}),
        ("gemini-2.5-flash", "xhigh", {"includeThoughts": True, "thinkingBudget": 24576}),
        ("gemini-2.5-pro", "xhigh", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-flash", None, {"includeThoughts": True}),
        ("gemini-2.0-flash", "high", None),  # a model that does not think is not asked to
    ],
)
def test_reasoning_effort_is_gemini_thinking_config(
    model: str, effort: str | None, config: dict[str, Any] | None
) -> None:
    with ScriptedGeminiServer() as server:
        server.queue(Reply.say("ok"))
        ask(gemini(server), model, QUESTION, reasoning_effort=effort, max_tokens=64)
        generation = server.requests[0].json["generationConfig"]
    assert generation.get("thinkingConfig") == config
    assert generation["maxOutputTokens"] == 64


def test_safety_settings_and_json_schema_tools_go_in_the_apis_form() -> None:
    safety = {"harassment": "none", "HARM_CATEGORY_HATE_SPEECH": "only_high"}
    schema = {"type": "object", "properties": {"q": {"anyOf": [{"type": "string"}]}}}
    with ScriptedGeminiServer() as server:
        server.queue(Reply.say("ok"))
        tool = ToolSchema("search", "Search.", schema)
        ask(
            gemini(server, safety_settings=safety),
            "gemini-2.5-flash",
            QUESTION,
            tools=[tool],
            tool_choice="search",
        )
        sent = server.requests[0].json
    assert sent["safetySettings"] == [
        {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_ONLY_HIGH"},
    ]
    (declaration,) = sent["tools"][0]["functionDeclarations"]
    assert declaration["parametersJsonSchema"] == schema
    assert sent["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["search"]}
    }


def test_a_wrong_key_is_an_auth_error_in_one_line() -> None:
    with ScriptedGeminiServer() as server:
        server.api_key = "the-right-key"
        with pytest.raises(ProviderError) as raised:
            ask(gemini(server), "gemini-2.5-flash", QUESTION)
    assert raised.value.kind is ErrorKind.AUTH and not raised.value.retryable
    assert "refused the API key" in str(raised.value) and "\n" not in str(raised.value)


def test_a_blocked_prompt_is_a_content_policy_error() -> None:
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {}}
    with ScriptedGeminiServer() as server:
        server.queue(Reply.raw(200, json.dumps(blocked)))
        with pytest.raises(ProviderError) as raised:
            ask(gemini(server, stream=False), "gemini-2.5-flash", QUESTION)
    assert raised.value.kind is ErrorKind.CONTENT_POLICY
    assert "blocked the prompt (SAFETY)" in str(raised.value)


def test_thoughts_and_cached_input_are_counted_apart() -> None:
    usage = {
        "prompt_tokens": 1000,
        "cached_tokens": 600,
        "completion_tokens": 20,
        "reasoning_tokens": 300,
    }
    with ScriptedGeminiServer() as server:
        server.queue(Reply.say("ok", thinking="Hm.", usage=usage))
        response = ask(gemini(server), "gemini-2.5-flash", QUESTION)
    assert response.reasoning == "Hm." and response.content == "ok"
    got = response.usage
    assert (got.input_tokens, got.cache_read_tokens, got.output_tokens, got.reasoning_tokens) == (
        400,
        600,
        320,
        300,
    )


def _vertex(server: ScriptedGeminiServer, key: Path) -> VertexProvider:
    options = {"credentials_file": str(key), "project": "other-project"}
    return VertexProvider(ProviderSettings(base_url=server.vertex_url, options=options))


def test_vertex_signs_in_once_and_again_when_its_token_stops_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(google_sign_in, "FRESH_SECONDS", 0.0)  # as if an hour had passed
    with ScriptedGeminiServer() as server:
        provider = _vertex(server, server.service_account_file(tmp_path))
        server.queue(Reply.say("one"), Reply.say("two"), Reply.say("three"))

        async def three() -> list[str]:
            try:
                replies = [await provider.complete(ModelRequest("gemini-2.5-pro", [QUESTION]))]
                replies.append(await provider.complete(ModelRequest("gemini-2.5-pro", [QUESTION])))
                server.expire_tokens()
                replies.append(await provider.complete(ModelRequest("gemini-2.5-pro", [QUESTION])))
                return [reply.content for reply in replies]
            finally:
                await provider.aclose()

        assert asyncio.run(three()) == ["one", "two", "three"]
        paths = [request.path.split(":")[0] for request in server.requests]
    model = "/v1/projects/other-project/locations/global/publishers/google/models/gemini-2.5-pro"
    assert paths == ["/token", model, model, model, "/token", model]  # the 401, then again


def test_a_revoked_service_account_is_one_line(tmp_path: Path) -> None:
    with ScriptedGeminiServer() as server:
        provider = _vertex(server, server.service_account_file(tmp_path))
        server.revoke()
        with pytest.raises(ProviderError) as raised:
            ask(provider, "gemini-2.5-pro", QUESTION)
    assert raised.value.kind is ErrorKind.AUTH and "\n" not in str(raised.value)
    assert "Google refused the sign-in for Vertex AI" in str(raised.value)


def test_a_missing_key_file_says_which_setting_to_fix(tmp_path: Path) -> None:
    with ScriptedGeminiServer() as server, pytest.raises(ProviderError) as raised:
        ask(_vertex(server, tmp_path / "nowhere.json"), "gemini-2.5-pro", QUESTION)
    assert raised.value.kind is ErrorKind.AUTH
    assert "options.credentials_file" in str(raised.value)


def test_gemini_models_see_and_have_a_million_token_window() -> None:
    settings = ProviderSettings(
        base_url="https://x.test/v1beta",
        api_key="k",
        options={"context_windows": {"gemini-3.5-flash": 2_000_000}},
    )
    provider = GeminiProvider(settings)
    assert asyncio.run(provider.context_window("gemini-2.5-pro")) == 1_048_576
    assert asyncio.run(provider.context_window("gemini-3.5-flash")) == 2_000_000
    assert asyncio.run(provider.context_window("learnlm-x")) is None
    assert provider.sees("gemini-2.5-flash") is True and provider.sees("learnlm-x") is None
