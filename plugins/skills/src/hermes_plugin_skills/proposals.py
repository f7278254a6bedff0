"""Skill changes waiting for the user (``skills.write_approval``): the SDK's proposal queue
in ``skills/.pending/``, reviewed with /skills pending, /skills diff ID, approve or reject."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hermes_commons.proposals import Proposal, ProposalQueue, UnknownProposal
from hermes_plugin_skills.manage import Change, SkillRefused

__all__ = ["change_of", "drop", "load", "pending", "propose", "queue"]


def queue(root: Path) -> ProposalQueue:
    return ProposalQueue(root / ".pending", "skill change", "/skills pending")


def propose(root: Path, change: Change, source: str) -> str:
    return queue(root).propose(asdict(change), source)


def pending(root: Path) -> list[Proposal]:
    return queue(root).pending()


def load(root: Path, proposal_id: str) -> Change:
    """The change queued as ``proposal_id``; SkillRefused for an unknown id."""
    try:
        record = queue(root).get(proposal_id).payload
    except UnknownProposal as exc:
        raise SkillRefused(str(exc)) from None
    return change_of(record)


def change_of(record: Mapping[str, Any]) -> Change:
    """The change a proposal's payload holds; KeyError if it lacks one."""
    return Change(
        action=record["action"],
        skill=record["skill"],
        files=record.get("files") or {},
        delete_skill=bool(record.get("delete_skill")),
        base=record.get("base") or {},
        archive_after=record.get("archive_after"),
        folder=record.get("folder"),
    )


def drop(root: Path, proposal_id: str) -> None:
    queue(root).drop(proposal_id)
