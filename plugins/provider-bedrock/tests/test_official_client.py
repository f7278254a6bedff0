"""The kit's Bedrock runtime driven by boto3 unmodified: boto3 signs with real SigV4 (which
the server verifies), reads the Converse responses and decodes the binary event stream. If
the fake drifted from what AWS's own client writes and reads, these fail."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from hermes_plugin_provider_bedrock.testing import ScriptedBedrockServer

from hermes_testkit import Reply

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "inputSchema": {
                    "json": {"type": "object", "properties": {"city": {"type": "string"}}}
                },
            }
        }
    ]
}


def _client(server: ScriptedBedrockServer, secret: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="ap-southeast-2",
        endpoint_url=server.base_url,
        aws_access_key_id="AKIDKIT",
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}),
    )


def test_boto3_makes_a_tool_round_trip_streamed_and_whole() -> None:
    with ScriptedBedrockServer() as server:
        server.credentials = {"AKIDKIT": "kit-secret"}
        server.queue(
            Reply.tool_call("get_weather", {"city": "Oslo"}, thinking="Ask the tool."),
            Reply.say("Sunny in Oslo.", chunk_size=3),
        )
        client = _client(server, "kit-secret")
        question = {"role": "user", "content": [{"text": "Weather in Oslo?"}]}
        first = client.converse(modelId=MODEL, messages=[question], toolConfig=TOOLS)
        assert first["stopReason"] == "tool_use"
        blocks = first["output"]["message"]["content"]
        (use,) = [block["toolUse"] for block in blocks if "toolUse" in block]
        assert (use["name"], use["input"]) == ("get_weather", {"city": "Oslo"})
        thought = blocks[0]["reasoningContent"]["reasoningText"]
        assert thought == {"text": "Ask the tool.", "signature": "sig-13"}
        result = {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": "Sunny"}]}}
        history = [question, first["output"]["message"], {"role": "user", "content": [result]}]
        streamed = client.converse_stream(modelId=MODEL, messages=history, toolConfig=TOOLS)
        events = list(streamed["stream"])
        text = "".join(
            e["contentBlockDelta"]["delta"].get("text", "")
            for e in events
            if "contentBlockDelta" in e
        )
        assert text == "Sunny in Oslo."
        assert events[-1]["metadata"]["usage"]["outputTokens"] == 5
        assert server.signed == ["ap-southeast-2", "ap-southeast-2"]
        paths = [request.path for request in server.requests]
    encoded = "anthropic.claude-sonnet-4-5-20250929-v1%3A0"
    assert paths == [f"/model/{encoded}/converse", f"/model/{encoded}/converse-stream"]


def test_boto3_signing_with_a_wrong_secret_is_refused() -> None:
    with ScriptedBedrockServer() as server:
        server.credentials = {"AKIDKIT": "kit-secret"}
        client = _client(server, "not-the-secret")
        with pytest.raises(ClientError) as raised:
            client.converse(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
        assert not server.signed
    error = raised.value.response["Error"]
    assert error["Code"] == "InvalidSignatureException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "signature we calculated does not match" in error["Message"]
