"""``providers.NAME.transport: responses`` through a real ``hermes chat -q``: a tool round
trip on OpenAI's Responses API (the kit's server, which the official ``openai`` client reads
and which refuses a tool result that answers no call, as the service does), reasoning items
sent back with their encrypted content, and the reasoning effort in the API's own form."""

from __future__ import annotations

import pytest

from hermes_testkit import Reply, ScriptedResponsesServer


def _configure(hermes, server: ScriptedResponsesServer, options: str, stream: bool = True) -> None:
    hermes.config(
        "model:\n  provider: gpt\n"
        f"providers:\n  gpt:\n    base_url: {server.base_url}\n    transport: responses\n"
        f"    default_model: gpt-5-codex\n    api_key_env: OPENAI_KEY\n"
        f"    stream: {str(stream).lower()}\n{options}"
        "agent:\n  retries: 1\n"
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_tool_round_trip_on_the_responses_api(hermes, tmp_path, monkeypatch, stream) -> None:
    monkeypatch.setenv("OPENAI_KEY", "sk-test-responses")
    note = tmp_path / "note.txt"
    note.write_text("hello from the file\n")
    with ScriptedResponsesServer() as server:
        _configure(hermes, server, "    options:\n      reasoning_effort: high\n", stream)
        server.queue(
            Reply.tool_call("read_file", {"path": str(note)}, thinking="Read it first."),
            Reply.say("The note says: hello from the file."),
        )
        result = hermes("chat", "-q", "What does the note say?")
        assert result.code == 0, result.err
        assert result.out == "The note says: hello from the file.\n"
        first, second = (request.json for request in server.requests)
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-responses"
    assert first["model"] == "gpt-5-codex" and first["store"] is False
    assert first["stream"] is stream
    assert first["reasoning"] == {"summary": "auto", "effort": "high"}
    assert first["include"] == ["reasoning.encrypted_content"]
    assert first["instructions"] and first["input"][-1] == {
        "role": "user",
        "content": "What does the note say?",
    }
    assert {tool["name"] for tool in first["tools"]} >= {"read_file"}
    # The second request carries the reasoning item, the call and its output, in that order.
    kinds = [item.get("type") or item.get("role") for item in second["input"]]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"]
    reasoning, call, output = second["input"][-3:]
    assert reasoning["encrypted_content"] == "enc-14"
    assert call["name"] == "read_file" and output["call_id"] == call["call_id"]
    assert "hello from the file" in output["output"]


def test_a_wrong_reasoning_effort_is_one_line(hermes, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_KEY", "sk-test-responses")
    with ScriptedResponsesServer() as server:
        _configure(hermes, server, "    options:\n      reasoning_effort: extreme\n")
        result = hermes("chat", "-q", "hi")
        assert not server.requests
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("hermes: error:")]
    assert len(errors) == 1 and "reasoning_effort must be one of" in errors[0], result.err
    assert "Traceback" not in result.err
