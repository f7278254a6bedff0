"""The task board end to end: a real ``hermes gateway run`` whose dispatcher hands two tasks
to two profiles' worker processes; one worker is killed with kill -9 mid-task, and its task
is taken back and finished by the other profile; every transition is in the task's history,
and the chat subscribed to it (the fake Telegram) hears that it is done once."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

from hermes_testkit import Reply

from .conftest import OWNER, polling, wait_until

KANBAN = (
    "kanban:\n  tick_seconds: 0.5\n  lease_seconds: 8\n  start_seconds: 60\n"
    "  workers: [alice, bob]\n"
)


def worker_pids(task_id: str) -> list[int]:
    """The processes working on ``task_id`` (``hermes kanban work TASK``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"work" in argv and task_id.encode() in argv and b"kanban" in argv:
            found.append(int(entry.name))
    return found


def test_a_killed_worker_s_task_is_taken_back_and_finished_by_the_other_profile(
    hermes, gateway_process, gateway_home, telegram, openai_server
):
    gateway_home(top=KANBAN)
    for profile in ("alice", "bob"):
        assert hermes("profile", "create", profile, "--clone").code == 0
    alpha = json.loads(
        hermes(
            "kanban", "create", "Alpha: sort the notes", "--notify", f"telegram:{OWNER}", "--json"
        ).out
    )["id"]
    beta = json.loads(hermes("kanban", "create", "Beta: count the files", "--json").out)["id"]

    asked: dict[str, int] = {}
    lock = threading.Lock()

    def respond(body) -> Reply:
        first = next(m["content"] for m in body["messages"] if m["role"] == "user")
        task = alpha if alpha in first else beta
        with lock:
            asked[task] = asked.get(task, 0) + 1
            attempt = asked[task]
        if task == alpha and attempt == 1:
            return Reply.say("too late", delay_seconds=120)  # killed before it answers
        return Reply.say(f"{'notes sorted' if task == alpha else '12 files'} (attempt {attempt})")

    openai_server.respond = respond
    gateway = gateway_process(top=KANBAN)
    polling(telegram)
    wait_until(lambda: asked.get(alpha, 0) == 1 and worker_pids(alpha), timeout=90)
    (pid,) = worker_pids(alpha)
    os.kill(pid, signal.SIGKILL)

    def shown(task_id: str) -> dict:
        result = hermes("kanban", "show", task_id, "--json")
        assert result.code == 0, result.err
        return json.loads(result.out)

    wait_until(lambda: shown(alpha)["task"]["status"] == "done", timeout=120)
    wait_until(lambda: shown(beta)["task"]["status"] == "done", timeout=60)
    found = shown(alpha)
    assert found["task"]["result"] == "notes sorted (attempt 2)"
    first, second = found["runs"]
    assert first["outcome"] == "reclaimed" and "ended" in first["error"]
    assert second["outcome"] == "completed"
    assert {first["profile"], second["profile"]} == {"alice", "bob"}  # finished by the other
    kinds = [event["kind"] for event in found["events"]]
    assert kinds == [
        "created",
        "claimed",
        "started",
        "reclaimed",
        "claimed",
        "started",
        "completed",
    ], kinds

    def told(mark: str) -> list[str]:
        return [m.visible for m in telegram.sent(OWNER) if mark in m.visible and alpha in m.visible]

    wait_until(lambda: told("done"), timeout=30)
    time.sleep(2)  # a few more ticks: nothing is told twice
    assert len(told("done")) == 1
    assert "notes sorted (attempt 2)" in told("done")[0]
    assert len(told("taken back")) == 1
    assert gateway.terminate() == 0
    assert not worker_pids(alpha) and not worker_pids(beta)
