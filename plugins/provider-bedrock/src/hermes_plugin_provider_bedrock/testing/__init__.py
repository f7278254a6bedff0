"""The Bedrock plugin's fake for tests: a scripted Bedrock runtime that verifies SigV4
(needs the ``testing`` extra, which brings the test kit)."""

from hermes_plugin_provider_bedrock.testing.bedrock_server import (
    ScriptedBedrockServer,
    conversation_problem,
    frame,
)

__all__ = ["ScriptedBedrockServer", "conversation_problem", "frame"]
