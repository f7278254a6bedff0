"""Skill changes waiting for the user (``skills.write_approval``): one JSON file each in
``skills/.pending/``, reviewed with /skills pending, /skills diff ID, approve or reject."""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hermes_plugin_skills.manage import Change, SkillRefused

__all__ = ["drop", "load", "pending", "propose"]

FOLDER = ".pending"


def propose(root: Path, change: Change, source: str) -> str:
    folder = root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    proposal_id = secrets.token_hex(3)
    record = {"id": proposal_id, "created_at": time.time(), "source": source, **asdict(change)}
    temporary = folder / f".{proposal_id}.tmp"
    temporary.write_text(json.dumps(record, indent=1), encoding="utf-8")
    os.replace(temporary, folder / f"{proposal_id}.json")
    return proposal_id


def pending(root: Path) -> list[dict[str, Any]]:
    records = []
    for path in (root / FOLDER).glob("*.json"):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return sorted(records, key=lambda record: float(record.get("created_at", 0)))


def load(root: Path, proposal_id: str) -> Change:
    if not proposal_id.isalnum():
        raise SkillRefused(f"{proposal_id!r} is not a proposal id; /skills pending lists them")
    try:
        record = json.loads((root / FOLDER / f"{proposal_id}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SkillRefused(
            f"no pending skill change {proposal_id}; /skills pending lists them"
        ) from None
    return Change(
        action=record["action"],
        skill=record["skill"],
        files=record.get("files") or {},
        delete_skill=bool(record.get("delete_skill")),
        base=record.get("base") or {},
    )


def drop(root: Path, proposal_id: str) -> None:
    (root / FOLDER / f"{proposal_id}.json").unlink(missing_ok=True)
