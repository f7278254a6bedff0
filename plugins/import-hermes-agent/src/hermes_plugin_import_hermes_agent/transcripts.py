"""hermes-agent's per-session JSON logs (``sessions/session_ID.json``): releases up to at
least 0.13 write one beside state.db for every session. They usually repeat what state.db
holds; a session found only there (state.db lost or damaged, or a log from before it kept
that session) still comes over from its log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_plugin_import_hermes_agent.history import ROLES, SOURCES, HistoryStats, calls_of
from hermes_sdk.archive import ArchivedMessage, ArchivedSession

STEP_SECONDS = 0.001
"""The logs keep no time per message: they are spaced this far apart after the start."""


def transcript_files(source: Path) -> list[Path]:
    folder = source / "sessions"
    return sorted(folder.glob("session_*.json")) if folder.is_dir() else []


def read_transcripts(
    files: list[Path], skip: set[str], stats: HistoryStats, unreadable: list[str]
) -> Iterator[ArchivedSession]:
    """The sessions of ``files`` whose id is not in ``skip``; a file that is not a readable
    log is named in ``unreadable`` and passed over."""
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            session_id = str(data["session_id"])
        except (OSError, ValueError, KeyError, TypeError):
            unreadable.append(path.name)
            continue
        if session_id in skip:
            continue
        yield _session(session_id, data, stats)


def _epoch(text: Any) -> float:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return 0.0


def _session(session_id: str, data: dict[str, Any], stats: HistoryStats) -> ArchivedSession:
    started = _epoch(data.get("session_start"))
    messages = []
    for position, entry in enumerate(data.get("messages") or []):
        if not isinstance(entry, dict):
            continue
        role = str(entry.get("role"))
        if role not in ROLES:
            stats.odd_roles[role] = stats.odd_roles.get(role, 0) + 1
            continue
        content = entry.get("content")
        if isinstance(content, list):  # multimodal parts
            texts = [str(p.get("text", "")) for p in content if isinstance(p, dict)]
            content = "\n".join(text for text in texts if text)
        messages.append(
            ArchivedMessage(
                role=role,
                content=None if content is None else str(content),
                created_at=started + position * STEP_SECONDS,
                tool_calls=calls_of(entry.get("tool_calls")) if role == "assistant" else (),
                tool_call_id=entry.get("tool_call_id"),
                tool_name=entry.get("name") if role == "tool" else None,
                finish_reason=entry.get("finish_reason"),
                reasoning=entry.get("reasoning"),
            )
        )
    platform = str(data.get("platform") or "cli")
    return ArchivedSession(
        id=session_id,
        source=SOURCES.get(platform, platform),
        started_at=started,
        ended_at=_epoch(data.get("last_updated")) or None,
        messages=tuple(messages),
        model=data.get("model"),
    )
