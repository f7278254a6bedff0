"""delegate_task through the whole agent: children in parallel with their goals as first
messages, linked sessions, a failing child beside a good one, the depth limit, and a stop
that reaches the children."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time

from hermes_sdk.runtime import SessionOptions, open_runtime
from hermes_testkit import Reply

GOALS = ["Count the files in /tmp", "Say which day it is"]


def configure(hermes, openai_server, extra: str = "") -> None:
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n" + extra
    )


def delegate(*goals: str) -> Reply:
    return Reply.tool_call(
        "delegate_task", {"tasks": [{"goal": goal, "context": "be brief"} for goal in goals]}
    )


def first_user(request) -> str:
    return next(m["content"] for m in request.json["messages"] if m["role"] == "user")


def tools_of(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.json.get("tools") or []}


def child_requests(openai_server) -> list:
    return [r for r in openai_server.requests if any(first_user(r).startswith(g) for g in GOALS)]


def report_of(openai_server) -> list[dict]:
    final = openai_server.requests[-1].json["messages"]
    (result,) = [m for m in final if m["role"] == "tool"]
    return json.loads(result["content"])["children"]


def test_two_children_work_in_parallel_and_report_back(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.queue(
        delegate(*GOALS),
        Reply.say("child summary", delay_seconds=1),
        Reply.say("child summary", delay_seconds=1),
        Reply.say("Both are done."),
    )
    started = time.monotonic()
    result = hermes("chat", "-q", "do two things", "--json")
    took = time.monotonic() - started
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["reply"] == "Both are done."
    children = child_requests(openai_server)
    assert sorted(first_user(r).split("\n")[0] for r in children) == sorted(GOALS)
    for request in children:
        assert "delegate_task" not in tools_of(request)
        assert not {"clarify", "memory"} & tools_of(request)
        assert "be brief" in first_user(request)
    assert "delegate_task" in tools_of(openai_server.requests[0])
    report = report_of(openai_server)
    assert [child["status"] for child in report] == ["completed", "completed"]
    assert [child["goal"] for child in report] == GOALS
    assert all(child["summary"] == "child summary" for child in report)
    assert took < 5  # two one-second children ran side by side
    with sqlite3.connect(hermes.home / "state.db") as db:
        linked = db.execute(
            "SELECT id, source FROM sessions WHERE parent_session_id = ?",
            (payload["session_id"],),
        ).fetchall()
    assert sorted(source for _, source in linked) == ["delegate", "delegate"]
    assert {child["session_id"] for child in report} == {session_id for session_id, _ in linked}


def test_a_failing_child_is_reported_failed_while_the_other_succeeds(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.queue(
        delegate(*GOALS),
        Reply.error(400, "this child's model refused"),
        Reply.say("the other one worked"),
        Reply.say("One failed."),
    )
    result = hermes("chat", "-q", "do two things", "--json")
    assert result.code == 0, result.err
    report = report_of(openai_server)
    assert sorted(child["status"] for child in report) == ["completed", "failed"]
    failed = next(child for child in report if child["status"] == "failed")
    assert "400" in failed["error"]


def test_the_depth_limit_decides_whether_children_may_delegate(hermes, openai_server):
    configure(hermes, openai_server, "delegation:\n  max_depth: 2\n")
    openai_server.queue(delegate(GOALS[0]), Reply.say("child"), Reply.say("done"))
    assert hermes("chat", "-q", "go").code == 0
    (child,) = child_requests(openai_server)
    assert "delegate_task" in tools_of(child)  # depth 1 of 2: it may


def test_stopping_the_parent_stops_its_children(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.queue(delegate(GOALS[0]), Reply.say("too late", delay_seconds=5))

    async def main() -> tuple[float, str, list]:
        async with open_runtime(hermes.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "delegate it")
            while len(openai_server.requests) < 2:  # the child asked its model
                await asyncio.sleep(0.05)
            stopped_at = time.monotonic()
            turn.stop()
            ended = await turn.result()
            took = time.monotonic() - stopped_at
            children = await runtime.sessions(source="delegate")
            return took, ended.status, children

    took, status, children = asyncio.run(main())
    assert status == "stopped"
    assert took < 3  # about a second, not the child's five
    (child,) = children
    assert child.ended_at is not None  # the child's session was ended with its parent's turn


def test_sessions_show_lists_the_delegated_tasks_and_their_usage(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.queue(delegate(GOALS[0]), Reply.say("child"), Reply.say("done"))
    result = hermes("chat", "-q", "go", "--json")
    parent = json.loads(result.out)["session_id"]
    shown = hermes("sessions", "show", parent)
    assert shown.code == 0, shown.err
    # Each child, labelled by its source (the kernel knows none by name), with its usage.
    assert re.search(r"^  delegate \S+: delegated: Count the files in /tmp; ", shown.out, re.M), (
        shown.out
    )


def test_a_token_budget_holds_for_the_parent_and_its_children_together(hermes, openai_server):
    configure(hermes, openai_server, "budget:\n  session_max_tokens: 15000\n")
    openai_server.queue(
        delegate(GOALS[0]),
        *(Reply.tool_call("todo", {}) for _ in range(30)),  # the child runs away
        Reply.say("never reached"),
    )
    result = hermes("chat", "-q", "go", "--json")
    payload = json.loads(result.out)
    with sqlite3.connect(hermes.home / "state.db") as db:
        (stored,) = db.execute(
            "SELECT content FROM messages WHERE tool_name = 'delegate_task'"
        ).fetchone()
    report = json.loads(stored)["children"]
    assert report[0]["status"] == "failed"
    assert "budget.session_max_tokens is 15,000" in report[0]["error"]
    assert len(openai_server.requests) < 30
    # The parent's next call would pass the budget too: the turn ends saying so.
    assert payload["status"] == "budget"


def test_a_child_with_no_progress_is_stopped_and_reported_timed_out(hermes, openai_server):
    configure(hermes, openai_server, "delegation:\n  stale_after_seconds: 1\n")
    openai_server.queue(
        delegate(GOALS[0]), Reply.say("too slow", delay_seconds=4), Reply.say("Noted.")
    )
    result = hermes("chat", "-q", "go", "--json")
    assert result.code == 0, result.err
    (child,) = report_of(openai_server)
    assert child["status"] == "timed out"
    assert child["error"] == "no progress for 1 s"


def test_a_childs_dangerous_command_is_denied_nobody_being_there(hermes, openai_server, tmp_path):
    configure(hermes, openai_server)
    target = tmp_path / "precious"
    target.mkdir()
    openai_server.queue(
        delegate(GOALS[0]),
        Reply.tool_call("terminal", {"command": f"rm -rf {target}"}),
        Reply.say("I could not delete it: the command was refused."),
        Reply.say("The child reports a refusal."),
    )
    result = hermes("chat", "-q", "go", "--json")
    assert result.code == 0, result.err
    assert target.exists()
    child_results = [
        m["content"]
        for r in child_requests(openai_server)
        for m in r.json["messages"]
        if m["role"] == "tool"
    ]
    assert any("refused" in text for text in child_results), child_results
    (child,) = report_of(openai_server)
    assert child["status"] == "completed" and "refused" in child["summary"]
