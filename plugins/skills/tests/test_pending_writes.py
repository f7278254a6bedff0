"""The skill changes waiting for approval as a front-end sees them (the pending-writes queue
``skills``): the same diff ``hermes skills diff`` shows, approved, rejected and refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_skills import hermes_pending_writes
from hermes_plugin_skills.tools import skill_manage

from hermes_commons.proposals import UnknownProposal
from hermes_sdk.pending_writes import PendingContext, PendingWrites
from hermes_sdk.tooling import ToolContext
from hermes_testkit import tool_context

SKILL = "---\nname: db-backup\ndescription: Back up the Postgres database nightly.\n---\n1. Run pg_dump.\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    return tmp_path / "hermes"


def ctx(home: Path, **skills: object) -> ToolContext:
    return tool_context(home=str(home), cwd=str(home.parent), config={"skills": skills})


def queue_of(home: Path, scope: str | None = None) -> PendingWrites:
    (spec,) = hermes_pending_writes()
    assert spec.name == "skills"
    config = {"skills": {"write_approval": True}}
    return spec.factory(PendingContext(home=str(home), config=config, user_scope=scope))


def propose_patch(home: Path, old: str = "pg_dump", new: str = "pg_dumpall") -> str:
    queued = skill_manage(
        "patch", "db-backup", ctx(home, write_approval=True), old_string=old, new_string=new
    )
    return queued.split(" as ")[1].split(" ")[0]


def test_a_change_shows_its_summary_and_diff_and_approving_applies_it(home: Path) -> None:
    skill_manage("create", "db-backup", ctx(home), content=SKILL)
    write_id = propose_patch(home)
    queue = queue_of(home)
    (write,) = queue.pending()
    assert (write.queue, write.id, write.source) == ("skills", write_id, "cli")
    assert write.title == "patch db-backup: write SKILL.md"
    assert write.diff.startswith("--- a/db-backup/SKILL.md\n+++ b/db-backup/SKILL.md\n")
    assert "-1. Run pg_dump.\n+1. Run pg_dumpall.\n" in write.diff
    assert queue.approve(write_id).startswith(f"approved {write_id}: patch db-backup")
    assert "pg_dumpall" in (home / "skills/db-backup/SKILL.md").read_text()
    assert queue.pending() == []


def test_rejecting_drops_the_change(home: Path) -> None:
    skill_manage("create", "db-backup", ctx(home), content=SKILL)
    write_id = propose_patch(home)
    queue = queue_of(home)
    assert queue.reject(write_id) == f"rejected {write_id}; nothing was changed"
    assert queue.pending() == []
    assert "pg_dumpall" not in (home / "skills/db-backup/SKILL.md").read_text()


def test_an_unknown_id_raises_unknown_proposal(home: Path) -> None:
    queue = queue_of(home)
    with pytest.raises(UnknownProposal, match="no pending skill change abc123"):
        queue.approve("abc123")
    with pytest.raises(UnknownProposal):
        queue.reject("abc123")


def test_a_change_to_a_file_edited_since_has_no_diff_and_stays_pending(home: Path) -> None:
    skill_manage("create", "db-backup", ctx(home), content=SKILL)
    write_id = propose_patch(home)
    path = home / "skills/db-backup/SKILL.md"
    path.write_text(path.read_text() + "edited by hand\n")
    queue = queue_of(home)
    (write,) = queue.pending()
    assert write.diff == ""
    with pytest.raises(ValueError, match=f"^{write_id} cannot be applied: db-backup/SKILL.md"):
        queue.approve(write_id)
    assert [w.id for w in queue.pending()] == [write_id]


def test_a_deletion_diffs_every_file_it_removes(home: Path) -> None:
    skill_manage("create", "db-backup", ctx(home), content=SKILL)
    queued = skill_manage("delete", "db-backup", ctx(home, write_approval=True))
    write_id = queued.split(" as ")[1].split(" ")[0]
    (write,) = queue_of(home).pending()
    assert write.id == write_id and write.title == "delete skill db-backup"
    assert "--- a/db-backup/SKILL.md\n+++ b/db-backup/SKILL.md\n" in write.diff
    assert "-1. Run pg_dump.\n" in write.diff


def test_skill_changes_are_the_owners_alone(home: Path) -> None:
    skill_manage("create", "db-backup", ctx(home), content=SKILL)
    write_id = propose_patch(home)
    someone = queue_of(home, "telegram:42")
    assert someone.pending() == []
    with pytest.raises(UnknownProposal, match="the owner's to review"):
        someone.approve(write_id)
    assert [w.id for w in queue_of(home).pending()] == [write_id]
