"""One-shot chat with real installed tool plugins, and the setup wizard in a terminal."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from hermes_testkit import Reply

pytestmark = pytest.mark.venv


@pytest.fixture
def home(chat_home: Path) -> Path:
    return chat_home


def test_tool_progress_goes_to_stderr_and_into_the_json(chat_venv, home, openai_server):
    openai_server.queue(Reply.tool_call("shout", {"text": "hey"}), Reply.say("Done: HEY."))
    run = chat_venv.hermes("chat", "-q", "shout hey", "--json", home=home)
    assert run.code == 0, run.err
    payload = json.loads(run.out)  # stdout is the JSON object and nothing else
    assert payload["reply"] == "Done: HEY."
    (call,) = payload["tool_calls"]
    assert call["name"] == "shout" and call["arguments"] == {"text": "hey"} and call["ok"]
    assert "> shout hey" in run.err and "< shout ok" in run.err


def test_toolsets_choose_which_tool_schemas_are_sent(chat_venv, home, openai_server):
    openai_server.queue(Reply.say("a"), Reply.say("b"), Reply.say("c"))
    assert chat_venv.hermes("chat", "-q", "x", home=home).code == 0
    assert chat_venv.hermes("chat", "-q", "x", "--toolsets", "demo", home=home).code == 0
    # A typo is an error with a guess, never a chat with no tools.
    run = chat_venv.hermes("chat", "-q", "x", "--toolsets", "termnal", home=home)
    assert run.code == 1 and run.err.count("\n") == 1
    assert (
        "unknown toolset 'termnal' (did you mean 'terminal'?); installed: demo, slow, terminal"
        in (run.err)
    )
    assert chat_venv.hermes("chat", "-q", "x", "--toolsets", "", home=home).code == 0
    sent = [
        sorted(tool["function"]["name"] for tool in request.json.get("tools", []))
        for request in openai_server.requests
    ]
    assert sent == [["nap", "process", "shout", "terminal"], ["shout"], []]


def test_setup_asks_and_writes_key_model_and_backend(terminal, tmp_path):
    home = tmp_path / "setup-home"
    home.mkdir()
    term = terminal("setup", home=home)
    term.wait_for("Provider:")
    term.line("openai")
    term.wait_for("OPENAI_API_KEY")
    term.line("sk-test-123456")
    term.wait_for("Default model")
    term.line("gpt-4o-mini")
    term.wait_for("Saved: provider openai, model gpt-4o-mini, key saved as OPENAI_API_KEY")
    term.wait_for("Test it now?")
    term.line("n")
    assert "sk-test-123456" not in term.seen  # the key is never echoed
    assert term.wait_exit() == 0
    dotenv = home / ".env"
    assert 'OPENAI_API_KEY="sk-test-123456"' in dotenv.read_text()
    assert stat.S_IMODE(dotenv.stat().st_mode) == 0o600
    config = (home / "config.yaml").read_text()
    assert "provider: openai" in config and "default: gpt-4o-mini" in config
    assert "sk-test" not in config
