"""Every due instant accounted for: the scheduler with a clock the test moves, on a real
runtime whose model is the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_cron.settings import CronConfig

from hermes_testkit import Reply

from .cron_helpers import HOUR, T0, Clock, add_job, records, with_scheduler


def statuses(found) -> list[tuple[float, str, str]]:
    return [(run.due_at - T0, run.status, run.trigger) for run in found]


def test_instants_missed_while_down_are_caught_up_once_and_the_rest_recorded(
    cron_home, openai_server
):
    job = add_job(cron_home, "every 1h")
    clock = Clock(T0 + 5 * HOUR + 600)  # the scheduler comes up after five instants
    openai_server.queue(Reply.say("caught up"), Reply.say("on time"))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        clock.now = T0 + 6 * HOUR + 1
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    found = with_scheduler(cron_home, clock, work)
    assert statuses(found) == [
        (1 * HOUR, "missed", "schedule"),
        (2 * HOUR, "missed", "schedule"),
        (3 * HOUR, "missed", "schedule"),
        (4 * HOUR, "missed", "schedule"),
        (5 * HOUR, "completed", "catch_up"),
        (6 * HOUR, "completed", "schedule"),
    ]
    assert "catch_up: latest" in (found[0].reason or "")
    outputs = [Path(run.output_path).read_text() for run in found[4:]]
    assert "caught up" in outputs[0] and "on time" in outputs[1]
    assert len(openai_server.requests) == 2  # nothing ran twice


@pytest.mark.parametrize(("policy", "ran"), [("all", 3), ("none", 0)])
def test_the_catch_up_policy_of_a_job(cron_home, openai_server, policy, ran):
    job = add_job(cron_home, "every 1h", catch_up=policy)
    openai_server.queue(*(Reply.say(f"run {n}") for n in range(ran)))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    found = with_scheduler(cron_home, Clock(T0 + 3 * HOUR + 600), work)
    assert len(found) == 3
    assert sum(run.status == "completed" for run in found) == ran
    assert sum(run.status == "missed" for run in found) == 3 - ran


def test_a_failing_run_is_recorded_with_its_reason_and_the_next_instant_runs(
    cron_home, openai_server
):
    job = add_job(cron_home, "every 1h")
    clock = Clock(T0 + HOUR + 1)
    openai_server.queue(Reply.error(500, "the model is down"), Reply.say("fine again"))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        clock.now = T0 + 2 * HOUR + 1
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    failed, ok = with_scheduler(cron_home, clock, work)
    assert failed.status == "failed" and "500" in (failed.reason or "")
    assert ok.status == "completed" and ok.due_at == T0 + 2 * HOUR


def test_two_long_jobs_due_together_both_run_at_once(cron_home, openai_server):
    first = add_job(cron_home, "every 1h", name="first")
    second = add_job(cron_home, "every 1h", name="second")
    openai_server.queue(Reply.say("one", delay_seconds=1.5), Reply.say("two", delay_seconds=1.5))

    async def work(scheduler):
        started = await scheduler.tick()
        await scheduler.idle()
        return started, records(scheduler, first) + records(scheduler, second)

    started, (a, b) = with_scheduler(cron_home, Clock(T0 + HOUR + 1), work)
    assert len(started) == 2
    assert a.status == b.status == "completed"
    assert a.started_at < b.finished_at and b.started_at < a.finished_at  # they overlapped


def test_a_paused_job_records_its_instants_skipped(cron_home, openai_server):
    job = add_job(cron_home, "every 1h")
    from hermes_plugin_cron.jobs import JobStore

    JobStore(cron_home).update(job["id"], {"paused": True})

    async def work(scheduler):
        await scheduler.tick()
        return records(scheduler, job)

    found = with_scheduler(cron_home, Clock(T0 + 2 * HOUR + 1), work)
    assert [(run.status, run.reason) for run in found] == [("skipped", "paused")] * 2
    assert not openai_server.requests


def test_an_instant_due_while_the_last_run_goes_on_is_skipped(cron_home, openai_server):
    job = add_job(cron_home, "every 1m")
    clock = Clock(T0 + 60 + 1)
    openai_server.queue(Reply.say("slow", delay_seconds=2))

    async def work(scheduler):
        await scheduler.tick()
        import asyncio

        await asyncio.sleep(0.5)  # the first run is going
        clock.now = T0 + 120 + 1
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    first, second = with_scheduler(cron_home, clock, work)
    assert first.status == "completed"
    assert (second.status, second.reason) == ("skipped", "another run of this job was still going")


def test_max_parallel_holds_and_the_rest_wait_their_turn(cron_home, openai_server):
    jobs = [add_job(cron_home, "every 1h", name=f"job{n}") for n in range(3)]
    openai_server.queue(*(Reply.say(f"r{n}", delay_seconds=0.5) for n in range(3)))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        return [records(scheduler, job)[0] for job in jobs]

    found = with_scheduler(cron_home, Clock(T0 + HOUR + 1), work, CronConfig(max_parallel=1))
    assert all(run.status == "completed" for run in found)
    spans = sorted((run.started_at, run.finished_at) for run in found)
    assert all(spans[n][1] <= spans[n + 1][0] for n in range(2))  # one at a time


def test_a_job_agent_has_no_clarify_or_cronjob_and_source_cron(cron_home, openai_server):
    job = add_job(cron_home, "every 1h")
    openai_server.queue(Reply.say("done"))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        summaries = await scheduler.runtime.sessions(source="cron")
        return records(scheduler, job), summaries

    (run,), sessions = with_scheduler(cron_home, Clock(T0 + HOUR + 1), work)
    assert run.status == "completed" and run.session_id == sessions[0].session_id
    tools = [tool["function"]["name"] for tool in openai_server.requests[0].json.get("tools", [])]
    assert "clarify" not in tools and "cronjob" not in tools
    assert tools  # the rest are there
    assert sessions[0].title == "cron: report"


def test_a_run_by_hand_does_not_use_up_a_once_jobs_single_run(cron_home, openai_server):
    from datetime import datetime

    at = datetime.fromtimestamp(T0 + 2 * HOUR).astimezone().isoformat()
    job = add_job(cron_home, at, name="later")
    openai_server.queue(Reply.say("by hand"), Reply.say("on schedule"))
    clock = Clock(T0 + 60)

    async def work(scheduler):
        await scheduler.run_now(job)
        clock.now = T0 + 2 * HOUR + 1
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    found = with_scheduler(cron_home, clock, work)
    assert [(run.trigger, run.status) for run in found] == [
        ("manual", "completed"),
        ("schedule", "completed"),
    ]


def test_an_older_jobs_file_with_a_plain_schedule_string_still_runs(cron_home, openai_server):
    from hermes_plugin_cron.jobs import JobStore

    job = add_job(cron_home, "every 1h")
    JobStore(cron_home).update(job["id"], {"schedule": "every 1h"})
    openai_server.queue(Reply.say("ran"))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    (run,) = with_scheduler(cron_home, Clock(T0 + HOUR + 1), work)
    assert run.status == "completed"


def test_a_job_budget_stops_its_run_and_the_run_says_why(cron_home, openai_server):
    job = add_job(cron_home, "every 1h", max_tokens=500)
    openai_server.queue(*(Reply.tool_call("todo", {}) for _ in range(20)), Reply.say("x"))

    async def work(scheduler):
        await scheduler.tick()
        await scheduler.idle()
        return records(scheduler, job)

    (run,) = with_scheduler(cron_home, Clock(T0 + HOUR + 1), work)
    assert run.status == "failed"
    assert "budget.session_max_tokens is 500" in (run.reason or "")
    assert len(openai_server.requests) < 20
