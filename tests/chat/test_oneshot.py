"""``hermes chat -q``: only the reply on stdout, JSON that validates, and every failure a
user can cause as exit 1 with one clear line on stderr (never a traceback)."""

from __future__ import annotations

import io
import json
import socket

import pytest

from hermes_testkit import Reply


@pytest.fixture
def configured(hermes, openai_server):
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\n"
    )
    return hermes


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("hermes: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_stdout_holds_only_the_reply(configured, openai_server):
    openai_server.queue(Reply.say("Just the answer."))
    result = configured("chat", "-q", "hi")
    assert result.code == 0, result.err
    assert result.out == "Just the answer.\n"


def test_z_is_short_for_chat_q_and_dash_reads_stdin(configured, openai_server, monkeypatch):
    openai_server.queue(Reply.say("one"), Reply.say("two"))
    assert configured("-z", "first").out == "one\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("from a pipe\n"))
    assert configured("chat", "-q", "-").out == "two\n"
    assert openai_server.requests[-1].json["messages"][-1]["content"] == "from a pipe\n"


def test_json_has_reply_session_usage_and_tool_calls(configured, openai_server):
    openai_server.queue(Reply.say("Hello.", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    result = configured("chat", "-q", "hi", "--json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["reply"] == "Hello."
    assert payload["status"] == "done" and payload["error"] is None
    assert payload["model"] == "test-model" and payload["tool_calls"] == []
    assert payload["usage"]["input_tokens"] == 12 and payload["usage"]["output_tokens"] == 3
    assert payload["usage"]["cost_usd"] is None  # a local model has no known price
    shown = configured("sessions", "show", payload["session_id"])
    assert "Hello." in shown.out and "12 in, 3 out" in shown.out


def test_continue_and_resume_add_to_an_earlier_session(configured, openai_server):
    openai_server.queue(Reply.say("a"), Reply.say("b"), Reply.say("c"))
    first = json.loads(configured("chat", "-q", "one", "--json").out)
    second = json.loads(configured("chat", "-q", "two", "--json", "--continue").out)
    third = json.loads(
        configured("chat", "-q", "three", "--json", "--resume", first["session_id"]).out
    )
    assert first["session_id"] == second["session_id"] == third["session_id"]
    sent = [m["content"] for m in openai_server.requests[-1].json["messages"][1:]]
    assert sent == ["one", "a", "two", "b", "three"]


def test_top_level_c_and_r_go_on_with_a_session_as_the_chats_own_do(configured, openai_server):
    """hermes-agent's ``hermes -c`` and ``hermes --resume ID`` work at the top level too."""
    openai_server.queue(Reply.say("a"), Reply.say("b"), Reply.say("c"))
    session = json.loads(configured("chat", "-q", "one", "--json").out)["session_id"]
    assert configured("-c", "-z", "two").out.strip() == "b"
    assert configured("--resume", session[:15], "-z", "three").out.strip() == "c"
    sent = [m["content"] for m in openai_server.requests[-1].json["messages"][1:]]
    assert sent == ["one", "a", "two", "b", "three"]


def test_a_bad_api_key_is_one_line(configured, openai_server):
    openai_server.queue(Reply.error(401))
    result = configured("chat", "-q", "hi")
    assert result.code == 1 and result.out == ""
    assert "401" in one_error_line(result.err) or "auth" in one_error_line(result.err).lower()


def test_an_unknown_model_is_one_line(configured, openai_server):
    body = json.dumps({"error": {"message": "The model `nope` does not exist", "code": 404}})
    openai_server.queue(Reply.error(404, body=body))
    result = configured("chat", "-q", "hi", "--model", "nope")
    assert result.code == 1
    assert "The model `nope` does not exist" in one_error_line(result.err)


def test_no_provider_reachable_is_one_line(hermes):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    hermes.config(
        f"model:\n  base_url: http://127.0.0.1:{port}/v1\n  default: m\nagent:\n  retries: 1\n"
    )
    result = hermes("chat", "-q", "hi")
    assert result.code == 1 and result.out == ""
    assert "127.0.0.1" in one_error_line(result.err) or "connect" in result.err.lower()


def test_an_unknown_provider_is_one_line(hermes):
    result = hermes("chat", "-q", "hi", "--provider", "nope")
    assert result.code == 1
    assert "unknown provider 'nope'" in one_error_line(result.err)


def test_a_malformed_config_is_one_line(hermes):
    hermes.config("model: [unclosed\n")
    result = hermes("chat", "-q", "hi")
    assert result.code == 1 and result.out == ""
    assert "config.yaml" in one_error_line(result.err)


def test_an_unknown_session_is_one_line(configured):
    result = configured("chat", "-q", "hi", "--resume", "20990101")
    assert result.code == 1
    assert "no session '20990101'" in one_error_line(result.err)
    result = configured("chat", "-q", "hi", "--continue")
    assert "no earlier chat" in one_error_line(result.err)


def test_the_json_of_a_failed_turn_still_parses(configured, openai_server):
    openai_server.queue(Reply.error(401))
    result = configured("chat", "-q", "hi", "--json")
    assert result.code == 1
    payload = json.loads(result.out)
    assert payload["status"] == "error" and payload["reply"] == "" and payload["error"]


def test_continue_picks_the_session_written_to_last(configured, openai_server):
    openai_server.queue(*(Reply.say(text) for text in "abcd"))
    older = json.loads(configured("chat", "-q", "one", "--json").out)["session_id"]
    newer = json.loads(configured("chat", "-q", "two", "--json").out)["session_id"]
    configured("chat", "-q", "three", "--resume", older)
    continued = json.loads(configured("chat", "-q", "four", "--json", "-c").out)["session_id"]
    assert continued == older != newer


def test_a_session_busy_in_another_process_is_one_line(configured, openai_server):
    from hermes_plugin_store_sqlite import state_db_path
    from hermes_plugin_store_sqlite.database import Database

    from hermes_kernel.store.state import StateStore

    openai_server.queue(Reply.say("a"))
    session = json.loads(configured("chat", "-q", "one", "--json").out)["session_id"]
    store = StateStore(Database(state_db_path(configured.home)))
    store.leases.acquire(session, "otherhost:1:abc", ttl=60)
    try:
        result = configured("chat", "-q", "two", "--resume", session)
    finally:
        store.close()
    assert result.code == 1
    assert "another hermes" in one_error_line(result.err)


def test_without_the_chat_front_end_hermes_says_what_is_missing(
    configured, openai_server, monkeypatch
):
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "chat")
    bare = configured()
    assert bare.code == 0
    assert "no enabled plugin provides a default command (a front-end)" in bare.out
    assert "model provider" not in bare.out  # that one is there
    once = configured("-z", "hello")
    assert once.code == 1
    assert "-z cannot ask: no enabled plugin provides a default command" in once.err
    assert "Traceback" not in once.err
    assert not openai_server.requests
