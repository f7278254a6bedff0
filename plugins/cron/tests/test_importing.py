"""``hermes import``'s part of the cron plugin: a hermes-agent home's jobs come over into
this home's jobs.json, by id, under the plugin's own lock, counted from the import."""

from __future__ import annotations

import json
from pathlib import Path

import hermes_plugin_cron
from hermes_plugin_cron.jobs import JobStore

from hermes_sdk.importing import HomeImport, ImportSection


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def imported(source: Path, target: Path, dry_run: bool = False, kind: str = "hermes-agent"):
    request = HomeImport(source_kind=kind, source=str(source), target=str(target), dry_run=dry_run)
    sections: list[ImportSection] = list(hermes_plugin_cron.hermes_import_home(request))
    return sections


JOBS = [
    {"id": "a1", "name": "news", "schedule_display": "every 120m", "enabled": True},
    {"id": "b2", "name": "held", "state": "paused", "enabled": True},
    {"name": "no id"},
]


def test_jobs_come_over_by_id_counted_from_the_import(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "cron" / "jobs.json", json.dumps({"jobs": JOBS, "updated_at": "x"}))
    [section] = imported(source, target)
    assert section.kind == "cron jobs" and section.reads == ["cron"]
    assert section.added == ["news (every 120m)", "held ()"]
    stored = JobStore(target).load()
    assert [job["id"] for job in stored] == ["a1", "b2"]
    assert all(job["anchor_at"] for job in stored)  # no catch-up of hermes-agent's instants
    assert [bool(job.get("paused")) for job in stored] == [False, True]
    before = (target / "cron" / "jobs.json").read_text()
    [again] = imported(source, target)
    assert again.added == [] and [what for what, _ in again.already] == [
        "news (every 120m)",
        "held ()",
    ]
    assert (target / "cron" / "jobs.json").read_text() == before, "nothing new: not rewritten"


def test_a_dry_run_writes_nothing(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "cron" / "jobs.json", json.dumps({"jobs": JOBS}))
    [section] = imported(source, target, dry_run=True)
    assert len(section.added) == 2
    assert not (target / "cron").exists()


def test_a_malformed_jobs_file_is_reported_and_nothing_is_written(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "cron" / "jobs.json", "{not json")
    [section] = imported(source, target)
    assert section.left_out == [
        ("cron/jobs.json", "not the JSON hermes-agent writes; nothing read from it")
    ]
    assert not (target / "cron" / "jobs.json").exists()


def test_a_broken_jobs_file_here_is_left_as_it_is(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "cron" / "jobs.json", json.dumps({"jobs": JOBS}))
    mine = write(target / "cron" / "jobs.json", "{mine, broken")
    [section] = imported(source, target)
    assert section.added == []
    [(what, why)] = section.left_out
    assert what == "cron/jobs.json" and why.startswith(f"{mine}: not valid JSON")
    assert mine.read_text() == "{mine, broken"


def test_a_home_of_another_kind_is_not_read(tmp_path):
    source, target = tmp_path / "other", tmp_path / "ours"
    write(source / "cron" / "jobs.json", json.dumps({"jobs": JOBS}))
    assert imported(source, target, kind="openclaw") == []
