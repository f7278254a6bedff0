"""``hermes cron`` as a user runs it: jobs made and changed, a run now without a gateway, a
script alone, the agent scheduling on request, bad input, and a run killed halfway."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_testkit import Reply

BIN = Path(sys.executable).parent


@pytest.fixture
def home(hermes, openai_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n"
    )
    return hermes


def jobs_of(home) -> list[dict]:
    return json.loads((home.home / "cron" / "jobs.json").read_text())["jobs"]


def run_rows(home, name: str) -> list[dict]:
    result = home("cron", "runs", name, "--json")
    assert result.code == 0, result.err
    return [json.loads(line) for line in result.out.splitlines()]


def test_jobs_are_made_listed_changed_paused_and_removed(home):
    made = home("cron", "create", "every 2h", "Summarise the news", "--name", "news")
    assert made.code == 0, made.err
    assert "created job 'news'" in made.out and "every 2h" in made.out
    (job,) = jobs_of(home)
    assert job["schedule"]["kind"] == "interval" and job["deliver"] == "local"
    assert job["repeat"] == {"times": None, "completed": 0}  # hermes-agent's fields
    listed = home("cron", "list")
    assert "news" in listed.out and "active" in listed.out
    assert home("cron", "edit", "news", "--schedule", "0 9 * * *").code == 0
    assert jobs_of(home)[0]["schedule"]["expr"] == "0 9 * * *"
    assert home("cron", "pause", "news").code == 0
    assert "paused" in home("cron", "list").out
    assert home("cron", "resume", job["id"][:6]).code == 0  # an id prefix works too
    assert home("cron", "remove", "news").code == 0
    assert jobs_of(home) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["create", "every fortnight", "x"], "is not a duration"),
        (["create", "61 * * * *", "x"], "not a valid cron expression"),
        (["create", "1h", "x", "--timezone", "Mars/Base"], "unknown time zone"),
        (["create", "1h", "x", "--workdir", "/no/such/folder"], "no such folder"),
        (["create", "1h", "--no-agent"], "give --script PATH"),
        (["run", "nobody"], "no job 'nobody'"),
    ],
)
def test_bad_input_is_one_line_that_says_what_to_fix(home, args, says):
    result = home("cron", *args)
    assert result.code != 0
    assert says in result.err
    assert "Traceback" not in result.err


def test_a_broken_jobs_file_is_named_and_left_as_it_was(home):
    folder = home.home / "cron"
    folder.mkdir()
    (folder / "jobs.json").write_text('{"jobs": [ {"id": "x",')
    result = home("cron", "list")
    assert result.code == 1 and "jobs.json: not valid JSON" in result.err
    assert (folder / "jobs.json").read_text() == '{"jobs": [ {"id": "x",'


def test_cron_run_without_a_gateway_runs_here_and_waits(home, openai_server):
    home("cron", "create", "every 1d", "Write the daily report", "--name", "daily")
    openai_server.queue(Reply.say("Today all is well."))
    result = home("cron", "run", "daily")
    assert result.code == 0, result.err
    assert "manual" in result.out and "completed" in result.out
    output = Path(result.out.split("output: ")[1].strip())
    assert "Today all is well." in output.read_text()
    (row,) = run_rows(home, "daily")
    assert row["status"] == "completed" and row["session_id"]
    (request,) = openai_server.requests
    user = next(m["content"] for m in request.json["messages"] if m["role"] == "user")
    assert "Write the daily report" in user and "nobody is there to answer" in user
    assert jobs_of(home)[0]["last_status"] == "ok"


def test_a_failed_run_exits_1_and_is_shown_until_looked_at(home, openai_server):
    home("cron", "create", "every 1d", "Try", "--name", "fragile")
    openai_server.queue(Reply.error(400, "bad request from the model"))
    result = home("cron", "run", "fragile")
    assert result.code == 1
    assert "failed" in result.out
    status = home("cron", "status")
    assert "1 runs failed since you last looked" in status.out
    assert "fragile" in status.out
    assert "failed since" not in home("cron", "status").out  # seen now
    assert "1 failed" in home("status").out  # hermes status says so too


def test_a_script_alone_delivers_its_output(home, tmp_path):
    script = tmp_path / "disk.sh"
    script.write_text("#!/bin/sh\necho disk is 42% full\nenv | grep -c OPENAI || true\n")
    script.chmod(0o755)
    os.environ["OPENAI_API_KEY"] = "sk-never-in-a-script"
    try:
        assert home("cron", "create", "1h", "--script", str(script), "--no-agent").code == 0
        result = home("cron", "run", "disk.sh")
    finally:
        del os.environ["OPENAI_API_KEY"]
    assert result.code == 0, result.err
    output = Path(result.out.split("output: ")[1].strip()).read_text()
    assert "disk is 42% full" in output
    assert "\n0\n" in output  # no key reached the script's environment


def test_tick_is_refused_while_a_scheduler_runs(home):
    from hermes_plugin_cron.scheduler import scheduler_lock

    held = scheduler_lock(str(home.home))
    try:
        result = home("cron", "tick")
    finally:
        held.release()
    assert result.code == 1
    assert f"the scheduler of this home runs in pid {os.getpid()}" in result.err


def test_the_agent_schedules_on_request(home, openai_server):
    openai_server.queue(
        Reply.tool_call(
            "cronjob",
            {"action": "create", "schedule": "0 8 * * *", "prompt": "Say good morning"},
        ),
        Reply.say("Done: every morning at 8."),
    )
    result = home("chat", "-q", "remind me every morning", "--json")
    assert result.code == 0, result.err
    (job,) = jobs_of(home)
    assert job["schedule"]["expr"] == "0 8 * * *"
    assert job["deliver"] == "local"  # from the terminal: no chat to deliver to
    tool_result = [m for m in openai_server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "scheduled job" in tool_result[0]["content"]


def test_a_run_killed_halfway_is_unknown_and_never_rerun(home, openai_server):
    home("cron", "create", "every 1d", "Long job", "--name", "long")
    openai_server.queue(Reply.say("never delivered", delay_seconds=60))
    env = {**os.environ, "HERMES_HOME": str(home.home)}
    process = subprocess.Popen(
        [str(BIN / "hermes"), "cron", "run", "long"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    database = home.home / "state.db"
    deadline = time.monotonic() + 30
    while True:
        assert time.monotonic() < deadline, "the run never started"
        if database.exists() and openai_server.requests:
            with sqlite3.connect(database) as db:
                if db.execute("SELECT 1 FROM cron_runs WHERE status = 'running'").fetchone():
                    break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    tick = home("cron", "tick")  # the next scheduler to start finds it
    assert tick.code == 0, tick.err
    (row,) = run_rows(home, "long")
    assert row["status"] == "unknown"
    assert "effect is unknown" in row["reason"]
    assert len(openai_server.requests) == 1  # not run again
