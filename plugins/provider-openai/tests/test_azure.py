"""The ``azure`` transport against the kit's Azure OpenAI server (which the official
``openai.AzureOpenAI`` client talks to unmodified): the conformance suite, each of Azure's
three routes, the key in ``api-key``, a deployment's reasoning model, and Azure's refusals
in one line."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from hermes_plugin_provider_openai.azure import AzureOpenAIProvider
from hermes_plugin_provider_openai.testing import ScriptedAzureOpenAIServer

from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
)
from hermes_testkit import ProviderTests, Reply

HELLO = ChatMessage("user", "hello")


class TestAzureConformance(ProviderTests):
    server_class = ScriptedAzureOpenAIServer

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return AzureOpenAIProvider(settings)


def test_the_official_azure_client_talks_to_the_kit_server() -> None:
    with ScriptedAzureOpenAIServer() as server:
        server.deployments = {"team-chat": "gpt-4o"}
        server.queue(Reply.say("Hello from Azure."))
        client = openai.AzureOpenAI(
            azure_endpoint=server.base_url, api_key="test-key", api_version="2024-10-21"
        )
        reply = client.chat.completions.create(
            model="team-chat", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "Hello from Azure."
        wrong = openai.AzureOpenAI(
            azure_endpoint=server.base_url, api_key="nope", api_version="2024-10-21", max_retries=0
        )
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(
                model="team-chat", messages=[{"role": "user", "content": "hi"}]
            )
        (asked, _) = server.requests
    assert asked.path == "/openai/deployments/team-chat/chat/completions?api-version=2024-10-21"
    assert asked.headers["api-key"] == "test-key"


def ask(
    server: ScriptedAzureOpenAIServer,
    base: str,
    model: str,
    api_key: str = "test-key",
    **options: Any,
) -> ModelResponse:
    settings = ProviderSettings(
        base_url=server.base_url + base, api_key=api_key, stream=False, options=options
    )

    async def run() -> ModelResponse:
        provider = AzureOpenAIProvider(settings)
        try:
            request = ModelRequest(
                model, [HELLO], max_tokens=100, temperature=0.2, reasoning_effort="high"
            )
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("base", "options", "path"),
    [
        ("", {}, "/openai/deployments/team-chat/chat/completions?api-version=2024-10-21"),
        (
            "",
            {"deployment": "team-chat", "api_version": "2025-04-01-preview"},
            "/openai/deployments/team-chat/chat/completions?api-version=2025-04-01-preview",
        ),
        ("/openai/v1", {}, "/openai/v1/chat/completions"),
        ("/models", {}, "/models/chat/completions?api-version=2024-05-01-preview"),
    ],
)
def test_each_of_azures_routes(base: str, options: dict[str, Any], path: str) -> None:
    model = "gpt-4o" if options.get("deployment") else "team-chat"
    with ScriptedAzureOpenAIServer() as server:
        server.deployments = {"team-chat": "gpt-4o"}
        server.queue(Reply.say("ok"))
        assert ask(server, base, model, **options).content == "ok"
        (asked,) = server.requests
    assert asked.path == path and asked.headers["api-key"] == "test-key"
    assert "authorization" not in asked.headers


def test_a_reasoning_deployment_says_so_with_an_option() -> None:
    with ScriptedAzureOpenAIServer() as server:
        server.deployments = {"thinker": "o4-mini", "chat": "gpt-4o"}
        server.queue(Reply.say("ok"), Reply.say("ok"))
        ask(server, "", "thinker", reasoning=True)
        ask(server, "", "chat")
        reasoning, plain = (request.json for request in server.requests)
    assert reasoning["max_completion_tokens"] == 100 and "max_tokens" not in reasoning
    assert "temperature" not in reasoning and reasoning["reasoning_effort"] == "high"
    assert plain["max_tokens"] == 100 and plain["temperature"] == 0.2
    assert "reasoning_effort" not in plain


@pytest.mark.parametrize(
    ("key", "model", "kind", "said"),
    [
        ("wrong", "team-chat", ErrorKind.AUTH, "invalid subscription key"),
        (
            "test-key",
            "nowhere",
            ErrorKind.BAD_REQUEST,
            "deployment for this resource does not exist",
        ),
    ],
)
def test_azures_refusals_are_one_line(key: str, model: str, kind: ErrorKind, said: str) -> None:
    with ScriptedAzureOpenAIServer() as server:
        server.deployments = {"team-chat": "gpt-4o"}
        with pytest.raises(ProviderError) as raised:
            ask(server, "", model, api_key=key)
    assert raised.value.kind is kind and said in str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_v1_route_names_the_deployment_in_the_body() -> None:
    with ScriptedAzureOpenAIServer() as server:
        server.queue(Reply.say("ok"))
        ask(server, "/openai/v1", "gpt-4o", deployment="team-chat")
        (asked,) = server.requests
    assert asked.path == "/openai/v1/chat/completions" and asked.json["model"] == "team-chat"


def test_azures_content_filter_is_a_content_policy_error() -> None:
    refusal = (
        '{"error": {"code": "content_filter", "message": "The response was filtered due to '
        "the prompt triggering Azure OpenAI's content management policy. Please modify your "
        'prompt and retry."}}'
    )
    with ScriptedAzureOpenAIServer() as server:
        server.queue(Reply.error(400, refusal))
        with pytest.raises(ProviderError) as raised:
            ask(server, "", "test-model")
    assert raised.value.kind is ErrorKind.CONTENT_POLICY
