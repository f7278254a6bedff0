"""The files that come over as files: memory within this home's limits (the rest kept
beside it), cron jobs paused without a scheduler, .env merged at 0600, SOUL.md, skills."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_plugin_import_hermes_agent.homefiles import (
    MemoryLimits,
    import_cron,
    import_env,
    import_memories,
    import_skills,
    import_soul,
    parse_env,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_memory_entries_come_over_while_they_fit_and_the_rest_is_kept(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    entries = [f"entry {n}: " + "x" * 80 for n in range(5)]
    write(source / "memories" / "MEMORY.md", "\n§\n".join(entries))
    write(target / "memories" / "MEMORY.md", "mine already\n")

    section = import_memories(source, target, MemoryLimits(memory_chars=300), dry_run=False)

    kept = (target / "memories" / "MEMORY.md").read_text().split("\n§\n")
    assert kept[0] == "mine already" and len("\n§\n".join(kept).rstrip()) <= 300
    assert len(section.added) == len(kept) - 1 == 3
    spilled = (target / "memories" / "MEMORY.md.not-imported").read_text()
    assert spilled.strip().split("\n§\n") == entries[3:]  # nothing is lost
    assert all("over this home's limit of 300" in why for _, why in section.left_out)
    again = import_memories(source, target, MemoryLimits(memory_chars=300), dry_run=False)
    assert not again.added and len(again.already) == 3
    assert (target / "memories" / "MEMORY.md.not-imported").read_text() == spilled


def test_cron_jobs_wait_paused_without_the_scheduler(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    jobs = [
        {"id": "a1", "name": "news", "schedule_display": "every 120m", "enabled": True},
        {"id": "b2", "name": "held", "state": "paused", "enabled": True},
        {"name": "no id"},
    ]
    write(source / "cron" / "jobs.json", json.dumps({"jobs": jobs, "updated_at": "x"}))

    section = import_cron(source, target, scheduler_installed=False, dry_run=False)

    stored = json.loads((target / "cron" / "jobs.json").read_text())["jobs"]
    assert [job["id"] for job in stored] == ["a1", "b2"]
    assert all(job["paused"] for job in stored)
    assert all(job["anchor_at"] for job in stored)  # no catch-up of hermes-agent's instants
    assert "paused: the scheduler plugin (hermes-plugin-cron) is not installed" in section.added[0]
    assert import_cron(source, target, scheduler_installed=False, dry_run=False).added == []


def test_a_malformed_jobs_file_is_reported_and_nothing_is_written(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "cron" / "jobs.json", "{not json")
    section = import_cron(source, target, scheduler_installed=True, dry_run=False)
    assert section.left_out == [
        ("cron/jobs.json", "not the JSON hermes-agent writes; nothing read from it")
    ]
    assert not (target / "cron" / "jobs.json").exists()


def test_env_merges_secrets_keeps_this_homes_and_stays_private(tmp_path):
    target = tmp_path / "ours"
    write(target / ".env", "OPENAI_API_KEY=mine\n")
    source_env = parse_env(
        "# keys\nexport OPENAI_API_KEY='theirs'\nBRAVE_SEARCH_API_KEY=b\nTERMINAL_ENV=docker\n"
    )
    section = import_env(
        target, source_env, {"CUSTOM_API_KEY": "c d"}, {"TERMINAL_ENV"},
        {"BRAVE_SEARCH_API_KEY": "BRAVE_API_KEY"}, dry_run=False,
    )  # fmt: skip
    text = (target / ".env").read_text()
    assert parse_env(text) == {
        "OPENAI_API_KEY": "mine",
        "BRAVE_API_KEY": "b",
        "CUSTOM_API_KEY": "c d",
    }
    assert (target / ".env").stat().st_mode & 0o777 == 0o600
    assert ("TERMINAL_ENV", "a setting, not a secret: it is in config.yaml now") in section.left_out
    assert section.added == ["BRAVE_SEARCH_API_KEY as BRAVE_API_KEY", "CUSTOM_API_KEY"]


def test_only_a_persona_the_user_wrote_comes_over(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "SOUL.md", "You are Hermes Agent, an intelligent AI assistant created by "
                              "Nous Research. You are helpful.")  # fmt: skip
    assert import_soul(source, target, dry_run=False).left_out
    write(source / "SOUL.md", "<!-- a template -->\n# Persona\n")
    assert import_soul(source, target, dry_run=False).left_out
    write(source / "SOUL.md", "You are terse and you love tea.\n")
    assert import_soul(source, target, dry_run=False).added == ["SOUL.md"]
    assert (target / "SOUL.md").read_text() == "You are terse and you love tea.\n"


def test_skills_come_with_their_files_and_categories(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "skills" / "ops" / "deploy" / "SKILL.md", "---\nname: ship-it\n---\nbody\n")
    write(source / "skills" / "ops" / "deploy" / "references" / "notes.md", "notes\n")
    write(source / "skills" / "tidy" / "SKILL.md", "---\nname: tidy\n---\n")
    write(source / "skills" / ".hub" / "lock.json", "{}")
    section = import_skills(source, target, dry_run=False)
    assert section.added == ["ops/deploy", "tidy"]
    assert (target / "skills" / "ops" / "deploy" / "references" / "notes.md").exists()
    assert not (target / "skills" / ".hub").exists()
    assert "names it 'ship-it'" in section.notes[0]
    assert import_skills(source, target, dry_run=False).added == []
