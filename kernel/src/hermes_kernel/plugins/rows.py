"""One row per installed plugin, as ``hermes plugins list`` and ``info`` present it, and as
``hermes status`` and the runtime's ``plugins()`` sum it up."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from hermes_kernel.plugins.discovery import declared_conflicts
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.records import PluginRecord


@dataclass
class PluginRow:
    name: str
    distribution: str
    version: str
    target: str
    summary: str
    enabled: bool
    reason: str
    state: str  # disabled | enabled | loaded | failed
    declares: list[str]
    has_manifest: bool
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    load_ms: float | None = None
    provides: list[str] | None = None
    last_load: dict[str, Any] | None = None
    isolated: bool = False
    """Listed in plugins.isolated: it runs in a host process of its own."""
    host: str | None = None
    """An isolated plugin's host in this process ("host running (pid 123)"), or when it
    starts."""
    run_time: str | None = None
    """What happened after it loaded, in this process or the last run that loaded it."""
    origin: str = ""
    """Where a foreign plugin (another agent's, run here) was found; '' for Hermes's own."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _row(
    record: PluginRecord, host: PluginHost, conflicts: list[str], last: dict[str, Any] | None
) -> PluginRow:
    decision = host.decision(record.name)
    row = PluginRow(
        name=record.name,
        distribution=record.distribution,
        version=record.version,
        target=record.target,
        summary=record.summary,
        enabled=decision.enabled,
        reason=decision.reason,
        state="enabled" if decision.enabled else "disabled",
        declares=sorted(f"{kind.value}.{name}" for kind, name in record.declares),
        has_manifest=record.has_manifest,
        problems=list(record.problems) + conflicts,
        last_load=last if last and last.get("version") == record.version else None,
        isolated=record.name in host.isolated_names,
        origin=record.origin,
    )
    if row.last_load is not None:
        row.run_time = row.last_load.get("run_time")
    if row.isolated:
        running = host.isolated.get(record.name)
        row.host = running.state if running is not None else "starts on first use"
    outcome = host.outcomes.get(record.name) if host.record(record.name) is record else None
    if outcome is not None:
        row.state = "loaded" if outcome.ok else "failed"
        row.run_time = host.run_time_states().get(record.name)
        row.error = outcome.error
        row.warnings = list(outcome.warnings)
        row.load_ms = round(outcome.seconds * 1000, 1)
        row.provides = sorted(f"{kind.value}.{name}" for kind, name in outcome.provided())
    elif record.problems and decision.enabled:
        row.state, row.error = "failed", record.problems[0]
    return row


def plugin_rows(host: PluginHost, status: dict[str, dict[str, Any]]) -> list[PluginRow]:
    conflicts = declared_conflicts(host.enabled())
    return [
        _row(
            record,
            host,
            conflicts.get(record.name, []) if host.record(record.name) is record else [],
            status.get(record.name),
        )
        for record in host.records
    ]


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.0f} h ago"


def describe_last_load(last: dict[str, Any]) -> str:
    checked_at = last.get("checked_at")
    if isinstance(checked_at, int | float):
        when = _age(max(0.0, time.time() - checked_at))
    else:
        when = "at an unknown time"
    if last.get("ok"):
        return f"last load ok ({when})"
    return f"last load failed ({when}): {last.get('error')}"
