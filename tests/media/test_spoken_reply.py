"""``text_to_speech`` in a one-shot: the reply carries the voice message (its path in
``--json``, a line on stderr otherwise). (The voice plugin also provides a transcriber, so
it cannot run isolated; a tool's file crossing from an isolated plugin's process is the same
callback as ``vision_analyze``'s look, tested in test_vision_tool.)"""

from __future__ import annotations

import json
import subprocess

import pytest

from hermes_testkit import Reply

pytestmark = pytest.mark.usefixtures("speech_tools")


def test_a_spoken_reply_is_a_file_of_the_turn(hermes, openai_server):
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  add_toolsets: [voice]\n"
    )
    openai_server.queue(
        Reply.tool_call("text_to_speech", {"text": "Hello from Hermes, spoken aloud."}),
        Reply.say("Said it."),
    )
    result = hermes("chat", "-q", "say hello", "--json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["reply"] == "Said it."
    (spoken,) = payload["files"]
    assert (spoken["kind"], spoken["mime"], spoken["name"]) == ("audio", "audio/ogg", "reply.ogg")
    codec = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
         spoken["path"]],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert codec == "opus"
    plain = (
        hermes("chat", "-q", "again", "--continue")
        if openai_server.queue(
            Reply.tool_call("text_to_speech", {"text": "Once more."}), Reply.say("Again.")
        )
        is None
        else None
    )
    assert plain is not None and plain.out == "Again.\n"
    assert "hermes: sent reply.ogg (audio/ogg): " in plain.err
