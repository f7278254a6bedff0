"""The run log in the home's state store: one record per due instant on SQLite and on
PostgreSQL, and a home's old ``cron/runs.db`` brought in once."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from hermes_plugin_cron.runs import Batch, Claim, RunLog

OLD_LOG = """
CREATE TABLE runs (id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, job_name TEXT NOT NULL,
    due_at REAL NOT NULL, trigger TEXT NOT NULL DEFAULT 'schedule', status TEXT NOT NULL,
    reason TEXT, claimed_at REAL NOT NULL, started_at REAL, finished_at REAL, owner INTEGER,
    session_id TEXT, output_path TEXT, delivery TEXT, UNIQUE (job_id, due_at, trigger));
CREATE TABLE cursors (job_id TEXT PRIMARY KEY, next_due REAL);
CREATE TABLE requests (id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, requested_at REAL NOT NULL,
    run_id INTEGER);
CREATE TABLE marks (name TEXT PRIMARY KEY, at REAL NOT NULL);
INSERT INTO runs VALUES (7, 'j1', 'daily', 100.0, 'schedule', 'completed', NULL, 100.0, 100.5,
    101.0, 4242, 's1', NULL, 'telegram:1');
INSERT INTO cursors VALUES ('j1', 200.0);
INSERT INTO marks VALUES ('missed-report', 150.0);
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def home(request, tmp_path):
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres").create_database()
        (tmp_path / "config.yaml").write_text(f"store:\n  url: {url}\n")
    return tmp_path


def test_each_instant_is_claimed_once_even_by_two_schedulers_at_once(home):
    logs = [RunLog.open(home), RunLog.open(home)]
    claimed: list[dict[str, list[int]]] = []

    def claim(log: RunLog) -> None:
        batch = Batch("j1", "job", [Claim(100.0, "queued"), Claim(160.0, "queued")], 220.0, None)
        claimed.append(log.claim_all([batch], 300.0))

    threads = [threading.Thread(target=claim, args=(log,)) for log in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        ids = sorted(i for result in claimed for ids in result.values() for i in ids)
        assert len(ids) == 2, claimed  # the second found its planned cursor moved
        assert [run.due_at for run in logs[0].of_job("j1")] == [160.0, 100.0]
        assert logs[1].cursors() == {"j1": 220.0}
        manual = logs[0].claim_manual("j1", "job", 400.0)
        assert manual > max(ids) and logs[1].get(manual).trigger == "manual"
        logs[0].mark("seen", 5.0)
        logs[0].mark("seen", 6.0)
        assert logs[1].marked("seen") == 6.0
    finally:
        for log in logs:
            log.close()


def test_an_old_run_log_is_brought_in_once_and_set_aside(home):
    old = home / "cron" / "runs.db"
    old.parent.mkdir()
    with sqlite3.connect(old) as connection:
        connection.executescript(OLD_LOG)
    log = RunLog.open(home)
    try:
        (run,) = log.of_job("j1")
        assert (run.id, run.status, run.delivery) == (7, "completed", "telegram:1")
        assert log.cursors() == {"j1": 200.0} and log.marked("missed-report") == 150.0
        assert log.claim_manual("j1", "daily", 500.0) == 8  # ids go on after the old ones
    finally:
        log.close()
    assert not old.exists() and (home / "cron" / "runs.db.imported").exists()
    again = RunLog.open(home)
    try:
        assert len(again.of_job("j1")) == 2
    finally:
        again.close()


def test_a_scheduler_settles_the_runs_of_the_one_it_took_over_from(home):
    log = RunLog.open(home)
    try:
        with log._store.write() as cursor:  # runs another host's scheduler left behind
            for job, status, owner in (
                ("a", "running", "far-host:11"),
                ("b", "queued", "far-host:11"),
                ("c", "running", "other-host:12"),
            ):
                cursor.execute(
                    "INSERT INTO cron_runs (job_id, job_name, due_at, trigger, status, "
                    "claimed_at, owner) VALUES (?, ?, 1.0, 'schedule', ?, 1.0, ?)",
                    (job, job, status, owner),
                )
        assert log.orphans() == 0  # another host's: only that host, or the lease, can tell
        # The lease names the dead scheduler as a holder (of the Hermes before, with its
        # token); its runs were owned by host and pid then: the same process.
        assert log.orphans("far-host:11:1a2b3c4d") == 2
        settled = {run.job_id: run.status for job in "abc" for run in log.of_job(job)}
        assert settled == {"a": "unknown", "b": "missed", "c": "running"}
        assert log.orphans("other-host:99:1a2b3c4d") == 0  # another process of that host
    finally:
        log.close()
