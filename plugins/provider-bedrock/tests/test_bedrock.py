"""What Bedrock needs beyond the conformance suite, against the kit's runtime (which verifies
each SigV4 signature and refuses what the service refuses): Claude's reasoning sent back
before its tool uses, a step's results in one message, the credential chain's sources and
its failures in one line, exceptions inside a stream, and the effort in each family's form."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_provider_bedrock.client import BedrockProvider
from hermes_plugin_provider_bedrock.testing import ScriptedBedrockServer

from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    ToolSchema,
)
from hermes_testkit import Reply

CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOL = ToolSchema("lookup", "Look something up.", {"type": "object", "properties": {}})
QUESTION = ChatMessage("user", "look it up")


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDKIT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "kit-secret")


def ask(
    server: ScriptedBedrockServer,
    model: str,
    *messages: ChatMessage,
    stream: bool = True,
    options: dict[str, Any] | None = None,
    **request: Any,
) -> ModelResponse:
    settings = ProviderSettings(
        base_url=server.base_url, stream=stream, options=options or {"region": "us-east-1"}
    )

    async def run() -> ModelResponse:
        provider = BedrockProvider(settings)
        try:
            return await provider.complete(ModelRequest(model, messages, **request))
        finally:
            await provider.aclose()

    return asyncio.run(run())


def _server() -> ScriptedBedrockServer:
    server = ScriptedBedrockServer()
    server.credentials = {"AKIDKIT": "kit-secret"}
    return server


@pytest.mark.usefixtures("keys")
@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_goes_back_before_the_tool_uses_and_results_in_one_message(stream: bool) -> None:
    with _server() as server:
        server.queue(
            Reply.calls([("lookup", {"q": "a"}), ("lookup", {"q": "b"})], thinking="Two."),
            Reply.say("Both found."),
        )
        first = ask(server, CLAUDE, QUESTION, stream=stream, tools=[TOOL])
        assert first.reasoning == "Two." and first.finish_reason == "tool_calls"
        answer = ChatMessage(
            "assistant", "", tool_calls=first.tool_calls, reasoning_details=first.reasoning_details
        )
        results = [
            ChatMessage("tool", f"found {n}", tool_call_id=c.id)
            for n, c in enumerate(first.tool_calls)
        ]
        second = ask(server, CLAUDE, QUESTION, answer, *results, stream=stream, tools=[TOOL])
        sent = server.requests[1].json["messages"]
    assert second.content == "Both found."
    assert [message["role"] for message in sent] == ["user", "assistant", "user"]
    reasoning, *uses = sent[1]["content"]
    assert reasoning == {
        "reasoningContent": {"reasoningText": {"text": "Two.", "signature": "sig-4"}}
    }
    assert [use["toolUse"]["input"] for use in uses] == [{"q": "a"}, {"q": "b"}]
    assert [block["toolResult"]["toolUseId"] for block in sent[2]["content"]] == [
        "tooluse_kit0",
        "tooluse_kit1",
    ]


def test_a_wrong_secret_is_refused_by_the_signature_check_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDKIT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with _server() as server:
        with pytest.raises(ProviderError) as raised:
            ask(server, CLAUDE, QUESTION)
        assert not server.signed
    said = str(raised.value)
    assert raised.value.kind is ErrorKind.AUTH and raised.value.status == 403
    assert "\n" not in said and "not-the-secret" not in said
    assert said.startswith("Bedrock refused the credentials (HTTP 403): The request signature")
    assert said.endswith("check the AWS keys, profile or role (or the Bedrock API key)")


def test_no_credentials_at_all_says_where_to_put_them() -> None:
    with _server() as server:
        with pytest.raises(ProviderError) as raised:
            ask(server, CLAUDE, QUESTION)
        assert not server.requests  # nothing is sent unsigned
    assert raised.value.kind is ErrorKind.AUTH
    assert "no AWS credentials for Bedrock" in str(raised.value)


def test_a_profile_and_the_environments_region_sign_the_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    credentials = tmp_path / "aws-credentials"
    credentials.write_text(
        "[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = work-secret\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_REGION", "ca-central-1")
    with _server() as server:
        server.credentials = {"AKIDWORK": "work-secret"}
        server.queue(Reply.say("signed"))
        response = ask(server, CLAUDE, QUESTION, options={"profile": "work"})
        assert server.signed == ["ca-central-1"]
    assert response.content == "signed"


@pytest.mark.usefixtures("keys")
def test_an_exception_inside_the_stream_is_classified() -> None:
    with _server() as server:
        server.queue(
            Reply.stream_events(
                ("messageStart", {"role": "assistant"}),
                ("exception:throttlingException", {"message": "Too many requests, slow down."}),
            )
        )
        with pytest.raises(ProviderError) as raised:
            ask(server, CLAUDE, QUESTION)
    assert raised.value.kind is ErrorKind.RATE_LIMIT and raised.value.retryable


@pytest.mark.usefixtures("keys")
@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (CLAUDE, {"thinking": {"type": "enabled", "budget_tokens": 24576}}),
        ("openai.gpt-oss-120b-1:0", {"reasoning_effort": "high"}),
        (
            "amazon.nova-2-lite-v1:0",
            {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}},
        ),
        ("meta.llama3-3-70b-instruct-v1:0", None),
    ],
)
def test_reasoning_effort_is_each_model_familys_own_field(model: str, fields: Any) -> None:
    with _server() as server:
        server.queue(Reply.say("ok"))
        ask(server, model, QUESTION, reasoning_effort="high", temperature=0.5, max_tokens=30000)
        sent = server.requests[0].json
    assert sent.get("additionalModelRequestFields") == fields
    thinking = (fields or {}).get("thinking")
    # While Claude thinks, the output limit holds the budget and room for the answer.
    assert sent["inferenceConfig"]["maxTokens"] == (32768 if thinking else 30000)
    # Claude refuses a temperature while it thinks; the others keep theirs.
    assert ("temperature" in sent["inferenceConfig"]) is (
        fields is None or "thinking" not in fields
    )


@pytest.mark.usefixtures("keys")
def test_an_image_goes_as_bytes_with_its_format() -> None:
    from hermes_sdk.models import ImagePart

    picture = ImagePart("image/webp", b"RIFF....WEBP")
    with _server() as server:
        server.queue(Reply.say("a picture"))
        ask(server, CLAUDE, ChatMessage("user", "what is it?", images=(picture,)))
        (message,) = server.requests[0].json["messages"]
    assert message["content"][1] == {
        "image": {"format": "webp", "source": {"bytes": picture.base64()}}
    }
    assert json.dumps(message).count("RIFF") == 0  # base64, not raw


@pytest.mark.usefixtures("keys")
def test_no_thinking_right_after_calls_made_without_it_nor_blank_text() -> None:
    """Claude refuses thinking when the calls it answers were made without (a forced tool
    on the turn's first call), and Converse refuses a blank text block (the "\\n\\n" a
    model writes before a call)."""
    with _server() as server:
        server.queue(Reply.tool_call("lookup", {}, text="\n\n"), Reply.say("Found."))
        first = ask(
            server, CLAUDE, QUESTION, tools=[TOOL], tool_choice="lookup", reasoning_effort="high"
        )
        (call,) = first.tool_calls
        answer = ChatMessage("assistant", first.content, tool_calls=first.tool_calls)
        result = ChatMessage("tool", "found", tool_call_id=call.id)
        second = ask(
            server, CLAUDE, QUESTION, answer, result, tools=[TOOL], reasoning_effort="high"
        )
        first_sent, second_sent = (request.json for request in server.requests)
    assert second.content == "Found."
    assert "additionalModelRequestFields" not in first_sent  # a forced tool: no thinking
    assert "additionalModelRequestFields" not in second_sent  # answers unthought calls
    assert [list(block) for block in second_sent["messages"][1]["content"]] == [["toolUse"]]


@pytest.mark.usefixtures("keys")
def test_gpt_oss_gets_only_the_efforts_it_takes() -> None:
    with _server() as server:
        server.queue(Reply.say("ok"))
        ask(server, "openai.gpt-oss-120b-1:0", QUESTION, reasoning_effort="xhigh")
        sent = server.requests[0].json
    assert sent["additionalModelRequestFields"] == {"reasoning_effort": "high"}


def test_the_window_and_sight_of_claude_on_bedrock_or_as_stated() -> None:
    settings = ProviderSettings(
        base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
        api_key="k",
        options={"context_windows": {"meta.llama3-3-70b-instruct-v1:0": 128000}},
    )
    provider = BedrockProvider(settings)
    assert asyncio.run(provider.context_window(CLAUDE)) == 200_000
    assert asyncio.run(provider.context_window("meta.llama3-3-70b-instruct-v1:0")) == 128000
    assert provider.sees(CLAUDE) is True and provider.sees("amazon.nova-pro-v1:0") is True
    assert provider.sees("meta.llama3-3-70b-instruct-v1:0") is None


@pytest.mark.usefixtures("keys")
def test_a_signature_survives_the_gateways_transport() -> None:
    """A gateway sends over aiohttp (``expect_many_requests``): the model id's ``%3A`` must
    reach AWS as it was signed."""
    from hermes_commons.http_transport import expect_many_requests

    expect_many_requests(True)
    try:
        with _server() as server:
            server.queue(Reply.say("signed"))
            assert ask(server, CLAUDE, QUESTION).content == "signed"
            assert server.signed == ["us-east-1"]
            assert server.requests[0].path.endswith("-v1%3A0/converse-stream")
    finally:
        expect_many_requests(False)
