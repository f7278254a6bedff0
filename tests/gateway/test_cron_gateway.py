"""Scheduled jobs in a real ``hermes gateway run``: the scheduler is one of its services, and
a job's result reaches a chat through the delivery ledger, across a kill -9 too."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

from hermes_plugin_cron.jobs import JobStore, make_job

from hermes_testkit import Reply

from .conftest import OWNER, polling, wait_until

FAST_SCHEDULER = "cron:\n  tick_seconds: 0.2\n"


def reports(telegram) -> list[str]:
    return [m.visible for m in telegram.sent(OWNER) if "the cron report" in m.visible]


def run_statuses(home) -> list[str]:
    with sqlite3.connect(home / "state.db") as db:
        return [row[0] for row in db.execute("SELECT status FROM cron_runs ORDER BY id")]


def test_a_job_result_is_delivered_to_a_chat(
    gateway_process, gateway_home, telegram, openai_server
):
    home = gateway_home(top=FAST_SCHEDULER)
    JobStore(home).add(make_job("3s", "Report", name="report", deliver=f"telegram:{OWNER}"))
    openai_server.queue(Reply.say("the cron report: all fine"))
    gateway = gateway_process(top=FAST_SCHEDULER)
    polling(telegram)
    wait_until(lambda: len(reports(telegram)) == 1, timeout=30)
    assert reports(telegram) == ["report\n\nthe cron report: all fine"]
    wait_until(lambda: run_statuses(home) == ["completed"])
    assert gateway.terminate() == 0
    (job,) = json.loads((home / "cron" / "jobs.json").read_text())["jobs"]
    assert job["last_status"] == "ok" and job["enabled"] is False  # once: done


def test_a_delivery_cut_by_a_kill_arrives_once_after_the_restart(
    gateway_process, gateway_home, telegram, openai_server
):
    home = gateway_home(top=FAST_SCHEDULER)
    JobStore(home).add(make_job("3s", "Report", name="report", deliver=f"telegram:{OWNER}"))
    openai_server.queue(Reply.say("the cron report, sent once"))
    # Held from before the start: under load the job may be due, run and deliver before the
    # test sees the first poll, and a report sent unheld would never be held.
    with telegram.holding("sendMessage", "the cron report", drop=True):
        first = gateway_process(top=FAST_SCHEDULER)
        wait_until(lambda: telegram.held("sendMessage") == 1, timeout=90)
        first.kill()  # the send is in flight: never confirmed
    assert reports(telegram) == []
    assert run_statuses(home) == ["completed"]  # recorded before it was sent

    second = gateway_process(top=FAST_SCHEDULER)
    wait_until(lambda: len(reports(telegram)) == 1, timeout=90)
    assert len(openai_server.requests) == 1  # the job did not run again
    assert second.terminate() == 0
    assert len(reports(telegram)) == 1


def test_cron_run_hands_the_run_to_the_gateway_and_waits(
    gateway_process, gateway_home, telegram, openai_server
):
    home = gateway_home(top=FAST_SCHEDULER)
    JobStore(home).add(make_job("every 1d", "Report", name="daily", deliver=f"telegram:{OWNER}"))
    openai_server.queue(Reply.say("the cron report, on demand"))
    gateway = gateway_process(top=FAST_SCHEDULER)
    polling(telegram)
    done = subprocess.run(
        [sys.executable, "-m", "hermes_kernel.cli.main", "cron", "run", "daily"],
        env={**os.environ, "HERMES_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "the scheduler of this home runs in pid" in done.stdout
    assert "manual" in done.stdout and "completed" in done.stdout
    wait_until(lambda: len(reports(telegram)) == 1, timeout=30)
    assert gateway.terminate() == 0


def test_a_failed_run_is_delivered_as_a_short_notice(
    gateway_process, gateway_home, telegram, openai_server
):
    home = gateway_home(top=FAST_SCHEDULER)
    JobStore(home).add(make_job("3s", "Report", name="fragile", deliver=f"telegram:{OWNER}"))
    openai_server.queue(Reply.error(400, "the model refused"))
    gateway = gateway_process(top=FAST_SCHEDULER)
    polling(telegram)

    def notices() -> list[str]:
        return [m.visible for m in telegram.sent(OWNER) if "failed" in m.visible]

    wait_until(lambda: len(notices()) == 1, timeout=30)
    assert notices()[0].startswith("Scheduled job 'fragile' failed: ")
    assert run_statuses(home) == ["failed"]
    assert gateway.terminate() == 0
