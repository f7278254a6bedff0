"""The first hour, as a new user lives it: a fresh home, ``hermes setup`` answered with Enter
at every prompt but one (the URL of a model server of their own), ``hermes doctor``, then a
chat whose ``terminal`` command runs on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_testkit import Reply

pytestmark = pytest.mark.venv


def test_a_new_user_sets_up_their_own_server_and_a_command_runs_locally(
    terminal, chat_venv, openai_server, tmp_path: Path
) -> None:
    home = tmp_path / "new-home"  # nothing there yet: setup makes it
    openai_server.queue(Reply.say("Hello, I am ready now"))  # setup's test request
    term = terminal("setup", home=home)
    term.wait_for("Provider:")
    assert "or the URL of your own server" in term.seen
    term.line(openai_server.base_url)
    term.wait_for("API key for")
    term.line("")  # Enter: the server needs none
    term.wait_for("The server offers: test-model")
    term.wait_for("Default model")
    term.line("")  # Enter: the first model the server listed
    term.wait_for("Test it now?")
    term.line("")  # Enter: yes
    term.wait_for("It works. Next: hermes chat")
    assert term.wait_exit() == 0
    config = (home / "config.yaml").read_text()
    assert "backend: local" in config and "default: test-model" in config

    doctor = chat_venv.hermes("doctor", home=home)
    assert doctor.code == 0, doctor.out
    assert "model local-endpoint / test-model" in doctor.out
    assert "0 errors" in doctor.out

    made = tmp_path / "made-by-the-agent.txt"
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"echo ran here > {made}"}),
        Reply.say("Done: the file is there."),
    )
    chat = chat_venv.hermes("chat", "-q", "make the file", home=home)
    assert chat.code == 0, chat.err
    assert "Done: the file is there." in chat.out
    assert made.read_text() == "ran here\n"  # by the local backend, on this machine


def test_doctor_says_when_the_model_cannot_answer_and_what_fixes_it(
    chat_venv, openai_server, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  provider: openai\n")
    offline = chat_venv.hermes("doctor", home=home)
    assert offline.code == 1
    assert "[FAIL] no model can answer: provider 'openai' needs OPENAI_API_KEY" in offline.out

    (home / "config.yaml").write_text("model:\n  base_url: http://127.0.0.1:9/v1\n")
    unreachable = chat_venv.hermes("doctor", "--online", home=home)
    assert unreachable.code == 1
    assert "nothing answers at http://127.0.0.1:9/v1" in unreachable.out
    assert f"fix: check model.base_url (http://127.0.0.1:9/v1) in {home / 'config.yaml'}" in (
        unreachable.out
    )

    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  api_key_env: MY_SERVER_KEY\n"
    )
    (home / ".env").write_text("MY_SERVER_KEY=sk-wrong-4242\n")
    openai_server.queue(Reply.error(401, "Incorrect API key provided"))
    refused = chat_venv.hermes("doctor", "--online", home=home)
    assert refused.code == 1 and "HTTP 401" in refused.out
    assert f"fix: the key in MY_SERVER_KEY was refused: put a valid one in {home / '.env'}" in (
        refused.out
    )
    assert "sk-wrong-4242" not in refused.out  # the key itself is never shown
    openai_server.queue(Reply.error(401, "Incorrect API key provided"))
    turn = chat_venv.hermes("chat", "-q", "hello", home=home)
    assert turn.code != 0
    assert "the key in MY_SERVER_KEY was refused" in turn.out + turn.err  # a turn says it too
