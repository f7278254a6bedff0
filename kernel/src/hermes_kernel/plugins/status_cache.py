"""Remember each plugin's last load result, so ``hermes plugins list`` can show a failure
without importing anything. Best effort: a home we cannot write to just has no memory."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hermes_commons.files import write_cache_json
from hermes_kernel.plugins.records import LoadOutcome, PluginRecord


def status_path(home: Path) -> Path:
    return home / "cache" / "plugin-status.json"


def read_status(home: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(status_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {name: entry for name, entry in data.items() if isinstance(entry, dict)}


def write_status(
    home: Path,
    results: list[tuple[PluginRecord, LoadOutcome]],
    run_time: dict[str, str] | None = None,
) -> None:
    """Merge ``results`` into the status file, atomically; ``run_time`` says what happened
    to a plugin after it loaded (an isolated plugin's host crashed, hooks disabled)."""
    if not results:
        return
    path = status_path(home)
    status = read_status(home)
    now = time.time()
    for record, outcome in results:
        status[record.name] = {
            "distribution": record.distribution,
            "version": record.version,
            "ok": outcome.ok,
            "error": outcome.error,
            "warnings": outcome.warnings,
            "seconds": round(outcome.seconds, 4),
            "checked_at": now,
            "run_time": (run_time or {}).get(record.name),
        }
    write_cache_json(path, status)
