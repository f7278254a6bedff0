"""What the memory tool, the prompt snapshot and /memory do, for one person's memory."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hermes_commons.proposals import ProposalQueue, UnknownProposal
from hermes_plugin_memory_builtin.files import (
    MemoryUnreadable,
    change_entries,
    read_entries,
    render,
)
from hermes_plugin_memory_builtin.operations import (
    PREVIEW,
    MemoryRefused,
    Operation,
    apply,
    check,
    listing,
    parse_operations,
    size,
)
from hermes_plugin_memory_builtin.scopes import TARGETS, Budgets, MemoryPlace, place_for
from hermes_plugin_memory_builtin.settings import memory_settings

__all__ = ["Memory", "planned_operations"]


class Memory:
    def __init__(self, home: str, user_scope: str | None, config: Mapping[str, Any]) -> None:
        self.home = Path(home)
        self.place: MemoryPlace = place_for(home, user_scope, config)
        self.budgets = Budgets.from_config(config)
        self.write_approval = memory_settings(config).write_approval
        # Writes waiting for the user (memory.write_approval), one queue per person.
        self.pending = ProposalQueue(self.place.pending, "memory write", "/memory pending")

    def entries(self) -> dict[str, list[str]]:
        return {target: read_entries(self.place.path(target)) for target in TARGETS}

    def write(self, operations: Sequence[Operation]) -> str:
        """Apply now (all or nothing); MemoryRefused says why nothing was written."""
        paths = {target: self.place.path(target) for target in TARGETS}
        notes: list[str] = []

        def change(current: dict[Path, list[str]]) -> dict[Path, list[str]]:
            by_target = {target: current[path] for target, path in paths.items()}
            result, done = apply(by_target, operations, self.budgets)
            notes.extend(done)
            return {paths[target]: entries for target, entries in result.items()}

        after = change_entries(list(paths.values()), change)
        touched = sorted({operation.target for operation in operations})
        usage = ", ".join(self.usage(target, after[paths[target]]) for target in touched)
        return "; ".join(notes) + f" ({usage}; the prompt shows it from the next session)"

    def usage(self, target: str, entries: Sequence[str]) -> str:
        budget = self.budgets.of(target)
        return f"{target} {size(entries)}/{budget} chars"

    def handle(
        self,
        *,
        action: str,
        target: str,
        content: str,
        old_text: str,
        operations: Sequence[Any] | None,
        source: str,
        session_id: str,
    ) -> str:
        if action == "read":
            now = self.entries()
            return "\n\n".join(listing(t, now[t]) for t in ([target] if target else TARGETS))
        if action == "batch" or operations:
            planned = parse_operations(operations or [])
        else:
            planned = [check(Operation(action, target or "memory", content, old_text))]
        if self.write_approval:
            payload = {"session_id": session_id, "operations": [asdict(op) for op in planned]}
            proposal = self.pending.propose(payload, source)
            return (
                f"queued for the user's approval as {proposal} (memory.write_approval is on): "
                "it is not in memory until they approve it with /memory approve " + proposal
            )
        return self.write(planned)

    # --- /memory ------------------------------------------------------------------------

    def pending_text(self) -> str:
        proposals = self.pending.pending()
        if not proposals:
            return "no memory writes are waiting for approval"
        lines = []
        for proposal in proposals:
            lines.append(f"{proposal.id} (from {proposal.source}):")
            for operation in proposal.payload.get("operations", []):
                what = operation.get("content") or operation.get("old_text") or ""
                lines.append(f"  {operation.get('action')} {operation.get('target')}: {what}")
        lines.append("approve one with /memory approve ID, or drop it with /memory reject ID")
        return "\n".join(lines)

    def _operations(self, proposal_id: str) -> list[Operation]:
        """The proposal's operations, checked again; MemoryRefused for an unknown id."""
        try:
            proposal = self.pending.get(proposal_id)
        except UnknownProposal as exc:
            raise MemoryRefused(str(exc)) from None
        return planned_operations(proposal.payload)

    def title(self, operations: Sequence[Operation]) -> str:
        """One line: what applying ``operations`` does, file by file."""
        return "; ".join(_title(op, self.place.path(op.target).name) for op in operations)

    def diff(self, operations: Sequence[Operation]) -> str:
        """A unified diff of the files ``operations`` would change if applied now; "" when
        they cannot be (an entry they replace is gone, a file is over its budget)."""
        paths = {target: self.place.path(target) for target in TARGETS}
        try:
            before = {target: read_entries(path) for target, path in paths.items()}
            after, _ = apply(before, operations, self.budgets)
        except (MemoryRefused, MemoryUnreadable):
            return ""
        chunks: list[str] = []
        for target, path in paths.items():
            if after[target] == before[target]:
                continue
            label = _label(path, self.home)
            chunks += difflib.unified_diff(
                render(before[target]).splitlines(keepends=True),
                render(after[target]).splitlines(keepends=True),
                f"a/{label}",
                f"b/{label}",
            )
        return "".join(chunks)

    def approve(self, proposal_id: str) -> str:
        operations = self._operations(proposal_id)
        result = self.write(operations)  # refused (budget, vanished entry): it stays queued
        self.pending.drop(proposal_id)
        return f"approved {proposal_id}: {result}"

    def reject(self, proposal_id: str) -> str:
        self._operations(proposal_id)  # refuses an unknown id
        self.pending.drop(proposal_id)
        return f"rejected {proposal_id}; nothing was written"


def planned_operations(payload: Mapping[str, Any]) -> list[Operation]:
    """A queued write's operations, checked again; MemoryRefused if one no longer passes
    (or the proposal holds none)."""
    raw = payload.get("operations")
    if not isinstance(raw, list) or not raw:
        raise MemoryRefused("the queued write holds no operations")
    try:
        return [check(Operation(**operation)) for operation in raw]
    except TypeError as exc:
        raise MemoryRefused(f"the queued write is damaged: {exc}") from None


def _title(operation: Operation, file: str) -> str:
    content = " ".join(operation.content.split())[:PREVIEW]
    old = " ".join(operation.old_text.split())[:PREVIEW]
    if operation.action == "add":
        return f"add to {file}: {content}"
    if operation.action == "replace":
        return f"replace in {file}: {old} -> {content}"
    return f"remove from {file}: {old}"


def _label(path: Path, home: Path) -> str:
    """``path`` as a diff names it: relative to the home."""
    try:
        return path.relative_to(home).as_posix()
    except ValueError:
        return path.as_posix()
