"""Driving a turn from the interactive chat, in a real pseudo-terminal against the scripted
model server: steer, queue, background, goal and branch, asserted on what the model was
sent (the requests) and on what the user sees."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hermes_sdk.runtime import STEER_PREFIX
from hermes_testkit import Reply

pytestmark = pytest.mark.venv


@pytest.fixture
def home(chat_home: Path) -> Path:
    return chat_home


def sessions(chat_venv, home: Path) -> list[dict]:
    run = chat_venv.hermes("sessions", "list", "--json", home=home)
    assert run.code == 0, run.err
    return [json.loads(line) for line in run.out.splitlines()]


def said(request) -> list[tuple[str, str]]:
    """(role, content) of a request's messages after the system prompt."""
    return [(m["role"], m.get("content") or "") for m in request.json["messages"][1:]]


def wait_requests(server, count: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while len(server.requests) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.requests) >= count, f"{len(server.requests)} requests, wanted {count}"


def test_steer_lands_in_the_next_model_call_of_the_same_turn(terminal, home, openai_server):
    openai_server.queue(
        Reply.tool_call("nap", {"seconds": 2}),
        Reply.say("Migrated on staging."),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("run the migration")
    term.wait_for("nap")  # the tool is running: the turn is between two model calls
    term.line("/steer use the staging database")
    term.wait_for("steering: use the staging database")
    term.wait_for("Migrated on staging.")
    first, second = openai_server.requests
    assert said(first)[-1] == ("user", "run the migration")
    roles = [role for role, _ in said(second)]
    assert roles == ["user", "assistant", "tool", "user"], said(second)
    assert said(second)[-1] == ("user", STEER_PREFIX + "use the staging database")
    term.wait_for("steered: use the staging database", in_log=True)
    term.line("/quit")
    assert term.wait_exit() == 0


def test_a_steer_after_the_last_model_call_goes_on_in_the_same_turn(terminal, home, openai_server):
    openai_server.queue(
        Reply.say("word " * 30, chunk_delay_seconds=0.08),
        Reply.say("Noted: in French next time."),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("tell me something")
    term.wait_for("word word")
    term.line("/steer answer in French")
    term.wait_for("Noted: in French next time.")
    second = openai_server.requests[1]
    assert said(second)[-1] == ("user", "answer in French")
    assert said(second)[-2][0] == "assistant" and said(second)[-2][1].startswith("word word")
    term.line("/quit")
    assert term.wait_exit() == 0


def test_queue_waits_for_the_turn_without_interrupting_it(terminal, home, openai_server):
    long_reply = "alpha " * 20 + "omega"
    openai_server.queue(Reply.say(long_reply, chunk_delay_seconds=0.05), Reply.say("Second."))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("first question")
    term.wait_for("alpha alpha")
    term.line("/queue and a second one")
    term.wait_for("queued: it goes once the running turn ends")
    term.wait_for("Second.")
    first_answer = [
        m for m in openai_server.requests[1].json["messages"] if m["role"] == "assistant"
    ]
    assert first_answer[-1]["content"] == long_reply.strip()  # finished, not cut short
    assert said(openai_server.requests[1])[-1] == ("user", "and a second one")
    term.line("/quit")
    assert term.wait_exit() == 0


def test_background_runs_in_its_own_session_while_the_chat_goes_on(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(
        Reply.say("Hello."),
        Reply.say("The logs are quiet.", delay_seconds=3),
        Reply.say("Fine, thanks."),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("hi")
    term.wait_for("Hello.")
    term.line("/bg summarise the logs")
    term.wait_for("started in the background as session")
    term.line("how are you?")
    term.wait_for("Fine, thanks.")  # answered while the task still runs
    assert "background task" not in term.seen
    term.wait_for("done: The logs are quiet.", in_log=True, timeout=20)
    listed = {s["source"]: s for s in sessions(chat_venv, home)}
    chat, task = listed["cli"], listed["background"]
    assert task["parent_session_id"] == chat["id"]
    assert said(openai_server.requests[1]) == [("user", "summarise the logs")]
    term.line("/quit")
    assert term.wait_exit() == 0


def test_a_goal_goes_on_turn_after_turn_until_the_judge_says_done(terminal, home, openai_server):
    openai_server.queue(
        Reply.say("Fixed one of the two failing tests."),
        Reply.say("CONTINUE: one test still fails"),
        Reply.say("Both tests pass now."),
        Reply.say("DONE: every test passes"),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("/goal make the tests pass")
    term.wait_for("goal set (20-turn budget)")
    term.wait_for("goal achieved: every test passes", timeout=20)
    first, judged, going_on, last_judged = openai_server.requests
    assert said(first) == [("user", "make the tests pass")]
    assert (
        "decide whether an assistant has achieved a goal" in judged.json["messages"][0]["content"]
    )
    assert "tools" not in judged.json
    assert "Fixed one of the two failing tests." in judged.json["messages"][1]["content"]
    continued = said(going_on)[-1][1]
    assert "Keep working towards the goal: make the tests pass" in continued
    assert "one test still fails" in continued
    assert "Both tests pass now." in last_judged.json["messages"][1]["content"]
    term.wait_for("continuing towards the goal (1/20): one test still fails", in_log=True)
    term.wait_for("Fixed one of the two failing tests.", in_log=True)  # the first reply stays
    term.line("/goal")
    term.wait_for("no goal; set one with /goal TEXT")
    term.line("/quit")
    assert term.wait_exit() == 0


def test_branch_goes_on_from_an_exchange_with_only_the_history_up_to_it(
    terminal, home, openai_server, chat_venv
):
    openai_server.queue(
        Reply.say("Answer one."),
        Reply.say("Answer two."),
        Reply.say("Answer three."),
        Reply.say("Another way."),
    )
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    for word in ("one", "two", "three"):
        term.line(f"question {word}")
        term.wait_for(f"Answer {word}.")
    term.line("/history")
    term.wait_for("/branch N goes on in a copy")
    assert "  2 question two" in term.text
    term.line("/branch 1 the other way")
    term.wait_for("branched into")
    term.line("question two, differently")
    term.wait_for("Another way.")
    assert said(openai_server.requests[-1]) == [
        ("user", "question one"),
        ("assistant", "Answer one."),
        ("user", "question two, differently"),
    ]
    listed = {s["title"]: s for s in sessions(chat_venv, home)}
    branch = listed["the other way"]
    original = next(s for s in listed.values() if s["id"] == branch["parent_session_id"])
    assert original["messages"] == 6 and branch["messages"] == 4
    term.line("/quit")
    assert term.wait_exit() == 0


def test_a_session_is_resumed_by_its_title(terminal, home, openai_server, chat_venv):
    openai_server.queue(Reply.say("Noted."), Reply.say("Back again."))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("my tax return")
    term.wait_for("Noted.")
    term.line("/title Tax return 2026")
    term.wait_for("title set")
    term.line("/quit")
    assert term.wait_exit() == 0
    again = terminal("-c", "tax return", home=home)
    again.wait_for("resumed")
    assert "Tax return 2026" in again.text
    again.line("go on")
    again.wait_for("Back again.")
    assert said(openai_server.requests[-1])[0] == ("user", "my tax return")
    again.line("/quit")
    assert again.wait_exit() == 0
    unknown = chat_venv.hermes("chat", "-r", "no such title", "-q", "hi", home=home)
    assert unknown.code == 1 and "no session 'no such title'" in unknown.err


def test_history_save_copy_and_clear(terminal, home, openai_server, tmp_path):
    openai_server.queue(Reply.say("The **answer**."))
    term = terminal("chat", home=home)
    term.wait_for("/help for commands")
    term.line("a question")
    term.wait_for("The answer.")
    saved = tmp_path / "chat.md"
    term.line(f"/save {saved}")
    term.wait_for("saved 2 messages to")
    text = saved.read_text()
    assert "## user\n\na question" in text and "## assistant\n\nThe **answer**." in text
    term.line("/copy")
    term.wait_for("copied the last reply (15 characters)")
    assert b"\x1b]52;c;VGhlICoqYW5zd2VyKiou\x07" in term.log  # OSC 52: base64 of the reply
    term.line("/clear")
    term.wait_for("new session")
    term.line("/quit")
    assert term.wait_exit() == 0
