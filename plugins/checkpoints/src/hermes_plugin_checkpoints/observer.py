"""Snapshots before tools run: which folder each session works in, and the snapshot taken
in ``hermes_pre_tool_call`` within ``checkpoints.timeout_seconds``.

The kernel awaits the hook before the tool runs, so the snapshot is complete when the tool
starts; its deadline (``plugins.hook_timeout_seconds``, 5 s) is longer than ours, so the
kernel never has to abandon it: a folder too big to snapshot in time is skipped instead,
and the tool runs as it would without this plugin. A folder is skipped (one log line per
folder and reason, per process) when it is over the bounds, is the home folder or ``/``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_plugin_checkpoints.shadow import (
    Bounds,
    CheckpointError,
    ShadowRepo,
    Snapshot,
    folder_problem,
)
from hermes_plugin_checkpoints.writes import change_of
from hermes_sdk import SessionInfo, ToolCall

__all__ = ["Where", "before_tool", "session_ended", "session_started", "where_of"]

log = logging.getLogger("hermes.checkpoints")


@dataclass(frozen=True, slots=True)
class Where:
    """A session's working folder (resolved), the home its checkpoints are kept in, and the
    config the agent loaded (its ``checkpoints:`` section is read on the first write)."""

    folder: Path
    home: Path
    config: Mapping[str, Any] = field(default_factory=dict)

    def bounds(self) -> Bounds:
        """The section's bounds; a wrong section logs one line and gives the defaults (the
        kernel reports its problems too). pydantic loads here, not at start-up."""
        from hermes_plugin_checkpoints.settings import bounds_from

        try:
            return bounds_from(self.config)
        except ValueError as exc:
            log.warning("checkpoints: %s; the defaults are used", " ".join(str(exc).split()))
            return Bounds()


TIDY_SECONDS = 4.0
"""Packing a folder's snapshots at a session's end at most (under the hook deadline, 5 s)."""

_sessions: dict[str, Where] = {}
_touched: dict[str, set[Path]] = {}
"""The folders each session snapshotted, to tidy when it ends."""
_said: set[tuple[Path, str]] = set()
_lock = threading.Lock()  # two gateway conversations may start at once


def session_started(session: SessionInfo) -> None:
    if not session.cwd or not session.home:
        return
    where = Where(Path(session.cwd).resolve(), Path(session.home).resolve(), session.config)
    with _lock:
        _sessions[session.session_id] = where


def session_ended(session: SessionInfo) -> None:
    """Forget the session; pack what its snapshots left loose (within ``TIDY_SECONDS``)."""
    with _lock:
        where = _sessions.pop(session.session_id, None)
        folders = _touched.pop(session.session_id, set())
    if where is None or not folders:
        return
    deadline = time.monotonic() + TIDY_SECONDS
    for folder in sorted(folders):
        ShadowRepo(where.home, folder).tidy(deadline)


def where_of(session_id: str | None) -> Where | None:
    if session_id is None:
        return None
    with _lock:
        return _sessions.get(session_id)


def _say_once(folder: Path, topic: str, line: str, level: int = logging.INFO) -> None:
    with _lock:
        first = (folder, topic) not in _said
        _said.add((folder, topic))
    log.log(level if first else logging.DEBUG, "checkpoints: %s", line)


def before_tool(call: ToolCall) -> Snapshot | None:
    """Snapshot the session's folder if ``call`` changes files in it; what was done, or
    None when nothing was to be done. Never raises for a folder or git problem: the tool
    runs anyway, and the problem is logged."""
    where = where_of(call.session_id)
    if where is None:
        return None
    bounds = where.bounds()
    if not bounds.enabled:
        return None
    target = change_of(call.tool, call.arguments, where.folder)
    if target is None:
        return None
    problem = folder_problem(where.folder, where.home)
    if problem is not None:
        _say_once(where.folder, "folder", f"{problem}; no checkpoints are taken")
        return None
    deadline = time.monotonic() + bounds.timeout_seconds
    repo = ShadowRepo(where.home, where.folder, bounds)
    try:
        snapshot = repo.snapshot(
            tool=call.tool, target=target, session=call.session_id, deadline=deadline
        )
    except CheckpointError as exc:
        _say_once(
            where.folder, "error", f"no checkpoint before {call.tool}: {exc}", logging.WARNING
        )
        return None
    with _lock:
        _touched.setdefault(call.session_id, set()).add(where.folder)
    if snapshot.skipped:
        _say_once(where.folder, "skipped", snapshot.skipped)
    elif snapshot.created and snapshot.checkpoint is not None:
        made = snapshot.checkpoint
        log.debug("checkpoints: %s %s of %s", made.id, made.what, repo.folder)
    return snapshot
