"""Memory writes waiting for the user (``memory.write_approval``): one JSON file each in the
person's ``pending/`` folder, applied or dropped one at a time with /memory approve|reject."""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hermes_plugin_memory_builtin.operations import MemoryRefused, Operation, check

__all__ = ["drop", "load", "pending", "propose"]


def propose(folder: Path, operations: list[Operation], source: str, session_id: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    proposal_id = secrets.token_hex(3)
    record = {
        "id": proposal_id,
        "created_at": time.time(),
        "source": source,
        "session_id": session_id,
        "operations": [asdict(operation) for operation in operations],
    }
    temporary = folder / f".{proposal_id}.tmp"
    temporary.write_text(json.dumps(record, indent=2), encoding="utf-8")
    os.replace(temporary, folder / f"{proposal_id}.json")
    return proposal_id


def pending(folder: Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # a half-written or damaged proposal is not offered
    return sorted(records, key=lambda record: float(record.get("created_at", 0)))


def load(folder: Path, proposal_id: str) -> list[Operation]:
    if not proposal_id.isalnum():
        raise MemoryRefused(f"{proposal_id!r} is not a proposal id; /memory pending lists them")
    try:
        record = json.loads((folder / f"{proposal_id}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MemoryRefused(
            f"no pending memory write {proposal_id}; /memory pending lists them"
        ) from None
    return [check(Operation(**operation)) for operation in record["operations"]]


def drop(folder: Path, proposal_id: str) -> None:
    (folder / f"{proposal_id}.json").unlink(missing_ok=True)
