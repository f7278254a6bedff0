"""The queue of changes waiting for the user's approval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_commons.proposals import Proposal, ProposalQueue, UnknownProposal


def _queue(folder: Path) -> ProposalQueue:
    return ProposalQueue(folder, "skill change", "/skills pending")


def test_proposals_wait_in_order_and_keep_their_payload(tmp_path: Path) -> None:
    queue = _queue(tmp_path / ".pending")
    assert queue.pending() == []
    first = queue.propose({"action": "patch", "skill": "db-backup", "files": {"a": None}}, "cli")
    second = queue.propose({"action": "create", "skill": "notes"}, "gateway")
    assert len(first) == 6 and first != second
    listed = queue.pending()
    assert [p.id for p in listed] == [first, second]
    assert listed[0].source == "cli" and listed[1].created_at >= listed[0].created_at
    assert queue.get(first).payload == {
        "action": "patch",
        "skill": "db-backup",
        "files": {"a": None},
    }
    assert isinstance(queue.get(second), Proposal)
    queue.drop(first)
    queue.drop(first)  # already gone: nothing to do
    assert [p.id for p in _queue(tmp_path / ".pending").pending()] == [second]


def test_the_file_format_is_the_one_earlier_versions_wrote(tmp_path: Path) -> None:
    """A memory write queued before the SDK held the queue is still offered and applied."""
    folder = tmp_path / "pending"
    folder.mkdir()
    record = {"id": "a1b2c3", "created_at": 5.0, "source": "review", "session_id": "s1",
              "operations": [{"action": "add", "target": "memory", "content": "Uses zsh."}]}  # fmt: skip
    (folder / "a1b2c3.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    (folder / "b2c3d4.json").write_text('{"id": "b2c3d4", "created', encoding="utf-8")
    queue = ProposalQueue(folder, "memory write", "/memory pending")
    (proposal,) = queue.pending()  # the damaged one is not offered
    assert proposal == Proposal(
        "a1b2c3", 5.0, "review", {"session_id": "s1", "operations": record["operations"]}
    )
    new = queue.propose({"operations": []}, "cli")
    assert set(json.loads((folder / f"{new}.json").read_text())) == {
        "id", "created_at", "source", "operations"
    }  # fmt: skip
    with pytest.raises(UnknownProposal, match=r"memory write b2c3d4 is damaged: delete .*b2c3d4"):
        queue.get("b2c3d4")


def test_unknown_ids_and_ids_that_are_paths_are_refused(tmp_path: Path) -> None:
    queue = _queue(tmp_path)
    with pytest.raises(UnknownProposal) as raised:
        queue.get("abc123")
    assert str(raised.value) == "no pending skill change abc123; /skills pending lists them"
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")
    for bad in ("../secret", "a/b", "", "\uff41\uff11"):
        with pytest.raises(UnknownProposal, match="is not a proposal id; /skills pending lists"):
            queue.get(bad)
        with pytest.raises(UnknownProposal):
            queue.drop(bad)
    assert (tmp_path / "secret.json").exists()
    with pytest.raises(ValueError, match="cannot hold id, source"):
        queue.propose({"id": "mine", "source": "x"}, "cli")
