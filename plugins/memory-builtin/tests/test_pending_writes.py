"""The memory writes waiting for approval as a front-end sees them (the pending-writes queue
``memory``): what each would do, as a title and a diff of the real file, approved, rejected
and refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_memory_builtin import hermes_pending_writes, memory_tool

from hermes_commons.proposals import UnknownProposal
from hermes_sdk.pending_writes import PendingContext, PendingWrites
from hermes_testkit import tool_context


def queue_of(home: Path, scope: str | None = None, **memory: object) -> PendingWrites:
    (spec,) = hermes_pending_writes()
    assert spec.name == "memory"
    config = {"memory": {"write_approval": True, **memory}}
    return spec.factory(PendingContext(home=str(home), config=config, user_scope=scope))


def propose(home: Path, scope: str | None = None, **arguments: object) -> str:
    context = tool_context(
        home=str(home), user_scope=scope, config={"memory": {"write_approval": True}}
    )
    queued = memory_tool(context, **arguments)
    return queued.split(" as ")[1].split(" ")[0]


def entries(path: Path) -> list[str]:
    return [e.strip() for e in path.read_text().split("\n§\n")]


def test_a_queued_write_shows_its_title_and_diff_and_approving_writes_it(tmp_path: Path) -> None:
    memory_file = tmp_path / "memories/MEMORY.md"
    memory_file.parent.mkdir(parents=True)
    memory_file.write_text("Project uses pnpm.\n")
    write_id = propose(tmp_path, content="the user prefers tabs")
    queue = queue_of(tmp_path)
    (write,) = queue.pending()
    assert (write.queue, write.id, write.source) == ("memory", write_id, "cli")
    assert write.title == "add to MEMORY.md: the user prefers tabs"
    assert write.diff.startswith("--- a/memories/MEMORY.md\n+++ b/memories/MEMORY.md\n")
    assert " Project uses pnpm.\n+§\n+the user prefers tabs\n" in write.diff
    assert entries(memory_file) == ["Project uses pnpm."], "listing writes nothing"

    assert queue.approve(write_id).startswith(f"approved {write_id}: add memory")
    assert entries(memory_file) == ["Project uses pnpm.", "the user prefers tabs"]
    assert queue.pending() == []


def test_user_md_writes_replacements_and_order(tmp_path: Path) -> None:
    first = propose(tmp_path, target="user", content="Lives in Lyon.")
    queue = queue_of(tmp_path)
    queue.approve(first)
    second = propose(tmp_path, action="replace", target="user", old_text="Lyon", content="Nice")
    third = propose(tmp_path, action="remove", target="user", old_text="Lyon")
    writes = queue.pending()
    assert [w.id for w in writes] == [second, third], "oldest first"
    assert writes[0].title == "replace in USER.md: Lyon -> Nice"
    assert "-Lives in Lyon.\n+Nice\n" in writes[0].diff
    assert writes[1].title == "remove from USER.md: Lyon"
    assert "--- a/memories/USER.md" in writes[1].diff and "-Lives in Lyon.\n" in writes[1].diff


def test_rejecting_drops_the_write_and_writes_nothing(tmp_path: Path) -> None:
    write_id = propose(tmp_path, content="Uses fish.")
    queue = queue_of(tmp_path)
    assert queue.reject(write_id) == f"rejected {write_id}; nothing was written"
    assert queue.pending() == []
    assert not (tmp_path / "memories/MEMORY.md").exists()


def test_an_unknown_id_raises_unknown_proposal(tmp_path: Path) -> None:
    queue = queue_of(tmp_path)
    with pytest.raises(UnknownProposal, match="no pending memory write abc123"):
        queue.approve("abc123")
    with pytest.raises(UnknownProposal):
        queue.reject("abc123")
    with pytest.raises(UnknownProposal, match="not a proposal id"):
        queue.approve("../MEMORY")


def test_a_write_that_no_longer_applies_has_no_diff_and_stays_pending(tmp_path: Path) -> None:
    queue = queue_of(tmp_path)
    queue.approve(propose(tmp_path, content="Server A runs Debian."))
    write_id = propose(tmp_path, action="remove", old_text="Debian")
    (tmp_path / "memories/MEMORY.md").write_text("Server A runs Ubuntu.\n")  # edited by hand
    (write,) = queue.pending()
    assert write.diff == "" and write.title == "remove from MEMORY.md: Debian"
    with pytest.raises(ValueError, match=f"^{write_id} cannot be written: no memory entry") as e:
        queue.approve(write_id)
    assert "\n" not in str(e.value), "one line"
    assert [w.id for w in queue.pending()] == [write_id]


def test_each_person_sees_only_their_own_writes(tmp_path: Path) -> None:
    mine = propose(tmp_path, target="user", content="Owner fact.")
    theirs = propose(tmp_path, "telegram:42", target="user", content="Their fact.")
    assert [w.id for w in queue_of(tmp_path).pending()] == [mine]
    (write,) = queue_of(tmp_path, "telegram:42").pending()
    assert write.id == theirs and write.diff.startswith("--- a/memories/users/telegram_42-")
    with pytest.raises(UnknownProposal):
        queue_of(tmp_path, "telegram:42").approve(mine)
