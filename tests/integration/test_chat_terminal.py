"""The interactive chat, driven in a real pseudo-terminal against the scripted model server:
what the user sees on screen, and what the model server and the store see."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hermes_testkit import Reply

pytestmark = pytest.mark.venv


@pytest.fixture
def home(chat_home: Path) -> Path:
    return chat_home


def sessions(chat_venv, home: Path) -> list[dict]:
    run = chat_venv.hermes("sessions", "list", "--json", home=home)
    assert run.code == 0, run.err
    return [json.loads(line) for line in run.out.splitlines()]


def messages(chat_venv, home: Path, session_id: str) -> list[dict]:
    run = chat_venv.hermes("sessions", "export", session_id, home=home)
    assert run.code == 0, run.err
    return [json.loads(line) for line in run.out.splitlines()]


def test_a_reply_streams_then_renders_and_a_tool_call_gets_its_line(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(
        Reply.tool_call("shout", {"text": "quiet words"}),
        Reply.say("Here is **the answer**, slowly streamed.", chunk_delay_seconds=0.25),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("make it loud")
    term.wait_for("✓ shout  quiet words")
    term.wait_for("QUIET WORDS")  # the result's preview
    term.wait_for("Here is **the")  # raw text, still streaming, in the live area
    assert "slowly streamed." not in term.text
    term.wait_for("Here is the answer, slowly streamed.")  # rendered as Markdown at the end
    assert "**" not in term.text.split("make it loud")[-1].split("Here is the answer")[1]
    tool_message = openai_server.requests[-1].json["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "QUIET WORDS"
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_sessions_lists_each_session_by_what_it_is_about(terminal, home, openai_server, chat_venv):
    openai_server.queue(Reply.say("Lima."))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("what is the capital of peru?")
    term.wait_for("Lima.")
    (session,) = sessions(chat_venv, home)
    term.line("/sessions")
    term.wait_for("/resume ID continues one")
    (row,) = [line for line in term.text.splitlines() if session["id"] in line]
    assert row.lstrip().startswith("*") and row.endswith("what is the capital of peru?")
    term.line("/quit")
    assert term.wait_exit() == 0


def test_new_starts_a_second_session_and_model_switches_the_next_request(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(Reply.say("first"), Reply.say("second"))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("one")
    term.wait_for("first")
    term.line("/new")
    term.wait_for("new session")
    term.line("/model other-model")
    term.wait_for("now using local-endpoint / other-model")
    term.line("two")
    term.wait_for("second")
    term.line("/quit")
    assert term.wait_exit() == 0
    assert [request.json["model"] for request in openai_server.requests] == [
        "test-model",
        "other-model",
    ]
    assert openai_server.requests[-1].json["messages"][-1]["content"] == "two"
    assert len(openai_server.requests[-1].json["messages"]) == 2  # system + "two": fresh
    assert len(sessions(chat_venv, home)) == 2


def test_ctrl_c_stops_a_turn_keeping_the_text_and_twice_exits(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(Reply.say("word " * 200, chunk_size=5, chunk_delay_seconds=0.1))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("talk for a long time")
    term.wait_for("word word word")
    term.ctrl("c")
    term.wait_for("interrupted; the text so far is kept")
    time.sleep(2.1)  # the next Ctrl+C is not a double press
    term.type("a draft")
    term.ctrl("c")  # clears the draft
    term.pump(0.3)
    assert "a draft" not in term.text
    term.ctrl("c")
    term.wait_for("Ctrl+C again to exit")
    term.ctrl("c")
    assert term.wait_exit() == 0
    (session,) = sessions(chat_venv, home)
    stored = messages(chat_venv, home, session["id"])
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["finish_reason"] == "interrupted"
    assert stored[1]["content"].startswith("word word")
    assert len(stored[1]["content"]) < len("word " * 200)


def test_resume_shows_the_last_exchange_and_sends_the_history(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(Reply.say("Paris is the capital."), Reply.say("About 2 million."))
    run = chat_venv.hermes("chat", "-q", "capital of France?", home=home)
    assert run.code == 0, run.err
    (session,) = sessions(chat_venv, home)
    term = terminal("chat", "--resume", session["id"][:17], home=home)
    term.wait_for(f"resumed {session['id']}")
    term.wait_for("Paris is the capital.")
    term.line("and its population?")
    term.wait_for("About 2 million.")
    term.ctrl("d")
    assert term.wait_exit() == 0
    sent = [m["content"] for m in openai_server.requests[-1].json["messages"][1:]]
    assert sent == ["capital of France?", "Paris is the capital.", "and its population?"]
    assert len(sessions(chat_venv, home)) == 1


def test_slash_commands_from_plugins_and_a_clash_refused(terminal, home, chat_venv):
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    assert "/help is a built-in command" in term.text  # the plugin's /help is refused
    term.line("/ping hello")
    term.wait_for("pong hello (session None)")
    term.line("/help")
    term.wait_for("/ping")
    assert "hijacked" not in term.text
    term.line("/tools")
    term.wait_for("nap")
    term.line("/nosuch")
    term.wait_for("unknown command /nosuch")
    term.line("/exit")
    assert term.wait_exit() == 0


def test_a_long_paste_is_collapsed_and_sent_whole(terminal, home, openai_server):
    openai_server.queue(Reply.say("got it"))
    pasted = (
        "\n".join(f"line {n} of the log" for n in range(40)) + "\n"
    )  # as copied: a final newline
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.type(f"\x1b[200~{pasted}\x1b[201~")
    term.wait_for("[pasted text #1: 40 lines")
    term.line(" what is this?")
    term.wait_for("got it")
    sent = openai_server.requests[-1].json["messages"][-1]["content"]
    assert sent == pasted + " what is this?"
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_a_message_typed_during_a_turn_waits_for_the_step_and_goes_next(
    terminal, home, openai_server
):
    openai_server.queue(Reply.tool_call("nap", {"seconds": 1.5}), Reply.say("answer to the second"))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("take a nap")
    term.wait_for("nap", in_log=True)
    term.line("second thought")
    term.wait_for("queued")
    term.wait_for("answer to the second")
    # The first turn ended after its tool step, without asking the model again; the queued
    # message went next, with the tool's result in its history.
    assert len(openai_server.requests) == 2
    history = [m.get("content") for m in openai_server.requests[1].json["messages"]]
    assert history[-3:] == ["", "slept 1.5 s", "second thought"]
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_undo_retry_title_and_usage(terminal, home, openai_server, chat_venv):
    openai_server.queue(
        Reply.say("wrong", usage={"prompt_tokens": 7, "completion_tokens": 2}),
        Reply.say("better"),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("question")
    term.wait_for("wrong")
    term.line("/retry")
    term.wait_for("removed the last exchange (2 messages)")
    term.wait_for("better")
    term.line("/title my topic")
    term.wait_for("title set: my topic")
    term.line("/usage")
    term.wait_for("2 messages, 0 tool calls")
    term.line("/undo")
    term.wait_for("removed the last exchange (2 messages)", in_log=True)
    term.ctrl("d")
    assert term.wait_exit() == 0
    assert openai_server.requests[1].json["messages"][-1]["content"] == "question"
    assert len(openai_server.requests[1].json["messages"]) == 2  # "wrong" was undone first
    (session,) = sessions(chat_venv, home)
    assert session["title"] == "my topic" and session["messages"] == 0
    assert session["usage"]["input_tokens"] >= 7  # paid-for tokens stay in the totals


def test_leaving_during_a_tool_call_leaves_a_valid_transcript(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(Reply.tool_call("nap", {"seconds": 30}))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("nap for a long time")
    term.wait_for("nap", in_log=True)
    term.pump(0.5)
    term.ctrl("d")
    assert term.wait_exit(timeout=10) == 0
    (session,) = sessions(chat_venv, home)
    stored = messages(chat_venv, home, session["id"])
    assert [m["role"] for m in stored] == ["user", "assistant", "tool"]
    assert stored[2]["disposition"] in ("skipped", "unknown")  # never claimed to have run


def asked(term, times: int) -> None:
    """Wait for the approval question to have been asked ``times`` times in all (earlier
    ones stay on the screen, so waiting for its words would not wait)."""
    deadline = time.monotonic() + 15
    while term.seen.count("(no answer in 120 s counts as no)") < times:
        assert time.monotonic() < deadline, f"asked fewer than {times} times:\n{term.text}"
        term.pump(0.05)


def test_a_dangerous_command_asks_at_the_prompt(terminal, home, openai_server, tmp_path):
    command = "chmod -R 777 ./no-such-dir"
    openai_server.queue(
        Reply.tool_call("terminal", {"command": command}),
        Reply.say("Ran it once."),
        Reply.tool_call("terminal", {"command": command}),
        Reply.say("It was denied."),
        Reply.tool_call("terminal", {"command": command}),
        Reply.say("Allowed from now on."),
        Reply.tool_call("terminal", {"command": command}),
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./another-dir"}),
        Reply.say("The second one was asked about."),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("open it up")
    term.wait_for("makes files writable by everyone")
    term.wait_for("o/s/c/a/d (no answer in")
    # Each answer is listed with what it allows before the user picks one (the lines may
    # wrap at the terminal's edge: compared with their spaces and breaks run together).
    screen = term.text
    flat = " ".join(screen.split())
    for line in (
        "o Allow this command once",
        "s Allow every command that makes files writable by everyone, for this session",
        "c Always allow exactly this command: saves approvals.allow_commands: "
        f'["{command}"] in config.yaml',
        "a Always allow every command that makes files writable by everyone: saves "
        "approvals.allow: [world-writable] in config.yaml",
    ):
        assert line in flat, screen
    assert "hermes: info" not in screen  # log lines stay in the log
    term.line("o")
    term.wait_for("Ran it once.")
    after = term.text.split("counts as no)\n", 1)[1].splitlines()
    # Right under the question: the decision in words, then the tool's line. Neither the
    # letter typed, nor a log line, nor a frozen frame of the spinner above the prompt.
    assert after[0] == "Allow this command once", term.text
    assert after[1].startswith("  ✓ terminal  chmod -R 777 ./no-such-dir"), term.text
    term.line("again")
    asked(term, 2)  # once means once
    term.line("d")
    term.wait_for("It was denied.")
    term.line("and now for good")
    asked(term, 3)
    term.line("c")
    term.wait_for("Allowed from now on.")
    assert f'["{command}"] in' in term.text  # said where, and how narrow
    saved = (home / "config.yaml").read_text()
    assert "allow_commands:\n  - chmod -R 777 ./no-such-dir" in saved, saved
    term.line("run it again, then another")
    asked(term, 4)  # only the other command is asked about
    assert "another-dir" in term.seen.split("run it again")[-1]
    term.line("d")
    term.wait_for("The second one was asked about.")
    results = [
        message["content"]
        for message in openai_server.requests[-1].json["messages"]
        if message["role"] == "tool"
    ]
    assert results[0].startswith("exit code 1")  # it ran: chmod found no such directory
    assert results[1].startswith("refused: the user denied this command")
    assert results[2].startswith("exit code 1")  # allowed exactly, always
    assert results[3].startswith("exit code 1")  # the same text: not asked again
    assert results[4].startswith("refused: the user denied this command")
    term.line("/exit")
    term.wait_for("to go on with this chat: hermes chat --resume ")
    assert term.wait_exit() == 0


def test_compact_with_a_focus_summarizes_the_chat_and_it_goes_on(
    terminal, home, openai_server, chat_venv
):
    columns = " ".join(f"column_{i} text," for i in range(150))
    openai_server.queue(
        Reply.say(f"The schema has tables users and orders. Users: {columns}"),
        Reply.say("Noted: orders.user_id references users.id."),
        Reply.say("SUMMARY: users and orders; orders.user_id references users.id."),
        Reply.say("Add an index on orders.user_id."),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("describe the schema")
    term.wait_for("tables users and orders")
    term.line("and the foreign key?")
    term.wait_for("references users.id.")
    term.line("/compact the database schema")
    term.wait_for("compacted 2 earlier messages into a summary written by the model")
    summarizing = openai_server.requests[2].json["messages"]
    assert "keep above all: the database schema" in summarizing[0]["content"]
    assert "describe the schema" in summarizing[1]["content"]
    term.line("what should I index?")
    term.wait_for("Add an index on orders.user_id.")
    sent = openai_server.requests[-1].json["messages"]
    assert "SUMMARY: users and orders" in sent[1]["content"]
    assert [m["content"] for m in sent[2:]] == [
        "and the foreign key?",
        "Noted: orders.user_id references users.id.",
        "what should I index?",
    ]
    term.line("/exit")
    assert term.wait_exit() == 0
    (session,) = sessions(chat_venv, home)
    assert len(messages(chat_venv, home, session["id"])) == 6  # the transcript is whole


def test_an_mcp_servers_progress_shows_beside_the_running_call(
    terminal, home, openai_server, chat_venv
):
    server = Path(__file__).resolve().parents[2] / "plugins" / "mcp" / "tests" / "fault_server.py"
    config = home / "config.yaml"
    config.write_text(
        config.read_text()
        + f"mcp_servers:\n  faults:\n    command: {chat_venv.path / 'bin' / 'python'}\n"
        + f"    args: [{server}]\n"
    )
    openai_server.queue(Reply.tool_call("mcp_faults_slow_progress", {}), Reply.say("It finished."))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("take your time")
    term.wait_for("halfway (1/2)", timeout=20, in_log=True)  # the live area, while it runs
    term.wait_for("It finished.", timeout=20)
    term.line("/exit")
    assert term.wait_exit() == 0
