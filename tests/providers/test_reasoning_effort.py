"""``model.reasoning_effort`` reaches each transport in its API's own form, through a real
``hermes chat -q``: chat completions' ``reasoning_effort``, the Responses API's
``reasoning.effort``, Anthropic's thinking budget; a model that does not reason is sent
none of it, and a value that is not one of the six is one line."""

from __future__ import annotations

import pytest

from hermes_testkit import Reply, ScriptedAnthropicServer, ScriptedOpenAIServer
from hermes_testkit import ScriptedResponsesServer as ResponsesServer


@pytest.mark.parametrize(("model", "sent"), [("o4-mini", "high"), ("gpt-4o", None)])
def test_chat_completions_say_it_as_reasoning_effort(hermes, model, sent) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer() as server:
        hermes.config(
            f"model:\n  base_url: {server.base_url}\n  default: {model}\n  reasoning_effort: high\n"
        )
        server.queue(Reply.say("Thought about it."))
        result = hermes("chat", "-q", "think hard")
        assert result.code == 0, result.err
        assert server.requests[-1].json.get("reasoning_effort") == sent


def test_the_responses_api_says_it_as_reasoning_effort(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_KEY", "sk-test")
    with ResponsesServer() as server:
        hermes.config(
            "model:\n  provider: gpt\n  reasoning_effort: low\n"
            f"providers:\n  gpt:\n    base_url: {server.base_url}\n    transport: responses\n"
            "    default_model: gpt-5\n    api_key_env: OPENAI_KEY\n"
        )
        server.queue(Reply.say("Thought about it."))
        result = hermes("chat", "-q", "think hard")
        assert result.code == 0, result.err
        assert server.requests[-1].json["reasoning"] == {"summary": "auto", "effort": "low"}


@pytest.mark.parametrize(
    ("model", "thinking"),
    [
        ("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 24576}),
        ("claude-3-5-haiku", None),
    ],
)
def test_anthropic_says_it_as_a_thinking_budget(hermes, monkeypatch, model, thinking) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CLAUDE_KEY", "sk-ant-test")
    with ScriptedAnthropicServer() as server:
        hermes.config(
            "model:\n  provider: claude\n  reasoning_effort: high\n"
            f"providers:\n  claude:\n    base_url: {server.base_url}\n    transport: anthropic\n"
            f"    default_model: {model}\n    api_key_env: CLAUDE_KEY\n"
        )
        server.queue(Reply.say("Thought about it.", thinking="Let me think."))
        result = hermes("chat", "-q", "think hard")
        assert result.code == 0, result.err
        body = server.requests[-1].json
    assert body.get("thinking") == thinking
    if thinking:
        assert body["max_tokens"] > thinking["budget_tokens"] and "temperature" not in body


def test_an_effort_that_is_not_one_of_the_six_is_one_line(hermes) -> None:  # type: ignore[no-untyped-def]
    hermes.config("model:\n  base_url: http://127.0.0.1:9/v1\n  reasoning_effort: extreme\n")
    result = hermes("chat", "-q", "hi")
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("hermes: error:")]
    assert len(errors) == 1 and "reasoning_effort" in errors[0], result.err
    assert "Traceback" not in result.err
