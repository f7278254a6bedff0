"""delegate_task in the background through the whole agent: the parent gets handles at once
and chats on; one child is steered mid-run (its next model call carries the note) and one
is stopped; the report of both arrives through the front-end's ``later`` and is answered in
a follow-up turn; ``/agents`` and ``delegate_list`` list them; a child left by a process that
ended is listed as lost; a run that takes no reports waits for its children as before."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from hermes_sdk.runtime import REPORT_PREFIX, SessionOptions, open_runtime
from hermes_testkit import Reply

STEER = "use the fast path, not the slow one"


def configure(hermes, openai_server) -> None:
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n"
    )


def first_user(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def last_user(body) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def tool_results(body) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def parent_reply(body) -> Reply:
    said = last_user(body)
    after_tool = body["messages"][-1]["role"] == "tool"
    if said.startswith(REPORT_PREFIX):
        return Reply.say("Both subagents reported back.")
    if said == "start two tasks":
        if after_tool:
            return Reply.say("Started two subagents.")
        tasks = [{"goal": "Task one: tidy the notes"}, {"goal": "Task two: a long survey"}]
        return Reply.tool_call("delegate_task", {"tasks": tasks})
    if said == "steer the first":
        if after_tool:
            return Reply.say("Told it.")
        return Reply.tool_call("delegate_steer", {"handle": "d1", "note": STEER})
    if said == "stop the second":
        if after_tool:
            return Reply.say("Stopping it.")
        return Reply.tool_call("delegate_stop", {"handle": "d2"})
    if said == "list them":
        if after_tool:
            return Reply.say(tool_results(body)[-1])
        return Reply.tool_call("delegate_list", {})
    return Reply.say("ok")


def respond(body) -> Reply:
    opening = first_user(body)
    if opening.startswith("Task one"):
        if not tool_results(body):  # a slow first step, during which it is steered
            return Reply.tool_call("todo", {"todos": []}, delay_seconds=3)
        return Reply.say("Notes tidied on the fast path.")
    if opening.startswith("Task two"):
        return Reply.say("never finished", delay_seconds=60)
    return parent_reply(body)


def test_children_in_the_background_are_steered_stopped_and_reported(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.respond = respond

    def child_asked(goal: str) -> list:
        return [r for r in openai_server.requests if first_user(r.json).startswith(goal)]

    async def main() -> dict:
        reports: asyncio.Queue[str] = asyncio.Queue()
        seen: dict = {}
        async with open_runtime(hermes.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            sid = session.session_id

            async def say(text: str) -> str:
                turn = runtime.start_turn(sid, text, later=reports.put_nowait)
                ended = await asyncio.wait_for(turn.result(), 30)
                assert ended.ok, ended.error
                return ended.reply

            seen["started"] = await say("start two tasks")
            parent = [
                r.json for r in openai_server.requests if first_user(r.json) == "start two tasks"
            ]
            handles = json.loads(tool_results(parent[-1])[-1])
            seen["handles"] = [child["handle"] for child in handles["children"]]
            while not (child_asked("Task one") and child_asked("Task two")):
                await asyncio.sleep(0.05)
            seen["steered"] = await say("steer the first")
            seen["stopped"] = await say("stop the second")
            seen["agents"] = (await runtime.run_slash("agents", "", sid)).text
            report = await asyncio.wait_for(reports.get(), 30)
            seen["report"] = report
            seen["answer"] = await say(report)
            seen["listed"] = await say("list them")
        return seen

    seen = asyncio.run(main())
    assert seen["started"] == "Started two subagents."  # at once, while both still work
    assert seen["handles"] == ["d1", "d2"]
    steered = child_asked_all(openai_server, "Task one")
    assert len(steered) == 2
    assert STEER not in json.dumps(steered[0].json)
    assert STEER in json.dumps(steered[1].json["messages"])  # its next call carries the note
    assert "d1 [running" in seen["agents"] and "d2 [" in seen["agents"]
    report = seen["report"]
    assert report.startswith(REPORT_PREFIX)
    assert "d1 (completed): Task one" in report
    assert "Notes tidied on the fast path." in report
    assert "d2 (stopped): Task two" in report
    assert seen["answer"] == "Both subagents reported back."
    assert "d1 [completed" in seen["listed"] and "d2 [stopped" in seen["listed"]


def child_asked_all(openai_server, goal: str) -> list:
    return [r for r in openai_server.requests if first_user(r.json).startswith(goal)]


FIRST_PROCESS = """
import asyncio, os, sys
from hermes_sdk.runtime import SessionOptions, open_runtime

async def main():
    async with open_runtime(sys.argv[1]) as runtime:
        session = await runtime.open_session(SessionOptions(source="test"))
        print(session.session_id, flush=True)
        turn = runtime.start_turn(session.session_id, "start two tasks", later=print)
        await turn.result()
        await asyncio.sleep(0.5)  # the children are asking their models now
        os._exit(9)  # as kill -9 would: nothing is ended or told

asyncio.run(main())
"""


def test_a_child_left_by_a_process_that_was_killed_is_listed_as_lost(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.respond = respond
    killed = subprocess.run(
        [sys.executable, "-c", FIRST_PROCESS, str(hermes.home)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HERMES_HOME": str(hermes.home)},
    )
    assert killed.returncode == 9, killed.stderr
    parent = killed.stdout.split()[0]

    async def next_process() -> str:
        async with open_runtime(hermes.home) as runtime:
            await runtime.resume_session(parent)
            turn = runtime.start_turn(parent, "list them")
            return (await asyncio.wait_for(turn.result(), 30)).reply

    listed = asyncio.run(next_process()).splitlines()
    lost = [line for line in listed if "[lost: the process that ran it ended]" in line]
    assert len(lost) == 2, listed
    assert any("Task two" in line for line in lost)


def test_without_a_taker_of_reports_the_children_are_waited_for(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.queue(
        Reply.tool_call("delegate_task", {"tasks": [{"goal": "Say hi"}]}),
        Reply.say("hi from the child"),
        Reply.say("The child said hi."),
    )
    result = hermes("chat", "-q", "delegate it", "--json")
    assert result.code == 0, result.err
    final = openai_server.requests[-1].json["messages"]
    report = json.loads(next(m["content"] for m in final if m["role"] == "tool"))
    assert report["children"][0]["status"] == "completed"
    assert report["children"][0]["summary"] == "hi from the child"
    assert "takes no reports" in report["note"]
