"""``transport: bedrock`` through a real ``hermes chat -q``: a tool round trip on Bedrock's
Converse API, streamed (AWS's binary event stream) and whole, every request signed with
SigV4 from the AWS credential chain and the signature checked by the kit's runtime; the
tool result goes back as a ``toolResult``; a wrong secret is refused by that check and said
in one line; a Bedrock API key goes as a bearer token."""

from __future__ import annotations

import pytest
from hermes_plugin_provider_bedrock.testing import ScriptedBedrockServer

from hermes_testkit import Reply

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.fixture
def aws(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    """Only the credentials a test gives: none of the machine's files or metadata."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDHERMES")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hermes-secret")
    return monkeypatch


def _configure(hermes, server: ScriptedBedrockServer, extra: str = "") -> None:  # type: ignore[no-untyped-def]
    hermes.config(
        "model:\n  provider: aws\n  reasoning_effort: high\n"
        f"providers:\n  aws:\n    base_url: {server.base_url}\n    transport: bedrock\n"
        f"    default_model: {MODEL}\n    options:\n      region: eu-central-1\n{extra}"
        "agent:\n  retries: 1\n"
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_tool_round_trip_on_bedrock_signed_with_sigv4(hermes, aws, tmp_path, stream) -> None:  # type: ignore[no-untyped-def]
    note = tmp_path / "note.txt"
    note.write_text("hello from the file\n")
    with ScriptedBedrockServer() as server:
        server.credentials = {"AKIDHERMES": "hermes-secret"}
        _configure(hermes, server, f"    stream: {str(stream).lower()}\n")
        server.queue(
            Reply.tool_call("read_file", {"path": str(note)}, thinking="Read it first."),
            Reply.say("The note says: hello from the file."),
        )
        result = hermes("chat", "-q", "What does the note say?")
        assert result.code == 0, result.err
        assert result.out == "The note says: hello from the file.\n"
        assert server.signed == ["eu-central-1", "eu-central-1"]  # both verified
        first, second = (request for request in server.requests)
    verb = "converse-stream" if stream else "converse"
    assert first.path == f"/model/{MODEL.replace(':', '%3A')}/{verb}"
    assert first.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDHERMES/")
    assert "hermes-secret" not in str(first.headers) + str(first.json)
    assert first.json["system"][0]["text"]
    assert first.json["messages"] == [
        {"role": "user", "content": [{"text": "What does the note say?"}]}
    ]
    assert first.json["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 24576}
    }
    assert "read_file" in {t["toolSpec"]["name"] for t in first.json["toolConfig"]["tools"]}
    call, answer = second.json["messages"][-2:]
    reasoning, use = call["content"]
    assert reasoning["reasoningContent"]["reasoningText"]["signature"] == "sig-14"
    assert use["toolUse"]["name"] == "read_file" and use["toolUse"]["input"] == {"path": str(note)}
    (result_block,) = answer["content"]
    assert result_block["toolResult"]["toolUseId"] == use["toolUse"]["toolUseId"]
    assert "hello from the file" in result_block["toolResult"]["content"][0]["text"]


def test_a_wrong_aws_secret_is_refused_and_said_in_one_line(hermes, aws) -> None:  # type: ignore[no-untyped-def]
    aws.setenv("AWS_SECRET_ACCESS_KEY", "a-wrong-secret")
    with ScriptedBedrockServer() as server:
        server.credentials = {"AKIDHERMES": "hermes-secret"}
        _configure(hermes, server)
        result = hermes("chat", "-q", "hi")
        assert not server.signed
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("hermes: error:")]
    assert len(errors) == 1, result.err
    assert "Bedrock refused the credentials (HTTP 403)" in errors[0]
    assert "signature we calculated does not match" in errors[0]
    assert "Traceback" not in result.err and "a-wrong-secret" not in result.err


def test_a_bedrock_api_key_goes_as_a_bearer_token(hermes, aws) -> None:  # type: ignore[no-untyped-def]
    aws.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-kit")
    with ScriptedBedrockServer() as server:
        server.api_keys = frozenset({"bedrock-api-key-kit"})
        _configure(hermes, server, "    api_key_env: AWS_BEARER_TOKEN_BEDROCK\n")
        server.queue(Reply.say("Hello over an API key."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Hello over an API key.\n"
        assert server.requests[0].headers["authorization"] == "Bearer bedrock-api-key-kit"
        assert not server.signed
