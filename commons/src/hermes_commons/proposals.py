"""Changes the agent proposed that wait for the user's approval: the learning loop's memory
writes and skill edits when ``write_approval`` is on. One JSON file per proposal in a folder
the plugin chooses, so a chat and the gateway see the same queue, and a proposal survives a
restart until the user approves or rejects it.

A plugin keeps what a change is (its ``payload``); the queue keeps when it was proposed and
by what::

    queue = ProposalQueue(root / ".pending", "skill change", "/skills pending")
    proposal_id = queue.propose({"action": "patch", "skill": "db-backup"}, source="cli")
    for proposal in queue.pending():  # oldest first
        print(proposal.id, proposal.payload["skill"])
    change = queue.get(proposal_id).payload  # UnknownProposal if there is none
    queue.drop(proposal_id)

A file is ``{"id", "created_at", "source", **payload}``; one that is half-written or damaged
is not offered.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_sdk.pending_writes import Proposal, UnknownProposal

__all__ = ["Proposal", "ProposalQueue", "UnknownProposal"]

_OWN_FIELDS = ("id", "created_at", "source")


class ProposalQueue:
    """The proposals in ``folder``. ``what`` names one in messages ("memory write"), and
    ``listing`` is the command that lists them ("/memory pending")."""

    def __init__(self, folder: Path | str, what: str, listing: str) -> None:
        self.folder = Path(folder)
        self.what = what
        self.listing = listing

    def propose(self, payload: Mapping[str, Any], source: str) -> str:
        """Queue ``payload`` (JSON-able; its keys must not be id, created_at or source);
        returns the new proposal's id, six hex digits."""
        clash = [key for key in _OWN_FIELDS if key in payload]
        if clash:
            raise ValueError(f"a proposal's payload cannot hold {', '.join(clash)}")
        proposal_id = os.urandom(3).hex()
        while self._path(proposal_id).exists():
            proposal_id = os.urandom(3).hex()
        record = {"id": proposal_id, "created_at": time.time(), "source": source, **payload}
        atomic_write_text(self._path(proposal_id), json.dumps(record, indent=1) + "\n")
        return proposal_id

    def pending(self) -> list[Proposal]:
        """Every readable proposal, oldest first."""
        found = []
        for path in self.folder.glob("*.json"):
            try:
                found.append(_proposal(json.loads(path.read_text(encoding="utf-8")), path.stem))
            except (OSError, ValueError, TypeError):
                continue  # a half-written or damaged proposal is not offered
        return sorted(found, key=lambda proposal: (proposal.created_at, proposal.id))

    def get(self, proposal_id: str) -> Proposal:
        """The proposal ``proposal_id``; UnknownProposal when there is none."""
        path = self._path(proposal_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UnknownProposal(
                f"no pending {self.what} {proposal_id}; {self.listing} lists them"
            ) from None
        try:
            return _proposal(json.loads(text), proposal_id)
        except (ValueError, TypeError):
            raise UnknownProposal(
                f"pending {self.what} {proposal_id} is damaged: delete {path}"
            ) from None

    def drop(self, proposal_id: str) -> None:
        """Remove ``proposal_id`` from the queue (approved or rejected); a no-op if gone."""
        self._path(proposal_id).unlink(missing_ok=True)

    def _path(self, proposal_id: str) -> Path:
        if not (proposal_id.isascii() and proposal_id.isalnum()):  # an id is never a path
            raise UnknownProposal(
                f"{proposal_id!r} is not a proposal id; {self.listing} lists them"
            )
        return self.folder / f"{proposal_id}.json"


def _proposal(record: Any, proposal_id: str) -> Proposal:
    if not isinstance(record, dict):
        raise TypeError("a proposal is a JSON object")
    payload = {key: value for key, value in record.items() if key not in _OWN_FIELDS}
    return Proposal(
        id=proposal_id,
        created_at=float(record.get("created_at", 0)),
        source=str(record.get("source", "?")),
        payload=payload,
    )
